//! # element-vmafhip
//!
//! `vmafhip` measures Netflix VMAF between a reference (`ref_sink`) and a
//! distorted (`dist_sink`) video and passes the reference through on `src`.
//! Scores are bit-exact with libvmaf's integer extractors. Per-frame scores
//! (with `frame-message=true`) and one pooled score at end of stream are
//! posted as element messages named `VMAF`, the layout of GStreamer 1.28's
//! `vmaf` element plus extra fields; results files use libvmaf's layouts.
//!
//! ```text
//! gst-launch-1.0 -m videotestsrc num-buffers=120 ! video/x-raw,width=1280,height=720 ! tee name=t \
//!   t. ! queue ! vmafhip name=v frame-message=true ! fakesink \
//!   t. ! queue ! x264enc bitrate=800 ! avdec_h264 ! v.dist_sink
//! ```
//! (`t.` feeds `v.ref_sink` through the first link.)
//!
//! Messages (structure `VMAF`): `type` = `frame` | `pooled`, `score`,
//! `index`, `timestamp`, `stream-time`, `running-time`, `duration`,
//! `psnr-y`, `ssim`, `ms-ssim`; ours: every model feature by its libvmaf
//! name (`integer_adm2`, ...), `backend`, and in `pooled` `min`, `max`,
//! `mean`, `harmonic-mean`, `frames`, `pool-method`; `rendition`, the
//! distorted input's pad, and its `label` when set. See [`VmafFrameMessage`]
//! and [`VmafPooledMessage`].
//!
//! An encoding ladder: besides `dist_sink`, request pads `dist_sink_%u`
//! take more renditions of the same source, of any size; each is scaled to
//! the reference's size (`scaler`) and scored against it by its own engine,
//! with its own messages, results file and report.
//!
//! Since: 0.1

mod align;
mod gap;
mod gpu_input;
mod hold;
mod imp;
mod late;
mod live;
mod metrics;
mod opening;
mod pad;
mod picture;
mod pinned_copy;
mod pinned_pool;
mod rendition;
mod settings;
mod window;

pub use align::ALIGN_EVENT;
pub use gap::{GAP_EVENT, Gap, LATE_EVENT, Missed};
pub use hold::{HOLDABLE_META, mark_holdable};
pub use live::Pairing;
pub use pad::VmafHipPad;
pub use pinned_pool::PinnedPool;
pub use settings::Align;
pub use window::WindowSummary;

use glib::prelude::*;

glib::wrapper! {
    pub struct VmafHip(ObjectSubclass<imp::VmafHip>) @extends gst_video::VideoAggregator, gst_base::Aggregator, gst::Element, gst::Object;
}

pub fn register(plugin: &gst::Plugin) -> Result<(), glib::BoolError> {
    #[cfg(feature = "doc")]
    {
        PoolMethod::static_type().mark_as_plugin_api(gst::PluginAPIFlags::empty());
        ResultsFormat::static_type().mark_as_plugin_api(gst::PluginAPIFlags::empty());
        Backend::static_type().mark_as_plugin_api(gst::PluginAPIFlags::empty());
        Vendor::static_type().mark_as_plugin_api(gst::PluginAPIFlags::empty());
        OnGpuError::static_type().mark_as_plugin_api(gst::PluginAPIFlags::empty());
        Scaling::static_type().mark_as_plugin_api(gst::PluginAPIFlags::empty());
        LogLevel::static_type().mark_as_plugin_api(gst::PluginAPIFlags::empty());
    }
    hold::register_holdable_meta();
    gst::Element::register(
        Some(plugin),
        "vmafhip",
        gst::Rank::NONE,
        VmafHip::static_type(),
    )
}

/// The results file (or report) of a requested rendition named `name` (its
/// `label`, else its pad's name) when the element's is `path`: the name
/// before the extension (`out.json` → `out.720p.json`).
pub fn rendition_file(path: &str, name: &str) -> String {
    let p = std::path::Path::new(path);
    match (p.file_stem(), p.extension()) {
        (Some(stem), Some(ext)) => p
            .with_file_name(format!(
                "{}.{name}.{}",
                stem.to_string_lossy(),
                ext.to_string_lossy()
            ))
            .display()
            .to_string(),
        _ => format!("{path}.{name}"),
    }
}

