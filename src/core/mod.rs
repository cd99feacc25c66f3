//! The engine's vocabulary, which every layer above uses and which knows
//! none of them: pictures and frames, the error type, a frame's values and
//! scores, the models, pooling, the output formats, YUV and Y4M reading,
//! the CPU scaler, and the SIMD dispatch ([`isa`]).
//!
//! The layers, lowest first: `core`, `hip` (the GPU runtime), `extractors`,
//! `cpu` and `gpu` (the backends), `vmaf` (the scorer), `element`
//! (docs/architecture.md).

pub mod align;
pub mod backend;
pub mod error;
pub mod frame;
pub mod isa;
pub mod model;
pub mod output;
pub mod picture;
pub mod pool;
pub mod scale;
pub mod scores;
pub mod values;
pub mod y4m;
pub mod yuv;

pub use backend::{Engine, FeatureBackend};
pub use error::{MIN_SIZE, VmafError};
pub use frame::{FrameInput, FrameJob, FramePair, InputCounts, KeepAlive, Replay};
pub use model::{Bootstrap, ModelFlags, ModelSet};
pub use picture::{DevicePlane, Frame, Picture, PixelFormat, Plane};
pub use pool::{PoolMethod, Pooled};
pub use scale::{ScaleMethod, Scaler};
pub use scores::{FailoverNote, FrameScores, PooledScores};
pub use values::{FrameError, RawFeatures, Slots};
