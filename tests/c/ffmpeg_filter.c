/* Drives libvmaf's C API as ffmpeg 7.1's libvmaf filter does
 * (libavfilter/vf_libvmaf.c): init, the model (with its options and
 * feature overloads), extra features, a picture pair per frame, the flush,
 * the pooled score, the results file.
 *
 * usage: ffmpeg_filter REF DIST W H 420|422|444|400 BPC MODEL FEATURES|- SUBSAMPLE THREADS OUT.json
 * MODEL in ffmpeg's syntax with ':' between options (version=NAME or
 * path=FILE, name=, disable_clip, enable_transform, FEATURE.OPTION=VALUE),
 * '|' between models (up to 4);
 * FEATURES comma-separated, each NAME or NAME=OPTION=VALUE:OPTION=VALUE. */
#define PROGRAM "ffmpeg_filter"
#include "yuv_frames.h"

/* One model of ffmpeg's parse_models: SPEC in ffmpeg's syntax, loaded and
 * its features registered; 0 or the error. */
static int load_ffmpeg_model(VmafContext *vmaf, char *spec, VmafModel **model) {
    VmafModelConfig model_cfg = { .name = NULL, .flags = VMAF_MODEL_FLAGS_DEFAULT };
    char *version = NULL, *path = NULL, *overloads[16], *save = NULL;
    int n_overloads = 0, err;
    for (char *kv = strtok_r(spec, ":", &save); kv; kv = strtok_r(NULL, ":", &save)) {
        if (!strncmp(kv, "version=", 8)) version = kv + 8;
        else if (!strncmp(kv, "path=", 5)) path = kv + 5;
        else if (!strncmp(kv, "name=", 5)) model_cfg.name = kv + 5;
        else if (!strcmp(kv, "disable_clip")) model_cfg.flags |= VMAF_MODEL_FLAG_DISABLE_CLIP;
        else if (!strcmp(kv, "enable_transform")) model_cfg.flags |= VMAF_MODEL_FLAG_ENABLE_TRANSFORM;
        else if (strchr(kv, '.') && n_overloads < 16) overloads[n_overloads++] = kv;
        else return fail("bad model option", -22);
    }
    err = version ? vmaf_model_load(model, &model_cfg, version)
                  : vmaf_model_load_from_path(model, &model_cfg, path);
    if (err) return fail("vmaf_model_load", err);
    for (int i = 0; i < n_overloads; i++) {
        char *dot = strchr(overloads[i], '.'), *eq = strchr(overloads[i], '=');
        if (!eq || eq < dot) return fail("bad feature overload", -22);
        *dot = *eq = '\0';
        VmafFeatureDictionary *dict = NULL;
        err = vmaf_feature_dictionary_set(&dict, dot + 1, eq + 1);
        if (err) return fail("vmaf_feature_dictionary_set", err);
        err = vmaf_model_feature_overload(*model, overloads[i], dict);
        if (err) return fail("vmaf_model_feature_overload", err);
    }
    err = vmaf_use_features_from_model(vmaf, *model);
    if (err) return fail("vmaf_use_features_from_model", err);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 12) {
        fprintf(stderr, "usage: ffmpeg_filter REF DIST W H FMT BPC MODEL FEATURES SUBSAMPLE THREADS OUT\n");
        return 2;
    }
    const unsigned w = atoi(argv[3]), h = atoi(argv[4]), bpc = atoi(argv[6]);
    const enum VmafPixelFormat fmt = yuv_format(argv[5]);
    VmafConfiguration cfg = {
        .log_level = VMAF_LOG_LEVEL_INFO,
        .n_subsample = atoi(argv[9]),
        .n_threads = atoi(argv[10]),
    };
    VmafContext *vmaf;
    int err = vmaf_init(&vmaf, cfg);
    if (err) return fail("vmaf_init", err);

    /* The models: ffmpeg's parse_models, '|' between them. */
    char *spec = strdup(argv[7]), *save = NULL;
    VmafModel *models[4];
    int n_models = 0;
    for (char *m = strtok_r(spec, "|", &save); m && n_models < 4; m = strtok_r(NULL, "|", &save)) {
        if (load_ffmpeg_model(vmaf, m, &models[n_models++])) return 1;
    }
    VmafModel *model = models[0];

    /* Extra features: ffmpeg's parse_features, NAME or NAME=OPT=VAL:OPT=VAL
     * each: the name, and its options in a dictionary. */
    if (strcmp(argv[8], "-")) {
        char *names = strdup(argv[8]), *save = NULL;
        for (char *n = strtok_r(names, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
            VmafFeatureDictionary *opts = NULL;
            char *eq = strchr(n, '=');
            if (eq) {
                *eq = '\0';
                char *save_kv = NULL;
                for (char *kv = strtok_r(eq + 1, ":", &save_kv); kv;
                     kv = strtok_r(NULL, ":", &save_kv)) {
                    char *v = strchr(kv, '=');
                    if (!v) return fail("bad feature option", -22);
                    *v = '\0';
                    err = vmaf_feature_dictionary_set(&opts, kv, v + 1);
                    if (err) return fail("vmaf_feature_dictionary_set", err);
                }
            }
            err = vmaf_use_feature(vmaf, n, opts);
            if (err) return fail("vmaf_use_feature", err);
        }
        free(names);
    }

    /* Frames: ffmpeg's do_vmaf, a picture pair each. */
    unsigned frames = 0;
    if (feed(vmaf, argv[1], argv[2], fmt, bpc, w, h, &frames)) return 1;

    /* The end: ffmpeg's uninit. */
    if (finish(vmaf, model, frames, argv[11])) return 1;
    for (int i = 0; i < n_models; i++) vmaf_model_destroy(models[i]);
    vmaf_close(vmaf);
    free(spec);
    return 0;
}
