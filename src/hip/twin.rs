//! What an extractor's GPU twin (`gpu.rs` in its folder under
//! `src/extractors`) is written against, and what the GPU backend
//! (`crate::gpu`) calls it through: the [`GpuExtractor`] trait, the frame as
//! a twin's launches see it ([`Frame`], [`Earlier`], [`ReferenceWork`],
//! [`Retired`]), and the loaded kernels ([`Kernels`], one [`KernelSet`] per
//! twin, found by type).
//!
//! Each twin owns
//! - its kernels: which `.hip` files, which entry points, checked against
//!   their argument lists when the first backend that runs it is made;
//! - its device memory: tables for the stream's geometry and scratch per
//!   ring slot;
//! - its launches for one frame, on the frame's stream;
//! - the finish of its read-back sums into its slots of the frame's
//!   [`RawFeatures`], with the CPU twin's own functions.
//!
//! The backend owns the ring of slots, the uploads, the events and the one
//! read-back per frame, and calls every twin through [`GpuExtractor`]
//! without naming any.

#![forbid(unsafe_code)]

use super::module::ArgKind as K;
use super::{
    Arg, Device, DeviceBuffer, Event, HipError, Kernel, Module, PinnedHostMem, Stream,
    compile_source,
};
use crate::core::{FrameInput, PixelFormat, RawFeatures};
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// An extractor's loaded kernels, found again by their type.
pub type LoadedKernels = Box<dyn Any + Send + Sync>;

/// Kernel files an extractor's GPU twin runs, embedded at build time and
/// compiled at first use, and how its entry points are loaded.
pub struct KernelSet {
    /// (file name, source); file names are unique across extractors.
    pub sources: &'static [(&'static str, &'static str)],
    /// Its entry points (and the tables they read), from the loaded files.
    pub load: fn(&Modules, &Arc<Device>, &Stream) -> Result<LoadedKernels, HipError>,
}

impl KernelSet {
    /// Whether `other` is this set (sets are told apart by their first
    /// file, as file names are unique across extractors).
    pub(crate) fn is(&self, other: &KernelSet) -> bool {
        self.sources[0].0 == other.sources[0].0
    }
}

/// Every extractor's kernels (and the tables they read), per device and
/// process, shared by every backend on that device. Each set is compiled
/// (or taken from the cache) and loaded when a backend first needs it
/// ([`Kernels::ensure`]): a run compiles only the kernel files its plan
/// runs.
pub struct Kernels {
    dev: Arc<Device>,
    /// Every set the device may run, and the loaded one once loaded (its
    /// type id for the lookup, then the set).
    sets: Vec<(&'static KernelSet, OnceLock<(TypeId, LoadedKernels)>)>,
    /// One loader at a time: backends made at once do not load a set twice.
    loading: Mutex<()>,
}

impl Kernels {
    /// The loaded kernel set of type `T` (an extractor's `gpu::Kernels`):
    /// a comparison of type ids per loaded set and one checked downcast of
    /// the match (twins look theirs up at every launch).
    pub(crate) fn get<T: Any>(&self) -> &T {
        let id = TypeId::of::<T>();
        self.sets
            .iter()
            .filter_map(|(_, loaded)| loaded.get())
            .find(|(t, _)| *t == id)
            .and_then(|(_, s)| s.downcast_ref::<T>())
            .expect("a backend's kernels are loaded when it is made (Kernels::ensure)")
    }

