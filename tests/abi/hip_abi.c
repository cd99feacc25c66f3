/* Prints the AMD HIP ABI facts that src/hip/ffi.rs relies on, measured
 * against the HIP headers it is compiled with: enum values, flags, and the
 * device-properties layout. One "name value" line each; the output for each
 * ROCm version is kept beside this file (rocm-X.Y.txt) and
 * src/hip/ffi.rs's tests hold its constants to every one of them.
 *
 *   cc -D__HIP_PLATFORM_AMD__ -I<rocm>/include tests/abi/hip_abi.c -o hip_abi && ./hip_abi
 */
#include <stddef.h>
#include <stdio.h>
#include <hip/hip_version.h>
#include <hip/hip_runtime_api.h>

#define SHOW(name, value) printf("%s %ld\n", name, (long)(value))

int main(void)
{
    SHOW("HIP_VERSION_MAJOR", HIP_VERSION_MAJOR);
    SHOW("HIP_VERSION_MINOR", HIP_VERSION_MINOR);
    SHOW("hipSuccess", hipSuccess);
    SHOW("hipErrorOutOfMemory", hipErrorOutOfMemory);
    SHOW("hipErrorNoDevice", hipErrorNoDevice);
    SHOW("hipErrorInvalidDevice", hipErrorInvalidDevice);
    SHOW("hipErrorNotReady", hipErrorNotReady);
    SHOW("hipMemcpyHostToDevice", hipMemcpyHostToDevice);
    SHOW("hipMemcpyDeviceToHost", hipMemcpyDeviceToHost);
    SHOW("hipMemcpyDeviceToDevice", hipMemcpyDeviceToDevice);
    SHOW("hipStreamNonBlocking", hipStreamNonBlocking);
    SHOW("hipEventDefault", hipEventDefault);
    SHOW("hipEventBlockingSync", hipEventBlockingSync);
    SHOW("hipEventDisableTiming", hipEventDisableTiming);
    SHOW("hipHostMallocDefault", hipHostMallocDefault);
    SHOW("hipDeviceAttributeWarpSize", hipDeviceAttributeWarpSize);
    SHOW("hipDeviceAttributeMultiprocessorCount", hipDeviceAttributeMultiprocessorCount);
    /* The layout hipGetDeviceProperties fills in this version (ROCm 6 and
     * later name it hipDeviceProp_tR0600 and export the R0600 symbol). */
    SHOW("sizeof_hipDeviceProp_t", sizeof(hipDeviceProp_t));
    SHOW("offsetof_gcnArchName", offsetof(hipDeviceProp_t, gcnArchName));
    SHOW("sizeof_gcnArchName", sizeof(((hipDeviceProp_t *)0)->gcnArchName));
    return 0;
}
