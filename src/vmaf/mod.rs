//! The pure-Rust VMAF engine: libvmaf's integer extractors and SVM models,
//! bit-exact with libvmaf f85a8536, and a streaming API for the element.
//!
//! Knows nothing about GStreamer or HIP: a [`FeatureBackend`] computes the
//! per-frame features (the CPU one lives here, the HIP one in `crate::hip`),
//! and [`Scorer`] turns them into per-frame scores with the temporal stages, the
//! model, and pooling.

#![forbid(unsafe_code)]

pub mod cpu;
pub mod failover;
pub mod features;
pub mod model;
pub mod output;
pub mod picture;
pub mod pool;
pub mod scale;
mod scorer;
pub mod y4m;
pub mod yuv;

pub use cpu::CpuBackend;
pub use failover::{Failover, FailoverNote, Retry};
pub use features::{Plan, RawFeatures};
pub use model::{Bootstrap, ModelFlags, ModelSet};
pub use picture::{DevicePlane, Frame, Picture, PixelFormat, Plane};
pub use pool::{PoolMethod, Pooled};
pub use scale::{ScaleMethod, Scaler};
pub use scorer::{EngineConfig, FrameScores, PooledScores, Scorer};

use std::fmt;
use std::sync::Arc;

/// Everything that can go wrong in the engine, with enough words to act on.
#[derive(Debug, Clone, PartialEq)]
pub enum VmafError {
    /// A picture's own description is inconsistent (sizes, strides, depth).
    InvalidPicture(String),
    /// Reference and distorted (or successive frames) do not agree.
    Mismatch(String),
    /// The frame is smaller than the extractors are defined for.
    TooSmall(String),
    /// A model file is malformed; `source` names the file or built-in model.
    Model { source: String, what: String },
    /// A model asks for something this engine does not implement.
    Unsupported(String),
    /// The feature backend (worker threads, GPU) failed.
    Backend(String),
    /// Reading input or writing results failed.
    Io(String),
}

impl fmt::Display for VmafError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VmafError::InvalidPicture(s) => write!(f, "invalid picture: {s}"),
            VmafError::Mismatch(s) => write!(f, "mismatched input: {s}"),
            VmafError::TooSmall(s) => write!(f, "frame too small: {s}"),
            VmafError::Model { source, what } => write!(f, "model {source}: {what}"),
            VmafError::Unsupported(s) => write!(f, "unsupported: {s}"),
            VmafError::Backend(s) => write!(f, "backend: {s}"),
            VmafError::Io(s) => write!(f, "I/O: {s}"),
        }
    }
}

impl std::error::Error for VmafError {}

/// Smallest luma width/height: the integer ADM's fourth DWT needs an input of at least
/// 5 samples (libvmaf is undefined below that, and crashes at 16).
pub const MIN_SIZE: usize = 33;

/// Keeps the memory behind a [`FrameInput`]'s pictures alive until a backend
/// that reads it asynchronously (a DMA upload) is done with it.
pub type KeepAlive = Box<dyn std::any::Any + Send>;

/// One frame pair as the engine hands it to a backend: borrowed pictures,
/// which a backend copies (CPU) or uploads (GPU) before `submit` returns, or,
/// when `keep` is given, until it drops `keep`.
pub struct FrameInput<'a> {
    pub index: u64,
    /// False for frames `subsample` skips (only the every-frame extractors run).
    pub scored: bool,
    pub reference: &'a Picture<'a>,
    pub distorted: &'a Picture<'a>,
    pub keep: Option<KeepAlive>,
    /// How to make the pair's pictures again later, where the caller can.
    pub replay: Option<Arc<dyn Replay>>,
    /// The reference picture's number in a ladder, the same for every
    /// rendition pushed with it: a GPU backend sharing the ladder's
    /// reference uploads it, and does the work on it alone, once.
    pub reference_id: Option<u64>,
}

impl FrameInput<'_> {
    /// Whether the distorted picture is of another size than the reference
    /// (a ladder's rendition, which the backend scales: `Plan::scale`).
    pub fn scaled(&self) -> bool {
        (self.distorted.width, self.distorted.height)
            != (self.reference.width, self.reference.height)
    }
}

/// A frame pair's pictures made again from memory the caller keeps alive
/// (the element's buffers): what [`Failover`] holds instead of copying
/// every frame, and reads only when the CPU takes a stream over.
pub trait Replay: Send + Sync {
    /// Calls `f` with the reference and the distorted picture.
    fn pictures(
        &self,
        f: &mut dyn FnMut(&Picture<'_>, &Picture<'_>) -> Result<(), VmafError>,
    ) -> Result<(), VmafError>;
}

