// LavaMD: the pair arithmetic, shared by kernel.cu (nvcc, __host__ __device__) and
// kernel.cpp (g++). Types: T_pos positions, T_q charges, T_acc pair arithmetic (distance,
// exponential, forces) and the four accumulators, T_out output; the exponential follows
// exec_policy (precision.h). Each caller keeps ipt home particles in registers and feeds
// them neighbour particles in order: neighbour boxes in (dz, dy, dx) order, particles j in
// storage order, so both targets sum in the same order.
#ifndef TSB_LAVAMD_H
#define TSB_LAVAMD_H
#include "precision.h"

#ifndef ipt
#define ipt 1
#endif

// Box index of neighbour m (0 .. 26, m = 9 (dz+1) + 3 (dy+1) + (dx+1)) of box b in an
// nb^3 grid, or -1 where it lies outside (non-periodic boundaries).
TSB_FN int lavamd_neighbour(int b, int nb, int m) {
    const int cx = b % nb + m % 3 - 1, cy = (b / nb) % nb + (m / 3) % 3 - 1, cz = b / (nb * nb) + m / 9 - 1;
    if (cx < 0 || cx >= nb || cy < 0 || cy >= nb || cz < 0 || cz >= nb) return -1;
    return (cz * nb + cy) * nb + cx;
}

// Home particle p into lane k: its coordinates in T_acc, the accumulators zeroed.
TSB_FN void lavamd_load_home(const T_pos *pos, long p, int k, T_acc *xi, T_acc *yi, T_acc *zi, T_acc *av, T_acc *ax,
                             T_acc *ay, T_acc *az) {
    xi[k] = cast<T_acc>(pos[3 * p]);
    yi[k] = cast<T_acc>(pos[3 * p + 1]);
    zi[k] = cast<T_acc>(pos[3 * p + 2]);
    av[k] = cast<T_acc>(0.0);
    ax[k] = cast<T_acc>(0.0);
    ay[k] = cast<T_acc>(0.0);
    az[k] = cast<T_acc>(0.0);
}

// Interactions of the ipt home particles with jn neighbour particles whose coordinates are
// x[s j], y[s j], z[s j] and charges q[j] (global memory: s = 3; shared-memory tiles: s = 1):
// v = exp(-A2 r2), fv_i += q_j (v, 2 v (x_i - x_j), 2 v (y_i - y_j), 2 v (z_i - z_j)).
TSB_FN void lavamd_accumulate(const T_pos *x, const T_pos *y, const T_pos *z, int s, const T_q *q, int jn,
                              const T_acc *xi, const T_acc *yi, const T_acc *zi, T_acc *av, T_acc *ax, T_acc *ay,
                              T_acc *az) {
    const T_acc a2 = cast<T_acc>(0.5);
    const T_acc two = cast<T_acc>(2.0);
    for (int j = 0; j < jn; j++) {
        const T_acc xj = cast<T_acc>(x[s * j]);
        const T_acc yj = cast<T_acc>(y[s * j]);
        const T_acc zj = cast<T_acc>(z[s * j]);
        const T_acc qj = cast<T_acc>(q[j]);
        TSB_UNROLL
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

// Lane k's four sums into fv of particle p, rounded to T_out.
TSB_FN void lavamd_store(T_out *fv, long p, int k, const T_acc *av, const T_acc *ax, const T_acc *ay,
                         const T_acc *az) {
    fv[4 * p] = cast<T_out>(av[k]);
    fv[4 * p + 1] = cast<T_out>(ax[k]);
    fv[4 * p + 2] = cast<T_out>(ay[k]);
    fv[4 * p + 3] = cast<T_out>(az[k]);
}

#endif
