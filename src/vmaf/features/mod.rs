//! What to compute per frame and where each value goes: the [`Plan`]
//! derived from a model and the extractor registry, the values a frame
//! collects by slot ([`RawFeatures`]), and the CPU twins that fill them.

use super::VmafError;
use super::model::{ModelSet, OptValue};
use crate::extractors::common::options::resolve;
use crate::extractors::{self, Config, CpuTwin, Extractor, Geometry, History, Slots, Temporal};
use std::sync::Arc;

pub use crate::extractors::common::FrameError;
pub use crate::extractors::common::options::fmt_g;

/// A frame's values, each in the slot the plan gave its name, before the
/// temporal stages and the model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawFeatures {
    pub index: u64,
    /// False for frames `subsample` skips: only the every-frame extractors
    /// ran.
    pub scored: bool,
    /// One per slot; None where no extractor wrote (libvmaf writes nothing).
    pub values: Vec<Option<f64>>,
    /// Why this frame has no scores; the engine turns it into an error.
    pub error: Option<String>,
}

impl RawFeatures {
    /// A frame with `slots` empty slots.
    pub fn new(index: u64, scored: bool, slots: usize) -> Self {
        RawFeatures {
            index,
            scored,
            values: vec![None; slots],
            error: None,
        }
    }

    pub fn set(&mut self, slot: usize, v: f64) {
        self.values[slot] = Some(v);
    }

    /// `values` into `slots`, in order.
    pub fn put(&mut self, slots: Slots, values: &[f64]) {
        for (i, &v) in values.iter().enumerate() {
            self.set(slots.at(i), v);
        }
    }

    pub fn get(&self, slot: usize) -> Option<f64> {
        self.values.get(slot).copied().flatten()
    }

    /// An extractor could not score this frame.
    pub fn fail(&mut self, e: FrameError) {
        self.error = Some(e.0);
    }

    /// Takes every value, and the error, `other` has (work on the same
    /// frame done apart).
    pub fn merge(&mut self, other: RawFeatures) {
        for (slot, v) in self.values.iter_mut().zip(other.values) {
            if v.is_some() {
                *slot = v;
            }
        }
        if other.error.is_some() {
            self.error = other.error;
        }
    }
}

/// One extractor of a plan, configured.
#[derive(Clone, Debug)]
pub(crate) struct Configured {
    pub kind: &'static dyn Extractor,
    pub config: Arc<dyn Config>,
    /// `_alias_value` for each non-default option that renames outputs.
    pub suffix: String,
    pub slots: Slots,
}

impl Configured {
    /// Its name in the registry's order (the GPU's launch order).
    pub fn launch_rank(&self) -> usize {
        extractors::REGISTRY
            .iter()
            .position(|e| e.name() == self.kind.name())
            .unwrap_or(usize::MAX)
    }
}

/// What to compute per frame, and how to name it.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Distorted pictures of another size than the reference are scaled to
    /// it with this kernel first (an encoding ladder's renditions); None
    /// refuses them.
    pub scale: Option<crate::vmaf::ScaleMethod>,
    /// In the order the model lists them (libvmaf's registration order),
    /// then the extras, then the switched ones.
    pub(crate) extractors: Vec<Configured>,
    /// Model inputs, in `feature_names` order, as slots.
    pub inputs: Vec<usize>,
    slots: usize,
}

impl Plan {
    pub fn new(
        models: &ModelSet,
        psnr: bool,
        ssim: bool,
        ms_ssim: bool,
    ) -> Result<Self, VmafError> {
        Self::with_features(models, psnr, ssim, ms_ssim, &[])
    }

