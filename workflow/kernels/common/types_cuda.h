// CUDA side of the precision interface (included by precision.h under nvcc, never directly).
//
// half is cuda_fp16.h's __half, bfloat16 is cuda_bf16.h's __nv_bfloat16 (aliased here).
// Every conversion used below is __host__ __device__ in CUDA 12 and 13, so the kernels'
// shared arithmetic compiles for both sides. Mixed half/bf16/float expressions do not
// compile in CUDA, so the arithmetic converts explicitly with cast<To>(x).
#ifndef TSB_TYPES_CUDA_H
#define TSB_TYPES_CUDA_H

#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define TSB_FN __host__ __device__ __forceinline__
// TSB_UNROLL before a loop of constant trip count: unroll it fully.
#define TSB_UNROLL _Pragma("unroll")

typedef __nv_bfloat16 bfloat16;

TSB_FN float tsb_to_float(double x) { return (float)x; }
TSB_FN float tsb_to_float(float x) { return x; }
TSB_FN float tsb_to_float(half x) { return __half2float(x); }
TSB_FN float tsb_to_float(bfloat16 x) { return __bfloat162float(x); }

template <typename To> struct tsb_cast;
template <> struct tsb_cast<double> {
    TSB_FN static double from(double x) { return x; }
    TSB_FN static double from(float x) { return (double)x; }
    TSB_FN static double from(half x) { return (double)__half2float(x); }
    TSB_FN static double from(bfloat16 x) { return (double)__bfloat162float(x); }
    TSB_FN static double from(int x) { return (double)x; }
};
template <> struct tsb_cast<float> {
    template <typename From> TSB_FN static float from(From x) { return tsb_to_float(x); }
    TSB_FN static float from(int x) { return (float)x; }
};
template <> struct tsb_cast<half> {
    TSB_FN static half from(double x) { return __double2half(x); }
    TSB_FN static half from(float x) { return __float2half_rn(x); }
    TSB_FN static half from(half x) { return x; }
    TSB_FN static half from(bfloat16 x) { return __float2half_rn(__bfloat162float(x)); }
    TSB_FN static half from(int x) { return __int2half_rn(x); }
};
template <> struct tsb_cast<bfloat16> {
    TSB_FN static bfloat16 from(double x) { return __double2bfloat16(x); }
    TSB_FN static bfloat16 from(float x) { return __float2bfloat16_rn(x); }
    TSB_FN static bfloat16 from(half x) { return __float2bfloat16_rn(__half2float(x)); }
    TSB_FN static bfloat16 from(bfloat16 x) { return x; }
    TSB_FN static bfloat16 from(int x) { return __int2bfloat16_rn(x); }
};

// Conversion between any two of the four types (and from int): cast<To>(x).
template <typename To, typename From>
TSB_FN To cast(From x) { return tsb_cast<To>::from(x); }

#endif
