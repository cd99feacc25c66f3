// float_adm (libvmaf float_adm.c, adm.c, adm_tools.c). CPU twin:
// cpu.rs; every float and double operation is the
// CPU's, in its order (the module is compiled without FMA contraction).
//
// fadm_dwt: one output sample of the db2 DWT (its four source rows and
// columns reflected with the edge repeated): band a, and h, v, d unless
// only a is asked for. fadm_decouple: the restored and additive parts of
// the distorted detail bands over the masking filter's region; libvmaf
// divides as n * rcp_s(d), the CPU's reciprocal estimate refined by one
// Newton step, and the estimates come from a table the host reads off its
// own CPU (recip.rs: recip_estimate_table). fadm_csf: the CSF-weighted
// bands and a 30th of their magnitudes. fadm_den_terms / fadm_cm_terms: per
// sample of the inner region, the p-th powers the CPU sums (the reference's
// CSF bands; a part less the masking threshold of the other), summed per
// row by ff_row_sums and over rows on the host.
#include "vmafhip_prelude.h"

#define FADM_ONE_BY_30 0.033333335f
#define FADM_ONE_BY_15 0.06666667f

__device__ __forceinline__ int fadm_fold(int k, int n) { return k >= n ? 2 * n - k - 1 : k; }

// dwt2_src_indices_filt_s: source index t (0..3) of output i.
__device__ __forceinline__ int fadm_tap(int i, int t, int n) {
    const int k = 2 * i - 1 + t;
    return (t == 0 && k < 0) ? -k : fadm_fold(k, n);
}

__device__ __forceinline__ float fadm_dot4(const float* c, const float* s) {
    float acc = 0.0f;
    for (int k = 0; k < 4; ++k) acc += c[k] * s[k];
    return acc;
}

VMAF_KERNEL void fadm_dwt(const float* src, int w, int h, float* a, float* bh, float* bv, float* bd,
                          int detail) {
    const float lo[4] = {0.482962913144690f, 0.836516303737469f, 0.224143868041857f,
                         -0.129409522550921f};
    const float hi[4] = {-0.129409522550921f, -0.224143868041857f, 0.836516303737469f,
                         -0.482962913144690f};
    const int cw = (w + 1) / 2, ch = (h + 1) / 2;
    const int j = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = blockIdx.y;
    if (j >= cw || i >= ch) return;
    float vlo[4], vhi[4];
    for (int c = 0; c < 4; ++c) {
        const int col = fadm_tap(j, c, w);
        float s[4];
        for (int r = 0; r < 4; ++r) s[r] = src[(size_t)fadm_tap(i, r, h) * w + col];
        vlo[c] = fadm_dot4(lo, s);
        vhi[c] = fadm_dot4(hi, s);
    }
    const size_t o = (size_t)i * cw + j;
    a[o] = fadm_dot4(lo, vlo);
    if (detail) {
        bv[o] = fadm_dot4(hi, vlo);
        bh[o] = fadm_dot4(lo, vhi);
        bd[o] = fadm_dot4(hi, vhi);
    }
}

// rcp_s(x): the estimate from the table, then one Newton step. Inputs
// whose estimate is not a normal float take 1/x.
__device__ __forceinline__ float fadm_rcp(const float* table, float x) {
    const u32 u = __float_as_uint(x);
    const i32 e = (i32)((u >> 23) & 0xFF);
    float xi;
    if (e == 0 || e > 252) {
        xi = 1.0f / x;
    } else {
        const u32 r = __float_as_uint(table[(u >> 11) & 0xFFF]);
        xi = __uint_as_float((u32)((i32)r - ((e - 127) << 23)) | (u & 0x80000000u));
    }
    return xi + xi * (1.0f - x * xi);
}

__device__ __forceinline__ float fadm_ratio(const float* table, float t, float o) {
    const float k = t * fadm_rcp(table, o + 1e-30f);
    return k < 0.0f ? 0.0f : (k > 1.0f ? 1.0f : k);
}

