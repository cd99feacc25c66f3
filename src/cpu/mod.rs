//! The CPU backend: libvmaf's extractors as their CPU twins, on worker
//! threads, a frame each.

#![forbid(unsafe_code)]

mod backend;
mod twins;

pub use backend::CpuBackend;
pub use twins::CpuExtractor;
