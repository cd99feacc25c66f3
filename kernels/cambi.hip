// CAMBI (libvmaf feature/cambi.c). CPU twin: src/vmaf/features/cambi.rs.
//
// Stages per picture: cambi_check (samples within the bit depth),
// cambi_prep (10-bit conversion at the encode size, anti-dithering),
// cambi_mask (7x7 zero-derivative counts, at the first scale's sampling),
// then per scale cambi_scale (2:1 decimation of the previous scale and the
// 3x3 mode filter) and cambi_cvalues (window counts -> c-values). The top-k
// mean is found exactly: cambi_hist / cambi_select pick the k-th largest
// c-value by its float bits (two 16-bit radix levels) and sum the top k as
// integers in units of 2^-24, which every non-zero c-value (>= 0.5) is a
// multiple of. The CPU turns that sum into the double libvmaf's sequential
// sum gives whenever the total is below 2^29 (every partial sum is then
// exact); otherwise it reads the c-values back and pools them itself.
#include "vmafhip_prelude.h"

template <typename In>
__device__ void check_impl(const In* src, int n, int bpc, u32* bad) {
    const int i = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    if (i < n && ((u32)src[i] >> bpc) != 0) atomicOr(bad, 1u);
}
VMAF_KERNEL void cambi_check_8(const u8* src, int n, int bpc, u32* bad) {
    check_impl<u8>(src, n, bpc, bad);
}
VMAF_KERNEL void cambi_check_16(const u16* src, int n, int bpc, u32* bad) {
    check_impl<u16>(src, n, bpc, bad);
}

// 10-bit value of encode-size sample (r, c): nearest source sample through
// the row/column tables the host built with libvmaf's float stepping.
template <typename In>
__device__ __forceinline__ u32 conv10(const In* src, int w, const int* rows, const int* cols,
                                      int r, int c, int bpc) {
    const u32 v = src[(size_t)rows[r] * w + cols[c]];
    if (bpc >= 10) {
        const int shift = bpc - 10;
        const u32 round = shift == 0 ? 0u : (1u << (shift - 1));
        return (v + round) >> shift;
    }
    return v << (10 - bpc);
}

template <typename In>
__device__ void prep_impl(const In* src, int w, const int* rows, const int* cols, int ew, int eh,
                          int bpc, int dither, u16* out) {
    const int c = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int r = blockIdx.y;
    if (c >= ew) return;
    u32 v = conv10<In>(src, w, rows, cols, r, c, bpc);
    if (dither) {
        const bool last_r = r == eh - 1, last_c = c == ew - 1;
        if (!last_r && !last_c) {
            v = (v + conv10<In>(src, w, rows, cols, r, c + 1, bpc) +
                 conv10<In>(src, w, rows, cols, r + 1, c, bpc) +
                 conv10<In>(src, w, rows, cols, r + 1, c + 1, bpc)) >> 2;
        } else if (!last_r) {
            v = (v + conv10<In>(src, w, rows, cols, r + 1, c, bpc)) >> 1;
        } else if (!last_c) {
            v = (v + conv10<In>(src, w, rows, cols, r, c + 1, bpc)) >> 1;
        }
    }
    out[(size_t)r * ew + c] = (u16)v;
}
VMAF_KERNEL void cambi_prep_8(const u8* src, int w, const int* rows, const int* cols, int ew,
                              int eh, int bpc, int dither, u16* out) {
    prep_impl<u8>(src, w, rows, cols, ew, eh, bpc, dither, out);
}
VMAF_KERNEL void cambi_prep_16(const u16* src, int w, const int* rows, const int* cols, int ew,
                               int eh, int bpc, int dither, u16* out) {
    prep_impl<u16>(src, w, rows, cols, ew, eh, bpc, dither, out);
}

// Zero derivative: equal to the right and lower neighbours (edges count as equal).
__device__ __forceinline__ u32 zero_deriv(const u16* img, int w, int h, int r, int c) {
    const u16 v = img[(size_t)r * w + c];
    const bool hz = c == w - 1 || v == img[(size_t)r * w + c + 1];
    const bool vt = r == h - 1 || v == img[(size_t)(r + 1) * w + c];
    return (hz && vt) ? 1u : 0u;
}

