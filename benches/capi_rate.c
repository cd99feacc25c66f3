/* The C API's frame rate, without a decoder or file reads in the loop: the
 * pair's frames are read into memory first, then FRAMES frames are scored,
 * cycling through them, as a program hands them over:
 *   host:   per frame two vmaf_picture_alloc pictures, filled with memcpy
 *           (ffmpeg's CPU libvmaf filter);
 *   device: a CUDA context of the program's own, the frames in its device
 *           memory, per frame two preallocated device pictures filled
 *           with cuMemCpy2D from them (ffmpeg's libvmaf_cuda filter on
 *           NVDEC frames).
 * Prints the time of each call kind and the loop's frames per second.
 *
 * usage: capi_rate REF DIST W H 420|422|444 BPC MODEL host|device FRAMES
 * build: cc -O2 -o capi_rate benches/capi_rate.c -Ilibvmaf/include -Itests/c -Ltarget/release -lvmaf -ldl */
#define PROGRAM "capi_rate"
#include "yuv_frames.h"
#include "cuda_driver.h"
#include <libvmaf/libvmaf_cuda.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *cuda_context(void) {
    void *ctx = NULL, *popped;
    int dev;
    if (cuda_load(&dev) || cu.ctx_create(&ctx, 0, dev)) return NULL;
    cu.ctx_pop(&popped);
    return ctx;
}

/* One plane copy into device picture plane `p` of `dst` (host or device source). */
static int copy_plane(const VmafPicture *dst, unsigned p, int from_device, const void *host,
                      unsigned long long dev, size_t pitch) {
    Copy2d m = {
        .src_type = from_device ? 2 : 1, .src_host = host, .src_device = dev, .src_pitch = pitch,
        .dst_type = 2, .dst_device = (unsigned long long)(size_t)dst->data[p],
        .dst_pitch = dst->stride[p],
        .width_bytes = dst->w[p] * ((dst->bpc + 7) / 8), .height = dst->h[p],
    };
    return cu.memcpy_2d(&m);
}

