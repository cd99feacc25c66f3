//! libvmaf's `ciede`: the CIEDE2000 colour difference of the two pictures,
//! reported as `ciede2000`.

pub mod cpu;
pub(crate) mod gpu;

use super::common::options::{OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, GpuRefusal, NO_OPTIONS, Output, Slots};
use crate::core::FrameJob;
use crate::core::RawFeatures;
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};

pub static CIEDE: Ciede = Ciede;

pub struct Ciede;

/// It has no options that change numbers.
#[derive(Debug)]
struct CiedeConfig;

impl Extractor for Ciede {
    fn name(&self) -> &'static str {
        "ciede"
    }
    fn options(&self) -> &'static [OptSpec] {
        NO_OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[("ciede2000", 0)]
    }
    fn configure(&self, _o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(CiedeConfig))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[&gpu::KERNELS]
    }
}

impl Config for CiedeConfig {
    fn outputs(&self) -> usize {
        1
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        vec![Output::now(0, "ciede2000")]
    }
    fn reads_chroma(&self) -> bool {
        true
    }
    fn cpu(&self, slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(CiedeCpu { slot: slots.at(0) })
    }
    /// None for a stream without chroma planes (the CPU twin's error).
    fn gpu(
        &self,
        slots: Slots,
        s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        Ok(gpu::Ciede::for_geometry(s.geo, slots).map(|c| Box::new(c) as Box<dyn GpuExtractor>))
    }
}

struct CiedeCpu {
    slot: usize,
}

impl CpuTwin for CiedeCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        match cpu::ciede(&job.reference, &job.distorted) {
            Ok(v) => out.set(self.slot, v),
            Err(e) => out.fail(e),
        }
    }
}
