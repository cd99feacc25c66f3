//! VMAF's extractors on the GPU, one module per family, named like its CPU
//! twin in `src/vmaf/features`: `motion`, `vif`, `adm`, `psnr`, `cambi`,
//! `speed` (speed_chroma, speed_temporal), `float_vif`, `float_adm`,
//! `float_motion`, `float_moment` (float_moment, float_psnr),
//! `float_ansnr`, `ciede`, `psnr_hvs`, `ssim` (float_ssim, float_ms_ssim)
//! (`float_filter`: the float families' shared stages); and `host`, the
//! extractors that run on the CPU beside the GPU work: those on streams
//! their kernels do not take, whose CPU twins then give the error.
//!
//! Each family owns
//! - its kernels: which `kernels/*.hip` files, which entry points, checked
//!   against their argument lists when the device is opened;
//! - its device memory: tables for the stream's geometry and scratch per
//!   ring slot;
//! - its launches for one frame, on the frame's stream;
//! - the finish of its read-back sums into the same [`RawFeatures`] fields
//!   as its CPU twin, with the CPU twin's own functions.
//!
//! The engine (`engine.rs`) owns the ring of slots, the uploads, the events
//! and the one read-back per frame, and calls every family through
//! [`GpuExtractor`] without naming any. Adding a family: its module here,
//! its kernel file in `kernels/` and [`KERNEL_SOURCES`], its kernels in
//! [`Kernels`], and its line in [`extractors_for`] (docs/architecture.md,
//! "Adding an extractor").

#![forbid(unsafe_code)]

pub(super) mod host;

use crate::extractors::common::float_filter_gpu as float_filter;
use crate::extractors::{
    adm::gpu as adm, cambi::gpu as cambi, ciede::gpu as ciede, float_adm::gpu as float_adm,
    float_ansnr::gpu as float_ansnr, float_moment::gpu as float_moment,
    float_motion::gpu as float_motion, float_vif::gpu as float_vif, motion::gpu as motion,
    psnr::gpu as psnr, psnr_hvs::gpu as psnr_hvs, speed::gpu as speed, ssim::gpu as ssim,
    vif::gpu as vif,
};

use super::module::ArgKind as K;
use super::{
    Arg, Device, DeviceBuffer, Event, HipError, Module, PinnedHostMem, Stream, compile_source,
};
use crate::vmaf::features::{Plan, RawFeatures};
use crate::vmaf::{FrameInput, PixelFormat, VmafError};
use std::collections::HashMap;
use std::sync::Arc;

/// The kernel sources, embedded at build time; compiled at first use.
pub const KERNEL_SOURCES: [(&str, &str); 19] = [
    ("scale.hip", include_str!("../scale.hip")),
    (
        "motion_sad.hip",
        include_str!("../../extractors/motion/motion_sad.hip"),
    ),
    (
        "psnr_sse.hip",
        include_str!("../../extractors/psnr/psnr_sse.hip"),
    ),
    (
        "vif_statistic.hip",
        include_str!("../../extractors/vif/vif_statistic.hip"),
    ),
    (
        "vif_decimate.hip",
        include_str!("../../extractors/vif/vif_decimate.hip"),
    ),
    (
        "adm_dwt.hip",
        include_str!("../../extractors/adm/adm_dwt.hip"),
    ),
    (
        "adm_decouple.hip",
        include_str!("../../extractors/adm/adm_decouple.hip"),
    ),
    (
        "adm_cm.hip",
        include_str!("../../extractors/adm/adm_cm.hip"),
    ),
    (
        "adm_csf_den.hip",
        include_str!("../../extractors/adm/adm_csf_den.hip"),
    ),
    (
        "cambi.hip",
        include_str!("../../extractors/cambi/cambi.hip"),
    ),
    (
        "speed.hip",
        include_str!("../../extractors/speed/speed.hip"),
    ),
    (
        "float_filter.hip",
        include_str!("../../extractors/common/float_filter.hip"),
    ),
    (
        "float_vif.hip",
        include_str!("../../extractors/float_vif/float_vif.hip"),
    ),
    (
        "float_adm.hip",
        include_str!("../../extractors/float_adm/float_adm.hip"),
    ),
    (
        "ciede.hip",
        include_str!("../../extractors/ciede/ciede.hip"),
    ),
    (
        "float_moment.hip",
        include_str!("../../extractors/float_moment/float_moment.hip"),
    ),
    (
        "float_ansnr.hip",
        include_str!("../../extractors/float_ansnr/float_ansnr.hip"),
    ),
    (
        "psnr_hvs.hip",
        include_str!("../../extractors/psnr_hvs/psnr_hvs.hip"),
    ),
    ("ssim.hip", include_str!("../../extractors/ssim/ssim.hip")),
];

