// MRI-Q (Q matrix of an inverse non-uniform DFT), CUDA. Modelled on Parboil's mri-q
// ComputeQ (NCSA licence); written from scratch for the suite.
// Tunables: block_size_x threads per block; voxels_per_thread voxels per thread,
// block_size_x apart (coalesced); use_shared 1 stages block_size_x k-samples at a time in
// shared memory (converted to T_c), 0 reads them from global memory (read-only,
// __restrict__). The k loop is unrolled by 2 (fixed, as in Parboil). The
// arithmetic is mriq.h's.
#include "mriq.h"

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef voxels_per_thread
#define voxels_per_thread 1
#endif
#ifndef use_shared
#define use_shared 0
#endif

extern "C" __global__ void __launch_bounds__(block_size_x)
mriq(const T_k *__restrict__ kx, const T_k *__restrict__ ky, const T_k *__restrict__ kz,
     const T_k *__restrict__ phiMag, const T_x *__restrict__ x, const T_x *__restrict__ y,
     const T_x *__restrict__ z, T_q *__restrict__ Qr, T_q *__restrict__ Qi, int numK, int numX) {
    const int base = blockIdx.x * (block_size_x * voxels_per_thread) + threadIdx.x;
    T_c px[voxels_per_thread], py[voxels_per_thread], pz[voxels_per_thread];
    T_c qr[voxels_per_thread], qi[voxels_per_thread];
#pragma unroll
    for (int v = 0; v < voxels_per_thread; v++) {
        const int i = base + v * block_size_x;
        mriq_voxel(x, y, z, i < numX ? i : numX - 1, v, px, py, pz, qr, qi);
    }

#if use_shared
    __shared__ T_c s_kx[block_size_x], s_ky[block_size_x], s_kz[block_size_x], s_mag[block_size_x];
    for (int k0 = 0; k0 < numK; k0 += block_size_x) {
        const int k = k0 + threadIdx.x;
        if (k < numK) {
            s_kx[threadIdx.x] = cast<T_c>(kx[k]);
            s_ky[threadIdx.x] = cast<T_c>(ky[k]);
            s_kz[threadIdx.x] = cast<T_c>(kz[k]);
            s_mag[threadIdx.x] = cast<T_c>(phiMag[k]);
        }
        __syncthreads();
        const int tile = numK - k0 < block_size_x ? numK - k0 : block_size_x;
#pragma unroll 2
        for (int j = 0; j < tile; j++) {
            mriq_sample<voxels_per_thread>(s_kx, s_ky, s_kz, s_mag, j, px, py, pz, qr, qi);
        }
        __syncthreads();
    }
#else
#pragma unroll 2
    for (int k = 0; k < numK; k++) {
        mriq_sample<voxels_per_thread>(kx, ky, kz, phiMag, k, px, py, pz, qr, qi);
    }
#endif

#pragma unroll
    for (int v = 0; v < voxels_per_thread; v++) {
        const int i = base + v * block_size_x;
        if (i < numX) mriq_store(qr, qi, v, Qr, Qi, i);
    }
}
