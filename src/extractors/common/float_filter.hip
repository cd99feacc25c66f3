// The float extractors' shared stages (libvmaf picture_copy.c, vif_tools.c:
// vif_filter1d_s, motion.c). CPU twins: float_filter.rs,
// float_psnr.rs (float_picture), float_motion.rs (image_sad).
//
// ff_to_float: samples as floats on the 8-bit scale, less 128.
// ff_vertical / ff_horizontal: the two passes of the separable filter,
// mirrored at the edges without repeating them; each output the float sum of
// its taps in tap order from zero, as the CPU forms it (the module is
// compiled without FMA contraction), so the results are identical.
// ff_vertical's mode filters the samples (0), their squares (1) or the
// products of two pictures (2).
// ff_row_sums / ff_row_absdiff: one thread per row sums its samples (or
// absolute differences) left to right in float, as the CPU's inner loops;
// the host adds the rows in order.
#include "vmafhip_prelude.h"

template <typename In>
__device__ __forceinline__ void to_float_impl(const In* src, int n, double scaler_d, float* out) {
    const int k = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    if (k >= n) return;
    const float v = (float)src[k];
    const float scaler = (float)scaler_d;
    out[k] = scaler > 0.0f ? v / scaler + -128.0f : v + -128.0f;
}

VMAF_KERNEL void ff_to_float_8(const u8* src, int n, double scaler, float* out) {
    to_float_impl<u8>(src, n, scaler, out);
}

VMAF_KERNEL void ff_to_float_16(const u16* src, int n, double scaler, float* out) {
    to_float_impl<u16>(src, n, scaler, out);
}

VMAF_KERNEL void ff_vertical(const float* a, const float* b, int mode, int w, int h,
                             const float* taps, int n, float* out) {
    const int j = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = blockIdx.y;
    if (j >= w) return;
    const int half = n / 2;
    float acc = 0.0f;
    for (int k = 0; k < n; ++k) {
        const size_t o = (size_t)mirror_r101(i - half + k, h) * w + j;
        const float x = a[o];
        const float v = mode == 0 ? x : (mode == 1 ? x * x : x * b[o]);
        acc += taps[k] * v;
    }
    out[(size_t)i * w + j] = acc;
}

VMAF_KERNEL void ff_horizontal(const float* src, int w, int h, const float* taps, int n,
                               float* out) {
    const int j = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = blockIdx.y;
    if (j >= w) return;
    const int half = n / 2;
    const float* row = src + (size_t)i * w;
    float acc = 0.0f;
    for (int k = 0; k < n; ++k) acc += taps[k] * row[mirror_r101(j - half + k, w)];
    out[(size_t)i * w + j] = acc;
}

// Row i (of `rows`, from row0) of v (`stride` wide), columns col0..col0+cols.
VMAF_KERNEL void ff_row_sums(const float* v, int stride, int row0, int rows, int col0, int cols,
                             float* out) {
    const int i = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    if (i >= rows) return;
    const float* row = v + (size_t)(row0 + i) * stride + col0;
    float acc = 0.0f;
    for (int j = 0; j < cols; ++j) acc += row[j];
    out[i] = acc;
}

VMAF_KERNEL void ff_row_absdiff(const float* a, const float* b, int w, int h, float* out) {
    const int i = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    if (i >= h) return;
    const float* ra = a + (size_t)i * w;
    const float* rb = b + (size_t)i * w;
    float acc = 0.0f;
    for (int j = 0; j < w; ++j) acc += fabsf(ra[j] - rb[j]);
    out[i] = acc;
}
