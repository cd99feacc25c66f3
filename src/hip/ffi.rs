//! Raw types and the two function tables loaded at run time.
//!
//! Nothing here is linked: `libloading` opens the vendor libraries by soname
//! on first use, so the plugin loads on machines with neither stack.
//!
//! * AMD: `libamdhip64.so.7`, `.6`, `.5` (then `/opt/rocm/lib`), with hiprtc
//!   from `libhiprtc.so.7` / `.6` or, on ROCm 5, from libamdhip64 itself.
//! * NVIDIA: `libcuda.so.1` (driver API) with `libnvrtc.so.13` / `.12`.
//!
//! Enum values and struct layouts used below were read from each version's
//! headers (ROCm 5.2's `hip_runtime_api.h` on Debian 12, HIP 6.x/7.x's, CUDA
//! 13's `cuda.h`); see docs/architecture.md.

use libloading::Library;
use std::ffi::{c_char, c_int, c_uint, c_void};

pub type Handle = *mut c_void;

/// Declares a table of C functions and its loader; a missing symbol is an
/// error naming the symbol and the library.
macro_rules! table {
    ($name:ident { $( $field:ident : $sym:literal => fn($($arg:ty),*) -> $ret:ty ),* $(,)? }) => {
        pub struct $name {
            $( pub $field: unsafe extern "C" fn($($arg),*) -> $ret, )*
        }
        impl $name {
            /// # Safety
            /// `lib` must be the library these C signatures were written for.
            pub unsafe fn load(lib: &Library, lib_name: &str) -> Result<Self, String> {
                Ok(Self {
                    $( $field: {
                        // SAFETY: the caller vouches for the signature; the
                        // pointer is copied out and `lib` outlives the table
                        // (both live in the same `Runtime`).
                        let sym = unsafe {
                            lib.get::<unsafe extern "C" fn($($arg),*) -> $ret>(concat!($sym, "\0").as_bytes())
                        }.map_err(|e| format!("{} has no {}: {e}", lib_name, $sym))?;
                        *sym
                    }, )*
                })
            }
        }
    };
}

// ---------------------------------------------------------------- NVIDIA

table!(CudaFns {
    init: "cuInit" => fn(c_uint) -> c_int,
    driver_get_version: "cuDriverGetVersion" => fn(*mut c_int) -> c_int,
    device_get_count: "cuDeviceGetCount" => fn(*mut c_int) -> c_int,
    device_get: "cuDeviceGet" => fn(*mut c_int, c_int) -> c_int,
    device_get_name: "cuDeviceGetName" => fn(*mut c_char, c_int, c_int) -> c_int,
    device_get_attribute: "cuDeviceGetAttribute" => fn(*mut c_int, c_int, c_int) -> c_int,
    device_total_mem: "cuDeviceTotalMem_v2" => fn(*mut usize, c_int) -> c_int,
    primary_ctx_retain: "cuDevicePrimaryCtxRetain" => fn(*mut Handle, c_int) -> c_int,
    primary_ctx_release: "cuDevicePrimaryCtxRelease_v2" => fn(c_int) -> c_int,
    ctx_set_current: "cuCtxSetCurrent" => fn(Handle) -> c_int,
    ctx_push_current: "cuCtxPushCurrent_v2" => fn(Handle) -> c_int,
    ctx_pop_current: "cuCtxPopCurrent_v2" => fn(*mut Handle) -> c_int,
    ctx_get_device: "cuCtxGetDevice" => fn(*mut c_int) -> c_int,
    ctx_synchronize: "cuCtxSynchronize" => fn() -> c_int,
    mem_alloc: "cuMemAlloc_v2" => fn(*mut u64, usize) -> c_int,
    mem_free: "cuMemFree_v2" => fn(u64) -> c_int,
    mem_get_info: "cuMemGetInfo_v2" => fn(*mut usize, *mut usize) -> c_int,
    mem_host_alloc: "cuMemHostAlloc" => fn(*mut *mut c_void, usize, c_uint) -> c_int,
    mem_free_host: "cuMemFreeHost" => fn(*mut c_void) -> c_int,
    mem_host_register: "cuMemHostRegister_v2" => fn(*mut c_void, usize, c_uint) -> c_int,
    mem_host_unregister: "cuMemHostUnregister" => fn(*mut c_void) -> c_int,
    memcpy_2d_async: "cuMemcpy2DAsync_v2" => fn(*const CudaMemcpy2D, Handle) -> c_int,
    memcpy_htod_async: "cuMemcpyHtoDAsync_v2" => fn(u64, *const c_void, usize, Handle) -> c_int,
    memcpy_dtoh_async: "cuMemcpyDtoHAsync_v2" => fn(*mut c_void, u64, usize, Handle) -> c_int,
    memset_d8_async: "cuMemsetD8Async" => fn(u64, u8, usize, Handle) -> c_int,
    stream_create: "cuStreamCreate" => fn(*mut Handle, c_uint) -> c_int,
    stream_destroy: "cuStreamDestroy_v2" => fn(Handle) -> c_int,
    stream_synchronize: "cuStreamSynchronize" => fn(Handle) -> c_int,
    stream_wait_event: "cuStreamWaitEvent" => fn(Handle, Handle, c_uint) -> c_int,
    event_create: "cuEventCreate" => fn(*mut Handle, c_uint) -> c_int,
    event_record: "cuEventRecord" => fn(Handle, Handle) -> c_int,
    event_query: "cuEventQuery" => fn(Handle) -> c_int,
    event_synchronize: "cuEventSynchronize" => fn(Handle) -> c_int,
    event_elapsed_time: "cuEventElapsedTime" => fn(*mut f32, Handle, Handle) -> c_int,
    event_destroy: "cuEventDestroy_v2" => fn(Handle) -> c_int,
    module_load_data: "cuModuleLoadData" => fn(*mut Handle, *const c_void) -> c_int,
    module_get_function: "cuModuleGetFunction" => fn(*mut Handle, Handle, *const c_char) -> c_int,
    module_unload: "cuModuleUnload" => fn(Handle) -> c_int,
    launch_kernel: "cuLaunchKernel" => fn(Handle, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Handle, *mut *mut c_void, *mut *mut c_void) -> c_int,
    get_error_name: "cuGetErrorName" => fn(c_int, *mut *const c_char) -> c_int,
});

