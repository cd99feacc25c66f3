//! The `vmafhip` GstVideoAggregator subclass.

mod aligned;

use super::align::Holding;
use super::late::{Arrived, Paired, Timed, WaitingRef};
use super::live::{self, FirstFrame};
use super::metrics::{Metrics, MetricsServer};
use super::pinned_copy::PinnedCopier;
use super::pinned_pool::{PinnedBlocks, PinnedPool};
use super::rendition::{Files, Pending, Rendition, SegmentEnd};
use super::settings::*;
use super::window::AlertChange;
use super::{Backend, LogLevel, OnGpuError, Vendor, VmafFrameMessage};
use crate::gpu::{self, HipBackend, HipOptions, SharedReference};
use crate::hip;
use crate::hip::gst_gpu::{self, GpuMemoryKind, GstGpu};
use crate::vmaf::{
    self, DevicePlane, Engine, EngineConfig, Failover, FramePair, KeepAlive, ModelFlags, ModelSet,
    Picture, PixelFormat, Plane, Retry, Scorer,
};
use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;
use gst_base::prelude::*;
use gst_base::subclass::prelude::*;
use gst_video::prelude::*;
use gst_video::subclass::prelude::*;
use once_cell::sync::Lazy;
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub(super) static CAT: Lazy<gst::DebugCategory> = Lazy::new(|| {
    gst::DebugCategory::new(
        "vmafhip",
        gst::DebugColorFlags::empty(),
        Some("VMAF on HIP"),
    )
});

const FORMATS: &[&str] = &[
    "I420",
    "YV12",
    "NV12",
    "Y42B",
    "Y444",
    "GRAY8",
    "I420_10LE",
    "I422_10LE",
    "Y444_10LE",
    "I420_12LE",
    "I422_12LE",
    "Y444_12LE",
    "GRAY16_LE",
];

/// An output frame's timing, for its messages, and its number among the
/// reference frames (None: the frame being aggregated).
#[derive(Clone, Copy)]
struct FrameTiming {
    pts: Option<gst::ClockTime>,
    duration: Option<gst::ClockTime>,
    reference: Option<u64>,
}

impl FrameTiming {
    fn of(outbuf: &gst::BufferRef) -> Self {
        FrameTiming {
            pts: outbuf.pts(),
            duration: outbuf.duration(),
            reference: None,
        }
    }
}

/// The reference frame being aggregated, mapped, and its buffer.
type ReferenceFrame<'a> = (
    &'a gst_video::VideoFrameRef<&'a gst::BufferRef>,
    Option<&'a gst::Buffer>,
);

/// Whether `pad`'s input has ended: its EOS reached the pad (stored at
/// once), or the aggregator has taken it from the pad's queue.
fn has_ended(pad: &gst_video::VideoAggregatorPad) -> bool {
    pad.is_eos() || pad.sticky_event::<gst::event::Eos>(0).is_some()
}

/// The reference frame being aggregated, to wait for its distorted frame:
/// its buffer (copied later if it waits), running time `at`, this output
/// frame's timing and its number `number` among the reference frames.
fn waiting_reference(
    (ref_frame, reference): (&gst_video::VideoFrameRef<&gst::BufferRef>, &gst::Buffer),
    at: gst::ClockTime,
    outbuf: &gst::BufferRef,
    number: u64,
) -> Timed<WaitingRef> {
    Timed {
        at,
        duration: reference.duration(),
        frame: WaitingRef {
            buffer: reference.clone(),
            info: ref_frame.info().clone(),
            pts: outbuf.pts(),
            duration: outbuf.duration(),
            reference: number,
            copied: false,
        },
    }
}

/// A buffer's running time in its pad's segment.
fn running_time(
    pad: &gst_video::VideoAggregatorPad,
    buf: Option<&gst::Buffer>,
) -> Option<gst::ClockTime> {
    let pts = buf?.pts();
    pad.segment()
        .downcast::<gst::ClockTime>()
        .ok()?
        .to_running_time(pts)
}

/// What an input is, as upstream answers the URI query (a file's path for
/// `file://`), else the upstream element's name.
fn input_name(pad: &gst_video::VideoAggregatorPad) -> String {
    let mut q = gst::query::Uri::new();
    if pad.peer_query(&mut q)
        && let Some(uri) = q.uri()
    {
        return match glib::filename_from_uri(&uri) {
            Ok((path, _)) => path.display().to_string(),
            Err(_) => uri.to_string(),
        };
    }
    match pad.peer().and_then(|p| p.parent_element()) {
        Some(e) => format!("{} (no URI upstream)", e.name()),
        None => format!("{} (not linked)", pad.name()),
    }
}

/// What exists between `start` and `stop`: the reference's side, and one
/// [`Rendition`] per distorted input.
struct State {
    settings: Settings,
    /// The first engine's description (`dist_sink`'s), for errors.
    backend: String,
    /// The GPU when the engines compute on one: sink pads propose a pool of
    /// its pinned host memory.
    device: Option<Arc<hip::Device>>,
    /// `dist_sink` first, then the requested pads in the order they came.
    renditions: Vec<Rendition>,
    /// Running time of the reference frame last scored: a live timeout can
    /// hand the aggregator the same reference frame again, which is passed
    /// through but not scored a second time.
    last_ref: Option<gst::ClockTime>,
    /// What the distorted branch's first frame took beyond its deadline,
    /// added to the element's latency (`live`).
    first_frame_delay: gst::ClockTime,
    /// Requested pads released (their names are not used again): the
    /// streaming thread may still see one until the aggregator removes it.
    released: Vec<String>,
    /// The reference the renditions' GPU engines share: with more than one
    /// rendition, each reference frame is uploaded, and the work on it
    /// alone done, once (`hip::SharedReference`).
    shared_reference: SharedReference,
    /// Reference frames scored so far: the number the engines know a
    /// frame's reference by.
    references: u64,
    /// False with `VMAFHIP_SHARE_REFERENCE=0`: every rendition does its
    /// reference's work itself (for comparisons).
    share_reference: bool,
}

impl State {
    fn rendition(&mut self, name: &str) -> Option<&mut Rendition> {
        self.renditions.iter_mut().find(|r| r.name == name)
    }
}
pub struct VmafHip {
    ref_pad: gst_video::VideoAggregatorPad,
    dist_pad: gst_video::VideoAggregatorPad,
    settings: Mutex<Settings>,
    state: Mutex<Option<State>>,
    /// GStreamer's GPU memory of the engine's device, when the engine runs
    /// on a GPU and GStreamer's library for it is present (set at start):
    /// the sink pads then also take `memory:CUDAMemory` / `memory:HIPMemory`.
    gpu_input: Mutex<Option<Arc<GstGpu>>>,
    /// Copies the planes the engine reads of frames in ordinary host memory
    /// into pinned memory in the sink pads' buffer probe, when the engine
    /// computes on a GPU (set at start; `pinned_copy`).
    copier: Mutex<Option<Arc<PinnedCopier>>>,
    /// The number of the next requested `dist_sink_N`.
    next_pad: Mutex<u32>,
    /// The recycled pinned blocks behind the sink pads' pools and copies,
    /// when the engine computes on a GPU (set at start).
    blocks: Mutex<Option<PinnedBlocks>>,
    /// The pipeline is live (the latency query said so).
    live: AtomicBool,
    /// The metrics every rendition feeds and the endpoint that serves
    /// them (`metrics-address`; set at start).
    metrics: Mutex<Option<(Metrics, MetricsServer)>>,
    /// The distorted frames are paired by content (`align` is not off;
    /// set at start).
    aligning: AtomicBool,
    /// Since when a live deadline has passed with no reference frame
    /// (`awaiting_reference`).
    reference_awaited: Mutex<Option<std::time::Instant>>,
}

impl VmafHip {
    /// The metrics endpoint of `metrics-address`, started: the metrics the
    /// renditions feed, or None without one. An address it cannot listen
    /// on fails the start.
    fn serve_metrics(&self, settings: &Settings) -> Result<Option<Metrics>, gst::ErrorMessage> {
        let Some(address) = settings.metrics_address.as_deref() else {
            return Ok(None);
        };
        let metrics = Metrics::default();
        let server = MetricsServer::start(address, metrics.clone()).map_err(|e| {
            gst::error_msg!(gst::ResourceError::OpenRead, ("{e}"), ["metrics-address"])
        })?;
        gst::info!(CAT, imp = self, "metrics at {}", server.url);
        *self.metrics.lock().unwrap() = Some((metrics.clone(), server));
        Ok(Some(metrics))
    }

    /// Planes the sink pads copied into pinned memory since start.
    fn copied_on_arrival(&self) -> u64 {
        self.pinned_copier().map_or(0, |c| c.copied())
    }

    /// See `copier`; read by the sink pads' probe for every buffer.
    pub(crate) fn pinned_copier(&self) -> Option<Arc<PinnedCopier>> {
        self.copier.lock().unwrap().clone()
    }

    /// See `gpu_input`; read by the sink pads for every buffer.
    pub(crate) fn gpu_input(&self) -> Option<Arc<GstGpu>> {
        self.gpu_input.lock().unwrap().clone()
    }

    /// `gpu_input`, opened from the settings when asked before `start`:
    /// decoders ask for a CUDA context when they open (NULL→READY), before
    /// the element starts. `start` then sets it from the engine's device.
    fn gpu_input_for_query(&self) -> Option<Arc<GstGpu>> {
        if let Some(g) = self.gpu_input() {
            return Some(g);
        }
        if self.state.lock().unwrap().is_some() {
            return None; // started without one: the engine is not on a GPU
        }
        let (backend, vendor, device_id) = {
            let s = self.settings.lock().unwrap();
            (s.backend, s.vendor, s.device_id)
        };
        if backend == Backend::Cpu {
            return None;
        }
        let g = match gpu::shared_device(hip_vendor(vendor), device_id.max(0) as usize)
            .map_err(|e| e.to_string())
            .and_then(|dev| GstGpu::for_device(&dev))
        {
            Ok(g) => g,
            Err(why) => {
                gst::debug!(
                    CAT,
                    imp = self,
                    "no GPU context to offer before start: {why}"
                );
                return None;
            }
        };
        *self.gpu_input.lock().unwrap() = Some(g.clone());
        Some(g)
    }

    /// Whether the sink pads take buffers whose caps carry `features`:
    /// system memory always; GPU memory of the engine's device once started
    /// with it readable in place; before start (linking), GPU memory unless
    /// the backend is the CPU, so that `cudaupload ! vmafhip` links and the
    /// start decides.
    fn takes_features(&self, features: Option<&gst::CapsFeaturesRef>) -> bool {
        let Some(features) = features.filter(|f| !f.is_any() && !f.is_empty()) else {
            return true;
        };
        if features.contains(gst::CAPS_FEATURE_MEMORY_SYSTEM_MEMORY) {
            return true;
        }
        if self.state.lock().unwrap().is_none() {
            return self.settings.lock().unwrap().backend != Backend::Cpu
                && GpuMemoryKind::ALL
                    .iter()
                    .any(|k| features.contains(k.caps_feature()));
        }
        self.gpu_input()
            .is_some_and(|g| features.contains(g.kind().caps_feature()))
    }

    /// `caps` without the structures whose memory the sink pads cannot
    /// take, GPU memory first: upstream elements that can give either (a
    /// decoder, `cudaupload`) pick the first, and GPU memory is read in place.
    fn filter_caps(&self, caps: &gst::Caps) -> gst::Caps {
        let mut out = gst::Caps::new_empty();
        {
            let out = out.get_mut().expect("new caps");
            for gpu_pass in [true, false] {
                for (s, f) in caps.iter_with_features() {
                    let gpu = !f.is_any()
                        && !f.is_empty()
                        && !f.contains(gst::CAPS_FEATURE_MEMORY_SYSTEM_MEMORY);
                    if gpu == gpu_pass && self.takes_features(Some(f)) {
                        out.append_structure_full(s.to_owned(), Some(f.to_owned()));
                    }
                }
            }
        }
        out
    }
}

/// An engine opened from the settings.
struct Opened {
    engine: Box<dyn Engine>,
    /// Its description, for messages.
    name: String,
    /// The GPU it computes on, if any.
    device: Option<Arc<hip::Device>>,
    /// Why `backend=auto` fell back to the CPU.
    warning: Option<String>,
    /// Whether an extractor reads the chroma planes (`Plan::reads_chroma`).
    reads_chroma: bool,
}

/// The HIP layer's vendor for the `vendor` property.
fn hip_vendor(v: Vendor) -> hip::Vendor {
    match v {
        Vendor::Auto => hip::Vendor::Auto,
        Vendor::Amd => hip::Vendor::Amd,
        Vendor::Nvidia => hip::Vendor::Nvidia,
    }
}

