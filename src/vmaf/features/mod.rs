//! Feature extractors and the per-frame extraction plan derived from a model.

pub mod adm;
mod adm_decouple;
mod adm_dwt;
mod adm_mask;
pub mod adm_tables;
pub mod motion;
pub mod psnr;
pub mod ssim;
pub mod vif;

use super::VmafError;
use super::model::{ModelSet, OptValue};
use adm::{Adm, AdmParams, AdmScores};
use motion::MotionParams;
use vif::{Vif, VifScales};

/// Make scratch `v` at least `n` long. Never shrinks: a smaller scale uses
/// the front part, so after the first frame nothing is allocated or cleared.
pub(crate) fn grow<T: Copy + Default>(v: &mut Vec<T>, n: usize) {
    if v.len() < n {
        v.resize(n, T::default());
    }
}

/// Test data: `n` values in `lo..=hi` from a fixed-seed LCG, a quarter of
/// them at one end or the other.
#[cfg(test)]
pub(crate) fn test_samples(n: usize, lo: i32, hi: i32, seed: u64) -> Vec<i32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (s >> 33) as i64;
            match r % 8 {
                0 => lo,
                1 => hi,
                _ => (i64::from(lo) + r % (i64::from(hi) - i64::from(lo) + 1)) as i32,
            }
        })
        .collect()
}

/// Reflect without repeating the edge: −k reads k, n−1+k reads n−1−k.
#[inline]
pub fn mirror_r101(i: isize, n: usize) -> usize {
    let n = n as isize;
    if i < 0 {
        (-i) as usize
    } else if i >= n {
        (2 * n - 2 - i) as usize
    } else {
        i as usize
    }
}

/// A value a model can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeatureRef {
    Adm2,
    Aim,
    Adm3,
    AdmScale(usize),
    Vif(usize),
    MotionSad,
    Motion2,
    Motion3,
}

impl FeatureRef {
    /// libvmaf raw feature name → value (raw names and their aliases).
    pub fn from_name(name: &str) -> Option<Self> {
        let n = name
            .strip_prefix("VMAF_integer_feature_")
            .and_then(|s| s.strip_suffix("_score"))
            .map(|s| format!("integer_{s}"));
        let n = n.as_deref().unwrap_or(name);
        Some(match n {
            "integer_adm2" => Self::Adm2,
            "integer_aim" => Self::Aim,
            "integer_adm3" => Self::Adm3,
            "integer_adm_scale0" => Self::AdmScale(0),
            "integer_adm_scale1" => Self::AdmScale(1),
            "integer_adm_scale2" => Self::AdmScale(2),
            "integer_adm_scale3" => Self::AdmScale(3),
            "integer_vif_scale0" => Self::Vif(0),
            "integer_vif_scale1" => Self::Vif(1),
            "integer_vif_scale2" => Self::Vif(2),
            "integer_vif_scale3" => Self::Vif(3),
            "integer_motion_sad" => Self::MotionSad,
            "integer_motion2" => Self::Motion2,
            "integer_motion3" => Self::Motion3,
            _ => return None,
        })
    }

    fn extractor(self) -> Extractor {
        match self {
            Self::Adm2 | Self::Aim | Self::Adm3 | Self::AdmScale(_) => Extractor::Adm,
            Self::Vif(_) => Extractor::Vif,
            Self::MotionSad | Self::Motion2 | Self::Motion3 => Extractor::Motion,
        }
    }
}

/// Where an output metric's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricSource {
    Feature(FeatureRef),
    Psnr(usize),
    Ssim,
    MsSsim,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Extractor {
    Adm,
    Vif,
    Motion,
}

/// What to compute per frame, and how to name it.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub adm: Option<AdmParams>,
    pub vif_egl: Option<f64>,
    pub motion: Option<MotionParams>,
    pub psnr: bool,
    pub ssim: bool,
    pub ms_ssim: bool,
    /// Name suffix from non-default options (`_egl_1`), per extractor.
    pub adm_suffix: String,
    pub vif_suffix: String,
    pub motion_suffix: String,
    /// Extractor order as the model lists them (libvmaf registration order).
    order: Vec<Extractor>,
    /// Model inputs, in `feature_names` order.
    pub inputs: Vec<FeatureRef>,
}

