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

// NR_STEPS_PER_PHASE steps x <- x - p(x) / p'(x) in type T, p by Horner's rule in T.
template <typename T>
TSB_FN T nr_phase(T_coef c0, T_coef c1, T_coef c2, T_coef c3, T_coef c4, NrDerivative d, T x) {
    const T a0 = cast<T>(c0), a1 = cast<T>(c1), a2 = cast<T>(c2), a3 = cast<T>(c3), a4 = cast<T>(c4);
    TSB_UNROLL
    for (int it = 0; it < NR_STEPS_PER_PHASE; it++) {
        const T f = (((a4 * x + a3) * x + a2) * x + a1) * x + a0;
        const T_dp v = cast<T_dp>(x);
        const T_dp df = ((d.d3 * v + d.d2) * v + d.d1) * v + d.d0;
        x = x - f / cast<T>(df);
    }
    return x;
}

// The 10th Newton iterate of a4 x^4 + a3 x^3 + a2 x^2 + a1 x + a0 from x0.
TSB_FN T_root nr_solve(T_coef a0, T_coef a1, T_coef a2, T_coef a3, T_coef a4, T_x0 x0) {
    const NrDerivative d = nr_derivative(a1, a2, a3, a4);
    const T_early xe = nr_phase<T_early>(a0, a1, a2, a3, a4, d, cast<T_early>(x0));
    const T_late xl = nr_phase<T_late>(a0, a1, a2, a3, a4, d, cast<T_late>(xe));
    return cast<T_root>(xl);
}

#endif
