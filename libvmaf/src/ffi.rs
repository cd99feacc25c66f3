//! The C types of libvmaf 3.2's headers (`include/libvmaf/*.h`), laid out
//! as C lays them out (`tests/libvmaf_abi.c` holds the sizes and offsets).

#![forbid(unsafe_code)]

use std::ffi::{c_char, c_int, c_uint, c_void};

/// libvmaf's return codes: 0, or a negative errno.
pub const EINVAL: c_int = 22;
pub const ENODEV: c_int = 19;
pub const ENOMEM: c_int = 12;

/// `enum VmafLogLevel`.
pub const LOG_ERROR: c_int = 1;
pub const LOG_WARNING: c_int = 2;
pub const LOG_INFO: c_int = 3;
pub const LOG_DEBUG: c_int = 4;

/// `enum VmafOutputFormat`.
pub const OUTPUT_XML: c_int = 1;
pub const OUTPUT_JSON: c_int = 2;
pub const OUTPUT_CSV: c_int = 3;
pub const OUTPUT_SUB: c_int = 4;

/// `enum VmafPoolingMethod`.
pub const POOL_MIN: c_int = 1;
pub const POOL_MAX: c_int = 2;
pub const POOL_MEAN: c_int = 3;
pub const POOL_HARMONIC_MEAN: c_int = 4;

/// `enum VmafPixelFormat`.
pub const PIX_FMT_YUV420P: c_int = 1;
pub const PIX_FMT_YUV422P: c_int = 2;
pub const PIX_FMT_YUV444P: c_int = 3;
pub const PIX_FMT_YUV400P: c_int = 4;

/// `enum VmafModelFlags`.
pub const MODEL_FLAG_DISABLE_CLIP: u64 = 1 << 0;
pub const MODEL_FLAG_ENABLE_TRANSFORM: u64 = 1 << 1;
pub const MODEL_FLAG_DISABLE_TRANSFORM: u64 = 1 << 2;

/// `VMAF_MODEL_COLLECTION_SCORE_BOOTSTRAP`.
pub const COLLECTION_SCORE_BOOTSTRAP: c_int = 1;

/// `VmafConfiguration`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Configuration {
    pub log_level: c_int,
    pub n_threads: c_uint,
    pub n_subsample: c_uint,
    pub cpumask: u64,
    pub gpumask: u64,
}

/// `VmafPicture`.
#[repr(C)]
#[derive(Debug)]
pub struct Picture {
    pub pix_fmt: c_int,
    pub bpc: c_uint,
    pub w: [c_uint; 3],
    pub h: [c_uint; 3],
    pub stride: [isize; 3],
    pub data: [*mut c_void; 3],
    pub reference: *mut c_void,
    pub private: *mut c_void,
}

impl Picture {
    /// A picture of `pix_fmt` at `bpc` bits with no planes yet.
    pub fn empty(pix_fmt: c_int, bpc: c_uint) -> Picture {
        Picture {
            pix_fmt,
            bpc,
            w: [0; 3],
            h: [0; 3],
            stride: [0; 3],
            data: [std::ptr::null_mut(); 3],
            reference: std::ptr::null_mut(),
            private: std::ptr::null_mut(),
        }
    }
}

/// `VmafModelConfig`.
#[repr(C)]
#[derive(Debug)]
pub struct ModelConfig {
    pub name: *const c_char,
    pub flags: u64,
}

/// `VmafModelCollectionScore`.
#[repr(C)]
#[derive(Debug, Default)]
pub struct CollectionScore {
    pub kind: c_int,
    pub bagging_score: f64,
    pub stddev: f64,
    pub ci_p95_lo: f64,
    pub ci_p95_hi: f64,
}

/// `VmafPictureConfiguration`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PictureConfiguration {
    pub w: c_uint,
    pub h: c_uint,
    pub bpc: c_uint,
    pub pix_fmt: c_int,
    pub pic_cnt: c_uint,
}

/// `VmafCudaConfiguration`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CudaConfiguration {
    /// A `CUcontext`, or NULL for the first GPU's primary context.
    pub cu_ctx: *mut c_void,
}

/// `enum VmafCudaPicturePreallocationMethod` (and the HIP one, alike).
pub const PREALLOC_NONE: c_int = 0;
pub const PREALLOC_DEVICE: c_int = 1;
pub const PREALLOC_HOST: c_int = 2;
pub const PREALLOC_HOST_PINNED: c_int = 3;

/// `VmafCudaPictureConfiguration` (and `VmafHipPictureConfiguration`, laid
/// out alike).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GpuPictureConfiguration {
    pub w: c_uint,
    pub h: c_uint,
    pub bpc: c_uint,
    pub pix_fmt: c_int,
    pub pic_prealloc_method: c_int,
}

// The Rust side of the layouts `tests/libvmaf_api.rs` holds the headers to
// (x86_64 and other LP64 targets).
#[cfg(target_pointer_width = "64")]
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<Configuration>() == 32 && offset_of!(Configuration, cpumask) == 16);
    assert!(size_of::<Picture>() == 96);
    assert!(offset_of!(Picture, stride) == 32 && offset_of!(Picture, data) == 56);
    assert!(offset_of!(Picture, reference) == 80 && offset_of!(Picture, private) == 88);
    assert!(size_of::<ModelConfig>() == 16 && offset_of!(ModelConfig, flags) == 8);
    assert!(size_of::<CollectionScore>() == 40 && offset_of!(CollectionScore, bagging_score) == 8);
    assert!(offset_of!(CollectionScore, ci_p95_hi) == 32);
    assert!(
        size_of::<PictureConfiguration>() == 20 && offset_of!(PictureConfiguration, pic_cnt) == 16
    );
    assert!(size_of::<CudaConfiguration>() == 8);
    assert!(
        size_of::<GpuPictureConfiguration>() == 20
            && offset_of!(GpuPictureConfiguration, pic_prealloc_method) == 16
    );
};