// Spatial mask at (step*i, step*j) of the w x h image: more than `threshold`
// zero-derivative pixels in the 7x7 window, clipped to the image.
VMAF_KERNEL void cambi_mask(const u16* img, int w, int h, int step, int mw, int mh,
                            u32 threshold, u8* mask) {
    const int j = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = blockIdx.y;
    if (j >= mw) return;
    const int r0 = i * step, c0 = j * step;
    u32 n = 0;
    for (int r = r0 - 3; r <= r0 + 3; ++r) {
        if (r < 0 || r >= h) continue;
        for (int c = c0 - 3; c <= c0 + 3; ++c) {
            if (c < 0 || c >= w) continue;
            n += zero_deriv(img, w, h, r, c);
        }
    }
    mask[(size_t)i * mw + j] = n > threshold ? 1 : 0;
}

__device__ __forceinline__ u16 mode3(u16 a, u16 b, u16 c) {
    if (a == b || a == c) return a;
    if (b == c) return b;
    u16 m = a < b ? a : b;
    return m < c ? m : c;
}

// Sample (r, c) of this scale before filtering: the previous scale at
// (2r, 2c) when decimating, else the source itself.
__device__ __forceinline__ u16 dec_at(const u16* src, int sw, int dec, int r, int c) {
    return dec ? src[(size_t)(2 * r) * sw + 2 * c] : src[(size_t)r * sw + c];
}

__device__ __forceinline__ u16 hmode(const u16* src, int sw, int dec, int w, int r, int c) {
    if (c == 0 || c == w - 1) return dec_at(src, sw, dec, r, c);
    return mode3(dec_at(src, sw, dec, r, c - 1), dec_at(src, sw, dec, r, c),
                 dec_at(src, sw, dec, r, c + 1));
}

// One scale's image: (decimation and) the separable 3x3 mode filter;
// the first and last rows stay unfiltered, as in libvmaf's filter_mode.
VMAF_KERNEL void cambi_scale(const u16* src, int sw, int dec, int w, int h, u16* dst) {
    const int c = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int r = blockIdx.y;
    if (c >= w) return;
    u16 v;
    if (r == 0 || r == h - 1) {
        v = dec_at(src, sw, dec, r, c);
    } else {
        v = mode3(hmode(src, sw, dec, w, r - 1, c), hmode(src, sw, dec, w, r, c),
                  hmode(src, sw, dec, w, r + 1, c));
    }
    dst[(size_t)r * w + c] = v;
}

// Contrast weights of libvmaf's g_contrast_weights.
__constant__ u32 CAMBI_CONTRAST_WEIGHTS[32] = {1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8,
                                               8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};

// c-value of each pixel of a w x h scale. `mask` is the first scale's mask
// (mw wide); this scale samples it every `ms` pixels. tvi[d] is the gate of
// contrast step d + 1 (in value + num_diffs units).
VMAF_KERNEL void cambi_cvalues(const u16* img, const u8* mask, int mw, int ms, int w, int h,
                               int pad, const u16* tvi, int num_diffs, int vlt, int band_base,
                               int band_size, const float* recip, float* out) {
    const int j = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = blockIdx.y;
    if (j >= w) return;
    float cval = 0.0f;
    const int v = img[(size_t)i * w + j];
    const int compact = v - band_base;
    if (mask[(size_t)(i * ms) * mw + j * ms] && compact >= 0 && compact < band_size) {
        // counts[k] = masked in-band pixels of value v + k - num_diffs (k <= 2 * 32).
        u32 counts[65];
        for (int k = 0; k <= 2 * num_diffs; ++k) counts[k] = 0;
        const int r_lo = i - pad < 0 ? 0 : i - pad, r_hi = i + pad >= h ? h - 1 : i + pad;
        const int c_lo = j - pad < 0 ? 0 : j - pad, c_hi = j + pad >= w ? w - 1 : j + pad;
        for (int r = r_lo; r <= r_hi; ++r) {
            for (int c = c_lo; c <= c_hi; ++c) {
                const int u = img[(size_t)r * w + c];
                const int d = u - v + num_diffs;
                if (d < 0 || d > 2 * num_diffs) continue;
                if (u - band_base < 0 || u - band_base >= band_size) continue;
                if (!mask[(size_t)(r * ms) * mw + c * ms]) continue;
                counts[d] += 1;
            }
        }
        const int value = v + num_diffs;
        const u32 p0 = counts[num_diffs];
        for (int d = 0; d < num_diffs; ++d) {
            const int step = d + 1;
            if (value <= (int)tvi[d] && value + step > vlt) {
                const u32 p1 = counts[num_diffs + step];
                const u32 p2 = counts[num_diffs - step];
                const u32 p = p1 > p2 ? p1 : p2;
                const float val =
                    (float)(CAMBI_CONTRAST_WEIGHTS[d] * p0 * p) * recip[p + p0];
                if (val > cval) cval = val;
            }
        }
    }
    out[(size_t)i * w + j] = cval;
}

