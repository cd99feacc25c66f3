//! DLPack tensors in GPU memory (`__dlpack__` capsules, the legacy
//! `dltensor` layout every producer gives when no version is asked for),
//! read in place as the engine's device planes.
//!
//! The capsules are kept, unconsumed, until the engine's copies out of
//! them are done: dropping a capsule runs its own destructor, which frees
//! the tensor as the producer arranged.

use gstvmafhip::vmaf::DevicePlane;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::ffi::{CStr, c_void};

/// `DLDevice`.
#[repr(C)]
struct Device {
    device_type: i32,
    device_id: i32,
}

/// `DLDataType`.
#[repr(C)]
struct DataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

/// `DLTensor`.
#[repr(C)]
struct Tensor {
    data: *mut c_void,
    device: Device,
    ndim: i32,
    dtype: DataType,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

/// `DLManagedTensor`: the tensor first.
#[repr(C)]
struct Managed {
    tensor: Tensor,
}

/// DLPack's device types the engine reads.
pub const CUDA: i32 = 2;
pub const ROCM: i32 = 10;

/// One plane: where it lies and its geometry, checked.
pub struct DevicePlaneOf {
    pub plane: DevicePlane,
    pub device_type: i32,
    pub device_id: i32,
}

/// The device plane a `dltensor` capsule holds: a 2-D tensor of unsigned
/// `bits`-bit samples, rows contiguous, of `width`×`height`.
pub fn plane(
    capsule: &Bound<'_, PyCapsule>,
    bits: u8,
    (width, height): (usize, usize),
    what: &str,
) -> Result<DevicePlaneOf, String> {
    let name = capsule.name().map_err(|e| e.to_string())?;
    // SAFETY: a capsule's name is a C string (or NULL) the capsule owns.
    let name = name.map(|n| unsafe { CStr::from_ptr(n.as_ptr()) });
    if name != Some(c"dltensor") {
        return Err(format!(
            "{what}: a capsule named {name:?}, not an unused \"dltensor\" (a DLPack capsule is read once)"
        ));
    }
    let ptr = capsule
        .pointer_checked(Some(c"dltensor"))
        .map_err(|e| e.to_string())?;
    // SAFETY: a "dltensor" capsule holds a DLManagedTensor (the DLPack
    // spec), alive while the capsule is, which the caller holds.
    let t = unsafe { &(*ptr.as_ptr().cast::<Managed>()).tensor };
    if t.ndim != 2 {
        return Err(format!(
            "{what}: a {}-dimensional tensor; a plane is 2-D",
            t.ndim
        ));
    }
    // SAFETY: `shape` holds `ndim` (2) values; `strides` is NULL or as long.
    let (shape, strides) = unsafe {
        (
            std::slice::from_raw_parts(t.shape, 2),
            (!t.strides.is_null()).then(|| std::slice::from_raw_parts(t.strides, 2)),
        )
    };
    if (t.dtype.code, t.dtype.bits, t.dtype.lanes) != (1, bits, 1) {
        return Err(format!(
            "{what}: samples of DLPack type code {} with {} bits; {bits}-bit samples are uint{bits}",
            t.dtype.code, t.dtype.bits
        ));
    }
    if shape != [height as i64, width as i64] {
        return Err(format!(
            "{what}: shape {shape:?}; expected [{height}, {width}]"
        ));
    }
    let row = match strides {
        None => width as i64,
        Some([r, 1]) if *r >= width as i64 => *r,
        Some(s) => {
            return Err(format!(
                "{what}: strides {s:?}; rows must be contiguous (stride 1 along the row)"
            ));
        }
    };
    let sample = usize::from(bits / 8);
    let pitch = row as usize * sample;
    Ok(DevicePlaneOf {
        plane: DevicePlane {
            ptr: t.data as u64 + t.byte_offset,
            bytes: pitch * (height - 1) + width * sample,
            width,
            height,
            pitch,
            interleaved: false,
            msb_shift: 0,
        },
        device_type: t.device.device_type,
        device_id: t.device.device_id,
    })
}
