// Bessel I0, CUDA: each thread computes elems_per_thread elements spaced block_size_x
// apart (coalesced); the arithmetic is bessel.h's.
#include "bessel.h"

#ifndef elems_per_thread
#define elems_per_thread 1
#endif

extern "C" __global__ void __launch_bounds__(block_size_x) bessel_i0(const T_x *x, T_y *y, int n) {
    const int base = blockIdx.x * block_size_x * elems_per_thread + threadIdx.x;
#pragma unroll
    for (int e = 0; e < elems_per_thread; e++) {
        const int i = base + e * block_size_x;
        if (i < n) y[i] = bessel_i0_element(x[i]);
    }
}
