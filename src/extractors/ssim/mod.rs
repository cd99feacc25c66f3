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
/// (`enable_db`, capped with `clip_db`); with its terms (`enable_lcs`);
/// float_ssim's downscale factor (`scale`, 0: automatic).
#[derive(Clone, Copy, Debug)]
struct SsimConfig {
    kind: Ssim,
    /// `enable_db`, and whether `clip_db` caps it.
    db: Option<bool>,
    lcs: bool,
    scale: usize,
}

/// The names of MS-SSIM's terms, libvmaf's order: luminance of scales 0 to
/// 4, then contrast, then structure.
const MS_LCS: [&str; 15] = [
    "float_ms_ssim_l_scale0",
    "float_ms_ssim_l_scale1",
    "float_ms_ssim_l_scale2",
    "float_ms_ssim_l_scale3",
    "float_ms_ssim_l_scale4",
    "float_ms_ssim_c_scale0",
    "float_ms_ssim_c_scale1",
    "float_ms_ssim_c_scale2",
    "float_ms_ssim_c_scale3",
    "float_ms_ssim_c_scale4",
    "float_ms_ssim_s_scale0",
    "float_ms_ssim_s_scale1",
    "float_ms_ssim_s_scale2",
    "float_ms_ssim_s_scale3",
    "float_ms_ssim_s_scale4",
];
/// float_ssim's terms (`enable_lcs`).
const SSIM_LCS: [&str; 3] = ["float_ssim_l", "float_ssim_c", "float_ssim_s"];

/// The terms as the outputs after the score take them: SSIM's (l, c, s),
/// or MS-SSIM's luminance of every scale, then contrast, then structure.
pub(crate) fn lcs_values(terms: &[(f32, f32, f32)]) -> Vec<f64> {
    let pick = |k: usize| {
        terms.iter().map(move |t| {
            f64::from(match k {
                0 => t.0,
                1 => t.1,
                _ => t.2,
            })
        })
    };
    pick(0).chain(pick(1)).chain(pick(2)).collect()
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
        let db = o.flag(specs, "enable_db").then(|| o.flag(specs, "clip_db"));
        let scale = if self.multi_scale {
            0
        } else {
            o.num(specs, "scale") as usize
        };
        Ok(Box::new(SsimConfig {
            kind: *self,
            db,
            lcs: o.flag(specs, "enable_lcs"),
            scale,
        }))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[&gpu::KERNELS]
    }
}

impl Config for SsimConfig {
    fn outputs(&self) -> usize {
        1 + self.lcs_names().len()
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        let mut names = vec![Output::now(0, self.kind.provides()[0].0)];
        for (i, &n) in self.lcs_names().iter().enumerate() {
            names.push(Output::now(1 + i, n));
        }
        names
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
            slots,
        })
    }
    fn gpu(
        &self,
        slots: Slots,
        s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        let out = gpu::Outputs {
            slots,
            multi_scale: self.kind.multi_scale,
            lcs: self.lcs,
            factor: cpu::ssim_factor(s.geo.w, s.geo.h, self.scale),
        };
        let g = gpu::Ssim::new(s.dev, s.stream, s.geo, out)?.map(|g| match self.db {
            Some(clip) => g.in_db(cpu::db_max(clip, s.geo.bpc, s.geo.w, s.geo.h)),
            None => g,
        });
        Ok(g.map(|g| Box::new(g) as Box<dyn GpuExtractor>))
    }
}

impl SsimConfig {
    /// The terms' names after the score (`enable_lcs`), else none.
    fn lcs_names(&self) -> &'static [&'static str] {
        match (self.lcs, self.kind.multi_scale) {
            (false, _) => &[],
            (true, false) => &SSIM_LCS,
            (true, true) => &MS_LCS,
        }
    }
}

struct SsimCpu {
    config: SsimConfig,
    slots: Slots,
}

impl CpuTwin for SsimCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        let (r, d) = (&job.reference, &job.distorted);
        let rf = cpu::to_float(&r.luma().data, r.bpc);
        let df = cpu::to_float(&d.luma().data, r.bpc);
        let (w, h) = (r.width(), r.height());
        let scored = if self.config.kind.multi_scale {
            cpu::float_ms_ssim(&rf, &df, w, h).map(|(v, terms)| (v, terms.to_vec()))
        } else {
            let f = cpu::ssim_factor(w, h, self.config.scale);
            cpu::float_ssim(&rf, &df, w, h, f).map(|(v, l, c, s)| (f64::from(v), vec![(l, c, s)]))
        };
        let Some((v, terms)) = scored else {
            return;
        };
        out.set(self.slots.at(0), self.config.written(v, r.bpc, (w, h)));
        if self.config.lcs {
            for (i, t) in lcs_values(&terms).into_iter().enumerate() {
                out.set(self.slots.at(1 + i), t);
            }
        }
    }
}
