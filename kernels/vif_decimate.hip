// VIF scale change, libvmaf integer_vif.c (subsample_rd_8 / subsample_rd_16
// + decimate_and_pad): low-pass with the new scale's filter, keep even
// samples. CPU twin: src/vmaf/features/vif.rs `Vif::decimate`.
//
// One thread per kept sample; blockIdx.z picks reference (0) or distorted (1).
#include "vmafhip_prelude.h"

__constant__ u16 DEC_F1[9] = {1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244};
__constant__ u16 DEC_F2[5] = {3571, 16004, 26386, 16004, 3571};
__constant__ u16 DEC_F3[3] = {10904, 43728, 10904};

template <typename In, int N>
__device__ void decimate_impl(const In* src, u16* dst, int w, int h, int v_shift, int keep_u32,
                              const u16* f) {
    const int half = N / 2;
    const int ow = w / 2, oh = h / 2;
    const int oj = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int oi = blockIdx.y;
    if (oj >= ow || oi >= oh) return;
    const u32 v_round = 1u << (v_shift - 1);
    u32 acc = 0;
    for (int kx = 0; kx < N; ++kx) {
        const int col = mirror_r101(2 * oj - half + kx, w);
        u32 v = 0;
        for (int ky = 0; ky < N; ++ky) {
            const int row = mirror_r101(2 * oi - half + ky, h);
            v += (u32)f[ky] * (u32)src[(size_t)row * w + col];
        }
        v = (v + v_round) >> v_shift;
        // 8-bit first decimation keeps a uint32 row; every other one stores uint16.
        if (!keep_u32) v = (u16)v;
        acc += (u32)f[kx] * v;
    }
    dst[(size_t)oi * ow + oj] = (u16)((acc + 32768) >> 16);
}

// First decimation (to scale 1) of 8-bit pixels.
VMAF_KERNEL void vif_decimate_8(const u8* ref, const u8* dis, u16* out_ref, u16* out_dis, int w,
                                int h, int v_shift, int keep_u32) {
    const bool d = blockIdx.z == 1;
    decimate_impl<u8, 9>(d ? dis : ref, d ? out_dis : out_ref, w, h, v_shift, keep_u32, DEC_F1);
}

// Any decimation of 16-bit samples; `new_scale` picks the filter.
VMAF_KERNEL void vif_decimate_16(const u16* ref, const u16* dis, u16* out_ref, u16* out_dis, int w,
                                 int h, int v_shift, int keep_u32, int new_scale) {
    const bool d = blockIdx.z == 1;
    const u16* s = d ? dis : ref;
    u16* o = d ? out_dis : out_ref;
    switch (new_scale) {
    case 1: decimate_impl<u16, 9>(s, o, w, h, v_shift, keep_u32, DEC_F1); break;
    case 2: decimate_impl<u16, 5>(s, o, w, h, v_shift, keep_u32, DEC_F2); break;
    default: decimate_impl<u16, 3>(s, o, w, h, v_shift, keep_u32, DEC_F3); break;
    }
}
