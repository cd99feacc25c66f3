//! The GPU backend: the plan's GPU twins run on a ring of frames in
//! flight over the HIP runtime (`crate::hip`), with the uploads, the
//! scaler for renditions of another size, the reference a ladder's
//! renditions share, and the failover to the CPU backend when the GPU
//! fails mid-stream. No `unsafe`: that stays in the runtime.

#![forbid(unsafe_code)]

pub mod engine;
pub mod failover;
mod fault;
mod host;
mod scale;
mod shared_reference;
mod staging;
mod twins;

pub use engine::{HipBackend, HipOptions, OpenedDevice, shared_device};
pub use failover::{Failover, Retry};
pub use shared_reference::{SharedReference, SharingCounts};
pub use twins::kernel_sources;
