// Black-Scholes, CUDA: each thread prices options_per_thread options spaced block_size_x
// apart (coalesced; the cuda-samples original prices two per thread); the arithmetic is
// blackscholes.h's.
#include "blackscholes.h"

#ifndef block_size_x
#define block_size_x 128
#endif
#ifndef options_per_thread
#define options_per_thread 2
#endif

extern "C" __global__ void __launch_bounds__(block_size_x)
black_scholes(T_out *__restrict__ call, T_out *__restrict__ put, const T_in *__restrict__ S,
              const T_in *__restrict__ X, const T_in *__restrict__ T, double R, double V, int n) {
    const long base = (long)blockIdx.x * (block_size_x * options_per_thread) + threadIdx.x;
#pragma unroll
    for (int j = 0; j < options_per_thread; j++) {
        const long i = base + (long)j * block_size_x;
        if (i < n) bs_price(S, X, T, i, R, V, call, put);
    }
}
