//! The element's property values and their defaults: what `start` copies
//! into the renditions.

use super::{Backend, LogLevel, OnGpuError, PoolMethod, ResultsFormat, Scaling, Vendor};

use crate::vmaf::settings as engine;

pub(super) const DEFAULT_MODEL: &str = engine::MODEL.default;
pub(super) const DEFAULT_DISABLE_CLIP: bool = false;
pub(super) const DEFAULT_ENABLE_TRANSFORM: bool = false;
pub(super) const DEFAULT_PHONE_MODEL: bool = false;
pub(super) const DEFAULT_POOL_METHOD: PoolMethod = PoolMethod::Mean;
pub(super) const DEFAULT_THREADS: u32 = engine::THREADS.default;
pub(super) const DEFAULT_SUBSAMPLE: u32 = engine::SUBSAMPLE.default;
pub(super) const DEFAULT_CONF_INTERVAL: bool = false;
pub(super) const DEFAULT_FRAME_MESSAGE: bool = false;
pub(super) const DEFAULT_RESULTS_FORMAT: ResultsFormat = ResultsFormat::None;
pub(super) const DEFAULT_LOG_LEVEL: LogLevel = LogLevel::None;
pub(super) const DEFAULT_BACKEND: Backend = Backend::Auto;
pub(super) const DEFAULT_VENDOR: Vendor = Vendor::Auto;
pub(super) const DEFAULT_ON_GPU_ERROR: OnGpuError = OnGpuError::Auto;
pub(super) const DEFAULT_DEVICE_ID: i32 = engine::DEVICE_ID.default;
pub(super) const DEFAULT_GPU_RETRY_DELAY: u32 = engine::GPU_RETRY_DELAY.default;
pub(super) const DEFAULT_SCALER: Scaling = Scaling::Bicubic;
/// -1: three frames' time (`live::late_frame_wait`).
pub(super) const DEFAULT_LATE_FRAME_WAIT: i64 = -1;
/// Five seconds (`late`).
pub(super) const DEFAULT_MAX_PENDING: u64 = 5_000_000_000;
/// No windows (`window`).
pub(super) const DEFAULT_WINDOW: u64 = 0;
/// No alerts: VMAF is never below 0.
pub(super) const DEFAULT_ALERT_BELOW: f64 = 0.0;
/// Two seconds (`align-window`).
pub(super) const DEFAULT_ALIGN_WINDOW: u64 = 2_000_000_000;

/// `align`: how the distorted inputs' frames are paired with the
/// reference's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Align {
    /// By timestamp.
    #[default]
    Off,
    /// By content: the offset found at start, then drops and duplicates
    /// followed.
    Auto,
    /// By content from a known offset: the distorted inputs lag the
    /// reference by N frames (N < 0: they lead it).
    Frames(i32),
}

impl Align {
    /// `off`, `auto` or a number of frames, as written.
    pub fn parse(v: &str) -> Option<Align> {
        match v {
            "off" => Some(Align::Off),
            "auto" => Some(Align::Auto),
            n => n.parse().ok().map(Align::Frames),
        }
    }
}

impl std::fmt::Display for Align {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Align::Off => f.write_str("off"),
            Align::Auto => f.write_str("auto"),
            Align::Frames(n) => write!(f, "{n}"),
        }
    }
}

