// Convolution2D: out[y][x] = sum_{i,j < FW} image[y + i][x + j] * filter[i][j]
// (correlation form, "valid" over an image padded by FW - 1 = 16 pixels per dimension).
//
// Each thread block computes a (block_size_y * tile_size_y) x (block_size_x * tile_size_x)
// tile of the output; each thread computes tile_size_y x tile_size_x outputs spaced
// block_size apart (coalesced).  With use_shmem the input tile plus its halo and the
// filter are staged in shared memory (input in T_in, filter in T_filter; use_padding adds
// one column against bank conflicts); without it, every tap is read from global memory.
// min_blocks_per_sm is the second argument of __launch_bounds__.
//
// Precision parameters: T_in (image), T_filter (weights), T_acc (products and sums),
// T_out (output image).  Every product and sum is done in T_acc.
#include "precision.cuh"

#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 4
#endif
#ifndef tile_size_x
#define tile_size_x 1
#endif
#ifndef tile_size_y
#define tile_size_y 1
#endif
#ifndef use_shmem
#define use_shmem 1
#endif
#ifndef use_padding
#define use_padding 0
#endif
#ifndef min_blocks_per_sm
#define min_blocks_per_sm 1
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
#define OUT_TILE_W (block_size_x * tile_size_x)
#define OUT_TILE_H (block_size_y * tile_size_y)
#define SH_W (OUT_TILE_W + HALO + use_padding)
#define SH_H (OUT_TILE_H + HALO)

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y, min_blocks_per_sm)
convolution2d(const T_in *__restrict__ image, const T_filter *__restrict__ filter,
              T_out *__restrict__ output, int w, int h)
{
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int x0 = blockIdx.x * OUT_TILE_W;
    const int y0 = blockIdx.y * OUT_TILE_H;
    const int in_w = w + HALO;
    const int in_h = h + HALO;

#if use_shmem
    __shared__ T_in sh_image[SH_H][SH_W];
    __shared__ T_filter sh_filter[FW * FW];
    const int tid = ty * block_size_x + tx;
    for (int k = tid; k < FW * FW; k += block_size_x * block_size_y) {
        sh_filter[k] = filter[k];
    }
    for (int r = ty; r < SH_H; r += block_size_y) {
        const int gy = y0 + r;
        for (int c = tx; c < OUT_TILE_W + HALO; c += block_size_x) {
            const int gx = x0 + c;
            sh_image[r][c] = (gy < in_h && gx < in_w) ? image[(size_t)gy * in_w + gx] : cast<T_in>(0);
        }
    }
    __syncthreads();
#endif

    T_acc acc[tile_size_y][tile_size_x];
#pragma unroll
    for (int yi = 0; yi < tile_size_y; yi++) {
#pragma unroll
        for (int xi = 0; xi < tile_size_x; xi++) {
            acc[yi][xi] = cast<T_acc>(0);
        }
    }

    for (int i = 0; i < FW; i++) {
#pragma unroll
        for (int j = 0; j < FW; j++) {
#if use_shmem
            const T_acc wv = cast<T_acc>(sh_filter[i * FW + j]);
#else
            const T_acc wv = cast<T_acc>(filter[i * FW + j]);
#endif
#pragma unroll
            for (int yi = 0; yi < tile_size_y; yi++) {
#pragma unroll
                for (int xi = 0; xi < tile_size_x; xi++) {
                    const int r = ty + yi * block_size_y + i;
                    const int c = tx + xi * block_size_x + j;
#if use_shmem
                    const T_in v = sh_image[r][c];
#else
                    const int gy = min(y0 + r, in_h - 1);
                    const int gx = min(x0 + c, in_w - 1);
                    const T_in v = image[(size_t)gy * in_w + gx];
#endif
                    acc[yi][xi] = acc[yi][xi] + cast<T_acc>(v) * wv;
                }
            }
        }
    }

#pragma unroll
    for (int yi = 0; yi < tile_size_y; yi++) {
#pragma unroll
        for (int xi = 0; xi < tile_size_x; xi++) {
            const int y = y0 + ty + yi * block_size_y;
            const int x = x0 + tx + xi * block_size_x;
            if (y < h && x < w) {
                output[(size_t)y * w + x] = cast<T_out>(acc[yi][xi]);
            }
        }
    }
}
