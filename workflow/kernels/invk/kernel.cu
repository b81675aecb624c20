// InvK, CUDA: each thread solves ppt targets spaced block_size_x apart (coalesced); the
// arithmetic is invk.h's.
#include "invk.h"

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef ppt
#define ppt 1
#endif

extern "C" __global__ void __launch_bounds__(block_size_x)
invk(const T_in *__restrict__ target, T_out *__restrict__ theta, int n) {
    const long first = (long)blockIdx.x * (block_size_x * ppt) + threadIdx.x;
#pragma unroll
    for (int k = 0; k < ppt; k++) {
        const long i = first + (long)k * block_size_x;
        if (i < n) invk_point(target, theta, i);
    }
}
