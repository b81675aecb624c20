// Coulombic potential on a 2-D grid, host-CPU port (Kernel Tuner C backend).
//
// potential[j][i] = sum_a q_a / sqrt((gx_i - x_a)^2 + (gy_j - y_a)^2 + z_a^2) with
// gx_i = (i + 1/2)/nx, gy_j = (j + 1/2)/nx.  atoms holds three rows of natoms (x, y, z)
// in T_pos, charge the charges in T_q.  Distances and 1/r are computed in T_pos, the
// products q/r are summed in T_acc and stored in T_pot.  Each OpenMP iteration is one
// grid row; within a row points_per_iter neighbouring points share every atom load and
// form an inner SIMD loop.
#include "precision.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef points_per_iter
#define points_per_iter 1
#endif
#ifndef T_pos
#define T_pos double
#endif
#ifndef T_q
#define T_q double
#endif
#ifndef T_acc
#define T_acc double
#endif
#ifndef T_pot
#define T_pot double
#endif

namespace {

// Potential at the P grid points (i0 .. i0+P-1, j).
template <int P>
inline void potential_block(const T_pos *atoms, const T_q *charge, T_pot *pot, long i0, long j, int nx,
                            int natoms) {
    T_pos gx[P];
    T_acc acc[P];
    for (int p = 0; p < P; p++) {
        gx[p] = cast<T_pos>(((double)(i0 + p) + 0.5) / nx);
        acc[p] = cast<T_acc>(0);
    }
    const T_pos gy = cast<T_pos>(((double)j + 0.5) / nx);
    for (int a = 0; a < natoms; a++) {
        const T_pos ax = atoms[a];
        const T_pos dy = gy - atoms[natoms + a];
        const T_pos az = atoms[2 * natoms + a];
        const T_pos dyz2 = dy * dy + az * az;
        const T_acc q = cast<T_acc>(charge[a]);
#pragma omp simd
        for (int p = 0; p < P; p++) {
            const T_pos dx = gx[p] - ax;
            const T_pos rinv = prsqrt(dx * dx + dyz2);
            acc[p] += q * cast<T_acc>(rinv);
        }
    }
    for (int p = 0; p < P; p++) pot[j * nx + i0 + p] = cast<T_pot>(acc[p]);
}

}  // namespace

extern "C" void coulombic(const T_pos *atoms, const T_q *charge, T_pot *pot, int nx, int ny, int natoms) {
    const long full = (long)nx / points_per_iter * points_per_iter;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long j = 0; j < ny; j++) {
        for (long i0 = 0; i0 < full; i0 += points_per_iter)
            potential_block<points_per_iter>(atoms, charge, pot, i0, j, nx, natoms);
        for (long i = full; i < nx; i++) potential_block<1>(atoms, charge, pot, i, j, nx, natoms);
    }
}