/// `%g` as libvmaf prints option values into feature names.
pub fn fmt_g(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    let s = format!("{v:.6}");
    let digits_before = (v.abs().log10().floor() as i32 + 1).max(1);
    let prec = (6 - digits_before).max(0) as usize;
    let s = if prec == 6 { s } else { format!("{v:.prec$}") };
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

struct OptSpec {
    name: &'static str,
    alias: &'static str,
    default: f64,
}

const ADM_OPTS: &[OptSpec] = &[
    OptSpec {
        name: "adm_dlm_weight",
        alias: "dlmw",
        default: 0.5,
    },
    OptSpec {
        name: "adm_enhn_gain_limit",
        alias: "egl",
        default: 100.0,
    },
    OptSpec {
        name: "adm_min_val",
        alias: "min",
        default: 0.0,
    },
    OptSpec {
        name: "adm_noise_weight",
        alias: "nw",
        default: 0.03125,
    },
    OptSpec {
        name: "adm_norm_view_dist",
        alias: "nvd",
        default: 3.0,
    },
    OptSpec {
        name: "adm_ref_display_height",
        alias: "rdh",
        default: 1080.0,
    },
];
const VIF_OPTS: &[OptSpec] = &[OptSpec {
    name: "vif_enhn_gain_limit",
    alias: "egl",
    default: 100.0,
}];
const MOTION_OPTS: &[OptSpec] = &[
    OptSpec {
        name: "motion_blend_factor",
        alias: "mbf",
        default: 1.0,
    },
    OptSpec {
        name: "motion_blend_offset",
        alias: "mbo",
        default: 40.0,
    },
    OptSpec {
        name: "motion_force_zero",
        alias: "force_0",
        default: 0.0,
    },
    OptSpec {
        name: "motion_fps_weight",
        alias: "mfw",
        default: 1.0,
    },
    OptSpec {
        name: "motion_max_val",
        alias: "mmxv",
        default: 10000.0,
    },
    OptSpec {
        name: "motion_moving_average",
        alias: "mma",
        default: 0.0,
    },
];

/// Resolve one extractor's options: values by option name, and the name
/// suffix libvmaf derives from the non-default ones (sorted by option name).
fn resolve(
    specs: &[OptSpec],
    given: &[(String, OptValue)],
    feature: &str,
) -> Result<(Vec<f64>, String), VmafError> {
    let mut vals: Vec<f64> = specs.iter().map(|s| s.default).collect();
    let mut bools = vec![false; specs.len()];
    for (k, v) in given {
        let Some(i) = specs.iter().position(|s| s.name == k || s.alias == k) else {
            return Err(VmafError::Unsupported(format!(
                "option \"{k}\" of feature {feature}"
            )));
        };
        match v {
            OptValue::Number(n) => vals[i] = *n,
            OptValue::Bool(b) => {
                vals[i] = if *b { 1.0 } else { 0.0 };
                bools[i] = true;
            }
        }
    }
    let mut suffix = String::new();
    for (i, s) in specs.iter().enumerate() {
        // %g of a float: strtof then "%g" (dict.c).
        let v = f64::from(vals[i] as f32);
        if v != f64::from(s.default as f32) {
            if bools[i] {
                suffix.push_str(&format!("_{}", s.alias));
            } else {
                suffix.push_str(&format!("_{}_{}", s.alias, fmt_g(v)));
            }
        }
    }
    Ok((vals, suffix))
}

impl Plan {
    pub fn new(
        models: &ModelSet,
        psnr: bool,
        ssim: bool,
        ms_ssim: bool,
    ) -> Result<Self, VmafError> {
        let mut plan = Plan {
            adm: None,
            vif_egl: None,
            motion: None,
            psnr,
            ssim,
            ms_ssim,
            adm_suffix: String::new(),
            vif_suffix: String::new(),
            motion_suffix: String::new(),
            order: Vec::new(),
            inputs: Vec::new(),
        };
        let main = &models.main;
        for m in std::iter::once(main).chain(&models.bootstrap) {
            if m.features.len() != main.features.len()
                || m.features
                    .iter()
                    .zip(&main.features)
                    .any(|(a, b)| a.name != b.name || a.options != b.options)
            {
                return Err(VmafError::Unsupported(format!(
                    "bootstrap model {} uses other features than the main model",
                    m.name
                )));
            }
        }
        for f in &main.features {
            let r = FeatureRef::from_name(&f.name).ok_or_else(|| {
                VmafError::Unsupported(format!("model feature \"{}\" (supported: libvmaf's integer adm, vif and motion features)", f.name))
            })?;
            let ex = r.extractor();
            match ex {
                Extractor::Adm => {
                    let (v, suffix) = resolve(ADM_OPTS, &f.options, &f.name)?;
                    let p = AdmParams {
                        dlm_weight: v[0],
                        enhn_gain_limit: v[1],
                        min_val: v[2],
                        noise_weight: v[3],
                        norm_view_dist: v[4],
                        ref_display_height: v[5] as i32,
                    };
                    if p.norm_view_dist * f64::from(p.ref_display_height) < 3240.0 {
                        return Err(VmafError::Unsupported(format!(
                            "{}: adm_norm_view_dist·adm_ref_display_height below 3·1080 (libvmaf rejects it too)",
                            f.name
                        )));
                    }
                    check_same(&mut plan.adm, p, &f.name)?;
                    plan.adm_suffix = suffix;
                }
                Extractor::Vif => {
                    let (v, suffix) = resolve(VIF_OPTS, &f.options, &f.name)?;
                    check_same(&mut plan.vif_egl, v[0], &f.name)?;
                    plan.vif_suffix = suffix;
                }
                Extractor::Motion => {
                    let (v, suffix) = resolve(MOTION_OPTS, &f.options, &f.name)?;
                    let p = MotionParams {
                        blend_factor: v[0],
                        blend_offset: v[1],
                        force_zero: v[2] != 0.0,
                        fps_weight: v[3],
                        max_val: v[4],
                        moving_average: v[5] != 0.0,
                    };
                    check_same(&mut plan.motion, p, &f.name)?;
                    plan.motion_suffix = suffix;
                }
            }
            if !plan.order.contains(&ex) {
                plan.order.push(ex);
            }
            plan.inputs.push(r);
        }
        Ok(plan)
    }

    /// Output metrics in libvmaf's (single-threaded) collector order: the
    /// name libvmaf prints and where the value comes from.
    pub fn metrics(&self, chroma: bool) -> Vec<(String, MetricSource)> {
        use FeatureRef as F;
        use MetricSource::Feature;
        let mut m = Vec::new();
        for ex in &self.order {
            match ex {
                Extractor::Adm => {
                    let s = &self.adm_suffix;
                    m.push((format!("integer_adm2{s}"), Feature(F::Adm2)));
                    m.push((format!("integer_aim{s}"), Feature(F::Aim)));
                    m.push((format!("integer_adm3{s}"), Feature(F::Adm3)));
                    m.extend(
                        (0..4)
                            .map(|i| (format!("integer_adm_scale{i}{s}"), Feature(F::AdmScale(i)))),
                    );
                }
                Extractor::Motion => m.push((
                    format!(
                        "VMAF_integer_feature_motion_sad_score{}",
                        self.motion_suffix
                    ),
                    Feature(F::MotionSad),
                )),
                Extractor::Vif => m.extend((0..4).map(|i| {
                    (
                        format!("integer_vif_scale{i}{}", self.vif_suffix),
                        Feature(F::Vif(i)),
                    )
                })),
            }
        }
        if self.psnr {
            m.push(("psnr_y".into(), MetricSource::Psnr(0)));
            if chroma {
                m.push(("psnr_cb".into(), MetricSource::Psnr(1)));
                m.push(("psnr_cr".into(), MetricSource::Psnr(2)));
            }
        }
        if self.ssim {
            m.push(("float_ssim".into(), MetricSource::Ssim));
        }
        if self.ms_ssim {
            m.push(("float_ms_ssim".into(), MetricSource::MsSsim));
        }
        if self.motion.is_some() {
            m.push((
                format!("integer_motion2{}", self.motion_suffix),
                Feature(F::Motion2),
            ));
            m.push((
                format!("integer_motion3{}", self.motion_suffix),
                Feature(F::Motion3),
            ));
        }
        m
    }
}

fn check_same<T: PartialEq + Copy>(
    slot: &mut Option<T>,
    v: T,
    name: &str,
) -> Result<(), VmafError> {
    match slot {
        Some(old) if *old != v => Err(VmafError::Unsupported(format!(
            "{name}: two different option sets for one extractor"
        ))),
        _ => {
            *slot = Some(v);
            Ok(())
        }
    }
}

/// Per-frame extractor output before the temporal and model stages.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawFeatures {
    pub index: u64,
    /// False for frames `subsample` skips: only the motion SAD is computed.
    pub scored: bool,
    pub adm: Option<AdmScores>,
    pub vif: Option<VifScales>,
    /// The motion SAD score (`VMAF_integer_feature_motion_sad_score`).
    pub motion_sad: Option<f64>,
    pub psnr: Option<[f64; 3]>,
    pub ssim: Option<f64>,
    pub ms_ssim: Option<f64>,
}

