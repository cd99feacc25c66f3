// float_vif (libvmaf float_vif.c, vif.c, vif_tools.c). CPU twin:
// cpu.rs. The filters are float_filter.hip's.
//
// fvif_decimate: every other sample of every other row (vif_dec2_s).
// fvif_statistic: one sample's terms of vif_statistic_s ("matching Matlab",
// log2 by libvmaf's polynomial), every float and double operation the
// CPU's; num and den are written over the filtered squares they are made
// from, and summed by ff_row_sums.
#include "vmafhip_prelude.h"

VMAF_KERNEL void fvif_decimate(const float* src, int w, int h, float* dst) {
    const int j = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = blockIdx.y;
    const int dw = w / 2;
    if (j >= dw || i >= h / 2) return;
    dst[(size_t)i * dw + j] = src[(size_t)(2 * i) * w + 2 * j];
}

// vif_tools.c:log2f_approx.
__device__ __forceinline__ float fvif_log2(float x) {
    const float poly[9] = {-0.012671635276421f, 0.064841182402670f, -0.157048836463065f,
                           0.257167726303123f,  -0.353800560300520f, 0.480131410397451f,
                           -0.721314327952201f, 1.442694803896991f,  0.0f};
    if (x == 0.0f) return -__uint_as_float(0x7F800000u);
    if (x < 0.0f) return __uint_as_float(0x7FC00000u);
    const u32 u = __float_as_uint(x);
    const u32 exponent = (u & 0x7F800000u) >> 23;
    const float remain = __uint_as_float((u & 0x007FFFFFu) | 0x3F800000u);
    const float log_base = (float)((i32)exponent - 127);
    const float t = remain - 1.0f;
    float v = 0.0f;
    for (int k = 0; k < 9; ++k) v = v * t + poly[k];
    return log_base + v;
}

VMAF_KERNEL void fvif_statistic(const float* mu1, const float* mu2, float* xx, float* yy,
                                const float* xy, int n, double nsq, double sigma_max_inv_d,
                                double egl_d) {
    const int k = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    if (k >= n) return;
    const float eps = 1.0e-10f;
    const float sigma_max_inv = (float)sigma_max_inv_d;
    const float egl = (float)egl_d;
    const float m1 = mu1[k], m2 = mu2[k];
    float s1 = xx[k] - m1 * m1;
    float s2 = yy[k] - m2 * m2;
    const float s12 = xy[k] - m1 * m2;
    s1 = s1 > 0.0f ? s1 : 0.0f;
    s2 = s2 > 0.0f ? s2 : 0.0f;
    float g = s12 / (s1 + eps);
    float sv = s2 - g * s12;
    if (s1 < eps) {
        g = 0.0f;
        sv = s2;
        s1 = 0.0f;
    }
    if (s2 < eps) {
        g = 0.0f;
        sv = 0.0f;
    }
    if (g < 0.0f) {
        sv = s2;
        g = 0.0f;
    }
    sv = sv > eps ? sv : eps;
    g = g < egl ? g : egl;
    float num = fvif_log2((float)(1.0 + (double)(g * g * s1) / ((double)sv + nsq)));
    float den = fvif_log2((float)(1.0 + (double)s1 / nsq));
    if (s12 < 0.0f) num = 0.0f;
    if ((double)s1 < nsq) {
        num = 1.0f - s2 * sigma_max_inv;
        den = 1.0f;
    }
    xx[k] = num;
    yy[k] = den;
}
