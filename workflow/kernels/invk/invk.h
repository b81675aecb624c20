// InvK: analytic inverse kinematics of a 3-link planar arm (link lengths 1.0, 0.8, 0.5),
// one target (x, y, phi) -> joint angles (th1, th2, th3): the per-target arithmetic,
// shared by kernel.cu (nvcc, __host__ __device__) and kernel.cpp (g++). Same formulas
// and operation order as reference.py.
// Types: T_in targets, T_wrist the wrist stage (cos/sin of phi, wrist position, r^2, r),
// T_angle the angle stage (acos arguments, acos, angle sums), T_out angles. sin, cos
// and sqrt follow exec_policy; acos is accurate in every policy.
#ifndef TSB_INVK_H
#define TSB_INVK_H
#include "precision.h"

// v clamped to [-1, 1]: rounded 16-bit acos arguments pass +-1 and would give NaN.
TSB_FN T_angle invk_clamp1(T_angle v) {
    const T_angle one = cast<T_angle>(1.0), mone = cast<T_angle>(-1.0);
    return v > one ? one : (v < mone ? mone : v);
}

// Solves target i (target[3i .. 3i+2]) and stores its angles at theta[3i .. 3i+2].
TSB_FN void invk_point(const T_in *target, T_out *theta, long i) {
    const T_wrist l3 = cast<T_wrist>(0.5);
    const T_angle l1 = cast<T_angle>(1.0), l2 = cast<T_angle>(0.8);
    const T_angle l12 = cast<T_angle>(1.64);   // L1^2 + L2^2
    const T_angle k12 = cast<T_angle>(0.625);  // 1 / (2 L1 L2)
    const T_wrist x = cast<T_wrist>(target[3 * i]);
    const T_wrist y = cast<T_wrist>(target[3 * i + 1]);
    const T_wrist phi = cast<T_wrist>(target[3 * i + 2]);
    const T_wrist wx = x - l3 * pcos(phi);
    const T_wrist wy = y - l3 * psin(phi);
    const T_wrist r2 = wx * wx + wy * wy;
    const T_wrist r = psqrt(r2);
    const T_angle c2 = invk_clamp1((cast<T_angle>(r2) - l12) * k12);
    const T_angle ra = cast<T_angle>(r);
    const T_angle th2 = pacos(c2);
    const T_angle th1 = pacos(invk_clamp1(cast<T_angle>(wx) / ra)) - pacos(invk_clamp1((l1 + l2 * c2) / ra));
    const T_angle th3 = cast<T_angle>(target[3 * i + 2]) - th1 - th2;
    theta[3 * i] = cast<T_out>(th1);
    theta[3 * i + 1] = cast<T_out>(th2);
    theta[3 * i + 2] = cast<T_out>(th3);
}

#endif
