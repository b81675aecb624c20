// Newton-Raphson root of quartics, CUDA version; the arithmetic is newton_raphson.h's.
//
// coef holds the coefficients a0..a4 of n polynomials as five rows of n (structure
// of arrays, coalesced loads); x0 the start values; root receives the 10th Newton
// iterate. Each thread handles polys_per_thread polynomials spaced block_size_x apart.
#include "newton_raphson.h"

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef polys_per_thread
#define polys_per_thread 1
#endif

extern "C" __global__ void __launch_bounds__(block_size_x)
newton_raphson(const T_coef *__restrict__ coef, const T_x0 *__restrict__ x0, T_root *__restrict__ root, int n) {
    const long base = (long)blockIdx.x * (block_size_x * polys_per_thread) + threadIdx.x;
#pragma unroll
    for (int k = 0; k < polys_per_thread; k++) {
        const long i = base + (long)k * block_size_x;
        if (i < n) {
            const T_coef *c = coef + i;
            nr_solve<1>(c, c + n, c + 2 * (long)n, c + 3 * (long)n, c + 4 * (long)n, x0 + i, root + i);
        }
    }
}