/// `CUDA_MEMCPY2D` (cuda.h), the `_v2` layout.
#[repr(C)]
pub struct CudaMemcpy2D {
    pub src_x_in_bytes: usize,
    pub src_y: usize,
    pub src_memory_type: c_uint,
    pub src_host: *const c_void,
    pub src_device: u64,
    pub src_array: Handle,
    pub src_pitch: usize,
    pub dst_x_in_bytes: usize,
    pub dst_y: usize,
    pub dst_memory_type: c_uint,
    pub dst_host: *mut c_void,
    pub dst_device: u64,
    pub dst_array: Handle,
    pub dst_pitch: usize,
    pub width_in_bytes: usize,
    pub height: usize,
}

pub const CU_MEMORYTYPE_HOST: c_uint = 1;
pub const CU_MEMORYTYPE_DEVICE: c_uint = 2;
/// cuda.h `CU_MEMORYTYPE_UNIFIED`: the owner of a unified address is looked up.
pub const CU_MEMORYTYPE_UNIFIED: c_uint = 4;
pub const CU_STREAM_NON_BLOCKING: c_uint = 1;
pub const CU_EVENT_DEFAULT: c_uint = 0;
pub const CU_EVENT_BLOCKING_SYNC: c_uint = 1;
pub const CU_EVENT_DISABLE_TIMING: c_uint = 2;
pub const CUDA_ERROR_NOT_READY: c_int = 600;
pub const CUDA_ERROR_OUT_OF_MEMORY: c_int = 2;
pub const CU_ATTR_WARP_SIZE: c_int = 10;
pub const CU_ATTR_MULTIPROCESSOR_COUNT: c_int = 16;
pub const CU_ATTR_CC_MAJOR: c_int = 75;
pub const CU_ATTR_CC_MINOR: c_int = 76;

// ---------------------------------------------------------------- NVDEC