/// One worker's CPU extractors with their scratch memory.
pub struct CpuExtractor {
    plan: Plan,
    vif: Vif,
    adm: Adm,
    y_row: Vec<i32>,
    acc: Vec<i64>,
}

impl CpuExtractor {
    pub fn new(plan: Plan) -> Self {
        Self {
            plan,
            vif: Vif::new(),
            adm: Adm::new(),
            y_row: Vec::new(),
            acc: Vec::new(),
        }
    }

    /// Everything for one frame pair; `prev_ref` is reference luma i − 1.
    pub fn extract(&mut self, job: &super::FrameJob) -> RawFeatures {
        let (r, d) = (&job.reference, &job.distorted);
        let (w, h, bpc) = (r.width(), r.height(), r.bpc);
        let mut out = RawFeatures {
            index: job.index,
            scored: job.scored,
            ..Default::default()
        };
        if let Some(mp) = &self.plan.motion {
            let sad = match (&job.prev_reference, mp.force_zero) {
                (Some(prev), false) => motion::sad_score(
                    motion::motion_sad(
                        &prev.luma().data,
                        &r.luma().data,
                        w,
                        h,
                        bpc,
                        &mut self.y_row,
                        &mut self.acc,
                    ),
                    w,
                    h,
                    mp,
                ),
                _ => 0.0,
            };
            out.motion_sad = Some(sad);
        }
        if !job.scored {
            return out;
        }
        if let Some(p) = &self.plan.adm {
            out.adm = Some(
                self.adm
                    .compute(&r.luma().data, &d.luma().data, w, h, bpc, p),
            );
        }
        if let Some(egl) = self.plan.vif_egl {
            out.vif = Some(
                self.vif
                    .compute(&r.luma().data, &d.luma().data, w, h, bpc, egl),
            );
        }
        if self.plan.psnr {
            let mut v = [0.0; 3];
            for (p, slot) in v.iter_mut().enumerate().take(r.planes.len()) {
                let (rp, dp) = (&r.planes[p], &d.planes[p]);
                *slot = psnr::psnr_plane(&rp.data, &dp.data, rp.width, rp.height, bpc);
            }
            out.psnr = Some(v);
        }
        if self.plan.ssim || self.plan.ms_ssim {
            let rf = ssim::to_float(&r.luma().data, bpc);
            let df = ssim::to_float(&d.luma().data, bpc);
            if self.plan.ssim {
                out.ssim = ssim::float_ssim(&rf, &df, w, h);
            }
            if self.plan.ms_ssim {
                out.ms_ssim = ssim::float_ms_ssim(&rf, &df, w, h);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_reflects_without_repeating() {
        assert_eq!(mirror_r101(-1, 10), 1);
        assert_eq!(mirror_r101(-3, 10), 3);
        assert_eq!(mirror_r101(10, 10), 8);
        assert_eq!(mirror_r101(12, 10), 6);
        assert_eq!(mirror_r101(4, 10), 4);
    }

    #[test]
    fn g_format_like_printf() {
        assert_eq!(fmt_g(1.0), "1");
        assert_eq!(fmt_g(0.5), "0.5");
        assert_eq!(fmt_g(1080.0), "1080");
        assert_eq!(fmt_g(0.03125), "0.03125");
        assert_eq!(fmt_g(f64::from(0.7f32)), "0.7");
    }

    #[test]
    fn feature_names_resolve() {
        assert_eq!(
            FeatureRef::from_name("VMAF_integer_feature_vif_scale2_score"),
            Some(FeatureRef::Vif(2))
        );
        assert_eq!(
            FeatureRef::from_name("integer_adm2"),
            Some(FeatureRef::Adm2)
        );
        assert_eq!(FeatureRef::from_name("VMAF_feature_adm2_score"), None);
    }
}