// Region: rows top..bottom, columns left..right of w-wide bands.
VMAF_KERNEL void fadm_decouple(const float* oh, const float* ov, const float* od, const float* th,
                               const float* tv, const float* td, int w, int top, int bottom,
                               int left, int right, double egl, double cos_1deg_sq_d,
                               const float* table, float* rh, float* rv, float* rd, float* ah,
                               float* av, float* ad) {
    const int j = left + blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = top + blockIdx.y;
    if (j >= right || i >= bottom) return;
    const size_t k = (size_t)i * w + j;
    const float o[3] = {oh[k], ov[k], od[k]};
    const float t[3] = {th[k], tv[k], td[k]};
    float rst[3];
    for (int b = 0; b < 3; ++b) rst[b] = fadm_ratio(table, t[b], o[b]) * o[b];
    const float cos_1deg_sq = (float)cos_1deg_sq_d;
    const float ot_dp = o[0] * t[0] + o[1] * t[1];
    const float o_mag_sq = o[0] * o[0] + o[1] * o[1];
    const float t_mag_sq = t[0] * t[0] + t[1] * t[1];
    const bool same_angle = ot_dp >= 0.0f && ot_dp * ot_dp >= cos_1deg_sq * o_mag_sq * t_mag_sq;
    if (same_angle) {
        for (int b = 0; b < 3; ++b) {
            const double tt = (double)t[b];
            if (rst[b] > 0.0f) {
                const double x = (double)rst[b] * egl;
                rst[b] = (float)(x < tt ? x : tt);
            }
            if (rst[b] < 0.0f) {
                const double x = (double)rst[b] * egl;
                rst[b] = (float)(x > tt ? x : tt);
            }
        }
    }
    float* r[3] = {rh, rv, rd};
    float* a[3] = {ah, av, ad};
    for (int b = 0; b < 3; ++b) {
        r[b][k] = rst[b];
        a[b][k] = t[b] - rst[b];
    }
}

VMAF_KERNEL void fadm_csf(const float* sh, const float* sv, const float* sd, int w, int top,
                          int bottom, int left, int right, double rf0, double rf1, double rf2,
                          float* dh, float* dv, float* dd, float* fh, float* fv, float* fd) {
    const int j = left + blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = top + blockIdx.y;
    if (j >= right || i >= bottom) return;
    const size_t k = (size_t)i * w + j;
    const float* s[3] = {sh, sv, sd};
    float* d[3] = {dh, dv, dd};
    float* f[3] = {fh, fv, fd};
    const float rf[3] = {(float)rf0, (float)rf1, (float)rf2};
    for (int b = 0; b < 3; ++b) {
        const float v = rf[b] * s[b][k];
        d[b][k] = v;
        f[b][k] = FADM_ONE_BY_30 * fabsf(v);
    }
}

// x^p of a non-negative float (x*x*x at p = 3, as the CPU).
__device__ __forceinline__ float fadm_pow(float x, double p) {
    return p == 3.0 ? x * x * x : powf(x, (float)p);
}

VMAF_KERNEL void fadm_den_terms(const float* oh, const float* ov, const float* od, int w, int top,
                                int bottom, int left, int right, double rf0, double rf1,
                                double rf2, double p, float* th, float* tv, float* td) {
    const int j = left + blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = top + blockIdx.y;
    if (j >= right || i >= bottom) return;
    const size_t k = (size_t)i * w + j;
    th[k] = fadm_pow(fabsf((float)rf0 * oh[k]), p);
    tv[k] = fadm_pow(fabsf((float)rf1 * ov[k]), p);
    td[k] = fadm_pow(fabsf((float)rf2 * od[k]), p);
}

// The masking threshold at (i, j): per band the eight neighbours of flt
// and a 15th of the centre of angles, in row order; row (column) -1 reads
// 1, h (w) reads h - 1 (w - 1).
__device__ __forceinline__ float fadm_threshold(const float* const* angles,
                                                const float* const* flt, int w, int h, int i,
                                                int j) {
    const int rows[3] = {i == 0 ? (h > 1 ? 1 : 0) : i - 1, i, i + 1 < h ? i + 1 : h - 1};
    const int cols[3] = {j == 0 ? (w > 1 ? 1 : 0) : j - 1, j, j + 1 < w ? j + 1 : w - 1};
    float total = 0.0f;
    for (int b = 0; b < 3; ++b) {
        float sum = 0.0f;
        for (int ri = 0; ri < 3; ++ri) {
            for (int ci = 0; ci < 3; ++ci) {
                const size_t k = (size_t)rows[ri] * w + cols[ci];
                sum += (ri == 1 && ci == 1) ? FADM_ONE_BY_15 * fabsf(angles[b][k]) : flt[b][k];
            }
        }
        total += sum;
    }
    return total;
}

VMAF_KERNEL void fadm_cm_terms(const float* sh, const float* sv, const float* sd,
                               const float* gh, const float* gv, const float* gd, const float* fh,
                               const float* fv, const float* fd, int w, int h, int top, int bottom,
                               int left, int right, double rf0, double rf1, double rf2, double p,
                               int bypass, float* th, float* tv, float* td) {
    const int j = left + blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = top + blockIdx.y;
    if (j >= right || i >= bottom) return;
    const float* angles[3] = {gh, gv, gd};
    const float* flt[3] = {fh, fv, fd};
    const float thr = bypass ? 0.0f : fadm_threshold(angles, flt, w, h, i, j);
    const size_t k = (size_t)i * w + j;
    const float* s[3] = {sh, sv, sd};
    float* t[3] = {th, tv, td};
    const float rf[3] = {(float)rf0, (float)rf1, (float)rf2};
    for (int b = 0; b < 3; ++b) {
        const float x = fabsf(s[b][k] * rf[b]) - thr;
        t[b][k] = fadm_pow(x < 0.0f ? 0.0f : x, p);
    }
}
