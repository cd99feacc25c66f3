//! The engine as a library: the [`Scorer`] turns a backend's per-frame
//! values into per-frame and pooled scores (the extractors' temporal
//! stages, the model, bootstrap statistics, pooling), configured by
//! [`EngineConfig`]. The top of the engine's layers, and its public face:
//! what callers use is re-exported here, and [`open`] is the one door
//! through which every front end opens an engine.

#![forbid(unsafe_code)]

mod door;
mod scorer;

pub use crate::core::{
    Bootstrap, DevicePlane, Engine, FailoverNote, FeatureBackend, Frame, FrameInput, FrameJob,
    FramePair, FrameScores, InputCounts, KeepAlive, MIN_SIZE, ModelFlags, ModelSet, Picture,
    PixelFormat, Plane, PoolMethod, Pooled, PooledScores, RawFeatures, Replay, ScaleMethod, Scaler,
    VmafError,
};
pub use crate::core::{model, output, picture, pool, scale, y4m, yuv};
pub use crate::cpu::CpuBackend;
pub use crate::extractors::model_spec::ModelSpec;
pub use crate::extractors::plan::Plan;
pub use crate::gpu::{OpenedDevice, SharedReference};
pub use door::{
    BackendChoice, OnGpuError, OpenError, Opened, Opening, gpu_device, gpu_info, gpu_runtime, open,
    settings,
};
pub use scorer::{EngineConfig, Scorer};
