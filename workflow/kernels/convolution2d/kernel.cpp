// Convolution2D, host CPU (Kernel Tuner's C backend): out[y][x] = sum_{i,j < FW}
// image[y + i][x + j] * filter[i][j] (correlation form, "valid" over an image padded by
// FW - 1 = 16 pixels per dimension). OpenMP over rows of output tiles
// (num_threads(threads)); each task computes a tile_y x tile_x block of outputs with its
// accumulators in registers, so one filter tap is reused tile_y * tile_x times and the
// tile_x loop is contiguous (vectorisable for float/double). tile_x (1, 4, 8, 16) sets the
// SIMD width of the inner loop and how many neighbouring windows share a tap; tile_y (1, 2,
// 4) how many rows do (a 1-wide tall tile reuses taps without vectorising); a large tile
// needs more accumulators than x86-64's 16 vector registers hold and spills. Tiles cut by
// the right and bottom edges fall back to one output at a time. Every output sums its taps
// in the same (i, j) order in every tile shape, so results are bit-identical across them.
// The arithmetic is convolution2d.h's.
#include "convolution2d.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef tile_x
#define tile_x 1
#endif
#ifndef tile_y
#define tile_y 1
#endif

extern "C" void convolution2d(const T_in *image, const T_filter *filter, T_out *output, int w, int h) {
    constexpr int TX = tile_x, TY = tile_y, n_threads = threads;
    const int stride = w + HALO;
    T_acc wf[FW * FW];  // the weights converted once, not once per tile
    for (int k = 0; k < FW * FW; k++) wf[k] = conv_weight(filter[k]);
    const int rows = (h + TY - 1) / TY;
#pragma omp parallel for num_threads(n_threads) schedule(static)
    for (int r = 0; r < rows; r++) {
        const int y0 = r * TY;
        const int ny = h - y0 < TY ? h - y0 : TY;
        for (int x0 = 0; x0 < w; x0 += TX) {
            const int nx = w - x0 < TX ? w - x0 : TX;
            if (ny == TY && nx == TX) {
                T_acc tile[TY][TX];
                conv_clear(tile);
                conv_accumulate<TY, TX, 1, 1>(tile, image + (size_t)y0 * stride + x0, stride, wf);
                for (int yi = 0; yi < TY; yi++)
                    for (int xi = 0; xi < TX; xi++) output[(size_t)(y0 + yi) * w + x0 + xi] = conv_result(tile[yi][xi]);
            } else {
                for (int yi = 0; yi < ny; yi++) {
                    for (int xi = 0; xi < nx; xi++) {
                        T_acc one[1][1];
                        conv_clear(one);
                        conv_accumulate<1, 1, 1, 1>(one, image + (size_t)(y0 + yi) * stride + x0 + xi, stride, wf);
                        output[(size_t)(y0 + yi) * w + x0 + xi] = conv_result(one[0][0]);
                    }
                }
            }
        }
    }
}
