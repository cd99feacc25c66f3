//! Feature extractors and the per-frame extraction plan derived from a model.

use super::VmafError;
use super::model::ModelSet;
use crate::extractors::adm::{cpu as adm, tables as adm_tables};
pub use crate::extractors::common::FrameError;
use crate::extractors::common::options;
use crate::extractors::{
    cambi::cpu as cambi, ciede::cpu as ciede, float_adm::cpu as float_adm,
    float_ansnr::cpu as float_ansnr, float_moment::cpu as float_moment,
    float_motion::cpu as float_motion, float_psnr::cpu as float_psnr, float_vif::cpu as float_vif,
    motion::cpu as motion, psnr::cpu as psnr, psnr_hvs::cpu as psnr_hvs, speed::cpu as speed,
    ssim::cpu as ssim, vif::cpu as vif,
};
use adm::{Adm, AdmParams, AdmScores};
use cambi::{Cambi, CambiParams, CambiScores};
use float_adm::{FloatAdm, FloatAdmParams};
use float_motion::{FloatMotion, FloatMotionParams};
use float_vif::{FloatVif, FloatVifParams};
use motion::MotionParams;
use speed::{SpeedChroma, SpeedParams, SpeedTemporal};
use vif::{Vif, VifScales};

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
    /// `Cambi_feature_cambi_score` (the distorted picture's banding).
    Cambi,
    /// `cambi_source` and `cambi_full_reference` (`full_ref=true`).
    CambiSource,
    CambiFullRef,
    /// speed_chroma of U (0), V (1) and their combination (2).
    SpeedChroma(usize),
    /// `float_psnr`.
    FloatPsnr,
    /// `float_ansnr` (0) and `float_anpsnr` (1).
    FloatAnsnr(usize),
    /// `float_moment_ref1st`, `dis1st`, `ref2nd`, `dis2nd`.
    FloatMoment(usize),
    /// `ciede2000`.
    Ciede,
    /// `psnr_hvs_y` (0), `_cb` (1), `_cr` (2), `psnr_hvs` (3).
    PsnrHvs(usize),
    /// float_adm's `VMAF_feature_adm2_score` and the rest.
    FloatAdm2,
    FloatAim,
    FloatAdm3,
    FloatAdmScale(usize),
    /// float_vif's `VMAF_feature_vif_scaleN_score`.
    FloatVif(usize),
    /// float_motion's `motion` (its debug output), `motion2`, `motion3`.
    FloatMotion,
    FloatMotion2,
    FloatMotion3,
    /// `Speed_temporal_feature_speed_temporal_score`.
    SpeedTemporal,
}

