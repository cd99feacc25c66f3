// CAMBI (libvmaf feature/cambi.c). CPU twin: cpu.rs.
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

// c-value of each pixel of a w x h scale. `mask` is the first scale's mask
// (mw wide); this scale samples it every `ms` pixels. tvi[d] is the gate of
// contrast step d + 1 (in value + num_diffs units).
//
// A block computes a 32x8 tile. Its window neighbourhood goes to shared
// memory once, as the value of each masked in-band pixel and 0xffff for the
// others (which never lies within num_diffs of a value in band). With the
// default num_diffs of 4, the nine counts of values v-4..v+4 are kept as
// 7-bit fields of one 64-bit register per window row, then added up.
#define CAMBI_TW 32
#define CAMBI_TH 8

__device__ __forceinline__ float cvalue_from_counts(const u32* counts, int num_diffs, int v,
                                                    const u16* tvi, int vlt, const float* recip) {
    float cval = 0.0f;
    const int value = v + num_diffs;
    const u32 p0 = counts[num_diffs];
    for (int d = 0; d < num_diffs; ++d) {
        const int step = d + 1;
        if (value <= (int)tvi[d] && value + step > vlt) {
            const u32 p1 = counts[num_diffs + step];
            const u32 p2 = counts[num_diffs - step];
            const u32 p = p1 > p2 ? p1 : p2;
            const float val = (float)(CAMBI_CONTRAST_WEIGHTS[d] * p0 * p) * recip[p + p0];
            if (val > cval) cval = val;
        }
    }
    return cval;
}

