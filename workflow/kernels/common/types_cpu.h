// Host-CPU side of the precision interface (included by precision.h under g++, never directly).
//
//   half      IEEE binary16 (_Float16, gcc >= 12 on x86-64); arithmetic rounds to
//             binary16 after every operation.
//   bfloat16  16-bit storage (the upper half of a binary32), round-to-nearest-even
//             on conversion; arithmetic is done in float and rounded back, so it
//             models bf16 arithmetic the way GPUs without native bf16 ALUs do it.
// Host arrays of half/bfloat16 are passed as uint16 buffers (Kernel Tuner's C
// backend refuses float16 ndarrays); both types are exactly 2 bytes, so a
// `half *` or `bfloat16 *` parameter reads them directly.
#ifndef TSB_TYPES_CPU_H
#define TSB_TYPES_CPU_H

// Without F16C, gcc converts every _Float16 through libgcc calls (30-100x slower than
// double); every x86-64 CPU of the last decade has it, so the ports are built with it.
#if defined(__x86_64__) && !defined(__F16C__)
#pragma GCC target("f16c")
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>

#define TSB_FN inline
// TSB_UNROLL before a loop of constant trip count: unroll it fully.
#define TSB_UNROLL _Pragma("GCC unroll 64")

typedef _Float16 half;

struct bfloat16 {
    uint16_t bits;
    bfloat16() = default;
    static inline uint16_t round_bits(float f) {
        uint32_t u;
        memcpy(&u, &f, 4);
        if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) {
            return (uint16_t)((u >> 16) | 0x0040u);  // quiet NaN
        }
        u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even
        return (uint16_t)(u >> 16);
    }
    bfloat16(float f) : bits(round_bits(f)) {}
    bfloat16(double d) : bits(round_bits((float)d)) {}
    bfloat16(int i) : bits(round_bits((float)i)) {}
    bfloat16(half h) : bits(round_bits((float)h)) {}
    operator float() const {
        uint32_t u = (uint32_t)bits << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    bfloat16 &operator+=(bfloat16 o) { return *this = bfloat16((float)*this + (float)o); }
    bfloat16 &operator-=(bfloat16 o) { return *this = bfloat16((float)*this - (float)o); }
    bfloat16 &operator*=(bfloat16 o) { return *this = bfloat16((float)*this * (float)o); }
    bfloat16 &operator/=(bfloat16 o) { return *this = bfloat16((float)*this / (float)o); }
};
static_assert(sizeof(bfloat16) == 2, "bfloat16 must be 2 bytes");
static_assert(sizeof(half) == 2, "half must be 2 bytes");

inline bfloat16 operator+(bfloat16 a, bfloat16 b) { return bfloat16((float)a + (float)b); }
inline bfloat16 operator-(bfloat16 a, bfloat16 b) { return bfloat16((float)a - (float)b); }
inline bfloat16 operator*(bfloat16 a, bfloat16 b) { return bfloat16((float)a * (float)b); }
inline bfloat16 operator/(bfloat16 a, bfloat16 b) { return bfloat16((float)a / (float)b); }
inline bfloat16 operator-(bfloat16 a) { return bfloat16(-(float)a); }
inline bool operator<(bfloat16 a, bfloat16 b) { return (float)a < (float)b; }
inline bool operator>(bfloat16 a, bfloat16 b) { return (float)a > (float)b; }
inline bool operator<=(bfloat16 a, bfloat16 b) { return (float)a <= (float)b; }
inline bool operator>=(bfloat16 a, bfloat16 b) { return (float)a >= (float)b; }

inline float tsb_to_float(double x) { return (float)x; }
inline float tsb_to_float(float x) { return x; }
inline float tsb_to_float(half x) { return (float)x; }
inline float tsb_to_float(bfloat16 x) { return (float)x; }

// Conversion between any two of the four types (and from int): cast<To>(x).
template <typename To, typename From>
inline To cast(From x) { return (To)(x); }
template <> inline half cast<half, bfloat16>(bfloat16 x) { return (half)(float)x; }
template <> inline double cast<double, bfloat16>(bfloat16 x) { return (double)(float)x; }

#endif
