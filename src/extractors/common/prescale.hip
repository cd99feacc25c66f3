// vif_scale_frame: float_vif's vif_prescale and float_motion's halving
// (libvmaf vif_tools.c), through prescale.h's sampling (put before this file
// when it is loaded, prescale_gpu.rs). CPU twin: prescale.rs.
#include "vmafhip_prelude.h"

// A float picture (float_vif's prescale).
struct FloatPlane {
    const float* p;
    __device__ __forceinline__ float at(int pw, int r, int c, float) const {
        return p[(size_t)r * pw + c];
    }
};

// vif_scale_frame_s of a float picture (float_vif's vif_prescale): `src`
// (pw wide) to `out` (dw x dh), one thread per output sample.
VMAF_KERNEL void vif_scale_frame(const float* src, int pw, int method, int taps, const int* ridx,
                                 const float* rw, const int* cidx, const float* cw, int dw, int dh,
                                 float* out) {
    const int x = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= dw || y >= dh) return;
    const FloatPlane plane = {src};
    out[(size_t)y * dw + x] = scaled_at(plane, pw, 0.0f, method, taps, ridx, rw, cidx, cw, y, x);
}
