/* What the libvmaf API programs share: raw YUV files (frames of tightly
 * packed planes, chroma of ceil-halved size, as ffmpeg and the golden
 * files lay them out) read into VmafPictures and fed to the context, and
 * the error exit. Each program defines PROGRAM (its name) first. */
#ifndef YUV_FRAMES_H
#define YUV_FRAMES_H

#include <libvmaf/libvmaf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum VmafPixelFormat yuv_format(const char *p) {
    if (!strcmp(p, "420")) return VMAF_PIX_FMT_YUV420P;
    if (!strcmp(p, "422")) return VMAF_PIX_FMT_YUV422P;
    if (!strcmp(p, "444")) return VMAF_PIX_FMT_YUV444P;
    if (!strcmp(p, "400")) return VMAF_PIX_FMT_YUV400P;
    return VMAF_PIX_FMT_UNKNOWN;
}

/* Reads the next frame of `f` into `pic` (allocated by the caller):
 * 1 read, 0 at the end, -1 on a short frame. */
static int yuv_read(FILE *f, VmafPicture *pic, unsigned w, unsigned h) {
    const unsigned bytes = pic->bpc > 8 ? 2 : 1;
    const int planes = pic->pix_fmt == VMAF_PIX_FMT_YUV400P ? 1 : 3;
    const int ss_x = pic->pix_fmt != VMAF_PIX_FMT_YUV444P;
    const int ss_y = pic->pix_fmt == VMAF_PIX_FMT_YUV420P;
    for (int i = 0; i < planes; i++) {
        const unsigned fw = i ? (ss_x ? (w + 1) / 2 : w) : w;
        const unsigned fh = i ? (ss_y ? (h + 1) / 2 : h) : h;
        unsigned char *row = malloc((size_t)fw * bytes);
        for (unsigned y = 0; y < fh; y++) {
            if (fread(row, bytes, fw, f) != fw) {
                free(row);
                return i == 0 && y == 0 ? 0 : -1;
            }
            if (y < pic->h[i])
                memcpy((unsigned char *)pic->data[i] + y * pic->stride[i], row,
                       (size_t)pic->w[i] * bytes);
        }
        free(row);
    }
    return 1;
}

static int fail(const char *what, int err) {
    fprintf(stderr, PROGRAM ": %s (%d)\n", what, err);
    return 1;
}

/* Feeds every frame pair of the two files to `vmaf`, a picture pair each
 * (allocated, filled, handed over): 0 and the count in *frames, or 1
 * after saying what failed. */
static inline int feed(VmafContext *vmaf, const char *ref_path, const char *dist_path,
                enum VmafPixelFormat fmt, unsigned bpc, unsigned w, unsigned h,
                unsigned *frames) {
    FILE *rf = fopen(ref_path, "rb"), *df = fopen(dist_path, "rb");
    if (!rf || !df) return fail("opening the inputs", -2);
    for (*frames = 0;; ++*frames) {
        VmafPicture ref, dist;
        int err = vmaf_picture_alloc(&ref, fmt, bpc, w, h);
        err |= vmaf_picture_alloc(&dist, fmt, bpc, w, h);
        if (err) return fail("vmaf_picture_alloc", err);
        const int r = yuv_read(rf, &ref, w, h), d = yuv_read(df, &dist, w, h);
        if (r <= 0 || d <= 0) {
            vmaf_picture_unref(&ref);
            vmaf_picture_unref(&dist);
            if (r < 0 || d < 0 || r != d) return fail("inputs of different lengths", -22);
            break;
        }
        err = vmaf_read_pictures(vmaf, &ref, &dist, *frames);
        if (err) return fail("vmaf_read_pictures", err);
    }
    fclose(rf);
    fclose(df);
    return 0;
}

/* Model `version` (named "vmaf") loaded into *model and its features
 * registered with `vmaf`: 0, or 1 after saying what failed. */
static inline int use_model(VmafContext *vmaf, const char *version, VmafModel **model) {
    VmafModelConfig model_cfg = { .name = "vmaf" };
    int err = vmaf_model_load(model, &model_cfg, version);
    if (err) return fail("vmaf_model_load", err);
    err = vmaf_use_features_from_model(vmaf, *model);
    if (err) return fail("vmaf_use_features_from_model", err);
    return 0;
}

/* The end of a stream as ffmpeg's filter ends it: the flush, the pooled
 * mean of `model` over the `frames` read, printed, and the JSON results
 * written to `out`. 0, or 1 after saying what failed. */
static inline int finish(VmafContext *vmaf, VmafModel *model, unsigned frames, const char *out) {
    int err = vmaf_read_pictures(vmaf, NULL, NULL, 0);
    if (err) return fail("flushing", err);
    double score;
    err = vmaf_score_pooled(vmaf, model, VMAF_POOL_METHOD_MEAN, &score, 0, frames - 1);
    if (err) return fail("vmaf_score_pooled", err);
    printf("VMAF score: %f\n", score);
    err = vmaf_write_output(vmaf, out, VMAF_OUTPUT_FORMAT_JSON);
    if (err) return fail("vmaf_write_output", err);
    return 0;
}

#endif
