//! libvmaf's `float_ansnr`: the anti-noise SNR and PSNR of the filtered
//! luma.

pub mod cpu;
pub(crate) mod gpu;

use super::common::options::{OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, GpuRefusal, NO_OPTIONS, Output, Slots};
use crate::core::FrameJob;
use crate::core::RawFeatures;
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};

pub static FLOAT_ANSNR: FloatAnsnr = FloatAnsnr;

pub struct FloatAnsnr;

/// It has no options that change numbers.
#[derive(Debug)]
struct Ansnr;

impl Extractor for FloatAnsnr {
    fn name(&self) -> &'static str {
        "float_ansnr"
    }
    fn options(&self) -> &'static [OptSpec] {
        NO_OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[("float_ansnr", 0), ("float_anpsnr", 1)]
    }
    fn configure(&self, _o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(Ansnr))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[&super::common::float_filter_gpu::KERNELS, &gpu::KERNELS]
    }
}

impl Config for Ansnr {
    fn outputs(&self) -> usize {
        2
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        vec![
            Output::now(0, "float_ansnr"),
            Output::now(1, "float_anpsnr"),
        ]
    }
    fn cpu(&self, slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(AnsnrCpu { slots })
    }
    fn gpu(
        &self,
        slots: Slots,
        s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        Ok(Some(Box::new(gpu::FloatAnsnr::new(
            s.dev, s.stream, s.geo, slots,
        )?)))
    }
}

struct AnsnrCpu {
    slots: Slots,
}

impl CpuTwin for AnsnrCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        let (r, d) = (&job.reference, &job.distorted);
        let v = cpu::float_ansnr(&r.luma().data, &d.luma().data, r.width(), r.height(), r.bpc);
        out.put(self.slots, &v);
    }
}
