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

/* Prints a line per usable GPU (ordinal, name, architecture); returns
 * their count. */
int vmaf_hip_list_devices(void);

#ifdef __cplusplus
}
#endif

#endif /* __VMAF_HIP_H__ */