// `libnvcuvid.so.1`, NVIDIA's video decoder (the driver ships it beside
// libcuda). Layouts from the Video Codec SDK's `nvcuvid.h` and `cuviddec.h`
// (as in nv-codec-headers 12.x/13.x); `tcu_ulong` is `unsigned long`, 64
// bits on Linux. Sizes are held by this file's tests.
table!(CuvidFns {
    create_video_parser: "cuvidCreateVideoParser" => fn(*mut Handle, *mut CuvidParserParams) -> c_int,
    parse_video_data: "cuvidParseVideoData" => fn(Handle, *mut CuvidSourceDataPacket) -> c_int,
    destroy_video_parser: "cuvidDestroyVideoParser" => fn(Handle) -> c_int,
    create_decoder: "cuvidCreateDecoder" => fn(*mut Handle, *mut CuvidDecodeCreateInfo) -> c_int,
    destroy_decoder: "cuvidDestroyDecoder" => fn(Handle) -> c_int,
    decode_picture: "cuvidDecodePicture" => fn(Handle, *mut c_void) -> c_int,
    map_video_frame: "cuvidMapVideoFrame64" => fn(Handle, c_int, *mut u64, *mut c_uint, *mut CuvidProcParams) -> c_int,
    unmap_video_frame: "cuvidUnmapVideoFrame64" => fn(Handle, u64) -> c_int,
    get_decoder_caps: "cuvidGetDecoderCaps" => fn(*mut CuvidDecodeCaps) -> c_int,
});

/// `CUVIDDECODECAPS` (nvcuvid's cuviddec.h, 12.x).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CuvidDecodeCaps {
    pub codec_type: c_int,
    pub chroma_format: c_int,
    pub bit_depth_minus8: c_uint,
    pub reserved1: [c_uint; 3],
    pub is_supported: u8,
    pub num_nvdecs: u8,
    pub output_format_mask: u16,
    pub max_width: c_uint,
    pub max_height: c_uint,
    pub max_mb_count: c_uint,
    pub min_width: u16,
    pub min_height: u16,
    pub is_histogram_supported: u8,
    pub counter_bit_depth: u8,
    pub max_histogram_bins: u16,
    pub reserved3: [c_uint; 10],
}

/// `cudaVideoCodec`.
pub const CUVID_CODEC_H264: c_int = 4;
pub const CUVID_CODEC_HEVC: c_int = 8;
pub const CUVID_CODEC_VP9: c_int = 10;
pub const CUVID_CODEC_AV1: c_int = 11;
/// `cudaVideoChromaFormat_420` and `_444`.
pub const CUVID_CHROMA_420: c_int = 1;
pub const CUVID_CHROMA_444: c_int = 3;
/// `cudaVideoSurfaceFormat_NV12`, `_P016`, `_YUV444` and `_YUV444_16Bit`.
pub const CUVID_SURFACE_NV12: c_int = 0;
pub const CUVID_SURFACE_P016: c_int = 1;
pub const CUVID_SURFACE_YUV444: c_int = 2;
pub const CUVID_SURFACE_YUV444_16BIT: c_int = 3;
/// `cudaVideoDeinterlaceMode_Weave`.
pub const CUVID_DEINTERLACE_WEAVE: c_int = 0;
/// `cudaVideoCreate_PreferCUVID`: the dedicated decode engines.
pub const CUVID_CREATE_PREFER_CUVID: std::ffi::c_ulong = 4;
/// `CUvideopacketflags`.
pub const CUVID_PKT_ENDOFSTREAM: std::ffi::c_ulong = 0x01;
pub const CUVID_PKT_ENDOFPICTURE: std::ffi::c_ulong = 0x08;

pub type CuvidSequenceCallback = unsafe extern "C" fn(*mut c_void, *mut CuvidVideoFormat) -> c_int;
pub type CuvidDecodeCallback = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
pub type CuvidDisplayCallback =
    unsafe extern "C" fn(*mut c_void, *mut CuvidParserDispInfo) -> c_int;

/// `CUVIDEOFORMAT` (what the parser says of a sequence).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CuvidVideoFormat {
    pub codec: c_int,
    pub frame_rate: [c_uint; 2],
    pub progressive_sequence: u8,
    pub bit_depth_luma_minus8: u8,
    pub bit_depth_chroma_minus8: u8,
    pub min_num_decode_surfaces: u8,
    pub coded_width: c_uint,
    pub coded_height: c_uint,
    /// left, top, right, bottom.
    pub display_area: [c_int; 4],
    pub chroma_format: c_int,
    pub bitrate: c_uint,
    pub display_aspect_ratio: [c_int; 2],
    /// video_format:3, full_range:1, reserved:4; primaries; transfer; matrix.
    pub video_signal_description: [u8; 4],
    pub seqhdr_data_length: c_uint,
}

