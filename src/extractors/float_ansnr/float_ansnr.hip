// float_ansnr (libvmaf feature/float_ansnr.c, ansnr.c, ansnr_tools.c).
// CPU twin: cpu.rs.
//
// ansnr_terms: one thread per sample; the reference (floats less 128)
// filtered by the 3x3 kernel and the distorted by the 5x5 one, each output
// the float sum over kernel rows of each row's float sum (the edge
// repeated on the far side only, as ansnr_filter2d_s reads it); out: the
// signal term r*r and the noise term (r-d)*(r-d). The per-row float sums
// (ff_row_sums) and the host's float sum of the rows follow the CPU's
// loops, and the module is compiled without FMA contraction, so the
// results are identical.
#include "vmafhip_prelude.h"

__device__ __forceinline__ int ansnr_reflect(int i, int n) {
    return i < 0 ? -i : (i >= n ? 2 * n - i - 1 : i);
}

__device__ __forceinline__ float ansnr_filter_at(const float* src, int w, int h, const float* f,
                                                  int width, int i, int j) {
    const int half = width / 2;
    float accum = 0.0f;
    for (int fi = 0; fi < width; ++fi) {
        const int ii = ansnr_reflect(i - half + fi, h);
        float inner = 0.0f;
        for (int fj = 0; fj < width; ++fj) {
            const int jj = ansnr_reflect(j - half + fj, w);
            inner += f[fi * width + fj] * src[(size_t)ii * w + jj];
        }
        accum += inner;
    }
    return accum;
}

// taps: the 3x3 reference kernel (9 floats), then the 5x5 one (25).
VMAF_KERNEL void ansnr_terms(const float* r, const float* d, int w, int h, const float* taps,
                             float* sig, float* noise) {
    const int j = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = blockIdx.y;
    if (j >= w || i >= h) return;
    const float a = ansnr_filter_at(r, w, h, taps, 3, i, j);
    const float b = ansnr_filter_at(d, w, h, taps + 9, 5, i, j);
    const size_t k = (size_t)i * w + j;
    sig[k] = a * a;
    noise[k] = (a - b) * (a - b);
}