/// An engine for one rendition: on the GPU, a backend sharing the ladder's
/// `reference` with the element's other renditions.
fn open_engine(s: &Settings, reference: &SharedReference) -> Result<Opened, gst::ErrorMessage> {
    let models = ModelSet::load(&s.model_filename).map_err(|e| {
        gst::error_msg!(
            gst::LibraryError::Settings,
            ["model-filename \"{}\": {e}", s.model_filename]
        )
    })?;
    if s.conf_interval && models.bootstrap.is_empty() {
        return Err(gst::error_msg!(
            gst::LibraryError::Settings,
            [
                "conf-interval needs a bootstrap model collection (the built-in vmaf_b_v0.6.3, or a collection file); \"{}\" is a single model",
                s.model_filename
            ]
        ));
    }
    let mut config = EngineConfig::new(models);
    config.flags = ModelFlags {
        disable_clip: s.disable_clip,
        enable_transform: s.enable_transform || s.phone_model,
    };
    config.threads = s.threads as usize;
    config.subsample = s.subsample.max(1);
    // Renditions of other sizes (dist_sink_%u) are scaled by the engine.
    config.scale = Some(s.scaler.method());
    for f in &s.features {
        let own = crate::extractors::extra_names();
        if !own.contains(&f.as_str()) {
            return Err(gst::error_msg!(
                gst::LibraryError::Settings,
                (
                    "features: \"{f}\" is not an extra extractor ({}; PSNR and SSIM have their own properties)",
                    own.join(", ")
                ),
                ["checking the settings at start"]
            ));
        }
        if !config.features.contains(f) {
            config.features.push(f.clone());
        }
    }
    // The switches of GStreamer's `vmaf`, after the extras.
    for (on, name) in [
        (s.psnr, "psnr"),
        (s.ssim, "float_ssim"),
        (s.ms_ssim, "float_ms_ssim"),
    ] {
        if on {
            config.features.push(name.into());
        }
    }
    type Gpu = (Box<dyn Engine>, Arc<hip::Device>);
    let open_hip = || -> Result<Gpu, String> {
        let plan = config.plan().map_err(|e| e.to_string())?;
        let options = HipOptions {
            vendor: hip_vendor(s.vendor),
            device_id: s.device_id.max(0) as usize,
            shared_reference: Some(reference.clone()),
            ..Default::default()
        };
        let backend = HipBackend::new(plan.clone(), &options).map_err(|e| e.to_string())?;
        let device = backend.device().clone();
        let engine: Box<dyn Engine> = if s.on_gpu_error.fails_over(s.backend) {
            let mut failover = Failover::new(backend, plan.clone(), config.threads);
            if s.on_gpu_error.resolve(s.backend) == OnGpuError::Retry {
                let delay = std::time::Duration::from_millis(s.gpu_retry_delay.into());
                failover = failover.with_retry(Retry::new(
                    move || {
                        HipBackend::new(plan.clone(), &options)
                            .map_err(|e| vmaf::VmafError::Backend(e.to_string()))
                    },
                    delay,
                ));
            }
            Box::new(Scorer::with_backend(&config, failover).map_err(|e| e.to_string())?)
        } else {
            Box::new(Scorer::with_backend(&config, backend).map_err(|e| e.to_string())?)
        };
        Ok((engine, device))
    };
    let cpu = || -> Result<Box<dyn Engine>, gst::ErrorMessage> {
        Scorer::cpu(&config)
            .map(|e| Box::new(e) as Box<dyn Engine>)
            .map_err(|e| gst::error_msg!(gst::LibraryError::Settings, ["{e}"]))
    };
    let looked_for = format!(
        "vendor={} device-id={}: AMD libamdhip64.so.7/.6/.5 + hiprtc, NVIDIA libcuda.so.1 + libnvrtc.so.13/.12",
        match s.vendor {
            Vendor::Auto => "auto",
            Vendor::Amd => "amd",
            Vendor::Nvidia => "nvidia",
        },
        s.device_id
    );
    let (engine, device, warning) = match s.backend {
        Backend::Hip => {
            let (engine, device) = open_hip().map_err(|e| {
                gst::error_msg!(
                    gst::LibraryError::Init,
                    ["backend=hip: no usable GPU ({looked_for}): {e}"]
                )
            })?;
            (engine, Some(device), None)
        }
        Backend::Cpu => (cpu()?, None, None),
        Backend::Auto => match open_hip() {
            Ok((engine, device)) => (engine, Some(device), None),
            Err(e) => (
                cpu()?,
                None,
                Some(format!(
                    "backend=auto: no usable GPU ({e}); computing VMAF on the CPU"
                )),
            ),
        },
    };
    Ok(Opened {
        reads_chroma: config.plan().is_ok_and(|p| p.reads_chroma()),
        name: engine.describe(),
        engine,
        device,
        warning,
    })
}

/// Whether `buf` lies in one of GStreamer's GPU memories, which a host
/// mapping would download.
pub(super) fn in_gpu_memory(buf: &gst::BufferRef) -> bool {
    buf.iter_memories().any(|m| {
        GpuMemoryKind::ALL
            .iter()
            .any(|k| m.is_type(k.memory_type()))
    })
}

/// The engine's layout and depth of a GStreamer video format.
fn engine_format(fmt: gst_video::VideoFormat) -> Result<(PixelFormat, u8), String> {
    use gst_video::VideoFormat as F;
    Ok(match fmt {
        F::I420 | F::Yv12 | F::Nv12 => (PixelFormat::Yuv420, 8),
        F::P01010le => (PixelFormat::Yuv420, 10),
        F::P012Le => (PixelFormat::Yuv420, 12),
        F::Y42b => (PixelFormat::Yuv422, 8),
        F::Y444 => (PixelFormat::Yuv444, 8),
        F::Gray8 => (PixelFormat::Gray, 8),
        F::I42010le => (PixelFormat::Yuv420, 10),
        F::I42210le => (PixelFormat::Yuv422, 10),
        F::Y44410le => (PixelFormat::Yuv444, 10),
        F::I42012le => (PixelFormat::Yuv420, 12),
        F::I42212le => (PixelFormat::Yuv422, 12),
        F::Y44412le => (PixelFormat::Yuv444, 12),
        F::Gray16Le => (PixelFormat::Gray, 16),
        other => return Err(format!("unsupported format {other:?}")),
    })
}

