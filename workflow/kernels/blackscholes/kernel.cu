// Black-Scholes European call and put prices, CUDA version.  Modelled on NVIDIA
// cuda-samples BlackScholes (BSD-3); written from scratch for the suite.
//
//   d1 = (log(S/X) + (R + V^2/2) T) / (V sqrt(T)),  d2 = d1 - V sqrt(T)
//   call = S CND(d1) - X e^{-RT} CND(d2),  put = X e^{-RT} (1 - CND(d2)) - S (1 - CND(d1))
//
// CND is the Abramowitz-Stegun five-term polynomial times exp(-d^2/2).
// Types: T_in inputs S, X, T; T_c d1, d2, discount and prices; T_cnd the CND
// evaluation; T_out the stored prices.  log/sqrt/exp follow exec_policy
// (precision.cuh).  Each thread prices options_per_thread options, block_size_x apart.
#include "precision.cuh"

#ifndef block_size_x
#define block_size_x 128
#endif
#ifndef options_per_thread
#define options_per_thread 2
#endif
#ifndef T_in
#define T_in float
#endif
#ifndef T_out
#define T_out float
#endif
#ifndef T_c
#define T_c float
#endif
#ifndef T_cnd
#define T_cnd float
#endif

__device__ __forceinline__ T_cnd bs_cnd(T_cnd d) {
    const T_cnd one = cast<T_cnd>(1.0);
    const T_cnd k = one / (one + cast<T_cnd>(0.2316419) * pabs(d));
    T_cnd poly = cast<T_cnd>(1.330274429);
    poly = cast<T_cnd>(-1.821255978) + k * poly;
    poly = cast<T_cnd>(1.781477937) + k * poly;
    poly = cast<T_cnd>(-0.356563782) + k * poly;
    poly = cast<T_cnd>(0.31938153) + k * poly;
    poly = k * poly;
    const T_cnd tail = cast<T_cnd>(0.39894228040143267794) * pexp(cast<T_cnd>(-0.5) * d * d) * poly;
    return d > cast<T_cnd>(0.0) ? one - tail : tail;
}

extern "C" __global__ void __launch_bounds__(block_size_x)
black_scholes(T_out *__restrict__ call, T_out *__restrict__ put, const T_in *__restrict__ S,
              const T_in *__restrict__ X, const T_in *__restrict__ T, double R, double V, int n) {
    const T_c r = cast<T_c>(R);
    const T_c v = cast<T_c>(V);
    const T_c one = cast<T_c>(1.0);
    const T_c drift = r + cast<T_c>(0.5) * v * v;
    const long base = (long)blockIdx.x * (block_size_x * options_per_thread) + threadIdx.x;
#pragma unroll
    for (int j = 0; j < options_per_thread; j++) {
        const long i = base + (long)j * block_size_x;
        if (i < n) {
            const T_c s = cast<T_c>(S[i]);
            const T_c x = cast<T_c>(X[i]);
            const T_c t = cast<T_c>(T[i]);
            const T_c vsqrt_t = v * psqrt(t);
            const T_c d1 = (plog(s / x) + drift * t) / vsqrt_t;
            const T_c d2 = d1 - vsqrt_t;
            const T_c c1 = cast<T_c>(bs_cnd(cast<T_cnd>(d1)));
            const T_c c2 = cast<T_c>(bs_cnd(cast<T_cnd>(d2)));
            const T_c disc_x = x * pexp(-(r * t));
            call[i] = cast<T_out>(s * c1 - disc_x * c2);
            put[i] = cast<T_out>(disc_x * (one - c2) - s * (one - c1));
        }
    }
}
