// ciede (libvmaf feature/ciede.c). CPU twin: cpu.rs.
//
// ciede_pixels_8/16: one thread per luma sample: both pictures' colours
// (the chroma sample shown there, the last one past an odd edge) to
// CIELAB, and their CIEDE2000 difference (kL 0.65, kC 1, kH 4), every float
// and double step the CPU's in its order. The transcendental functions are
// the device's (CUDA's or ROCm's libm), so the values can differ from the
// CPU's (glibc's) in their last bits. ciede_rows: per row, the double sum
// of its samples' values; the host adds the rows in order.
#include "vmafhip_prelude.h"

#define CIEDE_PI 3.14159265358979323846

__device__ __forceinline__ double ciede_to_xyz(double c) {
    return c > 10.0 / 255.0 ? pow((c + 0.055) * (1.0 / 1.055), 2.4) : c * (1.0 / 12.92);
}

__device__ __forceinline__ float ciede_to_lab(double c) {
    const double kappa = 24389.0 / 27.0;
    const double epsilon = 216.0 / 24389.0;
    return c > epsilon ? (float)pow(c, 1.0 / 3.0) : (float)((kappa * c + 16.0) * (1.0 / 116.0));
}

struct CiedeLab {
    float l, a, b;
};

__device__ CiedeLab ciede_lab(double y, double u, double v, int bpc) {
    const double scale = (double)(1u << (bpc - 8));
    y = (y - 16.0 * scale) * (1.0 / (219.0 * scale));
    u = (u - 128.0 * scale) * (1.0 / (224.0 * scale));
    v = (v - 128.0 * scale) * (1.0 / (224.0 * scale));
    const double r = ciede_to_xyz(y + 1.28033 * v);
    const double g = ciede_to_xyz(y - 0.21482 * u - 0.38059 * v);
    const double b = ciede_to_xyz(y + 2.12798 * u);
    const double x = r * 0.4124564390896921 + g * 0.357576077643909 + b * 0.18043748326639894;
    const double yy = r * 0.21267285140562248 + g * 0.715152155287818 + b * 0.07217499330655958;
    const double z = r * 0.019333895582329317 + g * 0.119192025881303 + b * 0.9503040785363677;
    const double lx = (double)ciede_to_lab(x * (1.0 / 0.95047));
    const double ly = (double)ciede_to_lab(yy);
    const double lz = (double)ciede_to_lab(z * (1.0 / 1.08883));
    CiedeLab o;
    o.l = (float)((116.0 * ly) - 16.0);
    o.a = (float)(500.0 * (lx - ly));
    o.b = (float)(200.0 * (ly - lz));
    return o;
}

__device__ __forceinline__ float ciede_h_prime(float x, float y) {
    if (x == 0.0f && y == 0.0f) return 0.0f;
    float hue = (float)atan2((double)x, (double)y);
    if (hue < 0.0f) hue = (float)((double)hue + 2.0 * CIEDE_PI);
    return hue;
}

__device__ __forceinline__ float ciede_delta_h_prime(float c1, float c2, float h1, float h2) {
    if (c1 == 0.0f || c2 == 0.0f) return 0.0f;
    if ((double)fabsf(h1 - h2) <= CIEDE_PI) return h2 - h1;
    return h2 <= h1 ? (float)((double)(h2 - h1) + 2.0 * CIEDE_PI)
                    : (float)((double)(h2 - h1) - 2.0 * CIEDE_PI);
}

__device__ __forceinline__ float ciede_h_bar_prime(float h1, float h2) {
    return fabs((double)(h1 - h2)) > CIEDE_PI ? (float)(((double)(h1 + h2) + 2.0 * CIEDE_PI) / 2.0)
                                              : (float)((double)(h1 + h2) / 2.0);
}

__device__ __forceinline__ float ciede_t(float hf) {
    const double h = (double)hf;
    return (float)(1.0 - 0.17 * cos(h - CIEDE_PI / 6.0) + 0.24 * cos(2.0 * h) +
                   0.32 * cos(3.0 * h + CIEDE_PI / 30.0) - 0.20 * cos(4.0 * h - 7.0 * CIEDE_PI / 20.0));
}

__device__ __forceinline__ float ciede_r_t(float c_bar_prime, float h_bar_prime) {
    const float to_degrees = (float)((double)h_bar_prime * (180.0 / CIEDE_PI));
    const float degrees = (float)(((double)to_degrees - 275.0) * (1.0 / 25.0));
    const float c7 = powf(c_bar_prime, 7.0f);
    const float ratio = c7 / (c7 + powf(25.0f, 7.0f));
    const float angle = (float)(60.0 * exp(-(double)powf(degrees, 2.0f)));
    const float to_radians = (float)((double)angle * (CIEDE_PI / 180.0));
    return (float)(-2.0 * sqrt((double)ratio) * sin((double)to_radians));
}

__device__ __forceinline__ double ciede_sq(float v) { return pow((double)v, 2.0); }

