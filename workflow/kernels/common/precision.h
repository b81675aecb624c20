// Precision types and policy-aware math: the one interface of the nine kernels' shared
// arithmetic (each kernel's `<name>.h`), included by both kernel.cu and kernel.cpp.
//
// Type names match the values of the kernels' precision parameters, which Kernel Tuner
// inserts as `#define T_x <name>` lines: double, float, half, bfloat16. Per target:
//   nvcc  half = __half, bfloat16 = __nv_bfloat16 (types_cuda.h);
//   g++   half = _Float16, bfloat16 = 16-bit storage with float arithmetic (types_cpu.h).
// Both sides offer the same names: TSB_FN (a function of the shared arithmetic:
// __host__ __device__ under nvcc, inline under g++), cast<To>(x), tsb_to_float(x), and the
// math below. Shared arithmetic uses nothing else: no mixed-type expressions (they
// compile under g++ but not under nvcc), no libm calls of its own, no system headers.
//
// Math helpers pexp, plog, psin, pcos, psqrt, prsqrt follow the execution policy, the
// precision parameter `exec_policy` (seed 002 §IV; 0 when the kernel has none):
//   0 accurate  the libm function in the argument's type (half/bfloat16 evaluated in
//               float and rounded);
//   1 fast      float and narrower use a fast float approximation: on the GPU the
//               hardware intrinsics (__expf, __logf, __sinf, __cosf, rsqrtf); on the CPU
//               the short polynomials and Newton steps tsb_fast_* below (1e-7 to 5e-6
//               relative, like the intrinsics for moderate arguments); double stays accurate;
//   2 approx    half and bfloat16 use 16-bit approximations: on the GPU the native
//               hexp, hlog, hsin, hcos, hsqrt, hrsqrt; on the CPU the lower-degree
//               approximations tsb_approx_* (about 1e-4 to 2e-3 relative, the order of a
//               16-bit ulp); float as in fast; double stays accurate.
// pacos, pasin and pabs have no fast or native 16-bit form: accurate in every policy.
#ifndef TSB_PRECISION_H
#define TSB_PRECISION_H

#ifdef __CUDACC__
#include "types_cuda.h"
#else
#include "types_cpu.h"
#endif

#ifndef exec_policy
#define exec_policy 0
#endif

// ---- host approximations (the CPU's fast and approx policies) --------------------------
// Written for this suite from the textbook forms: exp by 2^n * e^g with |g| <= ln2/2,
// log by atanh series of s = (m-1)/(m+1) with m in [sqrt(1/2), sqrt(2)), sin/cos by
// reduction to |r| <= pi/4 and Taylor polynomials. `degree` selects fast (high) or
// approx (low).
TSB_FN float tsb_poly_exp(float x, bool high) {
    if (!(x == x)) return x;
    if (x > 88.8f) return HUGE_VALF;
    if (x < -103.9f) return 0.0f;
    const float n = floorf(x * 1.44269504f + 0.5f);
    const float g = (x - n * 0.693145752f) - n * 1.42860677e-06f;  // ln2 split in two parts
    float p = high ? 1.0f + g * (1.0f + g * (0.5f + g * (1.0f / 6 + g * (1.0f / 24 + g * (1.0f / 120 + g / 720)))))
                   : 1.0f + g * (1.0f + g * (0.5f + g * (1.0f / 6)));
    return ldexpf(p, (int)n);
}

TSB_FN float tsb_poly_log(float x, bool high) {
    if (!(x > 0.0f) || x == HUGE_VALF) return logf(x);  // NaN, 0, negative, inf: as libm
    int e;
    float m = frexpf(x, &e);  // x = m 2^e, m in [0.5, 1)
    if (m < 0.707106781f) {
        m *= 2.0f;
        e -= 1;
    }
    const float s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
    const float a = high ? 2.0f * s * (1.0f + s2 * (1.0f / 3 + s2 * (1.0f / 5 + s2 * (1.0f / 7))))
                         : 2.0f * s * (1.0f + s2 * (1.0f / 3));
    return a + (float)e * 0.693147181f;
}

// sin (cosine = false) or cos of x: x = k pi/2 + r, then the quadrant k mod 4 picks +-sin r or +-cos r.
TSB_FN float tsb_poly_sincos(float x, bool cosine, bool high) {
    if (!(x - x == 0.0f)) return x - x;  // NaN or inf: NaN
    const float k = floorf(x * 0.636619772f + 0.5f);
    const float r = high ? (x - k * 1.57079601f) - k * 3.13916473e-07f : x - k * 1.57079633f;
    const float r2 = r * r;
    const float s = high ? r * (1.0f - r2 * (1.0f / 6 - r2 * (1.0f / 120 - r2 * (1.0f / 5040 - r2 / 362880))))
                         : r * (1.0f - r2 * (1.0f / 6 - r2 / 120));
    const float c = high ? 1.0f - r2 * (0.5f - r2 * (1.0f / 24 - r2 * (1.0f / 720 - r2 / 40320)))
                         : 1.0f - r2 * (0.5f - r2 / 24);
    const int q = ((int)fmodf(k, 4.0f) + 4 + (cosine ? 1 : 0)) & 3;  // cos x = sin(x + pi/2)
    return q == 0 ? s : q == 1 ? c : q == 2 ? -s : -c;
}

