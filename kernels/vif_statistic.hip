// Integer VIF statistic of one scale, libvmaf integer_vif.c
// (vif_statistic_8 / vif_statistic_16).
// CPU twin: src/vmaf/features/vif.rs `Vif::statistic` (+ `VifAccum::pixel`).
//
// One block per (row, 256-column chunk): the vertical pass fills shared
// rows for the chunk and its mirrored halo, the horizontal pass and the
// per-pixel information terms follow, and the four integer sums
// (num_log, den_log, num_non_log, den_non_log) are added atomically.
#include "vmafhip_prelude.h"

__constant__ u16 VIF_F0[17] = {489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784,
                               7455, 6547, 5274, 3896, 2640, 1640, 935, 489};
__constant__ u16 VIF_F1[9] = {1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244};
__constant__ u16 VIF_F2[5] = {3571, 16004, 26386, 16004, 3571};
__constant__ u16 VIF_F3[3] = {10904, 43728, 10904};

#define SIGMA_NSQ 131072

__device__ __forceinline__ const u16* vif_filter(int scale) {
    return scale == 0 ? VIF_F0 : scale == 1 ? VIF_F1 : scale == 2 ? VIF_F2 : VIF_F3;
}

// 2048*log2(x) from the top 16 bits (integer_vif.h log2_64); x >= 2^17 here.
__device__ __forceinline__ i64 log2_fixed(const u16* table, u64 x) {
    const int k = 48 - __clzll((long long)x);
    return (i64)table[x >> k] + 2048 * (i64)k;
}

// Shared memory of one block, declared once per kernel entry (a static
// __shared__ array inside each template instance would be allocated once per
// instance and overflow the limit).
struct VifShared {
    u32 mu1[VMAF_BLOCK + 16], mu2[VMAF_BLOCK + 16];
    u32 xx[VMAF_BLOCK + 16], yy[VMAF_BLOCK + 16], xy[VMAF_BLOCK + 16];
    u64 red[4 * VMAF_BLOCK];
};