/// Every family's kernels (and the tables they read), loaded once per
/// device and process and shared by every backend on that device.
pub(crate) struct Kernels {
    pub(crate) motion: motion::Kernels,
    pub(crate) psnr: psnr::Kernels,
    pub(crate) vif: vif::Kernels,
    pub(crate) adm: adm::Kernels,
    pub(crate) cambi: cambi::Kernels,
    pub(crate) speed: speed::Kernels,
    pub(crate) float_filter: float_filter::Kernels,
    pub(crate) float_vif: float_vif::Kernels,
    pub(crate) float_adm: float_adm::Kernels,
    pub(crate) ciede: ciede::Kernels,
    pub(crate) float_moment: float_moment::Kernels,
    pub(crate) float_ansnr: float_ansnr::Kernels,
    pub(crate) psnr_hvs: psnr_hvs::Kernels,
    pub(crate) ssim: ssim::Kernels,
    /// Scaling renditions to the reference's size (not an extractor).
    pub(super) scale: super::scale::Kernels,
    /// How the kernels were obtained (compiled now, or from the disk cache).
    pub compile_note: String,
}

/// The compiled kernel files, by name.
pub(crate) type Modules = HashMap<&'static str, Arc<Module>>;

/// Compiles (or takes from the cache) and loads every kernel file, then
/// each family's entry points.
pub(crate) fn load_kernels(dev: &Arc<Device>) -> Result<Kernels, HipError> {
    let t0 = std::time::Instant::now();
    let (modules, compiled) = compile_modules(dev)?;
    let stream = Stream::new(dev)?;
    Ok(Kernels {
        motion: motion::Kernels::load(&modules)?,
        psnr: psnr::Kernels::load(&modules)?,
        vif: vif::Kernels::load(&modules, dev, &stream)?,
        adm: adm::Kernels::load(&modules, dev, &stream)?,
        cambi: cambi::Kernels::load(&modules, dev, &stream)?,
        speed: speed::Kernels::load(&modules)?,
        float_filter: float_filter::Kernels::load(&modules)?,
        float_vif: float_vif::Kernels::load(&modules)?,
        float_adm: float_adm::Kernels::load(&modules)?,
        ciede: ciede::Kernels::load(&modules)?,
        float_moment: float_moment::Kernels::load(&modules)?,
        float_ansnr: float_ansnr::Kernels::load(&modules)?,
        psnr_hvs: psnr_hvs::Kernels::load(&modules)?,
        ssim: ssim::Kernels::load(&modules)?,
        scale: super::scale::Kernels::load(&modules)?,
        compile_note: if compiled.is_empty() {
            "kernels from cache".into()
        } else {
            format!(
                "compiled {} kernel file(s) in {:.1} s",
                compiled.len(),
                t0.elapsed().as_secs_f64()
            )
        },
    })
}

/// Every kernel file compiled for the device (or taken from the cache) and
/// loaded; also the files that had to be compiled.
fn compile_modules(dev: &Arc<Device>) -> Result<(Modules, Vec<&'static str>), HipError> {
    let rt = dev.runtime().clone();
    let mut modules = HashMap::new();
    let mut compiled = Vec::new();
    for (file, src) in KERNEL_SOURCES {
        let (code, cached) = compile_source(&rt, &dev.info.arch, file, src)?;
        if !cached {
            compiled.push(file);
        }
        modules.insert(file, Module::load(dev, &code)?);
    }
    Ok((modules, compiled))
}

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

