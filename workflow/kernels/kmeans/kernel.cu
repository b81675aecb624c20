// K-Means distance step: dist[c][i] = sum_{j < NFEAT} (features[j][i] - centers[c][j])^2 for
// every point i and every cluster center c (squared Euclidean distance, as Rodinia's
// kmeansPoint uses for the membership argmin).
//
// Layouts: features feature-major (features[j * n + i]) and the output center-major
// (dist[c * n + i]), so consecutive threads read and write consecutive addresses.
// Each thread handles points_per_thread points spaced block_size_x apart; it converts
// its points' features to T_acc once, into registers, then loops over the centers.
// centers_in_shmem stages the NCLUST x NFEAT centers in shared memory (in T_centers);
// otherwise they are read from global memory (the same address across a warp).
//
// Precision parameters: T_points (features), T_centers, T_acc (differences, squares and
// the sum), T_dist (output).
#include "precision.cuh"

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef points_per_thread
#define points_per_thread 1
#endif
#ifndef centers_in_shmem
#define centers_in_shmem 0
#endif
#ifndef T_points
#define T_points float
#endif
#ifndef T_centers
#define T_centers float
#endif
#ifndef T_acc
#define T_acc float
#endif
#ifndef T_dist
#define T_dist float
#endif

#define NFEAT 15
#define NCLUST 40

extern "C" __global__ void __launch_bounds__(block_size_x)
kmeans_distance(const T_points *__restrict__ features, const T_centers *__restrict__ centers,
                T_dist *__restrict__ dist, int n)
{
#if centers_in_shmem
    __shared__ T_centers sh_centers[NCLUST * NFEAT];
    for (int k = threadIdx.x; k < NCLUST * NFEAT; k += block_size_x) {
        sh_centers[k] = centers[k];
    }
    __syncthreads();
    const T_centers *cen = sh_centers;
#else
    const T_centers *cen = centers;
#endif

    const int first = blockIdx.x * (block_size_x * points_per_thread) + threadIdx.x;
    T_acc p[points_per_thread][NFEAT];
#pragma unroll
    for (int q = 0; q < points_per_thread; q++) {
        const int i = first + q * block_size_x;
#pragma unroll
        for (int j = 0; j < NFEAT; j++) {
            p[q][j] = i < n ? cast<T_acc>(features[(size_t)j * n + i]) : cast<T_acc>(0);
        }
    }

    for (int c = 0; c < NCLUST; c++) {
        T_acc s[points_per_thread];
#pragma unroll
        for (int q = 0; q < points_per_thread; q++) {
            s[q] = cast<T_acc>(0);
        }
#pragma unroll
        for (int j = 0; j < NFEAT; j++) {
            const T_acc cj = cast<T_acc>(cen[c * NFEAT + j]);
#pragma unroll
            for (int q = 0; q < points_per_thread; q++) {
                const T_acc d = p[q][j] - cj;
                s[q] = s[q] + d * d;
            }
        }
#pragma unroll
        for (int q = 0; q < points_per_thread; q++) {
            const int i = first + q * block_size_x;
            if (i < n) {
                dist[(size_t)c * n + i] = cast<T_dist>(s[q]);
            }
        }
    }
}
