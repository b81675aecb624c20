// Coulombic potential on a 2-D grid, CUDA: a thread computes points_per_thread points of
// one grid row, spaced block_size_x apart (coalesced stores); every thread of a warp reads
// the same atom, so atom loads are broadcasts. The atom loop is unrolled atom_unroll
// times. The arithmetic is coulombic.h's.
#ifndef atom_unroll
#define atom_unroll 1
#endif
// #pragma arguments are not macro-expanded; _Pragma of a stringised expansion is.
#define COUL_STR(x) #x
#define COUL_PRAGMA_UNROLL(n) _Pragma(COUL_STR(unroll n))
#define COUL_ATOM_LOOP COUL_PRAGMA_UNROLL(atom_unroll)
#define COUL_POINT_LOOP _Pragma("unroll")
#include "coulombic.h"

#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 4
#endif
#ifndef points_per_thread
#define points_per_thread 1
#endif

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y)
coulombic(const T_pos *__restrict__ atoms, const T_q *__restrict__ charge, T_pot *__restrict__ pot, int nx,
          int ny, int natoms) {
    const int j = blockIdx.y * block_size_y + threadIdx.y;
    const int ibase = blockIdx.x * (block_size_x * points_per_thread) + threadIdx.x;
    if (j >= ny) return;
    T_pos gx[points_per_thread];
    T_pot v[points_per_thread];
#pragma unroll
    for (int k = 0; k < points_per_thread; k++) gx[k] = coulombic_grid(ibase + k * block_size_x, nx);
    coulombic_potentials<points_per_thread>(atoms, charge, natoms, gx, coulombic_grid(j, nx), v);
#pragma unroll
    for (int k = 0; k < points_per_thread; k++) {
        const int i = ibase + k * block_size_x;
        if (i < nx) pot[(long)j * nx + i] = v[k];
    }
}