// A c-value in units of 2^-24 (exact: every non-zero c-value is >= 0.5);
// `inexact` becomes true for a non-zero value below 0.5.
__device__ __forceinline__ u64 units24(u32 bits, bool& inexact) {
    if (bits == 0) return 0;
    const int e = (int)(bits >> 23);
    if (e < 126) {
        inexact = true;
        return 0;
    }
    const u64 mant = (u64)((bits & 0x7fffffu) | 0x800000u);
    return mant << (e - 126);
}

// Level 1: count and sum per high 16 bits of every value. Level 2: the
// same per low 16 bits, of the values whose high bits are state[1] (the
// bin level 1 chose). total[1] is set when a value cannot be summed exactly.
VMAF_KERNEL void cambi_hist(const float* c, int n, int level, const u32* state, u32* cnt, u64* sum,
                            u64* total) {
    const int i = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    if (i >= n) return;
    const u32 bits = __float_as_uint(c[i]);
    int bin;
    if (level == 1) {
        bin = (int)(bits >> 16);
    } else {
        if ((bits >> 16) != state[1]) return;
        bin = (int)(bits & 0xffffu);
    }
    bool inexact = false;
    const u64 units = units24(bits, inexact);
    if (inexact) total[1] = 1;
    atomicAdd(&cnt[bin], 1u);
    atomic_add_u64(&sum[bin], units);
}

// Finds the bin holding the k-th largest value of a 65536-bin histogram
// (level 1: k = k_first; level 2: the k left in state[0]); state[1] is the
// chosen bin of level 1 (the high bits); total[0] += the sum of everything
// above the chosen bin. One block of 256 threads. At level 2 the k values
// still to take all equal the chosen bin's value, which closes the sum.
VMAF_KERNEL void cambi_select(const u32* cnt, const u64* sum, int level, u32 k_first, u32* state,
                              u64* total) {
    __shared__ u32 chunk_cnt[VMAF_BLOCK];
    __shared__ u64 chunk_sum[VMAF_BLOCK];
    const int t = threadIdx.x;
    const int per = 65536 / VMAF_BLOCK;
    u32 cc = 0;
    u64 cs = 0;
    for (int b = t * per; b < (t + 1) * per; ++b) {
        cc += cnt[b];
        cs += sum[b];
    }
    chunk_cnt[t] = cc;
    chunk_sum[t] = cs;
    __syncthreads();
    if (t != 0) return;
    u32 k = level == 1 ? k_first : state[0];
    u64 above = 0;
    int chosen = -1;
    for (int ch = VMAF_BLOCK - 1; ch >= 0 && chosen < 0; --ch) {
        if (chunk_cnt[ch] < k) {
            k -= chunk_cnt[ch];
            above += chunk_sum[ch];
            continue;
        }
        for (int b = (ch + 1) * per - 1; b >= ch * per; --b) {
            if (cnt[b] < k) {
                k -= cnt[b];
                above += sum[b];
            } else {
                chosen = b;
                break;
            }
        }
    }
    total[0] += above;
    if (level == 1) {
        state[0] = k;
        state[1] = (u32)chosen;
    } else {
        // Every value in the chosen (full-bits) bin is the threshold itself.
        const u32 bits = (state[1] << 16) | (u32)chosen;
        bool inexact = false;
        total[0] += (u64)k * units24(bits, inexact);
        if (inexact) total[1] = 1;
    }
}
