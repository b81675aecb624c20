// Black-Scholes European call and put prices, host-CPU port for Kernel Tuner's C
// backend.  Modelled on NVIDIA cuda-samples BlackScholes (BSD-3); written from scratch.
//
//   d1 = (log(S/X) + (R + V^2/2) T) / (V sqrt(T)),  d2 = d1 - V sqrt(T)
//   call = S CND(d1) - X e^{-RT} CND(d2),  put = X e^{-RT} (1 - CND(d2)) - S (1 - CND(d1))
//
// CND is the Abramowitz-Stegun five-term polynomial times exp(-d^2/2).
// Types: T_in inputs S, X, T; T_c d1, d2, discount and prices; T_cnd the CND
// evaluation; T_out the stored prices.  Each iteration of the parallel loop prices
// `options_per_iter` consecutive options.
#include "precision.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef options_per_iter
#define options_per_iter 1
#endif
#ifndef T_in
#define T_in double
#endif
#ifndef T_out
#define T_out double
#endif
#ifndef T_c
#define T_c double
#endif
#ifndef T_cnd
#define T_cnd double
#endif

static inline T_cnd bs_cnd(T_cnd d) {
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

static inline void bs_option(T_in s_in, T_in x_in, T_in t_in, T_c r, T_c v, T_out *call, T_out *put) {
    const T_c s = cast<T_c>(s_in);
    const T_c x = cast<T_c>(x_in);
    const T_c t = cast<T_c>(t_in);
    const T_c one = cast<T_c>(1.0);
    const T_c vsqrt_t = v * psqrt(t);
    const T_c d1 = (plog(s / x) + (r + cast<T_c>(0.5) * v * v) * t) / vsqrt_t;
    const T_c d2 = d1 - vsqrt_t;
    const T_c c1 = cast<T_c>(bs_cnd(cast<T_cnd>(d1)));
    const T_c c2 = cast<T_c>(bs_cnd(cast<T_cnd>(d2)));
    const T_c disc_x = x * pexp(-(r * t));
    *call = cast<T_out>(s * c1 - disc_x * c2);
    *put = cast<T_out>(disc_x * (one - c2) - s * (one - c1));
}

extern "C" void black_scholes(T_out *call, T_out *put, const T_in *S, const T_in *X, const T_in *T,
                              double R, double V, int n) {
    const T_c r = cast<T_c>(R);
    const T_c v = cast<T_c>(V);
    const int groups = (n + options_per_iter - 1) / options_per_iter;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int g = 0; g < groups; g++) {
        const int base = g * options_per_iter;
        if (base + options_per_iter <= n) {
            for (int j = 0; j < options_per_iter; j++) {
                bs_option(S[base + j], X[base + j], T[base + j], r, v, call + base + j, put + base + j);
            }
        } else {
            for (int i = base; i < n; i++) {
                bs_option(S[i], X[i], T[i], r, v, call + i, put + i);
            }
        }
    }
}
