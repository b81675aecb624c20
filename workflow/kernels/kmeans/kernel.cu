// K-Means distance step, CUDA: dist[c][i] = sum_{j < NFEAT} (features[j][i] - centers[c][j])^2
// for every point i and cluster center c (squared Euclidean distance, as Rodinia's
// kmeansPoint uses for the membership argmin); the arithmetic is kmeans.h's.
//
// Layouts: features feature-major (features[j * n + i]) and the output center-major
// (dist[c * n + i]), so consecutive threads read and write consecutive addresses.
// Each thread handles points_per_thread points spaced block_size_x apart; it converts
// its points' features to T_dist once, into registers, then loops over the centers.
// centers_in_shmem stages the NCLUST x NFEAT centers in shared memory (in T_centers);
// otherwise they are read from global memory (the same address across a warp).
#include "kmeans.h"

#ifndef points_per_thread
#define points_per_thread 1
#endif
#ifndef centers_in_shmem
#define centers_in_shmem 0
#endif

extern "C" __global__ void __launch_bounds__(block_size_x)
kmeans_distance(const T_points *__restrict__ features, const T_centers *__restrict__ centers,
                T_dist *__restrict__ dist, int n)
{
#if centers_in_shmem
    __shared__ T_centers sh_centers[NCLUST * NFEAT];
    for (int k = threadIdx.x; k < NCLUST * NFEAT; k += block_size_x) sh_centers[k] = centers[k];
    __syncthreads();
    const T_centers *cen = sh_centers;
#else
    const T_centers *cen = centers;
#endif

    const int first = blockIdx.x * (block_size_x * points_per_thread) + threadIdx.x;
    T_dist p[points_per_thread][NFEAT];
#pragma unroll
    for (int q = 0; q < points_per_thread; q++) {
        const int i = first + q * block_size_x;
#pragma unroll
        for (int j = 0; j < NFEAT; j++) {
            p[q][j] = i < n ? cast<T_dist>(features[(size_t)j * n + i]) : cast<T_dist>(0);
        }
    }

    for (int c = 0; c < NCLUST; ++c) {
#pragma unroll
        for (int q = 0; q < points_per_thread; q++) {
            const int i = first + q * block_size_x;
            const T_dist s = kmeans_sqdist(p[q], 1, cen + c * NFEAT);
            if (i < n) dist[(size_t)c * n + i] = s;
        }
    }
}