__device__ float ciede2000(CiedeLab c1, CiedeLab c2) {
    const float kl = 0.65f, kc = 1.0f, kh = 4.0f;
    const float delta_l_prime = c2.l - c1.l;
    const float l_bar = (c1.l + c2.l) / 2.0f;
    const float ch1 = (float)sqrt(ciede_sq(c1.a) + ciede_sq(c1.b));
    const float ch2 = (float)sqrt(ciede_sq(c2.a) + ciede_sq(c2.b));
    const float c_bar = (ch1 + ch2) / 2.0f;
    const double g =
        1.0 - sqrt(pow((double)c_bar, 7.0) / (pow((double)c_bar, 7.0) + pow(25.0, 7.0)));
    const float a_prime_1 = (float)((double)c1.a + (double)(c1.a / 2.0f) * g);
    const float a_prime_2 = (float)((double)c2.a + (double)(c2.a / 2.0f) * g);
    const float c_prime_1 = (float)sqrt(ciede_sq(a_prime_1) + ciede_sq(c1.b));
    const float c_prime_2 = (float)sqrt(ciede_sq(a_prime_2) + ciede_sq(c2.b));
    const float c_bar_prime = (c_prime_1 + c_prime_2) / 2.0f;
    const float delta_c_prime = c_prime_2 - c_prime_1;
    const float s_sub_l =
        (float)(1.0 + (0.015 * ciede_sq(l_bar - 50.0f)) / sqrt(20.0 + ciede_sq(l_bar - 50.0f)));
    const float s_sub_c = (float)(1.0 + 0.045 * (double)c_bar_prime);
    const float h_prime_1 = ciede_h_prime(c1.b, a_prime_1);
    const float h_prime_2 = ciede_h_prime(c2.b, a_prime_2);
    const float dh = ciede_delta_h_prime(ch1, ch2, h_prime_1, h_prime_2);
    const float delta_upcase_h_prime =
        (float)(2.0 * sqrt((double)(c_prime_1 * c_prime_2)) * sin((double)dh / 2.0));
    const float h_bar_prime = ciede_h_bar_prime(h_prime_1, h_prime_2);
    const float t = ciede_t(h_bar_prime);
    const float s_sub_upcase_h = (float)(1.0 + 0.015 * (double)c_bar_prime * (double)t);
    const float rt = ciede_r_t(c_bar_prime, h_bar_prime);
    const float lightness = delta_l_prime / (kl * s_sub_l);
    const float chroma = delta_c_prime / (kc * s_sub_c);
    const float hue = delta_upcase_h_prime / (kh * s_sub_upcase_h);
    return (float)sqrt(ciede_sq(lightness) + ciede_sq(chroma) + ciede_sq(hue) +
                       (double)(rt * chroma * hue));
}

// libvmaf's walk of a 4:2:2 chroma plane (CPU twin: ciede.rs, `chroma_422`):
// luma row i reads its picture's chroma row i / 2 at column j, running on
// into the rows after it, in rows of `stride` samples (w / 2 rounded up to
// 32) whose samples past w / 2 are zero. -1: a zero sample.
__device__ __forceinline__ long ciede_chroma_422(int i, int j, int w, int cw, int ch) {
    const int lw = w >> 1;
    const long stride = (lw + 31) & ~31;
    const long flat = (long)(i >> 1) * stride + j;
    const long row = flat / stride, col = flat % stride;
    if (col >= lw) return -1;
    return (row < ch - 1 ? row : ch - 1) * (long)cw + col;
}

// Chroma subsampling: sx, sy are 1 where the plane is halved that way; sx 2
// is libvmaf's 4:2:2 walk.
template <typename In>
__device__ void ciede_pixels_impl(const In* ry, const In* ru, const In* rv, const In* dy,
                                  const In* du, const In* dv, int w, int h, int cw, int ch,
                                  int sx, int sy, int bpc, float* out) {
    const int j = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = blockIdx.y;
    if (j >= w || i >= h) return;
    long c;
    if (sx == 2) {
        c = ciede_chroma_422(i, j, w, cw, ch);
    } else {
        const int ci = (i >> sy) < ch - 1 ? (i >> sy) : ch - 1;
        const int cj = (j >> sx) < cw - 1 ? (j >> sx) : cw - 1;
        c = (long)ci * cw + cj;
    }
    const size_t k = (size_t)i * w + j;
    const double ru_c = c < 0 ? 0.0 : (double)(float)ru[c], rv_c = c < 0 ? 0.0 : (double)(float)rv[c];
    const double du_c = c < 0 ? 0.0 : (double)(float)du[c], dv_c = c < 0 ? 0.0 : (double)(float)dv[c];
    const CiedeLab a = ciede_lab((double)(float)ry[k], ru_c, rv_c, bpc);
    const CiedeLab b = ciede_lab((double)(float)dy[k], du_c, dv_c, bpc);
    out[k] = ciede2000(a, b);
}

VMAF_KERNEL void ciede_pixels_8(const u8* ry, const u8* ru, const u8* rv, const u8* dy,
                                const u8* du, const u8* dv, int w, int h, int cw, int ch, int sx,
                                int sy, int bpc, float* out) {
    ciede_pixels_impl<u8>(ry, ru, rv, dy, du, dv, w, h, cw, ch, sx, sy, bpc, out);
}

VMAF_KERNEL void ciede_pixels_16(const u16* ry, const u16* ru, const u16* rv, const u16* dy,
                                 const u16* du, const u16* dv, int w, int h, int cw, int ch,
                                 int sx, int sy, int bpc, float* out) {
    ciede_pixels_impl<u16>(ry, ru, rv, dy, du, dv, w, h, cw, ch, sx, sy, bpc, out);
}

VMAF_KERNEL void ciede_rows(const float* v, int w, int h, double* out) {
    const int i = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    if (i >= h) return;
    const float* row = v + (size_t)i * w;
    double acc = 0.0;
    for (int j = 0; j < w; ++j) acc += (double)row[j];
    out[i] = acc;
}