impl FeatureRef {
    /// libvmaf raw feature name → value (raw names and their aliases).
    pub fn from_name(name: &str) -> Option<Self> {
        let n = name
            .strip_prefix("VMAF_integer_feature_")
            .and_then(|s| s.strip_suffix("_score"))
            .map(|s| format!("integer_{s}"));
        let n = n.as_deref().unwrap_or(name);
        if let Some(f) = Self::float_from_name(name) {
            return Some(f);
        }
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
            "Cambi_feature_cambi_score" | "cambi" => Self::Cambi,
            "cambi_source" => Self::CambiSource,
            "cambi_full_reference" => Self::CambiFullRef,
            "Speed_chroma_feature_speed_chroma_u_score" | "speed_chroma_u" => Self::SpeedChroma(0),
            "Speed_chroma_feature_speed_chroma_v_score" | "speed_chroma_v" => Self::SpeedChroma(1),
            "Speed_chroma_feature_speed_chroma_uv_score" | "speed_chroma_uv" => {
                Self::SpeedChroma(2)
            }
            "float_psnr" => Self::FloatPsnr,
            "float_ansnr" => Self::FloatAnsnr(0),
            "float_anpsnr" => Self::FloatAnsnr(1),
            "float_moment_ref1st" => Self::FloatMoment(0),
            "float_moment_dis1st" => Self::FloatMoment(1),
            "float_moment_ref2nd" => Self::FloatMoment(2),
            "float_moment_dis2nd" => Self::FloatMoment(3),
            "ciede2000" => Self::Ciede,
            "psnr_hvs_y" => Self::PsnrHvs(0),
            "psnr_hvs_cb" => Self::PsnrHvs(1),
            "psnr_hvs_cr" => Self::PsnrHvs(2),
            "psnr_hvs" => Self::PsnrHvs(3),
            _ => return None,
        })
    }

    /// The float extractors' names (`VMAF_feature_adm2_score`) and their
    /// aliases (`adm2`).
    fn float_from_name(name: &str) -> Option<Self> {
        let n = name
            .strip_prefix("VMAF_feature_")
            .and_then(|s| s.strip_suffix("_score"))
            .unwrap_or(name);
        Some(match n {
            "adm2" => Self::FloatAdm2,
            "aim" => Self::FloatAim,
            "adm3" => Self::FloatAdm3,
            "motion" => Self::FloatMotion,
            "motion2" => Self::FloatMotion2,
            "motion3" => Self::FloatMotion3,
            "Speed_temporal_feature_speed_temporal_score" | "speed_temporal" => Self::SpeedTemporal,
            _ => {
                let scale = |p: &str| {
                    n.strip_prefix(p)
                        .and_then(|d| d.parse::<usize>().ok())
                        .filter(|&d| d < 4)
                };
                if let Some(s) = scale("adm_scale") {
                    Self::FloatAdmScale(s)
                } else {
                    Self::FloatVif(scale("vif_scale")?)
                }
            }
        })
    }

    fn extractor(self) -> Extractor {
        match self {
            Self::Adm2 | Self::Aim | Self::Adm3 | Self::AdmScale(_) => Extractor::Adm,
            Self::Vif(_) => Extractor::Vif,
            Self::MotionSad | Self::Motion2 | Self::Motion3 => Extractor::Motion,
            Self::Cambi | Self::CambiSource | Self::CambiFullRef => Extractor::Cambi,
            Self::SpeedChroma(_) => Extractor::SpeedChroma,
            Self::FloatPsnr => Extractor::FloatPsnr,
            Self::FloatAnsnr(_) => Extractor::FloatAnsnr,
            Self::FloatMoment(_) => Extractor::FloatMoment,
            Self::Ciede => Extractor::Ciede,
            Self::PsnrHvs(_) => Extractor::PsnrHvs,
            Self::FloatAdm2 | Self::FloatAim | Self::FloatAdm3 | Self::FloatAdmScale(_) => {
                Extractor::FloatAdm
            }
            Self::FloatVif(_) => Extractor::FloatVif,
            Self::FloatMotion | Self::FloatMotion2 | Self::FloatMotion3 => Extractor::FloatMotion,
            Self::SpeedTemporal => Extractor::SpeedTemporal,
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
    Cambi,
    SpeedChroma,
    FloatPsnr,
    FloatAnsnr,
    FloatMoment,
    Ciede,
    PsnrHvs,
    FloatAdm,
    FloatVif,
    FloatMotion,
    SpeedTemporal,
}

/// Extractors that `--feature NAME` (libvmaf's CLI) adds on their own,
/// with their default options.
pub const EXTRA_FEATURES: &[&str] = &[
    "cambi",
    "speed_chroma",
    "float_psnr",
    "float_ansnr",
    "float_moment",
    "ciede",
    "psnr_hvs",
    "speed_temporal",
    "float_adm",
    "float_vif",
    "float_motion",
];

/// What to compute per frame, and how to name it.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Distorted pictures of another size than the reference are scaled to
    /// it with this kernel first (an encoding ladder's renditions); None
    /// refuses them.
    pub scale: Option<crate::vmaf::ScaleMethod>,
    pub adm: Option<AdmParams>,
    pub vif_egl: Option<f64>,
    pub motion: Option<MotionParams>,
    pub cambi: Option<CambiParams>,
    pub speed_chroma: Option<SpeedParams>,
    pub psnr: bool,
    pub ssim: bool,
    pub ms_ssim: bool,
    /// libvmaf's float extractors without options.
    pub float_psnr: bool,
    pub float_ansnr: bool,
    pub float_moment: bool,
    pub ciede: bool,
    pub psnr_hvs: bool,
    pub float_adm: Option<FloatAdmParams>,
    pub float_vif: Option<FloatVifParams>,
    pub float_motion: Option<FloatMotionParams>,
    /// speed_temporal's parameters and `speed_use_ref_diff`.
    pub speed_temporal: Option<(SpeedParams, bool)>,
    /// Name suffix from non-default options (`_egl_1`), per extractor.
    pub adm_suffix: String,
    pub vif_suffix: String,
    pub motion_suffix: String,
    pub cambi_suffix: String,
    pub speed_suffix: String,
    pub float_adm_suffix: String,
    pub float_vif_suffix: String,
    pub float_motion_suffix: String,
    pub speed_temporal_suffix: String,
    /// Extractor order as the model lists them (libvmaf registration order).
    order: Vec<Extractor>,
    /// Model inputs, in `feature_names` order.
    pub inputs: Vec<FeatureRef>,
}

