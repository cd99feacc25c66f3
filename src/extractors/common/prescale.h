// libvmaf's float prescale (vif_tools.c: vif_scale_frame_s) on the device:
// one sample of the prescaled image from the row and column tap tables the
// host builds with the CPU twin's `axis_taps` (common/prescale.rs). Put
// before a kernel file that samples through it (speed.hip, prescale.hip).
#include "vmafhip_prelude.h"

// Sample (y, x) of the prescaled image. method: 0 none, 1 nearest,
// 2 bilinear, 3 bicubic, 4 lanczos4; tables hold `taps` entries per row/column.
template <typename Src>
__device__ float scaled_at(const Src& src, int pw, float scaler, int method, int taps,
                           const int* ridx, const float* rw, const int* cidx, const float* cw,
                           int y, int x) {
    if (method == 0) return src.at(pw, y, x, scaler);
    if (method == 1) return src.at(pw, ridx[y], cidx[x], scaler);
    if (method == 2) {
        const int y1 = ridx[2 * y], y2 = ridx[2 * y + 1];
        const int x1 = cidx[2 * x], x2 = cidx[2 * x + 1];
        const float dy = rw[2 * y], dx = cw[2 * x];
        return (1.0f - dy) * (1.0f - dx) * src.at(pw, y1, x1, scaler) +
               (1.0f - dy) * dx * src.at(pw, y1, x2, scaler) +
               dy * (1.0f - dx) * src.at(pw, y2, x1, scaler) +
               dy * dx * src.at(pw, y2, x2, scaler);
    }
    float v = 0.0f, wsum = 0.0f;
    for (int j = 0; j < taps; ++j) {
        for (int i = 0; i < taps; ++i) {
            const float weight = cw[x * taps + i] * rw[y * taps + j];
            wsum += weight;
            v += src.at(pw, ridx[y * taps + j], cidx[x * taps + i], scaler) * weight;
        }
    }
    return method == 4 ? v / wsum : v;
}