/// Whether two sink pads' formats can be scored against each other: the
/// same chroma layout and bit depth, in any memory layout (I420, YV12 and
/// NV12 are all 8-bit 4:2:0; NV12's chroma is split where it is read).
fn comparable_formats(a: gst_video::VideoFormat, b: gst_video::VideoFormat) -> bool {
    match (engine_format(a), engine_format(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// The formats whose deep samples sit in the high bits of 16 with U and V
/// interleaved (a 10- or 12-bit decoder's output: P010, P012), and their
/// depth.
fn msb_semi_planar(fmt: gst_video::VideoFormat) -> Option<u8> {
    match fmt {
        gst_video::VideoFormat::P01010le => Some(10),
        gst_video::VideoFormat::P012Le => Some(12),
        _ => None,
    }
}

/// A frame mapped for the device (`gst_gpu::mapped_for_device`) as an
/// engine picture of device planes, in component order (Y, U, V).
fn device_picture(
    frame: &gst_video::VideoFrameRef<&gst::BufferRef>,
) -> Result<Picture<'static>, String> {
    let info = frame.info();
    let (pf, bpc) = engine_format(info.format())?;
    // NV12's, P010's and P012's U and V share plane 1: V starts one
    // sample in. P010 and P012 keep their bits in the high bits of 16.
    let msb = msb_semi_planar(info.format());
    let semi_planar = msb.is_some() || info.format() == gst_video::VideoFormat::Nv12;
    let sample = if msb.is_some() { 2 } else { 1 };
    let mut planes = Vec::new();
    for c in 0..pf.plane_count() as u8 {
        let p = info.comp_plane(c) as usize;
        let (ptr, bytes, pitch) =
            gst_gpu::device_plane(frame, p).ok_or_else(|| format!("GPU frame has no plane {p}"))?;
        let interleaved = semi_planar && c > 0;
        let skip = if interleaved && c == 2 { sample } else { 0 };
        planes.push(DevicePlane {
            ptr: ptr + skip,
            bytes: bytes.saturating_sub(skip as usize),
            width: info.comp_width(c) as usize,
            height: info.comp_height(c) as usize,
            pitch,
            interleaved,
            msb_shift: msb.map_or(0, |depth| 16 - depth),
        });
    }
    Picture::new_device(pf, bpc, &planes).map_err(|e| e.to_string())
}

/// Borrow a mapped frame as an engine picture (NV12 chroma is deinterleaved;
/// a frame mapped for the device gives device planes).
/// A frame pair's buffers (host memory), mapped again when the CPU engine
/// takes a stream over from a failed GPU (`vmaf::Failover`).
struct BufferReplay([(gst::Buffer, gst_video::VideoInfo); 2]);

impl BufferReplay {
    /// The replay of two mapped frames, unless one lies in GPU memory.
    fn of(
        r: &gst_video::VideoFrameRef<&gst::BufferRef>,
        d: &gst_video::VideoFrameRef<&gst::BufferRef>,
        buffers: (&gst::Buffer, &gst::Buffer),
    ) -> Option<Arc<dyn vmaf::Replay>> {
        if gst_gpu::mapped_for_device(r) || gst_gpu::mapped_for_device(d) {
            return None;
        }
        Some(Arc::new(BufferReplay([
            (buffers.0.clone(), r.info().clone()),
            (buffers.1.clone(), d.info().clone()),
        ])))
    }
}

impl vmaf::Replay for BufferReplay {
    fn pictures(
        &self,
        f: &mut dyn FnMut(&Picture<'_>, &Picture<'_>) -> Result<(), vmaf::VmafError>,
    ) -> Result<(), vmaf::VmafError> {
        let lost = |e: String| vmaf::VmafError::Backend(format!("remaking a kept frame: {e}"));
        let [(rb, ri), (db, di)] = &self.0;
        let r = gst_video::VideoFrameRef::from_buffer_ref_readable(rb.as_ref(), ri)
            .map_err(|_| lost("its buffer no longer maps".into()))?;
        let d = gst_video::VideoFrameRef::from_buffer_ref_readable(db.as_ref(), di)
            .map_err(|_| lost("its buffer no longer maps".into()))?;
        with_picture(&r, |rp| with_picture(&d, |dp| f(rp, dp)))
            .map_err(lost)?
            .map_err(lost)?
    }
}

fn with_picture<R>(
    frame: &gst_video::VideoFrameRef<&gst::BufferRef>,
    f: impl FnOnce(&Picture<'_>) -> R,
) -> Result<R, String> {
    if gst_gpu::mapped_for_device(frame) {
        return Ok(f(&device_picture(frame)?));
    }
    let info = frame.info();
    let (w, h) = (info.width() as usize, info.height() as usize);
    let fmt = info.format();
    use gst_video::VideoFormat as F;
    if let Some(depth) = msb_semi_planar(fmt) {
        return with_msb_picture(frame, depth, f);
    }
    let (pf, bpc) = engine_format(fmt)?;
    let nplanes = pf.plane_count();
    let err = |e: vmaf::VmafError| e.to_string();
    let comp_size =
        |c: u8| -> (usize, usize) { (info.comp_width(c) as usize, info.comp_height(c) as usize) };
    if bpc == 8 {
        let mut deinterleaved: Vec<Vec<u8>> = Vec::new();
        let mut planes: Vec<Plane<'_, u8>> = Vec::new();
        if fmt == F::Nv12 {
            let (cw, ch) = comp_size(1);
            let uv = frame.plane_data(1).map_err(|e| e.to_string())?;
            let stride = frame.plane_stride()[1] as usize;
            let mut u = Vec::with_capacity(cw * ch);
            let mut v = Vec::with_capacity(cw * ch);
            for y in 0..ch {
                let row = &uv[y * stride..y * stride + 2 * cw];
                u.extend(row.iter().step_by(2));
                v.extend(row.iter().skip(1).step_by(2));
            }
            deinterleaved = vec![u, v];
        }
        let y = frame.plane_data(0).map_err(|e| e.to_string())?;
        planes.push(Plane::new(y, w, h, frame.plane_stride()[0] as usize).map_err(err)?);
        if nplanes == 3 {
            if fmt == F::Nv12 {
                let (cw, ch) = comp_size(1);
                for p in &deinterleaved {
                    planes.push(Plane::new(p, cw, ch, cw).map_err(err)?);
                }
            } else {
                // Component order (Y, U, V) regardless of plane order (YV12).
                for c in 1..3u8 {
                    let (cw, ch) = comp_size(c);
                    let p = info.comp_plane(c);
                    let data = frame.plane_data(p).map_err(|e| e.to_string())?;
                    planes.push(
                        Plane::new(data, cw, ch, frame.plane_stride()[p as usize] as usize)
                            .map_err(err)?,
                    );
                }
            }
        }
        let pic = Picture::new_u8(pf, &planes).map_err(err)?;
        Ok(f(&pic))
    } else {
        // Samples are read in place where the plane is aligned (then pinned
        // memory stays pinned for the upload); otherwise converted once.
        let mut samples: Vec<(Cow<'_, [u16]>, usize, usize, usize)> = Vec::new();
        for c in 0..nplanes as u8 {
            let (cw, ch) = comp_size(c);
            let p = info.comp_plane(c);
            let data = frame.plane_data(p).map_err(|e| e.to_string())?;
            let stride = frame.plane_stride()[p as usize] as usize;
            if let Some(view) = hip::u16_view(data).filter(|_| stride.is_multiple_of(2)) {
                samples.push((Cow::Borrowed(view), cw, ch, stride / 2));
                continue;
            }
            let mut v = Vec::with_capacity(cw * ch);
            for y in 0..ch {
                let row = &data[y * stride..y * stride + 2 * cw];
                v.extend(
                    row.chunks_exact(2)
                        .map(|b| u16::from_le_bytes([b[0], b[1]])),
                );
            }
            samples.push((Cow::Owned(v), cw, ch, cw));
        }
        let planes: Vec<Plane<'_, u16>> = samples
            .iter()
            .map(|(v, cw, ch, stride)| Plane::new(v, *cw, *ch, *stride))
            .collect::<Result<_, _>>()
            .map_err(err)?;
        let pic = Picture::new_u16(pf, bpc, &planes).map_err(err)?;
        Ok(f(&pic))
    }
}

/// A P010 or P012 frame (`depth`-bit samples in the high bits of 16,
/// chroma interleaved) as a planar picture of that depth: every sample
/// shifted down, the chroma split.
fn with_msb_picture<R>(
    frame: &gst_video::VideoFrameRef<&gst::BufferRef>,
    depth: u8,
    f: impl FnOnce(&Picture<'_>) -> R,
) -> Result<R, String> {
    let info = frame.info();
    let (w, h) = (info.width() as usize, info.height() as usize);
    let (cw, ch) = (info.comp_width(1) as usize, info.comp_height(1) as usize);
    let samples = |p: u32, count: usize, rows: usize| -> Result<Vec<Vec<u16>>, String> {
        let data = frame.plane_data(p).map_err(|e| e.to_string())?;
        let stride = frame.plane_stride()[p as usize] as usize;
        (0..rows)
            .map(|y| {
                let row = data
                    .get(y * stride..y * stride + 2 * count)
                    .ok_or_else(|| {
                        format!("{:?} plane {p} shorter than its rows", info.format())
                    })?;
                Ok(row
                    .chunks_exact(2)
                    .map(|b| u16::from_le_bytes([b[0], b[1]]) >> (16 - depth))
                    .collect())
            })
            .collect()
    };
    let luma: Vec<u16> = samples(0, w, h)?.concat();
    let uv = samples(1, 2 * cw, ch)?.concat();
    let u: Vec<u16> = uv.iter().step_by(2).copied().collect();
    let v: Vec<u16> = uv.iter().skip(1).step_by(2).copied().collect();
    let err = |e: vmaf::VmafError| e.to_string();
    let planes = [
        Plane::new(&luma, w, h, w).map_err(err)?,
        Plane::new(&u, cw, ch, cw).map_err(err)?,
        Plane::new(&v, cw, ch, cw).map_err(err)?,
    ];
    let pic = Picture::new_u16(PixelFormat::Yuv420, depth, &planes).map_err(err)?;
    Ok(f(&pic))
}

/// Late distorted frames in live pipelines (`late`): the reference frames
/// wait, in order, and are scored when their distorted frames arrive.
impl VmafHip {
    /// What becomes of `pad`'s frames on arrival: a distorted input's go
    /// to the waiting reference frames rather than through the
    /// aggregator's queue in a live pipeline with `max-pending` above 0;
    /// with `align`, to its tracker (and on to the aggregator, which paces
    /// the inputs, unless the pipeline is live).
    pub(crate) fn holding(&self, pad: &gst::Pad) -> Holding {
        if pad == self.ref_pad.upcast_ref::<gst::Pad>() {
            return Holding::No;
        }
        let live = self.live.load(Ordering::Relaxed);
        if self.aligning.load(Ordering::Relaxed) {
            Holding::Aligned { live }
        } else if live && self.settings.lock().unwrap().max_pending > 0 {
            Holding::Late
        } else {
            Holding::No
        }
    }

    pub(crate) fn holds_late_frames(&self, pad: &gst::Pad) -> bool {
        self.holding(pad) != Holding::No
    }

    fn max_pending(&self) -> gst::ClockTime {
        gst::ClockTime::from_nseconds(self.settings.lock().unwrap().max_pending)
    }

    /// `buffer` mapped for the engine: for the device where it lies in
    /// the element's GPU memory, else for the host.
    fn map_for_engine(
        &self,
        buffer: &gst::Buffer,
        info: &gst_video::VideoInfo,
    ) -> Result<gst_video::VideoFrame<gst_video::video_frame::Readable>, gst::FlowError> {
        if let Some(frame) = self.gpu_input().and_then(|g| g.map_owned(buffer, info)) {
            return Ok(frame);
        }
        gst_video::VideoFrame::from_buffer_readable(buffer.clone(), info).map_err(|_| {
            gst::error!(CAT, imp = self, "cannot map a waiting frame");
            gst::FlowError::Error
        })
    }

    /// This output frame's reference, put to wait for input `pad`'s frame,
    /// then every waiting frame whose distorted frame is known scored;
    /// returns the messages of the frames that became final.
    fn score_late(
        &self,
        token: &gst_video::subclass::AggregateFramesToken,
        (ref_frame, reference): ReferenceFrame<'_>,
        pad: &gst_video::VideoAggregatorPad,
        outbuf: &gst::BufferRef,
    ) -> Result<Vec<VmafFrameMessage>, gst::FlowError> {
        let name = pad.name();
        let Some((reference, at)) = reference.zip(running_time(&self.ref_pad, reference)) else {
            // No running time to pair by.
            return self.score_input(token, (ref_frame, reference), pad, outbuf);
        };
        // A frame queued before the pipeline was known to be live.
        let queued = match (pad.current_buffer(token), pad.prepared_frame(token)) {
            (Some(b), Some(f)) => running_time(pad, Some(&b)).map(|t| Timed {
                at: t,
                duration: b.duration(),
                frame: (b, f.info().clone()),
            }),
            _ => None,
        };
        self.take_arrived(pad, queued);
        {
            let mut guard = self.state.lock().unwrap();
            let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
            let number = st.references;
            let Some(r) = st.rendition(&name) else {
                return Ok(Vec::new());
            };
            r.late.wait(waiting_reference(
                (ref_frame, reference),
                at,
                outbuf,
                number,
            ));
        }
        self.score_ready(&name, at, pad.is_eos())
    }

    /// Gives the distorted frames that reached `pad` (and `queued`, one
    /// the aggregator holds) to its rendition's waiting reference frames.
    fn take_arrived(&self, pad: &gst_video::VideoAggregatorPad, queued: Option<Timed<Arrived>>) {
        let arrived = pad
            .downcast_ref::<super::VmafHipPad>()
            .map(|p| p.imp().take_arrived(true))
            .unwrap_or_default();
        let mut guard = self.state.lock().unwrap();
        if let Some(r) = guard.as_mut().and_then(|st| st.rendition(&pad.name())) {
            for a in queued
                .into_iter()
                .chain(arrived.into_iter().map(|(a, _)| a))
            {
                r.late.arrive(a);
            }
        }
    }

    /// Scores input `name`'s waiting reference frames whose distorted
    /// frames are known, or that waited past `max-pending` (`now`: the
    /// newest reference frame's running time); the rest are copied, so
    /// that no upstream buffer is held.
    fn score_ready(
        &self,
        name: &str,
        now: gst::ClockTime,
        ended: bool,
    ) -> Result<Vec<VmafFrameMessage>, gst::FlowError> {
        let bound = self.max_pending();
        let mut msgs = Vec::new();
        loop {
            let next = {
                let mut guard = self.state.lock().unwrap();
                let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
                match st.rendition(name) {
                    Some(r) => r.late.next(now, bound, ended),
                    None => return Ok(msgs),
                }
            };
            let Some((waiting, paired)) = next else { break };
            gst::log!(
                CAT,
                imp = self,
                "{name}: reference frame at {} paired with {:?}",
                waiting.at,
                match &paired {
                    Paired::Frame(d) => Some(d.at),
                    _ => None,
                }
            );
            match paired {
                Paired::Frame(d) => msgs.extend(self.score_waiting(name, waiting.frame, d)?),
                Paired::Missing => self.warn_once_no_distorted(name, waiting.frame.pts)?,
                Paired::Late(waited) => self.note_late(name, &waiting.frame, waited, bound)?,
            }
        }
        let mut guard = self.state.lock().unwrap();
        if let Some(r) = guard.as_mut().and_then(|st| st.rendition(name)) {
            for w in r.late.waiting_mut() {
                w.frame.own_copy();
            }
        }
        Ok(msgs)
    }

    /// Scores a waiting reference frame against its distorted frame.
    fn score_waiting(
        &self,
        name: &str,
        w: WaitingRef,
        d: Timed<Arrived>,
    ) -> Result<Vec<VmafFrameMessage>, gst::FlowError> {
        let (dist, dist_info) = d.frame;
        let rf = self.map_for_engine(&w.buffer, &w.info)?;
        let df = self.map_for_engine(&dist, &dist_info)?;
        let (rf, df) = (rf.as_video_frame_ref(), df.as_video_frame_ref());
        self.check_frames(rf.info(), df.info(), name)?;
        self.note_pairing(name, Some(d.at))?;
        let replay = BufferReplay::of(&rf, &df, (&w.buffer, &dist));
        let keep: KeepAlive = Box::new((w.buffer.clone(), dist));
        let timing = FrameTiming {
            pts: w.pts,
            duration: w.duration,
            reference: Some(w.reference),
        };
        self.score(name, &rf, &df, (Some(keep), replay), timing)?
            .map_err(|err| {
                gst::element_imp_error!(
                    self,
                    gst::StreamError::Failed,
                    ("VMAF failed on {name}: {err}"),
                    ["while scoring a frame that waited"]
                );
                gst::FlowError::Error
            })
    }

    /// A reference frame not scored: its distorted frame did not come
    /// within `max-pending`. Counted, with one warning per input.
    fn note_late(
        &self,
        name: &str,
        w: &WaitingRef,
        waited: gst::ClockTime,
        bound: gst::ClockTime,
    ) -> Result<(), gst::FlowError> {
        let warn = {
            let mut guard = self.state.lock().unwrap();
            let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
            st.rendition(name).is_some_and(|r| {
                r.pairings.unscored();
                !std::mem::replace(&mut r.late_warned, true)
            })
        };
        gst::info!(
            CAT,
            imp = self,
            "{name}: no frame for {} after {waited}: not scored",
            w.pts.display()
        );
        if warn {
            gst::element_imp_warning!(
                self,
                gst::StreamError::Failed,
                (
                    "{name}: no distorted frame for the reference frame at {} within max-pending ({bound}; it waited {waited}, {} more): not scored; raise max-pending if the distorted branch is that late",
                    w.pts.display(),
                    waited.saturating_sub(bound)
                ),
                ["the distorted branch is later than max-pending"]
            );
        }
        Ok(())
    }

    /// The reference has ended: the frames still waiting get their
    /// distorted frames as they arrive, until each input has ended or
    /// `max-pending` has passed (then they are not scored).
    fn finish_late(&self) -> Result<(), gst::FlowError> {
        let start = std::time::Instant::now();
        let last = self
            .state
            .lock()
            .unwrap()
            .as_ref()
            .and_then(|st| st.last_ref)
            .unwrap_or_default();
        loop {
            let now = last + gst::ClockTime::try_from(start.elapsed()).unwrap_or_default();
            let mut waiting = 0;
            let mut msgs = Vec::new();
            for pad in self.distorted_pads() {
                let name = pad.name();
                if self.aligning.load(Ordering::Relaxed) {
                    let (m, held) = self.finish_aligned(&pad, now)?;
                    msgs.extend(m);
                    waiting += held;
                    continue;
                }
                self.take_arrived(&pad, None);
                msgs.extend(self.score_ready(&name, now, has_ended(&pad))?);
                if let Some(r) = self
                    .state
                    .lock()
                    .unwrap()
                    .as_mut()
                    .and_then(|st| st.rendition(&name))
                {
                    waiting += r.late.waiting();
                }
            }
            self.post_scored(&msgs);
            if waiting == 0 || self.ref_pad.pad_flags().contains(gst::PadFlags::FLUSHING) {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// A live deadline passed with no reference frame queued: whether to
    /// wait for it (up to `max-pending` from that deadline), so
    /// that a late reference frame is scored rather than passed over. The
    /// caller returns to the aggregator meanwhile, which handles the
    /// pads' events and queries (a new stream's caps and allocation
    /// query come before its first frame, and wait for that).
    fn awaiting_reference(&self) -> bool {
        let mut since = self.reference_awaited.lock().unwrap();
        if !self.holds_late_frames(self.dist_pad.upcast_ref())
            || self.ref_pad.has_buffer()
            || has_ended(&self.ref_pad)
            || self.ref_pad.pad_flags().contains(gst::PadFlags::FLUSHING)
        {
            *since = None;
            return false;
        }
        let bound = std::time::Duration::from_nanos(self.max_pending().nseconds());
        let waiting = since.get_or_insert_with(std::time::Instant::now).elapsed() < bound;
        if !waiting {
            // Given up on this one: the next deadline waits afresh.
            *since = None;
        }
        waiting
    }
}

impl VmafHip {
    /// No reference frame: the end of the stream once the reference has
    /// ended (the output follows it), else a gap, passed on as a zeroed
    /// frame of the right size marked GAP.
    fn no_reference_frame(
        &self,
        outbuf: &mut gst::BufferRef,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        if self.ref_pad.is_eos() {
            if let Some(more) = self.follow_distorted_to_end() {
                return more;
            }
            self.finish_late()?;
            if !self.aligning.load(Ordering::Relaxed) {
                // Aligned, the tracker counts them.
                self.note_distorted_past_end();
            }
            return Err(gst::FlowError::Eos);
        }
        let size = self
            .obj()
            .src_pad()
            .current_caps()
            .and_then(|c| gst_video::VideoInfo::from_caps(&c).ok())
            .map_or(0, |info| info.size());
        outbuf.append_memory(gst::Memory::from_mut_slice(vec![0u8; size]));
        outbuf.set_flags(gst::BufferFlags::GAP);
        Ok(gst::FlowSuccess::Ok)
    }

    /// The reference has ended while distorted inputs have not, so they
    /// have frames left (a non-live aggregator calls only once every pad
    /// has a frame or has ended): each such input is marked, for its pooled
    /// message and results, with one warning.
    fn note_distorted_past_end(&self) {
        let longer: Vec<String> = self
            .distorted_pads()
            .iter()
            .filter(|p| !p.is_eos())
            .map(|p| p.name().to_string())
            .collect();
        let newly = {
            let mut guard = self.state.lock().unwrap();
            let Some(st) = guard.as_mut() else { return };
            longer
                .iter()
                .filter(|n| {
                    st.rendition(n).is_some_and(|r| {
                        !std::mem::replace(&mut r.pairings.counts.distorted_past_end, true)
                    })
                })
                .cloned()
                .collect::<Vec<_>>()
        };
        if !newly.is_empty() {
            gst::element_imp_warning!(
                self,
                gst::StreamError::Failed,
                (
                    "ref_sink ended before {}: the distorted frames past the reference's end are not scored",
                    newly.join(", ")
                ),
                ["ref_sink EOS"]
            );
        }
    }

    /// `src` passes the reference through without copying pixels, as it
    /// came (not the buffer the sink pad rebuilt around a pinned copy).
    fn pass_reference_on(
        &self,
        reference: &gst::Buffer,
        outbuf: &mut gst::BufferRef,
    ) -> Result<(), gst::FlowError> {
        let reference =
            super::pinned_copy::original(reference).unwrap_or_else(|| reference.clone());
        if reference.n_memory() == 1 && !in_gpu_memory(&reference) {
            // The output's memory holds the whole reference buffer, so a
            // pooled (pinned) reference goes back to its pool, intact,
            // only when downstream is done with it. Sharing its memory
            // instead would make the pool discard it as not writable.
            let mapped = reference
                .clone()
                .into_mapped_buffer_readable()
                .map_err(|_| gst::FlowError::Error)?;
            outbuf.append_memory(gst::Memory::from_slice(mapped));
            reference
                .copy_into(outbuf, gst::BufferCopyFlags::META, ..)
                .map_err(|_| gst::FlowError::Error)
        } else {
            reference
                .copy_into(
                    outbuf,
                    gst::BufferCopyFlags::MEMORY | gst::BufferCopyFlags::META,
                    ..,
                )
                .map_err(|_| gst::FlowError::Error)
        }
    }

    /// A reference of unknown (variable) frame rate, as an H.264 stream
    /// without timing in its headers gives: GstVideoAggregator stamps
    /// every output frame at its segment's start then, so the frame is
    /// stamped with the reference frame's own time instead (the messages,
    /// windows and reports go by it).
    fn stamp_variable_rate(&self, reference: &gst::Buffer, outbuf: &mut gst::BufferRef) {
        let variable = self
            .ref_pad
            .current_caps()
            .and_then(|c| {
                c.structure(0)
                    .and_then(|s| s.get::<gst::Fraction>("framerate").ok())
            })
            .is_some_and(|f| f.numer() == 0);
        if !variable {
            return;
        }
        let src = self.obj().src_pad().segment();
        let at = running_time(&self.ref_pad, Some(reference)).and_then(|rt| {
            src.downcast_ref::<gst::ClockTime>()
                .and_then(|seg| seg.position_from_running_time(rt))
        });
        if let Some(pts) = at {
            outbuf.set_pts(pts);
            outbuf.set_duration(reference.duration());
        }
    }

    /// The element's own latency (live pipelines): the wait for a late
    /// distorted frame, and what the distorted branch's first frame took
    /// beyond its deadline (`live`).
    fn update_latency(&self) {
        let (setting, first) = match self.state.lock().unwrap().as_ref() {
            Some(st) => (st.settings.late_frame_wait, st.first_frame_delay),
            None => return,
        };
        let fps = self
            .ref_pad
            .current_caps()
            .and_then(|c| gst_video::VideoInfo::from_caps(&c).ok())
            .map(|info| info.fps());
        let wait = if setting < 0 && self.settings.lock().unwrap().max_pending > 0 {
            // Late frames are waited for without holding the reference up.
            gst::ClockTime::ZERO
        } else {
            live::late_frame_wait(setting, fps) + first
        };
        gst::debug!(
            CAT,
            imp = self,
            "own latency {wait} (late-frame wait, first frame's delay {first})"
        );
        self.obj().set_latency(wait, Some(wait));
    }

    /// A live deadline passed with a reference frame ready and the
    /// distorted branch's first frame not there yet: waits for it (unless
    /// `late-frame-wait` is 0), then adds what it took to the latency, so
    /// that the frames queued behind it have time to come as well.
    fn wait_for_first_distorted(&self) {
        let awaiting = self.state.lock().unwrap().as_ref().is_some_and(|st| {
            st.settings.late_frame_wait != 0
                && st.settings.max_pending == 0
                && st.settings.align == Align::Off
                && st
                    .renditions
                    .first()
                    .is_some_and(|r| r.pairings.awaiting_first())
        });
        if !awaiting || !self.ref_pad.has_buffer() || self.dist_pad.has_buffer() {
            return;
        }
        let pads = [
            self.obj().src_pad().clone().upcast(),
            self.ref_pad.clone().upcast(),
            self.dist_pad.clone().upcast(),
        ];
        let waited = live::wait_for_first_frame(self.dist_pad.upcast_ref(), &pads);
        gst::info!(
            CAT,
            imp = self,
            "waiting for dist_sink's first frame: {waited:?}"
        );
        let mut guard = self.state.lock().unwrap();
        let Some(st) = guard.as_mut() else { return };
        match waited {
            FirstFrame::Came(took) => {
                st.first_frame_delay = gst::ClockTime::try_from(took).unwrap_or_default();
                drop(guard);
                self.update_latency();
            }
            FirstFrame::TimedOut => {
                if let Some(r) = st.renditions.first_mut() {
                    r.pairings.start();
                }
            }
            FirstFrame::Stopped => {}
        }
    }

    /// The distorted inputs: `dist_sink`, then the requested `dist_sink_%u`.
    fn distorted_pads(&self) -> Vec<gst_video::VideoAggregatorPad> {
        let mut pads = vec![self.dist_pad.clone()];
        pads.extend(
            self.obj()
                .sink_pads()
                .into_iter()
                .filter(|p| p.name().starts_with("dist_sink_"))
                .filter_map(|p| p.downcast().ok()),
        );
        pads
    }

    /// The rendition of a requested pad, made at its first frame: its own
    /// engine (on the same backend), results file and report. False for a
    /// pad being released.
    fn ensure_rendition(
        &self,
        pad: &gst_video::VideoAggregatorPad,
    ) -> Result<bool, gst::FlowError> {
        let name = pad.name().to_string();
        let ((settings, shared_reference), first_on_gpu) = {
            let mut guard = self.state.lock().unwrap();
            let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
            if st.released.contains(&name) {
                return Ok(false);
            }
            if st.rendition(&name).is_some() {
                return Ok(true);
            }
            (
                (st.settings.clone(), st.shared_reference.clone()),
                st.device.is_some(),
            )
        };
        let label = pad.property::<Option<String>>("label");
        let made = open_engine(&settings, &shared_reference).and_then(|o| {
            // dist_sink's engine warned already if it is on the CPU too.
            if let Some(w) = o.warning.as_ref().filter(|_| first_on_gpu) {
                gst::element_imp_warning!(
                    self,
                    gst::LibraryError::Init,
                    ("{name}: {w}"),
                    ["backend=auto"]
                );
            }
            let files = Files {
                results: pad.property("results-filename"),
                report: pad.property("report-filename"),
            };
            Rendition::new(
                (name.clone(), label, false),
                files,
                (o.engine, o.name),
                &settings,
            )
        });
        let mut rendition = made.map_err(|e| {
            self.post_error_message(e);
            gst::FlowError::Error
        })?;
        rendition.metrics = self.metrics.lock().unwrap().as_ref().map(|m| m.0.clone());
        gst::info!(CAT, imp = self, "{name}: scored with {}", rendition.backend);
        if let Some(st) = self.state.lock().unwrap().as_mut() {
            st.renditions.push(rendition);
        }
        Ok(true)
    }

    /// No frame on a distorted input (it ended, has a gap, or has not
    /// started): warns once per input; the reference frames pass through
    /// unscored against it until it has one.
    fn warn_once_no_distorted(
        &self,
        name: &str,
        pts: Option<gst::ClockTime>,
    ) -> Result<(), gst::FlowError> {
        let warn = {
            let mut guard = self.state.lock().unwrap();
            let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
            // None: the pad is being released.
            st.rendition(name).is_some_and(|r| {
                r.pairings.unscored();
                !std::mem::replace(&mut r.no_frame_warned, true)
            })
        };
        if warn {
            gst::element_imp_warning!(
                self,
                gst::StreamError::Failed,
                (
                    "{name} has no frame for {}: reference frames pass through unscored until it has",
                    pts.display()
                ),
                ["{name} ended or has a gap"]
            );
        }
        Ok(())
    }

    /// Whether this reference frame was scored already (the aggregator
    /// repeats it when the distorted stream runs faster), by its own
    /// running time; the first time, also learns the inputs' names for the
    /// reports (asked outside the state lock: the query travels upstream).
    fn is_repeated_reference(
        &self,
        reference: Option<&gst::Buffer>,
    ) -> Result<bool, gst::FlowError> {
        let ref_time = running_time(&self.ref_pad, reference);
        let ask_inputs = {
            let mut guard = self.state.lock().unwrap();
            let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
            if ref_time.is_some() && ref_time == st.last_ref {
                return Ok(true);
            }
            st.last_ref = ref_time;
            // A new reference frame, known to the engines by its number.
            st.references += 1;
            let duration = reference.and_then(|b| b.duration());
            for r in &mut st.renditions {
                r.pairings.reference(ref_time, duration);
            }
            st.renditions.iter().any(Rendition::wants_inputs)
        };
        if ask_inputs {
            let reference = input_name(&self.ref_pad);
            let named: Vec<(String, String)> = self
                .distorted_pads()
                .iter()
                .map(|p| (p.name().to_string(), input_name(p)))
                .collect();
            if let Some(st) = self.state.lock().unwrap().as_mut() {
                for (name, distorted) in named {
                    if let Some(r) = st.rendition(&name).filter(|r| r.wants_inputs()) {
                        r.inputs = Some([reference.clone(), distorted]);
                    }
                }
            }
        }
        Ok(false)
    }

    /// Counts a reference frame scored against input `name`'s frame at
    /// running time `dist` (fresh, or repeated).
    fn note_pairing(&self, name: &str, dist: Option<gst::ClockTime>) -> Result<(), gst::FlowError> {
        let mut guard = self.state.lock().unwrap();
        let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
        if let Some(r) = st.rendition(name) {
            r.pairings.scored(dist);
        }
        Ok(())
    }

    /// Scores this output frame's reference against one distorted input's
    /// frame; returns the messages of the frames that became final.
    fn score_input(
        &self,
        token: &gst_video::subclass::AggregateFramesToken,
        (ref_frame, reference): ReferenceFrame<'_>,
        pad: &gst_video::VideoAggregatorPad,
        outbuf: &gst::BufferRef,
    ) -> Result<Vec<VmafFrameMessage>, gst::FlowError> {
        let name = pad.name();
        let Some(dist_frame) = pad.prepared_frame(token) else {
            self.warn_once_no_distorted(&name, outbuf.pts())?;
            return Ok(Vec::new());
        };
        self.check_frames(ref_frame.info(), dist_frame.info(), &name)?;
        // The input buffers stay referenced until a GPU backend has
        // uploaded from them (in place, when they are pinned memory).
        // They also let a failover to the CPU remake the pictures (no copy).
        let distorted = pad.current_buffer(token);
        self.note_pairing(&name, running_time(pad, distorted.as_ref()))?;
        let (keep, replay): (Option<KeepAlive>, _) = match (reference, distorted) {
            (Some(r), Some(d)) => {
                let replay = BufferReplay::of(ref_frame, &dist_frame, (r, &d));
                (Some(Box::new((r.clone(), d))), replay)
            }
            _ => (None, None),
        };
        self.score(
            &name,
            ref_frame,
            &dist_frame,
            (keep, replay),
            FrameTiming::of(outbuf),
        )?
        .map_err(|err| {
            gst::element_imp_error!(
                self,
                gst::StreamError::Failed,
                ("VMAF failed on {name}: {err}"),
                ["while scoring a frame"]
            );
            gst::FlowError::Error
        })
    }

    /// Gives the pair to input `name`'s engine (which scales its frame to
    /// the reference's size, where it differs) with this output frame's
    /// timing (kept for the frame messages and the report); returns the
    /// messages of the frames that became final, or the engine's error
    /// (inside), or `NotNegotiated` when the element has no state
    /// (outside).
    fn score(
        &self,
        name: &str,
        ref_frame: &gst_video::VideoFrameRef<&gst::BufferRef>,
        dist_frame: &gst_video::VideoFrameRef<&gst::BufferRef>,
        (keep, replay): (Option<KeepAlive>, Option<Arc<dyn vmaf::Replay>>),
        at: FrameTiming,
    ) -> Result<Result<Vec<VmafFrameMessage>, String>, gst::FlowError> {
        let segment = self
            .obj()
            .src_pad()
            .segment()
            .downcast::<gst::ClockTime>()
            .ok();
        let pts = at.pts;
        let timing = |index| Pending {
            index,
            pts,
            running_time: segment.as_ref().and_then(|s| s.to_running_time(pts)),
            stream_time: segment.as_ref().and_then(|s| s.to_stream_time(pts)),
            duration: at.duration,
        };
        let mut guard = self.state.lock().unwrap();
        let state = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
        if state.rendition(name).is_none() {
            // Released meanwhile.
            return Ok(Ok(Vec::new()));
        }
        // A lone rendition does its reference's work itself, as 1.28's
        // `vmaf` would; the renditions of a ladder share it.
        let reference_id = (state.renditions.len() > 1 && state.share_reference)
            .then_some(at.reference.unwrap_or(state.references));
        let Some(r) = state.rendition(name) else {
            return Ok(Ok(Vec::new()));
        };
        r.start_frame(timing);
        let engine = &mut r.engine;
        let pushed = with_picture(ref_frame, |rp| {
            with_picture(dist_frame, |dp| {
                let pair = FramePair {
                    reference: rp,
                    distorted: dp,
                    keep,
                    replay,
                    reference_id,
                };
                engine.push(pair).map_err(|e| e.to_string())
            })
        })
        .flatten()
        .flatten();
        r.note_failover();
        Ok(pushed.and_then(|ready| r.finalize(ready).map_err(|e| e.to_string())))
    }

    /// Posts what scoring just made final, in order: the engines' moves,
    /// the frames' messages, then the windows they closed.
    fn post_scored(&self, frames: &[VmafFrameMessage]) {
        self.post_engine_notices();
        for m in frames {
            self.post(gst::Structure::from(m));
        }
        self.post_windows();
    }

    /// Posts the messages about the engines' moves, outside the state lock
    /// (a requested input's name first).
    fn post_engine_notices(&self) {
        let notices: Vec<(bool, String)> = self
            .state
            .lock()
            .unwrap()
            .as_mut()
            .map(|st| {
                st.renditions
                    .iter_mut()
                    .flat_map(|r| {
                        let prefix = if r.name == "dist_sink" {
                            String::new()
                        } else {
                            format!("{}: ", r.name)
                        };
                        std::mem::take(&mut r.engine_notices)
                            .into_iter()
                            .map(move |(w, t)| (w, format!("{prefix}{t}")))
                    })
                    .collect()
            })
            .unwrap_or_default();
        for (warning, text) in notices {
            if warning {
                gst::element_imp_warning!(
                    self,
                    gst::StreamError::Failed,
                    ("{text}"),
                    ["on-gpu-error"]
                );
            } else {
                gst::element_imp_info!(
                    self,
                    gst::StreamError::Failed,
                    ("{text}"),
                    ["on-gpu-error=retry"]
                );
            }
        }
    }

    /// Posts the windows the renditions closed (`window`), after their
    /// frames' messages, and the alerts they raise or clear
    /// (`alert-below`): a warning, then an info, each with the window
    /// message and the threshold as details.
    fn post_windows(&self) {
        let ready: Vec<_> = self
            .state
            .lock()
            .unwrap()
            .as_mut()
            .map(|st| {
                st.renditions
                    .iter_mut()
                    .flat_map(|r| std::mem::take(&mut r.windows_ready))
                    .collect()
            })
            .unwrap_or_default();
        let threshold = self.settings.lock().unwrap().alert_below;
        for (m, change) in ready {
            let s = gst::Structure::from(&m);
            self.post(s.clone());
            let Some(change) = change else {
                continue;
            };
            let who = m.label.as_deref().unwrap_or(&m.rendition);
            let w = &m.summary;
            let secs = |ns: u64| ns as f64 / 1e9;
            let what = format!(
                "{who}: VMAF {:.2} over the {} s window from {} s (frames {}-{})",
                w.mean,
                secs(w.length),
                secs(w.start),
                w.first,
                w.last
            );
            let mut details = s;
            details.set("alert-below", threshold);
            match change {
                AlertChange::Raised => gst::element_imp_warning!(
                    self,
                    gst::StreamError::Failed,
                    ("{what} is below alert-below ({threshold})"),
                    ["alert-below"],
                    details: details
                ),
                AlertChange::Cleared => gst::element_imp_info!(
                    self,
                    gst::StreamError::Failed,
                    ("{what} is back at or above alert-below ({threshold})"),
                    ["alert-below"],
                    details: details
                ),
            }
        }
    }

    fn post(&self, s: gst::Structure) {
        let _ = self
            .obj()
            .post_message(gst::message::Element::builder(s).src(&*self.obj()).build());
    }

    /// Ends a segment of every input (`drain_inputs`).
    fn drain(&self, why: SegmentEnd) -> Result<(), gst::ErrorMessage> {
        self.drain_inputs(why, |_| true)
    }

    /// Ends a segment of the inputs `which` names: their last frame
    /// messages and pooled messages, their results files (`Rendition::end_segment`).
    fn drain_inputs(
        &self,
        why: SegmentEnd,
        which: impl Fn(&str) -> bool,
    ) -> Result<(), gst::ErrorMessage> {
        let mut frames = Vec::new();
        let mut pooled = Vec::new();
        let mut failed = None;
        {
            let mut guard = self.state.lock().unwrap();
            let Some(state) = guard.as_mut() else {
                return Ok(());
            };
            let c = state.shared_reference.counts();
            if c.done > 0 {
                gst::info!(
                    CAT,
                    imp = self,
                    "shared reference: {} frames uploaded and worked on once, found done by another rendition {} times",
                    c.done,
                    c.shared
                );
            }
            for r in state.renditions.iter_mut().filter(|r| which(&r.name)) {
                if let Some(pad) = self.obj().static_pad(&r.name)
                    && let Some(pad) = pad.downcast_ref::<super::pad::VmafHipPad>()
                {
                    r.pairings.counts.distorted += pad.imp().take_received();
                }
                match r.end_segment(why) {
                    Ok((msgs, p)) => {
                        frames.extend(msgs);
                        pooled.extend(p.map(|p| (p, r.engine.input_counts())));
                    }
                    Err(e) => failed = failed.or(Some(e)),
                }
            }
        }
        self.post_scored(&frames);
        for (p, counts) in &pooled {
            gst::info!(
                CAT,
                imp = self,
                "{}: pooled VMAF {:.6} over {} frames ({}); input planes so far: {} staged, {} from pinned memory ({} of them copied there on arrival), {} page-locked in place, {} on the device",
                p.rendition,
                p.score,
                p.frames,
                why.name(),
                counts.staged,
                counts.pinned,
                self.copied_on_arrival(),
                counts.registered,
                counts.device
            );
            self.post(gst::Structure::from(p));
        }
        failed.map_or(Ok(()), Err)
    }

    /// A distorted input must carry the reference's format; `dist_sink`
    /// also its size (GStreamer 1.28's `vmaf`), while a requested input of
    /// another size is scaled to it. Checked on the frames about to be
    /// scored (a pad's caps change before the frames queued under the old
    /// caps are through). When the two change to new caps that fit, the
    /// input's segment scored so far ends ("caps-changed") and its engine
    /// starts again for the new caps.
    fn check_frames(
        &self,
        ri: &gst_video::VideoInfo,
        di: &gst_video::VideoInfo,
        name: &str,
    ) -> Result<(), gst::FlowError> {
        let same = |a: &gst_video::VideoInfo, b: &gst_video::VideoInfo| {
            a.width() == b.width() && a.height() == b.height() && a.format() == b.format()
        };
        let same_size = ri.width() == di.width() && ri.height() == di.height();
        let scales = name != "dist_sink";
        let comparable = comparable_formats(ri.format(), di.format());
        if !comparable || !(same_size || scales) {
            let mut advice = Vec::new();
            if !same_size {
                advice.push("videoscale");
            }
            if !comparable {
                advice.push("videoconvert");
            }
            let caps = |i: &gst_video::VideoInfo| {
                i.to_caps()
                    .map_or_else(|_| "?".to_string(), |c| c.to_string())
            };
            let what = if scales {
                "chroma layout and bit depth (a dist_sink_%u pad scales other sizes)"
            } else {
                "width, height, chroma layout and bit depth (a dist_sink_%u pad scales other sizes)"
            };
            gst::element_imp_error!(
                self,
                gst::StreamError::Format,
                (
                    "ref_sink and {name} must carry the same {what}: ref_sink caps {}; {name} caps {}; insert {} before {name}",
                    caps(ri),
                    caps(di),
                    advice.join(" and ")
                ),
                ["caps mismatch between two sink pads"]
            );
            return Err(gst::FlowError::NotNegotiated);
        }
        let changed = {
            let mut guard = self.state.lock().unwrap();
            let Some(r) = guard.as_mut().and_then(|st| st.rendition(name)) else {
                return Ok(()); // released meanwhile
            };
            match &r.checked {
                Some((old_r, old_d)) if same(old_r, ri) && same(old_d, di) => return Ok(()),
                Some(_) => r.next_index > 0,
                None => false,
            }
        };
        if changed {
            gst::info!(
                CAT,
                imp = self,
                "caps changed: ref_sink {}x{}, {name} {}x{} {:?}",
                ri.width(),
                ri.height(),
                di.width(),
                di.height(),
                ri.format()
            );
            if let Err(e) = self.drain_inputs(SegmentEnd::CapsChanged, |n| n == name) {
                self.post_error_message(e);
                return Err(gst::FlowError::Error);
            }
        }
        let mut guard = self.state.lock().unwrap();
        if let Some(r) = guard.as_mut().and_then(|st| st.rendition(name)) {
            r.checked = Some((ri.clone(), di.clone()));
        }
        Ok(())
    }
}

/// `model-filename`'s text: every built-in model by name.
fn model_blurb() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        format!(
            "Built-in model version ({}) or path to a libvmaf JSON model or model collection, with optional :FEATURE.OPTION=VALUE overrides",
            crate::core::model::built_in_names().join(", ")
        )
    })
}

#[glib::object_subclass]
impl ObjectSubclass for VmafHip {
    const NAME: &'static str = "GstVmafHip";
    type Type = super::VmafHip;
    type ParentType = gst_video::VideoAggregator;

    fn with_class(klass: &Self::Class) -> Self {
        let templ = klass.pad_template("ref_sink").unwrap();
        let ref_pad = gst::PadBuilder::<super::VmafHipPad>::from_template(&templ)
            .build()
            .upcast();
        let templ = klass.pad_template("dist_sink").unwrap();
        let dist_pad = gst::PadBuilder::<super::VmafHipPad>::from_template(&templ)
            .build()
            .upcast();
        Self {
            ref_pad,
            dist_pad,
            settings: Mutex::new(Settings::default()),
            state: Mutex::new(None),
            gpu_input: Mutex::new(None),
            next_pad: Mutex::new(0),
            copier: Mutex::new(None),
            blocks: Mutex::new(None),
            live: AtomicBool::new(false),
            metrics: Mutex::new(None),
            aligning: AtomicBool::new(false),
            reference_awaited: Mutex::new(None),
        }
    }
}

impl ObjectImpl for VmafHip {
    fn properties() -> &'static [glib::ParamSpec] {
        static PROPS: Lazy<Vec<glib::ParamSpec>> = Lazy::new(|| {
            vec![
                glib::ParamSpecString::builder("model-filename")
                    .nick("Model")
                    .blurb(model_blurb())
                    .default_value(Some(DEFAULT_MODEL))
                    .mutable_ready()
                    .build(),
                glib::ParamSpecBoolean::builder("disable-clip").nick("Disable clipping").blurb("Do not clip scores to the model's range").default_value(DEFAULT_DISABLE_CLIP).mutable_ready().build(),
                glib::ParamSpecBoolean::builder("enable-transform").nick("Enable transform").blurb("Apply the model's score transform").default_value(DEFAULT_ENABLE_TRANSFORM).mutable_ready().build(),
                glib::ParamSpecBoolean::builder("phone-model").nick("Phone model").blurb("Score for phone viewing (enables the score transform)").default_value(DEFAULT_PHONE_MODEL).mutable_ready().build(),
                glib::ParamSpecBoolean::builder("psnr").nick("PSNR").blurb("Also compute PSNR (psnr_y, psnr_cb, psnr_cr)").default_value(DEFAULT_PSNR).mutable_ready().build(),
                glib::ParamSpecBoolean::builder("ssim").nick("SSIM").blurb("Also compute SSIM (float_ssim)").default_value(DEFAULT_SSIM).mutable_ready().build(),
                glib::ParamSpecBoolean::builder("ms-ssim").nick("MS-SSIM").blurb("Also compute MS-SSIM (float_ms_ssim; frames of at least 176x176)").default_value(DEFAULT_MS_SSIM).mutable_ready().build(),
                glib::ParamSpecEnum::builder_with_default("pool-method", DEFAULT_POOL_METHOD).nick("Pool method").blurb("How the pooled message's score pools the frames").mutable_ready().build(),
                glib::ParamSpecUInt::builder("threads").nick("Threads").blurb("CPU worker threads, 0 = one per core (results are identical for any count)").default_value(DEFAULT_THREADS).mutable_ready().build(),
                glib::ParamSpecUInt::builder("subsample").nick("Subsample").blurb("Score every Nth frame (libvmaf's n_subsample); temporal extractors still see every frame").minimum(1).default_value(DEFAULT_SUBSAMPLE).mutable_ready().build(),
                glib::ParamSpecBoolean::builder("conf-interval").nick("Confidence interval").blurb("Add 95% confidence interval fields (needs a bootstrap model collection)").default_value(DEFAULT_CONF_INTERVAL).mutable_ready().build(),
                glib::ParamSpecBoolean::builder("frame-message").nick("Frame messages").blurb("Post a VMAF element message for every scored frame").default_value(DEFAULT_FRAME_MESSAGE).mutable_ready().build(),
                glib::ParamSpecString::builder("results-filename").nick("Results file").blurb("Write libvmaf-style results here, each frame as its score becomes final, completed at end of stream (JSON unless results-format says otherwise)").mutable_ready().build(),
                glib::ParamSpecEnum::builder_with_default("results-format", DEFAULT_RESULTS_FORMAT).nick("Results format").blurb("Layout of the results file").mutable_ready().build(),
                glib::ParamSpecString::builder("report-filename").nick("Report file").blurb("Write a self-contained HTML report here at end of stream (and at each flushing seek): the VMAF curve, each metric per frame, the worst frames").mutable_ready().build(),
                glib::ParamSpecString::builder("report-title").nick("Report title").blurb("Heading of the HTML report (default: the inputs' names, as upstream reports them)").mutable_ready().build(),
                glib::ParamSpecString::builder("features").nick("Extra features").blurb(&format!("Comma-separated extractors computed beside the model's and reported by their libvmaf names: {}", crate::extractors::extra_names().join(", "))).mutable_ready().build(),
                glib::ParamSpecEnum::builder_with_default("log-level", DEFAULT_LOG_LEVEL).nick("Log level").blurb("Threshold of the vmafhip debug category").mutable_ready().build(),
                glib::ParamSpecEnum::builder_with_default("backend", DEFAULT_BACKEND).nick("Backend").blurb("Where features are computed: auto (GPU if usable, else CPU with a warning), cpu, hip").mutable_ready().build(),
                glib::ParamSpecEnum::builder_with_default("on-gpu-error", DEFAULT_ON_GPU_ERROR).nick("On GPU error").blurb("What a GPU error in the middle of a stream does: auto (retry with backend=auto, fail with backend=hip), fail (the stream ends with the error), cpu (the CPU engine takes the stream over from the first frame not finished, with the same numbers; a warning names the error and the frame, and the messages' backend field says which frames ran where), retry (as cpu, and the stream goes back to the GPU once it opens again, after gpu-retry-delay; an info message says from which frame)").mutable_ready().build(),
                glib::ParamSpecEnum::builder_with_default("scaler", DEFAULT_SCALER).nick("Scaler").blurb("How a rendition on a dist_sink_%u pad of another size than the reference is scaled to the reference's size before it is scored, the same on the GPU and the CPU: bicubic (ffmpeg's default, B = 0, C = 0.6), bilinear or lanczos").mutable_ready().build(),
                glib::ParamSpecUInt::builder("gpu-retry-delay").nick("GPU retry delay").blurb("With on-gpu-error=retry (the default with backend=auto): milliseconds after a GPU error before the GPU is opened again and the stream goes back to it; doubles after each failed return, up to a minute; 0 tries at the next frame").default_value(DEFAULT_GPU_RETRY_DELAY).mutable_ready().build(),
                glib::ParamSpecUInt64::builder("max-pending").nick("Max pending").blurb("Live pipelines: nanoseconds (of running time) a reference frame may wait for its distorted frame. The reference passes through on time; each frame is scored when its distorted frame arrives, its message posted late with its own timestamp. Past this a frame is not scored (counted in frames-unscored, with a warning). The waiting frames are held in memory (5 s of 1080p30: about 450 MB). 0: no waiting; each frame is scored at its deadline against what the distorted pad holds (see late-frame-wait)").default_value(DEFAULT_MAX_PENDING).mutable_ready().build(),
                glib::ParamSpecUInt64::builder("window").nick("Window").blurb("Nanoseconds of stream time (the frames' timestamps) each rendition's rolling score covers: a window message (type window) per window, with its first and last frame, start, frames, mean, harmonic-mean, min, low-1 (the k-th smallest score, k = 1% of its frames, rounded up), frames-repeated and frames-unscored (duplicates and drops while it was open), alert and partial (the last window, cut short by the end). 0: none").default_value(DEFAULT_WINDOW).mutable_ready().build(),
                glib::ParamSpecDouble::builder("alert-below").nick("Alert below").blurb("With window: a window whose mean VMAF is below this posts a warning message naming the rendition, the window and the mean, once, and an info message when a later window's mean is back at or above it; the window messages' alert field holds the state. 0: never").minimum(0.0).maximum(100.0).default_value(DEFAULT_ALERT_BELOW).mutable_ready().build(),
                glib::ParamSpecString::builder("align").nick("Align").blurb("How the distorted inputs' frames are paired with the reference's: off (by timestamp), auto (by content: the offset within align-window found at start, then dropped and duplicated frames followed; frames in system memory), or N (by content from N frames: N > 0, the distorted inputs' first N frames precede the reference's first, as an encoder's leading frames; N < 0, the reference's first |N| frames have none, as a trimmed start)").default_value(Some("off")).mutable_ready().build(),
                glib::ParamSpecUInt64::builder("align-window").nick("Align window").blurb("align=auto: the offsets searched at start, in nanoseconds either way (the frames of this and one more second are held meanwhile)").minimum(0).maximum(60_000_000_000).default_value(DEFAULT_ALIGN_WINDOW).mutable_ready().build(),
                glib::ParamSpecString::builder("metrics-address").nick("Metrics address").blurb("Serve OpenMetrics text at http://ADDRESS/metrics while the element runs: per rendition, the engine, frames scored, repeated and unscored, the last frame's VMAF, the last window's scores and alert (window), and the scoring rate. PORT or :PORT listen on loopback (127.0.0.1); ADDRESS:PORT where given; port 0 picks a free one (see metrics-url). Unset: no endpoint").mutable_ready().build(),
                glib::ParamSpecString::builder("metrics-url").nick("Metrics URL").blurb("Where the metrics endpoint listens while the element runs (metrics-address), with the port it got").read_only().build(),
                glib::ParamSpecInt64::builder("late-frame-wait").nick("Late frame wait").blurb("Live pipelines: nanoseconds added to each deadline, beyond the upstream latency, reported as the element's latency. With max-pending 0, the wait for a distorted frame that is late before the reference frame is scored against the distorted pad's last picture (counted as repeated); the element also waits up to 10 s for the distorted branch's first frame. -1: three frames' time at the reference's frame rate, at least 40 ms (100 ms when unknown), with max-pending 0; none otherwise. 0: no wait at all (with max-pending 0, a stalled pad's last picture is scored at once, and reference frames before the distorted branch's first frame pass through unscored)").minimum(-1).default_value(DEFAULT_LATE_FRAME_WAIT).mutable_ready().build(),
                glib::ParamSpecEnum::builder_with_default("vendor", DEFAULT_VENDOR).nick("Vendor").blurb("GPU stack for the HIP backend: auto (AMD, then NVIDIA; VMAFHIP_VENDOR overrides), amd, nvidia").mutable_ready().build(),
                glib::ParamSpecInt::builder("device-id").nick("Device").blurb("GPU index for the HIP backend").minimum(0).default_value(DEFAULT_DEVICE_ID).mutable_ready().build(),
                glib::ParamSpecBoxed::builder::<gst::Structure>("stats").nick("Statistics").blurb("How input planes reached the GPU since start: planes-staged (copied on the host into staging memory), planes-pinned (uploaded from pinned memory: the element's pinned pool, or the sink pads' copy), planes-copied-on-arrival (planes the sink pads copied into pinned memory as frames arrived in ordinary memory: the luma, and the chroma where an extractor reads it; uploaded from there, they count under planes-pinned), planes-registered (host memory page-locked where it lay, NVIDIA), planes-device (GStreamer GPU memory, copied on the device); pinned-blocks (page-locked host blocks allocated for the sink pads' pools and copies, each recycled once its frame is done); gpu-memory: the GPU memory caps feature the sink pads take, or none").read_only().build(),
            ]
        });
        PROPS.as_ref()
    }

    fn set_property(&self, _id: usize, value: &glib::Value, pspec: &glib::ParamSpec) {
        // The engine is built from the settings at start (READY -> PAUSED);
        // a change while running is kept for the next start, with a warning.
        if self.state.lock().unwrap().is_some() {
            gst::element_imp_warning!(
                self,
                gst::LibraryError::Settings,
                (
                    "property {} changed while running: it takes effect at the next start (READY to PAUSED)",
                    pspec.name()
                ),
                ["properties are read when the element starts"]
            );
        }
        let mut s = self.settings.lock().unwrap();
        match pspec.name() {
            "model-filename" => {
                s.model_filename = value
                    .get::<Option<String>>()
                    .unwrap()
                    .unwrap_or_else(|| DEFAULT_MODEL.into())
            }
            "disable-clip" => s.disable_clip = value.get().unwrap(),
            "enable-transform" => s.enable_transform = value.get().unwrap(),
            "phone-model" => s.phone_model = value.get().unwrap(),
            "psnr" => s.psnr = value.get().unwrap(),
            "ssim" => s.ssim = value.get().unwrap(),
            "ms-ssim" => s.ms_ssim = value.get().unwrap(),
            "pool-method" => s.pool_method = value.get().unwrap(),
            "threads" => s.threads = value.get().unwrap(),
            "subsample" => s.subsample = value.get().unwrap(),
            "conf-interval" => s.conf_interval = value.get().unwrap(),
            "frame-message" => s.frame_message = value.get().unwrap(),
            "results-filename" => s.results_filename = value.get().unwrap(),
            "results-format" => s.results_format = value.get().unwrap(),
            "report-filename" => s.report_filename = value.get().unwrap(),
            "report-title" => s.report_title = value.get().unwrap(),
            "features" => {
                s.features = value
                    .get::<Option<String>>()
                    .unwrap()
                    .unwrap_or_default()
                    .split(',')
                    .map(|f| f.trim().to_string())
                    .filter(|f| !f.is_empty())
                    .collect()
            }
            "log-level" => {
                s.log_level = value.get().unwrap();
                CAT.set_threshold(match s.log_level {
                    LogLevel::None => gst::DebugLevel::None,
                    LogLevel::Error => gst::DebugLevel::Error,
                    LogLevel::Warning => gst::DebugLevel::Warning,
                    LogLevel::Info => gst::DebugLevel::Info,
                    LogLevel::Debug => gst::DebugLevel::Debug,
                });
            }
            "backend" => s.backend = value.get().unwrap(),
            "on-gpu-error" => s.on_gpu_error = value.get().unwrap(),
            "late-frame-wait" => s.late_frame_wait = value.get().unwrap(),
            "max-pending" => s.max_pending = value.get().unwrap(),
            "window" => s.window = value.get().unwrap(),
            "align" => {
                let v: Option<String> = value.get().unwrap();
                match v
                    .as_deref()
                    .map_or(Some(Align::Off), |v| Align::parse(v.trim()))
                {
                    Some(a) => s.align = a,
                    None => glib::g_warning!(
                        "vmafhip",
                        "align \"{}\" refused: off, auto, or a number of frames",
                        v.unwrap_or_default()
                    ),
                }
            }
            "align-window" => s.align_window = value.get().unwrap(),
            "metrics-address" => {
                s.metrics_address = value
                    .get::<Option<String>>()
                    .unwrap()
                    .filter(|a| !a.is_empty())
            }
            "alert-below" => s.alert_below = value.get().unwrap(),
            "gpu-retry-delay" => s.gpu_retry_delay = value.get().unwrap(),
            "scaler" => s.scaler = value.get().unwrap(),
            "device-id" => s.device_id = value.get().unwrap(),
            "vendor" => s.vendor = value.get().unwrap(),
            other => unreachable!("unknown property {other}"),
        }
    }

    fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
        if pspec.name() == "stats" {
            let counts = self
                .state
                .lock()
                .unwrap()
                .as_ref()
                .map(|st| {
                    st.renditions.iter().map(|r| r.engine.input_counts()).fold(
                        vmaf::InputCounts::default(),
                        |a, c| vmaf::InputCounts {
                            staged: a.staged + c.staged,
                            pinned: a.pinned + c.pinned,
                            registered: a.registered + c.registered,
                            device: a.device + c.device,
                        },
                    )
                })
                .unwrap_or_default();
            let gpu = self.gpu_input().map_or("none", |g| g.kind().caps_feature());
            return gst::Structure::builder("vmafhip-stats")
                .field("planes-staged", counts.staged)
                .field("planes-pinned", counts.pinned)
                .field("planes-copied-on-arrival", self.copied_on_arrival())
                .field(
                    "pinned-blocks",
                    self.blocks
                        .lock()
                        .unwrap()
                        .as_ref()
                        .map_or(0, |b| b.allocated() as u64),
                )
                .field("planes-registered", counts.registered)
                .field("planes-device", counts.device)
                .field("gpu-memory", gpu)
                .build()
                .to_value();
        }
        let s = self.settings.lock().unwrap();
        match pspec.name() {
            "model-filename" => s.model_filename.to_value(),
            "disable-clip" => s.disable_clip.to_value(),
            "enable-transform" => s.enable_transform.to_value(),
            "phone-model" => s.phone_model.to_value(),
            "psnr" => s.psnr.to_value(),
            "ssim" => s.ssim.to_value(),
            "ms-ssim" => s.ms_ssim.to_value(),
            "pool-method" => s.pool_method.to_value(),
            "threads" => s.threads.to_value(),
            "subsample" => s.subsample.to_value(),
            "conf-interval" => s.conf_interval.to_value(),
            "frame-message" => s.frame_message.to_value(),
            "results-filename" => s.results_filename.to_value(),
            "results-format" => s.results_format.to_value(),
            "report-filename" => s.report_filename.to_value(),
            "report-title" => s.report_title.to_value(),
            "features" => {
                let joined = s.features.join(",");
                (!joined.is_empty()).then_some(joined).to_value()
            }
            "log-level" => s.log_level.to_value(),
            "backend" => s.backend.to_value(),
            "on-gpu-error" => s.on_gpu_error.to_value(),
            "late-frame-wait" => s.late_frame_wait.to_value(),
            "max-pending" => s.max_pending.to_value(),
            "window" => s.window.to_value(),
            "align" => s.align.to_string().to_value(),
            "align-window" => s.align_window.to_value(),
            "metrics-address" => s.metrics_address.to_value(),
            "metrics-url" => self
                .metrics
                .lock()
                .unwrap()
                .as_ref()
                .map(|(_, server)| server.url.clone())
                .to_value(),
            "alert-below" => s.alert_below.to_value(),
            "gpu-retry-delay" => s.gpu_retry_delay.to_value(),
            "scaler" => s.scaler.to_value(),
            "device-id" => s.device_id.to_value(),
            "vendor" => s.vendor.to_value(),
            other => unreachable!("unknown property {other}"),
        }
    }

    fn constructed(&self) {
        self.parent_constructed();
        let obj = self.obj();
        obj.add_pad(&self.ref_pad).unwrap();
        obj.add_pad(&self.dist_pad).unwrap();
    }
}

impl GstObjectImpl for VmafHip {}

impl ElementImpl for VmafHip {
    fn metadata() -> Option<&'static gst::subclass::ElementMetadata> {
        static META: Lazy<gst::subclass::ElementMetadata> = Lazy::new(|| {
            gst::subclass::ElementMetadata::new(
                "VMAF (HIP)",
                "Filter/Analyzer/Video",
                "Netflix VMAF between ref_sink and dist_sink, on the GPU through HIP or on the CPU, bit-exact with libvmaf; passes the reference through",
                "vmafhip developers",
            )
        });
        Some(&*META)
    }

    /// A ladder of requested pads only (`dist_sink` left unlinked): the
    /// unlinked `dist_sink` is ended as the pads become active, so that the
    /// aggregator does not wait for it, and it is not scored.
    fn change_state(
        &self,
        transition: gst::StateChange,
    ) -> Result<gst::StateChangeSuccess, gst::StateChangeError> {
        let ret = self.parent_change_state(transition)?;
        let requested = self
            .obj()
            .sink_pads()
            .iter()
            .any(|p| p.name().starts_with("dist_sink_"));
        if transition == gst::StateChange::ReadyToPaused && requested && !self.dist_pad.is_linked()
        {
            if let Some(st) = self.state.lock().unwrap().as_mut() {
                st.released.push("dist_sink".into());
                if let Some(i) = st.renditions.iter().position(|r| r.name == "dist_sink") {
                    st.renditions.remove(i).discard();
                }
            }
            gst::info!(CAT, imp = self, "dist_sink is not linked: ending it");
            let pad = self.dist_pad.upcast_ref::<gst::Pad>();
            let _ = pad.send_event(gst::event::StreamStart::new("vmafhip-unlinked-dist-sink"));
            let _ = pad.send_event(gst::event::Segment::new(&gst::FormattedSegment::<
                gst::ClockTime,
            >::new()));
            let _ = pad.send_event(gst::event::Eos::new());
        }
        Ok(ret)
    }

    /// A released `dist_sink_%u` ends its rendition: its last frames, its
    /// pooled message (`reason` "released"), its results file and report.
    fn release_pad(&self, pad: &gst::Pad) {
        let name = pad.name();
        if let Some(st) = self.state.lock().unwrap().as_mut() {
            st.released.push(name.to_string());
        }
        if let Err(e) = self.drain_inputs(SegmentEnd::Released, |n| n == name) {
            self.post_error_message(e);
        }
        if let Some(st) = self.state.lock().unwrap().as_mut() {
            st.renditions.retain(|r| r.name != name);
        }
        self.parent_release_pad(pad);
    }

    fn pad_templates() -> &'static [gst::PadTemplate] {
        static TEMPLATES: Lazy<Vec<gst::PadTemplate>> = Lazy::new(|| {
            // System memory, then GStreamer's GPU memories (taken where the
            // engine runs on that GPU: `filter_caps`).
            let formats = || {
                FORMATS
                    .iter()
                    .map(|f| f.parse::<gst_video::VideoFormat>().unwrap())
            };
            // And P010 and P012 (10- and 12-bit decoders' output), whose
            // samples are shifted into place as the frame is read: on the
            // host (`with_picture`), or on the GPU (`device_picture`).
            let formats = || {
                formats().chain([
                    gst_video::VideoFormat::P01010le,
                    gst_video::VideoFormat::P012Le,
                ])
            };
            let mut caps = gst_video::VideoCapsBuilder::new()
                .format_list(formats())
                .build();
            for kind in GpuMemoryKind::ALL {
                caps.merge(
                    gst_video::VideoCapsBuilder::new()
                        .features([kind.caps_feature()])
                        .format_list(formats())
                        .build(),
                );
            }
            vec![
                gst::PadTemplate::with_gtype(
                    "src",
                    gst::PadDirection::Src,
                    gst::PadPresence::Always,
                    &caps,
                    gst_base::AggregatorPad::static_type(),
                )
                .unwrap(),
                gst::PadTemplate::with_gtype(
                    "ref_sink",
                    gst::PadDirection::Sink,
                    gst::PadPresence::Always,
                    &caps,
                    super::VmafHipPad::static_type(),
                )
                .unwrap(),
                gst::PadTemplate::with_gtype(
                    "dist_sink",
                    gst::PadDirection::Sink,
                    gst::PadPresence::Always,
                    &caps,
                    super::VmafHipPad::static_type(),
                )
                .unwrap(),
                // More renditions of an encoding ladder, of any size.
                gst::PadTemplate::with_gtype(
                    "dist_sink_%u",
                    gst::PadDirection::Sink,
                    gst::PadPresence::Request,
                    &caps,
                    super::VmafHipPad::static_type(),
                )
                .unwrap(),
            ]
        });
        TEMPLATES.as_ref()
    }
}

impl AggregatorImpl for VmafHip {
    fn start(&self) -> Result<(), gst::ErrorMessage> {
        self.parent_start()?;
        let settings = self.settings.lock().unwrap().clone();
        let shared_reference = SharedReference::new();
        let Opened {
            engine,
            name: backend,
            device,
            warning,
            reads_chroma,
        } = open_engine(&settings, &shared_reference)?;
        gst::info!(
            CAT,
            imp = self,
            "computing VMAF with {backend}, model {}",
            settings.model_filename
        );
        if let Some(w) = warning {
            gst::element_imp_warning!(self, gst::LibraryError::Init, ("{w}"), ["backend=auto"]);
        }
        // GPU memory from upstream, where GStreamer's library for this GPU
        // is present: otherwise system memory only, which always works.
        let gpu_input = device.as_ref().map(GstGpu::for_device);
        match &gpu_input {
            Some(Ok(g)) => gst::info!(
                CAT,
                imp = self,
                "sink pads also take {} of the engine's device",
                g.kind().caps_feature()
            ),
            Some(Err(why)) => gst::info!(CAT, imp = self, "system memory input only: {why}"),
            None => {}
        }
        *self.gpu_input.lock().unwrap() = gpu_input.and_then(Result::ok);
        let blocks = device.clone().map(PinnedBlocks::new);
        *self.copier.lock().unwrap() = blocks
            .clone()
            .filter(|_| super::pinned_copy::enabled())
            .map(|b| Arc::new(PinnedCopier::new(b, reads_chroma)));
        *self.blocks.lock().unwrap() = blocks;
        // An unwritable results file or report fails now, not at the end of
        // the stream.
        let label = self.dist_pad.property::<Option<String>>("label");
        let mut first = Rendition::new(
            ("dist_sink".into(), label, true),
            Files::default(),
            (engine, backend.clone()),
            &settings,
        )?;
        first.metrics = self.serve_metrics(&settings)?;
        self.aligning
            .store(settings.align != Align::Off, Ordering::Relaxed);
        // A duplicated distorted frame gives a reference frame twice: the
        // renditions' engines then do their reference's work themselves.
        let share_reference = settings.align == Align::Off
            && std::env::var("VMAFHIP_SHARE_REFERENCE").map_or(true, |v| v != "0");
        *self.state.lock().unwrap() = Some(State {
            backend,
            device,
            settings,
            renditions: vec![first],
            last_ref: None,
            first_frame_delay: gst::ClockTime::ZERO,
            released: Vec::new(),
            shared_reference,
            references: 0,
            share_reference,
        });
        self.update_latency();
        Ok(())
    }

    /// Requested pads are named `dist_sink_N` (GstAggregator would name
    /// them `sink_N`): N as asked, or the next number not used yet.
    fn create_new_pad(
        &self,
        templ: &gst::PadTemplate,
        req_name: Option<&str>,
        _caps: Option<&gst::Caps>,
    ) -> Option<gst_base::AggregatorPad> {
        let mut next = self.next_pad.lock().unwrap();
        let asked = req_name
            .and_then(|n| n.strip_prefix("dist_sink_"))
            .and_then(|n| n.parse::<u32>().ok());
        let serial = match asked {
            Some(n) if self.obj().static_pad(&format!("dist_sink_{n}")).is_none() => n,
            _ => *next,
        };
        *next = (*next).max(serial + 1);
        let pad = gst::PadBuilder::<super::VmafHipPad>::from_template(templ)
            .name(format!("dist_sink_{serial}"))
            .build();
        Some(pad.upcast())
    }

    fn stop(&self) -> Result<(), gst::ErrorMessage> {
        *self.state.lock().unwrap() = None;
        *self.metrics.lock().unwrap() = None;
        *self.gpu_input.lock().unwrap() = None;
        *self.copier.lock().unwrap() = None;
        *self.blocks.lock().unwrap() = None;
        self.parent_stop()
    }

    fn sink_event(&self, pad: &gst_base::AggregatorPad, event: gst::Event) -> bool {
        // GstVideoAggregator asserts (aborts the process) on a segment in
        // any format but time: refuse it with an error instead.
        if let gst::EventView::Segment(e) = event.view() {
            let format = e.segment().format();
            if format != gst::Format::Time {
                gst::element_imp_error!(
                    self,
                    gst::StreamError::Format,
                    (
                        "{}: a segment in {format:?} format; vmafhip needs timestamped video (put a parser such as rawvideoparse before it)",
                        pad.name()
                    ),
                    ["segment {:?}", e.segment()]
                );
                return false;
            }
        }
        if let gst::EventView::CustomDownstreamOob(e) = event.view()
            && e.structure()
                .is_some_and(|s| s.name() == super::INTERRUPTED_EVENT)
        {
            if let Some(st) = self.state.lock().unwrap().as_mut() {
                for r in &mut st.renditions {
                    r.interrupted = true;
                }
            }
            return true;
        }
        self.parent_sink_event(pad, event)
    }

    fn sink_query(&self, pad: &gst_base::AggregatorPad, query: &mut gst::QueryRef) -> bool {
        // GstVideoAggregator accepts only the output's current size on its
        // (non-converting) sink pads, which would refuse a mid-stream size
        // change. Any caps of the pad template are fine here: the two pads
        // are compared when frames arrive (`check_caps`).
        if let gst::QueryViewMut::AcceptCaps(q) = query.view_mut() {
            let caps = q.caps_owned();
            let memory_ok = caps
                .iter_with_features()
                .all(|(_, f)| self.takes_features(Some(f)));
            q.set_result(memory_ok && caps.is_subset(&pad.pad_template_caps()));
            if !memory_ok && caps.is_fixed() {
                // Only a caps filter forces GPU memory the caps query did not offer.
                let why = match (&self.gpu_input(), self.state.lock().unwrap().as_ref()) {
                    (_, Some(st)) if st.device.is_none() => {
                        format!("the engine runs on the CPU ({})", st.backend)
                    }
                    _ => "GStreamer's library for this GPU's memory (libgstcuda-1.0 from gst-plugins-bad for CUDA, libgsthip-1.0 for HIP) is not usable here, or the memory is another vendor's".to_string(),
                };
                gst::element_imp_error!(
                    self,
                    gst::CoreError::Negotiation,
                    (
                        "{}: {} cannot be taken: {why}; give vmafhip system memory (cudadownload), or run it with backend=hip on that GPU",
                        pad.name(),
                        caps.features(0).map_or_else(String::new, |f| f.to_string())
                    ),
                    ["caps {caps}"]
                );
            }
            return true;
        }
        // Upstream GPU elements ask for a context: ours, so that they
        // allocate where the kernels read.
        if let gst::QueryViewMut::Context(q) = query.view_mut()
            && GpuMemoryKind::ALL
                .iter()
                .any(|k| k.context_type() == q.context_type())
            && let Some(g) = self.gpu_input_for_query()
            && g.answer_context_query(self.obj().upcast_ref(), query)
        {
            gst::debug!(
                CAT,
                obj = pad,
                "answered {} context query",
                g.kind().context_type()
            );
            return true;
        }
        if let gst::QueryViewMut::Caps(q) = query.view_mut() {
            // GstVideoAggregator answers in system memory only: ask it with
            // the filter's system-memory twin, then offer the same caps in
            // each GPU memory the engine can take, first.
            let filter = q.filter_owned();
            let mut sys_query = gst::query::Caps::new(
                filter
                    .as_ref()
                    .map(|f| {
                        let mut f = f.copy();
                        f.get_mut().expect("a copy").set_features_simple(Some(
                            gst::CapsFeatures::new([gst::CAPS_FEATURE_MEMORY_SYSTEM_MEMORY]),
                        ));
                        f
                    })
                    .as_ref(),
            );
            if !self.parent_sink_query(pad, &mut sys_query) {
                return false;
            }
            let result = sys_query
                .result_owned()
                .unwrap_or_else(gst::Caps::new_empty);
            let mut caps = gst::Caps::new_empty();
            for kind in GpuMemoryKind::ALL {
                let mut gpu = result.copy();
                gpu.get_mut()
                    .expect("a copy")
                    .set_features_simple(Some(gst::CapsFeatures::new([kind.caps_feature()])));
                caps.merge(gpu);
            }
            caps.merge(result);
            let mut caps = self.filter_caps(&caps);
            if let Some(filter) = filter {
                caps = filter.intersect_with_mode(&caps, gst::CapsIntersectMode::First);
            }
            gst::log!(CAT, obj = pad, "caps query answer {caps}");
            q.set_result(&caps);
            return true;
        }
        self.parent_sink_query(pad, query)
    }

    fn src_query(&self, query: &mut gst::QueryRef) -> bool {
        let answered = self.parent_src_query(query);
        if answered && let gst::QueryViewMut::Latency(q) = query.view_mut() {
            self.live.store(q.result().0, Ordering::Relaxed);
        }
        answered
    }

    fn aggregate(&self, timeout: bool) -> Result<gst::FlowSuccess, gst::FlowError> {
        // Asked here too: a sink that does not sync sends no latency query.
        self.live
            .store(self.obj().latency().is_some(), Ordering::Relaxed);
        if timeout {
            // A live deadline passed: the distorted branch may not have
            // started, or the reference frame is late.
            self.wait_for_first_distorted();
            if self.awaiting_reference() {
                std::thread::sleep(std::time::Duration::from_millis(2));
                return Err(gst_base::AGGREGATOR_FLOW_NEED_DATA);
            }
        }
        let ret = self.parent_aggregate(timeout);
        if ret == Err(gst::FlowError::Eos) {
            self.finish_late()?;
            // Every sink is done: last messages and the pooled score go out before EOS.
            if let Err(e) = self.drain(SegmentEnd::Eos) {
                self.post_error_message(e);
                return Err(gst::FlowError::Error);
            }
        }
        ret
    }

    fn negotiated_src_caps(&self, caps: &gst::Caps) -> Result<(), gst::LoggableError> {
        self.parent_negotiated_src_caps(caps)?;
        // The default late-frame wait follows the reference's frame rate.
        self.update_latency();
        Ok(())
    }

    fn propose_allocation(
        &self,
        pad: &gst_base::AggregatorPad,
        decide_query: Option<&gst::query::Allocation>,
        query: &mut gst::query::Allocation,
    ) -> Result<(), gst::LoggableError> {
        // The parent (GstVideoAggregator) announces GstVideoMeta support.
        self.parent_propose_allocation(pad, decide_query, query)?;
        let blocks = self.blocks.lock().unwrap().clone();
        let (Some(blocks), (Some(caps), true)) = (blocks, query.get_owned()) else {
            // On the CPU, or upstream asked without caps: its own memory is as good.
            return Ok(());
        };
        if caps
            .features(0)
            .is_some_and(|f| !f.contains(gst::CAPS_FEATURE_MEMORY_SYSTEM_MEMORY) && !f.is_empty())
        {
            // GPU memory: upstream allocates it in the context we gave it.
            return Ok(());
        }
        let info = gst_video::VideoInfo::from_caps(&caps).map_err(|_| {
            gst::loggable_error!(CAT, "ALLOCATION query with non-video caps {caps}")
        })?;
        // Upstream writes frames into pinned host memory, which the GPU
        // reads in place; the pool grows as far as the backend's ring needs.
        let pool = PinnedPool::new(blocks);
        let mut config = pool.config();
        config.set_params(Some(&caps), info.size() as u32, 0, 0);
        config.add_option("GstBufferPoolOptionVideoMeta");
        pool.set_config(config)
            .map_err(|e| gst::loggable_error!(CAT, "pinned pool configuration: {e}"))?;
        query.add_allocation_pool(Some(&pool), info.size() as u32, 0, 0);
        gst::debug!(
            CAT,
            imp = self,
            "proposing pinned host buffers of {} bytes on {}",
            info.size(),
            pad.name()
        );
        Ok(())
    }

    fn flush(&self) -> Result<gst::FlowSuccess, gst::FlowError> {
        // A flushing seek ends the segment: report what was measured, start
        // afresh. Frames waiting for late distorted frames are not scored.
        for pad in self.distorted_pads() {
            if let Some(p) = pad.downcast_ref::<super::VmafHipPad>() {
                p.imp().take_arrived(true);
            }
        }
        if let Some(st) = self.state.lock().unwrap().as_mut() {
            for r in &mut st.renditions {
                r.pairings.counts.unscored += r.late.clear() as u64;
                // Paired by content afresh: a new search.
                if let Some(t) = r.aligner.take() {
                    r.pairings.counts.unscored += t.held().0 as u64;
                }
                r.last_distorted = None;
            }
        }
        if let Err(e) = self.drain(SegmentEnd::Flush) {
            self.post_error_message(e);
        }
        if let Some(st) = self.state.lock().unwrap().as_mut() {
            for r in &mut st.renditions {
                r.no_frame_warned = false;
                r.late_warned = false;
            }
            st.last_ref = None;
        }
        self.parent_flush()
    }
}

impl VideoAggregatorImpl for VmafHip {
    fn update_caps(&self, caps: &gst::Caps) -> Result<gst::Caps, gst::LoggableError> {
        // The reference passes through unchanged, so src carries its caps.
        match self.ref_pad.current_caps() {
            Some(rc) => {
                let out = rc.intersect(caps);
                if out.is_empty() {
                    return Err(gst::loggable_error!(
                        CAT,
                        "downstream does not accept the reference caps {rc}"
                    ));
                }
                Ok(out)
            }
            None => Ok(caps.clone()),
        }
    }

    fn create_output_buffer(&self) -> Result<Option<gst::Buffer>, gst::FlowError> {
        // No memory of its own: aggregate_frames gives it the reference's.
        Ok(Some(gst::Buffer::new()))
    }

    /// One output frame: the reference passed on, and scored against each
    /// distorted input. Steps: an ended or missing reference; pass it on;
    /// a repeated reference; each input (`score_input`); post the messages.
    fn aggregate_frames(
        &self,
        token: &gst_video::subclass::AggregateFramesToken,
        outbuf: &mut gst::BufferRef,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        let Some(ref_frame) = self.ref_pad.prepared_frame(token) else {
            return self.no_reference_frame(outbuf);
        };
        let reference = self.ref_pad.current_buffer(token);
        if let Some(r) = &reference {
            self.pass_reference_on(r, outbuf)?;
            self.stamp_variable_rate(r, outbuf);
        }
        if self.is_repeated_reference(reference.as_ref())? {
            return Ok(gst::FlowSuccess::Ok);
        }
        let mut msgs = Vec::new();
        let mut result = Ok(());
        let holding = self.holding(self.dist_pad.upcast_ref());
        let thumb = match holding {
            Holding::Aligned { .. } => Some(self.reference_thumb(&ref_frame)?),
            _ => None,
        };
        for pad in self.distorted_pads() {
            match self.ensure_rendition(&pad) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
            let frames = (&ref_frame, reference.as_ref());
            let scored = match (holding, &thumb) {
                (Holding::Aligned { .. }, Some(t)) => self.score_aligned(frames, t, &pad, outbuf),
                (Holding::Late, _) => self.score_late(token, frames, &pad, outbuf),
                _ => self.score_input(token, frames, &pad, outbuf),
            };
            match scored {
                Ok(m) => msgs.extend(m),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.post_scored(&msgs);
        result.map(|()| gst::FlowSuccess::Ok)
    }
}