/// `pool-method`: GStreamer 1.28 `GstVmafPoolMethod` values and nicks.
#[derive(Debug, Eq, PartialEq, Hash, Clone, Copy, glib::Enum)]
#[repr(u32)]
#[enum_type(name = "GstVmafHipPoolMethod")]
pub enum PoolMethod {
    #[enum_value(name = "Minimum value", nick = "min")]
    Min = 1,
    #[enum_value(name = "Maximum value", nick = "max")]
    Max = 2,
    #[enum_value(name = "Arithmetic mean", nick = "mean")]
    Mean = 3,
    #[enum_value(name = "Harmonic mean", nick = "harmonic_mean")]
    HarmonicMean = 4,
}

/// `results-format`: GStreamer 1.28's values, which are libvmaf's
/// `VmafOutputFormat` (`gst_vmaf_results_format_get_type`): none 0, xml 1,
/// json 2, csv 3, so `g_object_set (v, "results-format", 2, NULL)` means
/// JSON on both elements.
#[derive(Debug, Eq, PartialEq, Hash, Clone, Copy, glib::Enum)]
#[repr(u32)]
#[enum_type(name = "GstVmafHipResultsFormat")]
pub enum ResultsFormat {
    #[enum_value(name = "No results file", nick = "none")]
    None = 0,
    #[enum_value(name = "libvmaf XML", nick = "xml")]
    Xml = 1,
    #[enum_value(name = "libvmaf JSON", nick = "json")]
    Json = 2,
    #[enum_value(name = "Comma-separated values", nick = "csv")]
    Csv = 3,
    /// vmafhip's own, past libvmaf's values (its 4 is `sub`): one JSON
    /// object per line, every line whole after a crash.
    #[enum_value(
        name = "JSON Lines (a header, a line per frame, the pooled line)",
        nick = "jsonl"
    )]
    Jsonl = 5,
}

/// `backend`: where the features are computed.
#[derive(Debug, Eq, PartialEq, Hash, Clone, Copy, glib::Enum)]
#[repr(u32)]
#[enum_type(name = "GstVmafHipBackend")]
pub enum Backend {
    #[enum_value(
        name = "HIP when a GPU is usable, else CPU (with a warning)",
        nick = "auto"
    )]
    Auto = 0,
    #[enum_value(name = "CPU engine", nick = "cpu")]
    Cpu = 1,
    #[enum_value(name = "HIP GPU engine; error when no GPU is usable", nick = "hip")]
    Hip = 2,
}

/// `scaler`: how a rendition of another size than the reference is scaled
/// to it (`core::scale`).
#[derive(Debug, Eq, PartialEq, Hash, Clone, Copy, glib::Enum)]
#[repr(u32)]
#[enum_type(name = "GstVmafHipScaler")]
pub enum Scaling {
    #[enum_value(name = "Bilinear (2 taps at 1:1)", nick = "bilinear")]
    Bilinear = 0,
    #[enum_value(
        name = "Bicubic, ffmpeg's default (B = 0, C = 0.6; 4 taps at 1:1)",
        nick = "bicubic"
    )]
    Bicubic = 1,
    #[enum_value(name = "Lanczos, 3 lobes (6 taps at 1:1)", nick = "lanczos")]
    Lanczos = 2,
}

impl Scaling {
    pub fn method(self) -> crate::vmaf::ScaleMethod {
        use crate::vmaf::ScaleMethod as M;
        match self {
            Scaling::Bilinear => M::Bilinear,
            Scaling::Bicubic => M::Bicubic,
            Scaling::Lanczos => M::Lanczos,
        }
    }
}

/// `on-gpu-error`: what a GPU error in the middle of a stream does.
#[derive(Debug, Eq, PartialEq, Hash, Clone, Copy, glib::Enum)]
#[repr(u32)]
#[enum_type(name = "GstVmafHipOnGpuError")]
pub enum OnGpuError {
    #[enum_value(name = "retry with backend=auto, fail with backend=hip", nick = "auto")]
    Auto = 0,
    #[enum_value(name = "the stream ends with the error", nick = "fail")]
    Fail = 1,
    #[enum_value(
        name = "the CPU engine takes over the stream, with the same numbers (a warning says where)",
        nick = "cpu"
    )]
    Cpu = 2,
    #[enum_value(
        name = "the CPU engine takes over, and the stream goes back to the GPU once it opens again (tried after gpu-retry-delay, doubling to a minute while it fails)",
        nick = "retry"
    )]
    Retry = 3,
}

