// Integer VIF statistic of one scale, libvmaf integer_vif.c
// (vif_statistic_8 / vif_statistic_16).
// CPU twin: cpu.rs `Vif::statistic` (+ `VifAccum::pixel`).
//
// One block per (R rows, 512-column chunk): the vertical pass fills shared
// rows for the chunk and its mirrored halo, the horizontal pass and the
// per-pixel information terms follow, and the four integer sums
// (num_log, den_log, num_non_log, den_non_log) are added atomically.
//
// In a ladder the reference's side is done once (vif_moments_*: its mean
// and variance at every pixel of the scale, into a u64 each), and each
// rendition's kernel (vif_statistic_beside_*) filters its own picture and
// the cross term only, reading the reference's moments: the same integers
// as one kernel doing both.
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
// instance and overflow the limit). Vertical results of up to VIF_MAX_ROWS
// output rows, each VIF_SPAN columns plus the widest halo. The two means are
// packed in one word (mu1 | mu2 << 16: each is below 2^16, the filters
// summing to 65536 and mu_shift dividing out the sample range).
#define VIF_MAX_ROWS 4
#define VIF_SPAN (2 * VMAF_BLOCK)
#define VIF_COLS (VIF_SPAN + 16)
struct alignas(16) VifShared {
    u32 mu[VIF_MAX_ROWS][VIF_COLS];
    u32 xx[VIF_MAX_ROWS][VIF_COLS], yy[VIF_MAX_ROWS][VIF_COLS], xy[VIF_MAX_ROWS][VIF_COLS];
    // block_sum's scratch (4 * VMAF_BLOCK words) once the horizontal pass is
    // done with `mu`: less shared memory leaves more L1 for the log table.
    __device__ u64* red() { return (u64*)&mu[0][0]; }
};
static_assert(sizeof(u32) * VIF_MAX_ROWS * VIF_COLS >= sizeof(u64) * 4 * VMAF_BLOCK,
              "block_sum's scratch fits in mu");

// Vertical sums of squares: uint32 for 8-bit scale 0, else uint64.
template <bool Small> struct VifAcc { typedef u64 T; };
template <> struct VifAcc<true> { typedef u32 T; };

// The horizontal sums of one output pixel.
struct VifPix {
    u32 mu1, mu2;
    u64 xx, yy, xy;
};

// What one kernel filters: both pictures (a lone pair), the reference
// alone (its moments, shared by a ladder) or the distorted picture beside
// the reference's moments (its mean and variance, its cross term).
#define VIF_BOTH 0
#define VIF_REF 1
#define VIF_DIS 2

template <int Side>
__device__ __forceinline__ void vif_tap(VifPix& p, u32 c, u32 mu, u32 xx, u32 yy, u32 xy) {
    if (Side != VIF_DIS) {
        p.mu1 += c * (mu & 0xffffu);
        p.xx += (u64)c * xx;
    }
    if (Side != VIF_REF) {
        p.mu2 += c * (mu >> 16);
        p.yy += (u64)c * yy;
        p.xy += (u64)c * xy;
    }
}

// The reference's moments of one pixel: its mean (low word) and variance
// (high word, as the i32 it is).
__device__ __forceinline__ u64 vif_ref_moments(const VifPix& p) {
    const u32 mu1_sq = (u32)(((u64)p.mu1 * p.mu1 + 0x80000000ull) >> 32);
    const u32 xx32 = (u32)((p.xx + 32768) >> 16);
    const i32 sigma1_sq = (i32)(xx32 - mu1_sq);
    return (u64)p.mu1 | ((u64)(u32)sigma1_sq << 32);
}

