//! `VmafContext`: what a program registered (the model or collection, the
//! extra features), the engine made at the first frame, and every frame's
//! scores, which the score and output calls read.

#![forbid(unsafe_code)]

use crate::device_picture::{Lent, Params, Pool};
use crate::dictionary::Dictionary;
use crate::ffi;
use crate::model::Model;
use crate::picture::Seen;
use gstvmafhip::hip::Vendor;
use gstvmafhip::vmaf::output::{Format, Results};
use gstvmafhip::vmaf::{
    self, BackendChoice, Engine, EngineConfig, FramePair, FrameScores, OnGpuError, OpenedDevice,
    Opening, PoolMethod, Pooled, Replay,
};
use std::ffi::c_int;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The `version` field of the results, as libvmaf 3.2 writes it.
const RESULTS_VERSION: &str = "3.2.0";

/// Which engine scores: the GPU engine where one is usable, else the CPU
/// (the same numbers); `VMAFHIP_BACKEND=cpu` forces the CPU, `hip` the GPU
/// (or an error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Cpu,
    /// The GPU engine on this device ordinal.
    Hip(usize),
}

/// The variable that lets an unchanged libvmaf program use the GPU.
pub const BACKEND_VARIABLE: &str = "VMAFHIP_BACKEND";

impl Backend {
    /// The backend `VMAFHIP_BACKEND` asks for (unset: `auto`); with
    /// `auto`, the GPU when its device opens, and a note why not otherwise.
    pub fn from_env() -> Result<(Backend, Option<String>), String> {
        let wanted = std::env::var(BACKEND_VARIABLE).unwrap_or_default();
        // Probed, not opened: a program that imports its own CUDA context
        // never pays for the primary context and its kernels.
        let gpu = || gstvmafhip::vmaf::gpu_info(Vendor::Auto, 0);
        let choice = match wanted.as_str() {
            "" => BackendChoice::Auto,
            name => BackendChoice::parse(name).ok_or_else(|| {
                format!(
                    "{BACKEND_VARIABLE}={name}: use {}",
                    BackendChoice::NAMES.join(", ")
                )
            })?,
        };
        match choice {
            BackendChoice::Cpu => Ok((Backend::Cpu, None)),
            BackendChoice::Hip => gpu()
                .map(|_| (Backend::Hip(0), None))
                .map_err(|e| format!("{BACKEND_VARIABLE}=hip: {e}")),
            BackendChoice::Auto => Ok(match gpu() {
                Ok(_) => (Backend::Hip(0), None),
                // Asked for by name: a warning; the default: a note.
                Err(e) if !wanted.is_empty() => (
                    Backend::Cpu,
                    Some(format!(
                        "{BACKEND_VARIABLE}=auto: {e}: the CPU engine scores"
                    )),
                ),
                Err(_) => (Backend::Cpu, None),
            }),
        }
    }
}

pub struct Context {
    backend: Backend,
    threads: usize,
    subsample: u32,
    /// The models registered, in order: the first (a model or a
    /// collection) is the engine's, the others are scored beside it.
    models: Vec<Model>,
    features: Vec<String>,
    engine: Option<Box<dyn Engine>>,
    /// The device of an imported CUDA state (a program's context).
    gpu: Option<OpenedDevice>,
    /// Device pictures lent to the program, once preallocated.
    pool: Option<Pool>,
    /// Whether the first device pictures' chroma was looked at.
    chroma_checked: bool,
    frames: Vec<FrameScores>,
    size: (usize, usize),
    /// Frames read; the next index expected.
    read: u32,
    flushed: bool,
    started: Option<Instant>,
    seconds: f64,
    /// Where the context's time went, said at `vmaf_close` (DEBUG).
    timing: Timing,
}

/// Where a context's time went: what a program waits for in its calls.
#[derive(Default)]
pub struct Timing {
    /// `vmaf_init`: the backend chosen and, for the GPU, its device opened.
    pub init: Duration,
    /// The engine opened at the first frame.
    engine: Duration,
    /// Inside `vmaf_read_pictures`, over every frame (the engine's opening included).
    reading: Duration,
    flush: Duration,
    /// `vmaf_write_output`, every call.
    writing: Duration,
}

/// What holds a frame's pictures' memory while the engine reads it.
pub enum Kept {
    /// Blocks released once the engine is done with them.
    Blocks(Vec<crate::picture::Block>),
    /// A pair the GPU engine's failover can make again, so that it keeps
    /// no copy of the frame.
    Replayable(Arc<dyn Replay>),
}

/// What went wrong, for the log, with libvmaf's return code.
pub struct Failure(pub c_int, pub String);

fn invalid(what: impl Into<String>) -> Failure {
    Failure(-ffi::EINVAL, what.into())
}