/// `vendor`: which GPU stack the HIP backend loads (the environment variable
/// `VMAFHIP_VENDOR` overrides `auto`).
#[derive(Debug, Eq, PartialEq, Hash, Clone, Copy, glib::Enum)]
#[repr(u32)]
#[enum_type(name = "GstVmafHipVendor")]
pub enum Vendor {
    #[enum_value(name = "AMD (libamdhip64) first, then NVIDIA (libcuda)", nick = "auto")]
    Auto = 0,
    #[enum_value(name = "AMD: libamdhip64 + hiprtc", nick = "amd")]
    Amd = 1,
    #[enum_value(name = "NVIDIA: libcuda + nvrtc", nick = "nvidia")]
    Nvidia = 2,
}

/// `log-level`: how much the element logs about its work (debug category
/// `vmafhip`), named like libvmaf's log levels.
#[derive(Debug, Eq, PartialEq, Hash, Clone, Copy, glib::Enum)]
#[repr(u32)]
#[enum_type(name = "GstVmafHipLogLevel")]
pub enum LogLevel {
    #[enum_value(name = "None", nick = "none")]
    None = 0,
    #[enum_value(name = "Errors", nick = "error")]
    Error = 1,
    #[enum_value(name = "Warnings", nick = "warning")]
    Warning = 2,
    #[enum_value(name = "Information", nick = "info")]
    Info = 3,
    #[enum_value(name = "Debugging", nick = "debug")]
    Debug = 4,
}

/// Structure name of every message this element posts.
pub const MESSAGE_NAME: &str = "VMAF";

/// A `frame` message: the scores of one frame.
#[derive(Clone, Debug, PartialEq)]
pub struct VmafFrameMessage {
    pub index: u64,
    pub timestamp: Option<gst::ClockTime>,
    pub stream_time: Option<gst::ClockTime>,
    pub running_time: Option<gst::ClockTime>,
    pub duration: Option<gst::ClockTime>,
    /// The model's score (`vmaf`).
    pub score: f64,
    pub psnr_y: Option<f64>,
    pub ssim: Option<f64>,
    pub ms_ssim: Option<f64>,
    /// Every other value libvmaf would print for this frame, by its libvmaf name.
    pub features: Vec<(String, f64)>,
    /// Which engine and device produced the numbers.
    pub backend: String,
    /// The distorted input's pad (`dist_sink`, `dist_sink_1`, ...) and its
    /// `label`, when set: which rendition of a ladder this is.
    pub rendition: String,
    pub label: Option<String>,
    /// On a stream's first frame, when the inputs were aligned (`align`):
    /// the offset, and how clearly it was found (None: given).
    pub alignment: Option<(i32, Option<f64>)>,
}

impl VmafFrameMessage {
    pub fn feature(&self, name: &str) -> Option<f64> {
        self.features
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }
}

/// The `pooled` message at end of stream (or of a flushed segment).
#[derive(Clone, Debug, PartialEq)]
pub struct VmafPooledMessage {
    /// Why it was posted: `eos` (the whole stream), `flush` (a flushing
    /// seek ended the segment) or `caps-changed` (the frames before a caps
    /// change). Empty when read from a message without the field.
    pub reason: String,
    /// The last scored frame's times, and the scored frames' total duration.
    pub timestamp: Option<gst::ClockTime>,
    pub stream_time: Option<gst::ClockTime>,
    pub running_time: Option<gst::ClockTime>,
    pub duration: Option<gst::ClockTime>,
    /// The model score pooled with `pool-method`.
    pub score: f64,
    pub pool_method: String,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub harmonic_mean: f64,
    pub frames: u64,
    pub psnr_y: Option<f64>,
    pub ssim: Option<f64>,
    pub ms_ssim: Option<f64>,
    /// Mean of every other metric, by libvmaf name.
    pub features: Vec<(String, f64)>,
    pub backend: String,
    /// As in [`VmafFrameMessage`].
    pub rendition: String,
    pub label: Option<String>,
    /// How the reference frames were paired: `frames-fresh`,
    /// `frames-repeated`, `frames-unscored` (live pipelines: see
    /// `late-frame-wait`).
    pub pairing: Pairing,
    /// The application stopped the inputs before they ended (it sent the
    /// [`INTERRUPTED_EVENT`]): the pooled values cover the frames scored.
    pub interrupted: bool,
    /// Frames the distorted input lags the reference (`align`), and how
    /// clearly it was found (None: given, or not aligned).
    pub offset: i32,
    pub offset_confidence: Option<f64>,
}