/// `CUVIDSOURCEDATAPACKET`.
#[repr(C)]
pub struct CuvidSourceDataPacket {
    pub flags: std::ffi::c_ulong,
    pub payload_size: std::ffi::c_ulong,
    pub payload: *const u8,
    pub timestamp: i64,
}

/// `CUVIDPARSERDISPINFO`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CuvidParserDispInfo {
    pub picture_index: c_int,
    pub progressive_frame: c_int,
    pub top_field_first: c_int,
    pub repeat_first_field: c_int,
    pub timestamp: i64,
}

/// `CUVIDPARSERPARAMS`.
#[repr(C)]
pub struct CuvidParserParams {
    pub codec_type: c_int,
    pub max_num_decode_surfaces: c_uint,
    pub clock_rate: c_uint,
    pub error_threshold: c_uint,
    pub max_display_delay: c_uint,
    /// bAnnexb:1, bMemoryOptimize:1, reserved:30.
    pub flags: c_uint,
    pub reserved1: [c_uint; 4],
    pub user_data: *mut c_void,
    pub sequence_callback: Option<CuvidSequenceCallback>,
    pub decode_picture: Option<CuvidDecodeCallback>,
    pub display_picture: Option<CuvidDisplayCallback>,
    pub get_operating_point: *mut c_void,
    pub get_sei_msg: *mut c_void,
    pub reserved2: [*mut c_void; 5],
    pub ext_video_info: *mut c_void,
}

/// `CUVIDDECODECREATEINFO`.
#[repr(C)]
pub struct CuvidDecodeCreateInfo {
    pub width: std::ffi::c_ulong,
    pub height: std::ffi::c_ulong,
    pub num_decode_surfaces: std::ffi::c_ulong,
    pub codec_type: c_int,
    pub chroma_format: c_int,
    pub creation_flags: std::ffi::c_ulong,
    pub bit_depth_minus8: std::ffi::c_ulong,
    pub intra_decode_only: std::ffi::c_ulong,
    pub max_width: std::ffi::c_ulong,
    pub max_height: std::ffi::c_ulong,
    pub reserved1: std::ffi::c_ulong,
    /// left, top, right, bottom.
    pub display_area: [i16; 4],
    pub output_format: c_int,
    pub deinterlace_mode: c_int,
    pub target_width: std::ffi::c_ulong,
    pub target_height: std::ffi::c_ulong,
    pub num_output_surfaces: std::ffi::c_ulong,
    pub vid_lock: Handle,
    pub target_rect: [i16; 4],
    pub enable_histogram: std::ffi::c_ulong,
    pub reserved2: [std::ffi::c_ulong; 4],
}

/// `CUVIDPROCPARAMS`.
#[repr(C)]
pub struct CuvidProcParams {
    pub progressive_frame: c_int,
    pub second_field: c_int,
    pub top_field_first: c_int,
    pub unpaired_field: c_int,
    pub reserved_flags: c_uint,
    pub reserved_zero: c_uint,
    pub raw_input_dptr: u64,
    pub raw_input_pitch: c_uint,
    pub raw_input_format: c_uint,
    pub raw_output_dptr: u64,
    pub raw_output_pitch: c_uint,
    pub reserved1: c_uint,
    pub output_stream: Handle,
    pub reserved: [c_uint; 46],
    pub histogram_dptr: *mut u64,
    pub reserved2: [*mut c_void; 1],
}

// ---------------------------------------------------------------- AMD

