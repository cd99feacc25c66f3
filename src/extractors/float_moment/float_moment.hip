// float_moment (libvmaf feature/float_moment.c). CPU twin: cpu.rs `luma_sums`.
//
// fm_sums: per luma sample of both pictures, the sample and its square,
// each square rounded to float as libvmaf's float multiply rounds it, all
// kept as whole numbers; four u64 sums. Integer
// sums, so the order of the additions never changes them.
#include "vmafhip_prelude.h"

__device__ __forceinline__ u64 fm_float_square(i32 v) {
    const float f = (float)v;
    return (u64)(f * f);
}

template <typename In>
__device__ void fm_sums_impl(const In* r, const In* d, int w, int h, u64* out) {
    __shared__ u64 red[4 * VMAF_BLOCK];
    const int y = blockIdx.y;
    const int x = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    u64 v[4] = {0, 0, 0, 0};
    if (x < w && y < h) {
        const i32 a = (i32)r[(size_t)y * w + x];
        const i32 b = (i32)d[(size_t)y * w + x];
        v[0] = (u64)a;
        v[1] = (u64)b;
        v[2] = fm_float_square(a);
        v[3] = fm_float_square(b);
    }
    block_sum<u64, 4>(v, red);
    if (threadIdx.x == 0)
        for (int k = 0; k < 4; ++k) atomic_add_u64(out + k, v[k]);
}

VMAF_KERNEL void fm_sums_8(const u8* r, const u8* d, int w, int h, u64* out) {
    fm_sums_impl<u8>(r, d, w, h, out);
}
VMAF_KERNEL void fm_sums_16(const u16* r, const u16* d, int w, int h, u64* out) {
    fm_sums_impl<u16>(r, d, w, h, out);
}