    /// `sets` known for `dev`, none loaded yet.
    pub fn new(dev: &Arc<Device>, sets: &[&'static KernelSet]) -> Kernels {
        Kernels {
            dev: dev.clone(),
            sets: sets.iter().map(|&k| (k, OnceLock::new())).collect(),
            loading: Mutex::new(()),
        }
    }

    /// Compiles (or takes from the cache) and loads each of `needed` not
    /// loaded yet: its files, then its entry points and tables. Says how
    /// the files were obtained ("kernels from cache", or what was compiled).
    pub fn ensure(&self, needed: &[&KernelSet]) -> Result<String, HipError> {
        let _one = self.loading.lock().unwrap_or_else(|e| e.into_inner());
        let t0 = std::time::Instant::now();
        let mut compiled = Vec::new();
        let mut stream = None;
        for (set, loaded) in &self.sets {
            let wanted = needed.iter().any(|k| k.is(set));
            if !wanted || loaded.get().is_some() {
                continue;
            }
            let (modules, files) = compile_modules(&self.dev, set)?;
            compiled.extend(files);
            if stream.is_none() {
                stream = Some(Stream::new(&self.dev)?);
            }
            let st = stream.as_ref().expect("made above");
            let kernels = (set.load)(&modules, &self.dev, st)?;
            let _ = loaded.set(((*kernels).type_id(), kernels));
        }
        Ok(if compiled.is_empty() {
            "kernels from cache".into()
        } else {
            format!(
                "compiled {} kernel file(s) in {:.1} s",
                compiled.len(),
                t0.elapsed().as_secs_f64()
            )
        })
    }
}

/// The files of `set` compiled for the device (or taken from the cache)
/// and loaded; also the files that had to be compiled.
fn compile_modules(
    dev: &Arc<Device>,
    set: &KernelSet,
) -> Result<(Modules, Vec<&'static str>), HipError> {
    let rt = dev.runtime().clone();
    let mut modules = HashMap::new();
    let mut compiled = Vec::new();
    for &(file, src) in set.sources {
        let (code, cached) = compile_source(&rt, &dev.info.arch, file, src)?;
        if !cached {
            compiled.push(file);
        }
        modules.insert(file, Module::load(dev, &code)?);
    }
    Ok((modules, compiled))
}

/// The compiled kernel files, by name.
pub type Modules = HashMap<&'static str, Arc<Module>>;

/// A kernel's argument list written as letters (spaces only group them):
/// `p` pointer, `i` int32, `u` uint32, `l` int64, `d` double.
pub(crate) fn sig(letters: &str) -> Vec<K> {
    letters
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| match c {
            'p' => K::Ptr,
            'i' => K::I32,
            'u' => K::U32,
            'l' => K::I64,
            'd' => K::F64,
            other => panic!("kernel signature letter {other:?}"),
        })
        .collect()
}

/// Blocks of 256 threads covering `n` items (at least one).
pub(crate) fn blocks(n: usize) -> u32 {
    n.div_ceil(256).max(1) as u32
}

/// A table of plain values in a new device buffer (at least 4 bytes).
pub(crate) fn upload_table<T: Copy>(
    dev: &Arc<Device>,
    st: &Stream,
    v: &[T],
    to_bytes: impl Fn(T) -> Vec<u8>,
    what: &str,
) -> Result<DeviceBuffer, HipError> {
    let bytes: Vec<u8> = v.iter().flat_map(|&x| to_bytes(x)).collect();
    let b = DeviceBuffer::new(dev, bytes.len().max(4), what)?;
    if !bytes.is_empty() {
        st.upload_blocking(&b, 0, &bytes)?;
    }
    Ok(b)
}

/// The pictures of a stream, as every twin's layout derives from them.
pub(crate) struct Geometry {
    pub w: usize,
    pub h: usize,
    pub bpc: u8,
    pub format: PixelFormat,
    /// Bytes per uploaded sample (1 or 2).
    pub bps: usize,
    /// Planes uploaded: luma, plus both chroma planes when a twin reads
    /// chroma (`Plan::reads_chroma`).
    pub planes: Vec<(usize, usize)>,
}

/// Widest frame the GPU path takes: per-row sums of absolute differences
/// stay exact in 64 bits only while a row's uint32 sum cannot wrap
/// (|v| ≤ 65535 per sample).
pub const MAX_WIDTH: usize = 65536;

/// One frame on its ring slot, as a twin's launches see it.
pub(crate) struct Frame<'a> {
    pub kernels: &'a Kernels,
    pub geo: &'a Geometry,
    /// The ring slot (twins keep their scratch per slot).
    pub slot: usize,
    pub stream: &'a Stream,
    /// Uploaded planes (`geo.planes`) of the reference (0) and the
    /// distorted picture (1).
    pub pictures: [&'a [DeviceBuffer]; 2],
    /// The frames 1 and 2 back (none at the start and after a flush).
    pub earlier: [Option<Earlier<'a>>; 2],
    /// This twin's reference-only work, done once for every rendition of
    /// a ladder ([`GpuExtractor::launch_reference`]): its launch then does
    /// the distorted picture's side only. None: it does both.
    pub shared: Option<&'a [DeviceBuffer]>,
    /// The frame's device sums, zeroed, and this twin's first u64 in them.
    pub sums: &'a DeviceBuffer,
    pub sums_at: usize,
    /// The frame's pinned read-back, and where this twin's extra bytes
    /// ([`GpuExtractor::extra_bytes`]) go in it.
    pub result: &'a PinnedHostMem,
    pub extra_at: usize,
    /// The frame as the engine was given it (host pictures for the
    /// twins that compute on the CPU).
    pub input: &'a FrameInput<'a>,
}

/// An earlier frame's uploaded planes, with the event that marks their
/// upload.
#[derive(Clone, Copy)]
pub(crate) struct Earlier<'a> {
    pub pictures: [&'a [DeviceBuffer]; 2],
    pub uploaded: &'a Event,
}

impl Earlier<'_> {
    /// Plane `p` of the reference (`side` 0) or the distorted picture (1).
    pub fn plane(&self, side: usize, p: usize) -> &DeviceBuffer {
        &self.pictures[side][p]
    }
}

/// What a kernel that takes the two pictures in its grid's z dimension
/// (reference 0, distorted 1: decimations, wavelet transforms) reads and
/// writes: both, or one picture alone, in the reference's place with a grid
/// one deep (a ladder's reference, or a distorted picture beside it).
#[derive(Clone, Copy)]
pub(crate) struct ZPair<'a> {
    src: [&'a DeviceBuffer; 2],
    out: [&'a DeviceBuffer; 2],
    depth: u32,
}

impl<'a> ZPair<'a> {
    pub fn both(src: [&'a DeviceBuffer; 2], out: [&'a DeviceBuffer; 2]) -> Self {
        ZPair { src, out, depth: 2 }
    }

    pub fn one(src: &'a DeviceBuffer, out: &'a DeviceBuffer) -> Self {
        ZPair {
            src: [src; 2],
            out: [out; 2],
            depth: 1,
        }
    }

    /// The grid's z dimension.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The kernel's first four arguments: the inputs, then the outputs.
    pub fn args(&self) -> Vec<Arg<'a>> {
        let [a, b] = self.src;
        let [c, d] = self.out;
        [a, b, c, d].map(|x| Arg::Buf(x, 0)).to_vec()
    }
}

/// A reference frame as a twin's reference-only launches see it: queued
/// once for all the renditions of a ladder (`shared_reference.rs`).
pub(crate) struct ReferenceWork<'a> {
    pub kernels: &'a Kernels,
    pub geo: &'a Geometry,
    pub stream: &'a Stream,
    /// The reference's uploaded planes (`geo.planes`).
    pub reference: &'a [DeviceBuffer],
    /// The frames 1 and 2 back of the backend doing the work, when they
    /// are the ladder's too (`ReferenceWorkDone::history`).
    pub earlier: [Option<Earlier<'a>>; 2],
    /// The twin's buffers, of the sizes [`GpuExtractor::reference_buffers`] gives.
    pub out: &'a [DeviceBuffer],
}

impl Frame<'_> {
    /// Plane `p` of the reference (`side` 0) or the distorted picture (1).
    pub fn plane(&self, side: usize, p: usize) -> &DeviceBuffer {
        &self.pictures[side][p]
    }

