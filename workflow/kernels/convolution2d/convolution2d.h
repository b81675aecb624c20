// Convolution2D, the arithmetic of a register tile of outputs: shared by kernel.cu (nvcc,
// __host__ __device__) and kernel.cpp (g++). Types: T_in image, T_filter weights, T_acc
// products and sums, T_out output image. Every weight and pixel is converted to T_acc and
// every product and sum is rounded to T_acc; taps are summed in (i, j) order.
#ifndef TSB_CONVOLUTION2D_H
#define TSB_CONVOLUTION2D_H
#include "precision.h"

#define FW 17
#define HALO (FW - 1)

// acc[yi][xi] = 0 for a TY x TX tile.
template <int TY, int TX>
TSB_FN void conv_clear(T_acc (&acc)[TY][TX]) {
    TSB_UNROLL
    for (int yi = 0; yi < TY; yi++) {
        TSB_UNROLL
        for (int xi = 0; xi < TX; xi++) acc[yi][xi] = cast<T_acc>(0.0);
    }
}

// acc[yi][xi] += sum_{i,j < FW} src[(yi*SY + i) * stride + xi*SX + j] * filter[i*FW + j]:
// a TY x TX tile of outputs SY rows and SX columns apart, read from `src` (global or shared
// memory, row stride `stride`) with the weights read from `filter` (global or shared, in
// T_filter, or already converted by conv_weight to T_acc). Each weight is converted once
// per tap and reused for the whole tile.
template <int TY, int TX, int SY, int SX, class W>
TSB_FN void conv_accumulate(T_acc (&acc)[TY][TX], const T_in *src, int stride, const W *filter) {
    for (int i = 0; i < FW; i++) {
        for (int j = 0; j < FW; j++) {
            const T_acc wv = cast<T_acc>(filter[i * FW + j]);
            TSB_UNROLL
            for (int yi = 0; yi < TY; yi++) {
                const T_in *row = src + (yi * SY + i) * stride + j;
                for (int xi = 0; xi < TX; xi++) acc[yi][xi] = acc[yi][xi] + cast<T_acc>(row[xi * SX]) * wv;
            }
        }
    }
}

// One weight in the accumulator's type.
TSB_FN T_acc conv_weight(T_filter f) { return cast<T_acc>(f); }

// The stored output of one accumulator.
TSB_FN T_out conv_result(T_acc a) { return cast<T_out>(a); }

#endif
