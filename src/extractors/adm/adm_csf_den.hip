// ADM denominator: per band, the per-row rounded sums of |reference band|^3
// over region C, libvmaf integer_adm.c adm_csf_den_scale / adm_csf_den_s123.
// CPU twin: cpu.rs `csf_den_sums`.
//
// One block per row of C; `out` receives 3 uint64 (theta h, v, d).
#include "vmafhip_prelude.h"

VMAF_KERNEL void adm_csf_den(const i32* bands_ref, int bw, int bh, int top, int left, int right,
                             int scale, int shift_acc, int shift_sq, int shift_cub, u64* out) {
    __shared__ u64 red[3 * VMAF_BLOCK];
    const int i = top + blockIdx.y;
    const size_t n = (size_t)bw * bh;
    const i32* bands[3] = {bands_ref + 2 * n, bands_ref + n, bands_ref + 3 * n};
    const u64 add_sq = shift_sq == 0 ? 0 : (1ull << shift_sq);
    const u64 add_cub = shift_cub == 0 ? 0 : (1ull << (shift_cub - 1));
    u64 acc[3] = {0, 0, 0};
    for (int j = left + threadIdx.x; j < right; j += VMAF_BLOCK) {
        const size_t at = (size_t)i * bw + j;
        for (int theta = 0; theta < 3; ++theta) {
            const i32 b = bands[theta][at];
            const u32 ab = b < 0 ? 0u - (u32)b : (u32)b;
            if (scale == 0) {
                const u64 x = (u16)ab;
                acc[theta] += x * x * x;
            } else {
                const u64 x = ab;
                acc[theta] += ((((x * x) + add_sq) >> shift_sq) * x + add_cub) >> shift_cub;
            }
        }
    }
    block_sum<u64, 3>(acc, red);
    if (threadIdx.x < 3) {
        const u64 add_acc = shift_acc == 0 ? 0 : (1ull << (shift_acc - 1));
        atomic_add_u64(out + threadIdx.x, (acc[threadIdx.x] + add_acc) >> shift_acc);
    }
}
