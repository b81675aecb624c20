// Convolution2D, host-CPU port: out[y][x] = sum_{i,j < FW} image[y + i][x + j] * filter[i][j]
// (correlation form, "valid" over an image padded by FW - 1 = 16 pixels per dimension).
//
// OpenMP over rows of output tiles (num_threads(threads)); each task computes a
// tile_y x tile_x block of outputs with its accumulators in registers, so one filter
// tap is reused tile_y * tile_x times and the tile_x loop is contiguous (vectorisable
// for float/double).  Same math as kernel.cu: the weights are converted to T_acc, each
// pixel is converted to T_acc, and every product and sum is rounded to T_acc.
#include "precision.h"
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
#ifndef T_in
#define T_in float
#endif
#ifndef T_filter
#define T_filter float
#endif
#ifndef T_acc
#define T_acc float
#endif
#ifndef T_out
#define T_out float
#endif

#define FW 17
#define HALO (FW - 1)

// tile_y x tile_x outputs whose top-left output is (y0, x0); ny <= tile_y and nx <= tile_x
// are the rows and columns inside the image (smaller only at the right and bottom edges).
template <int TY, int TX>
static inline void conv_tile(const T_in *image, const T_acc *wf, T_out *output, int w, int y0, int x0,
                             int ny, int nx)
{
    const int in_w = w + HALO;
    T_acc acc[TY][TX];
    for (int yi = 0; yi < TY; yi++)
        for (int xi = 0; xi < TX; xi++) acc[yi][xi] = cast<T_acc>(0.0);

    if (ny == TY && nx == TX) {
        for (int i = 0; i < FW; i++) {
            for (int j = 0; j < FW; j++) {
                const T_acc wv = wf[i * FW + j];
                for (int yi = 0; yi < TY; yi++) {
                    const T_in *row = image + (size_t)(y0 + yi + i) * in_w + x0 + j;
                    for (int xi = 0; xi < TX; xi++) {
                        acc[yi][xi] = acc[yi][xi] + cast<T_acc>(row[xi]) * wv;
                    }
                }
            }
        }
    } else {
        for (int i = 0; i < FW; i++) {
            for (int j = 0; j < FW; j++) {
                const T_acc wv = wf[i * FW + j];
                for (int yi = 0; yi < ny; yi++) {
                    const T_in *row = image + (size_t)(y0 + yi + i) * in_w + x0 + j;
                    for (int xi = 0; xi < nx; xi++) {
                        acc[yi][xi] = acc[yi][xi] + cast<T_acc>(row[xi]) * wv;
                    }
                }
            }
        }
    }
    for (int yi = 0; yi < ny; yi++)
        for (int xi = 0; xi < nx; xi++) output[(size_t)(y0 + yi) * w + x0 + xi] = cast<T_out>(acc[yi][xi]);
}

extern "C" void convolution2d(const T_in *image, const T_filter *filter, T_out *output, int w, int h)
{
    T_acc wf[FW * FW];
    for (int k = 0; k < FW * FW; k++) wf[k] = cast<T_acc>(filter[k]);

    const int rows = (h + tile_y - 1) / tile_y;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int r = 0; r < rows; r++) {
        const int y0 = r * tile_y;
        const int ny = h - y0 < tile_y ? h - y0 : tile_y;
        for (int x0 = 0; x0 < w; x0 += tile_x) {
            const int nx = w - x0 < tile_x ? w - x0 : tile_x;
            conv_tile<tile_y, tile_x>(image, wf, output, w, y0, x0, ny, nx);
        }
    }
}
