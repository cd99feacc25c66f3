//! VMAF's extractors, one folder each: its descriptor (`mod.rs`: name,
//! options, the values it provides), its CPU twin (`cpu.rs`, the reference,
//! bit-exact with libvmaf), its GPU twin (`gpu.rs`, the same numbers through
//! HIP) and its kernels (`*.hip`). What several share is in [`common`].
//!
//! `REGISTRY` is the one list that names every extractor. The plan, the
//! scorer, both backends, the element's and the command's texts and the
//! kernel list are derived from it; values travel by slot, resolved from
//! libvmaf's names once per plan.
//!
//! No `unsafe` here but in the hand-written SIMD an extractor keeps beside its
//! portable loops (`simd.rs`, `recip.rs`: vector loads and stores, and calls
//! of the copy the CPU can run), each allowed where it is declared.

#![deny(unsafe_code)]

pub mod common;
pub mod model_spec;
pub mod plan;

pub mod adm;
pub mod cambi;
pub mod ciede;
pub mod float_adm;
pub mod float_ansnr;
pub mod float_moment;
pub mod float_motion;
pub mod float_psnr;
pub mod float_vif;
pub mod motion;
pub mod null;
pub mod psnr;
pub mod psnr_hvs;
pub mod speed;
pub mod ssim;
pub mod vif;

pub use crate::core::Slots;
use crate::core::model::OptValue;
use crate::core::{FrameJob, PixelFormat, RawFeatures, VmafError};
use crate::hip::HipError;
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};
use common::options::{OptSpec, Resolved};
use std::fmt;

/// Every extractor, in the order the GPU queues their work.
pub(crate) static REGISTRY: &[&dyn Extractor] = &[
    &motion::MOTION,
    &vif::VIF,
    &adm::ADM,
    &psnr::PSNR,
    &cambi::CAMBI,
    &speed::SPEED_CHROMA,
    &float_motion::FLOAT_MOTION,
    &float_vif::FLOAT_VIF,
    &float_adm::FLOAT_ADM,
    &float_psnr::FLOAT_PSNR,
    &float_moment::FLOAT_MOMENT,
    &float_ansnr::FLOAT_ANSNR,
    &ciede::CIEDE,
    &psnr_hvs::PSNR_HVS,
    &ssim::FLOAT_SSIM,
    &ssim::FLOAT_MS_SSIM,
    &speed::SPEED_TEMPORAL,
    &null::NULL,
];

/// An extractor's switch of its own: the element's boolean property (and
/// the command's `--feature NAME`) that adds it, and the value its messages
/// carry.
#[derive(Debug)]
pub struct Switch {
    /// The property: GStreamer 1.28's `vmaf` name.
    pub property: &'static str,
    pub nick: &'static str,
    pub blurb: &'static str,
    /// The value the messages carry (libvmaf's name), and their field for it.
    pub value: &'static str,
    pub field: &'static str,
}

/// Every extractor with a switch of its own, in the registry's order.
pub fn switched() -> impl Iterator<Item = (&'static str, &'static Switch)> {
    REGISTRY
        .iter()
        .filter_map(|e| e.switch().map(|s| (e.name(), s)))
}

/// The extractor named `name` (libvmaf's `VmafFeatureExtractor.name`).
pub(crate) fn by_name(name: &str) -> Option<&'static dyn Extractor> {
    REGISTRY.iter().copied().find(|e| e.name() == name)
}

/// An extractor and the options it was asked for with.
pub(crate) type Requested = (&'static dyn Extractor, Vec<(String, OptValue)>);

/// An extractor asked for by libvmaf's name with options, as libvmaf's
/// `vmaf` tool takes it (`--feature NAME=OPT=VAL:OPT=VAL`) or as
/// `NAME:OPT=VAL:…`: the extractor and its options as given, each option
/// checked against the extractor's table (name or alias, type, range).
pub(crate) fn parse_feature(spec: &str) -> Result<Requested, String> {
    let spec = spec.trim();
    let (name, rest) = match spec.find(['=', ':']) {
        Some(i) => (&spec[..i], &spec[i + 1..]),
        None => (spec, ""),
    };
    let kind = by_name(name).ok_or_else(|| {
        format!(
            "no feature \"{name}\" (libvmaf's extractors: {})",
            feature_names().join(", ")
        )
    })?;
    let mut options = Vec::new();
    for pair in rest.split(':').filter(|p| !p.is_empty()) {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| format!("feature \"{spec}\": \"{pair}\" is not OPTION=VALUE"))?;
        options.push((k.trim().to_string(), OptValue::Str(v.trim().to_string())));
    }
    let resolved =
        common::options::resolve(kind.options(), &options, name).map_err(|e| match e {
            VmafError::Unsupported(why) => why,
            other => other.to_string(),
        })?;
    // Options vmafhip does not serve are refused here, where they are asked for.
    kind.configure(&resolved)
        .map_err(|why| format!("{name}: {why}"))?;
    Ok((kind, options))
}