// Template flag `Small`: 8-bit scale 0, where every vertical sum fits a
// uint32 (sum c*x^2 <= 65536*255^2 < 2^32), as libvmaf keeps them.
template <typename In, int N, bool Small>
__device__ void vif_statistic_impl(const In* ref, const In* dis, int w, int h, int scale,
                                   int mu_shift, int sq_shift, double egl, const u16* table,
                                   u64* out, VifShared& sh) {
    const int half = N / 2;
    u32* s_mu1 = sh.mu1;
    u32* s_mu2 = sh.mu2;
    u32* s_xx = sh.xx;
    u32* s_yy = sh.yy;
    u32* s_xy = sh.xy;
    u64* red = sh.red;
    const u16* f = vif_filter(scale);
    const int i = blockIdx.y;
    const int j0 = blockIdx.x * VMAF_BLOCK;
    const u32 mu_round = 1u << (mu_shift - 1);
    for (int t = threadIdx.x; t < VMAF_BLOCK + 2 * half; t += VMAF_BLOCK) {
        const int c = j0 - half + t;
        if (c >= w + half) break;
        const int cc = mirror_r101(c, w);
        u32 m1 = 0, m2 = 0;
        if (Small) {
            u32 xx = 0, yy = 0, xy = 0;
            for (int k = 0; k < N; ++k) {
                const size_t at = (size_t)mirror_r101(i - half + k, h) * w + cc;
                const u32 x = ref[at], y = dis[at], c_k = f[k];
                m1 += c_k * x;
                m2 += c_k * y;
                xx += c_k * (x * x);
                yy += c_k * (y * y);
                xy += c_k * (x * y);
            }
            s_xx[t] = xx;
            s_yy[t] = yy;
            s_xy[t] = xy;
        } else {
            u64 xx = 0, yy = 0, xy = 0;
            for (int k = 0; k < N; ++k) {
                const size_t at = (size_t)mirror_r101(i - half + k, h) * w + cc;
                const u32 x = ref[at], y = dis[at], c_k = f[k];
                const u32 cx = c_k * x, cy = c_k * y;
                m1 += cx;
                m2 += cy;
                xx += (u64)cx * x;
                yy += (u64)cy * y;
                xy += (u64)cx * y;
            }
            const u64 r = sq_shift == 0 ? 0 : (1ull << (sq_shift - 1));
            s_xx[t] = (u32)((xx + r) >> sq_shift);
            s_yy[t] = (u32)((yy + r) >> sq_shift);
            s_xy[t] = (u32)((xy + r) >> sq_shift);
        }
        s_mu1[t] = (m1 + mu_round) >> mu_shift;
        s_mu2[t] = (m2 + mu_round) >> mu_shift;
    }
    __syncthreads();
    u64 acc[4] = {0, 0, 0, 0};
    const int j = j0 + threadIdx.x;
    if (j < w) {
        u32 mu1 = 0, mu2 = 0;
        u64 xx = 0, yy = 0, xy = 0;
        for (int k = 0; k < N; ++k) {
            const int t = threadIdx.x + k;
            const u32 c_k = f[k];
            mu1 += c_k * s_mu1[t];
            mu2 += c_k * s_mu2[t];
            xx += (u64)c_k * s_xx[t];
            yy += (u64)c_k * s_yy[t];
            xy += (u64)c_k * s_xy[t];
        }
        const u32 mu1_sq = (u32)(((u64)mu1 * mu1 + 0x80000000ull) >> 32);
        const u32 mu2_sq = (u32)(((u64)mu2 * mu2 + 0x80000000ull) >> 32);
        const u32 mu1_mu2 = (u32)(((u64)mu1 * mu2 + 0x80000000ull) >> 32);
        const u32 xx32 = (u32)((xx + 32768) >> 16);
        const u32 yy32 = (u32)((yy + 32768) >> 16);
        const u32 xy32 = (u32)((xy + 32768) >> 16);
        const i32 sigma1_sq = (i32)(xx32 - mu1_sq);
        i32 sigma2_sq = (i32)(yy32 - mu2_sq);
        if (sigma2_sq < 0) sigma2_sq = 0;
        const i32 sigma12 = (i32)(xy32 - mu1_mu2);
        i64 num_log = 0, den_log = 0, num_non_log = 0, den_non_log = 0;
        if (sigma1_sq >= SIGMA_NSQ) {
            const u32 den_arg = (u32)SIGMA_NSQ + (u32)sigma1_sq;
            den_log = log2_fixed(table, den_arg) - 2048 * 17;
            if (sigma12 > 0 && sigma2_sq > 0) {
                const double eps = 65536.0 * 1.0e-10;
                double g = (double)sigma12 / ((double)sigma1_sq + eps);
                i32 sv_sq = f64_to_i32((double)sigma2_sq - g * (double)sigma12);
                if (sv_sq < 0) sv_sq = 0;
                if (egl < g) g = egl;
                const u32 numer1 = (u32)sv_sq + (u32)SIGMA_NSQ;
                const i64 numer1_tmp = f64_to_i64(g * g * (double)sigma1_sq) + (i64)numer1;
                num_log = log2_fixed(table, (u64)numer1_tmp) - log2_fixed(table, numer1);
            }
        } else {
            num_non_log = sigma2_sq;
            den_non_log = 1;
        }
        acc[0] = (u64)num_log;
        acc[1] = (u64)den_log;
        acc[2] = (u64)num_non_log;
        acc[3] = (u64)den_non_log;
    }
    block_sum<u64, 4>(acc, red);
    if (threadIdx.x < 4) atomic_add_u64(out + threadIdx.x, acc[threadIdx.x]);
}

#define VIF_ARGS int w, int h, int scale, int mu_shift, int sq_shift, double egl, const u16* table, u64* out
#define VIF_PASS w, h, scale, mu_shift, sq_shift, egl, table, out, sh

// Scale 0 of 8-bit input.
VMAF_KERNEL void vif_statistic_8(const u8* ref, const u8* dis, VIF_ARGS) {
    __shared__ VifShared sh;
    vif_statistic_impl<u8, 17, true>(ref, dis, VIF_PASS);
}
// Scale 0 of 9..16-bit input, and scales 1..3 (16-bit decimated images).
VMAF_KERNEL void vif_statistic_16(const u16* ref, const u16* dis, VIF_ARGS) {
    __shared__ VifShared sh;
    switch (scale) {
    case 0: vif_statistic_impl<u16, 17, false>(ref, dis, VIF_PASS); break;
    case 1: vif_statistic_impl<u16, 9, false>(ref, dis, VIF_PASS); break;
    case 2: vif_statistic_impl<u16, 5, false>(ref, dis, VIF_PASS); break;
    default: vif_statistic_impl<u16, 3, false>(ref, dis, VIF_PASS); break;
    }
}
