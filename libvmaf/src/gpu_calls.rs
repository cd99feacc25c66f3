//! The GPU calls, at the C boundary as `lib.rs` is: `libvmaf_cuda.h`
//! (a CUDA state, in the program's context, and pictures in GPU memory
//! that ffmpeg's `libvmaf_cuda` filter copies its decoded frames into) and
//! `libvmaf_hip.h` (the HIP fork's state calls, and the same pictures).

use crate::context::{Backend, Failure};
use crate::cuda_state::CudaState;
use crate::device_picture::Params;
use crate::{
    Handle, code, einval, ffi, give, handle, hip_state, picture, pinned_for, say, with_context,
};
use gstvmafhip::hip::{Device, Runtime, Vendor};
use std::ffi::{c_int, c_void};

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_cuda_state_init(
    cu_state: *mut *mut CudaState,
    cfg: ffi::CudaConfiguration,
) -> c_int {
    if cu_state.is_null() {
        return -ffi::EINVAL;
    }
    // SAFETY: `cu_ctx` is NULL or the program's live CUcontext
    // (libvmaf_cuda.h), which it keeps until the contexts using it close.
    let device = unsafe { cuda_device(cfg.cu_ctx) };
    let given = !cfg.cu_ctx.is_null();
    match device.map(|d| CudaState::new(d, given)) {
        Ok(s) => {
            // SAFETY: `cu_state` is a valid out-pointer (checked non-null).
            unsafe { give(cu_state, s) };
            0
        }
        Err(e) => code(Failure(-ffi::EINVAL, format!("vmaf_cuda_state_init: {e}"))),
    }
}