/// Whether `spec` names an extractor with valid options ([`parse_feature`]),
/// and why not: what a front end checks its features with.
pub fn check_feature(spec: &str) -> Result<(), String> {
    parse_feature(spec).map(|_| ())
}

/// The spec of extractor `name` with `options` (libvmaf's dictionary of a
/// `vmaf_use_feature` call): `NAME=OPT=VAL:OPT=VAL`, as [`parse_feature`]
/// reads it.
pub fn feature_spec(name: &str, options: &[(String, String)]) -> String {
    let opts: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if opts.is_empty() {
        name.to_string()
    } else {
        format!("{name}={}", opts.join(":"))
    }
}

/// Every extractor by libvmaf's name, in the registry's order: what the
/// command's `--feature`, the element's `features` and libvmaf's
/// `vmaf_use_feature` take ([`parse_feature`]).
pub fn feature_names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.name()).collect()
}

/// The extractor that provides a model's raw feature `name` (libvmaf's
/// names, `VMAF_integer_feature_adm2_score`, and their short forms,
/// `integer_adm2`), and which of its outputs it is.
pub(crate) fn provider_of(name: &str) -> Option<(&'static dyn Extractor, usize)> {
    let short = |prefix: &str, keep: &str| {
        name.strip_prefix(prefix)
            .and_then(|s| s.strip_suffix("_score"))
            .map(|s| format!("{keep}{s}"))
    };
    let forms = [
        Some(name.to_string()),
        short("VMAF_integer_feature_", "integer_"),
        short("VMAF_feature_", ""),
    ];
    forms.iter().flatten().find_map(|n| {
        REGISTRY.iter().find_map(|e| {
            e.provides()
                .iter()
                .find(|(p, _)| p == n)
                .map(|&(_, i)| (*e, i))
        })
    })
}

/// Every kernel file, once: each extractor's, in registry order.
pub(crate) fn kernel_sets() -> Vec<&'static KernelSet> {
    let mut sets: Vec<&'static KernelSet> = Vec::new();
    for set in REGISTRY.iter().flat_map(|e| e.kernels()) {
        if !sets.iter().any(|s| s.is(set)) {
            sets.push(set);
        }
    }
    sets
}

/// An extractor as the registry lists it: what it is called, what it
/// takes, what it gives.
pub(crate) trait Extractor: Sync {
    /// libvmaf's name (`adm`, `float_vif`, `cambi`).
    fn name(&self) -> &'static str;
    /// The switch of its own that adds it (the element's `psnr`, `ssim`,
    /// `ms-ssim`, GStreamer's `vmaf` names; the command's `--feature psnr`).
    fn switch(&self) -> Option<&'static Switch> {
        None
    }
    /// Its option table (libvmaf's `VmafOption` array).
    fn options(&self) -> &'static [OptSpec];
    /// Every raw name a model may ask for, aliases included, with the
    /// output it reads.
    fn provides(&self) -> &'static [(&'static str, usize)];
    /// Its configuration for these options, checked as libvmaf checks them.
    fn configure(&self, options: &Resolved) -> Result<Box<dyn Config>, String>;
    /// The kernel files its GPU twin runs.
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[]
    }
}

impl fmt::Debug for dyn Extractor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One name an extractor reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// Which of its slots.
    pub index: usize,
    /// libvmaf's name, before the options suffix.
    pub name: &'static str,
    /// Reported after every other name: what temporal extractors give
    /// frame 0 only once frame 1 is in, where libvmaf's collector meets it.
    pub deferred: bool,
}

impl Output {
    pub const fn now(index: usize, name: &'static str) -> Self {
        Output {
            index,
            name,
            deferred: false,
        }
    }
    pub const fn later(index: usize, name: &'static str) -> Self {
        Output {
            index,
            name,
            deferred: true,
        }
    }
}

/// The pictures before this one an extractor reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct History {
    /// Reference pictures back: 0, 1 or 2.
    pub reference: usize,
    /// Whether it reads the distorted picture before.
    pub distorted: bool,
}

impl History {
    /// What both read.
    pub fn max(self, o: History) -> History {
        History {
            reference: self.reference.max(o.reference),
            distorted: self.distorted || o.distorted,
        }
    }
}

/// A stream's pictures as an extractor checks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub width: usize,
    pub height: usize,
    pub format: PixelFormat,
    pub bpc: u8,
}

