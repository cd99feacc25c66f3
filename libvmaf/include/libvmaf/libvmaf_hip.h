/* vmafhip's libvmaf: the GPU state calls of libvmaf's HIP fork
 * (libvmaf_hip.h), on vmafhip's GPU engine (HIP on AMD, CUDA on NVIDIA,
 * loaded at run time). The caller owns the state: free it after
 * vmaf_close. */
#ifndef __VMAF_HIP_H__
#define __VMAF_HIP_H__

#include "libvmaf/libvmaf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct VmafHipState VmafHipState;

typedef struct VmafHipConfiguration {
    int device_index; /* -1: the first GPU; else its ordinal */
    int flags;        /* reserved: 0 */
} VmafHipConfiguration;

/* 1: this library has its GPU engine (whether a GPU is usable is known at
 * vmaf_hip_state_init). */
int vmaf_hip_available(void);

/* Opens the GPU; -ENODEV when none is usable. */
int vmaf_hip_state_init(VmafHipState **out, VmafHipConfiguration cfg);

/* The context scores on that GPU (before its first frame). */
int vmaf_hip_import_state(VmafContext *ctx, VmafHipState *state);

/* Frees the state (NULL or never imported is fine) and clears *state. */
void vmaf_hip_state_free(VmafHipState **state);

enum VmafHipPicturePreallocationMethod {
    VMAF_HIP_PICTURE_PREALLOCATION_METHOD_NONE = 0,
    VMAF_HIP_PICTURE_PREALLOCATION_METHOD_DEVICE,
    VMAF_HIP_PICTURE_PREALLOCATION_METHOD_HOST,
    VMAF_HIP_PICTURE_PREALLOCATION_METHOD_HOST_PINNED,
};

typedef struct VmafHipPictureConfiguration {
    struct {
        unsigned w, h;
        unsigned bpc;
        enum VmafPixelFormat pix_fmt;
    } pic_params;
    enum VmafHipPicturePreallocationMethod pic_prealloc_method;
} VmafHipPictureConfiguration;

/* vmafhip's, as the CUDA pair: pictures in GPU memory of the imported HIP
 * state's device (the fork's VMAF_PICTURE_BUFFER_TYPE_HIP_DEVICE pictures:
 * data[] are device addresses, read in place), or in host memory. A HIP
 * state is imported first. 0 or -errno. */
int vmaf_hip_preallocate_pictures(VmafContext *vmaf,
                                  VmafHipPictureConfiguration cfg);

/* A preallocated picture; vmaf_read_pictures or vmaf_picture_unref takes
 * it back. Copies into it on the device's null stream are waited for when
 * it is read. 0 or -errno. */
int vmaf_hip_fetch_preallocated_picture(VmafContext *vmaf, VmafPicture *pic);

/* Prints a line per usable GPU (ordinal, name, architecture); returns
 * their count. */
int vmaf_hip_list_devices(void);

#ifdef __cplusplus
}
#endif

#endif /* __VMAF_HIP_H__ */
