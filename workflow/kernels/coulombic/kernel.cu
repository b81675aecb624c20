// Coulombic potential on a 2-D grid, CUDA version.
//
// potential[j][i] = sum_a q_a / sqrt((gx_i - x_a)^2 + (gy_j - y_a)^2 + z_a^2) with
// gx_i = (i + 1/2)/nx, gy_j = (j + 1/2)/nx.  atoms holds three rows of natoms (x, y, z)
// in T_pos, charge the charges in T_q.  Distances and 1/r (prsqrt, following
// exec_policy) are computed in T_pos, the products q/r are summed in T_acc and stored in
// T_pot.  A thread computes points_per_thread points of one grid row, spaced
// block_size_x apart (coalesced stores); every thread of a warp reads the same atom, so
// atom loads are broadcasts.  The atom loop is unrolled atom_unroll times.
#include "precision.cuh"

#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 4
#endif
#ifndef points_per_thread
#define points_per_thread 1
#endif
#ifndef atom_unroll
#define atom_unroll 1
#endif
// #pragma arguments are not macro-expanded; _Pragma of a stringised expansion is.
#define COUL_STR(x) #x
#define COUL_PRAGMA_UNROLL(n) _Pragma(COUL_STR(unroll n))

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

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y)
coulombic(const T_pos *__restrict__ atoms, const T_q *__restrict__ charge, T_pot *__restrict__ pot, int nx,
          int ny, int natoms) {
    const int j = blockIdx.y * block_size_y + threadIdx.y;
    const int ibase = blockIdx.x * (block_size_x * points_per_thread) + threadIdx.x;
    if (j >= ny) return;

    T_pos gx[points_per_thread];
    T_acc acc[points_per_thread];
#pragma unroll
    for (int k = 0; k < points_per_thread; k++) {
        gx[k] = cast<T_pos>(((double)(ibase + k * block_size_x) + 0.5) / nx);
        acc[k] = cast<T_acc>(0);
    }
    const T_pos gy = cast<T_pos>(((double)j + 0.5) / nx);

    COUL_PRAGMA_UNROLL(atom_unroll)
    for (int a = 0; a < natoms; a++) {
        const T_pos ax = atoms[a];
        const T_pos dy = gy - atoms[natoms + a];
        const T_pos az = atoms[2 * natoms + a];
        const T_pos dyz2 = dy * dy + az * az;
        const T_acc q = cast<T_acc>(charge[a]);
#pragma unroll
        for (int k = 0; k < points_per_thread; k++) {
            const T_pos dx = gx[k] - ax;
            const T_pos rinv = prsqrt(dx * dx + dyz2);
            acc[k] += q * cast<T_acc>(rinv);
        }
    }

#pragma unroll
    for (int k = 0; k < points_per_thread; k++) {
        const int i = ibase + k * block_size_x;
        if (i < nx) pot[(long)j * nx + i] = cast<T_pot>(acc[k]);
    }
}