/// One frame pair as the CPU workers take it: owned frames.
#[derive(Clone, Debug)]
pub struct FrameJob {
    pub index: u64,
    pub reference: Arc<Frame>,
    pub distorted: Arc<Frame>,
    /// Reference of frame `index − 1` (None for the first frame, and where
    /// no extractor reads it: `Plan::history`).
    pub prev_reference: Option<Arc<Frame>>,
    /// Reference of frame `index − 2`, where an extractor reads it.
    pub prev_prev_reference: Option<Arc<Frame>>,
    /// Distorted of frame `index − 1` (None for the first frame, and when no
    /// extractor reads it).
    pub prev_distorted: Option<Arc<Frame>>,
    /// False for frames `subsample` skips (only the every-frame extractors run).
    pub scored: bool,
}

/// How a GPU backend got its input planes (reference and distorted, one
/// count per plane uploaded), so that a pipeline can see whether its frames
/// took the fast path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputCounts {
    /// Copied by the host into the backend's pinned staging buffer, then uploaded.
    pub staged: u64,
    /// Uploaded straight from pinned host memory (the element's pool).
    pub pinned: u64,
    /// Host memory page-locked where it lay for its upload (no staging copy).
    pub registered: u64,
    /// Already in GPU memory (GStreamer CUDA/HIP memory): a copy on the device.
    pub device: u64,
}

/// Computes per-frame features; implemented by the CPU engine and the HIP engine.
pub trait FeatureBackend: Send {
    /// Human-readable backend and device, e.g. "cpu (2 threads, avx2)".
    fn describe(&self) -> String;
    /// Queue one frame pair. May block while the backend is full. The
    /// backend keeps the earlier pictures the extractors read itself.
    fn submit(&mut self, input: FrameInput<'_>) -> Result<(), VmafError>;
    /// Finished frames in submission order; with `wait`, everything submitted.
    fn collect(&mut self, wait: bool) -> Result<Vec<RawFeatures>, VmafError>;
    /// End of a stream: everything submitted, and the previous reference is
    /// forgotten (the next frame starts a new sequence).
    fn flush(&mut self) -> Result<Vec<RawFeatures>, VmafError>;
    /// Drop queued work (flushing seek, state change).
    fn reset(&mut self) -> Result<(), VmafError>;
    /// Whether `submit` takes pictures in GPU memory (`Picture::on_device`).
    fn reads_device_memory(&self) -> bool {
        false
    }
    /// How the input planes reached the GPU so far (zero for the CPU).
    fn input_counts(&self) -> InputCounts {
        InputCounts::default()
    }
    /// Every move of the stream between the GPU and the CPU ([`Failover`]).
    fn failover(&self) -> &[FailoverNote] {
        &[]
    }
}

/// One frame pair for [`Engine::push`]: the two pictures, and what the
/// caller offers beside them.
pub struct FramePair<'a> {
    pub reference: &'a Picture<'a>,
    pub distorted: &'a Picture<'a>,
    /// Holds the pictures' memory alive so that a GPU backend may upload
    /// straight from it (pinned memory), dropped once the copy is done.
    pub keep: Option<KeepAlive>,
    /// Makes the pictures again (a failover to the CPU reads it instead of
    /// a copy).
    pub replay: Option<Arc<dyn Replay>>,
    /// The reference picture's number in a ladder, the same for every
    /// rendition pushed with it ([`FrameInput::reference_id`]).
    pub reference_id: Option<u64>,
}

impl<'a> FramePair<'a> {
    pub fn new(reference: &'a Picture<'a>, distorted: &'a Picture<'a>) -> Self {
        FramePair {
            reference,
            distorted,
            keep: None,
            replay: None,
            reference_id: None,
        }
    }

    /// With `keep` holding the pictures' memory.
    pub fn kept(mut self, keep: Option<KeepAlive>) -> Self {
        self.keep = keep;
        self
    }
}

/// What the element drives: a streaming VMAF computation.
pub trait Engine: Send {
    fn describe(&self) -> String;
    /// Push one frame pair (with what the caller offers beside it);
    /// returns the frames whose scores became final.
    fn push(&mut self, pair: FramePair<'_>) -> Result<Vec<FrameScores>, VmafError>;
    /// End of stream (or segment): the remaining frames.
    fn flush(&mut self) -> Result<Vec<FrameScores>, VmafError>;
    /// Pooled scores over the frames finalised so far.
    fn pooled(&self) -> PooledScores;
    /// Forget all frames (after a flushing seek).
    fn reset(&mut self) -> Result<(), VmafError>;
    /// Whether pictures in GPU memory may be pushed.
    fn reads_device_memory(&self) -> bool;
    /// How the input planes reached the GPU so far.
    fn input_counts(&self) -> InputCounts;
    /// Every move of the stream between the GPU and the CPU, in order.
    fn failover(&self) -> &[FailoverNote] {
        &[]
    }
}
