//! The one door to an engine. Every front end (the element, and the
//! command through it; the C library; the Python package) turns its own
//! conventions into an [`Opening`] and calls [`open`]: which backend, which
//! GPU, what a GPU error mid-stream does, and what to compute. Nothing
//! else builds a GPU backend or its failover.
//!
//! The engine settings that front ends show their users (a property, an
//! option, a variable) are declared once in [`settings`], with their
//! names, defaults and help texts.

use super::scorer::{EngineConfig, Scorer};
use crate::core::{Engine, VmafError};
use crate::extractors::plan::Plan;
use crate::gpu::{Failover, HipBackend, HipOptions, OpenedDevice, Retry, SharedReference};
use crate::hip::{Device, Vendor};
use std::sync::Arc;
use std::time::Duration;

/// Where the engine computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendChoice {
    /// The GPU when one is usable, else the CPU (with a warning).
    Auto,
    Cpu,
    /// The GPU, or an error.
    Hip,
}

impl BackendChoice {
    pub const NAMES: [&'static str; 3] = ["auto", "cpu", "hip"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(Self::Auto),
            "cpu" => Some(Self::Cpu),
            "hip" => Some(Self::Hip),
            _ => None,
        }
    }
}

/// What a GPU error in the middle of a stream does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnGpuError {
    /// `Retry` with `BackendChoice::Auto`, `Fail` with `BackendChoice::Hip`.
    Auto,
    /// The stream ends with the error.
    Fail,
    /// The CPU engine takes the stream over, with the same numbers.
    Cpu,
    /// As `Cpu`, and the stream goes back to the GPU once it opens again.
    Retry,
}

impl OnGpuError {
    pub const NAMES: [&'static str; 4] = ["auto", "fail", "cpu", "retry"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(Self::Auto),
            "fail" => Some(Self::Fail),
            "cpu" => Some(Self::Cpu),
            "retry" => Some(Self::Retry),
            _ => None,
        }
    }

    /// What `auto` means under `backend`: a stream on `backend=auto` wants
    /// to go on (on the CPU) and to get the GPU's speed back as soon as it
    /// can; `backend=hip` asked for the GPU only.
    pub fn resolve(self, backend: BackendChoice) -> OnGpuError {
        match (self, backend) {
            (OnGpuError::Auto, BackendChoice::Auto) => OnGpuError::Retry,
            (OnGpuError::Auto, _) => OnGpuError::Fail,
            (policy, _) => policy,
        }
    }

    /// Whether a GPU error moves the stream to the CPU under `backend`.
    pub fn fails_over(self, backend: BackendChoice) -> bool {
        self.resolve(backend) != OnGpuError::Fail
    }
}