/// The pictures of a stream, as every family's layout derives from them.
pub(crate) struct Geometry {
    pub w: usize,
    pub h: usize,
    pub bpc: u8,
    pub format: PixelFormat,
    /// Bytes per uploaded sample (1 or 2).
    pub bps: usize,
    /// Planes uploaded: luma, plus both chroma planes when a family reads
    /// chroma (`Plan::reads_chroma`).
    pub planes: Vec<(usize, usize)>,
}

/// Widest frame the GPU path takes: motion's per-row sums stay exact in 64
/// bits only while a row's uint32 sum cannot wrap (|v| ≤ 65535 per sample).
pub const MAX_WIDTH: usize = 65536;

/// Whether `plan` has a family whose frames take longer on the device
/// (CAMBI's and SpEED's read-backs wait, psnr_hvs's ordered sum is one
/// thread's): the engine then keeps a frame more in flight when it shares
/// the device.
pub(crate) fn slow_frames(plan: &Plan) -> bool {
    plan.cambi.is_some()
        || plan.speed_chroma.is_some()
        || plan.speed_temporal.is_some()
        || plan.psnr_hvs
}

/// One frame on its ring slot, as a family's launches see it.
pub(crate) struct Frame<'a> {
    pub kernels: &'a Kernels,
    pub geo: &'a Geometry,
    /// The ring slot (families keep their scratch per slot).
    pub slot: usize,
    pub stream: &'a Stream,
    /// Uploaded planes (`geo.planes`) of the reference (0) and the
    /// distorted picture (1).
    pub pictures: [&'a [DeviceBuffer]; 2],
    /// The frames 1 and 2 back (none at the start and after a flush).
    pub earlier: [Option<Earlier<'a>>; 2],
    /// This family's reference-only work, done once for every rendition of
    /// a ladder ([`GpuExtractor::launch_reference`]): its launch then does
    /// the distorted picture's side only. None: it does both.
    pub shared: Option<&'a [DeviceBuffer]>,
    /// The frame's device sums, zeroed, and this family's first u64 in them.
    pub sums: &'a DeviceBuffer,
    pub sums_at: usize,
    /// The frame's pinned read-back, and where this family's extra bytes
    /// ([`GpuExtractor::extra_bytes`]) go in it.
    pub result: &'a PinnedHostMem,
    pub extra_at: usize,
    /// The frame as the engine was given it (host pictures for the
    /// families that compute on the CPU).
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
/// (reference 0, distorted 1: VIF's decimation, ADM's DWT) reads and
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

/// A reference frame as a family's reference-only launches see it: queued
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
    /// The family's buffers, of the sizes [`GpuExtractor::reference_buffers`] gives.
    pub out: &'a [DeviceBuffer],
}

impl Frame<'_> {
    /// Plane `p` of the reference (`side` 0) or the distorted picture (1).
    pub fn plane(&self, side: usize, p: usize) -> &DeviceBuffer {
        &self.pictures[side][p]
    }

    /// Queues the read-back of a family's extra bytes (`bytes` from the
    /// start of `src`) into the frame's pinned result.
    pub fn read_back_extra(&self, src: &DeviceBuffer, bytes: usize) -> Result<(), HipError> {
        self.stream
            .download(self.result.shared(), self.extra_at, src, 0, bytes)
    }
}

/// One retired frame (its work done), as a family's finish sees it.
pub(crate) struct Retired<'a> {
    pub geo: &'a Geometry,
    pub slot: usize,
    pub stream: &'a Stream,
    /// What [`GpuExtractor::launch`] returned for this frame.
    pub computed: bool,
    /// This family's u64 sums, and its extra bytes, read back.
    pub sums: &'a [u64],
    pub extra: &'a [u8],
}

/// One extractor family for one stream geometry: what the engine calls,
/// the same for every family.
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
    /// Pool on the host what it can pool on the device (tests; CAMBI).
    fn set_host_pooling(&mut self, _on: bool) {}
}

