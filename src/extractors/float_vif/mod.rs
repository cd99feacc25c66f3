//! libvmaf's `float_vif`: VIF in floating point, the float models'
//! information fidelity at four scales.

pub mod cpu;
pub(crate) mod gpu;

use super::common::options::{OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, GpuRefusal, Output, Slots};
use crate::core::FrameJob;
use crate::core::{FrameError, RawFeatures};
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};
use cpu::FloatVifParams;

pub static FLOAT_VIF: FloatVifExtractor = FloatVifExtractor;

pub struct FloatVifExtractor;

impl Extractor for FloatVifExtractor {
    fn name(&self) -> &'static str {
        "float_vif"
    }
    fn options(&self) -> &'static [OptSpec] {
        cpu::OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[
            ("vif_scale0", 0),
            ("vif_scale1", 1),
            ("vif_scale2", 2),
            ("vif_scale3", 3),
        ]
    }
    fn configure(&self, o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(FloatVifParams::from_options(o)?))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[
            &super::common::float_filter_gpu::KERNELS,
            &super::common::prescale_gpu::KERNELS,
            &gpu::KERNELS,
        ]
    }
}

impl Config for FloatVifParams {
    fn outputs(&self) -> usize {
        4
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        vec![
            Output::now(0, "vif_scale0"),
            Output::now(1, "vif_scale1"),
            Output::now(2, "vif_scale2"),
            Output::now(3, "vif_scale3"),
        ]
    }
    fn cpu(&self, slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(FloatVifCpu {
            p: *self,
            slots,
            vif: cpu::FloatVif::default(),
        })
    }
    /// None where libvmaf refuses the prescale for the stream (the CPU
    /// twin beside the GPU then gives the error).
    fn gpu(
        &self,
        slots: Slots,
        s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        let v = gpu::FloatVif::new(s.dev, s.stream, s.geo, *self, slots)?;
        Ok(v.map(|v| Box::new(v) as Box<dyn GpuExtractor>))
    }
}

struct FloatVifCpu {
    p: FloatVifParams,
    slots: Slots,
    vif: cpu::FloatVif,
}

impl CpuTwin for FloatVifCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        let (r, d) = (&job.reference, &job.distorted);
        let geo = (r.width(), r.height(), r.bpc);
        match self
            .vif
            .compute(&r.luma().data, &d.luma().data, geo, &self.p)
        {
            Ok(sums) => out.put(self.slots, &sums.scores(&self.p)),
            Err(e) => out.fail(FrameError(e)),
        }
    }
}
