// Bessel I0 by its power series, host-CPU port for Kernel Tuner's C backend.
// Tunables (as #defines): kmax terms, elems_per_iter independent elements per loop
// iteration (instruction-level parallelism), and the types T_x, T_y, T_sum, T_term.
#include "precision.h"

#ifndef kmax
#define kmax 24
#endif
#ifndef elems_per_iter
#define elems_per_iter 1
#endif

extern "C" void bessel_i0(const T_x *x, T_y *y, int n) {
    // c[k] = 1 / (4 k^2), so t_k = t_{k-1} * x^2 * c[k]
    T_term c[kmax + 1];
    for (int k = 1; k <= kmax; k++) {
        c[k] = cast<T_term>(1.0 / (4.0 * k * k));
    }
    int i = 0;
    for (; i + elems_per_iter <= n; i += elems_per_iter) {
        T_term xx[elems_per_iter], t[elems_per_iter];
        T_sum s[elems_per_iter];
        for (int e = 0; e < elems_per_iter; e++) {
            T_term v = cast<T_term>(x[i + e]);
            xx[e] = v * v;
            t[e] = cast<T_term>(1.0);
            s[e] = cast<T_sum>(1.0);
        }
        for (int k = 1; k <= kmax; k++) {
            for (int e = 0; e < elems_per_iter; e++) {
                t[e] = t[e] * (xx[e] * c[k]);
                s[e] = s[e] + cast<T_sum>(t[e]);
            }
        }
        for (int e = 0; e < elems_per_iter; e++) {
            y[i + e] = cast<T_y>(s[e]);
        }
    }
    for (; i < n; i++) {
        T_term v = cast<T_term>(x[i]);
        T_term xx = v * v;
        T_term t = cast<T_term>(1.0);
        T_sum s = cast<T_sum>(1.0);
        for (int k = 1; k <= kmax; k++) {
            t = t * (xx * c[k]);
            s = s + cast<T_sum>(t);
        }
        y[i] = cast<T_y>(s);
    }
}
