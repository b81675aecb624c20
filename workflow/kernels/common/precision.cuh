// Precision types and math for the CUDA versions of the nine kernels.
//
// Type names match the precision parameters' values, which Kernel Tuner inserts as
// `#define T_x <name>` lines: double, float, half (cuda_fp16.h's __half) and
// bfloat16 (cuda_bf16.h's __nv_bfloat16, aliased here).
//
// cast<To>(x) converts between any two of the four types (mixed half/bf16/float
// expressions do not compile in CUDA, so kernels convert explicitly).
//
// Math helpers pexp, plog, psqrt, prsqrt, psin, pcos, pacos, pasin, pabs follow the
// execution policy in the tunable parameter `exec_policy` (default 0):
//   0 accurate: the libm function in the argument's type (half/bf16 evaluated in
//     float and rounded);
//   1 fast: float and narrower use the hardware intrinsics (__expf, __logf, __sinf,
//     __cosf, rsqrtf); double stays accurate;
//   2 approx: half and bfloat16 use their native 16-bit functions (hexp, hlog, hsin,
//     hcos, hsqrt, hrsqrt), float as in fast; double stays accurate.
// Functions without a native or intrinsic form (acos, asin) are accurate in every
// policy.
#ifndef TSB_PRECISION_CUH
#define TSB_PRECISION_CUH

#include <cuda_fp16.h>
#include <cuda_bf16.h>

typedef __nv_bfloat16 bfloat16;

#ifndef exec_policy
#define exec_policy 0
#endif

__device__ __forceinline__ float tsb_to_float(double x) { return (float)x; }
__device__ __forceinline__ float tsb_to_float(float x) { return x; }
__device__ __forceinline__ float tsb_to_float(half x) { return __half2float(x); }
__device__ __forceinline__ float tsb_to_float(bfloat16 x) { return __bfloat162float(x); }

template <typename To> struct tsb_cast;
template <> struct tsb_cast<double> {
    __device__ static double from(double x) { return x; }
    __device__ static double from(float x) { return (double)x; }
    __device__ static double from(half x) { return (double)__half2float(x); }
    __device__ static double from(bfloat16 x) { return (double)__bfloat162float(x); }
    __device__ static double from(int x) { return (double)x; }
};
template <> struct tsb_cast<float> {
    template <typename From> __device__ static float from(From x) { return tsb_to_float(x); }
    __device__ static float from(int x) { return (float)x; }
};
template <> struct tsb_cast<half> {
    __device__ static half from(double x) { return __double2half(x); }
    __device__ static half from(float x) { return __float2half_rn(x); }
    __device__ static half from(half x) { return x; }
    __device__ static half from(bfloat16 x) { return __float2half_rn(__bfloat162float(x)); }
    __device__ static half from(int x) { return __int2half_rn(x); }
};
template <> struct tsb_cast<bfloat16> {
    __device__ static bfloat16 from(double x) { return __double2bfloat16(x); }
    __device__ static bfloat16 from(float x) { return __float2bfloat16_rn(x); }
    __device__ static bfloat16 from(half x) { return __float2bfloat16_rn(__half2float(x)); }
    __device__ static bfloat16 from(bfloat16 x) { return x; }
    __device__ static bfloat16 from(int x) { return __int2bfloat16_rn(x); }
};

template <typename To, typename From>
__device__ __forceinline__ To cast(From x) { return tsb_cast<To>::from(x); }

#define TSB_MATH(NAME, DFN, FFN, FAST, H, B)                                       \
    __device__ __forceinline__ double NAME(double x) { return DFN(x); }            \
    __device__ __forceinline__ float NAME(float x) {                               \
        return exec_policy >= 1 ? FAST(x) : FFN(x);                                \
    }                                                                              \
    __device__ __forceinline__ half NAME(half x) {                                 \
        if (exec_policy == 2) return H(x);                                         \
        float f = __half2float(x);                                                 \
        return __float2half_rn(exec_policy == 1 ? FAST(f) : FFN(f));               \
    }                                                                              \
    __device__ __forceinline__ bfloat16 NAME(bfloat16 x) {                         \
        if (exec_policy == 2) return B(x);                                         \
        float f = __bfloat162float(x);                                             \
        return __float2bfloat16_rn(exec_policy == 1 ? FAST(f) : FFN(f));           \
    }

TSB_MATH(pexp, exp, expf, __expf, hexp, hexp)
TSB_MATH(plog, log, logf, __logf, hlog, hlog)
TSB_MATH(psin, sin, sinf, __sinf, hsin, hsin)
TSB_MATH(pcos, cos, cosf, __cosf, hcos, hcos)
TSB_MATH(psqrt, sqrt, sqrtf, __fsqrt_rn, hsqrt, hsqrt)
TSB_MATH(prsqrt, rsqrt, rsqrtf, rsqrtf, hrsqrt, hrsqrt)
#undef TSB_MATH

#define TSB_ACCURATE(NAME, DFN, FFN)                                               \
    __device__ __forceinline__ double NAME(double x) { return DFN(x); }            \
    __device__ __forceinline__ float NAME(float x) { return FFN(x); }              \
    __device__ __forceinline__ half NAME(half x) { return __float2half_rn(FFN(__half2float(x))); } \
    __device__ __forceinline__ bfloat16 NAME(bfloat16 x) {                         \
        return __float2bfloat16_rn(FFN(__bfloat162float(x)));                      \
    }

TSB_ACCURATE(pacos, acos, acosf)
TSB_ACCURATE(pasin, asin, asinf)
TSB_ACCURATE(pabs, fabs, fabsf)
#undef TSB_ACCURATE

#endif
