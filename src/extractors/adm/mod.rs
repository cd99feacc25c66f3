//! libvmaf's integer `adm`: the detail loss and additive impairment
//! measure at four wavelet scales, in fixed point.

pub mod cpu;
mod decouple;
mod dwt;
pub(crate) mod gpu;
mod mask;
#[allow(unsafe_code)] // vector loads, stores and calls of target-feature copies
mod simd;
pub mod tables;
mod types;

use super::common::options::{OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, GpuRefusal, Output, Slots};
use crate::core::FrameJob;
use crate::core::RawFeatures;
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};
use cpu::AdmParams;

pub static ADM: AdmExtractor = AdmExtractor;

pub struct AdmExtractor;

/// `integer_adm.c:options` (feature parameters; `debug` and `adm_skip_aim`
/// change no number this engine outputs).
pub const OPTIONS: &[OptSpec] = &[
    OptSpec::num("adm_csf_scale", "scf", 1.0, 0.0, 50.0),
    OptSpec::num("adm_csf_diag_scale", "scfd", 1.0, 0.0, 50.0),
    OptSpec::num("adm_dlm_weight", "dlmw", 0.5, 0.0, 1.0),
    OptSpec::num("adm_enhn_gain_limit", "egl", 100.0, 1.0, 100.0),
    OptSpec::num("adm_norm_view_dist", "nvd", 3.0, 0.75, 24.0),
    OptSpec::int("adm_ref_display_height", "rdh", 1080.0, 1.0, 4320.0),
    OptSpec::int("adm_csf_mode", "csf", 0.0, 0.0, 3.0),
    OptSpec::num("adm_noise_weight", "nw", 0.03125, 0.0, 1500.0),
    OptSpec::boolean("adm_skip_scale0", "ssz"),
    OptSpec::num("adm_min_val", "min", 0.0, 0.0, 1.0),
    OptSpec::boolean("adm_skip_aim", "adm_skip_aim").not_param(),
    OptSpec::boolean("debug", "debug").not_param(),
];

/// Its outputs, integer ADM's names; float ADM reports the same without
/// `integer_`.
pub const NAMES: [&str; 7] = [
    "integer_adm2",
    "integer_aim",
    "integer_adm3",
    "integer_adm_scale0",
    "integer_adm_scale1",
    "integer_adm_scale2",
    "integer_adm_scale3",
];

impl Extractor for AdmExtractor {
    fn name(&self) -> &'static str {
        "adm"
    }
    fn options(&self) -> &'static [OptSpec] {
        OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[
            ("integer_adm2", 0),
            ("integer_aim", 1),
            ("integer_adm3", 2),
            ("integer_adm_scale0", 3),
            ("integer_adm_scale1", 4),
            ("integer_adm_scale2", 5),
            ("integer_adm_scale3", 6),
        ]
    }
    fn configure(&self, o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(params(o)?))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[&gpu::KERNELS]
    }
}

/// ADM's parameters from its resolved options, checked as libvmaf checks
/// them.
pub fn params(o: &Resolved) -> Result<AdmParams, String> {
    let n = |k| o.num(OPTIONS, k);
    let p = AdmParams {
        dlm_weight: n("adm_dlm_weight"),
        enhn_gain_limit: n("adm_enhn_gain_limit"),
        min_val: n("adm_min_val"),
        noise_weight: n("adm_noise_weight"),
        norm_view_dist: n("adm_norm_view_dist"),
        ref_display_height: n("adm_ref_display_height") as i32,
        csf_mode: n("adm_csf_mode") as i32,
        csf_scale: n("adm_csf_scale"),
        csf_diag_scale: n("adm_csf_diag_scale"),
    };
    if o.flag(OPTIONS, "adm_skip_scale0") {
        return Err("adm_skip_scale0 is not implemented by this engine".into());
    }
    if p.norm_view_dist * f64::from(p.ref_display_height) < 3240.0 {
        return Err(
            "adm_norm_view_dist·adm_ref_display_height below 3·1080 (libvmaf rejects it too)"
                .into(),
        );
    }
    tables::check_csf(&p)?;
    Ok(p)
}

impl Config for AdmParams {
    fn outputs(&self) -> usize {
        7
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        NAMES
            .iter()
            .enumerate()
            .map(|(i, n)| Output::now(i, n))
            .collect()
    }
    fn cpu(&self, slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(AdmCpu {
            p: *self,
            slots,
            adm: cpu::Adm::new(),
        })
    }
    fn gpu(
        &self,
        slots: Slots,
        s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        Ok(Some(Box::new(gpu::Adm::new(
            s.dev, s.stream, s.geo, *self, slots,
        )?)))
    }
}

struct AdmCpu {
    p: AdmParams,
    slots: Slots,
    adm: cpu::Adm,
}

impl CpuTwin for AdmCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        let (r, d) = (&job.reference, &job.distorted);
        self.adm
            .compute(
                &r.luma().data,
                &d.luma().data,
                r.width(),
                r.height(),
                r.bpc,
                &self.p,
            )
            .write(out, self.slots);
    }
}
