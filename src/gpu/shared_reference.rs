//! The reference of a ladder, shared by its renditions' backends on one
//! device: each reference frame uploaded once, with the extractors' work
//! that reads only the reference (`GpuExtractor::launch_reference`: the
//! integer extractors' decimations, wavelet bands, moments and the
//! difference from the frame before) done once for every rendition.
//!
//! The first backend given a reference frame (by its number in the ladder,
//! `FrameInput::reference_id`) uploads it and queues that work on its own
//! stream, then publishes the frame with the event that marks the work
//! done; the others make their streams wait on that event and read the
//! same device memory. A frame's memory goes back to a spare list when the
//! last slot holding it is reused, which is after every frame reading it
//! has retired (`take_slot` of `HipBackend`), so spare memory is never in use.
//!
//! The numbers cannot change: the shared work is the same kernels on the
//! same picture, only launched once, and a backend that cannot share a
//! frame (another device, another geometry, a frame replayed after a
//! failover) does it all itself as a lone pair does.

#![forbid(unsafe_code)]

use crate::hip::{Device, DeviceBuffer, Event, HipError};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// What a frame's shared memory is laid out for: the device, and the
/// bytes of each reference plane and of each extractor's reference work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ReferenceLayout {
    /// The device's address, as identity.
    device: usize,
    pub planes: Vec<usize>,
    /// Per extractor, in launch order: its buffers' bytes (none: it shares
    /// nothing).
    pub twins: Vec<Vec<usize>>,
}

impl ReferenceLayout {
    pub fn new(dev: &Arc<Device>, planes: Vec<usize>, twins: Vec<Vec<usize>>) -> Self {
        ReferenceLayout {
            device: Arc::as_ptr(dev) as usize,
            planes,
            twins,
        }
    }
}

/// One reference frame's device memory.
pub(super) struct ReferenceBuffers {
    pub planes: Vec<DeviceBuffer>,
    /// Per extractor: its reference work (`ReferenceLayout::twins`).
    pub twins: Vec<Vec<DeviceBuffer>>,
    /// Recorded after the upload and the work, on the stream that did them.
    pub done: Event,
}

impl ReferenceBuffers {
    fn new(dev: &Arc<Device>, l: &ReferenceLayout) -> Result<Self, HipError> {
        let buffers = |sizes: &[usize], what: &str| {
            sizes
                .iter()
                .map(|&b| DeviceBuffer::new(dev, b.max(4), what))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(ReferenceBuffers {
            planes: buffers(&l.planes, "shared reference")?,
            twins: l
                .twins
                .iter()
                .map(|f| buffers(f, "shared reference work"))
                .collect::<Result<_, _>>()?,
            done: Event::new(dev)?,
        })
    }

    fn bytes(&self) -> usize {
        self.planes
            .iter()
            .chain(self.twins.iter().flatten())
            .map(DeviceBuffer::bytes)
            .sum()
    }
}

/// A reference frame as the backends holding it see it.
pub(super) struct ReferenceFrame {
    key: Key,
    layout: ReferenceLayout,
    buffers: Option<ReferenceBuffers>,
    /// Set once its work is queued and it is published: only then may its
    /// memory be reused (a frame whose work failed part-way is freed).
    work: OnceLock<ReferenceWorkDone>,
    home: Weak<Mutex<Frames>>,
}

/// What the work on a published frame did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ReferenceWorkDone {
    /// Per extractor: whether its reference work ran (work on the frame
    /// before does not, without an earlier frame).
    pub ran: Vec<bool>,
    /// The numbers of the frames 1 and 2 before that the work read (those
    /// the backend that did it had): another backend may use the work of
    /// an extractor that reads earlier frames only when it has the same.
    pub history: [Option<u64>; 2],
}

impl ReferenceFrame {
    pub fn buffers(&self) -> &ReferenceBuffers {
        self.buffers.as_ref().expect("held until dropped")
    }

    /// Its number in the ladder.
    pub fn id(&self) -> u64 {
        self.key.0
    }

