/* Drives libvmaf_cuda.h as ffmpeg 7.1's libvmaf_cuda filter does
 * (libavfilter/vf_libvmaf.c): a CUDA context of its own, a state made from
 * it and imported, pictures preallocated before the model, and per frame
 * two preallocated pictures that it copies its frames into with
 * cuMemcpy2D in its context, then hands over. The frames come from raw
 * files here instead of NVDEC. PLANES "luma" copies luma alone, as
 * ffmpeg 7.1's filter does; "all" copies every plane.
 *
 * With METHOD "host" the pictures are host memory (filled as
 * vmaf_picture_alloc's are), and no GPU is needed: the state's failure is
 * printed and the CPU engine scores. With "device" and no usable GPU, it
 * prints what vmaf_cuda_state_init returned and stops there. "hip" makes
 * the HIP twins' calls instead (libvmaf_hip.h: a HIP state, device
 * pictures from vmaf_hip_fetch_preallocated_picture), copying into them
 * in the first GPU's primary context, which the HIP state's engine uses
 * on NVIDIA.
 *
 * usage: cuda_pictures REF DIST W H 420|422|444|400 BPC VERSION all|luma device|host|hip OUT.json */
#define PROGRAM "cuda_pictures"
#include "yuv_frames.h"
#include "cuda_driver.h"
#include <libvmaf/libvmaf_cuda.h>
#include <libvmaf/libvmaf_hip.h>

/* A CUDA context of the program's own on the first GPU (or its primary
 * context); NULL if none. */
static void *cuda_context(int primary) {
    int dev;
    void *ctx = NULL, *popped;
    if (cuda_load(&dev)) return NULL;
    if (primary) return cu.primary_retain(&ctx, dev) ? NULL : ctx;
    if (cu.ctx_create(&ctx, 0, dev)) return NULL;
    cu.ctx_pop(&popped); /* as ffmpeg: pushed when used */
    return ctx;
}

/* Copies host picture `src` into device picture `dst` in `ctx`, every
 * plane or luma alone (ffmpeg's copy_picture_data_cuda). */
static int upload(void *ctx, const VmafPicture *src, VmafPicture *dst, int planes) {
    void *popped;
    if (cu.ctx_push(ctx)) return -1;
    for (int i = 0; i < planes; i++) {
        Copy2d m = {
            .src_type = 1, .src_host = src->data[i], .src_pitch = src->stride[i],
            .dst_type = 2, .dst_device = (unsigned long long)(size_t)dst->data[i],
            .dst_pitch = dst->stride[i],
            .width_bytes = dst->w[i] * ((dst->bpc + 7) / 8), .height = dst->h[i],
        };
        if (cu.memcpy_2d(&m)) return -1;
    }
    return cu.ctx_pop(&popped);
}

int main(int argc, char **argv) {
    if (argc != 11) {
        fprintf(stderr, "usage: cuda_pictures REF DIST W H FMT BPC VERSION all|luma device|host|hip OUT\n");
        return 2;
    }
    const unsigned w = atoi(argv[3]), h = atoi(argv[4]), bpc = atoi(argv[6]);
    const enum VmafPixelFormat fmt = yuv_format(argv[5]);
    const int hip = !strcmp(argv[9], "hip");
    const int on_device = hip || !strcmp(argv[9], "device");
    const int planes = !strcmp(argv[8], "luma") || fmt == VMAF_PIX_FMT_YUV400P ? 1 : 3;

    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_INFO, .n_threads = 1 };
    VmafContext *vmaf;
    int err = vmaf_init(&vmaf, cfg);
    if (err) return fail("vmaf_init", err);

    void *ctx = cuda_context(hip);
    if (hip) {
        VmafHipState *state = NULL;
        VmafHipConfiguration hip_cfg = { .device_index = 0 };
        err = vmaf_hip_state_init(&state, hip_cfg);
        printf("state: %d\n", err);
        if (err || !ctx) return 0;
        err = vmaf_hip_import_state(vmaf, state);
        if (err) return fail("vmaf_hip_import_state", err);
        VmafHipPictureConfiguration pic_cfg = {
            .pic_params = { .w = w, .h = h, .bpc = bpc, .pix_fmt = fmt },
            .pic_prealloc_method = VMAF_HIP_PICTURE_PREALLOCATION_METHOD_DEVICE,
        };
        err = vmaf_hip_preallocate_pictures(vmaf, pic_cfg);
        if (err) return fail("vmaf_hip_preallocate_pictures", err);
    } else {
        VmafCudaState *state = NULL;
        VmafCudaConfiguration cuda_cfg = { .cu_ctx = ctx };
        err = vmaf_cuda_state_init(&state, cuda_cfg);
        printf("state: %d\n", err);
        if (err && on_device) return 0;
        if (!err) {
            err = vmaf_cuda_import_state(vmaf, state);
            if (err) return fail("vmaf_cuda_import_state", err);
        }
        VmafCudaPictureConfiguration pic_cfg = {
            .pic_params = { .w = w, .h = h, .bpc = bpc, .pix_fmt = fmt },
            .pic_prealloc_method = on_device ? VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE
                                             : VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_HOST,
        };
        err = vmaf_cuda_preallocate_pictures(vmaf, pic_cfg);
        if (err) return fail("vmaf_cuda_preallocate_pictures", err);
    }

    VmafModel *model;
    if (use_model(vmaf, argv[7], &model)) return 1;

    FILE *rf = fopen(argv[1], "rb"), *df = fopen(argv[2], "rb");
    if (!rf || !df) return fail("opening the inputs", -2);
    VmafPicture host[2];
    for (int i = 0; i < 2; i++)
        if (vmaf_picture_alloc(&host[i], fmt, bpc, w, h)) return fail("vmaf_picture_alloc", -12);
    unsigned frames = 0;
    for (;; frames++) {
        const int r = yuv_read(rf, &host[0], w, h), d = yuv_read(df, &host[1], w, h);
        if (r <= 0 || d <= 0) {
            if (r < 0 || d < 0 || r != d) return fail("inputs of different lengths", -22);
            break;
        }
        VmafPicture pic[2];
        for (int i = 0; i < 2; i++) {
            err = hip ? vmaf_hip_fetch_preallocated_picture(vmaf, &pic[i])
                      : vmaf_cuda_fetch_preallocated_picture(vmaf, &pic[i]);
            if (err) return fail("fetching a preallocated picture", err);
            if (on_device) {
                if (upload(ctx, &host[i], &pic[i], planes)) return fail("cuMemcpy2D", -5);
            } else {
                for (int p = 0; p < planes; p++)
                    for (unsigned y = 0; y < host[i].h[p]; y++)
                        memcpy((char *)pic[i].data[p] + y * pic[i].stride[p],
                               (char *)host[i].data[p] + y * host[i].stride[p],
                               (size_t)host[i].w[p] * ((bpc + 7) / 8));
            }
        }
        err = vmaf_read_pictures(vmaf, &pic[0], &pic[1], frames);
        if (err) return fail("vmaf_read_pictures", err);
    }
    fclose(rf);
    fclose(df);
    for (int i = 0; i < 2; i++) vmaf_picture_unref(&host[i]);
    if (finish(vmaf, model, frames, argv[10])) return 1;
    vmaf_model_destroy(model);
    vmaf_close(vmaf);
    if (ctx && !hip) cu.ctx_destroy(ctx);
    return 0;
}