table!(HipFns {
    init: "hipInit" => fn(c_uint) -> c_int,
    runtime_get_version: "hipRuntimeGetVersion" => fn(*mut c_int) -> c_int,
    get_device_count: "hipGetDeviceCount" => fn(*mut c_int) -> c_int,
    set_device: "hipSetDevice" => fn(c_int) -> c_int,
    device_get_name: "hipDeviceGetName" => fn(*mut c_char, c_int, c_int) -> c_int,
    device_get_attribute: "hipDeviceGetAttribute" => fn(*mut c_int, c_int, c_int) -> c_int,
    device_total_mem: "hipDeviceTotalMem" => fn(*mut usize, c_int) -> c_int,
    device_synchronize: "hipDeviceSynchronize" => fn() -> c_int,
    malloc: "hipMalloc" => fn(*mut u64, usize) -> c_int,
    free: "hipFree" => fn(u64) -> c_int,
    mem_get_info: "hipMemGetInfo" => fn(*mut usize, *mut usize) -> c_int,
    host_malloc: "hipHostMalloc" => fn(*mut *mut c_void, usize, c_uint) -> c_int,
    host_free: "hipHostFree" => fn(*mut c_void) -> c_int,
    memcpy_2d_async: "hipMemcpy2DAsync" => fn(u64, usize, *const c_void, usize, usize, usize, c_int, Handle) -> c_int,
    memcpy_async: "hipMemcpyAsync" => fn(*mut c_void, *const c_void, usize, c_int, Handle) -> c_int,
    memset_async: "hipMemsetAsync" => fn(u64, c_int, usize, Handle) -> c_int,
    stream_create_with_flags: "hipStreamCreateWithFlags" => fn(*mut Handle, c_uint) -> c_int,
    stream_destroy: "hipStreamDestroy" => fn(Handle) -> c_int,
    stream_synchronize: "hipStreamSynchronize" => fn(Handle) -> c_int,
    stream_wait_event: "hipStreamWaitEvent" => fn(Handle, Handle, c_uint) -> c_int,
    event_create_with_flags: "hipEventCreateWithFlags" => fn(*mut Handle, c_uint) -> c_int,
    event_record: "hipEventRecord" => fn(Handle, Handle) -> c_int,
    event_query: "hipEventQuery" => fn(Handle) -> c_int,
    event_synchronize: "hipEventSynchronize" => fn(Handle) -> c_int,
    event_elapsed_time: "hipEventElapsedTime" => fn(*mut f32, Handle, Handle) -> c_int,
    event_destroy: "hipEventDestroy" => fn(Handle) -> c_int,
    module_load_data: "hipModuleLoadData" => fn(*mut Handle, *const c_void) -> c_int,
    module_get_function: "hipModuleGetFunction" => fn(*mut Handle, Handle, *const c_char) -> c_int,
    module_unload: "hipModuleUnload" => fn(Handle) -> c_int,
    module_launch_kernel: "hipModuleLaunchKernel" => fn(Handle, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Handle, *mut *mut c_void, *mut *mut c_void) -> c_int,
    get_error_name: "hipGetErrorName" => fn(c_int) -> *const c_char,
});

/// `hipGetDeviceProperties` (ROCm 5 layout) or `hipGetDevicePropertiesR0600`
/// (ROCm 6 and later); which one is chosen from the symbols present.
pub type HipGetDeviceProperties = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;
/// Byte offset of `char gcnArchName[256]` in each layout: 396 in ROCm 5's
/// `hipDeviceProp_t` (792 bytes), 1160 in `hipDeviceProp_tR0600` (1472
/// bytes), both measured with `offsetof` against the headers.
pub const GCN_ARCH_OFFSET_R0500: usize = 396;
pub const GCN_ARCH_OFFSET_R0600: usize = 1160;
/// Large enough for either layout.
pub const DEVICE_PROP_BYTES: usize = 4096;

// Every AMD value below is held by this file's tests to the measured
// fixtures `tests/abi/rocm-*.txt` (one per ROCm version; docs/architecture.md
// "AMD status" has the table).
pub const HIP_ERROR_OUT_OF_MEMORY: c_int = 2;
pub const HIP_HOST_MALLOC_DEFAULT: c_uint = 0;
pub const HIP_MEMCPY_HOST_TO_DEVICE: c_int = 1;
pub const HIP_MEMCPY_DEVICE_TO_HOST: c_int = 2;
pub const HIP_MEMCPY_DEVICE_TO_DEVICE: c_int = 3;
pub const HIP_STREAM_NON_BLOCKING: c_uint = 1;
pub const HIP_EVENT_DEFAULT: c_uint = 0;
pub const HIP_EVENT_BLOCKING_SYNC: c_uint = 1;
pub const HIP_EVENT_DISABLE_TIMING: c_uint = 2;
pub const HIP_ERROR_NOT_READY: c_int = 600;
pub const HIP_ERROR_NO_DEVICE: c_int = 100;
pub const HIP_ERROR_INVALID_DEVICE: c_int = 101;
/// `hipDeviceAttribute_t`: the same values in ROCm 5.2's and HIP 6/7's headers.
pub const HIP_ATTR_WARP_SIZE: c_int = 87;
pub const HIP_ATTR_MULTIPROCESSOR_COUNT: c_int = 63;