/// One extractor with its options: what the plan holds, and what makes
/// its twins.
pub(crate) trait Config: Send + Sync + fmt::Debug {
    /// Its outputs (slots in a frame's values).
    fn outputs(&self) -> usize;
    /// The names it reports, in libvmaf's order; `chroma`: the stream has
    /// chroma planes.
    fn names(&self, chroma: bool) -> Vec<Output>;
    /// Whether it reads the chroma planes.
    fn reads_chroma(&self) -> bool {
        false
    }
    /// Whether it also runs on the frames `subsample` leaves unscored.
    fn every_frame(&self) -> bool {
        false
    }
    /// The pictures before this one it reads.
    fn history(&self) -> History {
        History::default()
    }
    /// Whether its frames take longer on the GPU (read-backs that wait, a
    /// sum in order): the GPU engine then keeps a frame more in flight.
    fn slow_on_gpu(&self) -> bool {
        false
    }
    /// Refuses a stream it cannot score, before the first frame.
    fn check(&self, _g: &Geometry) -> Result<(), VmafError> {
        Ok(())
    }
    /// Its CPU twin, writing into `slots`; `threads` it may use per frame.
    fn cpu(&self, slots: Slots, threads: usize) -> Box<dyn CpuTwin>;
    /// Its GPU twin for the stream, or None where it has none or its
    /// kernels do not take the stream (the CPU twin then runs beside the
    /// GPU work, and gives libvmaf's numbers or error).
    fn gpu(
        &self,
        _slots: Slots,
        _setup: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        Ok(None)
    }
    /// Its stage after the backend, in frame order, where it needs the
    /// next frame's values (motion's minimum of two SADs).
    fn temporal(&self, _slots: Slots) -> Option<Box<dyn Temporal>> {
        None
    }
    /// What it computes once over the whole stream from every scored
    /// frame's values (libvmaf's `aggregate_metrics`), if anything.
    fn aggregate(&self, _slots: Slots) -> Option<Box<dyn Aggregate>> {
        None
    }
}

/// Values over the whole stream, folded from each scored frame's values
/// (`Config::aggregate`): libvmaf's `vmaf_feature_collector_set_aggregate`.
pub trait Aggregate: Send {
    /// One scored frame's values.
    fn push(&mut self, raw: &RawFeatures);
    /// The values so far, by name, in libvmaf's order.
    fn values(&self) -> Vec<(String, f64)>;
}

/// Why a GPU twin could not be made.
#[derive(Debug)]
pub(crate) enum GpuRefusal {
    Hip(HipError),
    Engine(VmafError),
}

impl From<HipError> for GpuRefusal {
    fn from(e: HipError) -> Self {
        GpuRefusal::Hip(e)
    }
}

impl From<VmafError> for GpuRefusal {
    fn from(e: VmafError) -> Self {
        GpuRefusal::Engine(e)
    }
}

/// An extractor's CPU twin: one per worker thread, with its scratch.
pub(crate) trait CpuTwin: Send {
    /// Its values for one frame pair, into its slots of `out` (or
    /// `out.error`).
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures);
}

/// An extractor's stage after the backend, run on the host in frame order.
pub(crate) trait Temporal: Send {
    /// The frame whose values the frames before it need (motion's
    /// `min_index`).
    fn stamp_index(&self) -> u64;
    /// Keeps what it needs of frame [`Temporal::stamp_index`].
    fn stamp(&mut self, frame: &RawFeatures);
    /// Whether [`Temporal::stamp`] was given its frame.
    fn stamped(&self) -> bool;
    /// Finishes `frame`'s values, given the next frame's (None at the end).
    fn finish(&mut self, frame: &mut RawFeatures, next: Option<&RawFeatures>);
}

/// Options of an extractor without options that change numbers.
pub const NO_OPTIONS: &[OptSpec] = &[OptSpec::boolean("debug", "debug").not_param()];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extractors::plan::Plan;
    use crate::vmaf::ModelSet;

    #[test]
    fn feature_names_resolve() {
        let name = |n: &str| provider_of(n).map(|(e, i)| (e.name(), i));
        assert_eq!(
            name("VMAF_integer_feature_vif_scale2_score"),
            Some(("vif", 2))
        );
        assert_eq!(name("integer_adm2"), Some(("adm", 0)));
        assert_eq!(name("VMAF_feature_adm2_score"), Some(("float_adm", 0)));
        assert_eq!(
            name("VMAF_feature_vif_scale3_score"),
            Some(("float_vif", 3))
        );
        assert_eq!(name("adm_scale1"), Some(("float_adm", 4)));
        assert_eq!(name("VMAF_feature_vif_scale4_score"), None);
    }

    #[test]
    fn every_provided_name_is_unique() {
        let mut seen = std::collections::HashMap::new();
        for e in REGISTRY {
            assert_eq!(
                REGISTRY.iter().filter(|o| o.name() == e.name()).count(),
                1,
                "{} is registered twice",
                e.name()
            );
            for (n, _) in e.provides() {
                if let Some(other) = seen.insert(*n, e.name()) {
                    panic!("{n} is provided by {other} and {}", e.name());
                }
            }
        }
    }

    /// The extractors with switches of their own, by name.
    fn switched() -> Vec<String> {
        REGISTRY
            .iter()
            .filter(|e| e.switch().is_some())
            .map(|e| e.name().to_string())
            .collect()
    }

    #[test]
    fn every_built_in_models_features_resolve() {
        for name in crate::core::model::built_in_names() {
            let models = ModelSet::load(name).unwrap();
            let plan =
                Plan::with_features(&models, &switched()).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(plan.inputs.len(), models.main.features.len(), "{name}");
        }
    }
}
