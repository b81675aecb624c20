// K-Means distance step, host CPU (Kernel Tuner's C backend): dist[c][i] =
// sum_{j < NFEAT} (features[j][i] - centers[c][j])^2; the arithmetic is kmeans.h's.
//
// Layouts as in kernel.cu: features feature-major (features[j * n + i]), output
// center-major (dist[c * n + i]). OpenMP over blocks of block_points consecutive points
// (num_threads(threads)); a block's features are converted to T_dist once, then for each
// center the SIMD loop runs over the block's points (vectorisable for float/double).
// The centers are converted to T_dist once, which gives the same values as kernel.cu's
// conversion at each use.
#include "kmeans.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef block_points
#define block_points 1
#endif

extern "C" void kmeans_distance(const T_points *features, const T_centers *centers, T_dist *dist, int n)
{
    T_dist cen[NCLUST * NFEAT];
    for (int k = 0; k < NCLUST * NFEAT; k++) cen[k] = cast<T_dist>(centers[k]);

    const int blocks = (n + block_points - 1) / block_points;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int b = 0; b < blocks; b++) {
        const int i0 = b * block_points;
        const int m = n - i0 < block_points ? n - i0 : block_points;
        T_dist p[NFEAT * block_points];
        for (int j = 0; j < NFEAT; j++)
            for (int q = 0; q < m; q++) p[j * block_points + q] = cast<T_dist>(features[(size_t)j * n + i0 + q]);

        for (int c = 0; c < NCLUST; c++) {
            T_dist *row = dist + (size_t)c * n + i0;
#pragma omp simd
            for (int q = 0; q < m; q++) row[q] = kmeans_sqdist(p + q, block_points, cen + c * NFEAT);
        }
    }
}
