// VIF scale change, libvmaf integer_vif.c (subsample_rd_8 / subsample_rd_16
// + decimate_and_pad): low-pass with the new scale's filter, keep even
// samples. CPU twin: cpu.rs `Vif::decimate`.
//
// blockIdx.z picks reference (0) or distorted (1).
#include "vmafhip_prelude.h"

__constant__ u16 DEC_F1[9] = {1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244};
__constant__ u16 DEC_F2[5] = {3571, 16004, 26386, 16004, 3571};
__constant__ u16 DEC_F3[3] = {10904, 43728, 10904};

// One block: 256 kept samples of one output row. The vertical filter runs
// once per input column the block's outputs read (2 * 256 - 1 + N - 1
// columns, into shared memory), the horizontal filter reads those sums, so
// each input sample is loaded N times per output row instead of N * N.
#define DEC_COLS (2 * VMAF_BLOCK + 8)
template <typename In, int N>
__device__ void decimate_impl(const In* src, u16* dst, int w, int h, int v_shift, int keep_u32,
                              const u16* f, u32* vs) {
    const int half = N / 2;
    const int ow = w / 2, oh = h / 2;
    const int oi = blockIdx.y;
    const int oj0 = blockIdx.x * VMAF_BLOCK;
    const int c0 = 2 * oj0 - half;
    // The last input column any kept sample of this image reads.
    const int c_last = 2 * (ow - 1) + half;
    const u32 v_round = 1u << (v_shift - 1);
    if (oi < oh) {
        for (int t = threadIdx.x; t < 2 * VMAF_BLOCK - 1 + 2 * half; t += VMAF_BLOCK) {
            const int c = c0 + t;
            if (c > c_last) break;
            const int col = mirror_r101(c, w);
            u32 v = 0;
            for (int ky = 0; ky < N; ++ky) {
                const int row = mirror_r101(2 * oi - half + ky, h);
                v += (u32)f[ky] * (u32)src[(size_t)row * w + col];
            }
            v = (v + v_round) >> v_shift;
            // 8-bit first decimation keeps a uint32 row; every other one stores uint16.
            if (!keep_u32) v = (u16)v;
            vs[t] = v;
        }
    }
    __syncthreads();
    const int oj = oj0 + threadIdx.x;
    if (oj >= ow || oi >= oh) return;
    u32 acc = 0;
    for (int kx = 0; kx < N; ++kx) acc += (u32)f[kx] * vs[2 * threadIdx.x + kx];
    dst[(size_t)oi * ow + oj] = (u16)((acc + 32768) >> 16);
}

// First decimation (to scale 1) of 8-bit pixels.
VMAF_KERNEL void vif_decimate_8(const u8* ref, const u8* dis, u16* out_ref, u16* out_dis, int w,
                                int h, int v_shift, int keep_u32) {
    __shared__ u32 vs[DEC_COLS];
    const bool d = blockIdx.z == 1;
    decimate_impl<u8, 9>(d ? dis : ref, d ? out_dis : out_ref, w, h, v_shift, keep_u32, DEC_F1, vs);
}

// Any decimation of 16-bit samples; `new_scale` picks the filter.
VMAF_KERNEL void vif_decimate_16(const u16* ref, const u16* dis, u16* out_ref, u16* out_dis, int w,
                                 int h, int v_shift, int keep_u32, int new_scale) {
    __shared__ u32 vs[DEC_COLS];
    const bool d = blockIdx.z == 1;
    const u16* s = d ? dis : ref;
    u16* o = d ? out_dis : out_ref;
    switch (new_scale) {
    case 1: decimate_impl<u16, 9>(s, o, w, h, v_shift, keep_u32, DEC_F1, vs); break;
    case 2: decimate_impl<u16, 5>(s, o, w, h, v_shift, keep_u32, DEC_F2, vs); break;
    default: decimate_impl<u16, 3>(s, o, w, h, v_shift, keep_u32, DEC_F3, vs); break;
    }
}
