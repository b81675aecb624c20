// Newton-Raphson root of quartics, host-CPU port (Kernel Tuner C backend).
//
// coef holds the coefficients a0..a4 of n polynomials as five rows of n (structure
// of arrays); x0 the start values; root receives the 10th Newton iterate.  The first
// five steps run in T_early, the last five in T_late; coefficients are stored in
// T_coef, start values and roots in T_x.  Each OpenMP iteration handles
// polys_per_iter neighbouring polynomials interleaved, so their independent
// dependency chains overlap (and double/float chains can share SIMD registers).
#include "precision.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef polys_per_iter
#define polys_per_iter 1
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

namespace {

// Coefficients of P polynomials in type T, one array per coefficient so that the
// loops over p below are plain SIMD loops for double and float.
template <typename T, int P>
struct Quartics {
    T a0[P], a1[P], a2[P], a3[P], a4[P];  // p(x) = a4 x^4 + a3 x^3 + a2 x^2 + a1 x + a0
    T d1[P], d2[P], d3[P];                // p'(x) = d3 x^3 + d2 x^2 + d1 x + a1
};

template <typename T, int P>
inline void load_quartics(Quartics<T, P> &q, const T_coef *coef, long i0, long n) {
    for (int p = 0; p < P; p++) {
        q.a0[p] = cast<T>(coef[i0 + p]);
        q.a1[p] = cast<T>(coef[n + i0 + p]);
        q.a2[p] = cast<T>(coef[2 * n + i0 + p]);
        q.a3[p] = cast<T>(coef[3 * n + i0 + p]);
        q.a4[p] = cast<T>(coef[4 * n + i0 + p]);
        q.d3[p] = cast<T>(4) * q.a4[p];
        q.d2[p] = cast<T>(3) * q.a3[p];
        q.d1[p] = cast<T>(2) * q.a2[p];
    }
}

// NR_STEPS_PER_PHASE Newton steps x -= p(x)/p'(x) (Horner) on P polynomials.
template <typename T, int P>
inline void newton_phase(const Quartics<T, P> &q, T *x) {
    for (int it = 0; it < NR_STEPS_PER_PHASE; it++) {
#pragma omp simd
        for (int p = 0; p < P; p++) {
            T v = x[p];
            T f = (((q.a4[p] * v + q.a3[p]) * v + q.a2[p]) * v + q.a1[p]) * v + q.a0[p];
            T df = ((q.d3[p] * v + q.d2[p]) * v + q.d1[p]) * v + q.a1[p];
            x[p] = v - f / df;
        }
    }
}

// P neighbouring polynomials starting at i0, processed in lock step.
template <int P>
inline void solve_block(const T_coef *coef, const T_x *x0, T_x *root, long i0, long n) {
    Quartics<T_early, P> qe;
    T_early xe[P];
    load_quartics(qe, coef, i0, n);
    for (int p = 0; p < P; p++) xe[p] = cast<T_early>(x0[i0 + p]);
    newton_phase(qe, xe);

    Quartics<T_late, P> ql;
    T_late xl[P];
    load_quartics(ql, coef, i0, n);
    for (int p = 0; p < P; p++) xl[p] = cast<T_late>(xe[p]);
    newton_phase(ql, xl);

    for (int p = 0; p < P; p++) root[i0 + p] = cast<T_x>(xl[p]);
}

}  // namespace

extern "C" void newton_raphson(const T_coef *coef, const T_x *x0, T_x *root, int n) {
    const long nn = n;
    const long blocks = nn / polys_per_iter;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long b = 0; b < blocks; b++) {
        solve_block<polys_per_iter>(coef, x0, root, b * polys_per_iter, nn);
    }
    for (long i = blocks * polys_per_iter; i < nn; i++) {
        solve_block<1>(coef, x0, root, i, nn);
    }
}
