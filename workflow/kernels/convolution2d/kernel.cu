// Convolution2D, CUDA: out[y][x] = sum_{i,j < FW} image[y + i][x + j] * filter[i][j]
// (correlation form, "valid" over an image padded by FW - 1 = 16 pixels per dimension).
//
// Each thread block computes a (block_size_y * tile_size_y) x (block_size_x * tile_size_x)
// tile of the output; each thread computes tile_size_y x tile_size_x outputs spaced
// block_size apart (coalesced). With use_shmem the input tile plus its halo and the
// filter are staged in shared memory (input in T_in, filter in T_filter; use_padding adds
// one column against bank conflicts); without it, every tap is read from global memory
// (threads whose tile crosses the image edge compute output by output at clamped
// positions, which they do not store). min_blocks_per_sm is the second argument of
// __launch_bounds__. The arithmetic is convolution2d.h's.
#include "convolution2d.h"

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

    T_acc acc[tile_size_y][tile_size_x];
    conv_clear(acc);

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
    conv_accumulate<tile_size_y, tile_size_x, block_size_y, block_size_x>(acc, &sh_image[ty][tx], SH_W, sh_filter);
#else
    const int last_y = y0 + ty + (tile_size_y - 1) * block_size_y;
    const int last_x = x0 + tx + (tile_size_x - 1) * block_size_x;
    if (last_y < h && last_x < w) {
        conv_accumulate<tile_size_y, tile_size_x, block_size_y, block_size_x>(
            acc, image + (size_t)(y0 + ty) * in_w + x0 + tx, in_w, filter);
    } else {
#pragma unroll
        for (int yi = 0; yi < tile_size_y; yi++) {
#pragma unroll
            for (int xi = 0; xi < tile_size_x; xi++) {
                const int gy = min(y0 + ty + yi * block_size_y, h - 1);
                const int gx = min(x0 + tx + xi * block_size_x, w - 1);
                T_acc (&one)[1][1] = *reinterpret_cast<T_acc (*)[1][1]>(&acc[yi][xi]);
                conv_accumulate<1, 1, 1, 1>(one, image + (size_t)gy * in_w + gx, in_w, filter);
            }
        }
    }
#endif

#pragma unroll
    for (int yi = 0; yi < tile_size_y; yi++) {
#pragma unroll
        for (int xi = 0; xi < tile_size_x; xi++) {
            const int y = y0 + ty + yi * block_size_y;
            const int x = x0 + tx + xi * block_size_x;
            if (y < h && x < w) {
                output[(size_t)y * w + x] = conv_result(acc[yi][xi]);
            }
        }
    }
}
