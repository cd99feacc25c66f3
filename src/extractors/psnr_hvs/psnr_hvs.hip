// psnr_hvs (libvmaf feature/third_party/xiph/psnr_hvs.c).
// CPU twin: cpu.rs.
//
// phvs_terms: one thread per 8x8 block (blocks every 7 samples): the block
// statistics (float sums in the CPU's order), Daala's integer DCT of both
// pictures (int32 that wraps as C's int does), the contrast masks, and the
// 64 masked, CSF-weighted squared errors, written in block order.
// phvs_sum: libvmaf adds every term of a plane to one float in order (block
// rows, blocks, coefficients), and that float's rounding shows in the
// scores, so one thread adds them in that order, reading chunks that the
// block's other threads bring into shared memory ahead of it. The module is
// compiled without FMA contraction, so the sums are the CPU's.
#include "vmafhip_prelude.h"

__device__ __forceinline__ i32 phvs_rshift(i32 a, int b) {
    return wrap_add((i32)((u32)a >> (32 - b)), a) >> b;
}

__device__ __forceinline__ i32 phvs_mul_shift(i32 t, i32 m, i32 r, int s) {
    return wrap_add(wrap_mul(t, m), r) >> s;
}

// od_bin_fdct8: 8 values read from x with `stride`, written to y with stride 1.
__device__ void phvs_fdct8(const i32* x, int stride, i32* y) {
    i32 t0 = x[0], t4 = x[stride], t2 = x[2 * stride], t6 = x[3 * stride];
    i32 t7 = x[4 * stride], t3 = x[5 * stride], t5 = x[6 * stride], t1 = x[7 * stride];
    t1 = wrap_sub(t0, t1);
    const i32 t1h = phvs_rshift(t1, 1);
    t0 = wrap_sub(t0, t1h);
    t4 = wrap_add(t4, t5);
    const i32 t4h = phvs_rshift(t4, 1);
    t5 = wrap_sub(t5, t4h);
    t3 = wrap_sub(t2, t3);
    t2 = wrap_sub(t2, phvs_rshift(t3, 1));
    t6 = wrap_add(t6, t7);
    const i32 t6h = phvs_rshift(t6, 1);
    t7 = wrap_sub(t6h, t7);
    t0 = wrap_add(t0, t6h);
    t6 = wrap_sub(t0, t6);
    t2 = wrap_sub(t4h, t2);
    t4 = wrap_sub(t2, t4);
    t0 = wrap_sub(t0, phvs_mul_shift(t4, 13573, 16384, 15));
    t4 = wrap_add(t4, phvs_mul_shift(t0, 11585, 8192, 14));
    t0 = wrap_sub(t0, phvs_mul_shift(t4, 13573, 16384, 15));
    t6 = wrap_sub(t6, phvs_mul_shift(t2, 21895, 16384, 15));
    t2 = wrap_add(t2, phvs_mul_shift(t6, 15137, 8192, 14));
    t6 = wrap_sub(t6, phvs_mul_shift(t2, 21895, 16384, 15));
    t3 = wrap_add(t3, phvs_mul_shift(t5, 19195, 16384, 15));
    t5 = wrap_add(t5, phvs_mul_shift(t3, 11585, 8192, 14));
    t3 = wrap_sub(t3, phvs_mul_shift(t5, 7489, 4096, 13));
    t7 = wrap_sub(phvs_rshift(t5, 1), t7);
    t5 = wrap_sub(t5, t7);
    t3 = wrap_sub(t1h, t3);
    t1 = wrap_sub(t1, t3);
    t7 = wrap_add(t7, phvs_mul_shift(t1, 3227, 16384, 15));
    t1 = wrap_sub(t1, phvs_mul_shift(t7, 6393, 16384, 15));
    t7 = wrap_add(t7, phvs_mul_shift(t1, 3227, 16384, 15));
    t5 = wrap_add(t5, phvs_mul_shift(t3, 2485, 4096, 13));
    t3 = wrap_sub(t3, phvs_mul_shift(t5, 18205, 16384, 15));
    t5 = wrap_add(t5, phvs_mul_shift(t3, 2485, 4096, 13));
    y[0] = t0; y[1] = t1; y[2] = t2; y[3] = t3;
    y[4] = t4; y[5] = t5; y[6] = t6; y[7] = t7;
}

// od_bin_fdct8x8 in place: columns, then columns of the result.
__device__ void phvs_fdct8x8(i32* b) {
    i32 z[64];
    for (int i = 0; i < 8; ++i) phvs_fdct8(b + i, 8, z + 8 * i);
    for (int i = 0; i < 8; ++i) phvs_fdct8(z + i, 8, b + 8 * i);
}

__device__ __forceinline__ int phvs_quadrant(int i, int j) {
    return ((i & 12) >> 2) + ((j & 12) >> 1);
}