pub use options::fmt_g;
use options::{OptSpec, resolve};

/// `integer_adm.c:options` (feature parameters; `debug` and `adm_skip_aim`
/// change no number this engine outputs).
pub const ADM_OPTS: &[OptSpec] = &[
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
/// `integer_vif.c:options` (the ones that change numbers or names).
pub const VIF_OPTS: &[OptSpec] = &[
    OptSpec::num("vif_enhn_gain_limit", "egl", 100.0, 1.0, 100.0),
    OptSpec::boolean("debug", "debug").not_param(),
];
/// `integer_motion.c:options`.
pub const MOTION_OPTS: &[OptSpec] = &[
    OptSpec::boolean("motion_force_zero", "force_0"),
    OptSpec::num("motion_blend_factor", "mbf", 1.0, 0.0, 1.0),
    OptSpec::num("motion_blend_offset", "mbo", 40.0, 0.0, 1000.0),
    OptSpec::num("motion_fps_weight", "mfw", 1.0, 0.0, 5.0),
    OptSpec::num("motion_max_val", "mmxv", 10000.0, 0.0, 10000.0),
    OptSpec::boolean("motion_five_frame_window", "mffw"),
    OptSpec::boolean("motion_moving_average", "mma"),
    OptSpec::boolean("debug", "debug").not_param(),
];

impl Plan {
    /// Whether an extractor of this plan reads the chroma planes
    /// (speed_chroma, ciede, psnr_hvs, float_motion with `motion_add_uv`,
    /// and PSNR's Cb and Cr); the others read luma only.
    pub fn reads_chroma(&self) -> bool {
        self.speed_chroma.is_some()
            || self.psnr
            || self.ciede
            || self.psnr_hvs
            || self.float_motion.is_some_and(|p| p.add_uv)
    }

    pub fn new(
        models: &ModelSet,
        psnr: bool,
        ssim: bool,
        ms_ssim: bool,
    ) -> Result<Self, VmafError> {
        Self::with_features(models, psnr, ssim, ms_ssim, &[])
    }

    /// The model's features plus `extra` extractors (`cambi`, `speed_chroma`)
    /// with default options, as libvmaf's `--feature NAME`.
    pub fn with_features(
        models: &ModelSet,
        psnr: bool,
        ssim: bool,
        ms_ssim: bool,
        extra: &[String],
    ) -> Result<Self, VmafError> {
        let mut plan = Plan {
            scale: None,
            adm: None,
            vif_egl: None,
            motion: None,
            cambi: None,
            speed_chroma: None,
            psnr,
            ssim,
            ms_ssim,
            float_psnr: false,
            float_ansnr: false,
            float_moment: false,
            ciede: false,
            psnr_hvs: false,
            float_adm: None,
            float_vif: None,
            float_motion: None,
            speed_temporal: None,
            adm_suffix: String::new(),
            vif_suffix: String::new(),
            motion_suffix: String::new(),
            cambi_suffix: String::new(),
            speed_suffix: String::new(),
            float_adm_suffix: String::new(),
            float_vif_suffix: String::new(),
            float_motion_suffix: String::new(),
            speed_temporal_suffix: String::new(),
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
                VmafError::Unsupported(format!(
                    "model feature \"{}\" (supported: libvmaf's integer and float adm, vif and motion, cambi, speed_chroma and speed_temporal)",
                    f.name
                ))
            })?;
            plan.add(r.extractor(), &f.options, &f.name)?;
            plan.inputs.push(r);
        }
        for name in extra {
            let ex = match name.as_str() {
                "cambi" => Extractor::Cambi,
                "speed_chroma" => Extractor::SpeedChroma,
                "float_psnr" => Extractor::FloatPsnr,
                "float_ansnr" => Extractor::FloatAnsnr,
                "float_moment" => Extractor::FloatMoment,
                "ciede" => Extractor::Ciede,
                "psnr_hvs" => Extractor::PsnrHvs,
                "speed_temporal" => Extractor::SpeedTemporal,
                "float_adm" => Extractor::FloatAdm,
                "float_vif" => Extractor::FloatVif,
                "float_motion" => Extractor::FloatMotion,
                other => {
                    return Err(VmafError::Unsupported(format!(
                        "feature \"{other}\" (extra features: {})",
                        EXTRA_FEATURES.join(", ")
                    )));
                }
            };
            if !plan.order.contains(&ex) {
                plan.add(ex, &[], name)?;
            }
        }
        Ok(plan)
    }

    fn add(
        &mut self,
        ex: Extractor,
        options: &[(String, crate::vmaf::model::OptValue)],
        name: &str,
    ) -> Result<(), VmafError> {
        match ex {
            Extractor::Adm => {
                let o = resolve(ADM_OPTS, options, name)?;
                let n = |k| o.num(ADM_OPTS, k);
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
                if o.flag(ADM_OPTS, "adm_skip_scale0") {
                    return Err(VmafError::Unsupported(format!(
                        "{name}: adm_skip_scale0 is not implemented by this engine"
                    )));
                }
                if p.norm_view_dist * f64::from(p.ref_display_height) < 3240.0 {
                    return Err(VmafError::Unsupported(format!(
                        "{name}: adm_norm_view_dist·adm_ref_display_height below 3·1080 (libvmaf rejects it too)"
                    )));
                }
                adm_tables::check_csf(&p)
                    .map_err(|e| VmafError::Unsupported(format!("{name}: {e}")))?;
                check_same(&mut self.adm, p, name)?;
                self.adm_suffix = o.suffix;
            }
            Extractor::Vif => {
                let o = resolve(VIF_OPTS, options, name)?;
                check_same(
                    &mut self.vif_egl,
                    o.num(VIF_OPTS, "vif_enhn_gain_limit"),
                    name,
                )?;
                self.vif_suffix = o.suffix;
            }
            Extractor::Motion => {
                let o = resolve(MOTION_OPTS, options, name)?;
                let n = |k| o.num(MOTION_OPTS, k);
                let p = MotionParams {
                    blend_factor: n("motion_blend_factor"),
                    blend_offset: n("motion_blend_offset"),
                    force_zero: o.flag(MOTION_OPTS, "motion_force_zero"),
                    fps_weight: n("motion_fps_weight"),
                    max_val: n("motion_max_val"),
                    moving_average: o.flag(MOTION_OPTS, "motion_moving_average"),
                    five_frame_window: o.flag(MOTION_OPTS, "motion_five_frame_window"),
                };
                check_same(&mut self.motion, p, name)?;
                self.motion_suffix = o.suffix;
            }
            Extractor::Cambi => {
                let o = resolve(cambi::OPTIONS, options, name)?;
                let p = CambiParams::from_options(&o)
                    .map_err(|e| VmafError::Unsupported(format!("{name}: {e}")))?;
                check_same(&mut self.cambi, p, name)?;
                self.cambi_suffix = o.suffix;
            }
            Extractor::SpeedChroma => {
                let o = resolve(speed::OPTIONS, options, name)?;
                let p = SpeedParams::from_options(&o)
                    .map_err(|e| VmafError::Unsupported(format!("{name}: {e}")))?;
                check_same(&mut self.speed_chroma, p, name)?;
                self.speed_suffix = o.suffix;
            }
            Extractor::FloatAdm | Extractor::FloatVif | Extractor::FloatMotion => {
                self.add_float(ex, options, name)?;
            }
            Extractor::SpeedTemporal => {
                let o = resolve(speed::TEMPORAL_OPTIONS, options, name)?;
                let p = SpeedParams::from_table(&o, speed::TEMPORAL_OPTIONS)
                    .map_err(|e| VmafError::Unsupported(format!("{name}: {e}")))?;
                let urd = o.flag(speed::TEMPORAL_OPTIONS, "speed_use_ref_diff");
                check_same(&mut self.speed_temporal, (p, urd), name)?;
                self.speed_temporal_suffix = o.suffix;
            }
            Extractor::FloatPsnr
            | Extractor::FloatAnsnr
            | Extractor::FloatMoment
            | Extractor::Ciede
            | Extractor::PsnrHvs => {
                // None of these has an option that changes a number.
                resolve(
                    &[OptSpec::boolean("debug", "debug").not_param()],
                    options,
                    name,
                )?;
                match ex {
                    Extractor::FloatPsnr => self.float_psnr = true,
                    Extractor::FloatAnsnr => self.float_ansnr = true,
                    Extractor::Ciede => self.ciede = true,
                    Extractor::PsnrHvs => self.psnr_hvs = true,
                    _ => self.float_moment = true,
                }
            }
        }
        if !self.order.contains(&ex) {
            self.order.push(ex);
        }
        Ok(())
    }

    /// float_adm, float_vif and float_motion with their options.
    fn add_float(
        &mut self,
        ex: Extractor,
        options: &[(String, crate::vmaf::model::OptValue)],
        name: &str,
    ) -> Result<(), VmafError> {
        let unsupported = |e: String| VmafError::Unsupported(format!("{name}: {e}"));
        match ex {
            Extractor::FloatAdm => {
                let o = resolve(float_adm::OPTIONS, options, name)?;
                let p = FloatAdmParams::from_options(&o);
                check_same(&mut self.float_adm, p, name)?;
                self.float_adm_suffix = o.suffix;
            }
            Extractor::FloatVif => {
                let o = resolve(float_vif::OPTIONS, options, name)?;
                let p = FloatVifParams::from_options(&o).map_err(unsupported)?;
                check_same(&mut self.float_vif, p, name)?;
                self.float_vif_suffix = o.suffix;
            }
            _ => {
                let o = resolve(float_motion::OPTIONS, options, name)?;
                let p = FloatMotionParams::from_options(&o).map_err(unsupported)?;
                check_same(&mut self.float_motion, p, name)?;
                self.float_motion_suffix = o.suffix;
            }
        }
        Ok(())
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
                Extractor::Cambi => {
                    let s = &self.cambi_suffix;
                    m.push((format!("cambi{s}"), Feature(F::Cambi)));
                    if self.cambi.is_some_and(|c| c.full_ref) {
                        m.push((format!("cambi_source{s}"), Feature(F::CambiSource)));
                        m.push((format!("cambi_full_reference{s}"), Feature(F::CambiFullRef)));
                    }
                }
                Extractor::SpeedChroma => {
                    let s = &self.speed_suffix;
                    for (i, c) in ["u", "v", "uv"].iter().enumerate() {
                        m.push((format!("speed_chroma_{c}{s}"), Feature(F::SpeedChroma(i))));
                    }
                }
                Extractor::FloatPsnr => m.push(("float_psnr".into(), Feature(F::FloatPsnr))),
                Extractor::FloatAnsnr => {
                    m.push(("float_ansnr".into(), Feature(F::FloatAnsnr(0))));
                    m.push(("float_anpsnr".into(), Feature(F::FloatAnsnr(1))));
                }
                Extractor::Ciede => m.push(("ciede2000".into(), Feature(F::Ciede))),
                Extractor::PsnrHvs => {
                    for (i, n) in ["psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr", "psnr_hvs"]
                        .iter()
                        .enumerate()
                    {
                        m.push(((*n).into(), Feature(F::PsnrHvs(i))));
                    }
                }
                Extractor::FloatMoment => {
                    for (i, n) in ["ref1st", "dis1st", "ref2nd", "dis2nd"].iter().enumerate() {
                        m.push((format!("float_moment_{n}"), Feature(F::FloatMoment(i))));
                    }
                }
                Extractor::FloatAdm => {
                    let s = &self.float_adm_suffix;
                    m.push((format!("adm2{s}"), Feature(F::FloatAdm2)));
                    m.push((format!("aim{s}"), Feature(F::FloatAim)));
                    m.push((format!("adm3{s}"), Feature(F::FloatAdm3)));
                    m.extend(
                        (0..4).map(|i| (format!("adm_scale{i}{s}"), Feature(F::FloatAdmScale(i)))),
                    );
                }
                Extractor::FloatVif => {
                    let s = &self.float_vif_suffix;
                    m.extend((0..4).map(|i| (format!("vif_scale{i}{s}"), Feature(F::FloatVif(i)))));
                }
                Extractor::FloatMotion => {
                    let s = &self.float_motion_suffix;
                    m.push((format!("motion2{s}"), Feature(F::FloatMotion2)));
                    m.push((format!("motion{s}"), Feature(F::FloatMotion)));
                }
                Extractor::SpeedTemporal => m.push((
                    format!("speed_temporal{}", self.speed_temporal_suffix),
                    Feature(F::SpeedTemporal),
                )),
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
        self.push_deferred(&mut m);
        m
    }

    /// What the temporal extractors give frame 0 only once frame 1 is in
    /// (libvmaf's collector meets these names then), in extractor order.
    fn push_deferred(&self, m: &mut Vec<(String, MetricSource)>) {
        use FeatureRef as F;
        use MetricSource::Feature;
        for ex in &self.order {
            match ex {
                Extractor::Motion => {
                    let s = &self.motion_suffix;
                    m.push((format!("integer_motion2{s}"), Feature(F::Motion2)));
                    m.push((format!("integer_motion3{s}"), Feature(F::Motion3)));
                }
                Extractor::FloatMotion => m.push((
                    format!("motion3{}", self.float_motion_suffix),
                    Feature(F::FloatMotion3),
                )),
                _ => {}
            }
        }
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
    pub cambi: Option<CambiScores>,
    /// speed_chroma u, v, uv (already capped at `speed_max_val`).
    pub speed_chroma: Option<[f64; 3]>,
    pub float_psnr: Option<f64>,
    /// float_ansnr, float_anpsnr.
    pub float_ansnr: Option<[f64; 2]>,
    /// float_moment ref1st, dis1st, ref2nd, dis2nd.
    pub float_moment: Option<[f64; 4]>,
    /// `ciede2000` (+∞ for identical pictures).
    pub ciede: Option<f64>,
    /// psnr_hvs y, cb, cr, combined (+∞ for identical pictures).
    pub psnr_hvs: Option<[f64; 4]>,
    pub float_adm: Option<AdmScores>,
    /// float_vif's vif_scale0..3.
    pub float_vif: Option<[f64; 4]>,
    /// float_motion's score (SAD of frames i − 1 and i) times the fps
    /// weight, not capped; 0 for frame 0.
    pub float_motion: Option<f64>,
    pub speed_temporal: Option<f64>,
    /// Why this frame has no scores; the engine turns it into an error.
    pub error: Option<String>,
}

