// Coulombic potential on a 2-D grid, host CPU (Kernel Tuner's C backend): each OpenMP
// iteration is one grid row; within a row points_per_iter neighbouring points share every
// atom load and form an inner SIMD loop. The arithmetic is coulombic.h's.
#define COUL_POINT_LOOP _Pragma("omp simd")
#include "coulombic.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef points_per_iter
#define points_per_iter 1
#endif

// Potential at the P grid points (i0 .. i0+P-1, j).
template <int P>
static inline void potential_block(const T_pos *atoms, const T_q *charge, T_pot *pot, long i0, long j, int nx,
                                   int natoms) {
    T_pos gx[P];
    T_pot sums[P];  // in registers, not in pot (which may alias the inputs)
    for (int p = 0; p < P; p++) gx[p] = coulombic_grid(i0 + p, nx);
    coulombic_potentials<P>(atoms, charge, natoms, gx, coulombic_grid(j, nx), sums);
    for (int p = 0; p < P; p++) pot[j * nx + i0 + p] = sums[p];
}

extern "C" void coulombic(const T_pos *atoms, const T_q *charge, T_pot *pot, int nx, int ny, int natoms) {
    const long full = (long)nx / points_per_iter * points_per_iter;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long j = 0; j < ny; j++) {
        for (long i0 = 0; i0 < full; i0 += points_per_iter)
            potential_block<points_per_iter>(atoms, charge, pot, i0, j, nx, natoms);
        for (long i = full; i < nx; i++) potential_block<1>(atoms, charge, pot, i, j, nx, natoms);
    }
}