/// A `window` message: a rendition's scores over the last `window` of
/// stream time (live QA's rolling score), posted when the first frame
/// past it is final, and at the end for the window cut short.
#[derive(Clone, Debug, PartialEq)]
pub struct VmafWindowMessage {
    pub summary: WindowSummary,
    pub backend: String,
    /// As in [`VmafFrameMessage`].
    pub rendition: String,
    pub label: Option<String>,
}

/// The name of a custom out-of-band event an application sends to
/// `ref_sink` before stopping the inputs early (with EOS), so that the
/// pooled message and the results file say the run was interrupted.
pub const INTERRUPTED_EVENT: &str = "vmafhip-interrupted";

const CORE_FIELDS: &[&str] = &[
    "type",
    "index",
    "index64",
    "timestamp",
    "stream-time",
    "running-time",
    "duration",
    "score",
    "psnr-y",
    "ssim",
    "ms-ssim",
    "backend",
    "pool-method",
    "min",
    "max",
    "mean",
    "harmonic-mean",
    "frames",
    "reason",
    "frames-fresh",
    "frames-repeated",
    "frames-unscored",
    "frames-reference",
    "frames-distorted",
    "distorted-past-end",
    "frames-dropped",
    "frames-duplicated",
    "frames-late",
    "interrupted",
    "align-offset",
    "align-confidence",
    "rendition",
    "label",
];

/// The fields both message types end with: optional metrics, every other
/// metric by libvmaf name, the backend.
fn finish(
    mut b: gst::structure::Builder,
    optional: [Option<f64>; 3],
    features: &[(String, f64)],
    backend: &str,
    (rendition, label): (&str, Option<&str>),
) -> gst::Structure {
    for (name, v) in ["psnr-y", "ssim", "ms-ssim"].into_iter().zip(optional) {
        if let Some(v) = v {
            b = b.field(name, v);
        }
    }
    for (n, v) in features {
        b = b.field(n.as_str(), *v);
    }
    b = b.field("backend", backend).field("rendition", rendition);
    if let Some(l) = label {
        b = b.field("label", l);
    }
    b.build()
}

/// The four GstClockTime fields (guint64; GST_CLOCK_TIME_NONE when unknown).
fn times(
    mut b: gst::structure::Builder,
    t: [Option<gst::ClockTime>; 4],
) -> gst::structure::Builder {
    for (name, t) in ["timestamp", "stream-time", "running-time", "duration"]
        .into_iter()
        .zip(t)
    {
        b = b.field(name, t.map_or(u64::MAX, |t| t.nseconds()));
    }
    b
}

fn expect_type(s: &gst::StructureRef, kind: &str) -> Result<(), String> {
    if s.name() != MESSAGE_NAME || s.get::<&str>("type").ok() != Some(kind) {
        return Err(format!("not a VMAF {kind} message: {s}"));
    }
    Ok(())
}

fn get_time(s: &gst::StructureRef, name: &str) -> Option<gst::ClockTime> {
    s.get::<u64>(name)
        .ok()
        .filter(|&v| v != u64::MAX)
        .map(gst::ClockTime::from_nseconds)
}

fn extra_features(s: &gst::StructureRef) -> Vec<(String, f64)> {
    s.iter()
        .filter(|(n, _)| !CORE_FIELDS.contains(&n.as_str()))
        .filter_map(|(n, v)| v.get::<f64>().ok().map(|v| (n.to_string(), v)))
        .collect()
}