/// The families `plan` asks for, for this geometry, in launch order (their
/// tables made and uploaded).
pub(crate) fn extractors_for(
    plan: &Plan,
    dev: &Arc<Device>,
    geo: &Geometry,
) -> Result<Vec<Box<dyn GpuExtractor>>, VmafError> {
    let hip = |e: HipError| VmafError::Backend(format!("HIP: {e}"));
    let st = Stream::new(dev).map_err(hip)?;
    let mut out: Vec<Box<dyn GpuExtractor>> = Vec::new();
    if let Some(p) = &plan.motion {
        out.push(Box::new(motion::Motion::new(*p)));
    }
    if let Some(egl) = plan.vif_egl {
        out.push(Box::new(vif::Vif::new(egl, geo)));
    }
    if let Some(p) = &plan.adm {
        out.push(Box::new(adm::Adm::new(dev, &st, geo, *p).map_err(hip)?));
    }
    if plan.psnr {
        out.push(Box::new(psnr::Psnr));
    }
    if let Some(p) = &plan.cambi {
        out.push(Box::new(cambi::Cambi::new(dev, &st, geo, p)?));
    }
    if let Some(p) = &plan.speed_chroma {
        out.push(Box::new(speed::Speed::new(dev, &st, geo, p)?));
    }
    let rest = push_float_families(plan, dev, &st, geo, &mut out).map_err(hip)?;
    if let Some(h) = host::Host::for_plan(&rest) {
        out.push(Box::new(h));
    }
    Ok(out)
}

/// The float families and those of the extractors without options, in
/// launch order, into `out`; returns the plan the host family is left
/// with: what no family took, and what a family declined because its
/// kernels do not take the stream (ciede and psnr_hvs without chroma,
/// psnr_hvs past 12 bits, speed_temporal on small pictures, a prescale or
/// halving libvmaf refuses), where the CPU twin gives the error.
fn push_float_families(
    plan: &Plan,
    dev: &Arc<Device>,
    st: &Stream,
    geo: &Geometry,
    out: &mut Vec<Box<dyn GpuExtractor>>,
) -> Result<Plan, HipError> {
    let mut rest = plan.clone();
    if let Some(p) = plan.float_motion
        && let Some(m) = float_motion::FloatMotion::new(dev, st, geo, p)?
    {
        out.push(Box::new(m));
        rest.float_motion = None;
    }
    if let Some(p) = plan.float_vif
        && let Some(v) = float_vif::FloatVif::new(dev, st, geo, p)?
    {
        out.push(Box::new(v));
        rest.float_vif = None;
    }
    if let Some(p) = plan.float_adm {
        out.push(Box::new(float_adm::FloatAdm::new(dev, st, geo, p)?));
        rest.float_adm = None;
    }
    if let Some(m) = float_moment::FloatMoment::for_plan(plan) {
        out.push(Box::new(m));
        (rest.float_psnr, rest.float_moment) = (false, false);
    }
    if plan.float_ansnr {
        out.push(Box::new(float_ansnr::FloatAnsnr::new(dev, st, geo)?));
        rest.float_ansnr = false;
    }
    if let Some(c) = ciede::Ciede::for_geometry(geo).filter(|_| plan.ciede) {
        out.push(Box::new(c));
        rest.ciede = false;
    }
    if plan.psnr_hvs
        && let Some(h) = psnr_hvs::PsnrHvs::new(dev, st, geo)?
    {
        out.push(Box::new(h));
        rest.psnr_hvs = false;
    }
    if let Some(s) = ssim::Ssim::new(dev, st, geo, plan)? {
        out.push(Box::new(s));
        (rest.ssim, rest.ms_ssim) = (false, false);
    }
    if let Some((sp, use_ref_diff)) = &plan.speed_temporal
        && let Some(t) = speed::SpeedTemporal::new(dev, st, geo, (sp, *use_ref_diff))?
    {
        out.push(Box::new(t));
        rest.speed_temporal = None;
    }
    Ok(rest)
}
