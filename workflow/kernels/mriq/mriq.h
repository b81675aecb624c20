// MRI-Q: the per-voxel arithmetic, shared by kernel.cu (nvcc, __host__ __device__) and
// kernel.cpp (g++). Types: T_k k-space samples and phiMag, T_x voxel positions, T_c phase,
// cos/sin and the two accumulators, T_q output; cos and sin follow exec_policy
// (precision.h). Each caller keeps MRIQ_VOXELS voxels in registers (defined before the
// include: voxels_per_iter on the CPU, voxels_per_thread on the GPU) and feeds them the
// k-space samples in order, so both targets sum in the same order.
//
//   Qr[x] = sum_k phiMag[k] cos(2 pi t),  Qi[x] = sum_k phiMag[k] sin(2 pi t),
//   t = kx[k] x + ky[k] y + kz[k] z  (turns)
//
// The phase is reduced to [-1/2, 1/2] turns (t - rint(t)) before the multiplication by
// 2 pi, so pcos/psin only see arguments in [-pi, pi].
#ifndef TSB_MRIQ_H
#define TSB_MRIQ_H
#include "precision.h"

#ifndef MRIQ_VOXELS
#define MRIQ_VOXELS 1
#endif
#ifndef MRIQ_K_UNROLL  // a pragma before the k loop (the GPU's k_unroll)
#define MRIQ_K_UNROLL
#endif

// rint in each type: half and bfloat16 round in float, exactly.
TSB_FN double mriq_rint(double v) { return rint(v); }
TSB_FN float mriq_rint(float v) { return rintf(v); }
TSB_FN half mriq_rint(half v) { return cast<half>(rintf(tsb_to_float(v))); }
TSB_FN bfloat16 mriq_rint(bfloat16 v) { return cast<bfloat16>(rintf(tsb_to_float(v))); }

// Voxel i into lane v: its position in T_c, the sums zeroed.
TSB_FN void mriq_load_voxel(const T_x *x, const T_x *y, const T_x *z, int i, int v, T_c *px, T_c *py, T_c *pz,
                            T_c *qr, T_c *qi) {
    px[v] = cast<T_c>(x[i]);
    py[v] = cast<T_c>(y[i]);
    pz[v] = cast<T_c>(z[i]);
    qr[v] = cast<T_c>(0.0);
    qi[v] = cast<T_c>(0.0);
}

// nk k-space samples (kx, ky, kz, mag: of type K, T_k in global memory or T_c when staged
// and converted in shared memory) applied in order to the MRIQ_VOXELS voxels of the caller.
template <typename K>
TSB_FN void mriq_accumulate(const K *kx, const K *ky, const K *kz, const K *mag, int nk, const T_c *px,
                            const T_c *py, const T_c *pz, T_c *qr, T_c *qi) {
    const T_c two_pi = cast<T_c>(6.283185307179586);
    MRIQ_K_UNROLL
    for (int k = 0; k < nk; k++) {
        const T_c ckx = cast<T_c>(kx[k]);
        const T_c cky = cast<T_c>(ky[k]);
        const T_c ckz = cast<T_c>(kz[k]);
        const T_c cmag = cast<T_c>(mag[k]);
        TSB_UNROLL
        for (int v = 0; v < MRIQ_VOXELS; v++) {
            T_c t = ckx * px[v];
            t = t + cky * py[v];
            t = t + ckz * pz[v];
            t = t - mriq_rint(t);
            const T_c arg = two_pi * t;
            qr[v] = qr[v] + cmag * pcos(arg);
            qi[v] = qi[v] + cmag * psin(arg);
        }
    }
}

// Lane v's sums into Qr[i], Qi[i], rounded to T_q.
TSB_FN void mriq_store(T_q *Qr, T_q *Qi, int i, int v, const T_c *qr, const T_c *qi) {
    Qr[i] = cast<T_q>(qr[v]);
    Qi[i] = cast<T_q>(qi[v]);
}

#endif
