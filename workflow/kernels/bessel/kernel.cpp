// Bessel I0, host CPU (Kernel Tuner's C backend): `threads` OpenMP threads over blocks of
// elems_per_iter neighbouring elements, whose independent series the compiler interleaves
// (or vectorises for double and float); the arithmetic is bessel.h's.
//
// dyn_chunk is the OpenMP schedule of the blocks: 0 gives each thread one contiguous range
// (schedule(static): no coordination, but a thread slowed by other work on its core holds
// the other one up at the closing barrier); N > 0 hands out chunks of N elements
// (N / elems_per_iter blocks) to whichever thread is free (schedule(dynamic)): the threads
// stay balanced, at the cost of one shared-counter update per chunk. Every element's
// series is the same in every variant, so the results are too.
#include "bessel.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef elems_per_iter
#define elems_per_iter 1
#endif
#ifndef dyn_chunk
#define dyn_chunk 0
#endif

// The E neighbouring elements of block b: independent series, interleaved or vectorised.
template <int E>
static inline void bessel_block(const T_x *x, T_y *y, int b) {
#pragma omp simd
    for (int e = 0; e < E; e++) y[b * E + e] = bessel_i0_element(x[b * E + e]);
}

extern "C" void bessel_i0(const T_x *x, T_y *y, int n) {
    constexpr int E = elems_per_iter;
    constexpr int chunk_blocks = dyn_chunk / E > 1 ? dyn_chunk / E : 1;
    const int blocks = n / E;
    if (dyn_chunk == 0) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int b = 0; b < blocks; b++) bessel_block<E>(x, y, b);
    } else {
#pragma omp parallel for num_threads(threads) schedule(dynamic, chunk_blocks)
        for (int b = 0; b < blocks; b++) bessel_block<E>(x, y, b);
    }
    for (int i = blocks * E; i < n; i++) y[i] = bessel_i0_element(x[i]);
}
