// vmafhip kernel prelude: the few spellings that differ between hiprtc (AMD)
// and nvrtc (NVIDIA), fixed-width integer names, and helpers shared by the
// stages. Every kernel file includes it first.
//
// Arithmetic conventions (they make the kernels bit-exact with src/vmaf):
// * integer overflow that libvmaf relies on (int32 wrap-around) is written
//   with unsigned arithmetic, which wraps by definition;
// * float -> int conversions go through the helpers below, which truncate
//   and saturate as Rust's `as` does (libvmaf's values are always in range);
// * reductions are integer sums, so their order never changes the result.
#pragma once

typedef signed char i8;
typedef unsigned char u8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

#define VMAF_KERNEL extern "C" __global__ __launch_bounds__(256)
// The same with a register budget that lets `min_blocks` blocks share a
// multiprocessor (CUDA's meaning; HIP reads the second argument as a
// wavefront count, which only makes it looser).
#define VMAF_KERNEL_BOUNDS(min_blocks) extern "C" __global__ __launch_bounds__(256, min_blocks)
// All kernels run 256-thread blocks (a multiple of every warp/wavefront width).
#define VMAF_BLOCK 256

// The launch's dynamic shared memory as an array of T. hiprtc and nvrtc
// take the `extern __shared__` form; a host-side build of the kernels
// (tests/hipemu) defines its own spelling first.
#ifndef VMAF_DYNAMIC_SHARED
#define VMAF_DYNAMIC_SHARED(T, name) extern __shared__ T name[]
#endif

// Reflect without repeating the edge: -k reads k, n-1+k reads n-1-k
// (src/extractors/common/mod.rs: mirror_r101).
__device__ __forceinline__ int mirror_r101(int i, int n) {
    return i < 0 ? -i : (i >= n ? 2 * n - 2 - i : i);
}

__device__ __forceinline__ i32 wrap_add(i32 a, i32 b) { return (i32)((u32)a + (u32)b); }
__device__ __forceinline__ i32 wrap_sub(i32 a, i32 b) { return (i32)((u32)a - (u32)b); }
__device__ __forceinline__ i32 wrap_mul(i32 a, i32 b) { return (i32)((u32)a * (u32)b); }
__device__ __forceinline__ i32 wrap_abs(i32 a) { return a < 0 ? (i32)(0u - (u32)a) : a; }
__device__ __forceinline__ i32 wrap_shl(i32 a, int s) { return (i32)((u32)a << (s & 31)); }

// Rust `as` from double: truncate, saturate, NaN -> 0.
__device__ __forceinline__ i64 f64_to_i64(double x) {
    if (x != x) return 0;
    if (x >= 9223372036854775807.0) return 9223372036854775807LL;
    if (x <= -9223372036854775808.0) return (-9223372036854775807LL - 1);
    return (i64)x;
}
__device__ __forceinline__ i32 f64_to_i32(double x) {
    if (x != x) return 0;
    if (x >= 2147483647.0) return 2147483647;
    if (x <= -2147483648.0) return (-2147483647 - 1);
    return (i32)x;
}
__device__ __forceinline__ i16 f64_to_i16(double x) {
    if (x != x) return 0;
    if (x >= 32767.0) return 32767;
    if (x <= -32768.0) return -32768;
    return (i16)(i32)x;
}

// Sums N values over the block (blockDim.x == VMAF_BLOCK); every thread
// gets the totals. `sh` holds N * VMAF_BLOCK elements.
template <typename T, int N>
__device__ __forceinline__ void block_sum(T (&v)[N], T* sh) {
    const unsigned t = threadIdx.x;
    for (int k = 0; k < N; ++k) sh[k * VMAF_BLOCK + t] = v[k];
    __syncthreads();
    for (unsigned s = VMAF_BLOCK / 2; s > 0; s >>= 1) {
        if (t < s)
            for (int k = 0; k < N; ++k) sh[k * VMAF_BLOCK + t] += sh[k * VMAF_BLOCK + t + s];
        __syncthreads();
    }
    for (int k = 0; k < N; ++k) v[k] = sh[k * VMAF_BLOCK];
    __syncthreads();
}

__device__ __forceinline__ void atomic_add_u64(u64* p, u64 v) {
    atomicAdd((unsigned long long*)p, (unsigned long long)v);
}