// The information terms of one pixel from the reference's moments
// (vif_ref_moments) and the distorted picture's filtered sums, added to
// acc = (num_log, den_log, num_non_log, den_non_log).
__device__ __forceinline__ void vif_terms(u64 ref, const VifPix& p, double egl, const u16* table,
                                          u64* acc) {
    const u32 mu1 = (u32)ref;
    const i32 sigma1_sq = (i32)(u32)(ref >> 32);
    const u32 mu2_sq = (u32)(((u64)p.mu2 * p.mu2 + 0x80000000ull) >> 32);
    const u32 mu1_mu2 = (u32)(((u64)mu1 * p.mu2 + 0x80000000ull) >> 32);
    const u32 yy32 = (u32)((p.yy + 32768) >> 16);
    const u32 xy32 = (u32)((p.xy + 32768) >> 16);
    i32 sigma2_sq = (i32)(yy32 - mu2_sq);
    if (sigma2_sq < 0) sigma2_sq = 0;
    const i32 sigma12 = (i32)(xy32 - mu1_mu2);
    if (sigma1_sq >= SIGMA_NSQ) {
        const u32 den_arg = (u32)SIGMA_NSQ + (u32)sigma1_sq;
        acc[1] += (u64)(log2_fixed(table, den_arg) - 2048 * 17);
        if (sigma12 > 0 && sigma2_sq > 0) {
            const double eps = 65536.0 * 1.0e-10;
            double g = (double)sigma12 / ((double)sigma1_sq + eps);
            i32 sv_sq = f64_to_i32((double)sigma2_sq - g * (double)sigma12);
            if (sv_sq < 0) sv_sq = 0;
            if (egl < g) g = egl;
            const u32 numer1 = (u32)sv_sq + (u32)SIGMA_NSQ;
            const i64 numer1_tmp = f64_to_i64(g * g * (double)sigma1_sq) + (i64)numer1;
            acc[0] += (u64)(log2_fixed(table, (u64)numer1_tmp) - log2_fixed(table, numer1));
        }
    } else {
        acc[2] += (u64)(i64)sigma2_sq;
        acc[3] += 1;
    }
}