#[derive(Clone, Debug)]
pub(super) struct Settings {
    pub(super) model_filename: String,
    pub(super) disable_clip: bool,
    pub(super) enable_transform: bool,
    pub(super) phone_model: bool,
    /// The extractors whose switch is on (`extractors::switched`), by name.
    pub(super) switched_on: Vec<&'static str>,
    pub(super) pool_method: PoolMethod,
    pub(super) threads: u32,
    pub(super) subsample: u32,
    pub(super) conf_interval: bool,
    pub(super) frame_message: bool,
    pub(super) results_filename: Option<String>,
    pub(super) results_format: ResultsFormat,
    pub(super) report_filename: Option<String>,
    pub(super) report_title: Option<String>,
    /// Extractors beyond the model's, with their options (`extractors::parse_feature`).
    pub(super) features: Vec<String>,
    pub(super) log_level: LogLevel,
    pub(super) backend: Backend,
    pub(super) device_id: i32,
    /// `device-id` was set: it wins over a device the pipeline shares.
    pub(super) device_id_set: bool,
    pub(super) vendor: Vendor,
    pub(super) on_gpu_error: OnGpuError,
    /// Milliseconds before a failed GPU is opened again (`on-gpu-error=retry`).
    pub(super) gpu_retry_delay: u32,
    /// Nanoseconds a live pipeline waits for a late distorted frame (`live`).
    pub(super) late_frame_wait: i64,
    /// Nanoseconds a live pipeline's reference frame may wait for its
    /// distorted frame, scored late (`late`); 0: not at all.
    pub(super) max_pending: u64,
    /// How a rendition of another size is scaled to the reference's.
    pub(super) scaler: Scaling,
    /// Nanoseconds of stream time each `window` message covers; 0: none.
    pub(super) window: u64,
    /// A window's mean VMAF below this raises an alert (`window`).
    pub(super) alert_below: f64,
    /// Where the metrics endpoint listens (`metrics`); None: nowhere.
    pub(super) metrics_address: Option<String>,
    /// How the frames are paired (`align`), and the start's search window
    /// in nanoseconds (`align-window`).
    pub(super) align: Align,
    pub(super) align_window: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            model_filename: DEFAULT_MODEL.into(),
            disable_clip: DEFAULT_DISABLE_CLIP,
            enable_transform: DEFAULT_ENABLE_TRANSFORM,
            phone_model: DEFAULT_PHONE_MODEL,
            switched_on: Vec::new(),
            pool_method: DEFAULT_POOL_METHOD,
            threads: DEFAULT_THREADS,
            subsample: DEFAULT_SUBSAMPLE,
            conf_interval: DEFAULT_CONF_INTERVAL,
            frame_message: DEFAULT_FRAME_MESSAGE,
            results_filename: None,
            results_format: DEFAULT_RESULTS_FORMAT,
            report_filename: None,
            report_title: None,
            features: Vec::new(),
            log_level: DEFAULT_LOG_LEVEL,
            backend: DEFAULT_BACKEND,
            device_id: DEFAULT_DEVICE_ID,
            device_id_set: false,
            vendor: DEFAULT_VENDOR,
            on_gpu_error: DEFAULT_ON_GPU_ERROR,
            late_frame_wait: DEFAULT_LATE_FRAME_WAIT,
            max_pending: DEFAULT_MAX_PENDING,
            gpu_retry_delay: DEFAULT_GPU_RETRY_DELAY,
            scaler: DEFAULT_SCALER,
            window: DEFAULT_WINDOW,
            alert_below: DEFAULT_ALERT_BELOW,
            metrics_address: None,
            align: Align::Off,
            align_window: DEFAULT_ALIGN_WINDOW,
        }
    }
}

impl Settings {
    /// Whether the switch property `property` is on; None when no
    /// extractor has a switch of that name.
    pub(super) fn switch(&self, property: &str) -> Option<bool> {
        let (name, _) = crate::extractors::switched().find(|(_, s)| s.property == property)?;
        Some(self.switched_on.contains(&name))
    }

    /// Turns the switch property `property` on or off.
    pub(super) fn set_switch(&mut self, property: &str, on: bool) {
        let Some((name, _)) = crate::extractors::switched().find(|(_, s)| s.property == property)
        else {
            return;
        };
        self.switched_on.retain(|n| *n != name);
        if on {
            self.switched_on.push(name);
        }
    }

    /// The extractors switched on, in the registry's order.
    pub(super) fn switched_features(&self) -> impl Iterator<Item = &'static str> + '_ {
        crate::extractors::switched()
            .map(|(name, _)| name)
            .filter(|name| self.switched_on.contains(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vmaf::settings as engine;
    use glib::prelude::*;

    /// The element's enum defaults are the ones the engine declares.
    #[test]
    fn enum_defaults_are_the_engines() {
        let nick = |v: glib::Value| {
            glib::EnumValue::from_value(&v)
                .map(|(_, e)| e.nick().to_string())
                .unwrap()
        };
        assert_eq!(nick(DEFAULT_BACKEND.to_value()), engine::BACKEND.default);
        assert_eq!(nick(DEFAULT_VENDOR.to_value()), engine::VENDOR.default);
        assert_eq!(
            nick(DEFAULT_ON_GPU_ERROR.to_value()),
            engine::ON_GPU_ERROR.default
        );
    }

    #[test]
    fn switches_turn_their_extractors_on_in_registry_order() {
        let mut s = Settings::default();
        assert_eq!(s.switch("ssim"), Some(false));
        assert_eq!(s.switch("vif"), None);
        s.set_switch("ms-ssim", true);
        s.set_switch("psnr", true);
        let on: Vec<_> = s.switched_features().collect();
        assert_eq!(on, ["psnr", "float_ms_ssim"]);
        s.set_switch("psnr", false);
        assert_eq!(s.switch("psnr"), Some(false));
    }
}
