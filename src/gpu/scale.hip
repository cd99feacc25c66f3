// Scaling a rendition to the reference's size: a separable filter with
// 14-bit integer weights. CPU twin: src/core/scale.rs (`scale_plane`).
//
// The horizontal pass keeps each source row's full sums (int32: |sum| <
// 65535 * 1.3 * 16384 < 2^31); the vertical pass sums those in int64 and
// rounds once, so the samples equal the CPU's whatever the order of the
// additions. Taps past an edge read the edge sample.
#include "vmafhip_prelude.h"

// Index `i` held inside 0..n-1 (the edge sample repeats).
__device__ __forceinline__ int edge_clamp(int i, int n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

template <typename In>
__device__ void scale_h_impl(const In* src, int src_pitch, int src_w, int rows, const i32* start,
                             const i32* weights, int taps, int dst_w, i32* sums) {
    const int x = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= dst_w || y >= rows) return;
    const In* row = src + (size_t)y * src_pitch;
    const int s0 = start[x];
    const i32* w = weights + (size_t)x * taps;
    i32 acc = 0;
    for (int t = 0; t < taps; ++t) {
        const int j = edge_clamp(s0 + t, src_w);
        acc += w[t] * (i32)row[j];
    }
    sums[(size_t)y * dst_w + x] = acc;
}

template <typename Out>
__device__ void scale_v_impl(const i32* sums, int dst_w, int src_h, const i32* start,
                             const i32* weights, int taps, int dst_h, int max_value, Out* out) {
    const int x = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= dst_w || y >= dst_h) return;
    const int s0 = start[y];
    const i32* w = weights + (size_t)y * taps;
    i64 acc = 0;
    for (int t = 0; t < taps; ++t) {
        const int i = edge_clamp(s0 + t, src_h);
        acc += (i64)w[t] * (i64)sums[(size_t)i * dst_w + x];
    }
    i64 v = (acc + ((i64)1 << 27)) >> 28;
    v = v < 0 ? 0 : (v > max_value ? max_value : v);
    out[(size_t)y * dst_w + x] = (Out)v;
}

VMAF_KERNEL void scale_h_8(const u8* src, int src_pitch, int src_w, int rows, const i32* start,
                           const i32* weights, int taps, int dst_w, i32* sums) {
    scale_h_impl<u8>(src, src_pitch, src_w, rows, start, weights, taps, dst_w, sums);
}
VMAF_KERNEL void scale_h_16(const u16* src, int src_pitch, int src_w, int rows, const i32* start,
                            const i32* weights, int taps, int dst_w, i32* sums) {
    scale_h_impl<u16>(src, src_pitch, src_w, rows, start, weights, taps, dst_w, sums);
}
VMAF_KERNEL void scale_v_8(const i32* sums, int dst_w, int src_h, const i32* start,
                           const i32* weights, int taps, int dst_h, int max_value, u8* out) {
    scale_v_impl<u8>(sums, dst_w, src_h, start, weights, taps, dst_h, max_value, out);
}
VMAF_KERNEL void scale_v_16(const i32* sums, int dst_w, int src_h, const i32* start,
                            const i32* weights, int taps, int dst_h, int max_value, u16* out) {
    scale_v_impl<u16>(sums, dst_w, src_h, start, weights, taps, dst_h, max_value, out);
}

// One plane of NV12's interleaved chroma (every other byte of `src`, whose
// address already points at the plane's first sample) into packed rows of
// `w` samples: how GPU-decoded frames give the chroma metrics planar input.
VMAF_KERNEL void split_interleaved_8(const u8* src, int src_pitch, int w, int h, u8* dst) {
    const int x = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= w || y >= h) return;
    dst[(size_t)y * w + x] = src[(size_t)y * src_pitch + 2 * (size_t)x];
}

// One plane of 16-bit samples into packed rows of `w`: every `step`th
// sample of each row (2 for P010's interleaved chroma, whose address
// already points at the plane's first sample), shifted down by `shift`
// (P010 keeps 10 bits in the high bits of 16).
VMAF_KERNEL void unpack_16(const u8* src, int src_pitch, int w, int h, int step, int shift,
                           u16* dst) {
    const int x = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= w || y >= h) return;
    const u16* row = (const u16*)(src + (size_t)y * src_pitch);
    dst[(size_t)y * w + x] = (u16)(row[(size_t)x * step] >> shift);
}
