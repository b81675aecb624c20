// K-Means distance step: the per-(point, center) arithmetic, shared by kernel.cu (nvcc,
// __host__ __device__) and kernel.cpp (g++). Types: T_points the features, T_centers the
// cluster centers, T_dist the squared distance, in which the differences, squares and the
// running sum are computed and the result is stored.
#ifndef TSB_KMEANS_H
#define TSB_KMEANS_H
#include "precision.h"

#define NFEAT 15
#define NCLUST 40

// sum_{j < NFEAT} (p[j * pstride] - center[j])^2: the point's features already in T_dist
// (p, read with stride pstride: registers on the GPU, a block's column on the CPU), the
// center in TC (T_centers from global or shared memory, or already in T_dist).
template <typename TC>
TSB_FN T_dist kmeans_sqdist(const T_dist *p, int pstride, const TC *center) {
    T_dist s = cast<T_dist>(0.0);
    TSB_UNROLL
    for (int j = 0; j < NFEAT; j++) {
        const T_dist d = p[j * pstride] - cast<T_dist>(center[j]);
        s = s + d * d;
    }
    return s;
}

#endif
