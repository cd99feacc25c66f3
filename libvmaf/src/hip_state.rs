//! The HIP fork's GPU state (`libvmaf_hip.h`): a device chosen by
//! ordinal, which a context's engine then runs on; the caller owns it.

#![forbid(unsafe_code)]

use gstvmafhip::hip::{Device, Runtime, Vendor};
use gstvmafhip::vmaf::gpu_device;
use std::ffi::c_int;

/// `VmafHipConfiguration`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HipConfiguration {
    /// -1: the first device; else its ordinal.
    pub device_index: c_int,
    /// Reserved (0).
    pub flags: c_int,
}

/// `VmafHipState`: an opened device.
pub struct HipState {
    pub ordinal: usize,
    name: String,
    arch: String,
}

impl HipState {
    /// The device `cfg` names, opened with its kernels.
    pub fn open(cfg: HipConfiguration) -> Result<HipState, String> {
        let ordinal = usize::try_from(cfg.device_index.max(0)).unwrap_or(0);
        let dev = gpu_device(Vendor::Auto, ordinal)?;
        Ok(HipState {
            ordinal,
            name: dev.info.name.clone(),
            arch: dev.info.arch.clone(),
        })
    }

    /// What scores once the state is imported (libvmaf's INFO level).
    pub fn describe(&self) -> String {
        format!(
            "vmafhip: the GPU engine on device {} ({}, {}), the CPU engine behind it",
            self.ordinal, self.name, self.arch
        )
    }
}

/// One line per GPU the runtime sees: ordinal, name, architecture.
pub fn devices() -> Vec<String> {
    let Ok(rt) = Runtime::load(Vendor::Auto) else {
        return Vec::new();
    };
    let n = rt.device_count().unwrap_or(0);
    (0..n)
        .filter_map(|i| Device::open(&rt, i).ok())
        .map(|d| format!("{}: {} ({})", d.info.ordinal, d.info.name, d.info.arch))
        .collect()
}
