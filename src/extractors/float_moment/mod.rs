//! libvmaf's `float_moment`: the first and second moments of the reference
//! and distorted luma, from five sums of the samples.

pub mod cpu;
pub(crate) mod gpu;

use super::common::options::{OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, GpuRefusal, NO_OPTIONS, Output, Slots};
use crate::core::FrameJob;
use crate::core::RawFeatures;
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};

pub static FLOAT_MOMENT: FloatMoment = FloatMoment;

pub struct FloatMoment;

/// It has no options that change numbers.
#[derive(Debug)]
struct Moments;

impl Extractor for FloatMoment {
    fn name(&self) -> &'static str {
        "float_moment"
    }
    fn options(&self) -> &'static [OptSpec] {
        NO_OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[
            ("float_moment_ref1st", 0),
            ("float_moment_dis1st", 1),
            ("float_moment_ref2nd", 2),
            ("float_moment_dis2nd", 3),
        ]
    }
    fn configure(&self, _o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(Moments))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[&gpu::KERNELS]
    }
}

impl Config for Moments {
    fn outputs(&self) -> usize {
        4
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        vec![
            Output::now(0, "float_moment_ref1st"),
            Output::now(1, "float_moment_dis1st"),
            Output::now(2, "float_moment_ref2nd"),
            Output::now(3, "float_moment_dis2nd"),
        ]
    }
    fn cpu(&self, slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(MomentsCpu { slots })
    }
    fn gpu(
        &self,
        slots: Slots,
        _s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        Ok(Some(Box::new(gpu::FloatMoment::new(slots))))
    }
}

struct MomentsCpu {
    slots: Slots,
}

impl CpuTwin for MomentsCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        let (r, d) = (&job.reference, &job.distorted);
        let (w, h) = (r.width(), r.height());
        let sums = cpu::luma_sums(&r.luma().data, &d.luma().data, w, h);
        out.put(self.slots, &cpu::moments(&sums, w, h, r.bpc));
    }
}