/// One worker's CPU extractors with their scratch memory.
pub struct CpuExtractor {
    plan: Plan,
    vif: Vif,
    adm: Adm,
    cambi: Option<Cambi>,
    speed: Option<SpeedChroma>,
    floats: FloatScratch,
    y_row: Vec<i32>,
    acc: Vec<i64>,
}

impl CpuExtractor {
    pub fn new(plan: Plan) -> Self {
        Self {
            plan,
            vif: Vif::new(),
            adm: Adm::new(),
            cambi: None,
            speed: None,
            floats: FloatScratch::default(),
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
            let prev = if mp.five_frame_window {
                &job.prev_prev_reference
            } else {
                &job.prev_reference
            };
            let sad = match (prev, mp.force_zero) {
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
        let prev = [job.prev_reference.as_deref(), job.prev_distorted.as_deref()];
        self.floats.temporal(&self.plan, prev, [r, d], &mut out);
        if !job.scored {
            return out;
        }
        self.floats.spatial(&self.plan, r, d, &mut out);
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
        if let Some(cp) = &self.plan.cambi {
            let c = self.cambi.get_or_insert_with(Cambi::default);
            match c.compute(r, d, cp) {
                Ok(v) => out.cambi = Some(v),
                Err(FrameError(e)) => out.error = Some(e),
            }
        }
        if let Some(sp) = &self.plan.speed_chroma {
            let s = self.speed.get_or_insert_with(SpeedChroma::default);
            match s.compute(r, d, sp) {
                Ok(v) => out.speed_chroma = Some(v),
                Err(FrameError(e)) => out.error = Some(e),
            }
        }
        if self.plan.psnr {
            let mut v = [0.0; 3];
            for (p, slot) in v.iter_mut().enumerate().take(r.planes.len()) {
                let (rp, dp) = (&r.planes[p], &d.planes[p]);
                *slot = psnr::psnr_plane(&rp.data, &dp.data, rp.width, rp.height, bpc);
            }
            out.psnr = Some(v);
        }
        float_extras(
            &self.plan,
            &r.luma().data,
            &d.luma().data,
            w,
            h,
            bpc,
            &mut out,
        );
        chroma_extras(&self.plan, r, d, &mut out, 1);
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

/// Scratch of the float extractors with state (float_adm, float_vif,
/// float_motion, speed_temporal).
#[derive(Default)]
pub struct FloatScratch {
    adm: FloatAdm,
    vif: FloatVif,
    motion: FloatMotion,
    speed: SpeedTemporal,
}

impl FloatScratch {
    /// float_motion (every frame) and speed_temporal (scored frames), from
    /// the reference and distorted pictures of the frame before (`None` for
    /// frame 0, and where no extractor reads them) and of this one.
    pub fn temporal(
        &mut self,
        plan: &Plan,
        prev: [Option<&super::picture::Frame>; 2],
        [r, d]: [&super::picture::Frame; 2],
        out: &mut RawFeatures,
    ) {
        if let Some(p) = &plan.float_motion {
            out.float_motion = Some(match prev[0] {
                Some(pr) if !p.temporal.force_zero => match self.motion.score_frames(pr, r, p) {
                    Ok(s) => s * p.temporal.fps_weight,
                    Err(e) => {
                        out.error = Some(e);
                        0.0
                    }
                },
                _ => 0.0,
            });
        }
        if let (Some((sp, urd)), true) = (&plan.speed_temporal, out.scored) {
            out.speed_temporal = Some(match (prev[0], prev[1]) {
                (Some(pr), Some(pd)) => {
                    match self.speed.compute(
                        [pr.luma(), pd.luma()],
                        [r.luma(), d.luma()],
                        r.bpc,
                        (sp, *urd),
                    ) {
                        Ok(v) => v,
                        Err(FrameError(e)) => {
                            out.error = Some(e);
                            0.0
                        }
                    }
                }
                _ => 0.0,
            });
        }
    }

    /// float_adm and float_vif of one frame pair.
    pub fn spatial(
        &mut self,
        plan: &Plan,
        r: &super::picture::Frame,
        d: &super::picture::Frame,
        out: &mut RawFeatures,
    ) {
        let geo = (r.width(), r.height(), r.bpc);
        let (rl, dl) = (&r.luma().data, &d.luma().data);
        if let Some(p) = &plan.float_adm {
            out.float_adm = Some(self.adm.compute(rl, dl, geo, p));
        }
        if let Some(p) = &plan.float_vif {
            match self.vif.compute(rl, dl, geo, p) {
                Ok(sums) => out.float_vif = Some(sums.scores(p)),
                Err(e) => out.error = Some(e),
            }
        }
    }
}

/// The float extractors without options that `plan` asks for (`float_psnr`,
/// `float_ansnr`, `float_moment`), from two luma planes (`w`×`h`, packed).
pub fn float_extras(
    plan: &Plan,
    reference: &[u16],
    distorted: &[u16],
    w: usize,
    h: usize,
    bpc: u8,
    out: &mut RawFeatures,
) {
    if plan.float_psnr || plan.float_moment {
        let sums = float_moment::luma_sums(reference, distorted, w, h);
        float_sums_features(plan, &sums, (w, h, bpc), out);
    }
    if plan.float_ansnr {
        out.float_ansnr = Some(float_ansnr::float_ansnr(reference, distorted, w, h, bpc));
    }
}

/// `float_psnr` and `float_moment`, where `plan` asks for them, from the
/// luma sums of a `w`×`h` pair at `bpc` bits (the CPU's or the GPU's).
pub fn float_sums_features(
    plan: &Plan,
    sums: &float_moment::LumaSums,
    (w, h, bpc): (usize, usize, u8),
    out: &mut RawFeatures,
) {
    if plan.float_psnr {
        out.float_psnr = Some(float_psnr::psnr_from_error_squares(
            sums.error_squares,
            w,
            h,
            bpc,
        ));
    }
    if plan.float_moment {
        out.float_moment = Some(float_moment::moments(sums, w, h, bpc));
    }
}

/// The extractors without options that read chroma and `plan` asks for
/// (`ciede`, `psnr_hvs`), from two frames with their chroma planes;
/// `threads` may share psnr_hvs's blocks (1 where frames run in parallel).
pub fn chroma_extras(
    plan: &Plan,
    r: &super::picture::Frame,
    d: &super::picture::Frame,
    out: &mut RawFeatures,
    threads: usize,
) {
    if plan.ciede {
        match ciede::ciede(r, d) {
            Ok(v) => out.ciede = Some(v),
            Err(FrameError(e)) => out.error = Some(e),
        }
    }
    if plan.psnr_hvs {
        match psnr_hvs::psnr_hvs(r, d, threads) {
            Ok(v) => out.psnr_hvs = Some(v),
            Err(FrameError(e)) => out.error = Some(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            FeatureRef::from_name("VMAF_feature_adm2_score"),
            Some(FeatureRef::FloatAdm2)
        );
        assert_eq!(
            FeatureRef::from_name("VMAF_feature_vif_scale3_score"),
            Some(FeatureRef::FloatVif(3))
        );
        assert_eq!(
            FeatureRef::from_name("adm_scale1"),
            Some(FeatureRef::FloatAdmScale(1))
        );
        assert_eq!(FeatureRef::from_name("VMAF_feature_vif_scale4_score"), None);
    }
}
