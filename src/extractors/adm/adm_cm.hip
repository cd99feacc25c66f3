// ADM contrast masking, libvmaf integer_adm.c: adm_cm / i4_adm_cm, for the
// detail-loss numerator (restored part masked by the CSF of the additive
// part) and AIM (additive part masked by the CSF of the restored part).
// CPU twin: cpu.rs `cm_sums`.
//
// One block per row of region C: the row's inner sums are exact block sums,
// then shifted with rounding as libvmaf does per row, then added atomically.
// `out` receives 6 int64: num[theta] then aim[theta].
#include "vmafhip_prelude.h"

__device__ __forceinline__ int mir_lo_hi(int y, int n) { return y < 0 ? -y : (y >= n ? n - 1 : y); }

VMAF_KERNEL_BOUNDS(4) void adm_cm(const i32* work, int bw, int bh, int top, int bottom, int left, int right,
                        int scale, long long rf0, long long rf1, long long rf2, int shift_cub0,
                        int shift_cub1, int shift_cub2, int shift_inner, u64* out) {
    __shared__ u64 red[6 * VMAF_BLOCK];
    const int i = top + blockIdx.y;
    const size_t n = (size_t)bw * bh;
    const i64 rf[3] = {rf0, rf1, rf2};
    const int shift_cub[3] = {shift_cub0, shift_cub1, shift_cub2};
    u64 acc[6] = {0, 0, 0, 0, 0, 0};
    for (int j = left + threadIdx.x; j < right; j += VMAF_BLOCK) {
        const size_t at = (size_t)i * bw + j;
        const bool interior = i > 0 && j > 0 && i < bh - 1 && j < bw - 1;
        for (int pass = 0; pass < 2; ++pass) {
            // pass 0: src = rst, centre = y_add, nbr = f_add; pass 1: src = add, y_rst, f_rst.
            const i32* src = work + (size_t)(pass == 0 ? 0 : 3) * n;
            const i32* centre = work + (size_t)(6 + 6 * pass) * n;
            const i32* nbr = work + (size_t)(9 + 6 * pass) * n;
            i32 thr = 0;
            for (int theta = 0; theta < 3; ++theta) {
                const i32* f = nbr + theta * n;
                i32 sum = 0;
                for (int dy = -1; dy <= 1; ++dy)
                    for (int dx = -1; dx <= 1; ++dx) {
                        if (dy == 0 && dx == 0) continue;
                        const int yy = interior ? i + dy : mir_lo_hi(i + dy, bh);
                        const int xx = interior ? j + dx : mir_lo_hi(j + dx, bw);
                        sum = wrap_add(sum, f[(size_t)yy * bw + xx]);
                    }
                const i32 yc = centre[theta * n + at];
                i32 centre_term;
                if (scale == 0)
                    centre_term = (i32)(i16)((8738 * (yc < 0 ? -yc : yc) + 2048) >> 12);
                else
                    centre_term = (i32)((286331153LL * (i64)wrap_abs(yc) - ((i64)1 << 31)) >> 32);
                thr = wrap_add(thr, wrap_add(sum, centre_term));
            }
            for (int theta = 0; theta < 3; ++theta) {
                const i32 s = src[theta * n + at];
                i32 u;
                i64 u2;
                if (scale == 0) {
                    const int sub = theta == 2 ? 12 : 10;
                    const int sq = theta == 2 ? 30 : 29;
                    const i32 x = wrap_mul(s, (i32)rf[theta]);
                    u = wrap_sub(wrap_abs(x), wrap_shl(thr, sub));
                    if (u < 0) u = 0;
                    u2 = (i64)(i32)(((i64)u * u + ((i64)1 << (sq - 1))) >> sq);
                } else {
                    const i32 x = (i32)(((i64)s * rf[theta] + ((i64)1 << 27)) >> 28);
                    u = wrap_sub(wrap_abs(x), thr);
                    if (u < 0) u = 0;
                    u2 = (i64)(i32)(((i64)u * u + ((i64)1 << 29)) >> 30);
                }
                const int sc = shift_cub[theta];
                const i64 add_cub = sc == 0 ? 0 : ((i64)1 << (sc - 1));
                acc[3 * pass + theta] += (u64)((u2 * u + add_cub) >> sc);
            }
        }
    }
    block_sum<u64, 6>(acc, red);
    if (threadIdx.x < 6) {
        const i64 add_inner = shift_inner == 0 ? 0 : ((i64)1 << (shift_inner - 1));
        atomic_add_u64(out + threadIdx.x, (u64)(((i64)acc[threadIdx.x] + add_inner) >> shift_inner));
    }
}