/// The engine settings front ends show their users, each declared once.
pub mod settings {
    /// A setting: its name (a property, `--NAME`), how its value is
    /// written in a usage line, its default and help text.
    pub struct Setting<T: 'static> {
        pub name: &'static str,
        pub value: &'static str,
        pub default: T,
        pub help: &'static str,
    }

    impl<T: std::fmt::Display> Setting<T> {
        /// The command line's option: `--NAME`.
        pub fn flag(&self) -> String {
            format!("--{}", self.name)
        }

        /// The help text with the default: what a usage line shows.
        pub fn described(&self) -> String {
            format!(
                "{} (default {})",
                self.help.trim_end_matches('.'),
                self.default
            )
        }
    }

    pub const BACKEND: Setting<&str> = Setting {
        name: "backend",
        value: "B",
        default: "auto",
        help: "Where VMAF is computed: auto (the GPU when one is usable, else the CPU with a warning), cpu, or hip (the GPU, or an error)",
    };
    pub const VENDOR: Setting<&str> = Setting {
        name: "vendor",
        value: "V",
        default: "auto",
        help: "Which GPU stack the HIP backend loads: auto (AMD's libamdhip64 first, then NVIDIA's libcuda; VMAFHIP_VENDOR overrides it), amd or nvidia",
    };
    pub const DEVICE_ID: Setting<i32> = Setting {
        name: "device-id",
        value: "N",
        default: 0,
        help: "The GPU's ordinal for the HIP backend",
    };
    pub const ON_GPU_ERROR: Setting<&str> = Setting {
        name: "on-gpu-error",
        value: "E",
        default: "auto",
        help: "What a GPU error in the middle of a stream does: auto (retry with backend=auto, fail with backend=hip), fail (the stream ends with the error), cpu (the CPU engine takes the stream over from the first frame not finished, with the same numbers; a warning names the error and the frame, and the messages' backend field says which frames ran where), retry (as cpu, and the stream goes back to the GPU once it opens again, after gpu-retry-delay; an info message says from which frame)",
    };
    pub const GPU_RETRY_DELAY: Setting<u32> = Setting {
        name: "gpu-retry-delay",
        value: "MS",
        default: 1000,
        help: "With on-gpu-error=retry (the default with backend=auto): milliseconds after a GPU error before the GPU is opened again and the stream goes back to it; doubles after each failed return, up to a minute; 0 tries at the next frame",
    };
    pub const THREADS: Setting<u32> = Setting {
        name: "threads",
        value: "N",
        default: 0,
        help: "CPU worker threads, 0 = one per core (results are identical for any count)",
    };
    pub const SUBSAMPLE: Setting<u32> = Setting {
        name: "subsample",
        value: "N",
        default: 1,
        help: "Score every Nth frame (libvmaf's n_subsample); temporal extractors still see every frame",
    };
    pub const MODEL: Setting<&str> = Setting {
        name: "model-filename",
        value: "FILE",
        default: "vmaf_v0.6.1",
        help: "Built-in model version or path to a libvmaf JSON model or model collection, with optional :FEATURE.OPTION=VALUE overrides",
    };
}

/// Everything [`open`] needs.
#[derive(Clone)]
pub struct Opening {
    pub config: EngineConfig,
    pub backend: BackendChoice,
    pub vendor: Vendor,
    pub device_id: usize,
    /// A device opened from a program's own GPU context, used instead of
    /// `vendor` and `device_id`.
    pub device: Option<OpenedDevice>,
    /// The reference shared with the other renditions of a ladder.
    pub shared_reference: Option<SharedReference>,
    pub on_gpu_error: OnGpuError,
    /// Before a failed GPU is opened again (`OnGpuError::Retry`).
    pub retry_delay: Duration,
}

impl Opening {
    /// `config` with every other setting at its default.
    pub fn new(config: EngineConfig) -> Self {
        Self {
            config,
            backend: BackendChoice::Auto,
            vendor: Vendor::Auto,
            device_id: settings::DEVICE_ID.default as usize,
            device: None,
            shared_reference: None,
            on_gpu_error: OnGpuError::Auto,
            retry_delay: Duration::from_millis(settings::GPU_RETRY_DELAY.default.into()),
        }
    }
}

/// An engine opened by [`open`].
pub struct Opened {
    pub engine: Box<dyn Engine>,
    /// Its description, for messages.
    pub name: String,
    /// The GPU it computes on, if any.
    pub device: Option<Arc<Device>>,
    /// Why `BackendChoice::Auto` fell back to the CPU.
    pub warning: Option<String>,
    /// Whether an extractor reads the chroma planes.
    pub reads_chroma: bool,
}

