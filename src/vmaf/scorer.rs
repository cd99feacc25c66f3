//! From per-frame features to per-frame scores: the motion lag, the model,
//! bootstrap statistics, and pooling.

use super::features::{FeatureRef, MetricSource, Plan, RawFeatures};
use super::model::{self, ModelFlags, ModelSet};
use super::pool::Pooled;
use super::{
    CpuBackend, Engine, FeatureBackend, FrameInput, InputCounts, KeepAlive, MIN_SIZE, Picture,
    PixelFormat, VmafError,
};
use crate::extractors::motion::cpu as motion;
use std::sync::Arc;

/// What to compute.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub models: ModelSet,
    pub flags: ModelFlags,
    pub psnr: bool,
    pub ssim: bool,
    pub ms_ssim: bool,
    /// Worker threads for the CPU backend; 0 = all cores.
    pub threads: usize,
    /// Score every Nth frame (libvmaf's `n_subsample`); 1 = every frame.
    pub subsample: u32,
    /// Extra extractors with default options, as libvmaf's `--feature`
    /// (`cambi`, `speed_chroma`).
    pub features: Vec<String>,
    /// Scale distorted pictures of another size than the reference to it
    /// with this kernel (`vmaf::scale`); None refuses them.
    pub scale: Option<super::ScaleMethod>,
}

impl EngineConfig {
    /// What the extractors compute for this configuration.
    pub fn plan(&self) -> Result<Plan, VmafError> {
        let mut plan = Plan::with_features(
            &self.models,
            self.psnr,
            self.ssim,
            self.ms_ssim,
            &self.features,
        )?;
        plan.scale = self.scale;
        Ok(plan)
    }

    pub fn new(models: ModelSet) -> Self {
        Self {
            models,
            flags: ModelFlags::default(),
            psnr: false,
            ssim: false,
            ms_ssim: false,
            threads: 1,
            subsample: 1,
            features: Vec::new(),
            scale: None,
        }
    }
}

/// Scores of one frame. `names` is shared by every frame of a stream and
/// lists libvmaf's output keys in libvmaf's order; `values[i]` is `None`
/// where libvmaf writes nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameScores {
    pub index: u64,
    pub names: Arc<[String]>,
    pub values: Vec<Option<f64>>,
}

impl FrameScores {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.names
            .iter()
            .position(|n| n == name)
            .and_then(|i| self.values[i])
    }
    /// The main model's score (`vmaf`).
    pub fn vmaf(&self) -> f64 {
        self.get("vmaf").unwrap_or(f64::NAN)
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.names
            .iter()
            .zip(&self.values)
            .filter_map(|(n, v)| v.map(|v| (n.as_str(), v)))
    }
}

/// Pooled statistics per metric over the frames finalised so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PooledScores {
    pub names: Arc<[String]>,
    pub stats: Vec<Pooled>,
    pub frames: u64,
}

