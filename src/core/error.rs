//! The one error type of the engine, with enough words to act on.

#![forbid(unsafe_code)]

use std::fmt;

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