/// The device of `ctx`, a program's CUDA context, or of the first GPU's
/// primary context when `ctx` is NULL.
///
/// SAFETY: `ctx` is NULL or a live CUcontext that outlives the device.
unsafe fn cuda_device(ctx: *mut c_void) -> Result<std::sync::Arc<Device>, String> {
    if ctx.is_null() {
        return CudaState::primary_device();
    }
    let rt = Runtime::load(Vendor::Nvidia).map_err(|e| e.to_string())?;
    // SAFETY: the caller's promise above.
    unsafe { Device::adopt_context(&rt, ctx) }.map_err(|e| e.to_string())
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_cuda_import_state(
    vmaf: *mut Handle,
    cu_state: *mut CudaState,
) -> c_int {
    // SAFETY: `cu_state` is NULL or from `vmaf_cuda_state_init`.
    let Some(s) = (unsafe { cu_state.as_ref() }) else {
        return -ffi::EINVAL;
    };
    // SAFETY: as [`handle`].
    let done = unsafe { with_context(vmaf, |c| c.use_device(s.gpu.clone())) };
    if done == 0 {
        // Host pictures too are pinned in the program's context.
        picture::allocate_pinned_on(picture::PinnedOn::Device(s.gpu.device.clone()));
        say(ffi::LOG_INFO, &s.describe());
    }
    done
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_cuda_preallocate_pictures(
    vmaf: *mut Handle,
    cfg: ffi::GpuPictureConfiguration,
) -> c_int {
    // SAFETY: as [`handle`].
    unsafe { preallocate(vmaf, cfg, "vmaf_cuda_preallocate_pictures") }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_cuda_fetch_preallocated_picture(
    vmaf: *mut Handle,
    pic: *mut ffi::Picture,
) -> c_int {
    // SAFETY: as [`handle`]; `pic` NULL or writable.
    unsafe { fetch(vmaf, pic) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_hip_preallocate_pictures(
    vmaf: *mut Handle,
    cfg: ffi::GpuPictureConfiguration,
) -> c_int {
    // SAFETY: as [`handle`].
    unsafe { preallocate(vmaf, cfg, "vmaf_hip_preallocate_pictures") }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_hip_fetch_preallocated_picture(
    vmaf: *mut Handle,
    pic: *mut ffi::Picture,
) -> c_int {
    // SAFETY: as [`handle`]; `pic` NULL or writable.
    unsafe { fetch(vmaf, pic) }
}

/// How the pictures of `vmaf_*_fetch_preallocated_picture` are made.
#[derive(Clone, Copy, Debug)]
pub enum GpuPictures {
    /// In GPU memory, from the context's pool.
    Device(c_int),
    /// In host memory, as `vmaf_picture_alloc` makes them (pinned while
    /// the GPU engine scores).
    Host(ffi::GpuPictureConfiguration),
}

/// `vmaf_cuda_preallocate_pictures` and its HIP twin.
///
/// SAFETY: as [`handle`].
unsafe fn preallocate(vmaf: *mut Handle, cfg: ffi::GpuPictureConfiguration, call: &str) -> c_int {
    // SAFETY: the caller's promise above.
    let Some(h) = (unsafe { handle(vmaf) }) else {
        return -ffi::EINVAL;
    };
    let Some(format) = picture::format_of(cfg.pix_fmt) else {
        return einval(&format!("{call}: pixel format {}", cfg.pix_fmt));
    };
    let bpc = u8::try_from(cfg.bpc).unwrap_or(0);
    match cfg.pic_prealloc_method {
        ffi::PREALLOC_NONE => {
            h.gpu_pictures = None;
            0
        }
        ffi::PREALLOC_HOST | ffi::PREALLOC_HOST_PINNED => {
            h.gpu_pictures = Some(GpuPictures::Host(cfg));
            0
        }
        ffi::PREALLOC_DEVICE => {
            let params = Params {
                format,
                bpc,
                width: cfg.w as usize,
                height: cfg.h as usize,
            };
            match h.context.preallocate_device(params) {
                Ok(()) => {
                    h.gpu_pictures = Some(GpuPictures::Device(cfg.pix_fmt));
                    0
                }
                Err(Failure(c, m)) => code(Failure(c, format!("{call}: {m}"))),
            }
        }
        m => einval(&format!("{call}: preallocation method {m}")),
    }
}

/// `vmaf_cuda_fetch_preallocated_picture` and its HIP twin.
///
/// SAFETY: as [`handle`]; `pic` is NULL or a writable VmafPicture.
unsafe fn fetch(vmaf: *mut Handle, pic: *mut ffi::Picture) -> c_int {
    // SAFETY: the caller's promise above.
    let (Some(h), Some(p)) = (unsafe { handle(vmaf) }, unsafe { pic.as_mut() }) else {
        return -ffi::EINVAL;
    };
    match h.gpu_pictures {
        None => einval("fetching a preallocated picture: none were preallocated"),
        // SAFETY: `pic` is writable (checked above).
        Some(GpuPictures::Host(c)) => unsafe {
            crate::vmaf_picture_alloc(pic, c.pix_fmt, c.bpc, c.w, c.h)
        },
        Some(GpuPictures::Device(pix_fmt)) => match h.context.fetch_device() {
            Ok(lent) => {
                picture::lend_device(p, pix_fmt, lent);
                0
            }
            Err(f) => code(f),
        },
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn vmaf_hip_available() -> c_int {
    1
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_hip_state_init(
    out: *mut *mut hip_state::HipState,
    cfg: hip_state::HipConfiguration,
) -> c_int {
    if out.is_null() {
        return -ffi::EINVAL;
    }
    match hip_state::HipState::open(cfg) {
        Ok(s) => {
            // SAFETY: `out` is a valid out-pointer (checked non-null).
            unsafe { give(out, s) };
            0
        }
        Err(e) => code(Failure(-ffi::ENODEV, format!("vmaf_hip_state_init: {e}"))),
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_hip_import_state(
    vmaf: *mut Handle,
    state: *mut hip_state::HipState,
) -> c_int {
    // SAFETY: `state` is NULL or from `vmaf_hip_state_init`, not yet freed.
    let Some(s) = (unsafe { state.as_ref() }) else {
        return -ffi::EINVAL;
    };
    let ordinal = s.ordinal;
    // SAFETY: as [`handle`].
    let done = unsafe { with_context(vmaf, |c| c.use_gpu(ordinal)) };
    if done == 0 {
        pinned_for(Backend::Hip(ordinal));
        say(ffi::LOG_INFO, &s.describe());
    }
    done
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_hip_state_free(state: *mut *mut hip_state::HipState) {
    // SAFETY: `state` is NULL or points to NULL or to a state of ours,
    // freed once and cleared.
    unsafe {
        if let Some(slot) = state.as_mut()
            && !slot.is_null()
        {
            drop(Box::from_raw(*slot));
            *slot = std::ptr::null_mut();
        }
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn vmaf_hip_list_devices() -> c_int {
    let devices = hip_state::devices();
    for d in &devices {
        println!("{d}");
    }
    devices.len() as c_int
}
