/* vmafhip's libvmaf: feature options (libvmaf 3.2's feature.h ABI). */
#ifndef __VMAF_FEATURE_H__
#define __VMAF_FEATURE_H__

#ifdef __cplusplus
extern "C" {
#endif

/* Options of one feature extractor, as key/value strings. */
typedef struct VmafFeatureDictionary VmafFeatureDictionary;

/* Adds or replaces `key` (allocating *dict on first use). 0 or -errno. */
int vmaf_feature_dictionary_set(VmafFeatureDictionary **dict, const char *key,
                                const char *val);

/* Frees *dict and sets it to NULL. 0 or -errno. */
int vmaf_feature_dictionary_free(VmafFeatureDictionary **dict);

#ifdef __cplusplus
}
#endif

#endif /* __VMAF_FEATURE_H__ */
