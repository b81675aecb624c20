// MRI-Q (Q matrix of an inverse non-uniform DFT), CUDA version.  Modelled on Parboil's
// mri-q ComputeQ (NCSA licence); written from scratch for the suite.
//
//   Qr[x] = sum_k phiMag[k] * cos(2 pi t),  Qi[x] = sum_k phiMag[k] * sin(2 pi t),
//   t = kx[k]*x + ky[k]*y + kz[k]*z  (turns)
//
// Types: T_k k-space samples and phiMag, T_x voxel positions, T_c phase / cos / sin /
// accumulators, T_q output.  The phase is reduced to [-1/2, 1/2] turns (t - rint(t))
// before the multiplication by 2 pi, so pcos/psin (policy exec_policy) only see
// arguments in [-pi, pi].
// Tunables: block_size_x threads per block; voxels_per_thread voxels per thread,
// block_size_x apart (coalesced); k_unroll unroll factor of the k loop; use_shared 1
// stages block_size_x k-samples at a time in shared memory (converted to T_c), 0 reads
// them from global memory through the read-only path.
#include "precision.cuh"

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef voxels_per_thread
#define voxels_per_thread 1
#endif
#ifndef k_unroll
#define k_unroll 1
#endif
#ifndef use_shared
#define use_shared 0
#endif
#ifndef T_k
#define T_k float
#endif
#ifndef T_x
#define T_x float
#endif
#ifndef T_c
#define T_c float
#endif
#ifndef T_q
#define T_q float
#endif

// `#pragma unroll` does not expand macros: hand the factor over as a constant
static constexpr int mriq_k_unroll = k_unroll;

// rint in each type (not in precision.cuh)
__device__ __forceinline__ double mriq_rint(double v) { return rint(v); }
__device__ __forceinline__ float mriq_rint(float v) { return rintf(v); }
__device__ __forceinline__ half mriq_rint(half v) { return hrint(v); }
__device__ __forceinline__ bfloat16 mriq_rint(bfloat16 v) { return hrint(v); }

// one k-sample applied to the voxels of this thread
__device__ __forceinline__ void mriq_accumulate(T_c ckx, T_c cky, T_c ckz, T_c mag,
                                                const T_c *px, const T_c *py, const T_c *pz,
                                                T_c *qr, T_c *qi) {
    const T_c two_pi = cast<T_c>(6.283185307179586);
#pragma unroll
    for (int v = 0; v < voxels_per_thread; v++) {
        T_c t = ckx * px[v];
        t = t + cky * py[v];
        t = t + ckz * pz[v];
        t = t - mriq_rint(t);
        const T_c arg = two_pi * t;
        qr[v] = qr[v] + mag * pcos(arg);
        qi[v] = qi[v] + mag * psin(arg);
    }
}

extern "C" __global__ void __launch_bounds__(block_size_x)
mriq(const T_k *__restrict__ kx, const T_k *__restrict__ ky, const T_k *__restrict__ kz,
     const T_k *__restrict__ phiMag, const T_x *__restrict__ x, const T_x *__restrict__ y,
     const T_x *__restrict__ z, T_q *__restrict__ Qr, T_q *__restrict__ Qi, int numK, int numX) {
    const int base = blockIdx.x * (block_size_x * voxels_per_thread) + threadIdx.x;
    T_c px[voxels_per_thread], py[voxels_per_thread], pz[voxels_per_thread];
    T_c qr[voxels_per_thread], qi[voxels_per_thread];
#pragma unroll
    for (int v = 0; v < voxels_per_thread; v++) {
        int i = base + v * block_size_x;
        i = i < numX ? i : numX - 1;
        px[v] = cast<T_c>(x[i]);
        py[v] = cast<T_c>(y[i]);
        pz[v] = cast<T_c>(z[i]);
        qr[v] = cast<T_c>(0);
        qi[v] = cast<T_c>(0);
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
        if (tile == block_size_x) {
#pragma unroll mriq_k_unroll
            for (int j = 0; j < block_size_x; j++) {
                mriq_accumulate(s_kx[j], s_ky[j], s_kz[j], s_mag[j], px, py, pz, qr, qi);
            }
        } else {
            for (int j = 0; j < tile; j++) {
                mriq_accumulate(s_kx[j], s_ky[j], s_kz[j], s_mag[j], px, py, pz, qr, qi);
            }
        }
        __syncthreads();
    }
#else
#pragma unroll mriq_k_unroll
    for (int k = 0; k < numK; k++) {
        mriq_accumulate(cast<T_c>(__ldg(kx + k)), cast<T_c>(__ldg(ky + k)), cast<T_c>(__ldg(kz + k)),
                        cast<T_c>(__ldg(phiMag + k)), px, py, pz, qr, qi);
    }
#endif

#pragma unroll
    for (int v = 0; v < voxels_per_thread; v++) {
        const int i = base + v * block_size_x;
        if (i < numX) {
            Qr[i] = cast<T_q>(qr[v]);
            Qi[i] = cast<T_q>(qi[v]);
        }
    }
}