// One block: R output rows (blockIdx.y * R ...) of VIF_SPAN = 512 columns.
// The vertical pass reads each of the N + R - 1 input rows once per column
// and adds it to every output row whose window holds it (libvmaf's sums, in
// any order: they are exact integers), so the input is read about
// (N + R - 1) / R times instead of N. In the horizontal pass each thread
// takes two neighbouring columns and reads the N + 1 sums they share as
// 8-byte pairs. Template flag `Small`: 8-bit scale 0, where every vertical
// sum fits a uint32 (sum c*x^2 <= 65536*255^2 < 2^32), as libvmaf keeps them.
// `Side` (VIF_BOTH, VIF_REF, VIF_DIS): what it filters; VIF_REF writes the
// reference's moments of each pixel to `moments` (w * h of them), VIF_DIS
// reads them there.
template <typename In, int N, bool Small, int R, int Side>
__device__ void vif_statistic_impl(const In* ref, const In* dis, u64* moments, int w, int h,
                                   int scale, int mu_shift, int sq_shift, double egl,
                                   const u16* table, u64* out, VifShared& sh) {
    const int half = N / 2;
    const u16* f = vif_filter(scale);
    const int i0 = blockIdx.y * R;
    const int j0 = blockIdx.x * VIF_SPAN;
    const u32 mu_round = 1u << (mu_shift - 1);
    const u64 sq_round = sq_shift == 0 ? 0 : (1ull << (sq_shift - 1));
    for (int t = threadIdx.x; t < VIF_SPAN + 2 * half; t += VMAF_BLOCK) {
        const int c = j0 - half + t;
        if (c >= w + half) break;
        const int cc = mirror_r101(c, w);
        u32 m1[R], m2[R];
        typedef typename VifAcc<Small>::T Acc;
        Acc xx[R], yy[R], xy[R];
#pragma unroll
        for (int r = 0; r < R; ++r) m1[r] = m2[r] = 0, xx[r] = yy[r] = xy[r] = 0;
        // Input rows of the window: i0 - half ... i0 + R - 1 + half. A row
        // only output rows past the bottom would need is replaced by a
        // valid one (their results are never used).
#pragma unroll
        for (int q = 0; q < N + R - 1; ++q) {
            const int yq = i0 - half + q;
            const size_t at = (size_t)mirror_r101(yq > h - 1 + half ? h - 1 : yq, h) * w + cc;
            const u32 x = ref[at], y = Side == VIF_REF ? 0 : dis[at];
            // x*x, y*y, x*y < 2^32 for 16-bit samples; c*x < 2^29, so
            // c * (x*x) below equals libvmaf's (c*x) * x.
            const u32 x2 = x * x, y2 = y * y, xy1 = x * y;
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int k = q - r;
                if (k < 0 || k >= N) continue;
                const u32 c_k = f[k];
                if (Side != VIF_DIS) {
                    m1[r] += c_k * x;
                    xx[r] += (Acc)c_k * x2;
                }
                if (Side != VIF_REF) {
                    m2[r] += c_k * y;
                    yy[r] += (Acc)c_k * y2;
                    xy[r] += (Acc)c_k * xy1;
                }
            }
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            // Only the sums this side filters are stored (its taps read no others).
            if (Side != VIF_DIS)
                sh.xx[r][t] = Small ? (u32)xx[r] : (u32)(((u64)xx[r] + sq_round) >> sq_shift);
            if (Side != VIF_REF) {
                sh.yy[r][t] = Small ? (u32)yy[r] : (u32)(((u64)yy[r] + sq_round) >> sq_shift);
                sh.xy[r][t] = Small ? (u32)xy[r] : (u32)(((u64)xy[r] + sq_round) >> sq_shift);
            }
            sh.mu[r][t] = ((m1[r] + mu_round) >> mu_shift) | (((m2[r] + mu_round) >> mu_shift) << 16);
        }
    }
    __syncthreads();
    u64 acc[4] = {0, 0, 0, 0};
    const int tx = 2 * threadIdx.x;
    const int ja = j0 + tx;
    for (int r = 0; r < R && ja < w && i0 + r < h; ++r) {
        VifPix a = {0, 0, 0, 0, 0}, b = {0, 0, 0, 0, 0};
        // Pairs of sums at tx, tx + 1, ... tx + N (N is odd): sum k feeds
        // column ja with f[k] and column ja + 1 with f[k - 1].
        const u64* pm = (const u64*)&sh.mu[r][tx];
        const u64* px = (const u64*)&sh.xx[r][tx];
        const u64* py = (const u64*)&sh.yy[r][tx];
        const u64* pxy = (const u64*)&sh.xy[r][tx];
#pragma unroll
        for (int q = 0; q < (N + 1) / 2; ++q) {
            const u64 m = pm[q], x = px[q], y = py[q], z = pxy[q];
            const int k = 2 * q;
            vif_tap<Side>(a, f[k], (u32)m, (u32)x, (u32)y, (u32)z);
            if (k > 0) vif_tap<Side>(b, f[k - 1], (u32)m, (u32)x, (u32)y, (u32)z);
            if (k + 1 < N)
                vif_tap<Side>(a, f[k + 1], (u32)(m >> 32), (u32)(x >> 32), (u32)(y >> 32),
                              (u32)(z >> 32));
            vif_tap<Side>(b, f[k], (u32)(m >> 32), (u32)(x >> 32), (u32)(y >> 32), (u32)(z >> 32));
        }
        const size_t at = (size_t)(i0 + r) * w + ja;
        const bool has_b = ja + 1 < w;
        if (Side == VIF_REF) {
            moments[at] = vif_ref_moments(a);
            if (has_b) moments[at + 1] = vif_ref_moments(b);
            continue;
        }
        const u64 ma = Side == VIF_DIS ? moments[at] : vif_ref_moments(a);
        vif_terms(ma, a, egl, table, acc);
        if (!has_b) continue;
        const u64 mb = Side == VIF_DIS ? moments[at + 1] : vif_ref_moments(b);
        vif_terms(mb, b, egl, table, acc);
    }
    if (Side == VIF_REF) return;
    __syncthreads();  // every thread is done reading `mu`
    block_sum<u64, 4>(acc, sh.red());
    if (threadIdx.x < 4) atomic_add_u64(out + threadIdx.x, acc[threadIdx.x]);
}

// The instance for the scale and the output rows per block (`rows`) the
// host sized the grid for: at scale 0, 4 or 1; at scale 1, 4, 2 or 1; at
// scales 2 and 3, 1. 8-bit input is scale 0's alone. Inlined: a call
// would make AMD's compiler give the kernel a second VifShared.
template <int Side>
__device__ __forceinline__ void vif_statistic_8bit(const u8* ref, const u8* dis, u64* moments,
                                                   int w, int h, int rows, int mu_shift,
                                                   int sq_shift, double egl, const u16* table,
                                                   u64* out, VifShared& sh) {
    if (rows == 4)
        vif_statistic_impl<u8, 17, true, 4, Side>(ref, dis, moments, w, h, 0, mu_shift, sq_shift,
                                                  egl, table, out, sh);
    else
        vif_statistic_impl<u8, 17, true, 1, Side>(ref, dis, moments, w, h, 0, mu_shift, sq_shift,
                                                  egl, table, out, sh);
}

