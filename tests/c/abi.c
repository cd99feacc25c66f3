/* Sizes and field offsets of libvmaf's public structs, one per line
 * ("Struct.field offset" or "Struct size"), from whichever libvmaf
 * headers it is compiled against: ours (tests/libvmaf_api.rs) or
 * libvmaf f85a8536's own (how the expected values were measured). */
#include <libvmaf/libvmaf.h>
#include <libvmaf/libvmaf_cuda.h>
#include <stddef.h>
#include <stdio.h>

#define SIZE(t) printf(#t " %zu\n", sizeof(t))
#define AT(t, f) printf(#t "." #f " %zu\n", offsetof(t, f))

int main(void) {
    SIZE(VmafConfiguration);
    AT(VmafConfiguration, log_level);
    AT(VmafConfiguration, n_threads);
    AT(VmafConfiguration, n_subsample);
    AT(VmafConfiguration, cpumask);
    AT(VmafConfiguration, gpumask);
    SIZE(VmafPicture);
    AT(VmafPicture, pix_fmt);
    AT(VmafPicture, bpc);
    AT(VmafPicture, w);
    AT(VmafPicture, h);
    AT(VmafPicture, stride);
    AT(VmafPicture, data);
    AT(VmafPicture, ref);
    AT(VmafPicture, priv);
    SIZE(VmafModelConfig);
    AT(VmafModelConfig, name);
    AT(VmafModelConfig, flags);
    SIZE(VmafModelCollectionScore);
    AT(VmafModelCollectionScore, type);
    AT(VmafModelCollectionScore, bootstrap.bagging_score);
    AT(VmafModelCollectionScore, bootstrap.stddev);
    AT(VmafModelCollectionScore, bootstrap.ci.p95.lo);
    AT(VmafModelCollectionScore, bootstrap.ci.p95.hi);
    SIZE(VmafPictureConfiguration);
    AT(VmafPictureConfiguration, pic_params.w);
    AT(VmafPictureConfiguration, pic_params.h);
    AT(VmafPictureConfiguration, pic_params.bpc);
    AT(VmafPictureConfiguration, pic_params.pix_fmt);
    AT(VmafPictureConfiguration, pic_cnt);
    SIZE(enum VmafPixelFormat);
    SIZE(VmafCudaConfiguration);
    AT(VmafCudaConfiguration, cu_ctx);
    SIZE(VmafCudaPictureConfiguration);
    AT(VmafCudaPictureConfiguration, pic_params.w);
    AT(VmafCudaPictureConfiguration, pic_params.h);
    AT(VmafCudaPictureConfiguration, pic_params.bpc);
    AT(VmafCudaPictureConfiguration, pic_params.pix_fmt);
    AT(VmafCudaPictureConfiguration, pic_prealloc_method);
    SIZE(enum VmafCudaPicturePreallocationMethod);
    return 0;
}