/// The kernel compiler: nvrtc and hiprtc have the same C API under two
/// prefixes (and two names for "get the code object"), so one table serves
/// both, loaded with the symbol names of [`NVRTC`] or [`HIPRTC`].
pub struct RtcFns {
    pub version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int,
    pub create_program: unsafe extern "C" fn(
        *mut Handle,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int,
    pub compile_program: unsafe extern "C" fn(Handle, c_int, *const *const c_char) -> c_int,
    pub get_program_log_size: unsafe extern "C" fn(Handle, *mut usize) -> c_int,
    pub get_program_log: unsafe extern "C" fn(Handle, *mut c_char) -> c_int,
    pub get_code_size: unsafe extern "C" fn(Handle, *mut usize) -> c_int,
    pub get_code: unsafe extern "C" fn(Handle, *mut c_char) -> c_int,
    pub destroy_program: unsafe extern "C" fn(*mut Handle) -> c_int,
    pub get_error_string: unsafe extern "C" fn(c_int) -> *const c_char,
    /// The symbol names, in field order, for error messages.
    pub names: &'static [&'static str; 9],
}

/// nvrtc.h, in `RtcFns` field order.
pub const NVRTC: [&str; 9] = [
    "nvrtcVersion",
    "nvrtcCreateProgram",
    "nvrtcCompileProgram",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcGetCUBINSize",
    "nvrtcGetCUBIN",
    "nvrtcDestroyProgram",
    "nvrtcGetErrorString",
];

/// hiprtc.h, in `RtcFns` field order.
pub const HIPRTC: [&str; 9] = [
    "hiprtcVersion",
    "hiprtcCreateProgram",
    "hiprtcCompileProgram",
    "hiprtcGetProgramLogSize",
    "hiprtcGetProgramLog",
    "hiprtcGetCodeSize",
    "hiprtcGetCode",
    "hiprtcDestroyProgram",
    "hiprtcGetErrorString",
];

impl RtcFns {
    /// # Safety
    /// `lib` must export `names` with the C signatures of the fields.
    pub unsafe fn load(
        lib: &Library,
        lib_name: &str,
        names: &'static [&'static str; 9],
    ) -> Result<Self, String> {
        fn get<T: Copy>(lib: &Library, lib_name: &str, sym: &str) -> Result<T, String> {
            let c = format!("{sym}\0");
            // SAFETY: the caller of `load` vouches for the signature; the
            // pointer is copied out and `lib` outlives the table.
            let f = unsafe { lib.get::<T>(c.as_bytes()) }
                .map_err(|e| format!("{lib_name} has no {sym}: {e}"))?;
            Ok(*f)
        }
        Ok(Self {
            version: get(lib, lib_name, names[0])?,
            create_program: get(lib, lib_name, names[1])?,
            compile_program: get(lib, lib_name, names[2])?,
            get_program_log_size: get(lib, lib_name, names[3])?,
            get_program_log: get(lib, lib_name, names[4])?,
            get_code_size: get(lib, lib_name, names[5])?,
            get_code: get(lib, lib_name, names[6])?,
            destroy_program: get(lib, lib_name, names[7])?,
            get_error_string: get(lib, lib_name, names[8])?,
            names,
        })
    }
}

