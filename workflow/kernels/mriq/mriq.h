// MRI-Q, the arithmetic of a group of voxels, shared by kernel.cu (nvcc, __host__
// __device__) and kernel.cpp (g++):
//
//   Qr[x] = sum_k phiMag[k] * cos(2 pi t),  Qi[x] = sum_k phiMag[k] * sin(2 pi t),
//   t = kx[k]*x + ky[k]*y + kz[k]*z  (turns)
//
// Types: T_k k-space samples and phiMag, T_x voxel positions, T_c phase, cos/sin and the
// two accumulators, T_q output. The phase is reduced to [-1/2, 1/2] turns (t - rint(t))
// before the multiplication by 2 pi, so pcos/psin (policy exec_policy) only see
// arguments in [-pi, pi].
#ifndef TSB_MRIQ_H
#define TSB_MRIQ_H
#include "precision.h"

// rint in each type (exact in every type: half and bfloat16 hold every integer they round to).
TSB_FN double mriq_rint(double v) { return rint(v); }
TSB_FN float mriq_rint(float v) { return rintf(v); }
#ifdef __CUDA_ARCH__
TSB_FN half mriq_rint(half v) { return hrint(v); }
TSB_FN bfloat16 mriq_rint(bfloat16 v) { return hrint(v); }
#else
TSB_FN half mriq_rint(half v) { return cast<half>(rintf(tsb_to_float(v))); }
TSB_FN bfloat16 mriq_rint(bfloat16 v) { return cast<bfloat16>(rintf(tsb_to_float(v))); }
#endif

// Voxel i of (x, y, z) into position v of a group; its accumulators start at zero.
TSB_FN void mriq_voxel(const T_x *x, const T_x *y, const T_x *z, int i, int v, T_c *px, T_c *py, T_c *pz,
                       T_c *qr, T_c *qi) {
    px[v] = cast<T_c>(x[i]);
    py[v] = cast<T_c>(y[i]);
    pz[v] = cast<T_c>(z[i]);
    qr[v] = cast<T_c>(0.0);
    qi[v] = cast<T_c>(0.0);
}

// k-sample k of (kx, ky, kz, mag) (global memory in T_k, or staged in T_c) applied to the
// V voxels of a group, in k order.
template <int V, class K>
TSB_FN void mriq_sample(const K *kx, const K *ky, const K *kz, const K *mag, int k, const T_c *px,
                        const T_c *py, const T_c *pz, T_c *qr, T_c *qi) {
    const T_c two_pi = cast<T_c>(6.283185307179586);
    const T_c ckx = cast<T_c>(kx[k]);
    const T_c cky = cast<T_c>(ky[k]);
    const T_c ckz = cast<T_c>(kz[k]);
    const T_c cmag = cast<T_c>(mag[k]);
    TSB_UNROLL
    for (int v = 0; v < V; v++) {
        T_c t = ckx * px[v];
        t = t + cky * py[v];
        t = t + ckz * pz[v];
        t = t - mriq_rint(t);
        const T_c arg = two_pi * t;
        qr[v] = qr[v] + cmag * pcos(arg);
        qi[v] = qi[v] + cmag * psin(arg);
    }
}

// The stored outputs of position v of a group, at voxel i.
TSB_FN void mriq_store(const T_c *qr, const T_c *qi, int v, T_q *Qr, T_q *Qi, int i) {
    Qr[i] = cast<T_q>(qr[v]);
    Qi[i] = cast<T_q>(qi[v]);
}

#endif
