//! The two interfaces between the layers: a [`FeatureBackend`] computes a
//! frame's values (the CPU backend in `crate::cpu`, the GPU backend in
//! `crate::gpu`); an [`Engine`] turns them into scores (`crate::vmaf`'s
//! scorer) for the element and the command.

#![forbid(unsafe_code)]

use super::error::VmafError;
use super::frame::{FrameInput, FramePair, InputCounts};
use super::scores::{FailoverNote, FrameScores, PooledScores};
use super::values::RawFeatures;

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
    /// Every move of the stream between the GPU and the CPU (`Failover`).
    fn failover(&self) -> &[FailoverNote] {
        &[]
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
