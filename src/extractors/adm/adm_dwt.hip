// ADM's db2 DWT, libvmaf integer_adm.c: adm_dwt2_8 / adm_dwt2_16 (scale 0,
// int16 results) and adm_dwt2_s123_combined (scales 1..3, int32).
// CPU twins: cpu.rs `dwt_scale0` and `dwt_s123`.
//
// One thread per band sample; blockIdx.z picks reference (0) or distorted
// (1). The four source rows/columns of each output come from index tables
// the host builds with the CPU's `dwt_indices` (mirror rules included).
// Bands are stored a, v, h, d, each bw*bh int32, one after the other.
#include "vmafhip_prelude.h"

__constant__ i32 DWT_LO[4] = {15826, 27411, 7345, -4240};
__constant__ i32 DWT_HI[4] = {-4240, -7345, 27411, -15826};

template <typename In>
__device__ void dwt0_impl(const In* src, i32* bands, int w, int h, int bw, int bh, const int* ix,
                          const int* iy, int shift, i32 round, i32 centre) {
    const int j = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = blockIdx.y;
    if (j >= bw || i >= bh) return;
    i32 lo[4], hi[4];
    for (int q = 0; q < 4; ++q) {
        const int c = ix[4 * j + q];
        u32 l = 0, hh = 0;
        for (int k = 0; k < 4; ++k) {
            const u32 s = (u32)src[(size_t)iy[4 * i + k] * w + c];
            l += (u32)DWT_LO[k] * s;
            hh += (u32)DWT_HI[k] * s;
        }
        l -= (u32)centre;
        lo[q] = (i32)(i16)(wrap_add((i32)l, round) >> shift);
        hi[q] = (i32)(i16)(wrap_add((i32)hh, round) >> shift);
    }
    i64 a = 0, v = 0, hz = 0, d = 0;
    for (int k = 0; k < 4; ++k) {
        a += (i64)DWT_LO[k] * lo[k];
        v += (i64)DWT_HI[k] * lo[k];
        hz += (i64)DWT_LO[k] * hi[k];
        d += (i64)DWT_HI[k] * hi[k];
    }
    const size_t n = (size_t)bw * bh, at = (size_t)i * bw + j;
    bands[at] = (i32)(i16)((a + 32768) >> 16);
    bands[n + at] = (i32)(i16)((v + 32768) >> 16);
    bands[2 * n + at] = (i32)(i16)((hz + 32768) >> 16);
    bands[3 * n + at] = (i32)(i16)((d + 32768) >> 16);
}

#define DWT0_ARGS i32* bands_ref, i32* bands_dis, int w, int h, int bw, int bh, const int* ix, const int* iy, int shift, int round, int centre

VMAF_KERNEL void adm_dwt0_8(const u8* ref, const u8* dis, DWT0_ARGS) {
    const bool d = blockIdx.z == 1;
    dwt0_impl<u8>(d ? dis : ref, d ? bands_dis : bands_ref, w, h, bw, bh, ix, iy, shift, round, centre);
}
VMAF_KERNEL void adm_dwt0_16(const u16* ref, const u16* dis, DWT0_ARGS) {
    const bool d = blockIdx.z == 1;
    dwt0_impl<u16>(d ? dis : ref, d ? bands_dis : bands_ref, w, h, bw, bh, ix, iy, shift, round, centre);
}

// Scales 1..3: the input is the previous scale's `a` band (w x h int32).
VMAF_KERNEL void adm_dwt123(const i32* src_ref, const i32* src_dis, i32* bands_ref, i32* bands_dis,
                            int w, int h, int bw, int bh, const int* ix, const int* iy,
                            long long v_add, int v_shift, long long h_add, int h_shift) {
    const bool dz = blockIdx.z == 1;
    const i32* src = dz ? src_dis : src_ref;
    i32* bands = dz ? bands_dis : bands_ref;
    const int j = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = blockIdx.y;
    if (j >= bw || i >= bh) return;
    i32 lo[4], hi[4];
    for (int q = 0; q < 4; ++q) {
        const int c = ix[4 * j + q];
        i64 l = 0, hh = 0;
        for (int k = 0; k < 4; ++k) {
            const i64 s = src[(size_t)iy[4 * i + k] * w + c];
            l += (i64)DWT_LO[k] * s;
            hh += (i64)DWT_HI[k] * s;
        }
        lo[q] = (i32)((l + v_add) >> v_shift);
        hi[q] = (i32)((hh + v_add) >> v_shift);
    }
    i64 a = 0, v = 0, hz = 0, d = 0;
    for (int k = 0; k < 4; ++k) {
        a += (i64)DWT_LO[k] * lo[k];
        v += (i64)DWT_HI[k] * lo[k];
        hz += (i64)DWT_LO[k] * hi[k];
        d += (i64)DWT_HI[k] * hi[k];
    }
    const size_t n = (size_t)bw * bh, at = (size_t)i * bw + j;
    bands[at] = (i32)((a + h_add) >> h_shift);
    bands[n + at] = (i32)((v + h_add) >> h_shift);
    bands[2 * n + at] = (i32)((hz + h_add) >> h_shift);
    bands[3 * n + at] = (i32)((d + h_add) >> h_shift);
}
