// LavaMD, host-CPU port: Gaussian pair potential and forces over a box and its
// (up to) 26 neighbour boxes.  Same math and summation order per particle as
// kernel.cu: neighbour boxes in (dz, dy, dx) order, particles j in storage order.
//
// Types: T_pos positions, T_q charges, T_acc pair arithmetic and accumulators,
// T_out output.  Tunables: threads (OpenMP), ipt (home particles per inner pass,
// each neighbour particle is loaded once for ipt home particles).
// gcc 12 converts _Float16 through libgcc calls unless F16C is enabled, which made
// half configurations ~30x slower than double; every x86-64 CPU since 2012 has it.
#if defined(__x86_64__) && !defined(__F16C__)
#pragma GCC target("f16c")
#endif
#include "precision.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef ipt
#define ipt 1
#endif

extern "C" void lavamd(const T_pos *pos, const T_q *q, T_out *fv, int nb, int ppb) {
    const int nboxes = nb * nb * nb;
    const T_acc a2 = cast<T_acc>(0.5);
    const T_acc two = cast<T_acc>(2.0);
    const T_acc zero = cast<T_acc>(0.0);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int b = 0; b < nboxes; b++) {
        const int bx = b % nb, by = (b / nb) % nb, bz = b / (nb * nb);
        for (int i0 = 0; i0 < ppb; i0 += ipt) {
            T_acc xi[ipt], yi[ipt], zi[ipt], av[ipt], ax[ipt], ay[ipt], az[ipt];
            for (int k = 0; k < ipt; k++) {
                const int ii = i0 + k < ppb ? i0 + k : i0;  // padded lanes repeat i0
                const long p = (long)b * ppb + ii;
                xi[k] = cast<T_acc>(pos[3 * p]);
                yi[k] = cast<T_acc>(pos[3 * p + 1]);
                zi[k] = cast<T_acc>(pos[3 * p + 2]);
                av[k] = zero; ax[k] = zero; ay[k] = zero; az[k] = zero;
            }
            for (int dz = -1; dz <= 1; dz++) {
                const int cz = bz + dz;
                if (cz < 0 || cz >= nb) continue;
                for (int dy = -1; dy <= 1; dy++) {
                    const int cy = by + dy;
                    if (cy < 0 || cy >= nb) continue;
                    for (int dx = -1; dx <= 1; dx++) {
                        const int cx = bx + dx;
                        if (cx < 0 || cx >= nb) continue;
                        const long base = (long)((cz * nb + cy) * nb + cx) * ppb;
                        for (int j = 0; j < ppb; j++) {
                            const T_acc xj = cast<T_acc>(pos[3 * (base + j)]);
                            const T_acc yj = cast<T_acc>(pos[3 * (base + j) + 1]);
                            const T_acc zj = cast<T_acc>(pos[3 * (base + j) + 2]);
                            const T_acc qj = cast<T_acc>(q[base + j]);
                            for (int k = 0; k < ipt; k++) {
                                const T_acc ddx = xi[k] - xj, ddy = yi[k] - yj, ddz = zi[k] - zj;
                                const T_acc r2 = ddx * ddx + ddy * ddy + ddz * ddz;
                                const T_acc qv = qj * pexp(-(a2 * r2));
                                const T_acc qf = two * qv;
                                av[k] = av[k] + qv;
                                ax[k] = ax[k] + qf * ddx;
                                ay[k] = ay[k] + qf * ddy;
                                az[k] = az[k] + qf * ddz;
                            }
                        }
                    }
                }
            }
            for (int k = 0; k < ipt && i0 + k < ppb; k++) {
                const long p = (long)b * ppb + i0 + k;
                fv[4 * p] = cast<T_out>(av[k]);
                fv[4 * p + 1] = cast<T_out>(ax[k]);
                fv[4 * p + 2] = cast<T_out>(ay[k]);
                fv[4 * p + 3] = cast<T_out>(az[k]);
            }
        }
    }
}
