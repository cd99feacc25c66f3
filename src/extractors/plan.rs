//! What to compute per frame and where each value goes: the [`Plan`]
//! derived from a model and the extractor registry, each extractor's
//! options resolved and its values given slots in a frame's
//! [`RawFeatures`](crate::core::RawFeatures).

use super::common::options::resolve;
use super::{self as extractors, Config, Extractor, Geometry, History, Temporal};
use crate::core::model::{Model, ModelSet, OptValue};
use crate::core::{ScaleMethod, Slots, VmafError};
use std::sync::Arc;

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
    pub scale: Option<ScaleMethod>,
    /// In the order the model lists them (libvmaf's registration order),
    /// then the extras, then the switched ones.
    pub(crate) extractors: Vec<Configured>,
    /// Model inputs, in `feature_names` order, as slots.
    pub inputs: Vec<usize>,
    /// Each companion model's inputs, likewise (`with_models`).
    pub companion_inputs: Vec<Vec<usize>>,
    slots: usize,
}

impl Plan {
    /// The model's features alone.
    pub fn new(models: &ModelSet) -> Result<Self, VmafError> {
        Self::with_features(models, &[])
    }

    /// The model's features plus `features`, extractors by libvmaf's name
    /// with options as libvmaf's `--feature` takes them
    /// (`extractors::parse_feature`): first those without a switch of their
    /// own, then those with one. An extractor with the options of one the
    /// plan has is computed once; with other options it is another
    /// instance, its outputs named with libvmaf's option suffix.
    pub fn with_features(models: &ModelSet, features: &[String]) -> Result<Self, VmafError> {
        Self::with_models(models, &[], features)
    }

    /// [`Plan::with_features`] with more models scored on the same frames
    /// (`companions`): their inputs in `companion_inputs`, each extractor
    /// with the same options computed once for all.
    pub fn with_models(
        models: &ModelSet,
        companions: &[&Model],
        features: &[String],
    ) -> Result<Self, VmafError> {
        let mut plan = Plan {
            scale: None,
            extractors: Vec::new(),
            inputs: Vec::new(),
            companion_inputs: Vec::new(),
            slots: 0,
        };
        check_bootstrap(models)?;
        plan.inputs = plan.add_model(&models.main)?;
        for m in companions {
            let inputs = plan.add_model(m)?;
            plan.companion_inputs.push(inputs);
        }
        let asked = features
            .iter()
            .map(|spec| extractors::parse_feature(spec).map_err(VmafError::Unsupported))
            .collect::<Result<Vec<_>, _>>()?;
        // The extras in the order given, then the switched ones, as the
        // element adds its switches after its `features`.
        for switched in [false, true] {
            for (kind, options) in asked
                .iter()
                .filter(|(k, _)| k.switch().is_some() == switched)
            {
                plan.add(*kind, options, kind.name())?;
            }
        }
        Ok(plan)
    }

    /// The extractors of model `m`'s features: its inputs, as slots.
    fn add_model(&mut self, m: &Model) -> Result<Vec<usize>, VmafError> {
        let mut inputs = Vec::with_capacity(m.features.len());
        for f in &m.features {
            let (kind, output) = extractors::provider_of(&f.name).ok_or_else(|| {
                VmafError::Unsupported(format!(
                    "model feature \"{}\" (supported: the features of libvmaf's {} extractors)",
                    f.name,
                    extractors::feature_names().join(", ")
                ))
            })?;
            let slots = self.add(kind, &f.options, &f.name)?;
            inputs.push(slots.at(output));
        }
        Ok(inputs)
    }

    /// `kind` with `options` (a model feature's or a requested one's;
    /// `name` for errors): its slots, new or those of the same extractor
    /// with the same options.
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
        // The same extractor with the same options is computed once.
        if let Some(c) = self.extractors.iter().find(|c| {
            c.kind.name() == kind.name() && format!("{:?}", c.config) == format!("{config:?}")
        }) {
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

    /// The stream-wide values, in plan order (`Config::aggregate`).
    pub(crate) fn aggregates(&self) -> Vec<Box<dyn extractors::Aggregate>> {
        self.extractors
            .iter()
            .filter_map(|c| c.config.aggregate(c.slots))
            .collect()
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
