//! libvmaf's `float_psnr`: the float path's luma PSNR.

pub mod cpu;
pub(crate) mod gpu;

use super::common::options::{OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, GpuRefusal, NO_OPTIONS, Output, Slots};
use crate::core::FrameJob;
use crate::core::RawFeatures;
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};

pub static FLOAT_PSNR: FloatPsnr = FloatPsnr;

pub struct FloatPsnr;

/// It has no options that change numbers.
#[derive(Debug)]
struct Psnr;

impl Extractor for FloatPsnr {
    fn name(&self) -> &'static str {
        "float_psnr"
    }
    fn options(&self) -> &'static [OptSpec] {
        NO_OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[("float_psnr", 0)]
    }
    fn configure(&self, _o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(Psnr))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[&gpu::KERNELS]
    }
}

impl Config for Psnr {
    fn outputs(&self) -> usize {
        1
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        vec![Output::now(0, "float_psnr")]
    }
    fn cpu(&self, slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(PsnrCpu { slot: slots.at(0) })
    }
    fn gpu(
        &self,
        slots: Slots,
        _s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        Ok(Some(Box::new(gpu::FloatPsnr::new(slots.at(0)))))
    }
}

struct PsnrCpu {
    slot: usize,
}

impl CpuTwin for PsnrCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        let (r, d) = (&job.reference, &job.distorted);
        let (w, h) = (r.width(), r.height());
        let v = cpu::float_psnr(&r.luma().data, &d.luma().data, w, h, r.bpc);
        out.set(self.slot, v);
    }
}
