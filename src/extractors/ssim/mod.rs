//! libvmaf's `float_ssim` and `float_ms_ssim`: SSIM of the luma, and its
//! five-scale form.

pub mod cpu;
pub(crate) mod gpu;

use super::common::options::{Kind, OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, Geometry, GpuRefusal, Output, Slots, Switch};
use crate::core::RawFeatures;
use crate::core::{FrameJob, VmafError};
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};

pub static FLOAT_SSIM: Ssim = Ssim { multi_scale: false };
pub static FLOAT_MS_SSIM: Ssim = Ssim { multi_scale: true };

/// libvmaf's options of `float_ssim` (`scale` too) and `float_ms_ssim`;
/// none renames outputs.
static SSIM_OPTIONS: &[OptSpec] = &[
    OptSpec::new("enable_lcs", None, Kind::Bool, 0.0, "", 0.0, 1.0).not_param(),
    OptSpec::new("enable_db", None, Kind::Bool, 0.0, "", 0.0, 1.0).not_param(),
    OptSpec::new("clip_db", None, Kind::Bool, 0.0, "", 0.0, 1.0).not_param(),
    OptSpec::new("scale", None, Kind::Int, 0.0, "", 0.0, 10.0).not_param(),
];
static MS_SSIM_OPTIONS: &[OptSpec] = &[
    OptSpec::new("enable_lcs", None, Kind::Bool, 0.0, "", 0.0, 1.0).not_param(),
    OptSpec::new("enable_db", None, Kind::Bool, 0.0, "", 0.0, 1.0).not_param(),
    OptSpec::new("clip_db", None, Kind::Bool, 0.0, "", 0.0, 1.0).not_param(),
];

/// One of the two, configured: its score as is, or in dB
/// (`enable_db`, capped with `clip_db`).
#[derive(Clone, Copy, Debug)]
struct SsimConfig {
    kind: Ssim,
    /// `enable_db`, and whether `clip_db` caps it.
    db: Option<bool>,
}

impl SsimConfig {
    /// `v` as the options write it, for a `bpc`-bit `w`x`h` stream.
    fn written(&self, v: f64, bpc: u8, (w, h): (usize, usize)) -> f64 {
        self.db
            .map_or(v, |clip| cpu::to_db(v, cpu::db_max(clip, bpc, w, h)))
    }
}

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
        if self.multi_scale {
            MS_SSIM_OPTIONS
        } else {
            SSIM_OPTIONS
        }
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        if self.multi_scale {
            &[("float_ms_ssim", 0)]
        } else {
            &[("float_ssim", 0)]
        }
    }
    fn configure(&self, o: &Resolved) -> Result<Box<dyn Config>, String> {
        let specs = self.options();
        if o.flag(specs, "enable_lcs") {
            return Err(format!(
                "enable_lcs: the luminance, contrast and structure terms ({}_l, _c, _s) are not reported by vmafhip",
                self.name()
            ));
        }
        if !self.multi_scale && o.num(specs, "scale") != 0.0 {
            return Err(
                "scale: vmafhip decimates as libvmaf's automatic scale (0) does; another is not served"
                    .into(),
            );
        }
        let db = o.flag(specs, "enable_db").then(|| o.flag(specs, "clip_db"));
        Ok(Box::new(SsimConfig { kind: *self, db }))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[&gpu::KERNELS]
    }
}

impl Config for SsimConfig {
    fn outputs(&self) -> usize {
        1
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        vec![Output::now(0, self.kind.provides()[0].0)]
    }
    /// MS-SSIM's fifth scale needs 11×11 samples.
    fn check(&self, g: &Geometry) -> Result<(), VmafError> {
        if !self.kind.multi_scale {
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
            config: *self,
            slot: slots.at(0),
        })
    }
    fn gpu(
        &self,
        slots: Slots,
        s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        let slot = Some(slots.at(0));
        let out = if self.kind.multi_scale {
            (None, slot)
        } else {
            (slot, None)
        };
        let g = gpu::Ssim::new(s.dev, s.stream, s.geo, out)?.map(|g| match self.db {
            Some(clip) => g.in_db(cpu::db_max(clip, s.geo.bpc, s.geo.w, s.geo.h)),
            None => g,
        });
        Ok(g.map(|g| Box::new(g) as Box<dyn GpuExtractor>))
    }
}

struct SsimCpu {
    config: SsimConfig,
    slot: usize,
}

impl CpuTwin for SsimCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        let (r, d) = (&job.reference, &job.distorted);
        let rf = cpu::to_float(&r.luma().data, r.bpc);
        let df = cpu::to_float(&d.luma().data, r.bpc);
        let (w, h) = (r.width(), r.height());
        let v = if self.config.kind.multi_scale {
            cpu::float_ms_ssim(&rf, &df, w, h)
        } else {
            cpu::float_ssim(&rf, &df, w, h)
        };
        if let Some(v) = v {
            out.set(self.slot, self.config.written(v, r.bpc, (w, h)));
        }
    }
}
