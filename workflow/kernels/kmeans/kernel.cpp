// K-Means distance step, host-CPU port: dist[c][i] = sum_{j < NFEAT} (features[j][i] - centers[c][j])^2
// (squared Euclidean distance of every point to every cluster center).
//
// Layouts as in kernel.cu: features feature-major (features[j * n + i]), output
// center-major (dist[c * n + i]).  OpenMP over blocks of block_points consecutive points
// (num_threads(threads)); a block's features are converted to T_acc once, then for each
// center the inner loop runs over the block's points, contiguous and vectorisable for
// float/double.  Same math as kernel.cu: the centers are converted to T_acc, and every
// difference, square and sum is rounded to T_acc.
#include "precision.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef block_points
#define block_points 1
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

extern "C" void kmeans_distance(const T_points *features, const T_centers *centers, T_dist *dist, int n)
{
    T_acc cen[NCLUST * NFEAT];
    for (int k = 0; k < NCLUST * NFEAT; k++) cen[k] = cast<T_acc>(centers[k]);

    const int blocks = (n + block_points - 1) / block_points;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int b = 0; b < blocks; b++) {
        const int i0 = b * block_points;
        const int m = n - i0 < block_points ? n - i0 : block_points;
        T_acc p[NFEAT][block_points];
        for (int j = 0; j < NFEAT; j++)
            for (int q = 0; q < m; q++) p[j][q] = cast<T_acc>(features[(size_t)j * n + i0 + q]);

        for (int c = 0; c < NCLUST; c++) {
            T_acc s[block_points];
            for (int q = 0; q < block_points; q++) s[q] = cast<T_acc>(0.0);
            for (int j = 0; j < NFEAT; j++) {
                const T_acc cj = cen[c * NFEAT + j];
                for (int q = 0; q < m; q++) {
                    const T_acc d = p[j][q] - cj;
                    s[q] = s[q] + d * d;
                }
            }
            T_dist *row = dist + (size_t)c * n + i0;
            for (int q = 0; q < m; q++) row[q] = cast<T_dist>(s[q]);
        }
    }
}
