//! libvmaf's `psnr`: the PSNR of each plane, `psnr_y`, `psnr_cb`,
//! `psnr_cr` (luma alone for GRAY).

pub mod cpu;
pub(crate) mod gpu;

use super::common::options::{OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, GpuRefusal, NO_OPTIONS, Output, Slots, Switch};
use crate::core::FrameJob;
use crate::core::RawFeatures;
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};

pub static PSNR: Psnr = Psnr;

pub struct Psnr;

/// Its options are not offered; the defaults are libvmaf's.
#[derive(Debug)]
struct PsnrConfig;

impl Extractor for Psnr {
    fn name(&self) -> &'static str {
        "psnr"
    }
    fn switch(&self) -> Option<&'static Switch> {
        Some(&Switch {
            property: "psnr",
            nick: "PSNR",
            blurb: "Also compute PSNR (psnr_y, psnr_cb, psnr_cr)",
            value: "psnr_y",
            field: "psnr-y",
        })
    }
    fn options(&self) -> &'static [OptSpec] {
        NO_OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[("psnr_y", 0), ("psnr_cb", 1), ("psnr_cr", 2)]
    }
    fn configure(&self, _o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(PsnrConfig))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[&gpu::KERNELS]
    }
}

impl Config for PsnrConfig {
    fn outputs(&self) -> usize {
        3
    }
    fn names(&self, chroma: bool) -> Vec<Output> {
        let mut names = vec![Output::now(0, "psnr_y")];
        if chroma {
            names.push(Output::now(1, "psnr_cb"));
            names.push(Output::now(2, "psnr_cr"));
        }
        names
    }
    fn reads_chroma(&self) -> bool {
        true
    }
    fn cpu(&self, slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(PsnrCpu { slots })
    }
    fn gpu(
        &self,
        slots: Slots,
        _s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        Ok(Some(Box::new(gpu::Psnr { slots })))
    }
}

struct PsnrCpu {
    slots: Slots,
}

impl CpuTwin for PsnrCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        let (r, d) = (&job.reference, &job.distorted);
        for (p, (rp, dp)) in r.planes.iter().zip(&d.planes).enumerate().take(3) {
            let v = cpu::psnr_plane(&rp.data, &dp.data, rp.width, rp.height, r.bpc);
            out.set(self.slots.at(p), v);
        }
    }
}
