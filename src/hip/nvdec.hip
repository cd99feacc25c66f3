#include "vmafhip_prelude.h"

// NVDEC's output surfaces copied into the frames the element reads.

// One plane of 16-bit samples whose significant bits sit in the high bits
// (NVDEC's 4:4:4 above 8 bits) into a plane of plain samples, each row at
// its own pitch: every sample shifted down by `shift`.
VMAF_KERNEL void nvdec_shift_down_16(const u8* src, int src_pitch, int w, int h, int shift,
                                     u8* dst, int dst_pitch) {
    const int x = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= w || y >= h) return;
    const u16* from = (const u16*)(src + (size_t)y * src_pitch);
    u16* to = (u16*)(dst + (size_t)y * dst_pitch);
    to[x] = (u16)(from[x] >> shift);
}
