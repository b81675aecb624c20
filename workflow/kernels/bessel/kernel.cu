// Bessel I0 by its power series, CUDA version. Each thread computes elems_per_thread
// values spaced block_size_x apart; kmax terms; types T_x, T_y, T_sum, T_term.
#include "precision.cuh"

#ifndef kmax
#define kmax 24
#endif
#ifndef elems_per_thread
#define elems_per_thread 1
#endif

extern "C" __global__ void __launch_bounds__(block_size_x) bessel_i0(const T_x *x, T_y *y, int n) {
    const int base = blockIdx.x * block_size_x * elems_per_thread + threadIdx.x;
#pragma unroll
    for (int e = 0; e < elems_per_thread; e++) {
        const int i = base + e * block_size_x;
        if (i < n) {
            const T_term v = cast<T_term>(x[i]);
            const T_term xx = v * v;
            T_term t = cast<T_term>(1.0);
            T_sum s = cast<T_sum>(1.0);
#pragma unroll
            for (int k = 1; k <= kmax; k++) {
                t = t * (xx * cast<T_term>(1.0 / (4.0 * k * k)));
                s = s + cast<T_sum>(t);
            }
            y[i] = cast<T_y>(s);
        }
    }
}
