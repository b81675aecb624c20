// MRI-Q (Q matrix of an inverse non-uniform DFT), host-CPU port for Kernel Tuner's C
// backend.  Modelled on Parboil's mri-q ComputeQ (NCSA licence); written from scratch.
//
//   Qr[x] = sum_k phiMag[k] * cos(2 pi t),  Qi[x] = sum_k phiMag[k] * sin(2 pi t),
//   t = kx[k]*x + ky[k]*y + kz[k]*z  (turns)
//
// The phase is computed in T_c, reduced to [-1/2, 1/2] turns by subtracting rint(t),
// turned into radians and passed to cos/sin in T_c; the sums are accumulated in T_c
// and stored as T_q.  Each iteration of the parallel loop keeps `voxels_per_iter`
// voxels in registers, so every k-space sample is loaded and converted once for them.
#include "precision.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef voxels_per_iter
#define voxels_per_iter 1
#endif
#ifndef T_k
#define T_k double
#endif
#ifndef T_x
#define T_x double
#endif
#ifndef T_c
#define T_c double
#endif
#ifndef T_q
#define T_q double
#endif

// rint in each type (not in precision.h): half and bfloat16 round in float, exactly.
static inline double mriq_rint(double v) { return rint(v); }
static inline float mriq_rint(float v) { return rintf(v); }
static inline half mriq_rint(half v) { return (half)rintf((float)v); }
static inline bfloat16 mriq_rint(bfloat16 v) { return bfloat16(rintf((float)v)); }

extern "C" void mriq(const T_k *kx, const T_k *ky, const T_k *kz, const T_k *phiMag,
                     const T_x *x, const T_x *y, const T_x *z, T_q *Qr, T_q *Qi,
                     int numK, int numX) {
    const T_c two_pi = cast<T_c>(6.283185307179586);
    const T_c zero = cast<T_c>(0.0);
    const int groups = (numX + voxels_per_iter - 1) / voxels_per_iter;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int gi = 0; gi < groups; gi++) {
        const int base = gi * voxels_per_iter;
        T_c px[voxels_per_iter], py[voxels_per_iter], pz[voxels_per_iter];
        T_c qr[voxels_per_iter], qi[voxels_per_iter];
        for (int v = 0; v < voxels_per_iter; v++) {
            const int i = base + v < numX ? base + v : numX - 1;
            px[v] = cast<T_c>(x[i]);
            py[v] = cast<T_c>(y[i]);
            pz[v] = cast<T_c>(z[i]);
            qr[v] = zero;
            qi[v] = zero;
        }
        for (int k = 0; k < numK; k++) {
            const T_c ckx = cast<T_c>(kx[k]);
            const T_c cky = cast<T_c>(ky[k]);
            const T_c ckz = cast<T_c>(kz[k]);
            const T_c mag = cast<T_c>(phiMag[k]);
            for (int v = 0; v < voxels_per_iter; v++) {
                T_c t = ckx * px[v];
                t = t + cky * py[v];
                t = t + ckz * pz[v];
                t = t - mriq_rint(t);
                const T_c arg = two_pi * t;
                qr[v] = qr[v] + mag * pcos(arg);
                qi[v] = qi[v] + mag * psin(arg);
            }
        }
        for (int v = 0; v < voxels_per_iter; v++) {
            if (base + v < numX) {
                Qr[base + v] = cast<T_q>(qr[v]);
                Qi[base + v] = cast<T_q>(qi[v]);
            }
        }
    }
}