impl Context {
    pub fn new(cfg: &ffi::Configuration, backend: Backend) -> Context {
        Context {
            backend,
            threads: cfg.n_threads.max(1) as usize,
            subsample: cfg.n_subsample.max(1),
            models: Vec::new(),
            features: Vec::new(),
            engine: None,
            gpu: None,
            pool: None,
            chroma_checked: false,
            frames: Vec::new(),
            size: (0, 0),
            read: 0,
            flushed: false,
            started: None,
            seconds: 0.0,
            timing: Timing::default(),
        }
    }

    /// Where the time went, for libvmaf's DEBUG level at `vmaf_close`.
    pub fn timing(&mut self) -> &mut Timing {
        &mut self.timing
    }

    /// The timing line said at `vmaf_close`.
    pub fn timing_line(&self) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let t = &self.timing;
        let per_frame = ms(t.reading.saturating_sub(t.engine)) / f64::from(self.read.max(1));
        format!(
            "vmafhip: {} frames; time in calls: vmaf_init {:.1} ms, the engine opened at the first frame {:.1} ms, \
             vmaf_read_pictures {:.3} ms a frame besides, the flush {:.1} ms, vmaf_write_output {:.1} ms; \
             opening the GPU: {}",
            self.read,
            ms(t.init),
            ms(t.engine),
            per_frame,
            ms(t.flush),
            ms(t.writing),
            match gstvmafhip::hip::startup_steps() {
                s if s.is_empty() => "nothing".to_string(),
                s => s,
            }
        )
    }

    /// What scores: said once at `vmaf_init` (libvmaf's INFO level).
    pub fn describe(&self) -> String {
        match self.backend {
            Backend::Cpu => format!("vmafhip: the CPU engine, {} thread(s)", self.threads),
            Backend::Hip(n) => match gstvmafhip::vmaf::gpu_info(Vendor::Auto, n) {
                Ok(info) => format!(
                    "vmafhip: the GPU engine on {} ({}), the CPU engine behind it",
                    info.name, info.arch
                ),
                Err(e) => format!("vmafhip: the GPU engine ({e})"),
            },
        }
    }

    /// Scores on the GPU engine of device `ordinal` (an imported GPU
    /// state), before the first frame.
    pub fn use_gpu(&mut self, ordinal: usize) -> Result<(), Failure> {
        if self.engine.is_some() {
            return Err(invalid("a GPU state is imported before the first frame"));
        }
        self.backend = Backend::Hip(ordinal);
        Ok(())
    }

    /// Scores on the GPU engine in `gpu`'s context (an imported CUDA
    /// state), before the first frame.
    pub fn use_device(&mut self, gpu: OpenedDevice) -> Result<(), Failure> {
        self.use_gpu(gpu.device.info.ordinal)?;
        self.gpu = Some(gpu);
        Ok(())
    }

    /// The device of the imported GPU state, if any.
    fn device(&self) -> Result<Option<std::sync::Arc<gstvmafhip::hip::Device>>, Failure> {
        if let Some(g) = &self.gpu {
            return Ok(Some(g.device.clone()));
        }
        match self.backend {
            Backend::Cpu => Ok(None),
            Backend::Hip(n) => gstvmafhip::vmaf::gpu_device(Vendor::Auto, n)
                .map(Some)
                .map_err(|e| Failure(-ffi::ENODEV, e.to_string())),
        }
    }

    /// Pictures in GPU memory of `params`, lent by [`Context::fetch_device`]:
    /// on the device of the GPU state imported before.
    pub fn preallocate_device(&mut self, params: Params) -> Result<(), Failure> {
        let dev = self.device()?.ok_or_else(|| {
            invalid("device pictures need a GPU state imported first (vmaf_cuda_import_state)")
        })?;
        self.pool = Some(Pool::new(dev, params).map_err(invalid)?);
        Ok(())
    }

    /// A device picture from the pool.
    pub fn fetch_device(&self) -> Result<Lent, Failure> {
        let pool = self
            .pool
            .as_ref()
            .ok_or_else(|| invalid("no device pictures were preallocated"))?;
        pool.fetch().map_err(|e| Failure(-ffi::ENOMEM, e))
    }

    /// Before device pictures are read: the program's copies into them are
    /// waited for, and, at the first frame, a model that reads chroma is
    /// refused pictures whose chroma was never written (ffmpeg 7.1's
    /// `libvmaf_cuda` copies luma alone).
    /// Host pictures alone (`pictures` empty) need neither.
    pub fn accept_device_pictures(&mut self, pictures: &[&Lent]) -> Result<(), Failure> {
        let Some(first) = pictures.first() else {
            return Ok(());
        };
        first.wait_for_writes().map_err(invalid)?;
        if self.chroma_checked {
            return Ok(());
        }
        self.chroma_checked = true;
        let plan = self.config()?.plan().map_err(|e| invalid(e.to_string()))?;
        if !plan.reads_chroma() {
            return Ok(());
        }
        for p in pictures {
            if !p.chroma_unwritten().map_err(invalid)? {
                return Ok(());
            }
        }
        Err(invalid(
            "the device pictures' chroma planes were never written (the program copied luma alone, \
             as ffmpeg 7.1's libvmaf_cuda filter does), and the model or a feature reads chroma: \
             copy every plane, or score a luma-only model such as vmaf_v0.6.1",
        ))
    }

    /// A model (or collection) whose features and score to compute: any
    /// number per context, each scored under its own name, the features
    /// they share computed once. The same model again is a no-op; a
    /// collection is the first model registered.
    pub fn use_model(&mut self, m: &Model) -> Result<(), Failure> {
        if self.engine.is_some() {
            return Err(invalid("models are registered before the first frame"));
        }
        if self
            .models
            .iter()
            .any(|had| had.set == m.set && had.flags == m.flags)
        {
            return Ok(());
        }
        if let Some(had) = self.models.iter().find(|had| had.name() == m.name()) {
            return Err(invalid(format!(
                "two models named \"{}\" (\"{}\" and \"{}\"): give each its own name (VmafModelConfig.name)",
                m.name(),
                had.source,
                m.source
            )));
        }
        if !self.models.is_empty() && m.is_collection() {
            return Err(invalid(format!(
                "model collection \"{}\" after a model: vmafhip scores a collection as the first model of a context",
                m.source
            )));
        }
        self.models.push(m.clone());
        Ok(())
    }

    /// An extractor beside the model's, by libvmaf's name, with the
    /// options of `opts` (libvmaf's option names or aliases): computed once
    /// with the model's where the options are the same, else as another
    /// instance whose outputs carry libvmaf's option suffix.
    pub fn use_feature(&mut self, name: &str, opts: &Dictionary) -> Result<(), Failure> {
        if self.engine.is_some() {
            return Err(invalid("features are registered before the first frame"));
        }
        if name.contains(['=', ':']) {
            return Err(invalid(format!(
                "no feature \"{name}\": a feature's options go in its dictionary"
            )));
        }
        let spec = gstvmafhip::extractors::feature_spec(name, &opts.0);
        gstvmafhip::extractors::check_feature(&spec).map_err(invalid)?;
        if !self.features.contains(&spec) {
            self.features.push(spec);
        }
        Ok(())
    }

    /// What the engine is made of: the model, the extra features, the threads.
    fn config(&self) -> Result<EngineConfig, Failure> {
        let (m, others) = self.models.split_first().ok_or_else(|| {
            invalid("no model: vmafhip scores a model (vmaf_use_features_from_model)")
        })?;
        let mut config = EngineConfig::new(m.set.clone());
        config.flags = m.flags;
        config.companions = others
            .iter()
            .map(|o| (o.set.main.clone(), o.flags))
            .collect();
        config.features = self.features.clone();
        config.threads = self.threads;
        config.subsample = self.subsample;
        Ok(config)
    }

    fn engine(&mut self) -> Result<&mut Box<dyn Engine>, Failure> {
        if self.engine.is_none() {
            let opening = Instant::now();
            let config = self.config()?;
            self.engine = Some(open(&config, self.backend, self.gpu.clone()).map_err(invalid)?);
            self.timing.engine = opening.elapsed();
        }
        Ok(self.engine.as_mut().expect("made above"))
    }

    /// Frame `index` (the next in order): scored, its scores kept once final.
    /// `keep` holds the pictures' memory until the engine is done with it
    /// (a GPU engine uploads pinned memory in place, after returning).
    pub fn read(
        &mut self,
        reference: &Seen<'_>,
        distorted: &Seen<'_>,
        index: u32,
        kept: Kept,
    ) -> Result<(), Failure> {
        if self.flushed {
            return Err(invalid("a frame after the flush"));
        }
        if index != self.read {
            return Err(invalid(format!(
                "frame {index} where frame {} comes next (frames are read in order)",
                self.read
            )));
        }
        let called = Instant::now();
        let r = reference
            .picture()
            .map_err(|e| invalid(format!("reference: {e}")))?;
        let d = distorted
            .picture()
            .map_err(|e| invalid(format!("distorted: {e}")))?;
        self.size = (r.width, r.height);
        let started = *self.started.get_or_insert_with(Instant::now);
        let mut pair = FramePair::new(&r, &d);
        match kept {
            Kept::Blocks(blocks) => pair.keep = Some(Box::new(blocks)),
            Kept::Replayable(held) => {
                pair.keep = Some(Box::new(held.clone()));
                pair.replay = Some(held);
            }
        }
        let scored = self
            .engine()?
            .push(pair)
            .map_err(|e| invalid(e.to_string()))?;
        self.frames.extend(scored);
        self.keep_frames_in_order();
        self.read += 1;
        self.seconds = started.elapsed().as_secs_f64();
        self.timing.reading += called.elapsed();
        Ok(())
    }

    /// The frames' scores by index (the engines give them in order; the
    /// score calls look them up by a binary search).
    fn keep_frames_in_order(&mut self) {
        if !self.frames.is_sorted_by_key(|f| f.index) {
            self.frames.sort_by_key(|f| f.index);
        }
    }

    /// The end of the stream: the last frames' scores.
    pub fn flush(&mut self) -> Result<(), Failure> {
        if self.flushed {
            return Err(invalid("flushed twice"));
        }
        self.flushed = true;
        let called = Instant::now();
        if let Some(e) = self.engine.as_mut() {
            let rest = e.flush().map_err(|e| invalid(e.to_string()))?;
            self.frames.extend(rest);
            self.keep_frames_in_order();
        }
        self.timing.flush = called.elapsed();
        if let Some(s) = self.started {
            self.seconds = s.elapsed().as_secs_f64();
        }
        Ok(())
    }

    /// Score `name` of frame `index`.
    pub fn score_at(&self, name: &str, index: u32) -> Result<f64, Failure> {
        let frame = self
            .frames
            .iter()
            .find(|f| f.index == u64::from(index))
            .ok_or_else(|| invalid(format!("frame {index} has no scores (yet)")))?;
        frame
            .get(name)
            .ok_or_else(|| invalid(format!("frame {index} has no score \"{name}\"")))
    }

    /// Score `name` pooled with `method` over frames `low..=high`.
    pub fn pooled(&self, name: &str, method: c_int, low: u32, high: u32) -> Result<f64, Failure> {
        let method = match method {
            ffi::POOL_MIN => PoolMethod::Min,
            ffi::POOL_MAX => PoolMethod::Max,
            ffi::POOL_MEAN => PoolMethod::Mean,
            ffi::POOL_HARMONIC_MEAN => PoolMethod::HarmonicMean,
            m => return Err(invalid(format!("pooling method {m}"))),
        };
        if low > high {
            return Err(invalid(format!("frames {low} to {high}")));
        }
        // As libvmaf: every frame of the range (but those subsampling
        // skips) must have the score.
        let mut p = Pooled::default();
        for i in (low..=high).filter(|i| i % self.subsample == 0) {
            let v = self
                .frames
                .binary_search_by_key(&u64::from(i), |f| f.index)
                .ok()
                .and_then(|at| self.frames[at].get(name))
                .ok_or_else(|| {
                    invalid(format!(
                        "frames {low} to {high}: frame {i} has no score \"{name}\" ({} frame(s) read)",
                        self.read
                    ))
                })?;
            p.push(v);
        }
        Ok(p.get(method))
    }

    /// The results file in libvmaf's layout `fmt`.
    pub fn write_output(&mut self, path: &str, fmt: c_int) -> Result<(), Failure> {
        let called = Instant::now();
        let written = self.write_results(path, fmt);
        self.timing.writing += called.elapsed();
        written
    }

    fn write_results(&self, path: &str, fmt: c_int) -> Result<(), Failure> {
        let format = match fmt {
            ffi::OUTPUT_XML => Format::Xml,
            ffi::OUTPUT_JSON => Format::Json,
            ffi::OUTPUT_CSV => Format::Csv,
            ffi::OUTPUT_SUB => Format::Sub,
            f => return Err(invalid(format!("output format {f}"))),
        };
        let pooled = self
            .engine
            .as_ref()
            .ok_or_else(|| invalid("no frame was read"))?
            .pooled();
        let fps = if self.seconds > 0.0 {
            f64::from(self.read) / self.seconds
        } else {
            0.0
        };
        let text = Results {
            frames: &self.frames,
            pooled: &pooled,
            width: self.size.0,
            height: self.size.1,
            fps: Some(fps),
            version: RESULTS_VERSION,
        }
        .write(format);
        std::fs::write(path, text).map_err(|e| invalid(format!("{path}: {e}")))
    }
}

/// The engine for `config` on `backend`, through the one door: on the
/// GPU, the CPU engine stands behind it and takes over, with the same
/// numbers, if the GPU fails.
fn open(
    config: &EngineConfig,
    backend: Backend,
    gpu: Option<OpenedDevice>,
) -> Result<Box<dyn Engine>, String> {
    let opening = match backend {
        Backend::Cpu => Opening {
            backend: BackendChoice::Cpu,
            ..Opening::new(config.clone())
        },
        Backend::Hip(device_id) => Opening {
            backend: BackendChoice::Hip,
            device_id,
            device: gpu,
            on_gpu_error: OnGpuError::Cpu,
            ..Opening::new(config.clone())
        },
    };
    vmaf::open(&opening)
        .map(|o| o.engine)
        .map_err(|e| format!("the engine: {e}"))
}