#define VIF_PASS16(N, R) \
    vif_statistic_impl<u16, N, false, R, Side>(ref, dis, moments, w, h, scale, mu_shift, sq_shift, \
                                               egl, table, out, sh)
template <int Side>
__device__ __forceinline__ void vif_statistic_16bit(const u16* ref, const u16* dis, u64* moments,
                                                    int w, int h, int scale, int rows,
                                                    int mu_shift, int sq_shift, double egl,
                                                    const u16* table, u64* out, VifShared& sh) {
    switch (scale) {
    case 0:
        if (rows == 4) VIF_PASS16(17, 4);
        else VIF_PASS16(17, 1);
        break;
    case 1:
        if (rows == 4) VIF_PASS16(9, 4);
        else if (rows == 2) VIF_PASS16(9, 2);
        else VIF_PASS16(9, 1);
        break;
    case 2: VIF_PASS16(5, 1); break;
    default: VIF_PASS16(3, 1); break;
    }
}

#define VIF_ARGS \
    int w, int h, int scale, int rows, int mu_shift, int sq_shift, double egl, const u16* table, \
        u64* out

// A lone pair: scale 0 of 8-bit input; scale 0 of 9..16-bit input and
// scales 1..3 (16-bit decimated images).
VMAF_KERNEL_BOUNDS(4) void vif_statistic_8(const u8* ref, const u8* dis, VIF_ARGS) {
    __shared__ VifShared sh;
    vif_statistic_8bit<VIF_BOTH>(ref, dis, nullptr, w, h, rows, mu_shift, sq_shift, egl, table, out,
                                 sh);
}
VMAF_KERNEL_BOUNDS(4) void vif_statistic_16(const u16* ref, const u16* dis, VIF_ARGS) {
    __shared__ VifShared sh;
    vif_statistic_16bit<VIF_BOTH>(ref, dis, nullptr, w, h, scale, rows, mu_shift, sq_shift, egl,
                                  table, out, sh);
}

// A ladder's reference: its moments at every pixel of the scale.
VMAF_KERNEL_BOUNDS(4) void vif_moments_8(const u8* ref, u64* moments, int w, int h, int scale,
                                         int rows, int mu_shift, int sq_shift) {
    __shared__ VifShared sh;
    (void)scale;
    vif_statistic_8bit<VIF_REF>(ref, nullptr, moments, w, h, rows, mu_shift, sq_shift, 0.0,
                                nullptr, nullptr, sh);
}
VMAF_KERNEL_BOUNDS(4) void vif_moments_16(const u16* ref, u64* moments, int w, int h, int scale,
                                          int rows, int mu_shift, int sq_shift) {
    __shared__ VifShared sh;
    vif_statistic_16bit<VIF_REF>(ref, nullptr, moments, w, h, scale, rows, mu_shift, sq_shift, 0.0,
                                 nullptr, nullptr, sh);
}

// A rendition of a ladder: its statistic beside the reference's moments.
VMAF_KERNEL_BOUNDS(4) void vif_statistic_beside_8(const u8* ref, const u8* dis,
                                                  const u64* moments, VIF_ARGS) {
    __shared__ VifShared sh;
    vif_statistic_8bit<VIF_DIS>(ref, dis, (u64*)moments, w, h, rows, mu_shift, sq_shift, egl,
                                table, out, sh);
}
VMAF_KERNEL_BOUNDS(4) void vif_statistic_beside_16(const u16* ref, const u16* dis,
                                                   const u64* moments, VIF_ARGS) {
    __shared__ VifShared sh;
    vif_statistic_16bit<VIF_DIS>(ref, dis, (u64*)moments, w, h, scale, rows, mu_shift, sq_shift,
                                 egl, table, out, sh);
}
