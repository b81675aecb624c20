// InvK, host-CPU port: analytic inverse kinematics of a 3-link planar arm (link
// lengths 1.0, 0.8, 0.5), one target (x, y, phi) -> joint angles (th1, th2, th3).
// Same formulas and operation order as kernel.cu and reference.py.
//
// Types: T_in targets, T_calc every intermediate (trigonometry, wrist, acos
// arguments, angle sums), T_out angles.  Tunables: threads (OpenMP), ppt (points
// per loop iteration, computed side by side).
#include "precision.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif
#ifndef ppt
#define ppt 1
#endif

template <typename T>
static inline T invk_clamp1(T v) {
    const T one = cast<T>(1.0), mone = cast<T>(-1.0);
    return v > one ? one : (v < mone ? mone : v);
}

extern "C" void invk(const T_in *target, T_out *theta, int n) {
    const T_calc l1 = cast<T_calc>(1.0), l2 = cast<T_calc>(0.8), l3 = cast<T_calc>(0.5);
    const T_calc l12 = cast<T_calc>(1.64);   // L1^2 + L2^2
    const T_calc k12 = cast<T_calc>(0.625);  // 1 / (2 L1 L2)
    const int nblocks = (n + ppt - 1) / ppt;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int blk = 0; blk < nblocks; blk++) {
        T_calc th1[ppt], th2[ppt], th3[ppt];
        for (int k = 0; k < ppt; k++) {
            int i = blk * ppt + k;
            if (i >= n) i = n - 1;  // the padded tail repeats the last point and stores nothing
            const T_calc x = cast<T_calc>(target[3 * (long)i]);
            const T_calc y = cast<T_calc>(target[3 * (long)i + 1]);
            const T_calc phi = cast<T_calc>(target[3 * (long)i + 2]);
            const T_calc wx = x - l3 * pcos(phi);
            const T_calc wy = y - l3 * psin(phi);
            const T_calc r2 = wx * wx + wy * wy;
            const T_calc c2 = invk_clamp1((r2 - l12) * k12);
            const T_calc r = psqrt(r2);
            th2[k] = pacos(c2);
            th1[k] = pacos(invk_clamp1(wx / r)) - pacos(invk_clamp1((l1 + l2 * c2) / r));
            th3[k] = phi - th1[k] - th2[k];
        }
        for (int k = 0; k < ppt && blk * ppt + k < n; k++) {
            const long i = (long)blk * ppt + k;
            theta[3 * i] = cast<T_out>(th1[k]);
            theta[3 * i + 1] = cast<T_out>(th2[k]);
            theta[3 * i + 2] = cast<T_out>(th3[k]);
        }
    }
}
