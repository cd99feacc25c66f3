/* The few CUDA driver calls the C programs make (a program's own context,
 * its device memory, 2-D copies), loaded at run time from libcuda.so.1 so
 * that they build and run where no CUDA is installed. */
#ifndef CUDA_DRIVER_H
#define CUDA_DRIVER_H
#include <dlfcn.h>
#include <stddef.h>

typedef struct {
    size_t src_x, src_y;
    int src_type;
    const void *src_host;
    unsigned long long src_device;
    void *src_array;
    size_t src_pitch;
    size_t dst_x, dst_y;
    int dst_type;
    void *dst_host;
    unsigned long long dst_device;
    void *dst_array;
    size_t dst_pitch;
    size_t width_bytes, height;
} Copy2d; /* CUDA_MEMCPY2D; types: 1 host, 2 device */

static struct {
    int (*init)(unsigned);
    int (*device_get)(int *, int);
    int (*ctx_create)(void **, unsigned, int);
    int (*ctx_push)(void *);
    int (*ctx_pop)(void **);
    int (*ctx_destroy)(void *);
    int (*ctx_sync)(void);
    int (*primary_retain)(void **, int);
    int (*mem_alloc)(unsigned long long *, size_t);
    int (*memcpy_2d)(const Copy2d *);
} cu;

/* Loads the calls and initialises the driver; the first GPU's number in
 * `dev`. 0, or -1 where libcuda or a GPU is missing. */
static int cuda_load(int *dev) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) return -1;
    *(void **)&cu.init = dlsym(lib, "cuInit");
    *(void **)&cu.device_get = dlsym(lib, "cuDeviceGet");
    *(void **)&cu.ctx_create = dlsym(lib, "cuCtxCreate_v2");
    *(void **)&cu.ctx_push = dlsym(lib, "cuCtxPushCurrent_v2");
    *(void **)&cu.ctx_pop = dlsym(lib, "cuCtxPopCurrent_v2");
    *(void **)&cu.ctx_destroy = dlsym(lib, "cuCtxDestroy_v2");
    *(void **)&cu.ctx_sync = dlsym(lib, "cuCtxSynchronize");
    *(void **)&cu.primary_retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
    *(void **)&cu.mem_alloc = dlsym(lib, "cuMemAlloc_v2");
    *(void **)&cu.memcpy_2d = dlsym(lib, "cuMemcpy2D_v2");
    if (!cu.init || !cu.memcpy_2d || cu.init(0) || cu.device_get(dev, 0)) return -1;
    return 0;
}
#endif
