//! What the backend runs for a plan: every kernel file (the scaler's, then
//! the registry's), and the plan's GPU twins, with the host twin for the
//! extractors the GPU leaves to their CPU twins.

use super::host::Host;
use super::scale;
use crate::core::VmafError;
use crate::extractors::plan::Plan;
use crate::extractors::{self, GpuRefusal};
use crate::hip::twin::{Geometry, GpuExtractor, GpuSetup, KernelSet, Kernels};
use crate::hip::{Device, HipError, Stream};
use std::sync::Arc;

/// Every kernel set: the scaler's, then every extractor's.
fn kernel_sets() -> Vec<&'static KernelSet> {
    std::iter::once(&scale::KERNELS)
        .chain(extractors::kernel_sets())
        .collect()
}

/// Every kernel file: the scaler's, every extractor's, then NVDEC's copy.
pub fn kernel_sources() -> Vec<(&'static str, &'static str)> {
    kernel_sets()
        .into_iter()
        .flat_map(|k| k.sources.iter().copied())
        .chain([crate::hip::nvdec::KERNEL_SOURCE])
        .collect()
}

/// Every kernel set `dev` may run, each loaded when a backend first needs
/// it ([`plan_kernel_sets`]).
pub(super) fn device_kernels(dev: &Arc<Device>) -> Kernels {
    Kernels::new(dev, &kernel_sets())
}

/// The kernel sets a backend of `plan` runs: the scaler's (which also
/// unpacks frames in GPU memory), and those of the plan's extractors.
pub(super) fn plan_kernel_sets(plan: &Plan) -> Vec<&'static KernelSet> {
    std::iter::once(&scale::KERNELS)
        .chain(
            plan.extractors
                .iter()
                .flat_map(|c| c.kind.kernels().iter().copied()),
        )
        .collect()
}

/// The GPU twins of `plan`'s extractors for this geometry, in the
/// registry's order (their tables made and uploaded), then the host twin
/// with the CPU twins of the extractors that have none, or whose kernels do
/// not take the stream, where the CPU twin gives the numbers or libvmaf's
/// error.
pub(super) fn extractors_for(
    plan: &Plan,
    dev: &Arc<Device>,
    geo: &Geometry,
) -> Result<Vec<Box<dyn GpuExtractor>>, VmafError> {
    let hip = |e: HipError| VmafError::Backend(format!("HIP: {e}"));
    let st = Stream::new(dev).map_err(hip)?;
    let setup = GpuSetup {
        dev,
        stream: &st,
        geo,
    };
    let mut ordered: Vec<_> = plan.extractors.iter().collect();
    ordered.sort_by_key(|c| c.launch_rank());
    let mut out: Vec<Box<dyn GpuExtractor>> = Vec::new();
    let mut on_host = Vec::new();
    for c in ordered {
        match c.config.gpu(c.slots, &setup) {
            Ok(Some(twin)) => out.push(twin),
            Ok(None) => on_host.push(c),
            Err(GpuRefusal::Hip(e)) => return Err(hip(e)),
            Err(GpuRefusal::Engine(e)) => return Err(e),
        }
    }
    if !on_host.is_empty() {
        out.push(Box::new(Host::new(plan.slot_count(), on_host)));
    }
    Ok(out)
}
