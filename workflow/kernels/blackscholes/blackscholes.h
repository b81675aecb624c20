// Black-Scholes European call and put prices: the per-option arithmetic, shared by
// kernel.cu (nvcc, __host__ __device__) and kernel.cpp (g++). Modelled on NVIDIA
// cuda-samples BlackScholes (BSD-3); written from the formula.
//
//   d1 = (log(S/X) + (R + V^2/2) T) / (V sqrt(T)),  d2 = d1 - V sqrt(T)
//   call = S CND(d1) - X e^{-RT} CND(d2),  put = X e^{-RT} (1 - CND(d2)) - S (1 - CND(d1))
//
// CND is the Abramowitz-Stegun five-term polynomial times exp(-d^2/2).
// Types: T_in inputs S, X, T; T_c log/sqrt/exp, d1, d2, discount and prices; T_cnd the
// CND evaluation; T_out the stored prices. log, sqrt and exp follow exec_policy.
#ifndef TSB_BLACKSCHOLES_H
#define TSB_BLACKSCHOLES_H
#include "precision.h"

TSB_FN T_cnd bs_cnd(T_cnd d) {
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

// Prices option i (S[i], X[i], T[i]) at rate R and volatility V into call[i] and put[i].
TSB_FN void bs_price(const T_in *S, const T_in *X, const T_in *T, long i, double R, double V, T_out *call,
                     T_out *put) {
    const T_c r = cast<T_c>(R);
    const T_c v = cast<T_c>(V);
    const T_c s = cast<T_c>(S[i]);
    const T_c x = cast<T_c>(X[i]);
    const T_c t = cast<T_c>(T[i]);
    const T_c one = cast<T_c>(1.0);
    const T_c vsqrt_t = v * psqrt(t);
    const T_c d1 = (plog(s / x) + (r + cast<T_c>(0.5) * v * v) * t) / vsqrt_t;
    const T_c d2 = d1 - vsqrt_t;
    const T_c c1 = cast<T_c>(bs_cnd(cast<T_cnd>(d1)));
    const T_c c2 = cast<T_c>(bs_cnd(cast<T_cnd>(d2)));
    const T_c disc_x = x * pexp(-(r * t));
    call[i] = cast<T_out>(s * c1 - disc_x * c2);
    put[i] = cast<T_out>(disc_x * (one - c2) - s * (one - c1));
}

#endif
