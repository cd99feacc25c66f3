//! libvmaf's CUDA state (`libvmaf_cuda.h`): the GPU engine in a program's
//! own CUDA context (ffmpeg's hardware device), or in the primary context
//! of the first GPU when the program gives none.

#![forbid(unsafe_code)]

use gstvmafhip::hip::{Device, Vendor};
use gstvmafhip::vmaf::{OpenedDevice, gpu_device};
use std::sync::Arc;

/// `VmafCudaState`: a device with the engine's kernels in its context.
pub struct CudaState {
    pub gpu: OpenedDevice,
    /// The context is the program's (else the primary context here).
    given: bool,
}

impl CudaState {
    /// The engine's kernels for the context of `device` (each set loaded
    /// there when a backend first needs it), which the program made
    /// (`given`) or which is the first GPU's primary context.
    pub fn new(device: Arc<Device>, given: bool) -> CudaState {
        let gpu = OpenedDevice::with_kernels(device);
        CudaState { gpu, given }
    }

    /// The first NVIDIA GPU, in its primary context.
    pub fn primary_device() -> Result<Arc<Device>, String> {
        gpu_device(Vendor::Nvidia, 0)
    }

    /// What scores once the state is imported (libvmaf's INFO level).
    pub fn describe(&self) -> String {
        let d = &self.gpu.device.info;
        format!(
            "vmafhip: the GPU engine on {} ({}) in {} CUDA context, the CPU engine behind it",
            d.name,
            d.arch,
            if self.given {
                "the program's"
            } else {
                "the primary"
            }
        )
    }
}