impl From<&VmafFrameMessage> for gst::Structure {
    fn from(m: &VmafFrameMessage) -> gst::Structure {
        // `index` is a gint as in GStreamer 1.28 (saturating after 2^31 − 1
        // frames: years of a live stream); `index64` carries the full count.
        let b = gst::Structure::builder(MESSAGE_NAME)
            .field("type", "frame")
            .field("index", i32::try_from(m.index).unwrap_or(i32::MAX))
            .field("index64", m.index);
        let b = times(b, [m.timestamp, m.stream_time, m.running_time, m.duration])
            .field("score", m.score);
        let b = match m.alignment {
            Some((offset, confidence)) => {
                let b = b.field("align-offset", offset);
                match confidence {
                    Some(c) => b.field("align-confidence", c),
                    None => b,
                }
            }
            None => b,
        };
        finish(
            b,
            [m.psnr_y, m.ssim, m.ms_ssim],
            &m.features,
            &m.backend,
            (&m.rendition, m.label.as_deref()),
        )
    }
}

impl TryFrom<&gst::StructureRef> for VmafFrameMessage {
    type Error = String;
    fn try_from(s: &gst::StructureRef) -> Result<Self, String> {
        expect_type(s, "frame")?;
        let index = match s.get::<u64>("index64") {
            Ok(i) => i,
            Err(_) => s.get::<i32>("index").map_err(|e| e.to_string())? as u64,
        };
        Ok(VmafFrameMessage {
            index,
            timestamp: get_time(s, "timestamp"),
            stream_time: get_time(s, "stream-time"),
            running_time: get_time(s, "running-time"),
            duration: get_time(s, "duration"),
            score: s.get("score").map_err(|e| e.to_string())?,
            psnr_y: s.get("psnr-y").ok(),
            ssim: s.get("ssim").ok(),
            ms_ssim: s.get("ms-ssim").ok(),
            features: extra_features(s),
            backend: s.get::<String>("backend").unwrap_or_default(),
            rendition: s.get::<String>("rendition").unwrap_or_default(),
            label: s.get::<String>("label").ok(),
            alignment: s
                .get::<i32>("align-offset")
                .ok()
                .map(|o| (o, s.get::<f64>("align-confidence").ok())),
        })
    }
}

impl From<&VmafPooledMessage> for gst::Structure {
    fn from(m: &VmafPooledMessage) -> gst::Structure {
        let b = gst::Structure::builder(MESSAGE_NAME)
            .field("type", "pooled")
            .field("reason", m.reason.as_str());
        let b = times(b, [m.timestamp, m.stream_time, m.running_time, m.duration])
            .field("score", m.score)
            .field("pool-method", m.pool_method.as_str())
            .field("min", m.min)
            .field("max", m.max)
            .field("mean", m.mean)
            .field("harmonic-mean", m.harmonic_mean)
            .field("frames", m.frames)
            .field("frames-fresh", m.pairing.fresh)
            .field("frames-repeated", m.pairing.repeated)
            .field("frames-unscored", m.pairing.unscored)
            .field("frames-reference", m.pairing.reference())
            .field("frames-distorted", m.pairing.distorted)
            .field("distorted-past-end", m.pairing.distorted_past_end)
            .field("frames-dropped", m.pairing.dropped)
            .field("frames-duplicated", m.pairing.duplicated)
            .field("frames-late", m.pairing.late)
            .field("interrupted", m.interrupted)
            .field("align-offset", m.offset);
        let b = match m.offset_confidence {
            Some(c) => b.field("align-confidence", c),
            None => b,
        };
        finish(
            b,
            [m.psnr_y, m.ssim, m.ms_ssim],
            &m.features,
            &m.backend,
            (&m.rendition, m.label.as_deref()),
        )
    }
}