/// Why no engine opened.
#[derive(Debug)]
pub enum OpenError {
    /// The configuration itself (model, features, subsample).
    Settings(VmafError),
    /// `BackendChoice::Hip` and no usable GPU: what was looked for, and why.
    NoGpu(String),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Settings(e) => write!(f, "{e}"),
            OpenError::NoGpu(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for OpenError {}

/// The engine `o` asks for.
pub fn open(o: &Opening) -> Result<Opened, OpenError> {
    let plan = o.config.plan().map_err(OpenError::Settings)?;
    let reads_chroma = plan.reads_chroma();
    let (engine, device, warning) = match o.backend {
        BackendChoice::Cpu => (open_cpu(o)?, None, None),
        BackendChoice::Hip => {
            let (engine, device) = open_gpu(o, plan).map_err(|e| no_gpu(o, &e))?;
            (engine, Some(device), None)
        }
        BackendChoice::Auto => match open_gpu(o, plan) {
            Ok((engine, device)) => (engine, Some(device), None),
            Err(GpuOpen::Settings(e)) => return Err(OpenError::Settings(e)),
            Err(GpuOpen::Device(e)) => (
                open_cpu(o)?,
                None,
                Some(format!(
                    "backend=auto: no usable GPU ({e}); computing VMAF on the CPU"
                )),
            ),
        },
    };
    Ok(Opened {
        name: engine.describe(),
        engine,
        device,
        warning,
        reads_chroma,
    })
}

fn open_cpu(o: &Opening) -> Result<Box<dyn Engine>, OpenError> {
    Scorer::cpu(&o.config)
        .map(|e| Box::new(e) as Box<dyn Engine>)
        .map_err(OpenError::Settings)
}

/// Why the GPU engine did not open: the configuration, or the device.
enum GpuOpen {
    Settings(VmafError),
    Device(String),
}

fn no_gpu(o: &Opening, e: &GpuOpen) -> OpenError {
    match e {
        GpuOpen::Settings(e) => OpenError::Settings(e.clone()),
        GpuOpen::Device(e) => OpenError::NoGpu(format!(
            "backend=hip: no usable GPU ({}): {e}",
            looked_for(o)
        )),
    }
}

/// What opening a GPU looks for, for the error when none is usable.
fn looked_for(o: &Opening) -> String {
    format!(
        "vendor={} device-id={}: AMD libamdhip64.so.7/.6/.5 + hiprtc, NVIDIA libcuda.so.1 + libnvrtc.so.13/.12",
        o.vendor.name(),
        o.device_id
    )
}

/// The GPU engine for `plan` (`o.config`'s), with the CPU engine behind
/// it unless `on_gpu_error` says the stream fails with the GPU.
fn open_gpu(o: &Opening, plan: Plan) -> Result<(Box<dyn Engine>, Arc<Device>), GpuOpen> {
    let options = HipOptions {
        vendor: o.vendor,
        device_id: o.device_id,
        shared_reference: o.shared_reference.clone(),
        device: o.device.clone(),
        ..Default::default()
    };
    let backend =
        HipBackend::new(plan.clone(), &options).map_err(|e| GpuOpen::Device(e.to_string()))?;
    let device = backend.device().clone();
    let settings = GpuOpen::Settings;
    if !o.on_gpu_error.fails_over(o.backend) {
        let engine = Scorer::with_backend(&o.config, backend).map_err(settings)?;
        return Ok((Box::new(engine), device));
    }
    let mut failover = Failover::new(backend, plan.clone(), o.config.threads);
    if o.on_gpu_error.resolve(o.backend) == OnGpuError::Retry {
        let reopen = move || {
            HipBackend::new(plan.clone(), &options).map_err(|e| VmafError::Backend(e.to_string()))
        };
        failover = failover.with_retry(Retry::new(reopen, o.retry_delay));
    }
    let engine = Scorer::with_backend(&o.config, failover).map_err(settings)?;
    Ok((Box::new(engine), device))
}

/// The GPU a front end would open for `vendor` and `device_id` (shared with
/// every engine of this process on it), for what must exist before an
/// engine does: a GPU context offered to decoders, pinned host memory.
pub fn gpu_device(vendor: Vendor, device_id: usize) -> Result<Arc<Device>, String> {
    crate::gpu::shared_device(vendor, device_id).map_err(|e| e.to_string())
}

/// What GPU `device_id` of `vendor` is, without opening it (no context,
/// no kernels): for choosing an engine before a program says which
/// context to score in.
pub fn gpu_info(vendor: Vendor, device_id: usize) -> Result<crate::hip::DeviceInfo, String> {
    let rt = crate::hip::Runtime::load(vendor).map_err(|e| e.to_string())?;
    crate::hip::Device::probe(&rt, device_id).map_err(|e| e.to_string())
}

/// The GPU runtime this process would load, for `--version` and the like.
pub fn gpu_runtime() -> String {
    match gpu_device(Vendor::Auto.from_env_or(), 0) {
        Ok(d) => format!("{} ({})", d.info.name, d.info.arch),
        Err(e) => format!("none usable ({e})"),
    }
}
