// Bessel I0 by its power series: the per-element arithmetic, shared by kernel.cu (nvcc,
// __host__ __device__) and kernel.cpp (g++). Types: T_x input, T_q the series variable
// q = x^2 / 4, T_term the term t_k, T_sum the running sum, T_y output.
#ifndef TSB_BESSEL_H
#define TSB_BESSEL_H
#include "precision.h"

// Terms after t_0 = 1: a float64 sum needs 23 at x = 10 (the inputs' largest value).
#define BESSEL_TERMS 24

// I0(x) = sum_{k>=0} t_k with t_0 = 1 and t_k = t_{k-1} * q / k^2.
TSB_FN T_y bessel_i0_element(T_x xin) {
    const T_q v = cast<T_q>(xin);
    const T_q q = v * v * cast<T_q>(0.25);
    const T_term qt = cast<T_term>(q);
    T_term t = cast<T_term>(1.0);
    T_sum s = cast<T_sum>(1.0);
    TSB_UNROLL
    for (int k = 1; k <= BESSEL_TERMS; k++) {
        t = t * (qt * cast<T_term>(1.0 / ((double)k * k)));
        s = s + cast<T_sum>(t);
    }
    return cast<T_y>(s);
}

#endif