impl PooledScores {
    pub fn get(&self, name: &str) -> Option<&Pooled> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| &self.stats[i])
            .filter(|p| p.count > 0)
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Pooled)> {
        self.names
            .iter()
            .zip(&self.stats)
            .filter(|(_, p)| p.count > 0)
            .map(|(n, p)| (n.as_str(), p))
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
    subsample: u64,
    names: Arc<[String]>,
    /// Sources of the metrics before the model outputs in `names`.
    sources: Vec<MetricSource>,
    geometry: Option<Geometry>,
    next_index: u64,
    /// Frames waiting for later motion scores (at most min_index + 1).
    pending: std::collections::VecDeque<RawFeatures>,
    motion: motion::Temporal,
    /// sad[min_index], once that frame arrived (motion3 of the first frames).
    motion_stamp: Option<f64>,
    /// float_motion's temporal state and its score of frame 1.
    float_motion: motion::Temporal,
    float_motion_stamp: Option<f64>,
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
            plan,
            models: config.models.clone(),
            flags: config.flags,
            subsample: u64::from(config.subsample),
            names: Arc::from(Vec::new()),
            sources: Vec::new(),
            geometry: None,
            next_index: 0,
            pending: Default::default(),
            motion: Default::default(),
            motion_stamp: None,
            float_motion: Default::default(),
            float_motion_stamp: None,
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
        if self.plan.ms_ssim {
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
        }
        if let Some(c) = &self.plan.cambi {
            c.setup(g.width as u32, g.height as u32, u32::from(g.bpc))
                .map_err(VmafError::TooSmall)?;
        }
        if let Some(sp) = &self.plan.speed_chroma {
            let (cw, ch) = g.format.chroma_size(g.width, g.height).ok_or_else(|| {
                VmafError::Unsupported("speed_chroma needs chroma planes (input is GRAY)".into())
            })?;
            sp.dims(cw, ch).map_err(VmafError::TooSmall)?;
        }
        if let Some((sp, _)) = &self.plan.speed_temporal {
            sp.dims(g.width, g.height).map_err(VmafError::TooSmall)?;
        }
        let (mut names, sources): (Vec<String>, Vec<MetricSource>) = self
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
        self.pooled = vec![Pooled::default(); names.len()];
        self.names = Arc::from(names);
        self.geometry = Some(g);
        Ok(())
    }

    fn finalize(&mut self, raw: RawFeatures, next: [Option<f64>; 2]) -> Option<FrameScores> {
        let mut motion23 = None;
        if let (Some(mp), Some(sad)) = (&self.plan.motion, raw.motion_sad) {
            motion23 = Some(
                self.motion
                    .next(raw.index, sad, next[0], self.motion_stamp, mp),
            );
        }
        let mut float23 = None;
        if let (Some(fp), Some(score)) = (&self.plan.float_motion, raw.float_motion) {
            let (m2, m3) = self.float_motion.next(
                raw.index,
                score,
                next[1],
                self.float_motion_stamp,
                &fp.temporal,
            );
            float23 = Some((fp.cap(m2), m3));
        }
        if !raw.scored {
            return None;
        }
        let mut values: Vec<Option<f64>> = Vec::with_capacity(self.names.len());
        let p = &self.plan;
        let adm = raw.adm;
        let vif = raw.vif;
        let feature = |r: FeatureRef| -> Option<f64> {
            match r {
                FeatureRef::Adm2 => adm.map(|a| a.adm2),
                FeatureRef::Aim => adm.and_then(|a| a.aim),
                FeatureRef::Adm3 => adm.and_then(|a| a.adm3),
                FeatureRef::AdmScale(s) => adm.map(|a| a.scale(s)),
                FeatureRef::Vif(s) => vif.map(|v| v.score(s)),
                FeatureRef::MotionSad => raw.motion_sad,
                FeatureRef::Motion2 => motion23.map(|m| m.0),
                FeatureRef::Motion3 => motion23.map(|m| m.1),
                FeatureRef::Cambi => raw.cambi.map(|c| c.distorted),
                FeatureRef::CambiSource => raw.cambi.and_then(|c| c.source),
                FeatureRef::CambiFullRef => raw.cambi.and_then(|c| c.full_reference),
                FeatureRef::SpeedChroma(i) => raw.speed_chroma.map(|s| s[i]),
                FeatureRef::FloatPsnr => raw.float_psnr,
                FeatureRef::FloatAnsnr(i) => raw.float_ansnr.map(|s| s[i]),
                FeatureRef::FloatMoment(i) => raw.float_moment.map(|s| s[i]),
                FeatureRef::Ciede => raw.ciede,
                FeatureRef::PsnrHvs(i) => raw.psnr_hvs.map(|s| s[i]),
                FeatureRef::FloatAdm2 => raw.float_adm.map(|a| a.adm2),
                FeatureRef::FloatAim => raw.float_adm.and_then(|a| a.aim),
                FeatureRef::FloatAdm3 => raw.float_adm.and_then(|a| a.adm3),
                FeatureRef::FloatAdmScale(s) => raw.float_adm.map(|a| a.scale(s)),
                FeatureRef::FloatVif(s) => raw.float_vif.map(|v| v[s]),
                FeatureRef::FloatMotion => p
                    .float_motion
                    .zip(raw.float_motion)
                    .map(|(fp, m)| fp.cap(m)),
                FeatureRef::FloatMotion2 => float23.map(|m| m.0),
                FeatureRef::FloatMotion3 => float23.map(|m| m.1),
                FeatureRef::SpeedTemporal => raw.speed_temporal,
            }
        };
        for src in &self.sources {
            values.push(match *src {
                MetricSource::Feature(r) => feature(r),
                MetricSource::Psnr(p) => raw.psnr.map(|v| v[p]),
                MetricSource::Ssim => raw.ssim,
                MetricSource::MsSsim => raw.ms_ssim,
            });
        }
        let inputs: Vec<f64> = p
            .inputs
            .iter()
            .map(|&r| feature(r).unwrap_or(f64::NAN))
            .collect();
        values.push(Some(self.models.main.predict(&inputs, self.flags, false)));
        if !self.models.bootstrap.is_empty() {
            for m in &self.models.bootstrap {
                values.push(Some(m.predict(&inputs, self.flags, false)));
            }
            let b = model::bootstrap(&self.models.bootstrap, &inputs, self.flags);
            values.extend([b.bagging, b.stddev, b.ci_lo, b.ci_hi].map(Some));
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

    /// Finish every frame whose motion inputs are known: sad[i + 1], and for
    /// frames before motion's first SAD also sad[min_index]. At the end of
    /// the stream (`end`) everything left is finished.
    fn absorb(&mut self, raws: Vec<RawFeatures>, end: bool) -> Vec<FrameScores> {
        let mut out = Vec::new();
        // First frame with a score: integer motion's min_index, float_motion's 1.
        let starts = [
            self.plan.motion.map(|m| m.min_index()),
            self.plan.float_motion.map(|_| 1),
        ];
        if starts.iter().all(Option::is_none) {
            for raw in raws {
                out.extend(self.finalize(raw, [None, None]));
            }
            return out;
        }
        for raw in raws {
            if Some(raw.index) == starts[0] {
                self.motion_stamp = raw.motion_sad;
            }
            if Some(raw.index) == starts[1] {
                self.float_motion_stamp = raw.float_motion;
            }
            self.pending.push_back(raw);
        }
        while let Some(front) = self.pending.front() {
            let next = self.pending.get(1);
            let next = [
                next.and_then(|r| r.motion_sad),
                next.and_then(|r| r.float_motion),
            ];
            let stamps = [self.motion_stamp, self.float_motion_stamp];
            let stamp_known = starts
                .iter()
                .zip(stamps)
                .all(|(s, st)| s.is_none_or(|s| front.index >= s) || st.is_some());
            if !end && (self.pending.len() < 2 || !stamp_known) {
                break;
            }
            let raw = self.pending.pop_front().expect("front exists");
            out.extend(self.finalize(raw, next));
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

    fn push_rendition(
        &mut self,
        reference: &Picture<'_>,
        distorted: &Picture<'_>,
        keep: Option<KeepAlive>,
        replay: Option<Arc<dyn super::Replay>>,
        reference_id: Option<u64>,
    ) -> Result<Vec<FrameScores>, VmafError> {
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
        self.motion = Default::default();
        self.motion_stamp = None;
        self.float_motion = Default::default();
        self.float_motion_stamp = None;
        Ok(out)
    }

    fn pooled(&self) -> PooledScores {
        PooledScores {
            names: self.names.clone(),
            stats: self.pooled.clone(),
            frames: self.frames_scored,
        }
    }

    fn reset(&mut self) -> Result<(), VmafError> {
        self.backend.reset()?;
        self.next_index = 0;
        self.pending.clear();
        self.motion = Default::default();
        self.motion_stamp = None;
        self.float_motion = Default::default();
        self.float_motion_stamp = None;
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

    fn failover(&self) -> &[super::FailoverNote] {
        self.backend.failover()
    }
}
