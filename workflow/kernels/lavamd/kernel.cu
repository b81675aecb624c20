// LavaMD, CUDA: one thread block per home box (grid = nb^3 blocks). Each thread keeps ipt
// home particles (i = i0 + threadIdx.x + k * block_size_x) in registers and walks the home
// box and its existing neighbours (non-periodic); with use_shared the neighbour particles
// are staged through shared memory in tiles of block_size_x, otherwise every thread reads
// them from global memory / L1. The arithmetic is lavamd.h's.
#include "lavamd.h"

#ifndef block_size_x
#define block_size_x 128
#endif
#ifndef use_shared
#define use_shared 1
#endif

extern "C" __global__ void __launch_bounds__(block_size_x)
lavamd(const T_pos *__restrict__ pos, const T_q *__restrict__ q, T_out *__restrict__ fv, int nb, int ppb) {
    const int b = blockIdx.x;
    const long home = (long)b * ppb;
#if use_shared
    __shared__ T_pos sx[block_size_x], sy[block_size_x], sz[block_size_x];
    __shared__ T_q sq[block_size_x];
#endif
    for (int i0 = 0; i0 < ppb; i0 += block_size_x * ipt) {  // uniform across the block
        T_acc xi[ipt], yi[ipt], zi[ipt], av[ipt], ax[ipt], ay[ipt], az[ipt];
#pragma unroll
        for (int k = 0; k < ipt; k++) {
            const int ii = i0 + (int)threadIdx.x + k * block_size_x;
            // idle lanes compute on particle 0 and store nothing
            lavamd_load_home(pos, home + (ii < ppb ? ii : 0), k, xi, yi, zi, av, ax, ay, az);
        }
        for (int m = 0; m < 27; m++) {
            const int c = lavamd_neighbour(b, nb, m);
            if (c < 0) continue;  // uniform across the block
            const long base = (long)c * ppb;
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
                lavamd_accumulate(sx, sy, sz, 1, sq, min(block_size_x, ppb - j0), xi, yi, zi, av, ax, ay, az);
            }
#else
            const T_pos *pc = pos + 3 * base;
            lavamd_accumulate(pc, pc + 1, pc + 2, 3, q + base, ppb, xi, yi, zi, av, ax, ay, az);
#endif
        }
#pragma unroll
        for (int k = 0; k < ipt; k++) {
            const int ii = i0 + (int)threadIdx.x + k * block_size_x;
            if (ii < ppb) lavamd_store(fv, home + ii, k, av, ax, ay, az);
        }
    }
}
