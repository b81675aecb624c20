// Bessel I0, host CPU (Kernel Tuner's C backend): `threads` OpenMP threads over blocks of
// elems_per_iter neighbouring elements, whose independent series the compiler interleaves
// (or vectorises for double and float); the arithmetic is bessel.h's.
#include "bessel.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef elems_per_iter
#define elems_per_iter 1
#endif

extern "C" void bessel_i0(const T_x *x, T_y *y, int n) {
    const int blocks = n / elems_per_iter;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int b = 0; b < blocks; b++) {
#pragma omp simd
        for (int e = 0; e < elems_per_iter; e++) {
            y[b * elems_per_iter + e] = bessel_i0_element(x[b * elems_per_iter + e]);
        }
    }
    for (int i = blocks * elems_per_iter; i < n; i++) y[i] = bessel_i0_element(x[i]);
}
