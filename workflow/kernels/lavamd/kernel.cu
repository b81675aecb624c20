// LavaMD, CUDA version: one thread block per home box (grid = nb^3 blocks).  Each
// thread keeps ipt home particles (i = i0 + threadIdx.x + k * block_size_x) in
// registers and walks the home box and its existing neighbours (non-periodic) in
// (dz, dy, dx) order, j in storage order, as kernel.cpp does.
//
// Types: T_pos positions, T_q charges, T_acc pair arithmetic and accumulators,
// T_out output.  Tunables: block_size_x, ipt (home particles per thread and pass),
// use_shared (1: neighbour particles staged through shared memory in tiles of
// block_size_x; 0: every thread reads them from global memory / L1), exec_policy
// (the exponential: accurate, __expf, or native 16-bit hexp).
#include "precision.cuh"

#ifndef block_size_x
#define block_size_x 128
#endif
#ifndef ipt
#define ipt 1
#endif
#ifndef use_shared
#define use_shared 1
#endif

template <typename T>
__device__ __forceinline__ void lavamd_interact(T xj, T yj, T zj, T qj, const T *xi, const T *yi,
                                                const T *zi, T *av, T *ax, T *ay, T *az) {
    const T a2 = cast<T>(0.5);
    const T two = cast<T>(2.0);
#pragma unroll
    for (int k = 0; k < ipt; k++) {
        const T ddx = xi[k] - xj, ddy = yi[k] - yj, ddz = zi[k] - zj;
        const T r2 = ddx * ddx + ddy * ddy + ddz * ddz;
        const T qv = qj * pexp(-(a2 * r2));
        const T qf = two * qv;
        av[k] = av[k] + qv;
        ax[k] = ax[k] + qf * ddx;
        ay[k] = ay[k] + qf * ddy;
        az[k] = az[k] + qf * ddz;
    }
}

extern "C" __global__ void __launch_bounds__(block_size_x)
lavamd(const T_pos *__restrict__ pos, const T_q *__restrict__ q, T_out *__restrict__ fv, int nb, int ppb) {
    const int b = blockIdx.x;
    const int bx = b % nb, by = (b / nb) % nb, bz = b / (nb * nb);
    const long home = (long)b * ppb;
#if use_shared
    __shared__ T_pos sx[block_size_x], sy[block_size_x], sz[block_size_x];
    __shared__ T_q sq[block_size_x];
#endif
    for (int i0 = 0; i0 < ppb; i0 += block_size_x * ipt) {  // uniform across the block
        T_acc xi[ipt], yi[ipt], zi[ipt], av[ipt], ax[ipt], ay[ipt], az[ipt];
#pragma unroll
        for (int k = 0; k < ipt; k++) {
            int ii = i0 + (int)threadIdx.x + k * block_size_x;
            if (ii >= ppb) ii = 0;  // idle lanes compute on particle 0 and store nothing
            xi[k] = cast<T_acc>(pos[3 * (home + ii)]);
            yi[k] = cast<T_acc>(pos[3 * (home + ii) + 1]);
            zi[k] = cast<T_acc>(pos[3 * (home + ii) + 2]);
            av[k] = cast<T_acc>(0);
            ax[k] = cast<T_acc>(0);
            ay[k] = cast<T_acc>(0);
            az[k] = cast<T_acc>(0);
        }
        for (int dz = -1; dz <= 1; dz++) {
            const int cz = bz + dz;
            if (cz < 0 || cz >= nb) continue;
            for (int dy = -1; dy <= 1; dy++) {
                const int cy = by + dy;
                if (cy < 0 || cy >= nb) continue;
                for (int dx = -1; dx <= 1; dx++) {
                    const int cx = bx + dx;
                    if (cx < 0 || cx >= nb) continue;
                    const long base = (long)((cz * nb + cy) * nb + cx) * ppb;
#if use_shared
                    for (int j0 = 0; j0 < ppb; j0 += block_size_x) {
                        __syncthreads();
                        const int jl = j0 + (int)threadIdx.x;
                        if (jl < ppb) {
                            sx[threadIdx.x] = pos[3 * (base + jl)];
                            sy[threadIdx.x] = pos[3 * (base + jl) + 1];
                            sz[threadIdx.x] = pos[3 * (base + jl) + 2];
                            sq[threadIdx.x] = q[base + jl];
                        }
                        __syncthreads();
                        const int jn = min(block_size_x, ppb - j0);
                        for (int j = 0; j < jn; j++) {
                            lavamd_interact<T_acc>(cast<T_acc>(sx[j]), cast<T_acc>(sy[j]), cast<T_acc>(sz[j]),
                                                   cast<T_acc>(sq[j]), xi, yi, zi, av, ax, ay, az);
                        }
                    }
#else
                    for (int j = 0; j < ppb; j++) {
                        const long p = base + j;
                        lavamd_interact<T_acc>(cast<T_acc>(pos[3 * p]), cast<T_acc>(pos[3 * p + 1]),
                                               cast<T_acc>(pos[3 * p + 2]), cast<T_acc>(q[p]), xi, yi, zi,
                                               av, ax, ay, az);
                    }
#endif
                }
            }
        }
#pragma unroll
        for (int k = 0; k < ipt; k++) {
            const int ii = i0 + (int)threadIdx.x + k * block_size_x;
            if (ii < ppb) {
                const long p = home + ii;
                fv[4 * p] = cast<T_out>(av[k]);
                fv[4 * p + 1] = cast<T_out>(ax[k]);
                fv[4 * p + 2] = cast<T_out>(ay[k]);
                fv[4 * p + 3] = cast<T_out>(az[k]);
            }
        }
    }
}
