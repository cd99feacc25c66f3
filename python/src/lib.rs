//! vmafhip's Python module, `vmafhip._vmafhip`: the engine through the one
//! door (`vmaf::open`), fed from raw or Y4M files, or from planes in host
//! memory that the Python side (`vmafhip/__init__.py`) has checked against
//! the stream's geometry; the results as arrays and libvmaf's formats.
//!
//! Planes come as `(address, bytes, width, height, stride)` with the stride
//! in samples: the Python side holds the arrays alive for the call. The
//! engine works with the GIL released.

use gstvmafhip::hip::{Device, Vendor};
use gstvmafhip::vmaf::output::{Format, Results};
use gstvmafhip::vmaf::{
    self, BackendChoice, Engine, EngineConfig, FramePair, FrameScores, KeepAlive, ModelSpec,
    OnGpuError, Opening, Picture, PixelFormat, Plane, PooledScores, VmafError,
};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyDict};
use std::sync::Arc;

mod dlpack;
mod files;
use std::sync::Mutex;
use std::time::Instant;

create_exception!(
    _vmafhip,
    VmafError_,
    PyValueError,
    "What vmafhip could not do, and why: a bad model, feature, picture or file."
);

fn failed(e: impl std::fmt::Display) -> PyErr {
    VmafError_::new_err(e.to_string())
}

/// One plane as the Python side hands it over.
type PlaneArg = (usize, usize, usize, usize, usize);

/// What scores, as the Python calls name it: given once to
/// `NativeScorer` or `score_files`.
#[pyclass(module = "vmafhip._vmafhip", frozen)]
struct Settings {
    model: String,
    features: Vec<String>,
    backend: String,
    device: usize,
    threads: usize,
    subsample: u32,
    on_gpu_error: String,
}

#[pymethods]
impl Settings {
    #[new]
    fn new(
        model: String,
        features: Vec<String>,
        backend: String,
        device: usize,
        threads: usize,
        subsample: u32,
        on_gpu_error: String,
    ) -> Self {
        Settings {
            model,
            features,
            backend,
            device,
            threads,
            subsample,
            on_gpu_error,
        }
    }
}

impl Settings {
    /// The engine these settings ask for.
    fn open(&self) -> PyResult<vmaf::Opened> {
        let spec = ModelSpec::parse(&self.model).map_err(failed)?;
        let mut config = EngineConfig::new(spec.models);
        config.flags = spec.flags;
        config.features = self.features.clone();
        config.threads = self.threads;
        config.subsample = self.subsample.max(1);
        config.plan().map_err(failed)?;
        let backend = BackendChoice::parse(&self.backend).ok_or_else(|| {
            failed(format!(
                "backend \"{}\": use {}",
                self.backend,
                BackendChoice::NAMES.join(", ")
            ))
        })?;
        let on_gpu_error = OnGpuError::parse(&self.on_gpu_error).ok_or_else(|| {
            failed(format!(
                "on_gpu_error \"{}\": use {}",
                self.on_gpu_error,
                OnGpuError::NAMES.join(", ")
            ))
        })?;
        let opening = Opening {
            backend,
            device_id: self.device,
            on_gpu_error,
            ..Opening::new(config)
        };
        vmaf::open(&opening).map_err(failed)
    }
}

fn parse_format(name: &str) -> PyResult<PixelFormat> {
    match name {
        "420" => Ok(PixelFormat::Yuv420),
        "422" => Ok(PixelFormat::Yuv422),
        "444" => Ok(PixelFormat::Yuv444),
        "400" => Ok(PixelFormat::Gray),
        other => Err(failed(format!(
            "pixel_format \"{other}\": use 420, 422, 444 or 400"
        ))),
    }
}

/// A stream being scored: frames pushed, scores gathered.
struct Stream {
    engine: Box<dyn Engine>,
    name: String,
    /// The GPU the engine computes on, if any.
    device: Option<Arc<Device>>,
    frames: Vec<FrameScores>,
    size: (usize, usize),
    started: Option<Instant>,
    pushed: u64,
}

