//! A frame pair on its way in: as the caller pushes it ([`FramePair`]), as
//! a backend takes it ([`FrameInput`]), and as the CPU workers own it
//! ([`FrameJob`]).

#![forbid(unsafe_code)]

use super::error::VmafError;
use super::picture::{Frame, Picture};
use std::sync::Arc;

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
/// (the element's buffers): what `Failover` holds instead of copying
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

/// One frame pair for `Engine::push`: the two pictures, and what the
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