TSB_FN float tsb_fast_exp(float x) { return tsb_poly_exp(x, true); }
TSB_FN float tsb_fast_log(float x) { return tsb_poly_log(x, true); }
TSB_FN float tsb_fast_sin(float x) { return tsb_poly_sincos(x, false, true); }
TSB_FN float tsb_fast_cos(float x) { return tsb_poly_sincos(x, true, true); }
TSB_FN float tsb_approx_exp(float x) { return tsb_poly_exp(x, false); }
TSB_FN float tsb_approx_log(float x) { return tsb_poly_log(x, false); }
TSB_FN float tsb_approx_sin(float x) { return tsb_poly_sincos(x, false, false); }
TSB_FN float tsb_approx_cos(float x) { return tsb_poly_sincos(x, true, false); }
// 1/sqrt(x) from the bit-level first guess y0 = 0x5f375a86 - bits(x)/2 and Newton steps
// y <- y (3/2 - x y^2 / 2): one step about 2e-3 relative (approx), two about 5e-6 (fast).
TSB_FN float tsb_poly_rsqrt(float x, bool high) {
    if (!(x > 0.0f) || x == HUGE_VALF) return 1.0f / sqrtf(x);  // NaN, 0, negative, inf: as libm
    union { float f; unsigned int u; } bits;  // type punning through a union: defined in g++ and nvcc
    bits.f = x;
    bits.u = 0x5f375a86u - (bits.u >> 1);
    float y = bits.f;
    const float h = 0.5f * x;
    y = y * (1.5f - h * y * y);
    if (high) y = y * (1.5f - h * y * y);
    return y;
}
TSB_FN float tsb_fast_rsqrt(float x) { return tsb_poly_rsqrt(x, true); }
TSB_FN float tsb_approx_rsqrt(float x) { return tsb_poly_rsqrt(x, false); }
TSB_FN float tsb_fast_sqrt(float x) { return x > 0.0f && x != HUGE_VALF ? x * tsb_fast_rsqrt(x) : sqrtf(x); }
TSB_FN float tsb_approx_sqrt(float x) { return x > 0.0f && x != HUGE_VALF ? x * tsb_approx_rsqrt(x) : sqrtf(x); }

TSB_FN double tsb_rsqrt(double x) { return 1.0 / sqrt(x); }
TSB_FN float tsb_rsqrtf(float x) { return 1.0f / sqrtf(x); }

// ---- policy dispatch ----------------------------------------------------------------------
// TSB_FAST_K(x): the fast float function K (device intrinsic / host polynomial);
// TSB_APPROX16(K, T, x): the 16-bit approximation of K at x of type T (device hK / host tsb_approx_K).
#ifdef __CUDA_ARCH__
#define TSB_FAST_exp(x) __expf(x)
#define TSB_FAST_log(x) __logf(x)
#define TSB_FAST_sin(x) __sinf(x)
#define TSB_FAST_cos(x) __cosf(x)
#define TSB_FAST_sqrt(x) __fsqrt_rn(x)
#define TSB_FAST_rsqrt(x) rsqrtf(x)
#define TSB_APPROX16(K, T, x) h##K(x)
#else
#define TSB_FAST_exp(x) tsb_fast_exp(x)
#define TSB_FAST_log(x) tsb_fast_log(x)
#define TSB_FAST_sin(x) tsb_fast_sin(x)
#define TSB_FAST_cos(x) tsb_fast_cos(x)
#define TSB_FAST_sqrt(x) tsb_fast_sqrt(x)
#define TSB_FAST_rsqrt(x) tsb_fast_rsqrt(x)
#define TSB_APPROX16(K, T, x) cast<T>(tsb_approx_##K(tsb_to_float(x)))
#endif

// NAME over the four types: double DFN, float FFN (accurate) or TSB_FAST_K (fast, approx),
// 16-bit through float or, in approx, TSB_APPROX16(K).
#define TSB_MATH(NAME, DFN, FFN, K)                                               \
    TSB_FN double NAME(double x) { return DFN(x); }                                  \
    TSB_FN float NAME(float x) { return exec_policy >= 1 ? TSB_FAST_##K(x) : FFN(x); } \
    TSB_FN half NAME(half x) {                                                       \
        if (exec_policy == 2) return TSB_APPROX16(K, half, x);                       \
        const float f = tsb_to_float(x);                                             \
        return cast<half>(exec_policy == 1 ? TSB_FAST_##K(f) : FFN(f));              \
    }                                                                                \
    TSB_FN bfloat16 NAME(bfloat16 x) {                                               \
        if (exec_policy == 2) return TSB_APPROX16(K, bfloat16, x);                   \
        const float f = tsb_to_float(x);                                             \
        return cast<bfloat16>(exec_policy == 1 ? TSB_FAST_##K(f) : FFN(f));          \
    }

TSB_MATH(pexp, exp, expf, exp)
TSB_MATH(plog, log, logf, log)
TSB_MATH(psin, sin, sinf, sin)
TSB_MATH(pcos, cos, cosf, cos)
TSB_MATH(psqrt, sqrt, sqrtf, sqrt)
TSB_MATH(prsqrt, tsb_rsqrt, tsb_rsqrtf, rsqrt)
#undef TSB_MATH

#define TSB_ACCURATE(NAME, DFN, FFN)                                                           \
    TSB_FN double NAME(double x) { return DFN(x); }                                            \
    TSB_FN float NAME(float x) { return FFN(x); }                                              \
    TSB_FN half NAME(half x) { return cast<half>(FFN(tsb_to_float(x))); }                      \
    TSB_FN bfloat16 NAME(bfloat16 x) { return cast<bfloat16>(FFN(tsb_to_float(x))); }

TSB_ACCURATE(pacos, acos, acosf)
TSB_ACCURATE(pasin, asin, asinf)
TSB_ACCURATE(pabs, fabs, fabsf)
#undef TSB_ACCURATE

#endif
