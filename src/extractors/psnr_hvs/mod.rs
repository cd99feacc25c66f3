//! libvmaf's `psnr_hvs`: PSNR weighted by the eye's contrast sensitivity
//! over 8×8 DCT blocks, per plane and combined.

pub mod cpu;
pub(crate) mod gpu;

use super::common::options::{OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, GpuRefusal, NO_OPTIONS, Output, Slots};
use crate::core::FrameJob;
use crate::core::RawFeatures;
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};

pub static PSNR_HVS: PsnrHvs = PsnrHvs;

pub struct PsnrHvs;

/// It has no options that change numbers.
#[derive(Debug)]
struct PsnrHvsConfig;

impl Extractor for PsnrHvs {
    fn name(&self) -> &'static str {
        "psnr_hvs"
    }
    fn options(&self) -> &'static [OptSpec] {
        NO_OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[
            ("psnr_hvs_y", 0),
            ("psnr_hvs_cb", 1),
            ("psnr_hvs_cr", 2),
            ("psnr_hvs", 3),
        ]
    }
    fn configure(&self, _o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(PsnrHvsConfig))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[&gpu::KERNELS]
    }
}

impl Config for PsnrHvsConfig {
    fn outputs(&self) -> usize {
        4
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        vec![
            Output::now(0, "psnr_hvs_y"),
            Output::now(1, "psnr_hvs_cb"),
            Output::now(2, "psnr_hvs_cr"),
            Output::now(3, "psnr_hvs"),
        ]
    }
    fn reads_chroma(&self) -> bool {
        true
    }
    /// Its ordered sum is one thread's.
    fn slow_on_gpu(&self) -> bool {
        true
    }
    fn cpu(&self, slots: Slots, threads: usize) -> Box<dyn CpuTwin> {
        Box::new(PsnrHvsCpu { slots, threads })
    }
    /// None for streams its kernels do not take (no chroma, past 12 bits):
    /// the CPU twin gives libvmaf's error.
    fn gpu(
        &self,
        slots: Slots,
        s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        let h = gpu::PsnrHvs::new(s.dev, s.stream, s.geo, slots)?;
        Ok(h.map(|h| Box::new(h) as Box<dyn GpuExtractor>))
    }
}

struct PsnrHvsCpu {
    slots: Slots,
    /// Threads that may share a frame's blocks (1 where frames run in
    /// parallel).
    threads: usize,
}

impl CpuTwin for PsnrHvsCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        match cpu::psnr_hvs(&job.reference, &job.distorted, self.threads) {
            Ok(v) => out.put(self.slots, &v),
            Err(e) => out.fail(e),
        }
    }
}
