// Integer motion SAD, libvmaf integer_motion.c (pipelined v2): the 5-tap
// blur of (prev - cur), vertical then horizontal, |.| summed.
// CPU twin: src/vmaf/features/motion.rs `motion_sad`.
//
// One block per (row, 256-column chunk). Row sums cannot wrap a uint32 for
// widths up to 65537 (|v| <= 65535), so summing chunks in 64 bits equals
// libvmaf's per-row uint32 sum; the engine refuses wider frames.
#include "vmafhip_prelude.h"

__constant__ i32 MOTION_FILTER[5] = {3571, 16004, 26386, 16004, 3571};

template <typename In>
__device__ void motion_sad_impl(const In* prev, const In* cur, int w, int h, int shift,
                                u64* out) {
    __shared__ i32 y_row[VMAF_BLOCK + 4];
    __shared__ u64 red[VMAF_BLOCK];
    const int i = blockIdx.y;
    const int j0 = blockIdx.x * VMAF_BLOCK;
    const i64 round = (i64)1 << (shift - 1);
    for (int t = threadIdx.x; t < VMAF_BLOCK + 4; t += VMAF_BLOCK) {
        const int c = j0 - 2 + t;
        i32 y = 0;
        if (c < w + 2) {
            const int cc = mirror_r101(c, w);
            i64 acc = 0;
            for (int k = 0; k < 5; ++k) {
                const int r = mirror_r101(i - 2 + k, h);
                acc += (i64)MOTION_FILTER[k] *
                       ((i64)prev[(size_t)r * w + cc] - (i64)cur[(size_t)r * w + cc]);
            }
            y = (i32)((acc + round) >> shift);
        }
        y_row[t] = y;
    }
    __syncthreads();
    u64 v[1] = {0};
    const int j = j0 + threadIdx.x;
    if (j < w) {
        i64 a = 0;
        for (int k = 0; k < 5; ++k) a += (i64)MOTION_FILTER[k] * (i64)y_row[threadIdx.x + k];
        const i32 s = (i32)((a + 32768) >> 16);
        v[0] = (u64)(u32)wrap_abs(s);
    }
    block_sum<u64, 1>(v, red);
    if (threadIdx.x == 0) atomic_add_u64(out, v[0]);
}

VMAF_KERNEL void motion_sad_8(const u8* prev, const u8* cur, int w, int h, int shift, u64* out) {
    motion_sad_impl<u8>(prev, cur, w, h, shift, out);
}
VMAF_KERNEL void motion_sad_16(const u16* prev, const u16* cur, int w, int h, int shift, u64* out) {
    motion_sad_impl<u16>(prev, cur, w, h, shift, out);
}
