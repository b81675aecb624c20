// Newton-Raphson root of quartics, CUDA version.
//
// coef holds the coefficients a0..a4 of n polynomials as five rows of n (structure
// of arrays, coalesced loads); x0 the start values; root receives the 10th Newton
// iterate.  The first five steps run in T_early, the last five in T_late;
// coefficients are stored in T_coef, start values and roots in T_x.  Each thread
// handles polys_per_thread polynomials spaced block_size_x apart.
#include "precision.cuh"

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef polys_per_thread
#define polys_per_thread 1
#endif
#ifndef T_coef
#define T_coef double
#endif
#ifndef T_x
#define T_x double
#endif
#ifndef T_early
#define T_early double
#endif
#ifndef T_late
#define T_late double
#endif

#define NR_STEPS_PER_PHASE 5

template <typename T>
struct Quartic {
    T a0, a1, a2, a3, a4;  // p(x) = a4 x^4 + a3 x^3 + a2 x^2 + a1 x + a0
    T d1, d2, d3;          // p'(x) = d3 x^3 + d2 x^2 + d1 x + a1
};

template <typename T>
__device__ __forceinline__ Quartic<T> convert_quartic(const T_coef (&c)[5]) {
    Quartic<T> q;
    q.a0 = cast<T>(c[0]);
    q.a1 = cast<T>(c[1]);
    q.a2 = cast<T>(c[2]);
    q.a3 = cast<T>(c[3]);
    q.a4 = cast<T>(c[4]);
    q.d3 = cast<T>(4) * q.a4;
    q.d2 = cast<T>(3) * q.a3;
    q.d1 = cast<T>(2) * q.a2;
    return q;
}

template <typename T>
__device__ __forceinline__ T newton_step(const Quartic<T> &q, T x) {
    T f = (((q.a4 * x + q.a3) * x + q.a2) * x + q.a1) * x + q.a0;
    T df = ((q.d3 * x + q.d2) * x + q.d1) * x + q.a1;
    return x - f / df;
}

extern "C" __global__ void __launch_bounds__(block_size_x)
newton_raphson(const T_coef *__restrict__ coef, const T_x *__restrict__ x0, T_x *__restrict__ root, int n) {
    const long base = (long)blockIdx.x * (block_size_x * polys_per_thread) + threadIdx.x;
#pragma unroll
    for (int k = 0; k < polys_per_thread; k++) {
        const long i = base + (long)k * block_size_x;
        if (i < n) {
            T_coef c[5];
#pragma unroll
            for (int j = 0; j < 5; j++) c[j] = coef[(long)j * n + i];

            Quartic<T_early> qe = convert_quartic<T_early>(c);
            T_early xe = cast<T_early>(x0[i]);
#pragma unroll
            for (int it = 0; it < NR_STEPS_PER_PHASE; it++) xe = newton_step(qe, xe);

            Quartic<T_late> ql = convert_quartic<T_late>(c);
            T_late xl = cast<T_late>(xe);
#pragma unroll
            for (int it = 0; it < NR_STEPS_PER_PHASE; it++) xl = newton_step(ql, xl);

            root[i] = cast<T_x>(xl);
        }
    }
}