    /// Queues `kernel` over plane `p` of both pictures, one 256-thread
    /// block per row segment, its sums added into the frame's u64 number
    /// `word` after this twin's first: the launch of every kernel that
    /// takes (reference, distorted, width, height, sums).
    pub fn launch_over_plane(
        &self,
        kernel: &Kernel,
        p: usize,
        word: usize,
    ) -> Result<(), HipError> {
        let (w, h) = self.geo.planes[p];
        self.stream.launch(
            kernel,
            (blocks(w), h as u32, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(self.plane(0, p), 0),
                Arg::Buf(self.plane(1, p), 0),
                Arg::I32(w as i32),
                Arg::I32(h as i32),
                Arg::Buf(self.sums, (self.sums_at + word) * 8),
            ],
        )
    }

    /// Queues the read-back of a twin's extra bytes (`bytes` from the
    /// start of `src`) into the frame's pinned result.
    pub fn read_back_extra(&self, src: &DeviceBuffer, bytes: usize) -> Result<(), HipError> {
        self.stream
            .download(self.result.shared(), self.extra_at, src, 0, bytes)
    }
}

/// One retired frame (its work done), as a twin's finish sees it.
pub(crate) struct Retired<'a> {
    pub geo: &'a Geometry,
    pub slot: usize,
    pub stream: &'a Stream,
    /// What [`GpuExtractor::launch`] returned for this frame.
    pub computed: bool,
    /// This twin's u64 sums, and its extra bytes, read back.
    pub sums: &'a [u64],
    pub extra: &'a [u8],
}

