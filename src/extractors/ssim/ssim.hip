// float_ssim and float_ms_ssim (libvmaf feature/float_ssim.c,
// float_ms_ssim.c over feature/iqa). CPU twin: cpu.rs.
//
// ssim_to_float: luma samples as floats on the 8-bit scale.
// ssim_decimate: _iqa_decimate, one thread per kept sample: the k x k
// kernel (float_ssim's box, MS-SSIM's 9x9 low-pass) over the symmetric
// border, each float product added to a double in row-major kernel order.
// ssim_conv_h / ssim_conv_v: _iqa_convolve with the 11-tap Gaussian, "valid"
// output, horizontal pass into a cache then vertical, each output a double
// sum of float products in tap order; conv_h filters the samples (mode 0),
// their squares (1) or the products of two pictures (2), each formed in
// float first as the CPU forms them.
// ssim_rows: one thread per row of the SSIM map: each sample's luminance,
// contrast and structure terms and their product, the four added in double
// left to right; the host adds the rows in order. The module is compiled
// without FMA contraction, so every value is the CPU's.
#include "vmafhip_prelude.h"

template <typename In>
__device__ void ssim_to_float_impl(const In* src, int n, float scaler, float* out) {
    const int k = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    if (k < n) out[k] = (float)src[k] / scaler;
}

VMAF_KERNEL void ssim_to_float_8(const u8* src, int n, u32 scaler_bits, float* out) {
    ssim_to_float_impl<u8>(src, n, __uint_as_float(scaler_bits), out);
}
VMAF_KERNEL void ssim_to_float_16(const u16* src, int n, u32 scaler_bits, float* out) {
    ssim_to_float_impl<u16>(src, n, __uint_as_float(scaler_bits), out);
}

// KBND_SYMMETRIC: -1 reads 0, n reads n-1.
__device__ __forceinline__ int ssim_sym(int x, int n) {
    return x < 0 ? -1 - x : (x >= n ? 2 * n - x - 1 : x);
}

VMAF_KERNEL void ssim_decimate(const float* img, int w, int h, int f, const float* kernel, int k,
                               int sw, int sh, float* out) {
    const int x = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= sw || y >= sh) return;
    const int c = k / 2, even = k % 2 == 0 ? 1 : 0;
    double sum = 0.0;
    int kv = 0;
    for (int v = -c; v <= c - even; ++v, ++kv) {
        const float* row = img + (size_t)ssim_sym(y * f + v, h) * w;
        int ku = 0;
        for (int u = -c; u <= c - even; ++u, ++ku)
            sum += (double)(row[ssim_sym(x * f + u, w)] * kernel[kv * k + ku]);
    }
    out[(size_t)y * sw + x] = (float)sum;
}

#define SSIM_TAPS 11

VMAF_KERNEL void ssim_conv_h(const float* a, const float* b, int mode, int w, int h,
                             const float* g, float* cache) {
    const int dw = w - SSIM_TAPS + 1;
    const int x = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= dw || y >= h) return;
    const size_t at = (size_t)y * w + x;
    double s = 0.0;
    for (int u = 0; u < SSIM_TAPS; ++u) {
        const float p = mode == 0 ? a[at + u]
                        : mode == 1 ? a[at + u] * a[at + u]
                                    : a[at + u] * b[at + u];
        s += (double)(p * g[u]);
    }
    cache[(size_t)y * dw + x] = (float)s;
}

VMAF_KERNEL void ssim_conv_v(const float* cache, int dw, int dh, const float* g, float* out) {
    const int x = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= dw || y >= dh) return;
    double s = 0.0;
    for (int v = 0; v < SSIM_TAPS; ++v) s += (double)(cache[(size_t)(y + v) * dw + x] * g[v]);
    out[(size_t)y * dw + x] = (float)s;
}

// consts: c1, c2, c3 as float bits. out: per row ssim, l, c, s sums.
VMAF_KERNEL void ssim_rows(const float* mu1, const float* mu2, const float* s11, const float* s22,
                           const float* s12, int dw, int dh, u32 c1_bits, u32 c2_bits,
                           u32 c3_bits, double* out) {
    const int y = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    if (y >= dh) return;
    const float c1 = __uint_as_float(c1_bits), c2 = __uint_as_float(c2_bits),
                c3 = __uint_as_float(c3_bits);
    double ssim = 0.0, ls = 0.0, cs = 0.0, ss = 0.0;
    for (int x = 0; x < dw; ++x) {
        const size_t i = (size_t)y * dw + x;
        const float m1 = mu1[i], m2 = mu2[i];
        const float sig1 = fmaxf(s11[i] - m1 * m1, 0.0f);
        const float sig2 = fmaxf(s22[i] - m2 * m2, 0.0f);
        const float sig12 = s12[i] - m1 * m2;
        const float sig_both = (float)sqrt((double)(sig1 * sig2));
        const double l = (2.0 * (double)m1 * (double)m2 + (double)c1) / (double)(m1 * m1 + m2 * m2 + c1);
        const double c = (2.0 * (double)sig_both + (double)c2) / (double)(sig1 + sig2 + c2);
        const float clamped = sig12 < 0.0f && sig_both <= 0.0f ? 0.0f : sig12;
        const double s = (double)((clamped + c3) / (sig_both + c3));
        ssim += l * c * s;
        ls += l;
        cs += c;
        ss += s;
    }
    out[4 * y] = ssim;
    out[4 * y + 1] = ls;
    out[4 * y + 2] = cs;
    out[4 * y + 3] = ss;
}