impl Stream {
    fn new(settings: &Settings) -> PyResult<Stream> {
        let opened = settings.open()?;
        Ok(Stream {
            engine: opened.engine,
            name: opened.name,
            device: opened.device,
            frames: Vec::new(),
            size: (0, 0),
            started: None,
            pushed: 0,
        })
    }

    fn push(
        &mut self,
        r: &Picture<'_>,
        d: &Picture<'_>,
        keep: Option<KeepAlive>,
    ) -> Result<(), VmafError> {
        self.started.get_or_insert_with(Instant::now);
        self.size = (r.width, r.height);
        let scored = self.engine.push(FramePair::new(r, d).kept(keep))?;
        self.frames.extend(scored);
        self.pushed += 1;
        Ok(())
    }

    /// The end of the stream: every frame's scores, pooled.
    fn finish(mut self) -> Result<ScoreResults, VmafError> {
        self.frames.extend(self.engine.flush()?);
        self.frames.sort_by_key(|f| f.index);
        let seconds = self.started.map_or(0.0, |s| s.elapsed().as_secs_f64());
        Ok(ScoreResults {
            pooled: self.engine.pooled(),
            frames: self.frames,
            size: self.size,
            fps: if seconds > 0.0 {
                self.pushed as f64 / seconds
            } else {
                0.0
            },
            engine: self.name,
        })
    }
}

