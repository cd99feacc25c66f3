/* vmafhip's libvmaf: the CUDA calls (libvmaf 3.2's libvmaf_cuda.h ABI).
 * A program's CUDA context runs vmafhip's GPU engine; pictures in that
 * context's memory are read in place. */
#ifndef __VMAF_CUDA_H__
#define __VMAF_CUDA_H__

#include "libvmaf/libvmaf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct VmafCudaState VmafCudaState;

typedef struct VmafCudaConfiguration {
    void *cu_ctx; /* a CUcontext; NULL: the first GPU's primary context */
} VmafCudaConfiguration;

/* Opens the GPU engine in cfg.cu_ctx, which the program keeps alive until
 * every context using the state is closed. 0 or -errno. */
int vmaf_cuda_state_init(VmafCudaState **cu_state, VmafCudaConfiguration cfg);

/* The context scores on that GPU (before its first frame). 0 or -errno. */
int vmaf_cuda_import_state(VmafContext *vmaf, VmafCudaState *cu_state);

enum VmafCudaPicturePreallocationMethod {
    VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_NONE = 0,
    VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE,
    VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_HOST,
    VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_HOST_PINNED,
};

typedef struct VmafCudaPictureConfiguration {
    struct {
        unsigned w, h;
        unsigned bpc;
        enum VmafPixelFormat pix_fmt;
    } pic_params;
    enum VmafCudaPicturePreallocationMethod pic_prealloc_method;
} VmafCudaPictureConfiguration;

/* Pictures of cfg.pic_params for vmaf_cuda_fetch_preallocated_picture:
 * in GPU memory of the imported state's context (METHOD_DEVICE; a CUDA
 * state is imported first), or in host memory (METHOD_HOST, _HOST_PINNED).
 * 0 or -errno. */
int vmaf_cuda_preallocate_pictures(VmafContext *vmaf,
                                   VmafCudaPictureConfiguration cfg);

/* A preallocated picture. A device picture's data[] are device addresses
 * (CUdeviceptr); copies into it queued on the context's default stream
 * (cuMemcpy2D) are waited for when it is read. vmaf_read_pictures takes
 * it back, as does vmaf_picture_unref. 0 or -errno. */
int vmaf_cuda_fetch_preallocated_picture(VmafContext *vmaf, VmafPicture *pic);

#ifdef __cplusplus
}
#endif

#endif /* __VMAF_CUDA_H__ */
