// InvK, CUDA version: analytic inverse kinematics of a 3-link planar arm (link
// lengths 1.0, 0.8, 0.5), one target (x, y, phi) -> joint angles (th1, th2, th3).
// Same formulas and operation order as kernel.cpp and reference.py.
//
// Types: T_in targets, T_calc every intermediate, T_out angles.  Tunables:
// block_size_x, ppt (points per thread, block_size_x apart so that loads coalesce),
// exec_policy (sin, cos, sqrt: accurate, fast intrinsics, native 16-bit; acos is
// accurate in every policy, evaluated in float for 16-bit types).
#include "precision.cuh"

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef ppt
#define ppt 1
#endif

template <typename T>
__device__ __forceinline__ T invk_clamp1(T v) {
    const T one = cast<T>(1.0), mone = cast<T>(-1.0);
    return v > one ? one : (v < mone ? mone : v);
}

extern "C" __global__ void __launch_bounds__(block_size_x)
invk(const T_in *__restrict__ target, T_out *__restrict__ theta, int n) {
    const T_calc l1 = cast<T_calc>(1.0), l2 = cast<T_calc>(0.8), l3 = cast<T_calc>(0.5);
    const T_calc l12 = cast<T_calc>(1.64);   // L1^2 + L2^2
    const T_calc k12 = cast<T_calc>(0.625);  // 1 / (2 L1 L2)
    const long first = (long)blockIdx.x * (block_size_x * ppt) + threadIdx.x;
#pragma unroll
    for (int k = 0; k < ppt; k++) {
        const long i = first + (long)k * block_size_x;
        if (i < n) {
            const T_calc x = cast<T_calc>(target[3 * i]);
            const T_calc y = cast<T_calc>(target[3 * i + 1]);
            const T_calc phi = cast<T_calc>(target[3 * i + 2]);
            const T_calc wx = x - l3 * pcos(phi);
            const T_calc wy = y - l3 * psin(phi);
            const T_calc r2 = wx * wx + wy * wy;
            const T_calc c2 = invk_clamp1((r2 - l12) * k12);
            const T_calc r = psqrt(r2);
            const T_calc th2 = pacos(c2);
            const T_calc th1 = pacos(invk_clamp1(wx / r)) - pacos(invk_clamp1((l1 + l2 * c2) / r));
            const T_calc th3 = phi - th1 - th2;
            theta[3 * i] = cast<T_out>(th1);
            theta[3 * i + 1] = cast<T_out>(th2);
            theta[3 * i + 2] = cast<T_out>(th3);
        }
    }
}
