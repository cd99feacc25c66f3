/* Calls libvmaf's C API wrongly, each mistake once, and prints what each
 * call returned: the library answers with libvmaf's -EINVAL and a message,
 * never a crash. tests/libvmaf_api.rs holds the list. */
#include <libvmaf/libvmaf.h>
#include <libvmaf/libvmaf_cuda.h>
#include <stdio.h>
#include <string.h>

#define SAY(what, call) printf("%s: %d\n", what, (call))

static void fill(VmafPicture *p, unsigned char v) {
    for (int i = 0; i < 3; i++)
        for (unsigned y = 0; y < p->h[i]; y++)
            memset((unsigned char *)p->data[i] + y * p->stride[i], v, p->w[i]);
}

int main(void) {
    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_ERROR };
    VmafContext *vmaf;
    VmafModel *model = NULL, *other = NULL;
    VmafModelConfig mc = { 0 };
    VmafPicture a, b;

    SAY("init without a context pointer", vmaf_init(NULL, cfg));
    SAY("init", vmaf_init(&vmaf, cfg));
    VmafPicture g;
    VmafCudaPictureConfiguration gc = {
        .pic_params = { .w = 64, .h = 64, .bpc = 8, .pix_fmt = VMAF_PIX_FMT_YUV420P },
        .pic_prealloc_method = VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE,
    };
    VmafCudaConfiguration cc = { .cu_ctx = NULL };
    SAY("a CUDA state into NULL", vmaf_cuda_state_init(NULL, cc));
    SAY("a preallocated GPU picture before any", vmaf_cuda_fetch_preallocated_picture(vmaf, &g));
    SAY("device pictures without a GPU state", vmaf_cuda_preallocate_pictures(vmaf, gc));
    gc.pic_prealloc_method = 7;
    SAY("an unknown preallocation method", vmaf_cuda_preallocate_pictures(vmaf, gc));
    SAY("an unknown model", vmaf_model_load(&model, &mc, "vmaf_v9"));
    SAY("a model", vmaf_model_load(&model, &mc, "vmaf_v0.6.1"));
    SAY("a second model", vmaf_model_load(&other, &mc, "vmaf_v0.6.1neg"));
    SAY("an unknown feature", vmaf_use_feature(vmaf, "sharpness", NULL));
    VmafFeatureDictionary *d = NULL;
    vmaf_feature_dictionary_set(&d, "no_such", "1");
    SAY("a feature with an unknown option", vmaf_use_feature(vmaf, "cambi", d));
    SAY("a feature's options in its name", vmaf_use_feature(vmaf, "cambi=full_ref=true", NULL));
    SAY("an override of an unknown option", (d = NULL, vmaf_feature_dictionary_set(&d, "no_such", "1"),
        vmaf_model_feature_overload(other, "adm", d)));
    SAY("frames before a model", (vmaf_picture_alloc(&a, VMAF_PIX_FMT_YUV420P, 8, 64, 64),
        vmaf_picture_alloc(&b, VMAF_PIX_FMT_YUV420P, 8, 64, 64), vmaf_read_pictures(vmaf, &a, &b, 0)));
    SAY("the model's features", vmaf_use_features_from_model(vmaf, model));
    SAY("another model's features", vmaf_use_features_from_model(vmaf, other));
    SAY("a picture of 7 bits", vmaf_picture_alloc(&a, VMAF_PIX_FMT_YUV420P, 7, 64, 64));
    SAY("a picture of no format", vmaf_picture_alloc(&a, VMAF_PIX_FMT_UNKNOWN, 8, 64, 64));
    SAY("unref of a picture never allocated", (memset(&a, 0, sizeof(a)), vmaf_picture_unref(&a)));
    vmaf_picture_alloc(&a, VMAF_PIX_FMT_YUV420P, 8, 64, 64);
    vmaf_picture_alloc(&b, VMAF_PIX_FMT_YUV420P, 8, 48, 64);
    fill(&a, 100);
    fill(&b, 100);
    SAY("pictures of different sizes", vmaf_read_pictures(vmaf, &a, &b, 0));
    SAY("one picture and NULL", (vmaf_picture_alloc(&a, VMAF_PIX_FMT_YUV420P, 8, 64, 64),
        vmaf_read_pictures(vmaf, &a, NULL, 0)));
    vmaf_picture_unref(&a);
    vmaf_picture_alloc(&a, VMAF_PIX_FMT_YUV420P, 8, 64, 64);
    vmaf_picture_alloc(&b, VMAF_PIX_FMT_YUV420P, 8, 64, 64);
    fill(&a, 100);
    fill(&b, 90);
    SAY("frame 3 first", vmaf_read_pictures(vmaf, &a, &b, 3));
    double s = 0;
    SAY("a score before any frame", vmaf_score_at_index(vmaf, model, &s, 0));
    vmaf_picture_alloc(&a, VMAF_PIX_FMT_YUV420P, 8, 64, 64);
    vmaf_picture_alloc(&b, VMAF_PIX_FMT_YUV420P, 8, 64, 64);
    fill(&a, 100);
    fill(&b, 90);
    SAY("frame 0", vmaf_read_pictures(vmaf, &a, &b, 0));
    SAY("a frame after the flush", (vmaf_read_pictures(vmaf, NULL, NULL, 0),
        vmaf_picture_alloc(&a, VMAF_PIX_FMT_YUV420P, 8, 64, 64),
        vmaf_picture_alloc(&b, VMAF_PIX_FMT_YUV420P, 8, 64, 64), vmaf_read_pictures(vmaf, &a, &b, 1)));
    SAY("a score past the last frame", vmaf_score_at_index(vmaf, model, &s, 5));
    SAY("a pooled score over no frame", vmaf_score_pooled(vmaf, model, VMAF_POOL_METHOD_MEAN, &s, 3, 4));
    SAY("a pooled score past the frames read", vmaf_score_pooled(vmaf, model, VMAF_POOL_METHOD_MEAN, &s, 0, 9));
    SAY("a feature never computed", vmaf_feature_score_at_index(vmaf, "psnr_y", &s, 0));
    SAY("an unknown pooling method", vmaf_score_pooled(vmaf, model, 9, &s, 0, 0));
    SAY("an unknown output format", vmaf_write_output(vmaf, "/tmp/x", 9));
    SAY("an unwritable output", vmaf_write_output(vmaf, "/nonexistent/dir/out.json", VMAF_OUTPUT_FORMAT_JSON));
    SAY("a score into NULL", vmaf_score_pooled(vmaf, model, VMAF_POOL_METHOD_MEAN, NULL, 0, 0));
    SAY("close", vmaf_close(vmaf));
    vmaf_model_destroy(model);
    vmaf_model_destroy(other);
    return 0;
}
