//! From per-frame features to per-frame scores: the extractors' temporal
//! stages, the model,
//! bootstrap statistics, and pooling.

use crate::core::model::{self, Model, ModelFlags, ModelSet};
use crate::core::{
    Engine, FailoverNote, FeatureBackend, FrameInput, FramePair, FrameScores, InputCounts,
    MIN_SIZE, PixelFormat, Pooled, PooledScores, RawFeatures, ScaleMethod, VmafError,
};
use crate::cpu::CpuBackend;
use crate::extractors::Temporal;
use crate::extractors::plan::Plan;
use std::sync::Arc;

/// What to compute.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub models: ModelSet,
    pub flags: ModelFlags,
    /// Worker threads for the CPU backend; 0 = all cores.
    pub threads: usize,
    /// Score every Nth frame (libvmaf's `n_subsample`); 1 = every frame.
    pub subsample: u32,
    /// Extractors with default options besides the model's, by name, as
    /// libvmaf's `--feature` (`extractors::feature_names`).
    pub features: Vec<String>,
    /// Scale distorted pictures of another size than the reference to it
    /// with this kernel (`core::scale`); None refuses them.
    pub scale: Option<ScaleMethod>,
    /// More models scored on the same frames, each under its own name
    /// with its own flags (libvmaf's several models per context): their
    /// features computed once with the others'.
    pub companions: Vec<(Model, ModelFlags)>,
}

impl EngineConfig {
    /// What the extractors compute for this configuration.
    pub fn plan(&self) -> Result<Plan, VmafError> {
        let companions: Vec<&Model> = self.companions.iter().map(|(m, _)| m).collect();
        let mut plan = Plan::with_models(&self.models, &companions, &self.features)?;
        plan.scale = self.scale;
        Ok(plan)
    }