    /// The model's features plus `extra` extractors with default options,
    /// as libvmaf's `--feature NAME`, then those the engine's switches add
    /// (`extractors::switches`).
    pub fn with_features(
        models: &ModelSet,
        psnr: bool,
        ssim: bool,
        ms_ssim: bool,
        extra: &[String],
    ) -> Result<Self, VmafError> {
        let mut plan = Plan {
            scale: None,
            extractors: Vec::new(),
            inputs: Vec::new(),
            slots: 0,
        };
        check_bootstrap(models)?;
        for f in &models.main.features {
            let (kind, output) = extractors::provider_of(&f.name).ok_or_else(|| {
                VmafError::Unsupported(format!(
                    "model feature \"{}\" (supported: the features of libvmaf's {} extractors)",
                    f.name,
                    extractors::REGISTRY
                        .iter()
                        .map(|e| e.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
            let slots = plan.add(kind, &f.options, &f.name)?;
            plan.inputs.push(slots.at(output));
        }
        for name in extra {
            let kind = extractors::by_name(name)
                .filter(|e| e.extra())
                .ok_or_else(|| {
                    VmafError::Unsupported(format!(
                        "feature \"{name}\" (extra features: {})",
                        extractors::extra_names().join(", ")
                    ))
                })?;
            plan.add_once(kind, name)?;
        }
        for (on, kind) in [psnr, ssim, ms_ssim]
            .into_iter()
            .zip(extractors::switches())
        {
            if on {
                plan.add_once(kind, kind.name())?;
            }
        }
        Ok(plan)
    }

    /// `kind` with its default options, unless the plan has it already.
    fn add_once(&mut self, kind: &'static dyn Extractor, name: &str) -> Result<(), VmafError> {
        if !self.extractors.iter().any(|c| c.kind.name() == kind.name()) {
            self.add(kind, &[], name)?;
        }
        Ok(())
    }

    /// `kind` with `options` (a model feature's; `name` for errors): its
    /// slots, new or those of the same extractor with the same options.
    fn add(
        &mut self,
        kind: &'static dyn Extractor,
        options: &[(String, OptValue)],
        name: &str,
    ) -> Result<Slots, VmafError> {
        let resolved = resolve(kind.options(), options, name)?;
        let config = kind
            .configure(&resolved)
            .map_err(|e| VmafError::Unsupported(format!("{name}: {e}")))?;
        if let Some(c) = self
            .extractors
            .iter_mut()
            .find(|c| c.kind.name() == kind.name())
        {
            if format!("{:?}", c.config) != format!("{config:?}") {
                return Err(VmafError::Unsupported(format!(
                    "{name}: two different option sets for one extractor"
                )));
            }
            c.suffix = resolved.suffix;
            return Ok(c.slots);
        }
        let slots = Slots {
            base: self.slots,
            len: config.outputs(),
        };
        self.slots += slots.len;
        self.extractors.push(Configured {
            kind,
            config: Arc::from(config),
            suffix: resolved.suffix,
            slots,
        });
        Ok(slots)
    }

    /// Slots in a frame's values.
    pub fn slot_count(&self) -> usize {
        self.slots
    }

    /// Whether an extractor of this plan reads the chroma planes; the
    /// others read luma only.
    pub fn reads_chroma(&self) -> bool {
        self.extractors.iter().any(|c| c.config.reads_chroma())
    }

    /// The pictures before each frame the extractors read.
    pub fn history(&self) -> History {
        self.extractors
            .iter()
            .fold(History::default(), |h, c| h.max(c.config.history()))
    }

    /// Whether an extractor's frames take longer on the GPU.
    pub fn slow_on_gpu(&self) -> bool {
        self.extractors.iter().any(|c| c.config.slow_on_gpu())
    }

    /// Refuses a stream an extractor cannot score.
    pub fn check(&self, g: &Geometry) -> Result<(), VmafError> {
        self.extractors.iter().try_for_each(|c| c.config.check(g))
    }

    /// The temporal stages, in plan order.
    pub(crate) fn temporals(&self) -> Vec<Box<dyn Temporal>> {
        self.extractors
            .iter()
            .filter_map(|c| c.config.temporal(c.slots))
            .collect()
    }

    /// Output metrics in libvmaf's (single-threaded) collector order: the
    /// name libvmaf prints and the slot its value is in.
    pub fn metrics(&self, chroma: bool) -> Vec<(String, usize)> {
        let named = |deferred: bool| {
            self.extractors.iter().flat_map(move |c| {
                c.config
                    .names(chroma)
                    .into_iter()
                    .filter(move |o| o.deferred == deferred)
                    .map(move |o| (format!("{}{}", o.name, c.suffix), c.slots.at(o.index)))
            })
        };
        named(false).chain(named(true)).collect()
    }
}

/// Every member of a bootstrap collection must use the main model's
/// features, with the same options.
fn check_bootstrap(models: &ModelSet) -> Result<(), VmafError> {
    let main = &models.main;
    for m in &models.bootstrap {
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
    Ok(())
}

/// One worker's CPU twins with their scratch memory.
pub struct CpuExtractor {
    slots: usize,
    /// Each twin, and whether it runs on unscored frames too.
    twins: Vec<(Box<dyn CpuTwin>, bool)>,
}

impl CpuExtractor {
    /// The plan's CPU twins; `threads` each may use within one frame.
    pub fn new(plan: &Plan, threads: usize) -> Self {
        Self::of(plan.slot_count(), plan.extractors.iter(), threads)
    }

    /// The CPU twins of `extractors` alone (those the GPU left to the
    /// host), writing into frames of `slots` slots.
    pub(crate) fn of<'a>(
        slots: usize,
        extractors: impl Iterator<Item = &'a Configured>,
        threads: usize,
    ) -> Self {
        let twins = extractors
            .map(|c| (c.config.cpu(c.slots, threads), c.config.every_frame()))
            .collect();
        CpuExtractor { slots, twins }
    }

    /// Everything for one frame pair.
    pub fn extract(&mut self, job: &super::FrameJob) -> RawFeatures {
        let mut out = RawFeatures::new(job.index, job.scored, self.slots);
        for (twin, every_frame) in &mut self.twins {
            if job.scored || *every_frame {
                twin.extract(job, &mut out);
            }
        }
        out
    }
}
