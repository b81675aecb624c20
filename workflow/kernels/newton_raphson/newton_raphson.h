// Newton-Raphson on quartics: the per-polynomial arithmetic, shared by kernel.cu (nvcc,
// __host__ __device__) and kernel.cpp (g++). Types: T_coef the stored coefficients a0..a4,
// T_x0 the start value, T_early steps 1-5, T_late steps 6-10, T_dp the derivative p'(x)
// (its coefficients and its Horner evaluation, in every step), T_root the output.
#ifndef TSB_NEWTON_RAPHSON_H
#define TSB_NEWTON_RAPHSON_H
#include "precision.h"

#define NR_STEPS_PER_PHASE 5

// p'(x) = d3 x^3 + d2 x^2 + d1 x + d0 with d3 = 4 a4, d2 = 3 a3, d1 = 2 a2, d0 = a1.
struct NrDerivative {
    T_dp d0, d1, d2, d3;
};

TSB_FN NrDerivative nr_derivative(T_coef a1, T_coef a2, T_coef a3, T_coef a4) {
    NrDerivative d;
    d.d0 = cast<T_dp>(a1);
    d.d1 = cast<T_dp>(2.0) * cast<T_dp>(a2);
    d.d2 = cast<T_dp>(3.0) * cast<T_dp>(a3);
    d.d3 = cast<T_dp>(4.0) * cast<T_dp>(a4);
    return d;
}

// One Newton step x <- x - p(x) / p'(x) in type T, p by Horner's rule in T, p' in T_dp.
template <typename T>
TSB_FN T nr_step(T a0, T a1, T a2, T a3, T a4, NrDerivative d, T x) {
    const T f = (((a4 * x + a3) * x + a2) * x + a1) * x + a0;
    const T_dp v = cast<T_dp>(x);
    const T_dp df = ((d.d3 * v + d.d2) * v + d.d1) * v + d.d0;
    return x - f / cast<T>(df);
}

// NR_STEPS_PER_PHASE Newton steps in type T on P lanes in lock step (x[p] in, out).
template <typename T, int P>
TSB_FN void nr_phase(const T_coef *c0, const T_coef *c1, const T_coef *c2, const T_coef *c3, const T_coef *c4,
                     const NrDerivative *d, T *x) {
    for (int it = 0; it < NR_STEPS_PER_PHASE; it++) {
        TSB_UNROLL
        for (int p = 0; p < P; p++) {
            x[p] = nr_step(cast<T>(c0[p]), cast<T>(c1[p]), cast<T>(c2[p]), cast<T>(c3[p]), cast<T>(c4[p]), d[p], x[p]);
        }
    }
}

// The 10th Newton iterate of a4 x^4 + a3 x^3 + a2 x^2 + a1 x + a0 from x0, for P
// neighbouring polynomials (a0[p] .. a4[p], x0[p], root[p], p < P) in lock step: steps 1-5
// in T_early, steps 6-10 in T_late, each step over all P lanes, so that P independent
// dependency chains overlap (the CPU's interleaving and SIMD; the GPU calls it with P = 1).
template <int P>
TSB_FN void nr_solve(const T_coef *c0, const T_coef *c1, const T_coef *c2, const T_coef *c3,
                     const T_coef *c4, const T_x0 *x0, T_root *root) {
    NrDerivative d[P];
    T_early xe[P];
    T_late xl[P];
    TSB_UNROLL
    for (int p = 0; p < P; p++) {
        d[p] = nr_derivative(c1[p], c2[p], c3[p], c4[p]);
        xe[p] = cast<T_early>(x0[p]);
    }
    nr_phase<T_early, P>(c0, c1, c2, c3, c4, d, xe);
    TSB_UNROLL
    for (int p = 0; p < P; p++) xl[p] = cast<T_late>(xe[p]);
    nr_phase<T_late, P>(c0, c1, c2, c3, c4, d, xl);
    TSB_UNROLL
    for (int p = 0; p < P; p++) root[p] = cast<T_root>(xl[p]);
}

#endif
