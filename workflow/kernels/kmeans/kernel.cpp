// K-Means distance step, host CPU (Kernel Tuner's C backend): dist[c][i] =
// sum_{j < NFEAT} (features[j][i] - centers[c][j])^2; the arithmetic is kmeans.h's.
//
// Layouts as in kernel.cu: features feature-major (features[j * n + i]), output
// center-major (dist[c * n + i]). OpenMP over blocks of block_points consecutive points
// (num_threads(threads)); a block's features are converted to T_dist once. The centers
// are converted to T_dist once, which gives the same values as kernel.cu's conversion at
// each use. Inside a block:
//   loop_order 0  centers outer, points inner: for each center the SIMD loop runs over
//                 the block's points (features staged feature-major, stride
//                 block_points), storing contiguous pieces of a dist row;
//   loop_order 1  points outer, centers inner: for each point the SIMD loop runs over the
//                 40 centers, read from a transposed copy (feature-major, stride NCLUST),
//                 the point's features staged point-major; stores go to 40 rows.
//   unroll_jam    J centers (order 0) or J points (order 1) per pass of the SIMD loop,
//                 so every loaded point (order 0) or center (order 1) value serves J
//                 distances from registers.
// Every distance is kmeans_sqdist's sum over j in the same order; order 1 passes the
// center as the strided operand and the point as the contiguous one, and since
// (a - b)^2 == (b - a)^2 exactly (negation is exact), every variant gives the same bits.
#include "kmeans.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef block_points
#define block_points 1
#endif
#ifndef loop_order
#define loop_order 0
#endif
#ifndef unroll_jam
#define unroll_jam 1
#endif

// Centers outer: J centers at a time, the SIMD loop over the block's m points.
template <int BP, int J>
static inline void kmeans_block_centers_outer(const T_dist *p, const T_dist *cen, T_dist *dist, int n, int i0,
                                              int m) {
    for (int c = 0; c < NCLUST; c += J) {
#pragma omp simd
        for (int q = 0; q < m; q++) {
#pragma GCC unroll 4
            for (int u = 0; u < J; u++)
                dist[(size_t)(c + u) * n + i0 + q] = kmeans_sqdist(p + q, BP, cen + (c + u) * NFEAT);
        }
    }
}

// Points outer: J points at a time (then the rest singly), the SIMD loop over the centers.
template <int J>
static inline void kmeans_block_points_outer(const T_dist *pp, const T_dist *cent, T_dist *dist, int n, int i0,
                                             int m) {
    int q = 0;
    for (; q + J <= m; q += J) {
#pragma omp simd
        for (int c = 0; c < NCLUST; c++) {
#pragma GCC unroll 4
            for (int u = 0; u < J; u++)
                dist[(size_t)c * n + i0 + q + u] = kmeans_sqdist(cent + c, NCLUST, pp + (q + u) * NFEAT);
        }
    }
    for (; q < m; q++) {
#pragma omp simd
        for (int c = 0; c < NCLUST; c++) dist[(size_t)c * n + i0 + q] = kmeans_sqdist(cent + c, NCLUST, pp + q * NFEAT);
    }
}

extern "C" void kmeans_distance(const T_points *features, const T_centers *centers, T_dist *dist, int n)
{
    constexpr int BP = block_points, J = unroll_jam;
    static_assert(NCLUST % J == 0, "unroll_jam must divide the number of centers");
    T_dist cen[NCLUST * NFEAT];  // center-major (loop_order 0) or feature-major (loop_order 1)
    for (int c = 0; c < NCLUST; c++)
        for (int j = 0; j < NFEAT; j++)
            cen[loop_order == 0 ? c * NFEAT + j : j * NCLUST + c] = cast<T_dist>(centers[c * NFEAT + j]);

    const int blocks = (n + BP - 1) / BP;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int b = 0; b < blocks; b++) {
        const int i0 = b * BP;
        const int m = n - i0 < BP ? n - i0 : BP;
        T_dist p[NFEAT * BP];
        if (loop_order == 0) {
            for (int j = 0; j < NFEAT; j++)
                for (int q = 0; q < m; q++) p[j * BP + q] = cast<T_dist>(features[(size_t)j * n + i0 + q]);
            kmeans_block_centers_outer<BP, J>(p, cen, dist, n, i0, m);
        } else {
            for (int j = 0; j < NFEAT; j++)
                for (int q = 0; q < m; q++) p[q * NFEAT + j] = cast<T_dist>(features[(size_t)j * n + i0 + q]);
            kmeans_block_points_outer<J>(p, cen, dist, n, i0, m);
        }
    }
}