impl TryFrom<&gst::StructureRef> for VmafPooledMessage {
    type Error = String;
    fn try_from(s: &gst::StructureRef) -> Result<Self, String> {
        expect_type(s, "pooled")?;
        let f = |n: &str| s.get::<f64>(n).map_err(|e| format!("{n}: {e}"));
        Ok(VmafPooledMessage {
            reason: s.get::<String>("reason").unwrap_or_default(),
            timestamp: get_time(s, "timestamp"),
            stream_time: get_time(s, "stream-time"),
            running_time: get_time(s, "running-time"),
            duration: get_time(s, "duration"),
            score: f("score")?,
            pool_method: s.get::<String>("pool-method").unwrap_or_default(),
            min: f("min")?,
            max: f("max")?,
            mean: f("mean")?,
            harmonic_mean: f("harmonic-mean")?,
            frames: s.get("frames").map_err(|e| e.to_string())?,
            psnr_y: s.get("psnr-y").ok(),
            ssim: s.get("ssim").ok(),
            ms_ssim: s.get("ms-ssim").ok(),
            features: extra_features(s),
            backend: s.get::<String>("backend").unwrap_or_default(),
            rendition: s.get::<String>("rendition").unwrap_or_default(),
            label: s.get::<String>("label").ok(),
            pairing: Pairing {
                fresh: s.get("frames-fresh").unwrap_or_default(),
                repeated: s.get("frames-repeated").unwrap_or_default(),
                unscored: s.get("frames-unscored").unwrap_or_default(),
                distorted: s.get("frames-distorted").unwrap_or_default(),
                distorted_past_end: s.get("distorted-past-end").unwrap_or_default(),
                dropped: s.get("frames-dropped").unwrap_or_default(),
                duplicated: s.get("frames-duplicated").unwrap_or_default(),
                late: s.get("frames-late").unwrap_or_default(),
            },
            interrupted: s.get("interrupted").unwrap_or_default(),
            offset: s.get("align-offset").unwrap_or_default(),
            offset_confidence: s.get("align-confidence").ok(),
        })
    }
}

impl From<&VmafWindowMessage> for gst::Structure {
    fn from(m: &VmafWindowMessage) -> gst::Structure {
        let w = &m.summary;
        let mut b = gst::Structure::builder(MESSAGE_NAME)
            .field("type", "window")
            .field("index-first", w.first)
            .field("index-last", w.last)
            .field("start", w.start)
            .field("window", w.length)
            .field("frames", w.frames)
            .field("mean", w.mean)
            .field("harmonic-mean", w.harmonic_mean)
            .field("min", w.min)
            .field("low-1", w.low_1)
            .field("frames-repeated", w.repeated)
            .field("frames-unscored", w.unscored)
            .field("frames-dropped", w.dropped)
            .field("frames-duplicated", w.duplicated)
            .field("frames-late", w.late)
            .field("alert", w.alert)
            .field("partial", w.partial)
            .field("backend", m.backend.as_str())
            .field("rendition", m.rendition.as_str());
        if let Some(l) = &m.label {
            b = b.field("label", l.as_str());
        }
        b.build()
    }
}