    pub fn new(models: ModelSet) -> Self {
        Self {
            models,
            flags: ModelFlags::default(),
            threads: 1,
            subsample: 1,
            features: Vec::new(),
            scale: None,
            companions: Vec::new(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Geometry {
    width: usize,
    height: usize,
    format: PixelFormat,
    bpc: u8,
}

/// The streaming engine over any feature backend.
pub struct Scorer<B: FeatureBackend> {
    backend: B,
    plan: Plan,
    models: ModelSet,
    flags: ModelFlags,
    companions: Vec<(Model, ModelFlags)>,
    subsample: u64,
    names: Arc<[String]>,
    /// Slots of the metrics before the model outputs in `names`.
    sources: Vec<usize>,
    geometry: Option<Geometry>,
    next_index: u64,
    /// Frames waiting for a later frame's values (at most the temporal
    /// stages' stamp index + 1).
    pending: std::collections::VecDeque<RawFeatures>,
    /// The extractors' stages after the backend, in frame order.
    temporals: Vec<Box<dyn Temporal>>,
    aggregates: Vec<Box<dyn crate::extractors::Aggregate>>,
    pooled: Vec<Pooled>,
    frames_scored: u64,
}

impl Scorer<CpuBackend> {
    /// The CPU engine.
    pub fn cpu(config: &EngineConfig) -> Result<Self, VmafError> {
        let plan = config.plan()?;
        let backend = CpuBackend::new(plan, config.threads);
        Self::with_backend(config, backend)
    }
}

impl<B: FeatureBackend> Scorer<B> {
    pub fn with_backend(config: &EngineConfig, backend: B) -> Result<Self, VmafError> {
        let plan = config.plan()?;
        if config.subsample == 0 {
            return Err(VmafError::Unsupported(
                "subsample 0 (use 1 to score every frame)".into(),
            ));
        }
        Ok(Self {
            backend,
            temporals: plan.temporals(),
            aggregates: plan.aggregates(),
            plan,
            models: config.models.clone(),
            flags: config.flags,
            companions: config.companions.clone(),
            subsample: u64::from(config.subsample),
            names: Arc::from(Vec::new()),
            sources: Vec::new(),
            geometry: None,
            next_index: 0,
            pending: Default::default(),
            pooled: Vec::new(),
            frames_scored: 0,
        })
    }

    /// The feature backend, e.g. to profile a GPU backend.
    pub fn backend_mut(&mut self) -> &mut B {
        &mut self.backend
    }

    fn set_geometry(&mut self, g: Geometry) -> Result<(), VmafError> {
        if let Some(old) = self.geometry {
            if old != g {
                return Err(VmafError::Mismatch(format!(
                    "stream changed from {}x{} {:?} {}-bit to {}x{} {:?} {}-bit; reset the engine first",
                    old.width, old.height, old.format, old.bpc, g.width, g.height, g.format, g.bpc
                )));
            }
            return Ok(());
        }
        if g.width < MIN_SIZE || g.height < MIN_SIZE {
            return Err(VmafError::TooSmall(format!(
                "{}x{}: VMAF needs at least {MIN_SIZE}x{MIN_SIZE} luma samples",
                g.width, g.height
            )));
        }
        self.plan.check(&crate::extractors::Geometry {
            width: g.width,
            height: g.height,
            format: g.format,
            bpc: g.bpc,
        })?;
        let (mut names, sources): (Vec<String>, Vec<usize>) = self
            .plan
            .metrics(g.format != PixelFormat::Gray)
            .into_iter()
            .unzip();
        self.sources = sources;
        names.push(self.models.main.name.clone());
        if !self.models.bootstrap.is_empty() {
            names.extend(self.models.bootstrap.iter().map(|m| m.name.clone()));
            let base = &self.models.main.name;
            names.extend(
                ["bagging", "stddev", "ci_p95_lo", "ci_p95_hi"].map(|s| format!("{base}_{s}")),
            );
        }
        names.extend(self.companions.iter().map(|(m, _)| m.name.clone()));
        self.pooled = vec![Pooled::default(); names.len()];
        self.names = Arc::from(names);
        self.geometry = Some(g);
        Ok(())
    }

    /// A frame's scores from its finished values: None for frames
    /// `subsample` skips.
    fn finalize(&mut self, raw: RawFeatures) -> Option<FrameScores> {
        if !raw.scored {
            return None;
        }
        for a in &mut self.aggregates {
            a.push(&raw);
        }
        let mut values: Vec<Option<f64>> = Vec::with_capacity(self.names.len());
        values.extend(self.sources.iter().map(|&s| raw.get(s)));
        let inputs: Vec<f64> = self
            .plan
            .inputs
            .iter()
            .map(|&s| raw.get(s).unwrap_or(f64::NAN))
            .collect();
        values.push(Some(self.models.main.predict(&inputs, self.flags, false)));
        if !self.models.bootstrap.is_empty() {
            for m in &self.models.bootstrap {
                values.push(Some(m.predict(&inputs, self.flags, false)));
            }
            let b = model::bootstrap(&self.models.bootstrap, &inputs, self.flags);
            values.extend([b.bagging, b.stddev, b.ci_lo, b.ci_hi].map(Some));
        }
        for ((m, flags), slots) in self.companions.iter().zip(&self.plan.companion_inputs) {
            let inputs: Vec<f64> = slots
                .iter()
                .map(|&s| raw.get(s).unwrap_or(f64::NAN))
                .collect();
            values.push(Some(m.predict(&inputs, *flags, false)));
        }
        for (pool, v) in self.pooled.iter_mut().zip(&values) {
            if let Some(v) = v {
                pool.push(*v);
            }
        }
        self.frames_scored += 1;
        Some(FrameScores {
            index: raw.index,
            names: self.names.clone(),
            values,
        })
    }

    /// Finish every frame whose temporal stages have what they need: the
    /// next frame's values, and for the frames before a stage's stamp that
    /// frame's. At the end of the stream (`end`) everything left is
    /// finished.
    fn absorb(&mut self, raws: Vec<RawFeatures>, end: bool) -> Vec<FrameScores> {
        let mut out = Vec::new();
        if self.temporals.is_empty() {
            for raw in raws {
                out.extend(self.finalize(raw));
            }
            return out;
        }
        for raw in raws {
            for t in &mut self.temporals {
                if raw.index == t.stamp_index() {
                    t.stamp(&raw);
                }
            }
            self.pending.push_back(raw);
        }
        while let Some(front) = self.pending.front() {
            let stamps_known = self
                .temporals
                .iter()
                .all(|t| front.index >= t.stamp_index() || t.stamped());
            if !end && (self.pending.len() < 2 || !stamps_known) {
                break;
            }
            let mut raw = self.pending.pop_front().expect("front exists");
            let next = self.pending.front();
            for t in &mut self.temporals {
                t.finish(&mut raw, next);
            }
            out.extend(self.finalize(raw));
        }
        out
    }
}

/// A frame an extractor could not score ends the stream with its reason.
fn check_frames(raws: Vec<RawFeatures>) -> Result<Vec<RawFeatures>, VmafError> {
    if let Some((i, e)) = raws
        .iter()
        .find_map(|r| r.error.as_ref().map(|e| (r.index, e)))
    {
        return Err(VmafError::InvalidPicture(format!("frame {i}: {e}")));
    }
    Ok(raws)
}

impl<B: FeatureBackend> Engine for Scorer<B> {
    fn describe(&self) -> String {
        self.backend.describe()
    }

    fn push(&mut self, pair: FramePair<'_>) -> Result<Vec<FrameScores>, VmafError> {
        let FramePair {
            reference,
            distorted,
            keep,
            replay,
            reference_id,
        } = pair;
        let g = Geometry {
            width: reference.width,
            height: reference.height,
            format: reference.format,
            bpc: reference.bpc,
        };
        let gd = Geometry {
            width: distorted.width,
            height: distorted.height,
            format: distorted.format,
            bpc: distorted.bpc,
        };
        let scaled = self.plan.scale.is_some()
            && (g.format, g.bpc) == (gd.format, gd.bpc)
            && gd.width > 0
            && gd.height > 0;
        if g != gd && !scaled {
            return Err(VmafError::Mismatch(format!(
                "reference is {}x{} {:?} {}-bit but distorted is {}x{} {:?} {}-bit",
                g.width, g.height, g.format, g.bpc, gd.width, gd.height, gd.format, gd.bpc
            )));
        }
        if (reference.on_device() || distorted.on_device()) && !self.backend.reads_device_memory() {
            return Err(VmafError::InvalidPicture(format!(
                "a picture in GPU memory was given to {}, which reads host memory",
                self.backend.describe()
            )));
        }
        self.set_geometry(g)?;
        let index = self.next_index;
        self.next_index += 1;
        self.backend.submit(FrameInput {
            index,
            scored: index.is_multiple_of(self.subsample),
            reference,
            distorted,
            keep,
            replay,
            reference_id,
        })?;
        let raws = check_frames(self.backend.collect(false)?)?;
        Ok(self.absorb(raws, false))
    }

    fn flush(&mut self) -> Result<Vec<FrameScores>, VmafError> {
        let raws = check_frames(self.backend.flush()?)?;
        let out = self.absorb(raws, true);
        self.temporals = self.plan.temporals();
        Ok(out)
    }

    fn pooled(&self) -> PooledScores {
        PooledScores {
            names: self.names.clone(),
            stats: self.pooled.clone(),
            frames: self.frames_scored,
            aggregates: self.aggregates.iter().flat_map(|a| a.values()).collect(),
        }
    }

    fn reset(&mut self) -> Result<(), VmafError> {
        self.backend.reset()?;
        self.next_index = 0;
        self.pending.clear();
        self.temporals = self.plan.temporals();
        self.aggregates = self.plan.aggregates();
        self.pooled.iter_mut().for_each(|p| *p = Pooled::default());
        self.frames_scored = 0;
        self.geometry = None;
        Ok(())
    }

    fn reads_device_memory(&self) -> bool {
        self.backend.reads_device_memory()
    }

    fn input_counts(&self) -> InputCounts {
        self.backend.input_counts()
    }

    fn failover(&self) -> &[FailoverNote] {
        self.backend.failover()
    }
}
