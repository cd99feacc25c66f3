//! libvmaf's `float_ssim` and `float_ms_ssim`: SSIM of the luma, and its
//! five-scale form.

pub mod cpu;
pub(crate) mod gpu;

use super::common::options::{OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, Geometry, GpuRefusal, NO_OPTIONS, Output, Slots, Switch};
use crate::core::RawFeatures;
use crate::core::{FrameJob, VmafError};
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};

pub static FLOAT_SSIM: Ssim = Ssim { multi_scale: false };
pub static FLOAT_MS_SSIM: Ssim = Ssim { multi_scale: true };

/// One of the two; the element's `ssim` and `ms-ssim` switch them.
#[derive(Clone, Copy, Debug)]
pub struct Ssim {
    multi_scale: bool,
}

impl Extractor for Ssim {
    fn name(&self) -> &'static str {
        if self.multi_scale {
            "float_ms_ssim"
        } else {
            "float_ssim"
        }
    }
    fn switch(&self) -> Option<&'static Switch> {
        Some(if self.multi_scale {
            &Switch {
                property: "ms-ssim",
                nick: "MS-SSIM",
                blurb: "Also compute MS-SSIM (float_ms_ssim; frames of at least 176x176)",
                value: "float_ms_ssim",
                field: "ms-ssim",
            }
        } else {
            &Switch {
                property: "ssim",
                nick: "SSIM",
                blurb: "Also compute SSIM (float_ssim)",
                value: "float_ssim",
                field: "ssim",
            }
        })
    }
    fn options(&self) -> &'static [OptSpec] {
        NO_OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        if self.multi_scale {
            &[("float_ms_ssim", 0)]
        } else {
            &[("float_ssim", 0)]
        }
    }
    fn configure(&self, _o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(*self))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[&gpu::KERNELS]
    }
}

impl Config for Ssim {
    fn outputs(&self) -> usize {
        1
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        vec![Output::now(0, self.provides()[0].0)]
    }
    /// MS-SSIM's fifth scale needs 11×11 samples.
    fn check(&self, g: &Geometry) -> Result<(), VmafError> {
        if !self.multi_scale {
            return Ok(());
        }
        let (mut w, mut h) = (g.width, g.height);
        for _ in 0..5 {
            if w < 11 || h < 11 {
                return Err(VmafError::TooSmall(format!(
                    "{}x{}: MS-SSIM needs at least 176x176",
                    g.width, g.height
                )));
            }
            w /= 2;
            h /= 2;
        }
        Ok(())
    }
    fn cpu(&self, slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(SsimCpu {
            multi_scale: self.multi_scale,
            slot: slots.at(0),
        })
    }
    fn gpu(
        &self,
        slots: Slots,
        s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        let slot = Some(slots.at(0));
        let out = if self.multi_scale {
            (None, slot)
        } else {
            (slot, None)
        };
        let g = gpu::Ssim::new(s.dev, s.stream, s.geo, out)?;
        Ok(g.map(|g| Box::new(g) as Box<dyn GpuExtractor>))
    }
}

struct SsimCpu {
    multi_scale: bool,
    slot: usize,
}

impl CpuTwin for SsimCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        let (r, d) = (&job.reference, &job.distorted);
        let rf = cpu::to_float(&r.luma().data, r.bpc);
        let df = cpu::to_float(&d.luma().data, r.bpc);
        let (w, h) = (r.width(), r.height());
        let v = if self.multi_scale {
            cpu::float_ms_ssim(&rf, &df, w, h)
        } else {
            cpu::float_ssim(&rf, &df, w, h)
        };
        if let Some(v) = v {
            out.set(self.slot, v);
        }
    }
}
