// InvK, host CPU (Kernel Tuner's C backend): `threads` OpenMP threads over blocks of ppt
// neighbouring targets, whose independent solutions the compiler interleaves; the
// arithmetic is invk.h's.
#include "invk.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef ppt
#define ppt 1
#endif

extern "C" void invk(const T_in *target, T_out *theta, int n) {
    const int nblocks = n / ppt;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int blk = 0; blk < nblocks; blk++) {
#pragma omp simd
        for (int k = 0; k < ppt; k++) invk_point(target, theta, (long)blk * ppt + k);
    }
    for (long i = (long)nblocks * ppt; i < n; i++) invk_point(target, theta, i);
}
