// Sum of squared errors of one plane, libvmaf integer_psnr.c.
// CPU twin: cpu.rs `sse_plane`.
#include "vmafhip_prelude.h"

template <typename In>
__device__ void sse_impl(const In* r, const In* d, int w, int h, u64* out) {
    __shared__ u64 red[VMAF_BLOCK];
    const int y = blockIdx.y;
    const int x = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    u64 v[1] = {0};
    if (x < w && y < h) {
        const i64 e = (i64)r[(size_t)y * w + x] - (i64)d[(size_t)y * w + x];
        v[0] = (u64)(e * e);
    }
    block_sum<u64, 1>(v, red);
    if (threadIdx.x == 0) atomic_add_u64(out, v[0]);
}

VMAF_KERNEL void psnr_sse_8(const u8* r, const u8* d, int w, int h, u64* out) {
    sse_impl<u8>(r, d, w, h, out);
}
VMAF_KERNEL void psnr_sse_16(const u16* r, const u16* d, int w, int h, u64* out) {
    sse_impl<u16>(r, d, w, h, out);
}
