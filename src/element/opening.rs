//! The element's settings as the one door's [`Opening`]: the model, the
//! extra features and switches, and the backend properties.

use super::settings::Settings;
use super::{Backend, OnGpuError, Vendor};
use crate::hip;
use crate::vmaf::{
    self, BackendChoice, EngineConfig, ModelFlags, ModelSet, Opened, Opening, SharedReference,
};
use std::time::Duration;

impl Backend {
    pub(super) fn choice(self) -> BackendChoice {
        match self {
            Backend::Auto => BackendChoice::Auto,
            Backend::Cpu => BackendChoice::Cpu,
            Backend::Hip => BackendChoice::Hip,
        }
    }
}

impl OnGpuError {
    pub(super) fn policy(self) -> vmaf::OnGpuError {
        match self {
            OnGpuError::Auto => vmaf::OnGpuError::Auto,
            OnGpuError::Fail => vmaf::OnGpuError::Fail,
            OnGpuError::Cpu => vmaf::OnGpuError::Cpu,
            OnGpuError::Retry => vmaf::OnGpuError::Retry,
        }
    }
}

impl Vendor {
    /// The HIP layer's vendor for the `vendor` property.
    /// `vendor` where `self` admits it (auto admits either), as a setting.
    pub(super) fn admitted(self, vendor: hip::Vendor) -> Option<Vendor> {
        let v = match vendor {
            hip::Vendor::Amd => Vendor::Amd,
            hip::Vendor::Nvidia => Vendor::Nvidia,
            hip::Vendor::Auto => return Some(self),
        };
        (self == Vendor::Auto || self == v).then_some(v)
    }

    pub(super) fn hip(self) -> hip::Vendor {
        match self {
            Vendor::Auto => hip::Vendor::Auto,
            Vendor::Amd => hip::Vendor::Amd,
            Vendor::Nvidia => hip::Vendor::Nvidia,
        }
    }
}

fn settings_error(what: String) -> gst::ErrorMessage {
    gst::error_msg!(gst::LibraryError::Settings, ["{what}"])
}

/// What the engine computes for `s`: the model, its flags, the extra
/// features and the switches of GStreamer's `vmaf`.
fn engine_config(s: &Settings) -> Result<EngineConfig, gst::ErrorMessage> {
    let models = ModelSet::load(&s.model_filename)
        .map_err(|e| settings_error(format!("model-filename \"{}\": {e}", s.model_filename)))?;
    if s.conf_interval && models.bootstrap.is_empty() {
        return Err(settings_error(format!(
            "conf-interval needs a bootstrap model collection (the built-in vmaf_b_v0.6.3, or a collection file); \"{}\" is a single model",
            s.model_filename
        )));
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
        crate::extractors::check_feature(f).map_err(|e| {
            gst::error_msg!(
                gst::LibraryError::Settings,
                ("features: {e}"),
                ["checking the settings at start"]
            )
        })?;
        if !config.features.contains(f) {
            config.features.push(f.clone());
        }
    }
    // The switches of GStreamer's `vmaf`, after the extras.
    for name in s.switched_features() {
        config.features.push(name.into());
    }
    Ok(config)
}

/// The engine of one rendition, through the one door: on the GPU, a
/// backend sharing the ladder's `reference` with the other renditions.
pub(super) fn open_engine(
    s: &Settings,
    reference: &SharedReference,
) -> Result<Opened, gst::ErrorMessage> {
    let opening = Opening {
        backend: s.backend.choice(),
        vendor: s.vendor.hip(),
        device_id: s.device_id.max(0) as usize,
        shared_reference: Some(reference.clone()),
        on_gpu_error: s.on_gpu_error.policy(),
        retry_delay: Duration::from_millis(s.gpu_retry_delay.into()),
        ..Opening::new(engine_config(s)?)
    };
    vmaf::open(&opening).map_err(|e| match e {
        vmaf::OpenError::NoGpu(why) => gst::error_msg!(gst::LibraryError::Init, ["{why}"]),
        vmaf::OpenError::Settings(e) => settings_error(e.to_string()),
    })
}
