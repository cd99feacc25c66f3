// Integer motion SAD, libvmaf integer_motion.c (pipelined v2): the 5-tap
// blur of (prev - cur), vertical then horizontal, |.| summed.
// CPU twin: cpu.rs `motion_sad`.
//
// One block per (`rows` rows, 256-column chunk). Row sums cannot wrap a uint32 for
// widths up to 65537 (|v| <= 65535), so summing chunks in 64 bits equals
// libvmaf's per-row uint32 sum; the engine refuses wider frames.
#include "vmafhip_prelude.h"

__constant__ i32 MOTION_FILTER[5] = {3571, 16004, 26386, 16004, 3571};

// `Acc` holds the vertical sum: int32 for 8-bit input (|sum| < 65536 * 255),
// int64 otherwise. Each block covers `rows` consecutive rows of its chunk
// (one block sum for all of them).
template <typename In, typename Acc>
__device__ void motion_sad_impl(const In* prev, const In* cur, int w, int h, int shift, int rows,
                                u64* out) {
    __shared__ i32 y_row[VMAF_BLOCK + 4];
    __shared__ u64 red[VMAF_BLOCK];
    const int j0 = blockIdx.x * VMAF_BLOCK;
    const Acc round = (Acc)1 << (shift - 1);
    u64 v[1] = {0};
    for (int r = 0; r < rows; ++r) {
        const int i = blockIdx.y * rows + r;
        if (i >= h) break;
        // The previous row's horizontal pass is done with y_row.
        if (r > 0) __syncthreads();
        for (int t = threadIdx.x; t < VMAF_BLOCK + 4; t += VMAF_BLOCK) {
            const int c = j0 - 2 + t;
            i32 y = 0;
            if (c < w + 2) {
                const int cc = mirror_r101(c, w);
                Acc acc = 0;
                for (int k = 0; k < 5; ++k) {
                    const int rr = mirror_r101(i - 2 + k, h);
                    acc += (Acc)MOTION_FILTER[k] *
                           ((Acc)prev[(size_t)rr * w + cc] - (Acc)cur[(size_t)rr * w + cc]);
                }
                y = (i32)((acc + round) >> shift);
            }
            y_row[t] = y;
        }
        __syncthreads();
        const int j = j0 + threadIdx.x;
        if (j < w) {
            i64 a = 0;
            for (int k = 0; k < 5; ++k) a += (i64)MOTION_FILTER[k] * (i64)y_row[threadIdx.x + k];
            const i32 s = (i32)((a + 32768) >> 16);
            v[0] += (u64)(u32)wrap_abs(s);
        }
    }
    block_sum<u64, 1>(v, red);
    if (threadIdx.x == 0) atomic_add_u64(out, v[0]);
}

VMAF_KERNEL void motion_sad_8(const u8* prev, const u8* cur, int w, int h, int shift, int rows,
                              u64* out) {
    motion_sad_impl<u8, i32>(prev, cur, w, h, shift, rows, out);
}
VMAF_KERNEL void motion_sad_16(const u16* prev, const u16* cur, int w, int h, int shift, int rows,
                               u64* out) {
    motion_sad_impl<u16, i64>(prev, cur, w, h, shift, rows, out);
}