VMAF_KERNEL void cambi_cvalues(const u16* img, const u8* mask, int mw, int ms, int w, int h,
                               int pad, const u16* tvi, int num_diffs, int vlt, int band_base,
                               int band_size, const float* recip, float* out) {
    VMAF_DYNAMIC_SHARED(u16, tile);
    const int tw = CAMBI_TW + 2 * pad, th = CAMBI_TH + 2 * pad;
    const int x0 = blockIdx.x * CAMBI_TW - pad, y0 = blockIdx.y * CAMBI_TH - pad;
    for (int e = threadIdx.x; e < tw * th; e += VMAF_BLOCK) {
        const int r = y0 + e / tw, c = x0 + e % tw;
        u16 u = 0xffff;
        if (r >= 0 && r < h && c >= 0 && c < w && mask[(size_t)(r * ms) * mw + c * ms]) {
            const int val = img[(size_t)r * w + c];
            if (val - band_base >= 0 && val - band_base < band_size) u = (u16)val;
        }
        tile[e] = u;
    }
    __syncthreads();
    const int tx = threadIdx.x % CAMBI_TW, ty = threadIdx.x / CAMBI_TW;
    const int j = blockIdx.x * CAMBI_TW + tx, i = blockIdx.y * CAMBI_TH + ty;
    if (j >= w || i >= h) return;
    const int v = tile[(ty + pad) * tw + tx + pad];
    float cval = 0.0f;
    if (v != 0xffff) {
        u32 counts[65];
        if (num_diffs == 4) {
            u32 c9[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
            for (int r = 0; r <= 2 * pad; ++r) {
                const u16* row = tile + (ty + r) * tw + tx;
                u64 packed = 0;
                for (int c = 0; c <= 2 * pad; ++c) {
                    const u32 ud = (u32)((int)row[c] - v + 4);
                    packed += ud <= 8u ? (1ull << (ud * 7u)) : 0ull;
                }
#pragma unroll
                for (int k = 0; k < 9; ++k) c9[k] += (u32)((packed >> (7 * k)) & 127u);
            }
#pragma unroll
            for (int k = 0; k < 9; ++k) counts[k] = c9[k];
        } else {
            for (int k = 0; k <= 2 * num_diffs; ++k) counts[k] = 0;
            for (int r = 0; r <= 2 * pad; ++r) {
                const u16* row = tile + (ty + r) * tw + tx;
                for (int c = 0; c <= 2 * pad; ++c) {
                    const u32 ud = (u32)((int)row[c] - v + num_diffs);
                    if (ud <= (u32)(2 * num_diffs)) counts[ud] += 1;
                }
            }
        }
        cval = cvalue_from_counts(counts, num_diffs, v, tvi, vlt, recip);
    }
    out[(size_t)i * w + j] = cval;
}

// ---- Exact top-k sum of the five scales' c-values (one picture) ----
//
// Non-zero c-values are >= 0.5 and < 2^14, so key = bits - bits(0.5) is
// below 2^27 and orders them. Three 9-bit radix levels find the k-th
// largest key per scale (zeros never enter: when fewer than k values are
// non-zero the rest of the top k is zero). `seg` holds each scale's first
// index (seg[5] = total); hist is 5 x 512 u32; state per scale is
// {k left, key prefix, level reached, all (fewer than k non-zero)}.

__device__ __forceinline__ int scale_of(const int* seg, int i) {
    int s = 0;
    while (s < 4 && i >= seg[s + 1]) ++s;
    return s;
}

// One level's histogram: values whose key matches the prefix found so far.
VMAF_KERNEL void cambi_radix_hist(const float* c, const int* seg, int level, const u32* state,
                                  u32* hist, u64* total) {
    __shared__ u32 local[512];
    for (int b = threadIdx.x; b < 512; b += VMAF_BLOCK) local[b] = 0;
    __syncthreads();
    const int i = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    // A block spans at most two scales; its shared histogram serves the
    // scale of its first element and the rest go straight to global memory.
    const int s0 = scale_of(seg, blockIdx.x * VMAF_BLOCK < seg[5] ? blockIdx.x * VMAF_BLOCK : seg[5] - 1);
    if (i < seg[5]) {
        const u32 bits = __float_as_uint(c[i]);
        const int s = scale_of(seg, i);
        if (bits != 0) {
            if (bits < 0x3f000000u) {
                total[2 * s + 1] = 1;  // a non-zero value below 0.5: not a multiple of 2^-24
            } else if (!state[4 * s + 3]) {
                const u32 key = bits - 0x3f000000u;
                const int shift = 18 - 9 * (level - 1);
                const u32 prefix = level == 1 ? 0u : state[4 * s + 1];
                if ((key >> (shift + 9)) == prefix || level == 1) {
                    const u32 bin = (key >> shift) & 511u;
                    if (s == s0) atomicAdd(&local[bin], 1u);
                    else atomicAdd(&hist[s * 512 + bin], 1u);
                }
            }
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 512; b += VMAF_BLOCK)
        if (local[b]) atomicAdd(&hist[s0 * 512 + b], local[b]);
}

// One block per scale: the bin holding the k-th largest key at this level.
VMAF_KERNEL void cambi_radix_select(const u32* kfirst, int level, u32* state, u32* hist) {
    const int s = blockIdx.x;
    if (threadIdx.x != 0) return;
    u32* st = state + 4 * s;
    if (level == 1) {
        st[0] = kfirst[s];
        st[1] = 0;
        st[3] = 0;
    }
    if (st[3]) return;
    u32 k = st[0];
    int chosen = -1;
    for (int b = 511; b >= 0; --b) {
        const u32 n = hist[s * 512 + b];
        if (n < k) {
            k -= n;
        } else {
            chosen = b;
            break;
        }
    }
    if (chosen < 0) {
        st[3] = 1;  // fewer than k non-zero values: all of them, then zeros
    } else {
        st[0] = k;
        st[1] = (st[1] << 9) | (u32)chosen;
    }
    st[2] = (u32)level;
    for (int b = 0; b < 512; ++b) hist[s * 512 + b] = 0;  // ready for the next level
}

// The sum (in 2^-24 units) and count of values above each scale's
// threshold key (everything non-zero for a scale flagged "all").
VMAF_KERNEL void cambi_radix_sum(const float* c, const int* seg, const u32* state, u64* total,
                                 u32* above) {
    __shared__ u64 sum_sh[5];
    __shared__ u32 cnt_sh[5];
    if (threadIdx.x < 5) {
        sum_sh[threadIdx.x] = 0;
        cnt_sh[threadIdx.x] = 0;
    }
    __syncthreads();
    const int i = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    if (i < seg[5]) {
        const u32 bits = __float_as_uint(c[i]);
        if (bits >= 0x3f000000u) {
            const int s = scale_of(seg, i);
            const u32 key = bits - 0x3f000000u;
            const bool all = state[4 * s + 3] != 0;
            if (all || key > state[4 * s + 1]) {
                bool inexact = false;
                atomicAdd((unsigned long long*)&sum_sh[s], (unsigned long long)units24(bits, inexact));
                if (!all) atomicAdd(&cnt_sh[s], 1u);
            }
        }
    }
    __syncthreads();
    if (threadIdx.x < 5) {
        if (sum_sh[threadIdx.x]) atomic_add_u64(&total[2 * threadIdx.x], sum_sh[threadIdx.x]);
        if (cnt_sh[threadIdx.x]) atomicAdd(&above[threadIdx.x], cnt_sh[threadIdx.x]);
    }
}

// Adds (k − count above) · threshold to each scale's sum.
VMAF_KERNEL void cambi_radix_close(const u32* kfirst, const u32* state, const u32* above, u64* total) {
    const int s = threadIdx.x;
    if (s >= 5 || state[4 * s + 3]) return;
    const u32 key = state[4 * s + 1];
    bool inexact = false;
    total[2 * s] += (u64)(kfirst[s] - above[s]) * units24(key + 0x3f000000u, inexact);
}