/// One GPU twin for one stream geometry: what the engine calls,
/// the same for every twin.
pub(crate) trait GpuExtractor: Send {
    /// Its profiling stage name.
    fn stage(&self) -> &'static str;
    /// What its device memory holds, for the memory report.
    fn memory(&self) -> &'static str {
        self.stage()
    }
    /// u64 sums it accumulates in the frame's device sums.
    fn sum_words(&self) -> usize {
        0
    }
    /// Bytes it reads back besides its sums.
    fn extra_bytes(&self) -> usize {
        0
    }
    /// Makes its scratch for one more ring slot.
    fn add_slot(&mut self, _dev: &Arc<Device>) -> Result<(), HipError> {
        Ok(())
    }
    /// Device bytes of one slot's scratch.
    fn slot_bytes(&self) -> usize {
        0
    }
    /// Device bytes of its tables for the geometry (not per slot).
    fn table_bytes(&self) -> usize {
        0
    }
    /// Whether it also runs on the frames `subsample` leaves unscored.
    fn every_frame(&self) -> bool {
        false
    }
    /// How many frames back it reads the reference (0: none).
    fn frames_back(&self) -> usize {
        0
    }
    /// Bytes of each device buffer that its work on the reference alone
    /// fills, which the renditions of a ladder share
    /// ([`GpuExtractor::launch_reference`]); empty: it shares nothing.
    fn reference_buffers(&self) -> Vec<usize> {
        Vec::new()
    }
    /// Queues its work on the reference alone for one frame, into
    /// `w.out`; its `launch` then finds them in [`Frame::shared`]. False
    /// when it computed nothing (then each rendition does it alone).
    fn launch_reference(&self, _w: &ReferenceWork<'_>) -> Result<bool, HipError> {
        Ok(false)
    }
    /// Queues its work for one frame; false when it computed nothing.
    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError>;
    /// Its features of a retired frame.
    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError>;
    /// Pool on the host what it can pool on the device (tests).
    fn set_host_pooling(&mut self, _on: bool) {}
}

/// What a GPU twin is made with: the device, a stream for its tables, and
/// the stream's geometry.
pub(crate) struct GpuSetup<'a> {
    pub dev: &'a Arc<Device>,
    pub stream: &'a Stream,
    pub geo: &'a Geometry,
}
