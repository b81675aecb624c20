// Newton-Raphson root of quartics, host-CPU port (Kernel Tuner C backend); the arithmetic
// is newton_raphson.h's.
//
// coef holds the coefficients a0..a4 of n polynomials as five rows of n (structure
// of arrays); x0 the start values; root receives the 10th Newton iterate. Each OpenMP
// iteration handles polys_per_iter neighbouring polynomials in lock step (nr_solve's lanes),
// so their independent dependency chains overlap (and double/float chains share SIMD
// registers).
#include "newton_raphson.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef polys_per_iter
#define polys_per_iter 1
#endif

extern "C" void newton_raphson(const T_coef *coef, const T_x0 *x0, T_root *root, int n) {
    const long nn = n;
    const long blocks = nn / polys_per_iter;
    const T_coef *a0 = coef, *a1 = coef + nn, *a2 = coef + 2 * nn, *a3 = coef + 3 * nn, *a4 = coef + 4 * nn;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long b = 0; b < blocks; b++) {
        const long i0 = b * polys_per_iter;
        nr_solve<polys_per_iter>(a0 + i0, a1 + i0, a2 + i0, a3 + i0, a4 + i0, x0 + i0, root + i0);
    }
    for (long p = blocks * polys_per_iter; p < nn; p++) nr_solve<1>(a0 + p, a1 + p, a2 + p, a3 + p, a4 + p, x0 + p, root + p);
}
