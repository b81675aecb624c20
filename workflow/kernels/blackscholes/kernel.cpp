// Black-Scholes, host CPU (Kernel Tuner's C backend): `threads` OpenMP threads over
// groups of options_per_iter consecutive options; the arithmetic is blackscholes.h's.
#include "blackscholes.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef options_per_iter
#define options_per_iter 1
#endif

extern "C" void black_scholes(T_out *call, T_out *put, const T_in *S, const T_in *X, const T_in *T,
                              double R, double V, int n) {
    const int groups = n / options_per_iter;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int g = 0; g < groups; g++) {
        for (int j = 0; j < options_per_iter; j++) bs_price(S, X, T, (long)g * options_per_iter + j, R, V, call, put);
    }
    for (long i = (long)groups * options_per_iter; i < n; i++) bs_price(S, X, T, i, R, V, call, put);
}