    /// What its work did, once published.
    pub fn work(&self) -> Option<&ReferenceWorkDone> {
        self.work.get()
    }
}

impl Drop for ReferenceFrame {
    fn drop(&mut self) {
        let (Some(b), Some(home)) = (self.buffers.take(), self.home.upgrade()) else {
            return;
        };
        if self.work.get().is_none() {
            return;
        }
        let mut f = home.lock().unwrap();
        if f.frames
            .get(&self.key)
            .is_some_and(|w| std::ptr::eq(w.as_ptr(), self))
        {
            f.frames.remove(&self.key);
        }
        if f.layout.as_ref() == Some(&self.layout) {
            f.spare.push(b);
        }
    }
}

/// A reference frame's number in the ladder, and whether it is scored
/// (a frame `subsample` skips has only the every-frame extractors' work).
type Key = (u64, bool);

#[derive(Default)]
struct Frames {
    /// The layout the spare memory has (the last one asked for).
    layout: Option<ReferenceLayout>,
    frames: HashMap<Key, Weak<ReferenceFrame>>,
    spare: Vec<ReferenceBuffers>,
    counts: SharingCounts,
}

/// How often the reference's work was done, and how often a backend found
/// it done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SharingCounts {
    /// Reference frames uploaded and worked on.
    pub done: u64,
    /// Times a backend used a frame another had done.
    pub shared: u64,
}

/// The shared reference of one ladder: give the same handle to every
/// rendition's backend (`HipOptions::shared_reference`), and the same
/// `reference_id` with the frames that have the same reference picture.
#[derive(Clone, Default)]
pub struct SharedReference(Arc<Mutex<Frames>>);

impl fmt::Debug for SharedReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SharedReference({:?})", self.counts())
    }
}

/// A reference frame for one backend: done already by another (wait on
/// its event), or new (upload it, do its work, then `publish`).
pub(super) enum Taken {
    Done(Arc<ReferenceFrame>),
    New(Arc<ReferenceFrame>),
}

impl SharedReference {
    pub fn new() -> Self {
        Self::default()
    }

    /// What the handle's frames have been so far.
    pub fn counts(&self) -> SharingCounts {
        self.0.lock().unwrap().counts
    }

    /// Device bytes of the spare frames.
    pub fn spare_bytes(&self) -> usize {
        let f = self.0.lock().unwrap();
        f.spare.iter().map(ReferenceBuffers::bytes).sum()
    }

    /// Frame `id` for a backend with `layout`: the one published, when its
    /// layout is the same, else new memory (spare memory when there is).
    pub(super) fn take(
        &self,
        dev: &Arc<Device>,
        layout: &ReferenceLayout,
        key: Key,
    ) -> Result<Taken, HipError> {
        let found = self
            .0
            .lock()
            .unwrap()
            .frames
            .get(&key)
            .and_then(Weak::upgrade);
        // A frame of another layout is let go here, with the lock free:
        // were it the last hold on it, its drop takes the lock.
        let found = found.filter(|fr| fr.layout == *layout);
        let mut f = self.0.lock().unwrap();
        if let Some(frame) = found {
            f.counts.shared += 1;
            return Ok(Taken::Done(frame));
        }
        if f.layout.as_ref() != Some(layout) {
            f.spare.clear();
            f.layout = Some(layout.clone());
        }
        let buffers = match f.spare.pop() {
            Some(b) => b,
            None => ReferenceBuffers::new(dev, layout)?,
        };
        Ok(Taken::New(Arc::new(ReferenceFrame {
            key,
            layout: layout.clone(),
            buffers: Some(buffers),
            work: OnceLock::new(),
            home: Arc::downgrade(&self.0),
        })))
    }

    /// Makes a new frame, its work queued and its event recorded, the one
    /// the other backends take.
    pub(super) fn publish(&self, frame: &Arc<ReferenceFrame>, work: ReferenceWorkDone) {
        if frame.work.set(work).is_err() {
            return;
        }
        let mut f = self.0.lock().unwrap();
        f.counts.done += 1;
        f.frames.insert(frame.key, Arc::downgrade(frame));
    }
}