/// Opens the first library of `names` that loads; the error lists every try.
pub fn open_first(names: &[&str]) -> Result<(Library, String), String> {
    let mut tried = Vec::new();
    for name in names {
        // SAFETY: these are the vendors' runtime libraries; their
        // initialisers are designed to run in any process.
        match unsafe { Library::new(*name) } {
            Ok(lib) => return Ok((lib, (*name).to_string())),
            Err(e) => tried.push(format!("{name} ({e})")),
        }
    }
    Err(tried.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `name value` lines of a fixture, comments skipped.
    fn facts(text: &str) -> std::collections::HashMap<&str, i64> {
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let (k, v) = l.split_once(' ').expect("name value");
                (k, v.trim().parse().expect("a number"))
            })
            .collect()
    }

    /// NVDEC's structs against `sizeof`/`offsetof` measured with gcc on
    /// x86-64 Linux over nv-codec-headers 13.0's `dynlink_nvcuvid.h` and
    /// `dynlink_cuviddec.h` (the SDK's layouts, unchanged since SDK 12.1).
    #[test]
    fn nvdec_layouts_match_the_sdk_headers() {
        use std::mem::{offset_of, size_of};
        assert_eq!(size_of::<CuvidVideoFormat>(), 64);
        assert_eq!(offset_of!(CuvidVideoFormat, display_area), 24);
        assert_eq!(offset_of!(CuvidVideoFormat, chroma_format), 40);
        assert_eq!(offset_of!(CuvidVideoFormat, video_signal_description), 56);
        assert_eq!(size_of::<CuvidParserDispInfo>(), 24);
        assert_eq!(size_of::<CuvidSourceDataPacket>(), 32);
        assert_eq!(size_of::<CuvidParserParams>(), 136);
        assert_eq!(offset_of!(CuvidParserParams, user_data), 40);
        assert_eq!(offset_of!(CuvidParserParams, ext_video_info), 128);
        assert_eq!(size_of::<CuvidDecodeCreateInfo>(), 176);
        assert_eq!(offset_of!(CuvidDecodeCreateInfo, display_area), 80);
        assert_eq!(offset_of!(CuvidDecodeCreateInfo, output_format), 88);
        assert_eq!(offset_of!(CuvidDecodeCreateInfo, vid_lock), 120);
        assert_eq!(offset_of!(CuvidDecodeCreateInfo, target_rect), 128);
        assert_eq!(size_of::<CuvidProcParams>(), 264);
        assert_eq!(offset_of!(CuvidProcParams, output_stream), 56);
        assert_eq!(offset_of!(CuvidProcParams, histogram_dptr), 248);
    }

    #[test]
    fn amd_constants_match_every_measured_rocm_version() {
        let fixtures = [
            ("5.2", include_str!("../../tests/abi/rocm-5.2.txt")),
            ("6.2", include_str!("../../tests/abi/rocm-6.2.txt")),
            ("7.12", include_str!("../../tests/abi/rocm-7.12.txt")),
        ];
        for (version, text) in fixtures {
            let f = facts(text);
            let want = |k: &str| *f.get(k).unwrap_or_else(|| panic!("{version}: no {k}"));
            let check = |k: &str, ours: i64| assert_eq!(ours, want(k), "ROCm {version}: {k}");
            check("hipErrorOutOfMemory", HIP_ERROR_OUT_OF_MEMORY.into());
            check("hipErrorNoDevice", HIP_ERROR_NO_DEVICE.into());
            check("hipErrorInvalidDevice", HIP_ERROR_INVALID_DEVICE.into());
            check("hipErrorNotReady", HIP_ERROR_NOT_READY.into());
            check("hipMemcpyHostToDevice", HIP_MEMCPY_HOST_TO_DEVICE.into());
            check("hipMemcpyDeviceToHost", HIP_MEMCPY_DEVICE_TO_HOST.into());
            check(
                "hipMemcpyDeviceToDevice",
                HIP_MEMCPY_DEVICE_TO_DEVICE.into(),
            );
            check("hipStreamNonBlocking", HIP_STREAM_NON_BLOCKING.into());
            check("hipEventDefault", HIP_EVENT_DEFAULT.into());
            check("hipEventBlockingSync", HIP_EVENT_BLOCKING_SYNC.into());
            check("hipEventDisableTiming", HIP_EVENT_DISABLE_TIMING.into());
            check("hipHostMallocDefault", HIP_HOST_MALLOC_DEFAULT.into());
            check("hipDeviceAttributeWarpSize", HIP_ATTR_WARP_SIZE.into());
            check(
                "hipDeviceAttributeMultiprocessorCount",
                HIP_ATTR_MULTIPROCESSOR_COUNT.into(),
            );
            // The properties layout is picked by major version.
            let offset = if want("HIP_VERSION_MAJOR") >= 6 {
                GCN_ARCH_OFFSET_R0600
            } else {
                GCN_ARCH_OFFSET_R0500
            };
            check("offsetof_gcnArchName", offset as i64);
            check("sizeof_gcnArchName", 256);
            assert!(
                want("sizeof_hipDeviceProp_t") as usize <= DEVICE_PROP_BYTES,
                "ROCm {version}: DEVICE_PROP_BYTES too small"
            );
        }
    }
}
