//! The element's properties: their specifications, and reading and
//! writing the settings behind them.

use super::{CAT, VmafHip};
use crate::element::LogLevel;
use crate::element::settings::*;
use crate::vmaf::{self, settings::*};
use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;
use once_cell::sync::Lazy;

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

impl VmafHip {
    /// Every property: GStreamer 1.28's `vmaf` names where it has them, the
    /// switches from the extractors that have one, the engine settings as
    /// the one door declares them (`vmaf::settings`).
    pub(super) fn property_specs() -> &'static [glib::ParamSpec] {
        static PROPS: Lazy<Vec<glib::ParamSpec>> = Lazy::new(|| {
            let mut specs = vec![
                glib::ParamSpecString::builder("model-filename")
                    .nick("Model")
                    .blurb(model_blurb())
                    .default_value(Some(DEFAULT_MODEL))
                    .mutable_ready()
                    .build(),
                glib::ParamSpecBoolean::builder("disable-clip")
                    .nick("Disable clipping")
                    .blurb("Do not clip scores to the model's range")
                    .default_value(DEFAULT_DISABLE_CLIP)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecBoolean::builder("enable-transform")
                    .nick("Enable transform")
                    .blurb("Apply the model's score transform")
                    .default_value(DEFAULT_ENABLE_TRANSFORM)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecBoolean::builder("phone-model")
                    .nick("Phone model")
                    .blurb("Score for phone viewing (enables the score transform)")
                    .default_value(DEFAULT_PHONE_MODEL)
                    .mutable_ready()
                    .build(),
            ];
            specs.extend(crate::extractors::switched().map(|(_, sw)| {
                glib::ParamSpecBoolean::builder(sw.property)
                    .nick(sw.nick)
                    .blurb(sw.blurb)
                    .default_value(false)
                    .mutable_ready()
                    .build()
            }));
            specs.extend([
                glib::ParamSpecEnum::builder_with_default("pool-method", DEFAULT_POOL_METHOD).nick("Pool method").blurb("How the pooled message's score pools the frames").mutable_ready().build(),
                glib::ParamSpecUInt::builder(THREADS.name).nick("Threads").blurb(THREADS.help).default_value(DEFAULT_THREADS).mutable_ready().build(),
                glib::ParamSpecUInt::builder(SUBSAMPLE.name).nick("Subsample").blurb(SUBSAMPLE.help).minimum(1).default_value(DEFAULT_SUBSAMPLE).mutable_ready().build(),
                glib::ParamSpecBoolean::builder("conf-interval").nick("Confidence interval").blurb("Add 95% confidence interval fields (needs a bootstrap model collection)").default_value(DEFAULT_CONF_INTERVAL).mutable_ready().build(),
                glib::ParamSpecBoolean::builder("frame-message").nick("Frame messages").blurb("Post a VMAF element message for every scored frame").default_value(DEFAULT_FRAME_MESSAGE).mutable_ready().build(),
                glib::ParamSpecString::builder("results-filename").nick("Results file").blurb("Write libvmaf-style results here, each frame as its score becomes final, completed at end of stream (JSON unless results-format says otherwise)").mutable_ready().build(),
                glib::ParamSpecEnum::builder_with_default("results-format", DEFAULT_RESULTS_FORMAT).nick("Results format").blurb("Layout of the results file").mutable_ready().build(),
                glib::ParamSpecString::builder("report-filename").nick("Report file").blurb("Write a self-contained HTML report here at end of stream (and at each flushing seek): the VMAF curve, each metric per frame, the worst frames").mutable_ready().build(),
                glib::ParamSpecString::builder("report-title").nick("Report title").blurb("Heading of the HTML report (default: the inputs' names, as upstream reports them)").mutable_ready().build(),
                glib::ParamSpecString::builder("features").nick("Extra features").blurb(&format!("Comma-separated extractors computed beside the model's, by libvmaf's names, each with options as libvmaf's --feature takes them (cambi=full_ref=true:enc_width=1280); outputs carry libvmaf's names: {}", crate::extractors::feature_names().join(", "))).mutable_ready().build(),
                glib::ParamSpecEnum::builder_with_default("log-level", DEFAULT_LOG_LEVEL).nick("Log level").blurb("Threshold of the vmafhip debug category").mutable_ready().build(),
                glib::ParamSpecEnum::builder_with_default(BACKEND.name, DEFAULT_BACKEND).nick("Backend").blurb(BACKEND.help).mutable_ready().build(),
                glib::ParamSpecEnum::builder_with_default(ON_GPU_ERROR.name, DEFAULT_ON_GPU_ERROR).nick("On GPU error").blurb(ON_GPU_ERROR.help).mutable_ready().build(),
                glib::ParamSpecEnum::builder_with_default("scaler", DEFAULT_SCALER).nick("Scaler").blurb("How a rendition on a dist_sink_%u pad of another size than the reference is scaled to the reference's size before it is scored, the same on the GPU and the CPU: bicubic (ffmpeg's default, B = 0, C = 0.6), bilinear or lanczos").mutable_ready().build(),
                glib::ParamSpecUInt::builder(GPU_RETRY_DELAY.name).nick("GPU retry delay").blurb(GPU_RETRY_DELAY.help).default_value(DEFAULT_GPU_RETRY_DELAY).mutable_ready().build(),
                glib::ParamSpecUInt64::builder("max-pending").nick("Max pending").blurb("Live pipelines: nanoseconds (of running time) a reference frame may wait for its distorted frame. The reference passes through on time; each frame is scored when its distorted frame arrives, its message posted late with its own timestamp. Past this a frame is not scored (counted in frames-unscored, with a warning). The waiting frames are held in memory (5 s of 1080p30: about 450 MB). 0: no waiting; each frame is scored at its deadline against what the distorted pad holds (see late-frame-wait)").default_value(DEFAULT_MAX_PENDING).mutable_ready().build(),
                glib::ParamSpecUInt64::builder("window").nick("Window").blurb("Nanoseconds of stream time (the frames' timestamps) each rendition's rolling score covers: a window message (type window) per window, with its first and last frame, start, frames, mean, harmonic-mean, min, low-1 (the k-th smallest score, k = 1% of its frames, rounded up), frames-repeated and frames-unscored (duplicates and drops while it was open), alert and partial (the last window, cut short by the end). 0: none").default_value(DEFAULT_WINDOW).mutable_ready().build(),
                glib::ParamSpecDouble::builder("alert-below").nick("Alert below").blurb("With window: a window whose mean VMAF is below this posts a warning message naming the rendition, the window and the mean, once, and an info message when a later window's mean is back at or above it; the window messages' alert field holds the state. 0: never").minimum(0.0).maximum(100.0).default_value(DEFAULT_ALERT_BELOW).mutable_ready().build(),
                glib::ParamSpecString::builder("align").nick("Align").blurb("How the distorted inputs' frames are paired with the reference's: off (by timestamp), auto (by content: the offset within align-window found at start, then dropped and duplicated frames followed; frames in system memory), or N (by content from N frames: N > 0, the distorted inputs' first N frames precede the reference's first, as an encoder's leading frames; N < 0, the reference's first |N| frames have none, as a trimmed start)").default_value(Some("off")).mutable_ready().build(),
                glib::ParamSpecUInt64::builder("align-window").nick("Align window").blurb("align=auto: the offsets searched at start, in nanoseconds either way (the frames of this and one more second are held meanwhile)").minimum(0).maximum(60_000_000_000).default_value(DEFAULT_ALIGN_WINDOW).mutable_ready().build(),
                glib::ParamSpecString::builder("metrics-address").nick("Metrics address").blurb("Serve OpenMetrics text at http://ADDRESS/metrics while the element runs: per rendition, the engine, frames scored, repeated and unscored, the last frame's VMAF, the last window's scores and alert (window), and the scoring rate. PORT or :PORT listen on loopback (127.0.0.1); ADDRESS:PORT where given; port 0 picks a free one (see metrics-url). Unset: no endpoint").mutable_ready().build(),
                glib::ParamSpecString::builder("metrics-url").nick("Metrics URL").blurb("Where the metrics endpoint listens while the element runs (metrics-address), with the port it got").read_only().build(),
                glib::ParamSpecInt64::builder("late-frame-wait").nick("Late frame wait").blurb("Live pipelines: nanoseconds added to each deadline, beyond the upstream latency, reported as the element's latency. With max-pending 0, the wait for a distorted frame that is late before the reference frame is scored against the distorted pad's last picture (counted as repeated); the element also waits up to 10 s for the distorted branch's first frame. -1: three frames' time at the reference's frame rate, at least 40 ms (100 ms when unknown), with max-pending 0; none otherwise. 0: no wait at all (with max-pending 0, a stalled pad's last picture is scored at once, and reference frames before the distorted branch's first frame pass through unscored)").minimum(-1).default_value(DEFAULT_LATE_FRAME_WAIT).mutable_ready().build(),
                glib::ParamSpecEnum::builder_with_default(VENDOR.name, DEFAULT_VENDOR).nick("Vendor").blurb(VENDOR.help).mutable_ready().build(),
                glib::ParamSpecInt::builder(DEVICE_ID.name).nick("Device").blurb(DEVICE_ID.help).minimum(0).default_value(DEFAULT_DEVICE_ID).mutable_ready().build(),
                glib::ParamSpecBoxed::builder::<gst::Structure>("stats").nick("Statistics").blurb("How input planes reached the GPU since start: planes-staged (copied on the host into staging memory), planes-pinned (uploaded from pinned memory: the element's pinned pool, or the sink pads' copy), planes-copied-on-arrival (planes the sink pads copied into pinned memory as frames arrived in ordinary memory: the luma, and the chroma where an extractor reads it; uploaded from there, they count under planes-pinned), planes-registered (host memory page-locked where it lay, NVIDIA), planes-device (GStreamer GPU memory, copied on the device), planes-device-copied (planes of frames in GPU memory of another device or CUDA context, copied on the GPU into memory of the engine's device before it reads them); pinned-blocks (page-locked host blocks allocated for the sink pads' pools and copies, each recycled once its frame is done); gpu-memory: the GPU memory caps features the sink pads take, or none").read_only().build(),
            ]);
            specs
        });
        PROPS.as_ref()
    }

    /// `set_property`.
    pub(super) fn set_setting(&self, value: &glib::Value, pspec: &glib::ParamSpec) {
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
            "device-id" => {
                s.device_id = value.get().unwrap();
                s.device_id_set = true;
            }
            "vendor" => s.vendor = value.get().unwrap(),
            switch if s.switch(switch).is_some() => s.set_switch(switch, value.get().unwrap()),
            other => unreachable!("unknown property {other}"),
        }
    }

    /// `property`.
    pub(super) fn setting(&self, pspec: &glib::ParamSpec) -> glib::Value {
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
            let gpu = self
                .gpu_input()
                .map_or_else(|| "none".to_string(), |g| g.features());
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
                .field("planes-device-copied", self.copied_on_device())
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
            other => s
                .switch(other)
                .unwrap_or_else(|| unreachable!("unknown property {other}"))
                .to_value(),
        }
    }
}
