// float_psnr (libvmaf feature/float_psnr.c). CPU twin: cpu.rs `error_squares`.
//
// fp_error_squares: per luma sample the square of the difference of the two
// pictures, rounded to float as libvmaf's float multiply rounds it, kept as
// a whole number; one u64 sum. An integer sum, so the order of the
// additions never changes it.
#include "vmafhip_prelude.h"

template <typename In>
__device__ void fp_error_squares_impl(const In* r, const In* d, int w, int h, u64* out) {
    __shared__ u64 red[VMAF_BLOCK];
    const int y = blockIdx.y;
    const int x = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    u64 v[1] = {0};
    if (x < w && y < h) {
        const float e = (float)((i32)r[(size_t)y * w + x] - (i32)d[(size_t)y * w + x]);
        v[0] = (u64)(e * e);
    }
    block_sum<u64, 1>(v, red);
    if (threadIdx.x == 0) atomic_add_u64(out, v[0]);
}

VMAF_KERNEL void fp_error_squares_8(const u8* r, const u8* d, int w, int h, u64* out) {
    fp_error_squares_impl<u8>(r, d, w, h, out);
}
VMAF_KERNEL void fp_error_squares_16(const u16* r, const u16* d, int w, int h, u64* out) {
    fp_error_squares_impl<u16>(r, d, w, h, out);
}