/// The engine's picture of the planes `planes` describes.
///
/// # Safety
/// Each plane's `bytes` bytes from its address are readable, and aligned to
/// 2 bytes when `bpc` > 8, while the picture lives.
unsafe fn picture<'a>(
    planes: &[PlaneArg],
    format: PixelFormat,
    bpc: u8,
) -> Result<Picture<'a>, VmafError> {
    if bpc > 8 {
        let planes = planes
            .iter()
            .map(|&(at, bytes, w, h, stride)| {
                // SAFETY: the caller's promise above.
                let s = unsafe { std::slice::from_raw_parts(at as *const u16, bytes / 2) };
                Plane::new(s, w, h, stride)
            })
            .collect::<Result<Vec<_>, _>>()?;
        return Picture::new_u16(format, bpc, &planes);
    }
    let planes = planes
        .iter()
        .map(|&(at, bytes, w, h, stride)| {
            // SAFETY: the caller's promise above.
            let s = unsafe { std::slice::from_raw_parts(at as *const u8, bytes) };
            Plane::new(s, w, h, stride)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Picture::new_u8(format, &planes)
}

/// Scores frames pushed as planes (`vmafhip.Scorer`).
#[pyclass(module = "vmafhip._vmafhip")]
struct NativeScorer {
    /// None once flushed.
    stream: Mutex<Option<Stream>>,
    format: PixelFormat,
    bpc: u8,
}

impl NativeScorer {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Stream>> {
        self.stream.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[pymethods]
impl NativeScorer {
    #[new]
    fn new(pixel_format: &str, bitdepth: u8, settings: &Settings) -> PyResult<Self> {
        let format = parse_format(pixel_format)?;
        if !(8..=16).contains(&bitdepth) {
            return Err(failed(format!("bitdepth {bitdepth}: 8 to 16")));
        }
        Ok(NativeScorer {
            stream: Mutex::new(Some(Stream::new(settings)?)),
            format,
            bpc: bitdepth,
        })
    }

    /// The engine scoring (GPU or CPU, and why).
    #[getter]
    fn engine(&self) -> String {
        self.lock()
            .as_ref()
            .map_or(String::new(), |s| s.name.clone())
    }

    /// One frame pair; the Python side checked every plane against the
    /// stream's geometry and holds the arrays for the call.
    fn push(
        &self,
        py: Python<'_>,
        reference: Vec<PlaneArg>,
        distorted: Vec<PlaneArg>,
    ) -> PyResult<()> {
        let (format, bpc) = (self.format, self.bpc);
        let mut guard = self.lock();
        let stream = guard
            .as_mut()
            .ok_or_else(|| failed("a frame after flush()"))?;
        py.detach(|| {
            // SAFETY: the Python side checked each plane's extent against
            // its array, whose memory it holds alive for this call, and
            // the alignment of 16-bit samples.
            let (r, d) = unsafe {
                (
                    picture(&reference, format, bpc)?,
                    picture(&distorted, format, bpc)?,
                )
            };
            stream.push(&r, &d, None)
        })
        .map_err(failed)
    }

    /// One frame pair from DLPack capsules of tensors in the engine's GPU
    /// memory, each `(capsule, width, height)`: read in place, after the
    /// work queued before on the stream the capsules were made for (the
    /// legacy default stream), the capsules held until the engine's copies
    /// out of them are done.
    fn push_device(
        &self,
        py: Python<'_>,
        reference: Vec<(Bound<'_, PyCapsule>, usize, usize)>,
        distorted: Vec<(Bound<'_, PyCapsule>, usize, usize)>,
    ) -> PyResult<()> {
        let (format, bpc) = (self.format, self.bpc);
        let mut guard = self.lock();
        let stream = guard
            .as_mut()
            .ok_or_else(|| failed("a frame after flush()"))?;
        let dev = stream
            .device
            .clone()
            .filter(|_| stream.engine.reads_device_memory());
        let Some(dev) = dev else {
            return Err(failed(format!(
                "a tensor in GPU memory, but {} reads host memory (backend \"cpu\", or no usable GPU)",
                stream.name
            )));
        };
        let bits = if bpc > 8 { 16 } else { 8 };
        let mut planes = [Vec::new(), Vec::new()];
        for (side, (tensors, what)) in [(&reference, "reference"), (&distorted, "distorted")]
            .into_iter()
            .enumerate()
        {
            for (i, (capsule, w, h)) in tensors.iter().enumerate() {
                let what = format!("{what} plane {i}");
                let p = dlpack::plane(capsule, bits, (*w, *h), &what).map_err(failed)?;
                check_device(&dev, &p, &what)?;
                planes[side].push(p.plane);
            }
        }
        let held: Vec<Py<PyCapsule>> = reference
            .iter()
            .chain(&distorted)
            .map(|(c, _, _)| c.clone().unbind())
            .collect();
        py.detach(|| {
            dev.synchronize_default_stream().map_err(|e| {
                VmafError::Backend(format!("waiting for the tensors' producer: {e}"))
            })?;
            let r = Picture::new_device(format, bpc, &planes[0])?;
            let d = Picture::new_device(format, bpc, &planes[1])?;
            stream.push(&r, &d, Some(Box::new(held)))
        })
        .map_err(failed)
    }

    /// The end of the stream: its results.
    fn flush(&self, py: Python<'_>) -> PyResult<ScoreResults> {
        let stream = self
            .lock()
            .take()
            .ok_or_else(|| failed("flush() called twice"))?;
        py.detach(|| stream.finish()).map_err(failed)
    }
}

/// A tensor on the engine's GPU (its vendor's memory, its ordinal), or an
/// error naming where it is.
fn check_device(dev: &Device, p: &dlpack::DevicePlaneOf, what: &str) -> PyResult<()> {
    let kind = match p.device_type {
        dlpack::CUDA => Vendor::Nvidia,
        dlpack::ROCM => Vendor::Amd,
        t => {
            return Err(failed(format!(
                "{what}: DLPack device type {t}, not CUDA or ROCm memory"
            )));
        }
    };
    if kind != dev.vendor() || p.device_id as usize != dev.info.ordinal {
        return Err(failed(format!(
            "{what}: a tensor on {kind:?} device {}, but the engine computes on {:?} device {} ({}): \
             give the Scorer device={} or move the tensor",
            p.device_id,
            dev.vendor(),
            dev.info.ordinal,
            dev.info.name,
            p.device_id
        )));
    }
    Ok(())
}

/// Scores a file pair (reference, distorted): raw planar YUV (`size`,
/// `pixel_format`, `bitdepth` given) or Y4M (`y4m` true: the headers say).
#[pyfunction]
#[pyo3(signature = (paths, y4m, size, pixel_format, bitdepth, settings))]
fn score_files(
    py: Python<'_>,
    paths: (String, String),
    y4m: bool,
    size: (usize, usize),
    pixel_format: &str,
    bitdepth: u8,
    settings: &Settings,
) -> PyResult<ScoreResults> {
    let paths = (paths.0.as_str(), paths.1.as_str());
    if y4m {
        return py
            .detach(|| files::score_y4m(settings, paths))
            .map_err(failed);
    }
    let format = parse_format(pixel_format)?;
    py.detach(|| files::score_raw(settings, paths, size, format, bitdepth))
        .map_err(failed)
}

/// A stream's results: every frame's metrics and the pooled ones.
#[pyclass(module = "vmafhip._vmafhip", frozen)]
struct ScoreResults {
    frames: Vec<FrameScores>,
    pooled: PooledScores,
    size: (usize, usize),
    fps: f64,
    engine: String,
}

#[pymethods]
impl ScoreResults {
    /// The per-frame metrics' names, in libvmaf's order.
    fn names(&self) -> Vec<String> {
        self.frames
            .first()
            .map_or_else(Vec::new, |f| f.names.to_vec())
    }

    /// The frames' numbers.
    fn indices(&self) -> Vec<u64> {
        self.frames.iter().map(|f| f.index).collect()
    }

    /// Every value, frame after frame, as native-endian doubles (NaN where
    /// a frame has none).
    fn values<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let mut out = Vec::new();
        for f in &self.frames {
            for v in &f.values {
                out.extend_from_slice(&v.unwrap_or(f64::NAN).to_ne_bytes());
            }
        }
        PyBytes::new(py, &out)
    }

    /// Pooled metrics as libvmaf's JSON has them: name → {min, max, mean,
    /// harmonic_mean}.
    fn pooled<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (name, p) in self.pooled.iter() {
            let d = PyDict::new(py);
            d.set_item("min", p.min)?;
            d.set_item("max", p.max)?;
            d.set_item("mean", p.mean())?;
            d.set_item("harmonic_mean", p.harmonic_mean())?;
            out.set_item(name, d)?;
        }
        Ok(out)
    }

    /// Values over the whole stream (libvmaf's `aggregate_metrics`).
    fn aggregates(&self) -> Vec<(String, f64)> {
        self.pooled.aggregates.clone()
    }

    #[getter]
    fn engine(&self) -> String {
        self.engine.clone()
    }

    #[getter]
    fn fps(&self) -> f64 {
        self.fps
    }

    /// The results in libvmaf's `json`, `xml`, `csv` or `sub` format.
    fn render(&self, format: &str) -> PyResult<String> {
        let f = Format::parse(format)
            .ok_or_else(|| failed(format!("format \"{format}\": use json, xml, csv or sub")))?;
        Ok(Results {
            frames: &self.frames,
            pooled: &self.pooled,
            width: self.size.0,
            height: self.size.1,
            fps: Some(self.fps),
            version: "3.2.0",
        }
        .write(f))
    }
}

/// The built-in models' names.
#[pyfunction]
fn models() -> Vec<String> {
    vmaf::model::built_in_names()
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// The engine settings' defaults, by the Python argument's name, from
/// `vmaf::settings` (where the element's properties and the command's
/// options take theirs).
#[pyfunction]
fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    use gstvmafhip::vmaf::settings::*;
    let d = PyDict::new(py);
    d.set_item("model", MODEL.default)?;
    d.set_item("backend", BACKEND.default)?;
    d.set_item("device", DEVICE_ID.default)?;
    d.set_item("threads", THREADS.default)?;
    d.set_item("subsample", SUBSAMPLE.default)?;
    d.set_item("on_gpu_error", ON_GPU_ERROR.default)?;
    Ok(d)
}

#[pymodule]
fn _vmafhip(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("VmafError", m.py().get_type::<VmafError_>())?;
    m.add_class::<Settings>()?;
    m.add_class::<NativeScorer>()?;
    m.add_class::<ScoreResults>()?;
    m.add_function(wrap_pyfunction!(score_files, m)?)?;
    m.add_function(wrap_pyfunction!(models, m)?)?;
    m.add_function(wrap_pyfunction!(defaults, m)?)?;
    Ok(())
}
