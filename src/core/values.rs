//! A frame's values on their way from the extractors to the model: each
//! in the slot the plan gave its name ([`Slots`]), or the frame's error.

#![forbid(unsafe_code)]

/// A frame's values, each in the slot the plan gave its name, before the
/// temporal stages and the model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawFeatures {
    pub index: u64,
    /// False for frames `subsample` skips: only the every-frame extractors
    /// ran.
    pub scored: bool,
    /// One per slot; None where no extractor wrote (libvmaf writes nothing).
    pub values: Vec<Option<f64>>,
    /// Why this frame has no scores; the engine turns it into an error.
    pub error: Option<String>,
}

impl RawFeatures {
    /// A frame with `slots` empty slots.
    pub fn new(index: u64, scored: bool, slots: usize) -> Self {
        RawFeatures {
            index,
            scored,
            values: vec![None; slots],
            error: None,
        }
    }

    pub fn set(&mut self, slot: usize, v: f64) {
        self.values[slot] = Some(v);
    }

    /// `values` into `slots`, in order.
    pub fn put(&mut self, slots: Slots, values: &[f64]) {
        for (i, &v) in values.iter().enumerate() {
            self.set(slots.at(i), v);
        }
    }

    pub fn get(&self, slot: usize) -> Option<f64> {
        self.values.get(slot).copied().flatten()
    }

    /// An extractor could not score this frame.
    pub fn fail(&mut self, e: FrameError) {
        self.error = Some(e.0);
    }

    /// Takes every value, and the error, `other` has (work on the same
    /// frame done apart).
    pub fn merge(&mut self, other: RawFeatures) {
        for (slot, v) in self.values.iter_mut().zip(other.values) {
            if v.is_some() {
                *slot = v;
            }
        }
        if other.error.is_some() {
            self.error = other.error;
        }
    }
}

/// Where an extractor's values go in a frame's [`RawFeatures`]: `len`
/// slots from `base`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slots {
    pub base: usize,
    pub len: usize,
}

impl Slots {
    /// The slot of its output `i`.
    pub fn at(&self, i: usize) -> usize {
        debug_assert!(i < self.len, "output {i} of {}", self.len);
        self.base + i
    }
}

/// A frame an extractor cannot score (e.g. samples beyond the bit depth).
#[derive(Clone, Debug, PartialEq)]
pub struct FrameError(pub String);
