/* Drives libvmaf's C API as libvmaf's own `vmaf` tool does
 * (libvmaf/tools/vmaf.c) with a model that may be a collection: the model
 * load fails for a collection, which is then loaded as one; its features;
 * the frames; the flush; the pooled score of the model and the pooled
 * bootstrap statistics of the collection; the results file.
 *
 * usage: vmaf_tool REF DIST W H 420|422|444|400 BPC VERSION OUT.json */
#define PROGRAM "vmaf_tool"
#include "yuv_frames.h"

int main(int argc, char **argv) {
    if (argc != 9) {
        fprintf(stderr, "usage: vmaf_tool REF DIST W H FMT BPC VERSION OUT\n");
        return 2;
    }
    const unsigned w = atoi(argv[3]), h = atoi(argv[4]), bpc = atoi(argv[6]);
    const enum VmafPixelFormat fmt = yuv_format(argv[5]);
    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_INFO, .n_threads = 1, .n_subsample = 1 };
    VmafContext *vmaf;
    int err = vmaf_init(&vmaf, cfg);
    if (err) return fail("vmaf_init", err);

    VmafModelConfig model_cfg = { .name = "vmaf", .flags = VMAF_MODEL_FLAGS_DEFAULT };
    VmafModel *model = NULL;
    VmafModelCollection *collection = NULL;
    err = vmaf_model_load(&model, &model_cfg, argv[7]);
    if (err) {
        err = vmaf_model_collection_load(&model, &collection, &model_cfg, argv[7]);
        if (err) return fail("problem loading model", err);
        err = vmaf_use_features_from_model_collection(vmaf, collection);
    } else {
        err = vmaf_use_features_from_model(vmaf, model);
    }
    if (err) return fail("problem loading feature extractors", err);

    unsigned index = 0;
    if (feed(vmaf, argv[1], argv[2], fmt, bpc, w, h, &index)) return 1;
    err = vmaf_read_pictures(vmaf, NULL, NULL, 0);
    if (err) return fail("problem flushing context", err);

    double vmaf_score;
    err = vmaf_score_pooled(vmaf, model, VMAF_POOL_METHOD_MEAN, &vmaf_score, 0, index - 1);
    if (err) return fail("problem generating pooled VMAF score", err);
    printf("vmaf_v: %f\n", vmaf_score);
    if (collection) {
        VmafModelCollectionScore s;
        err = vmaf_score_pooled_model_collection(vmaf, collection, VMAF_POOL_METHOD_MEAN,
                                                 &s, 0, index - 1);
        if (err) return fail("problem generating pooled VMAF score of the collection", err);
        if (s.type != VMAF_MODEL_COLLECTION_SCORE_BOOTSTRAP) return fail("score type", -22);
        printf("%s: bagging %f, stddev %f, ci.p95 [%f, %f]\n", argv[7],
               s.bootstrap.bagging_score, s.bootstrap.stddev,
               s.bootstrap.ci.p95.lo, s.bootstrap.ci.p95.hi);
        VmafModelCollectionScore first;
        err = vmaf_score_at_index_model_collection(vmaf, collection, &first, 0);
        if (err) return fail("the collection's score of frame 0", err);
    }
    err = vmaf_write_output(vmaf, argv[8], VMAF_OUTPUT_FORMAT_JSON);
    if (err) return fail("could not write output", err);
    vmaf_model_destroy(model);
    if (collection) vmaf_model_collection_destroy(collection);
    vmaf_close(vmaf);
    return 0;
}
