// Coulombic potential: the per-grid-point arithmetic, shared by kernel.cu (nvcc,
// __host__ __device__) and kernel.cpp (g++). Types: T_pos atom positions, grid coordinates
// and the distance / 1-over-r arithmetic (prsqrt, following exec_policy), T_q the stored
// charges, T_pot the potentials (the running sums and the stored result).
// The caller may define COUL_ATOM_LOOP and COUL_POINT_LOOP, a pragma before the loop over
// atoms and over the caller's grid points (GPU: unroll; CPU: simd); both default to none.
#ifndef TSB_COULOMBIC_H
#define TSB_COULOMBIC_H
#include "precision.h"

#ifndef COUL_ATOM_LOOP
#define COUL_ATOM_LOOP
#endif
#ifndef COUL_POINT_LOOP
#define COUL_POINT_LOOP
#endif

// Coordinate of grid line i (cell centres, spacing 1/nx): (i + 1/2) / nx.
TSB_FN T_pos coulombic_grid(long i, int nx) { return cast<T_pos>(((double)i + 0.5) / nx); }

// Potentials v[p] = sum_a q_a / sqrt((gx[p] - x_a)^2 + (gy - y_a)^2 + z_a^2) at P grid points
// of one row, atoms visited in order; atoms holds three rows of natoms (x, y, z).
template <int P>
TSB_FN void coulombic_potentials(const T_pos *atoms, const T_q *charge, int natoms, const T_pos *gx, T_pos gy,
                                 T_pot *v) {
    TSB_UNROLL
    for (int p = 0; p < P; p++) v[p] = cast<T_pot>(0.0);
    COUL_ATOM_LOOP
    for (int a = 0; a < natoms; a++) {
        const T_pos ax = atoms[a];
        const T_pos dy = gy - atoms[natoms + a];
        const T_pos az = atoms[2 * natoms + a];
        const T_pos dyz2 = dy * dy + az * az;
        const T_pot q = cast<T_pot>(charge[a]);
        COUL_POINT_LOOP
        for (int p = 0; p < P; p++) {
            const T_pos dx = gx[p] - ax;
            const T_pos rinv = prsqrt(dx * dx + dyz2);
            v[p] = v[p] + q * cast<T_pot>(rinv);
        }
    }
}

#endif