// The ratio of the quadrants' variances to the block's (calc_psnrhvs's
// first two passes).
__device__ float phvs_block_stats(const i32* b) {
    float gmean = 0.0f, means[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j) {
            gmean += (float)b[i * 8 + j];
            means[phvs_quadrant(i, j)] += (float)b[i * 8 + j];
        }
    gmean /= 64.0f;
    for (int q = 0; q < 4; ++q) means[q] /= 16.0f;
    float gvar = 0.0f, vars[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j) {
            const float v = (float)b[i * 8 + j];
            gvar += (v - gmean) * (v - gmean);
            const int q = phvs_quadrant(i, j);
            vars[q] += (v - means[q]) * (v - means[q]);
        }
    gvar *= 1.0f / 63.0f * 64.0f;
    for (int q = 0; q < 4; ++q) vars[q] *= 1.0f / 15.0f * 16.0f;
    if (gvar > 0.0f) gvar = (vars[0] + vars[1] + vars[2] + vars[3]) / gvar;
    return gvar;
}

// The contrast mask of a transformed block (DC left out).
__device__ __forceinline__ float phvs_mask(const i32* c, const float* mask, float gvar) {
    float m = 0.0f;
    for (int i = 0; i < 8; ++i)
        for (int j = i == 0 ? 1 : 0; j < 8; ++j)
            m += (float)wrap_mul(c[i * 8 + j], c[i * 8 + j]) * mask[i * 8 + j];
    return (float)(sqrt((double)(m * gvar)) / 32.0);
}

// tables: the plane's CSF (64 floats), then its mask table (64).
template <typename In>
__device__ void phvs_terms_impl(const In* r, const In* d, int w, int bx, int nblocks,
                                const float* tables, float* out) {
    const int b = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    if (b >= nblocks) return;
    const int y = (b / bx) * 7, x = (b % bx) * 7;
    const float* csf = tables;
    const float* mask = tables + 64;
    i32 s[64], t[64];
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j) {
            const size_t at = (size_t)(y + i) * w + x + j;
            s[i * 8 + j] = (i32)r[at];
            t[i * 8 + j] = (i32)d[at];
        }
    const float s_gvar = phvs_block_stats(s), d_gvar = phvs_block_stats(t);
    phvs_fdct8x8(s);
    phvs_fdct8x8(t);
    const float s_mask = phvs_mask(s, mask, s_gvar), d_mask = phvs_mask(t, mask, d_gvar);
    const float m = s_mask > d_mask ? s_mask : d_mask;
    float* o = out + (size_t)b * 64;
    for (int k = 0; k < 64; ++k) {
        float err = (float)wrap_abs(wrap_sub(s[k], t[k]));
        if (k != 0) {
            const float floor = m / mask[k];
            err = err < floor ? 0.0f : err - floor;
        }
        o[k] = (err * csf[k]) * (err * csf[k]);
    }
}

VMAF_KERNEL void phvs_terms_8(const u8* r, const u8* d, int w, int bx, int nblocks,
                              const float* tables, float* out) {
    phvs_terms_impl<u8>(r, d, w, bx, nblocks, tables, out);
}
VMAF_KERNEL void phvs_terms_16(const u16* r, const u16* d, int w, int bx, int nblocks,
                               const float* tables, float* out) {
    phvs_terms_impl<u16>(r, d, w, bx, nblocks, tables, out);
}

#define PHVS_CHUNK 2048
// The first 64 threads (a warp or wavefront) hold the adding thread; the
// others load the chunks.
#define PHVS_LOADERS (VMAF_BLOCK - 64)

__device__ __forceinline__ void phvs_load(const float* terms, int n, int c, float* buf) {
    const int base = c * PHVS_CHUNK;
    const int len = n - base < PHVS_CHUNK ? n - base : PHVS_CHUNK;
    for (int k = (int)threadIdx.x - 64; k < len; k += PHVS_LOADERS) buf[k] = terms[base + k];
}

// Block p (of 3): the float sum, in order, of plane p's terms (n0, n1, n2
// of them, one plane after the other in `terms`) into out[p].
VMAF_KERNEL void phvs_sum(const float* terms, int n0, int n1, int n2, float* out) {
    __shared__ float buf[2][PHVS_CHUNK];
    const int p = blockIdx.x;
    const int n = p == 0 ? n0 : (p == 1 ? n1 : n2);
    terms += p == 0 ? 0 : (p == 1 ? (size_t)n0 : (size_t)n0 + n1);
    const int chunks = (n + PHVS_CHUNK - 1) / PHVS_CHUNK;
    const bool loader = threadIdx.x >= 64;
    if (loader && chunks > 0) phvs_load(terms, n, 0, buf[0]);
    __syncthreads();
    float acc = 0.0f;
    for (int c = 0; c < chunks; ++c) {
        if (loader && c + 1 < chunks) phvs_load(terms, n, c + 1, buf[(c + 1) & 1]);
        if (threadIdx.x == 0) {
            const float* v = buf[c & 1];
            const int len = n - c * PHVS_CHUNK < PHVS_CHUNK ? n - c * PHVS_CHUNK : PHVS_CHUNK;
            int k = 0;
            // Eight loads ahead of their adds (still added one by one, in order).
            for (; k + 8 <= len; k += 8) {
                const float t0 = v[k], t1 = v[k + 1], t2 = v[k + 2], t3 = v[k + 3];
                const float t4 = v[k + 4], t5 = v[k + 5], t6 = v[k + 6], t7 = v[k + 7];
                acc += t0; acc += t1; acc += t2; acc += t3;
                acc += t4; acc += t5; acc += t6; acc += t7;
            }
            for (; k < len; ++k) acc += v[k];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) out[p] = acc;
}