int main(int argc, char **argv) {
    if (argc != 10) {
        fprintf(stderr, "usage: capi_rate REF DIST W H FMT BPC MODEL host|device FRAMES\n");
        return 2;
    }
    const unsigned w = atoi(argv[3]), h = atoi(argv[4]), bpc = atoi(argv[6]), n = atoi(argv[9]);
    const enum VmafPixelFormat fmt = yuv_format(argv[5]);
    const int device = !strcmp(argv[8], "device");
    double t0 = now(), t_init, t_copy = 0, t_read = 0, t_first = 0, t_flush, t_loop;

    /* The pair's frames, in memory. */
    FILE *f[2] = { fopen(argv[1], "rb"), fopen(argv[2], "rb") };
    if (!f[0] || !f[1]) return fail("opening the inputs", -2);
    VmafPicture frames[2][64];
    unsigned k = 0;
    for (; k < 64; k++) {
        for (int s = 0; s < 2; s++)
            if (vmaf_picture_alloc(&frames[s][k], fmt, bpc, w, h)) return fail("vmaf_picture_alloc", -12);
        if (yuv_read(f[0], &frames[0][k], w, h) <= 0 || yuv_read(f[1], &frames[1][k], w, h) <= 0) break;
    }
    if (!k) return fail("no frames", -22);

    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_DEBUG, .n_threads = 1 };
    VmafContext *vmaf;
    void *ctx = NULL, *popped;
    unsigned long long dev_frames[2][64][3];
    t0 = now();
    int err = vmaf_init(&vmaf, cfg);
    if (err) return fail("vmaf_init", err);
    if (device) {
        VmafCudaState *state = NULL;
        if (!(ctx = cuda_context())) return fail("a CUDA context", -19);
        VmafCudaConfiguration cuda_cfg = { .cu_ctx = ctx };
        if ((err = vmaf_cuda_state_init(&state, cuda_cfg))) return fail("vmaf_cuda_state_init", err);
        if ((err = vmaf_cuda_import_state(vmaf, state))) return fail("vmaf_cuda_import_state", err);
        VmafCudaPictureConfiguration pic_cfg = {
            .pic_params = { .w = w, .h = h, .bpc = bpc, .pix_fmt = fmt },
            .pic_prealloc_method = VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE,
        };
        if ((err = vmaf_cuda_preallocate_pictures(vmaf, pic_cfg))) return fail("preallocating", err);
        /* The frames in the program's device memory, as NVDEC leaves them. */
        cu.ctx_push(ctx);
        for (unsigned i = 0; i < k; i++)
            for (int s = 0; s < 2; s++)
                for (int p = 0; p < 3; p++) {
                    const VmafPicture *src = &frames[s][i];
                    size_t bytes = (size_t)src->stride[p] * src->h[p];
                    if (cu.mem_alloc(&dev_frames[s][i][p], bytes)) return fail("cuMemAlloc", -12);
                    Copy2d m = { .src_type = 1, .src_host = src->data[p], .src_pitch = src->stride[p],
                                 .dst_type = 2, .dst_device = dev_frames[s][i][p], .dst_pitch = src->stride[p],
                                 .width_bytes = src->w[p] * ((bpc + 7) / 8), .height = src->h[p] };
                    if (cu.memcpy_2d(&m)) return fail("cuMemcpy2D", -5);
                }
        cu.ctx_sync();
        cu.ctx_pop(&popped);
    }
    VmafModel *model;
    if (use_model(vmaf, argv[7], &model)) return 1;
    t_init = now() - t0;

    double loop0 = now();
    for (unsigned i = 0; i < n; i++) {
        const unsigned j = i % k;
        VmafPicture pic[2];
        double c0 = now();
        if (device) cu.ctx_push(ctx);
        for (int s = 0; s < 2; s++) {
            const VmafPicture *src = &frames[s][j];
            err = device ? vmaf_cuda_fetch_preallocated_picture(vmaf, &pic[s])
                         : vmaf_picture_alloc(&pic[s], fmt, bpc, w, h);
            if (err) return fail("a picture", err);
            for (int p = 0; p < 3; p++) {
                if (device) {
                    if (copy_plane(&pic[s], p, 1, NULL, dev_frames[s][j][p], src->stride[p]))
                        return fail("cuMemcpy2D", -5);
                } else {
                    memcpy(pic[s].data[p], src->data[p], (size_t)src->stride[p] * src->h[p]);
                }
            }
        }
        if (device) cu.ctx_pop(&popped);
        double r0 = now();
        t_copy += r0 - c0;
        if ((err = vmaf_read_pictures(vmaf, &pic[0], &pic[1], i))) return fail("vmaf_read_pictures", err);
        double r1 = now();
        if (i == 0) t_first = r1 - r0;
        else t_read += r1 - r0;
    }
    double f0 = now();
    if ((err = vmaf_read_pictures(vmaf, NULL, NULL, 0))) return fail("flushing", err);
    t_flush = now() - f0;
    t_loop = now() - loop0;
    double score;
    if ((err = vmaf_score_pooled(vmaf, model, VMAF_POOL_METHOD_MEAN, &score, 0, n - 1)))
        return fail("vmaf_score_pooled", err);
    printf("%s: %u frames (%u distinct) in %.3f s: %.1f fps; init %.1f ms, first read %.1f ms, "
           "copies %.3f ms a frame, reads %.3f ms a frame, flush %.1f ms; VMAF %.6f\n",
           argv[8], n, k, t_loop, n / t_loop, t_init * 1e3, t_first * 1e3, t_copy * 1e3 / n,
           t_read * 1e3 / (n > 1 ? n - 1 : 1), t_flush * 1e3, score);
    double c0 = now();
    vmaf_model_destroy(model);
    vmaf_close(vmaf);
    printf("close %.1f ms\n", (now() - c0) * 1e3);
    return 0;
}
