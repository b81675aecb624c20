// MRI-Q (Q matrix of an inverse non-uniform DFT), host CPU (Kernel Tuner's C backend).
// Modelled on Parboil's mri-q ComputeQ (NCSA licence); written from scratch. `threads`
// OpenMP threads over groups of voxels_per_iter voxels kept in registers, so every
// k-space sample is loaded and converted once for them. The arithmetic is mriq.h's.
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef voxels_per_iter
#define voxels_per_iter 1
#endif
#define MRIQ_VOXELS voxels_per_iter
#include "mriq.h"

extern "C" void mriq(const T_k *kx, const T_k *ky, const T_k *kz, const T_k *phiMag,
                     const T_x *x, const T_x *y, const T_x *z, T_q *Qr, T_q *Qi,
                     int numK, int numX) {
    const int groups = (numX + voxels_per_iter - 1) / voxels_per_iter;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int gi = 0; gi < groups; gi++) {
        const int base = gi * voxels_per_iter;
        T_c px[voxels_per_iter], py[voxels_per_iter], pz[voxels_per_iter];
        T_c qr[voxels_per_iter], qi[voxels_per_iter];
        for (int v = 0; v < voxels_per_iter; v++)  // padded lanes repeat the last voxel
            mriq_load_voxel(x, y, z, base + v < numX ? base + v : numX - 1, v, px, py, pz, qr, qi);
        mriq_accumulate(kx, ky, kz, phiMag, numK,  // every k-space sample, in order
                        px, py, pz, qr, qi);
        for (int v = 0; v < voxels_per_iter && base + v < numX; v++) mriq_store(Qr, Qi, base + v, v, qr, qi);
    }
}
