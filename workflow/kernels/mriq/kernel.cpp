// MRI-Q (Q matrix of an inverse non-uniform DFT), host CPU (Kernel Tuner's C backend).
// Modelled on Parboil's mri-q ComputeQ (NCSA licence); written from scratch. `threads`
// OpenMP threads over groups of voxels_per_iter voxels kept in registers, so every
// k-space sample is loaded and converted once for the group. The arithmetic is mriq.h's.
#include "mriq.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef voxels_per_iter
#define voxels_per_iter 1
#endif

extern "C" void mriq(const T_k *kx, const T_k *ky, const T_k *kz, const T_k *phiMag,
                     const T_x *x, const T_x *y, const T_x *z, T_q *Qr, T_q *Qi,
                     int numK, int numX) {
    const int groups = (numX + voxels_per_iter - 1) / voxels_per_iter;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int gi = 0; gi < groups; gi++) {
        const int first = gi * voxels_per_iter;
        T_c gx[voxels_per_iter], gy[voxels_per_iter], gz[voxels_per_iter];
        T_c sr[voxels_per_iter], si[voxels_per_iter];
        for (int v = 0; v < voxels_per_iter; v++)
            mriq_voxel(x, y, z, first + v < numX ? first + v : numX - 1, v, gx, gy, gz, sr, si);
        for (int k = 0; k < numK; k++)
            mriq_sample<voxels_per_iter>(kx, ky, kz, phiMag, k, gx, gy, gz, sr, si);
        for (int v = 0; v < voxels_per_iter && first + v < numX; v++) mriq_store(sr, si, v, Qr, Qi, first + v);
    }
}
