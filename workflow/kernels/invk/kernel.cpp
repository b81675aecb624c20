// InvK, host CPU (Kernel Tuner's C backend): `threads` OpenMP threads over blocks of ppt
// neighbouring targets, whose independent solutions the compiler interleaves; the
// arithmetic is invk.h's.
//
// dyn_chunk is the OpenMP schedule of the blocks: 0 gives each thread one contiguous range
// (schedule(static)); N > 0 hands out chunks of N targets (N / ppt blocks) to whichever
// thread is free (schedule(dynamic)), which balances the threads when a core is slowed by
// other work or a range of targets takes libm's slower paths, at the cost of one
// shared-counter update per chunk. Every target's solution is the same in every variant.
#include "invk.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef ppt
#define ppt 1
#endif
#ifndef dyn_chunk
#define dyn_chunk 0
#endif

// The P neighbouring targets of block blk.
template <int P>
static inline void invk_block(const T_in *target, T_out *theta, int blk) {
#pragma omp simd
    for (int k = 0; k < P; k++) invk_point(target, theta, (long)blk * P + k);
}

extern "C" void invk(const T_in *target, T_out *theta, int n) {
    constexpr int P = ppt;
    constexpr int chunk_blocks = dyn_chunk / P > 1 ? dyn_chunk / P : 1;
    const int nblocks = n / P;
    if (dyn_chunk == 0) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int blk = 0; blk < nblocks; blk++) invk_block<P>(target, theta, blk);
    } else {
#pragma omp parallel for num_threads(threads) schedule(dynamic, chunk_blocks)
        for (int blk = 0; blk < nblocks; blk++) invk_block<P>(target, theta, blk);
    }
    for (long i = (long)nblocks * P; i < n; i++) invk_point(target, theta, i);
}