impl TryFrom<&gst::StructureRef> for VmafWindowMessage {
    type Error = String;
    fn try_from(s: &gst::StructureRef) -> Result<Self, String> {
        expect_type(s, "window")?;
        let f = |n: &str| s.get::<f64>(n).map_err(|e| format!("{n}: {e}"));
        let u = |n: &str| s.get::<u64>(n).map_err(|e| format!("{n}: {e}"));
        Ok(VmafWindowMessage {
            summary: WindowSummary {
                first: u("index-first")?,
                last: u("index-last")?,
                start: u("start")?,
                length: u("window")?,
                frames: u("frames")?,
                mean: f("mean")?,
                harmonic_mean: f("harmonic-mean")?,
                min: f("min")?,
                low_1: f("low-1")?,
                repeated: u("frames-repeated")?,
                unscored: u("frames-unscored")?,
                dropped: s.get("frames-dropped").unwrap_or_default(),
                duplicated: s.get("frames-duplicated").unwrap_or_default(),
                late: s.get("frames-late").unwrap_or_default(),
                alert: s.get("alert").unwrap_or_default(),
                partial: s.get("partial").unwrap_or_default(),
            },
            backend: s.get::<String>("backend").unwrap_or_default(),
            rendition: s.get::<String>("rendition").unwrap_or_default(),
            label: s.get::<String>("label").ok(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_message_round_trip() {
        gst::init().unwrap();
        let m = VmafFrameMessage {
            index: 3,
            timestamp: Some(gst::ClockTime::from_mseconds(100)),
            stream_time: Some(gst::ClockTime::from_mseconds(100)),
            running_time: None,
            duration: Some(gst::ClockTime::from_mseconds(40)),
            score: 91.5,
            psnr_y: Some(40.0),
            ssim: None,
            ms_ssim: None,
            features: vec![
                ("integer_adm2".into(), 0.98),
                ("integer_vif_scale0".into(), 0.7),
            ],
            backend: "cpu (1 thread)".into(),
            rendition: "dist_sink_2".into(),
            label: Some("720p".into()),
            alignment: None,
        };
        let s = gst::Structure::from(&m);
        assert_eq!(VmafFrameMessage::try_from(s.as_ref()).unwrap(), m);
        let first = VmafFrameMessage {
            index: 0,
            alignment: Some((5, Some(0.99))),
            ..m.clone()
        };
        let f = gst::Structure::from(&first);
        assert_eq!(VmafFrameMessage::try_from(f.as_ref()).unwrap(), first);
        assert_eq!(f.get::<i32>("align-offset"), Ok(5));
        assert!(VmafPooledMessage::try_from(s.as_ref()).is_err());
        // GStreamer 1.28's types: index a gint, times guint64, score a double.
        assert_eq!(s.get::<i32>("index"), Ok(3));
        assert_eq!(s.get::<u64>("timestamp"), Ok(100_000_000));
        assert_eq!(s.get::<u64>("running-time"), Ok(u64::MAX));
        assert_eq!(s.get::<f64>("score"), Ok(91.5));
    }

    #[test]
    fn pooled_message_round_trip() {
        gst::init().unwrap();
        let m = VmafPooledMessage {
            reason: "eos".into(),
            timestamp: Some(gst::ClockTime::from_mseconds(480)),
            stream_time: None,
            running_time: Some(gst::ClockTime::from_mseconds(480)),
            duration: Some(gst::ClockTime::from_mseconds(520)),
            score: 80.5,
            pool_method: "mean".into(),
            min: 70.0,
            max: 90.0,
            mean: 80.5,
            harmonic_mean: 80.1,
            frames: 12,
            psnr_y: None,
            ssim: Some(0.97),
            ms_ssim: None,
            features: vec![("integer_motion2".into(), 3.0)],
            backend: "cpu".into(),
            rendition: "dist_sink".into(),
            label: None,
            pairing: Pairing {
                fresh: 10,
                repeated: 2,
                unscored: 1,
                distorted: 12,
                distorted_past_end: true,
                dropped: 2,
                duplicated: 1,
                late: 1,
            },
            interrupted: true,
            offset: -3,
            offset_confidence: Some(0.875),
        };
        let s = gst::Structure::from(&m);
        assert_eq!(VmafPooledMessage::try_from(s.as_ref()).unwrap(), m);
    }

    #[test]
    fn window_message_round_trip() {
        gst::init().unwrap();
        let m = VmafWindowMessage {
            summary: WindowSummary {
                first: 250,
                last: 499,
                start: 10_000_000_000,
                length: 10_000_000_000,
                frames: 250,
                mean: 71.25,
                harmonic_mean: 70.5,
                min: 40.0,
                low_1: 45.5,
                repeated: 3,
                unscored: 1,
                dropped: 2,
                duplicated: 1,
                late: 1,
                alert: true,
                partial: false,
            },
            backend: "cpu".into(),
            rendition: "dist_sink_1".into(),
            label: Some("720p".into()),
        };
        let s = gst::Structure::from(&m);
        assert_eq!(VmafWindowMessage::try_from(s.as_ref()).unwrap(), m);
        assert!(VmafFrameMessage::try_from(s.as_ref()).is_err());
        assert!(
            VmafWindowMessage::try_from(
                gst::Structure::from(&VmafPooledMessage {
                    reason: "eos".into(),
                    timestamp: None,
                    stream_time: None,
                    running_time: None,
                    duration: None,
                    score: 1.0,
                    pool_method: "mean".into(),
                    min: 1.0,
                    max: 1.0,
                    mean: 1.0,
                    harmonic_mean: 1.0,
                    frames: 1,
                    psnr_y: None,
                    ssim: None,
                    ms_ssim: None,
                    features: Vec::new(),
                    backend: String::new(),
                    rendition: String::new(),
                    label: None,
                    pairing: Pairing::default(),
                    interrupted: false,
                    offset: 0,
                    offset_confidence: None,
                })
                .as_ref()
            )
            .is_err()
        );
    }
}
