/* Drives the HIP fork's GPU state calls (libvmaf_hip.h): the GPUs listed,
 * a state for the first, imported into a context, which then scores a
 * pair. Without a usable GPU it prints what vmaf_hip_state_init returned
 * and stops there.
 *
 * usage: hip_state REF DIST W H 420|422|444|400 BPC VERSION OUT.json */
#define PROGRAM "hip_state"
#include "yuv_frames.h"
#include <libvmaf/libvmaf_hip.h>

int main(int argc, char **argv) {
    if (argc != 9) {
        fprintf(stderr, "usage: hip_state REF DIST W H FMT BPC VERSION OUT\n");
        return 2;
    }
    printf("available: %d\n", vmaf_hip_available());
    printf("devices: %d\n", vmaf_hip_list_devices());
    VmafHipState *state = NULL;
    VmafHipConfiguration hip_cfg = { .device_index = -1, .flags = 0 };
    int err = vmaf_hip_state_init(&state, hip_cfg);
    printf("state: %d\n", err);
    if (err) return 0;

    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_INFO, .n_threads = 1 };
    VmafContext *vmaf;
    err = vmaf_init(&vmaf, cfg);
    if (err) return fail("vmaf_init", err);
    err = vmaf_hip_import_state(vmaf, state);
    if (err) return fail("vmaf_hip_import_state", err);
    VmafModel *model;
    if (use_model(vmaf, argv[7], &model)) return 1;
    unsigned frames = 0;
    if (feed(vmaf, argv[1], argv[2], yuv_format(argv[5]), atoi(argv[6]), atoi(argv[3]),
             atoi(argv[4]), &frames))
        return 1;
    if (finish(vmaf, model, frames, argv[8])) return 1;
    vmaf_model_destroy(model);
    vmaf_close(vmaf);
    vmaf_hip_state_free(&state);
    printf("freed: %s\n", state ? "no" : "yes");
    return 0;
}
