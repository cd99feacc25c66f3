// ADM decoupling and contrast sensitivity, libvmaf integer_adm.c:
// adm_decouple / adm_decouple_s123 followed by adm_csf / i4_adm_csf, for
// both the detail-loss (CSF of the additive part) and the AIM (CSF of the
// restored part) paths. CPU twins: cpu.rs `decouple` and
// `csf`.
//
// One thread per sample of region E (the host passes its bounds). Output
// planes (each bw*bh int32) in `work`: rst[3], add[3], y_add[3], f_add[3],
// y_rst[3], f_rst[3] (index = 3*array + theta).
#include "vmafhip_prelude.h"

__device__ __forceinline__ double min_c(double a, double b) { return a < b ? a : b; }
__device__ __forceinline__ double max_c(double a, double b) { return a > b ? a : b; }

VMAF_KERNEL void adm_decouple_csf(const i32* bands_ref, const i32* bands_dis, const i32* div_lookup,
                                  i32* work, int bw, int bh, int top, int bottom, int left,
                                  int right, int scale, double egl, double cos_sq,
                                  long long rf0, long long rf1, long long rf2) {
    const int j = left + blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = top + blockIdx.y;
    if (j >= right || i >= bottom) return;
    const size_t n = (size_t)bw * bh, at = (size_t)i * bw + j;
    // Band order in memory is a, v, h, d; theta order is h, v, d.
    const i32* ob[3] = {bands_ref + 2 * n, bands_ref + n, bands_ref + 3 * n};
    const i32* tb[3] = {bands_dis + 2 * n, bands_dis + n, bands_dis + 3 * n};
    const i64 oh = ob[0][at], ov = ob[1][at], th = tb[0][at], tv = tb[1][at];
    const i64 ot_dp = oh * th + ov * tv;
    const i64 o_mag_sq = oh * oh + ov * ov;
    const i64 t_mag_sq = th * th + tv * tv;
    const double dp = (double)(float)ot_dp / 4096.0;
    const bool angle_flag = dp >= 0.0 && dp * dp >= cos_sq * ((double)(float)o_mag_sq / 4096.0) *
                                                       ((double)(float)t_mag_sq / 4096.0);
    const i64 rf[3] = {rf0, rf1, rf2};
    for (int theta = 0; theta < 3; ++theta) {
        const i32 o = ob[theta][at];
        const i32 t = tb[theta][at];
        i64 k;
        if (o == 0) {
            k = 32768;
        } else if (scale == 0) {
            k = (i64)(i32)(((i64)div_lookup[o + 32768] * t + 16384) >> 15);
        } else {
            const u32 abs_o = o < 0 ? 0u - (u32)o : (u32)o;
            const i64 sign = o < 0 ? -1 : 1;
            u32 msb = abs_o;
            int sh = 0;
            if (abs_o >= 32768) {
                // get_best15_from32: top 15 bits, rounded.
                sh = 17 - __clz((int)abs_o);
                msb = (u32)(u16)((abs_o + (1u << (sh - 1))) >> sh);
            }
            k = ((i64)div_lookup[msb + 32768] * t * sign + ((i64)1 << (14 + sh))) >> (15 + sh);
        }
        if (k < 0) k = 0;
        if (k > 32768) k = 32768;
        i64 r = (k * o + 16384) >> 15;
        r = scale == 0 ? (i64)(i16)r : (i64)(i32)r;
        const float rst_f = ((float)k / 32768.0f) * ((float)o / 64.0f);
        if (angle_flag && rst_f > 0.0f) {
            const double m = min_c((double)r * egl, (double)t);
            r = scale == 0 ? (i64)f64_to_i16(m) : (i64)f64_to_i32(m);
        } else if (angle_flag && rst_f < 0.0f) {
            const double m = max_c((double)r * egl, (double)t);
            r = scale == 0 ? (i64)f64_to_i16(m) : (i64)f64_to_i32(m);
        }
        const i32 rst = (i32)r;
        const i64 a = (i64)t - r;
        const i32 add = scale == 0 ? (i32)(i16)a : (i32)a;
        work[(0 + theta) * n + at] = rst;
        work[(3 + theta) * n + at] = add;
        // CSF of add (-> y_add, f_add) and of rst (-> y_rst, f_rst).
        for (int pass = 0; pass < 2; ++pass) {
            const i32 src = pass == 0 ? add : rst;
            i32 y, f;
            if (scale == 0) {
                const int shift = theta == 2 ? 17 : 15;
                const i32 addc = theta == 2 ? 65535 : 16384;
                const i16 yy = (i16)(wrap_add(wrap_mul((i32)rf[theta], src), addc) >> shift);
                y = yy;
                f = (i32)(i16)((4369 * (yy < 0 ? -(i32)yy : (i32)yy) + 2048) >> 12);
            } else {
                y = (i32)((rf[theta] * (i64)src + ((i64)1 << 27)) >> 28);
                // The +2^31 rounding lives in an int32 in libvmaf and is -2^31.
                f = (i32)((143165577LL * (i64)wrap_abs(y) - ((i64)1 << 31)) >> 32);
            }
            work[(6 + 6 * pass + theta) * n + at] = y;
            work[(9 + 6 * pass + theta) * n + at] = f;
        }
    }
}
