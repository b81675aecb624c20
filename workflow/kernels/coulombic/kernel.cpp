// Coulombic potential on a 2-D grid, host CPU (Kernel Tuner's C backend): each OpenMP
// iteration is one grid row; within a row points_per_iter neighbouring points share every
// atom load and form an inner SIMD loop (the row's last nx % points_per_iter points go one
// at a time). dynamic_schedule picks how rows reach the threads: 0 schedule(static), one
// contiguous band of rows per thread and no scheduling work; 1 schedule(dynamic, 1), rows
// handed out one at a time from a shared counter, which evens out threads that run at
// unequal speed (a core shared with other work) at the price of one atomic per row. Every
// variant computes each point with the same operations in the same order (atoms in order),
// so results are bit-identical across them. The arithmetic is coulombic.h's.
#define COUL_POINT_LOOP _Pragma("omp simd")
#include "coulombic.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef points_per_iter
#define points_per_iter 1
#endif
#ifndef dynamic_schedule
#define dynamic_schedule 0
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

// Grid row j: blocks of P points, then the remainder one point at a time.
template <int P>
static inline void potential_row(const T_pos *atoms, const T_q *charge, T_pot *pot, long j, int nx, int natoms) {
    const long full = (long)nx / P * P;
    for (long i0 = 0; i0 < full; i0 += P) potential_block<P>(atoms, charge, pot, i0, j, nx, natoms);
    for (long i = full; i < nx; i++) potential_block<1>(atoms, charge, pot, i, j, nx, natoms);
}

extern "C" void coulombic(const T_pos *atoms, const T_q *charge, T_pot *pot, int nx, int ny, int natoms) {
    constexpr int P = points_per_iter;
    constexpr int n_threads = threads;
    if constexpr (dynamic_schedule != 0) {
#pragma omp parallel for num_threads(n_threads) schedule(dynamic, 1)
        for (long j = 0; j < ny; j++) potential_row<P>(atoms, charge, pot, j, nx, natoms);
    } else {
#pragma omp parallel for num_threads(n_threads) schedule(static)
        for (long j = 0; j < ny; j++) potential_row<P>(atoms, charge, pot, j, nx, natoms);
    }
}
