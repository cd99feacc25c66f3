//! The HIP feature backend: VMAF's integer extractors as kernels, with a
//! ring of per-frame slots on streams owned by this backend.
//!
//! Per frame, on its slot's stream: upload luma (and chroma for PSNR) from
//! pinned memory, motion SAD against the previous reference (waiting on the
//! event that marks its upload), the four VIF scales, the four ADM scales,
//! PSNR; then one 448-byte read-back of integer sums into pinned memory.
//! The float finish (log-domain ratios, cube roots, model) runs on the CPU
//! with the very functions the CPU engine uses, so the GPU reproduces the
//! CPU's numbers exactly when its integer sums are equal.
//!
//! Slots are reused in order: frame *j* takes slot *j mod N* once frames up
//! to *j − N + 1* are retired (frame *j − N + 1* reads slot *j mod N*'s
//! reference for motion). Upload of frame *j + 1* overlaps the kernels of
//! frame *j*; the caller blocks only when the ring is full.

#![forbid(unsafe_code)]

use super::module::ArgKind as K;
use super::v1::{self, CambiLayout, CambiSlot, SpeedLayout, SpeedSlot, V1Kernels};
use super::{
    Arg, Device, DeviceBuffer, Event, HipError, HostRegistration, Kernel, Module, PinnedBuffer,
    PinnedHostMem, Runtime, Stream, Vendor, compile_source, pinned_owner, read_u64s, u16_bytes,
};
use crate::vmaf::features::adm::{
    self, AdmParams, AdmScores, CmShifts, cm_finish, csf_den_finish, den_shifts,
};
use crate::vmaf::features::adm_tables::{
    DWT_LO_SUM, Region, div_lookup, dwt_indices, rfactors_s123_fixed, rfactors_scale0_fixed,
};
use crate::vmaf::features::vif::{VifAccum, VifScales, VifShifts, log2_table};
use crate::vmaf::features::{Plan, RawFeatures, motion, psnr, ssim};
use crate::vmaf::picture::Planes;
use crate::vmaf::{
    FeatureBackend, FrameInput, InputCounts, KeepAlive, Picture, PixelFormat, VmafError,
};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

/// The kernel sources, embedded at build time; compiled at first use.
pub const KERNEL_SOURCES: [(&str, &str); 10] = [
    (
        "motion_sad.hip",
        include_str!("../../kernels/motion_sad.hip"),
    ),
    ("psnr_sse.hip", include_str!("../../kernels/psnr_sse.hip")),
    (
        "vif_statistic.hip",
        include_str!("../../kernels/vif_statistic.hip"),
    ),
    (
        "vif_decimate.hip",
        include_str!("../../kernels/vif_decimate.hip"),
    ),
    ("adm_dwt.hip", include_str!("../../kernels/adm_dwt.hip")),
    (
        "adm_decouple.hip",
        include_str!("../../kernels/adm_decouple.hip"),
    ),
    ("adm_cm.hip", include_str!("../../kernels/adm_cm.hip")),
    (
        "adm_csf_den.hip",
        include_str!("../../kernels/adm_csf_den.hip"),
    ),
    ("cambi.hip", include_str!("../../kernels/cambi.hip")),
    ("speed.hip", include_str!("../../kernels/speed.hip")),
];

/// Widest frame the GPU path takes: motion's per-row sums stay exact in 64
/// bits only while a row's uint32 sum cannot wrap (|v| ≤ 65535 per sample).
pub const MAX_WIDTH: usize = 65536;

/// Read-back layout, in u64 slots.
const R_VIF: usize = 0; // 4 scales × (num_log, den_log, num_non_log, den_non_log)
const R_ADM: usize = 16; // 4 scales × (num θ0..2, aim θ0..2, den θ0..2)
const R_MOTION: usize = 52;
const R_PSNR: usize = 53; // 3 planes
const R_CAMBI: usize = 56; // distorted then reference: per scale (top-k sum, inexact)
const R_CAMBI_BAD: usize = R_CAMBI + 2 * v1::CAMBI_SLOTS;
const R_LEN: usize = R_CAMBI_BAD + 1;

/// How to open the backend.
#[derive(Clone, Debug)]
pub struct HipOptions {
    pub vendor: Vendor,
    pub device_id: usize,
    /// Frame slots in the ring (at least 3); 0 picks 6, or 8 when the
    /// plan has CAMBI or speed_chroma (their per-frame latency is longer, so
    /// more frames in flight keep the GPU busy), for the first backend open
    /// on the device in this process, and half that (3, or 4) for each
    /// further one: several streams keep the GPU busy together, and each
    /// slot costs device memory (~66 MiB at 1080p), so sixteen 1080p
    /// streams fit in under 4 GiB.
    pub ring: usize,
}

impl Default for HipOptions {
    fn default() -> Self {
        Self {
            vendor: Vendor::Auto,
            device_id: 0,
            ring: 0,
        }
    }
}

/// Every kernel of every stage, loaded once per device and process and
/// shared by all backends on that device.
struct Kernels {
    motion8: Kernel,
    motion16: Kernel,
    sse8: Kernel,
    sse16: Kernel,
    vif_stat8: Kernel,
    vif_stat16: Kernel,
    vif_dec8: Kernel,
    vif_dec16: Kernel,
    dwt0_8: Kernel,
    dwt0_16: Kernel,
    dwt123: Kernel,
    decouple: Kernel,
    cm: Kernel,
    csf_den: Kernel,
    /// 2048·log2 table (u16) and ADM's reciprocal table (i32), device copies.
    log_table: DeviceBuffer,
    div_table: DeviceBuffer,
    /// CAMBI and speed_chroma.
    v1: V1Kernels,
    /// Seconds spent compiling (0 when every module came from the cache).
    compile_note: String,
}

/// Every kernel of the v0 extractors (and, through `v1::load`, the v1
/// ones), checked against the argument lists below, with the look-up
/// tables they read.
fn load_kernels(dev: &Arc<Device>) -> Result<Kernels, HipError> {
    let t0 = std::time::Instant::now();
    let (modules, compiled) = compile_modules(dev)?;
    let m = |f: &str| modules[f].clone();
    let stream = Stream::new(dev)?;
    let table = log2_table();
    let log_table = DeviceBuffer::new(dev, table.len() * 2, "VIF log2 table")?;
    stream.upload_blocking(&log_table, 0, u16_bytes(&table))?;
    let div: Vec<u8> = div_lookup().iter().flat_map(|v| v.to_le_bytes()).collect();
    let div_table = DeviceBuffer::new(dev, div.len(), "ADM reciprocal table")?;
    stream.upload_blocking(&div_table, 0, &div)?;
    let v1 = v1::load(&m, dev, &stream)?;
    // Argument lists: p pointer, i int32, l int64, d double.
    let (motion, sse, vif) = (sig("pp iiii p"), sig("pp ii p"), sig("pp iiiiii d pp"));
    let (dec8, dec16) = (sig("pppp iiii"), sig("pppp iiiii"));
    let (dwt0, dwt123) = (sig("pppp iiii pp iii"), sig("pppp iiii pp li li"));
    let decouple = sig("pppp iiiiiii dd lll");
    let (cm, den) = (sig("p iiiiiii lll iiii p"), sig("p iiiiiiiii p"));
    Ok(Kernels {
        v1,
        motion8: m("motion_sad.hip").kernel("motion_sad_8", &motion)?,
        motion16: m("motion_sad.hip").kernel("motion_sad_16", &motion)?,
        sse8: m("psnr_sse.hip").kernel("psnr_sse_8", &sse)?,
        sse16: m("psnr_sse.hip").kernel("psnr_sse_16", &sse)?,
        vif_stat8: m("vif_statistic.hip").kernel("vif_statistic_8", &vif)?,
        vif_stat16: m("vif_statistic.hip").kernel("vif_statistic_16", &vif)?,
        vif_dec8: m("vif_decimate.hip").kernel("vif_decimate_8", &dec8)?,
        vif_dec16: m("vif_decimate.hip").kernel("vif_decimate_16", &dec16)?,
        dwt0_8: m("adm_dwt.hip").kernel("adm_dwt0_8", &dwt0)?,
        dwt0_16: m("adm_dwt.hip").kernel("adm_dwt0_16", &dwt0)?,
        dwt123: m("adm_dwt.hip").kernel("adm_dwt123", &dwt123)?,
        decouple: m("adm_decouple.hip").kernel("adm_decouple_csf", &decouple)?,
        cm: m("adm_cm.hip").kernel("adm_cm", &cm)?,
        csf_den: m("adm_csf_den.hip").kernel("adm_csf_den", &den)?,
        log_table,
        div_table,
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
type Modules = HashMap<&'static str, Arc<Module>>;
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
fn sig(letters: &str) -> Vec<K> {
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

/// Opened devices and their kernels, per (vendor, ordinal), for the process.
type Opened = (Arc<Device>, Arc<Kernels>);
fn open_device(vendor: Vendor, ordinal: usize) -> Result<Opened, HipError> {
    static OPEN: OnceLock<Mutex<HashMap<(Vendor, usize), Opened>>> = OnceLock::new();
    let rt = Runtime::load(vendor)?;
    let key = (rt.vendor(), ordinal);
    let mut map = OPEN.get_or_init(Default::default).lock().unwrap();
    if let Some(o) = map.get(&key) {
        return Ok(o.clone());
    }
    let dev = Device::open(&rt, ordinal)?;
    let kernels = Arc::new(load_kernels(&dev)?);
    map.insert(key, (dev.clone(), kernels.clone()));
    Ok((dev, kernels))
}

/// The device `HipBackend::new` would open for `vendor` and `ordinal`,
/// opened (with its kernels) once per process: for callers that need the
/// device before a backend exists (the element answers GStreamer's context
/// queries before it starts).
pub fn shared_device(vendor: Vendor, ordinal: usize) -> Result<Arc<Device>, HipError> {
    open_device(vendor, ordinal).map(|(dev, _)| dev)
}

fn be(e: HipError) -> VmafError {
    VmafError::Backend(format!("HIP: {e}"))
}

/// Sizes and tables that depend on the stream's geometry.
struct Layout {
    w: usize,
    h: usize,
    bpc: u8,
    format: PixelFormat,
    /// Bytes per sample of the uploaded pictures (1 or 2).
    bps: usize,
    /// Planes uploaded: luma, plus both chroma planes when PSNR asks for them.
    planes: Vec<(usize, usize)>,
    /// VIF image size per scale.
    vif: [(usize, usize); 4],
    /// ADM input size and band size per scale.
    adm_in: [(usize, usize); 4],
    adm_band: [(usize, usize); 4],
    /// DWT index tables of every scale (ix then iy), and their offsets.
    dwt_tables: DeviceBuffer,
    dwt_offsets: [(usize, usize); 4],
    cambi: Option<CambiLayout>,
    speed: Option<SpeedLayout>,
}

/// Device memory and sync objects of one frame in flight.
struct Slot {
    stream: Stream,
    uploaded: Event,
    done: Event,
    /// Packed pictures for inputs that are not already in pinned memory.
    staging: PinnedHostMem,
    /// Uploaded planes: reference then distorted for each plane of `Layout::planes`.
    pix: Vec<DeviceBuffer>,
    vif_a: [DeviceBuffer; 2],
    vif_b: [DeviceBuffer; 2],
    bands_ref: Vec<DeviceBuffer>,
    bands_dis: Vec<DeviceBuffer>,
    work: DeviceBuffer,
    accum: DeviceBuffer,
    cambi: Option<CambiSlot>,
    speed: Option<SpeedSlot>,
    result: PinnedHostMem,
    flight: Option<InFlight>,
    /// Events between stages, recorded only while profiling (see `STAGES`).
    marks: Vec<Event>,
}

impl Slot {
    /// Device bytes of this slot by what they hold.
    fn breakdown(&self) -> [(&'static str, usize); 7] {
        let sum = |v: &[DeviceBuffer]| v.iter().map(DeviceBuffer::bytes).sum::<usize>();
        [
            ("uploaded planes (reference and distorted)", sum(&self.pix)),
            ("VIF scale images", sum(&self.vif_a) + sum(&self.vif_b)),
            (
                "ADM bands (4 scales, both pictures)",
                sum(&self.bands_ref) + sum(&self.bands_dis),
            ),
            ("ADM decouple/CSF planes", self.work.bytes()),
            ("feature sums", self.accum.bytes()),
            (
                "CAMBI",
                self.cambi.as_ref().map_or(0, CambiSlot::device_bytes),
            ),
            (
                "speed_chroma",
                self.speed.as_ref().map_or(0, SpeedSlot::device_bytes),
            ),
        ]
    }

    /// Device bytes this slot holds (pinned host memory not included).
    fn device_bytes(&self) -> usize {
        self.breakdown().iter().map(|p| p.1).sum()
    }
}

/// Stages timed by [`HipBackend::set_profiling`], in stream order.
pub const STAGES: [&str; 8] = [
    "upload", "motion", "vif", "adm", "psnr", "cambi", "speed", "readback",
];

/// A frame's input memory while its uploads run: page-locked host memory
/// (ended first: fields drop in order), pinned buffers uploaded from in
/// place, and the caller's keep-alive.
struct Inputs {
    _registered: Vec<HostRegistration>,
    _pinned: Vec<Arc<PinnedBuffer>>,
    _keep: Option<KeepAlive>,
}

/// Host memory a frame's uploads read until they are done.
#[derive(Default)]
struct Held {
    registered: Vec<HostRegistration>,
    pinned: Vec<Arc<PinnedBuffer>>,
}

struct InFlight {
    index: u64,
    scored: bool,
    motion_computed: bool,
    profiled: bool,
    /// What keeps the input memory alive and unwritten: released as soon
    /// as the frame's uploads are done (`release_uploaded_inputs`), not
    /// when the frame retires.
    inputs: Option<Inputs>,
    ssim: Option<f64>,
    ms_ssim: Option<f64>,
}

/// VMAF's per-frame features on a GPU.
pub struct HipBackend {
    dev: Arc<Device>,
    kernels: Arc<Kernels>,
    plan: Plan,
    ring: usize,
    layout: Option<Layout>,
    slots: Vec<Slot>,
    /// Slot of the next frame.
    next_slot: usize,
    /// Frames in flight, oldest first: (index, slot).
    order: VecDeque<(u64, usize)>,
    /// Slots holding the previous reference and the one before, for motion.
    prev_slot: Option<usize>,
    prev_prev_slot: Option<usize>,
    /// Host memory for CAMBI c-values read back when a top-k sum must be
    /// pooled on the host.
    fallback: Option<PinnedHostMem>,
    /// Pool every CAMBI scale from its read-back c-values (tests of that path).
    cambi_host_pooling: bool,
    ready: Vec<RawFeatures>,
    /// Page-lock kept host memory in place instead of staging it (NVIDIA;
    /// `VMAFHIP_REGISTER_HOST=0` turns it off).
    register_host: bool,
    /// How the input planes got here.
    counts: InputCounts,
    /// Host copies of the uploaded luma, for SSIM with pictures in GPU memory.
    ssim_host: Option<PinnedHostMem>,
    profiling: bool,
    /// Per stage: total milliseconds and frames, while profiling.
    stage_ms: [f64; STAGES.len()],
    profiled_frames: u64,
}

impl HipBackend {
    /// The device memory this backend holds, by what it holds: one entry per
    /// kind of per-slot buffer (summed over the ring), the DWT index tables,
    /// and the ring's length. Empty before the first frame. The context and
    /// the compiled kernels, shared by every backend on the device, are not
    /// in it.
    pub fn memory_breakdown(&self) -> (Vec<(&'static str, usize)>, usize) {
        let mut out: Vec<(&'static str, usize)> = Vec::new();
        for slot in &self.slots {
            for (i, (what, bytes)) in slot.breakdown().into_iter().enumerate() {
                match out.get_mut(i) {
                    Some(e) => e.1 += bytes,
                    None => out.push((what, bytes)),
                }
            }
        }
        if let Some(l) = &self.layout {
            out.push(("DWT index tables", l.dwt_tables.bytes()));
        }
        (out, self.slots.len())
    }

    /// Backends live on this one's device in this process, this one included.
    pub fn live_on_device(&self) -> usize {
        live_backends(&self.kernels)
    }

    /// Opens the GPU (`options.vendor`, `options.device_id`) and its kernels.
    pub fn new(plan: Plan, options: &HipOptions) -> Result<Self, HipError> {
        let (dev, kernels) = open_device(options.vendor, options.device_id)?;
        let register_host = dev.runtime().vendor() == Vendor::Nvidia
            && std::env::var("VMAFHIP_REGISTER_HOST").map_or(true, |v| v != "0");
        // This backend holds `kernels` already: any more are others.
        let others = live_backends(&kernels).saturating_sub(1);
        // Frames in flight: eight for a backend alone on its device (more
        // streams for small kernels to overlap: at 1080p v0 six slots gave
        // 5,047–5,092 fps, eight 5,356–5,403, ten 5,568–5,581 at 264 MiB
        // more; docs/PERFORMANCE.md); when the device is shared, the GPU
        // already overlaps the backends, and three (four with v1's CAMBI and
        // speed_chroma, whose read-backs wait) keep many elements' memory small.
        let v1 = plan.cambi.is_some() || plan.speed_chroma.is_some();
        let (alone, shared) = if v1 { (8, 4) } else { (8, 3) };
        let ring = match options.ring {
            0 if others == 0 => alone,
            0 => shared,
            n => n.max(3),
        };
        Ok(Self {
            dev,
            kernels,
            plan,
            ring,
            layout: None,
            slots: Vec::new(),
            next_slot: 0,
            order: VecDeque::new(),
            prev_slot: None,
            prev_prev_slot: None,
            fallback: None,
            cambi_host_pooling: false,
            counts: InputCounts::default(),
            ssim_host: None,
            register_host,
            ready: Vec::new(),
            profiling: false,
            stage_ms: [0.0; STAGES.len()],
            profiled_frames: 0,
        })
    }

    /// Records device events between stages of every frame from now on (or
    /// stops); the totals restart. Timings of frames that overlap on the
    /// device include each other's time: profile with one frame in flight.
    pub fn set_profiling(&mut self, on: bool) {
        self.profiling = on;
        self.stage_ms = [0.0; STAGES.len()];
        self.profiled_frames = 0;
    }

    /// Mean device milliseconds per frame of each stage in [`STAGES`].
    pub fn stage_times(&self) -> Vec<(&'static str, f64)> {
        let n = self.profiled_frames.max(1) as f64;
        STAGES
            .iter()
            .zip(self.stage_ms)
            .map(|(s, ms)| (*s, ms / n))
            .collect()
    }

    pub fn device(&self) -> &Arc<Device> {
        &self.dev
    }

    /// Pool CAMBI's c-values on the host for every scale, as the backend
    /// does on its own only when a scale's exact top-k sum reaches 2^29
    /// (where libvmaf's double sum depends on its order). For tests.
    pub fn set_cambi_host_pooling(&mut self, on: bool) {
        self.cambi_host_pooling = on;
    }

    /// How the kernels were obtained (compiled now, or from the disk cache).
    pub fn compile_note(&self) -> &str {
        &self.kernels.compile_note
    }

    fn setup(&mut self, pic: &Picture<'_>) -> Result<(), VmafError> {
        let (w, h) = (pic.width, pic.height);
        if w > MAX_WIDTH {
            return Err(VmafError::Unsupported(format!(
                "{w} samples wide: the HIP backend takes at most {MAX_WIDTH} (use backend=cpu)"
            )));
        }
        let bps = if pic.bpc == 8 { 1 } else { 2 };
        let mut planes = vec![(w, h)];
        if (self.plan.psnr || self.plan.speed_chroma.is_some())
            && let Some(c) = pic.format.chroma_size(w, h)
        {
            planes.push(c);
            planes.push(c);
        }
        let mut vif = [(w, h); 4];
        for s in 1..4 {
            vif[s] = (vif[s - 1].0 / 2, vif[s - 1].1 / 2);
        }
        let mut adm_in = [(w, h); 4];
        let mut adm_band = [(w.div_ceil(2), h.div_ceil(2)); 4];
        for s in 1..4 {
            adm_in[s] = adm_band[s - 1];
            adm_band[s] = (adm_in[s].0.div_ceil(2), adm_in[s].1.div_ceil(2));
        }
        // DWT index tables: ix (band width × 4) then iy (band height × 4), per scale.
        let mut table: Vec<u8> = Vec::new();
        let mut dwt_offsets = [(0, 0); 4];
        for s in 0..4 {
            let ix = dwt_indices(adm_in[s].0);
            let iy = dwt_indices(adm_in[s].1);
            dwt_offsets[s].0 = table.len();
            table.extend(ix.iter().flatten().flat_map(|v| v.to_le_bytes()));
            dwt_offsets[s].1 = table.len();
            table.extend(iy.iter().flatten().flat_map(|v| v.to_le_bytes()));
        }
        self.dev.make_current().map_err(be)?;
        let dwt_tables =
            DeviceBuffer::new(&self.dev, table.len(), "DWT index tables").map_err(be)?;
        let setup_stream = Stream::new(&self.dev).map_err(be)?;
        setup_stream
            .upload_blocking(&dwt_tables, 0, &table)
            .map_err(be)?;
        let cambi = match &self.plan.cambi {
            Some(p) => Some(
                CambiLayout::new(&self.dev, &setup_stream, p, w, h, pic.bpc)
                    .map_err(|e| VmafError::TooSmall(format!("{e}")))?,
            ),
            None => None,
        };
        let speed = match (&self.plan.speed_chroma, pic.format.chroma_size(w, h)) {
            (Some(p), Some((cw, ch))) => Some(
                SpeedLayout::new(&self.dev, &setup_stream, p, cw, ch, pic.bpc)
                    .map_err(|e| VmafError::TooSmall(format!("{e}")))?,
            ),
            (Some(_), None) => {
                return Err(VmafError::Unsupported(
                    "speed_chroma needs chroma planes (input is GRAY)".into(),
                ));
            }
            _ => None,
        };
        let layout = Layout {
            w,
            h,
            bpc: pic.bpc,
            format: pic.format,
            bps,
            planes,
            vif,
            adm_in,
            adm_band,
            dwt_tables,
            dwt_offsets,
            cambi,
            speed,
        };
        // Free the previous geometry's memory before taking the new one's.
        self.slots.clear();
        self.layout = None;
        let mut slots: Vec<Slot> = Vec::with_capacity(self.ring);
        while slots.len() < self.ring {
            if slots.len() == 1 {
                // Every slot is the size of the first: refuse now, naming the
                // need, rather than fail part-way on a device that is too small.
                let (free, _) = self.dev.memory_info().map_err(be)?;
                if (self.ring - 1) * slots[0].device_bytes() > free {
                    return Err(self.out_of_memory(&layout, &slots, None));
                }
            }
            match self.new_slot(&layout) {
                Ok(s) => slots.push(s),
                Err(HipError::OutOfMemory { bytes, what }) => {
                    return Err(self.out_of_memory(&layout, &slots, Some((bytes, what))));
                }
                Err(e) => return Err(be(e)),
            }
        }
        self.slots = slots;
        self.layout = Some(layout);
        self.next_slot = 0;
        self.prev_slot = None;
        self.prev_prev_slot = None;
        Ok(())
    }

    /// The error for a geometry whose frames in flight do not fit the
    /// device, with `slots` the slots made so far (all the size of the
    /// first) and the allocation that failed, if one did.
    fn out_of_memory(
        &self,
        l: &Layout,
        slots: &[Slot],
        failed: Option<(usize, String)>,
    ) -> VmafError {
        let mib = |b: usize| b.div_ceil(1 << 20);
        let needs = match (slots.first(), failed) {
            (Some(s), _) => {
                let each = s.device_bytes();
                format!(
                    "{} frames in flight need {} MiB ({} MiB each)",
                    self.ring,
                    mib(self.ring * each),
                    mib(each)
                )
            }
            (None, Some((bytes, what))) => format!(
                "allocating {} MiB for {what} failed before one frame in flight fitted",
                mib(bytes)
            ),
            (None, None) => "no frame in flight fits".into(),
        };
        // What this backend could use: the device's free memory plus its own slots.
        let held: usize = slots.iter().map(Slot::device_bytes).sum();
        let (free, total) = match self.dev.memory_info() {
            Ok(m) => m,
            Err(e) => return be(e),
        };
        VmafError::Backend(format!(
            "HIP: GPU out of memory for {}x{} {}-bit frames: {needs}, and the device ({}) has {} MiB free of {} MiB; \
             free GPU memory, measure a smaller picture, or use backend=cpu",
            l.w,
            l.h,
            l.bpc,
            self.dev.info.name,
            mib(free + held),
            mib(total)
        ))
    }

    fn new_slot(&self, l: &Layout) -> Result<Slot, HipError> {
        let dev = &self.dev;
        let mut pix = Vec::new();
        let mut staging_len = 0;
        for &(pw, ph) in &l.planes {
            for side in ["reference", "distorted"] {
                pix.push(DeviceBuffer::new(dev, pw * ph * l.bps, side)?);
                staging_len += pw * ph * l.bps;
            }
        }
        let half = l.vif[1].0 * l.vif[1].1 * 2;
        let buf = |what: &str, n: usize| DeviceBuffer::new(dev, n, what);
        let mut bands_ref = Vec::new();
        let mut bands_dis = Vec::new();
        for &(bw, bh) in &l.adm_band {
            bands_ref.push(buf("ADM reference bands", 4 * bw * bh * 4)?);
            bands_dis.push(buf("ADM distorted bands", 4 * bw * bh * 4)?);
        }
        let n0 = l.adm_band[0].0 * l.adm_band[0].1;
        Ok(Slot {
            stream: Stream::new(dev)?,
            uploaded: Event::new(dev)?,
            done: Event::blocking(dev)?,
            staging: PinnedHostMem::new(dev, staging_len)?,
            pix,
            vif_a: [buf("VIF scale image", half)?, buf("VIF scale image", half)?],
            vif_b: [buf("VIF scale image", half)?, buf("VIF scale image", half)?],
            bands_ref,
            bands_dis,
            work: buf("ADM decouple/CSF planes", 18 * n0 * 4)?,
            accum: buf("feature sums", R_LEN * 8)?,
            cambi: l.cambi.as_ref().map(|c| c.slot(dev)).transpose()?,
            speed: l.speed.as_ref().map(|c| c.slot(dev)).transpose()?,
            result: PinnedHostMem::new(
                dev,
                R_LEN * 8 + l.speed.as_ref().map_or(0, |s| s.result_bytes()),
            )?,
            flight: None,
            marks: (0..=STAGES.len())
                .map(|_| Event::new(dev))
                .collect::<Result<_, _>>()?,
        })
    }

    /// Retires the oldest frame in flight (waiting when `block`); false if
    /// it is not done and `block` is false.
    fn retire_one(&mut self, block: bool) -> Result<bool, VmafError> {
        let Some(&(index, s)) = self.order.front() else {
            return Ok(false);
        };
        let alone = self.live_on_device() == 1;
        let slot = &mut self.slots[s];
        if block && alone {
            // Alone on the device, the GPU is the bound and a frame retires
            // every few hundred microseconds: poll, so that the next frame's
            // work is queued without a thread's wake-up in between (sleeping
            // here cost a lone 1080p engine 1.7%: 5,360 -> 5,270 fps).
            while !slot.done.query().map_err(be)? {
                std::hint::spin_loop();
            }
        } else if block {
            // Sharing the device, wait asleep (`done` is a blocking-sync
            // event): a spinning wait takes a core from the sources that
            // feed the other elements. Sixteen pipelines: up to a fifth less
            // user CPU time, as many frames or a few percent more; four,
            // which the GPU bounds, 1-3% fewer (docs/PERFORMANCE.md).
            slot.done.synchronize().map_err(be)?;
        } else if !slot.done.query().map_err(be)? {
            return Ok(false);
        }
        self.order.pop_front();
        let f = slot.flight.take().ok_or_else(|| {
            VmafError::Backend(format!("HIP: frame {index} lost its slot record"))
        })?;
        if f.profiled {
            for k in 0..STAGES.len() {
                self.stage_ms[k] +=
                    f64::from(Event::elapsed_ms(&slot.marks[k], &slot.marks[k + 1]).map_err(be)?);
            }
            self.profiled_frames += 1;
        }
        let sums = read_u64s(slot.result.as_ref(), R_LEN);
        let layout = self
            .layout
            .as_ref()
            .expect("slots exist only with a layout");
        let mut raw = finish(&self.plan, layout, &f, &sums);
        if f.scored {
            if let (Some(cl), Some(cs)) = (&layout.cambi, &slot.cambi) {
                if sums[R_CAMBI_BAD] != 0 {
                    raw.error = Some(format!(
                        "CAMBI: a luma value exceeds the {}-bit maximum {}",
                        layout.bpc,
                        (1u32 << layout.bpc) - 1
                    ));
                } else {
                    if self.fallback.is_none() {
                        self.fallback =
                            Some(PinnedHostMem::new(&self.dev, cs.max_floats() * 4).map_err(be)?);
                    }
                    let host = self.fallback.as_ref().expect("just made");
                    let st = &slot.stream;
                    let mut fetch =
                        |pic: usize, off: usize, n: usize| cs.read(st, host, pic, off, n);
                    raw.cambi = Some(
                        cl.finish(&sums, R_CAMBI, self.cambi_host_pooling, &mut fetch)
                            .map_err(be)?,
                    );
                }
            }
            if let Some(sl) = &layout.speed {
                raw.speed_chroma = Some(sl.finish(&slot.result.as_ref()[R_LEN * 8..]));
            }
        }
        self.ready.push(raw);
        Ok(true)
    }

    /// One frame onto the GPU: take its ring slot, upload its planes,
    /// launch every extractor the plan asks for, read the sums back, and
    /// record what is in flight.
    fn submit_frame(&mut self, input: FrameInput<'_>) -> Result<(), VmafError> {
        self.release_uploaded_inputs()?;
        let s = self.take_slot(input.index)?;
        // Counted before `launch_features` clones the kernels' Arc.
        let live = live_backends(&self.kernels);
        self.mark(s, 0)?;
        let held = self.upload(s, &input, live)?;
        let slot = &self.slots[s];
        slot.stream.record(&slot.uploaded).map_err(be)?;
        self.mark(s, 1)?;
        let motion_computed = self.launch_features(s, input.scored)?;
        self.read_back(s)?;
        let (ssim, ms_ssim) = self.ssim_on_cpu(s, &input)?;
        self.slots[s].flight = Some(InFlight {
            index: input.index,
            scored: input.scored,
            motion_computed,
            profiled: self.profiling,
            // Nothing to hold (staged or device-copied input without a
            // keep-alive): no event to poll for it later.
            inputs: (!held.pinned.is_empty() || input.keep.is_some()).then_some(Inputs {
                _registered: held.registered,
                _pinned: held.pinned,
                _keep: input.keep,
            }),
            ssim,
            ms_ssim,
        });
        self.order.push_back((input.index, s));
        self.prev_prev_slot = self.prev_slot;
        self.prev_slot = Some(s);
        self.next_slot = (s + 1) % self.ring;
        Ok(())
    }

    /// The ring slot of frame `index`, once the frames that still need it
    /// are retired. Frame j takes slot j mod N once frames ≤ j − N + lag are
    /// retired (frame j − N + lag reads slot j mod N's reference for motion;
    /// lag is 2 with the five-frame window).
    fn take_slot(&mut self, index: u64) -> Result<usize, VmafError> {
        let ring = self.ring as u64;
        let lag = self
            .plan
            .motion
            .map_or(1, |m| if m.five_frame_window { 2 } else { 1 });
        while let Some(&(oldest, _)) = self.order.front() {
            if oldest + ring > index + lag && self.order.len() < self.ring - lag as usize {
                break;
            }
            self.retire_one(true)?;
        }
        Ok(self.next_slot)
    }

    /// Records profiling mark `k` on slot `s`'s stream (when profiling).
    fn mark(&self, s: usize, k: usize) -> Result<(), VmafError> {
        if self.profiling {
            let slot = &self.slots[s];
            slot.stream.record(&slot.marks[k]).map_err(be)?;
        }
        Ok(())
    }

    /// Uploads every plane, reference and distorted, into slot `s`: GPU
    /// memory copied on the device, pinned memory read in place, large
    /// kept host memory page-locked where it lies, the rest staged.
    /// Returns the host memory the uploads read until they are done.
    fn upload(&mut self, s: usize, input: &FrameInput<'_>, live: usize) -> Result<Held, VmafError> {
        let l = self.layout.as_ref().expect("set up before submitting");
        let slot = &self.slots[s];
        let st = &slot.stream;
        let mut held = Held::default();
        let mut staged = Vec::new(); // (plane, side, offset in the staging buffer)
        let mut staged_bytes = 0usize;
        let mut counts = self.counts;
        // Kept host memory of a whole plane or more is page-locked where it
        // lies and read by DMA in place, rather than staged (NVIDIA) — only
        // while this backend is alone on the device: page-locking serialises
        // in the driver, so one stream gains (one `filesrc` pipeline 1,064 →
        // 1,439 fps) and sixteen at once lose (3,591 → 1,120 fps; raw log
        // docs/device-runs/2026-11-23-gpu-input-pipelines-h100.txt, run 5).
        let register = self.register_host && input.keep.is_some() && live == 1;
        for (p, &(pw, ph)) in l.planes.iter().enumerate() {
            for (side, pic) in [input.reference, input.distorted].into_iter().enumerate() {
                let dst = &slot.pix[2 * p + side];
                let row = pw * l.bps;
                if let Planes::Device(planes) = &pic.planes {
                    // GPU memory of this context: one copy on the device into
                    // the ring, which motion keeps for the next frame anyway,
                    // so that upstream gets its buffer back at once.
                    let src = planes[p].as_ref().expect("validated picture");
                    if src.interleaved {
                        return Err(VmafError::InvalidPicture(format!(
                            "plane {p} of a picture in GPU memory is interleaved (NV12 chroma), which the metrics asked for cannot read; convert to a planar format (I420) upstream"
                        )));
                    }
                    st.copy_2d_from_device(dst, 0, row, src.ptr, src.bytes, src.pitch, row, ph)
                        .map_err(be)?;
                    counts.device += 1;
                    continue;
                }
                let (bytes, pitch) = plane_bytes(pic, p);
                let owner = pinned_owner(bytes);
                let in_pinned_memory = owner.is_some();
                if let Some((buf, off)) = owner.filter(|_| input.keep.is_some()) {
                    st.upload_2d(dst, 0, row, &buf, off, pitch, row, ph)
                        .map_err(be)?;
                    held.pinned.push(buf);
                    counts.pinned += 1;
                } else if !in_pinned_memory
                    && register
                    && row * ph >= REGISTER_MIN_BYTES
                    && let extent = &bytes[..pitch * (ph - 1) + row]
                    && let Ok(reg) = HostRegistration::new(&self.dev, extent)
                {
                    st.upload_2d_registered(dst, 0, row, extent, &reg, pitch, row, ph)
                        .map_err(be)?;
                    held.registered.push(reg);
                    counts.registered += 1;
                } else {
                    staged.push((p, side, staged_bytes));
                    staged_bytes += row * ph;
                    counts.staged += 1;
                }
            }
        }
        self.counts = counts;
        if !staged.is_empty() {
            self.upload_staged(s, input, &staged, staged_bytes, live)?;
        }
        Ok(held)
    }

    /// Copies the staged planes into slot `s`'s pinned staging buffer (one
    /// packed destination each, on as many threads as the backends sharing
    /// the cores allow) and uploads them from there.
    fn upload_staged(
        &mut self,
        s: usize,
        input: &FrameInput<'_>,
        staged: &[(usize, usize, usize)],
        staged_bytes: usize,
        live: usize,
    ) -> Result<(), VmafError> {
        let l = self.layout.as_ref().expect("set up before submitting");
        let slot = &mut self.slots[s];
        let mut dst_all: &mut [u8] = slot.staging.as_mut();
        let mut jobs: Vec<(&mut [u8], &[u8], usize, usize)> = Vec::new(); // (dst, src, pitch, row)
        let mut at = 0usize;
        for &(p, side, off) in staged {
            let pic = if side == 0 {
                input.reference
            } else {
                input.distorted
            };
            let (bytes, pitch) = plane_bytes(pic, p);
            let (pw, ph) = l.planes[p];
            let row = pw * l.bps;
            let (_, rest) = std::mem::take(&mut dst_all).split_at_mut(off - at);
            let (dst, rest) = rest.split_at_mut(row * ph);
            dst_all = rest;
            at = off + row * ph;
            jobs.push((dst, bytes, pitch, row));
        }
        stage_copy(jobs, staged_bytes, live);
        let slot = &self.slots[s];
        for &(p, side, off) in staged {
            let (pw, ph) = l.planes[p];
            let row = pw * l.bps;
            slot.stream
                .upload_2d(
                    &slot.pix[2 * p + side],
                    0,
                    row,
                    slot.staging.shared(),
                    off,
                    row,
                    row,
                    ph,
                )
                .map_err(be)?;
        }
        Ok(())
    }

    /// Every extractor's launches for slot `s`, in stream order, each
    /// followed by its profiling mark: motion (also for frames `subsample`
    /// skips), then VIF, ADM, PSNR, CAMBI and speed_chroma for scored
    /// frames. Returns whether motion was computed.
    fn launch_features(&self, s: usize, scored: bool) -> Result<bool, VmafError> {
        let k = self.kernels.clone();
        let l = self.layout.as_ref().expect("set up before submitting");
        let slot = &self.slots[s];
        slot.stream
            .memset(&slot.accum, 0, R_LEN * 8, 0)
            .map_err(be)?;
        let motion_computed = self.launch_motion(&k, l, s)?;
        self.mark(s, 2)?;
        if scored && let Some(egl) = self.plan.vif_egl {
            launch_vif(&k, l, slot, egl).map_err(be)?;
        }
        self.mark(s, 3)?;
        if scored && let Some(p) = &self.plan.adm {
            launch_adm(&k, l, slot, p).map_err(be)?;
        }
        self.mark(s, 4)?;
        if scored && self.plan.psnr {
            launch_psnr(&k, l, slot).map_err(be)?;
        }
        self.mark(s, 5)?;
        if scored && let (Some(cl), Some(cs)) = (&l.cambi, &slot.cambi) {
            cl.launch(
                &k.v1,
                &slot.stream,
                cs,
                (&slot.pix[0], &slot.pix[1]),
                l.bps,
                l.bpc,
                &slot.accum,
                R_CAMBI,
                R_CAMBI_BAD,
            )
            .map_err(be)?;
        }
        self.mark(s, 6)?;
        if scored && let (Some(sl), Some(ss)) = (&l.speed, &slot.speed) {
            sl.launch(
                &k.v1,
                &slot.stream,
                ss,
                [&slot.pix[2], &slot.pix[3], &slot.pix[4], &slot.pix[5]],
                l.bps,
            )
            .map_err(be)?;
            slot.stream
                .download(
                    slot.result.shared(),
                    R_LEN * 8,
                    &ss.stats,
                    0,
                    sl.result_bytes(),
                )
                .map_err(be)?;
        }
        self.mark(s, 7)?;
        Ok(motion_computed)
    }

    /// Motion's SAD of slot `s`'s reference against the previous one (two
    /// back with the five-frame window), once that one is uploaded; false
    /// when there is none (the first frame) or motion is forced to zero.
    fn launch_motion(&self, k: &Kernels, l: &Layout, s: usize) -> Result<bool, VmafError> {
        let prev = match self.plan.motion {
            Some(m) if m.five_frame_window => self.prev_prev_slot,
            _ => self.prev_slot,
        };
        let (Some(mp), Some(ps)) = (&self.plan.motion, prev) else {
            return Ok(false);
        };
        if mp.force_zero {
            return Ok(false);
        }
        let (slot, p) = (&self.slots[s], &self.slots[ps]);
        let st = &slot.stream;
        st.wait(&p.uploaded).map_err(be)?;
        let kern = if l.bps == 1 { &k.motion8 } else { &k.motion16 };
        let shift = if l.bpc == 8 { 8 } else { i32::from(l.bpc) };
        // Rows per block: one block sum for several rows.
        let rows = 8;
        st.launch(
            kern,
            (blocks(l.w), l.h.div_ceil(rows) as u32, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(&p.pix[0], 0),
                Arg::Buf(&slot.pix[0], 0),
                Arg::I32(l.w as i32),
                Arg::I32(l.h as i32),
                Arg::I32(shift),
                Arg::I32(rows as i32),
                Arg::Buf(&slot.accum, R_MOTION * 8),
            ],
        )
        .map_err(be)?;
        Ok(true)
    }

    /// The sums read back into slot `s`'s pinned result, and its done event.
    fn read_back(&self, s: usize) -> Result<(), VmafError> {
        let slot = &self.slots[s];
        slot.stream
            .download(slot.result.shared(), 0, &slot.accum, 0, R_LEN * 8)
            .map_err(be)?;
        self.mark(s, 8)?;
        slot.stream.record(&slot.done).map_err(be)
    }

    /// SSIM and MS-SSIM stay on the CPU (float extractors; see
    /// docs/architecture.md): from the host pictures, or, for GPU input,
    /// from the uploaded luma read back (which waits for this frame).
    fn ssim_on_cpu(
        &mut self,
        s: usize,
        input: &FrameInput<'_>,
    ) -> Result<(Option<f64>, Option<f64>), VmafError> {
        if !input.scored || !(self.plan.ssim || self.plan.ms_ssim) {
            return Ok((None, None));
        }
        let l = self.layout.as_ref().expect("set up before submitting");
        let (rf, df) = if input.reference.on_device() || input.distorted.on_device() {
            Self::luma_to_host(&self.dev, &mut self.ssim_host, l, &self.slots[s])?
        } else {
            let f = crate::vmaf::Frame::from_picture(input.reference, false);
            let g = crate::vmaf::Frame::from_picture(input.distorted, false);
            (
                ssim::to_float(&f.luma().data, f.bpc),
                ssim::to_float(&g.luma().data, g.bpc),
            )
        };
        Ok((
            if self.plan.ssim {
                ssim::float_ssim(&rf, &df, l.w, l.h)
            } else {
                None
            },
            if self.plan.ms_ssim {
                ssim::float_ms_ssim(&rf, &df, l.w, l.h)
            } else {
                None
            },
        ))
    }

    /// Lets go of the input memory of frames whose uploads are done, so that
    /// upstream pools (pinned host buffers, GPU decoder surfaces) get their
    /// buffers back after the copy rather than after the whole frame.
    fn release_uploaded_inputs(&mut self) -> Result<(), VmafError> {
        for &(_, s) in &self.order {
            let slot = &mut self.slots[s];
            if let Some(f) = slot.flight.as_mut()
                && f.inputs.is_some()
                && slot.uploaded.query().map_err(be)?
            {
                f.inputs = None;
            }
        }
        Ok(())
    }

    /// The uploaded reference and distorted luma of slot `s`, read back and
    /// widened for the float SSIM extractors (pictures in GPU memory have no
    /// host copy). Waits for the slot's work so far.
    fn luma_to_host(
        dev: &Arc<Device>,
        keep: &mut Option<PinnedHostMem>,
        l: &Layout,
        slot: &Slot,
    ) -> Result<(Vec<f32>, Vec<f32>), VmafError> {
        let (w, h) = l.planes[0];
        let bytes = w * h * l.bps;
        if keep.as_ref().is_none_or(|m| m.shared().len() < 2 * bytes) {
            *keep = Some(PinnedHostMem::new(dev, 2 * bytes).map_err(be)?);
        }
        let host = keep.as_ref().expect("just made");
        for side in 0..2 {
            slot.stream
                .download(host.shared(), side * bytes, &slot.pix[side], 0, bytes)
                .map_err(be)?;
        }
        slot.stream.synchronize().map_err(be)?;
        let data = host.as_ref();
        let widen = |b: &[u8]| -> Vec<u16> {
            if l.bps == 1 {
                b.iter().map(|&v| u16::from(v)).collect()
            } else {
                b.chunks_exact(2)
                    .map(|c| u16::from_ne_bytes([c[0], c[1]]))
                    .collect()
            }
        };
        Ok((
            ssim::to_float(&widen(&data[..bytes]), l.bpc),
            ssim::to_float(&widen(&data[bytes..2 * bytes]), l.bpc),
        ))
    }

    fn drain(&mut self) -> Result<(), VmafError> {
        while !self.order.is_empty() {
            self.retire_one(true)?;
        }
        Ok(())
    }
}

impl Drop for HipBackend {
    fn drop(&mut self) {
        // Copies still queued read memory the frames in flight hold (kept
        // buffers, page-locked host memory): they finish before it goes.
        let _ = self.dev.make_current();
        for slot in &self.slots {
            let _ = slot.stream.synchronize();
        }
    }
}

/// Planes smaller than this are staged: page-locking costs more than
/// copying them.
const REGISTER_MIN_BYTES: usize = 1 << 20;

/// Backends live on the device whose kernels these are: the per-process
/// table holds one reference to them, each backend (and each backend being
/// opened) another.
/// PSNR's sums of squared errors, one launch per plane uploaded.
fn launch_psnr(k: &Kernels, l: &Layout, slot: &Slot) -> Result<(), HipError> {
    for (p, &(pw, ph)) in l.planes.iter().enumerate() {
        let kern = if l.bps == 1 { &k.sse8 } else { &k.sse16 };
        slot.stream.launch(
            kern,
            (blocks(pw), ph as u32, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(&slot.pix[2 * p], 0),
                Arg::Buf(&slot.pix[2 * p + 1], 0),
                Arg::I32(pw as i32),
                Arg::I32(ph as i32),
                Arg::Buf(&slot.accum, (R_PSNR + p) * 8),
            ],
        )?;
    }
    Ok(())
}

fn live_backends(kernels: &Arc<Kernels>) -> usize {
    Arc::strong_count(kernels).saturating_sub(1)
}

/// This process's usable cores, asked once (the answer reads the affinity
/// mask and cgroup limits: not something to repeat for every frame).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Packs strided planes into pinned staging memory. Large frames are copied
/// by several threads (a single core copies about 10 GB/s, which would cap a
/// 1080p stream below the GPU's rate), as many as the cores shared among the
/// `backends` live on the device allow (at most 4): with one stream per core
/// each copies on its own thread, as spawning helpers then only oversubscribes.
fn stage_copy(jobs: Vec<(&mut [u8], &[u8], usize, usize)>, total: usize, backends: usize) {
    // Streaming stores: the staging buffer is read next by the DMA engine,
    // not by this CPU (docs/PERFORMANCE.md, host memory bandwidth).
    let copy_rows = |dst: &mut [u8], src: &[u8], pitch: usize, row: usize| {
        for (y, d) in dst.chunks_exact_mut(row).enumerate() {
            crate::isa::stream_copy(d, &src[y * pitch..y * pitch + row]);
        }
        crate::isa::stream_fence();
    };
    let threads = (cores() / backends.max(1)).clamp(1, 4);
    if total < (1 << 20) || threads < 2 {
        for (dst, src, pitch, row) in jobs {
            copy_rows(dst, src, pitch, row);
        }
        return;
    }
    // Split every plane into row bands, one band per thread.
    std::thread::scope(|scope| {
        for (dst, src, pitch, row) in jobs {
            let rows = dst.len() / row;
            let band = rows.div_ceil(threads).max(1);
            for (k, d) in dst.chunks_mut(band * row).enumerate() {
                let s = &src[k * band * pitch..];
                scope.spawn(move || copy_rows(d, s, pitch, row));
            }
        }
    });
}

fn blocks(n: usize) -> u32 {
    n.div_ceil(256).max(1) as u32
}

/// The bytes of plane `p` of `pic` from its first sample, and its pitch in bytes.
fn plane_bytes<'a>(pic: &'a Picture<'a>, p: usize) -> (&'a [u8], usize) {
    match &pic.planes {
        Planes::U8(pl) => {
            let pl = pl[p].as_ref().expect("validated picture");
            (pl.data, pl.stride)
        }
        Planes::U16(pl) => {
            let pl = pl[p].as_ref().expect("validated picture");
            (u16_bytes(pl.data), pl.stride * 2)
        }
        Planes::Device(_) => unreachable!("GPU planes are copied on the device"),
    }
}

fn launch_vif(k: &Kernels, l: &Layout, slot: &Slot, egl: f64) -> Result<(), HipError> {
    let st = &slot.stream;
    // Scale s reads: raw pixels (s = 0), then alternately vif_a, vif_b, vif_a.
    let bufs = [&slot.vif_a, &slot.vif_b, &slot.vif_a];
    for scale in 0..4 {
        let (sw, sh) = l.vif[scale];
        if scale > 0 {
            let (pw, ph) = l.vif[scale - 1];
            let out = bufs[scale - 1];
            let (ow, oh) = (pw / 2, ph / 2);
            let grid = (blocks(ow), oh as u32, 2);
            if scale == 1 {
                let keep_u32 = i32::from(l.bpc == 8);
                let v_shift = i32::from(l.bpc);
                let mut args = vec![
                    Arg::Buf(&slot.pix[0], 0),
                    Arg::Buf(&slot.pix[1], 0),
                    Arg::Buf(&out[0], 0),
                    Arg::Buf(&out[1], 0),
                    Arg::I32(pw as i32),
                    Arg::I32(ph as i32),
                    Arg::I32(v_shift),
                    Arg::I32(keep_u32),
                ];
                if l.bps == 1 {
                    st.launch(&k.vif_dec8, grid, (256, 1, 1), 0, &args)?;
                } else {
                    args.push(Arg::I32(1));
                    st.launch(&k.vif_dec16, grid, (256, 1, 1), 0, &args)?;
                }
            } else {
                let src = bufs[scale - 2];
                st.launch(
                    &k.vif_dec16,
                    grid,
                    (256, 1, 1),
                    0,
                    &[
                        Arg::Buf(&src[0], 0),
                        Arg::Buf(&src[1], 0),
                        Arg::Buf(&out[0], 0),
                        Arg::Buf(&out[1], 0),
                        Arg::I32(pw as i32),
                        Arg::I32(ph as i32),
                        Arg::I32(16),
                        Arg::I32(0),
                        Arg::I32(scale as i32),
                    ],
                )?;
            }
        }
        let sh_ = VifShifts::for_scale(scale, l.bpc);
        let (r, d) = if scale == 0 {
            (&slot.pix[0], &slot.pix[1])
        } else {
            (&bufs[scale - 1][0], &bufs[scale - 1][1])
        };
        let kern = if scale == 0 && l.bps == 1 {
            &k.vif_stat8
        } else {
            &k.vif_stat16
        };
        // Output rows per block (kernels/vif_statistic.hip): several at
        // the two large scales, so each input row is read fewer times; one
        // on tiny images, where blocks would be too few.
        let rows: usize = match scale {
            0 if sh >= 64 => 4,
            1 if sh >= 128 => 4,
            1 if sh >= 32 => 2,
            _ => 1,
        };
        // 512 columns per block (VIF_SPAN).
        st.launch(
            kern,
            (sw.div_ceil(512) as u32, sh.div_ceil(rows) as u32, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(r, 0),
                Arg::Buf(d, 0),
                Arg::I32(sw as i32),
                Arg::I32(sh as i32),
                Arg::I32(scale as i32),
                Arg::I32(rows as i32),
                Arg::I32(sh_.mu_shift as i32),
                Arg::I32(sh_.sq_shift as i32),
                Arg::F64(egl),
                Arg::Buf(&k.log_table, 0),
                Arg::Buf(&slot.accum, (R_VIF + 4 * scale) * 8),
            ],
        )?;
    }
    Ok(())
}

/// ADM of one frame: at each of the four scales, the DWT of both pictures
/// (from the luma at scale 0, from the previous scale's bands after), the
/// decoupling with the CSF, the contrast-masking sums and the CSF-weighted
/// denominator sums into `slot.accum`.
fn launch_adm(k: &Kernels, l: &Layout, slot: &Slot, p: &AdmParams) -> Result<(), HipError> {
    for scale in 0..4 {
        launch_adm_dwt(k, l, slot, scale)?;
        let rf: [i64; 3] = if scale == 0 {
            rfactors_scale0_fixed(p).map(i64::from)
        } else {
            rfactors_s123_fixed(scale, p).map(i64::from)
        };
        launch_adm_decouple(k, l, slot, scale, p, rf)?;
        launch_adm_masking(k, l, slot, scale, rf)?;
    }
    Ok(())
}

/// The DWT of both pictures at `scale`.
fn launch_adm_dwt(k: &Kernels, l: &Layout, slot: &Slot, scale: usize) -> Result<(), HipError> {
    let st = &slot.stream;
    let (w, h) = l.adm_in[scale];
    let (bw, bh) = l.adm_band[scale];
    let (ox, oy) = l.dwt_offsets[scale];
    let grid = (blocks(bw), bh as u32, 2);
    if scale == 0 {
        let shift = if l.bpc == 8 { 8 } else { i32::from(l.bpc) };
        let round = 1i32 << (shift - 1);
        let kern = if l.bps == 1 { &k.dwt0_8 } else { &k.dwt0_16 };
        st.launch(
            kern,
            grid,
            (256, 1, 1),
            0,
            &[
                Arg::Buf(&slot.pix[0], 0),
                Arg::Buf(&slot.pix[1], 0),
                Arg::Buf(&slot.bands_ref[0], 0),
                Arg::Buf(&slot.bands_dis[0], 0),
                Arg::I32(w as i32),
                Arg::I32(h as i32),
                Arg::I32(bw as i32),
                Arg::I32(bh as i32),
                Arg::Buf(&l.dwt_tables, ox),
                Arg::Buf(&l.dwt_tables, oy),
                Arg::I32(shift),
                Arg::I32(round),
                Arg::I32(DWT_LO_SUM.wrapping_mul(round)),
            ],
        )?;
    } else {
        let (v_add, v_shift) = if scale == 1 { (0, 0) } else { (32768, 16) };
        let (h_add, h_shift) = if scale == 2 { (32768, 16) } else { (16384, 15) };
        st.launch(
            &k.dwt123,
            grid,
            (256, 1, 1),
            0,
            &[
                Arg::Buf(&slot.bands_ref[scale - 1], 0),
                Arg::Buf(&slot.bands_dis[scale - 1], 0),
                Arg::Buf(&slot.bands_ref[scale], 0),
                Arg::Buf(&slot.bands_dis[scale], 0),
                Arg::I32(w as i32),
                Arg::I32(h as i32),
                Arg::I32(bw as i32),
                Arg::I32(bh as i32),
                Arg::Buf(&l.dwt_tables, ox),
                Arg::Buf(&l.dwt_tables, oy),
                Arg::I64(v_add),
                Arg::I32(v_shift),
                Arg::I64(h_add),
                Arg::I32(h_shift),
            ],
        )?;
    }
    Ok(())
}

/// Decoupling of the distorted bands from the reference's at `scale`, with
/// the CSF's fixed-point factors `rf`, into `slot.work`.
fn launch_adm_decouple(
    k: &Kernels,
    l: &Layout,
    slot: &Slot,
    scale: usize,
    p: &AdmParams,
    rf: [i64; 3],
) -> Result<(), HipError> {
    let st = &slot.stream;
    let (bw, bh) = l.adm_band[scale];
    let cos_sq = f64::from(adm::cos_1deg_sq());
    let e = Region::extended(bw, bh);
    st.launch(
        &k.decouple,
        (
            blocks((e.right - e.left).max(0) as usize),
            (e.bottom - e.top).max(0) as u32,
            1,
        ),
        (256, 1, 1),
        0,
        &[
            Arg::Buf(&slot.bands_ref[scale], 0),
            Arg::Buf(&slot.bands_dis[scale], 0),
            Arg::Buf(&k.div_table, 0),
            Arg::Buf(&slot.work, 0),
            Arg::I32(bw as i32),
            Arg::I32(bh as i32),
            Arg::I32(e.top),
            Arg::I32(e.bottom),
            Arg::I32(e.left),
            Arg::I32(e.right),
            Arg::I32(scale as i32),
            Arg::F64(p.enhn_gain_limit),
            Arg::F64(cos_sq),
            Arg::I64(rf[0]),
            Arg::I64(rf[1]),
            Arg::I64(rf[2]),
        ],
    )?;
    Ok(())
}

/// The contrast-masking sums and the CSF-weighted denominator sums of
/// `scale`, into its nine words of `slot.accum`.
fn launch_adm_masking(
    k: &Kernels,
    l: &Layout,
    slot: &Slot,
    scale: usize,
    rf: [i64; 3],
) -> Result<(), HipError> {
    let st = &slot.stream;
    let (bw, bh) = l.adm_band[scale];
    let c = Region::core(bw, bh);
    let (top, bottom) = (c.top.max(0), c.bottom.min(bh as i32));
    let (left, right) = (c.left.max(0), c.right.min(bw as i32));
    let shifts = CmShifts::new(scale, bw, bh);
    let base = (R_ADM + 9 * scale) * 8;
    st.launch(
        &k.cm,
        (1, (bottom - top).max(0) as u32, 1),
        (256, 1, 1),
        0,
        &[
            Arg::Buf(&slot.work, 0),
            Arg::I32(bw as i32),
            Arg::I32(bh as i32),
            Arg::I32(top),
            Arg::I32(bottom),
            Arg::I32(left),
            Arg::I32(right),
            Arg::I32(scale as i32),
            Arg::I64(rf[0]),
            Arg::I64(rf[1]),
            Arg::I64(rf[2]),
            Arg::I32(shifts.shift_cub[0] as i32),
            Arg::I32(shifts.shift_cub[1] as i32),
            Arg::I32(shifts.shift_cub[2] as i32),
            Arg::I32(shifts.shift_inner as i32),
            Arg::Buf(&slot.accum, base),
        ],
    )?;
    let ds = den_shifts(scale, &c);
    st.launch(
        &k.csf_den,
        (1, (c.bottom - c.top).max(0) as u32, 1),
        (256, 1, 1),
        0,
        &[
            Arg::Buf(&slot.bands_ref[scale], 0),
            Arg::I32(bw as i32),
            Arg::I32(bh as i32),
            Arg::I32(c.top),
            Arg::I32(c.left),
            Arg::I32(c.right),
            Arg::I32(scale as i32),
            Arg::I32(ds.shift_acc as i32),
            Arg::I32(ds.shift_sq as i32),
            Arg::I32(ds.shift_cub as i32),
            Arg::Buf(&slot.accum, base + 6 * 8),
        ],
    )?;
    Ok(())
}

/// The CPU finish of one frame's integer sums: the same functions, in the
/// same order, as the CPU engine's extractors end with.
fn finish(plan: &Plan, l: &Layout, f: &InFlight, sums: &[u64]) -> RawFeatures {
    let mut out = RawFeatures {
        index: f.index,
        scored: f.scored,
        ..Default::default()
    };
    if let Some(mp) = &plan.motion {
        out.motion_sad = Some(if f.motion_computed {
            motion::sad_score(sums[R_MOTION], l.w, l.h, mp)
        } else {
            0.0
        });
    }
    if !f.scored {
        return out;
    }
    if plan.vif_egl.is_some() {
        let mut v = VifScales::default();
        for s in 0..4 {
            let b = R_VIF + 4 * s;
            let acc = VifAccum {
                num_log: sums[b] as i64,
                den_log: sums[b + 1] as i64,
                num_non_log: sums[b + 2] as i64,
                den_non_log: sums[b + 3] as i64,
            };
            (v.num[s], v.den[s]) = acc.num_den();
        }
        out.vif = Some(v);
    }
    if let Some(p) = &plan.adm {
        let (mut num, mut den, mut aim) = ([0f32; 4], [0f32; 4], [0f32; 4]);
        for s in 0..4 {
            let (bw, bh) = l.adm_band[s];
            let b = R_ADM + 9 * s;
            let i3 = |o: usize| {
                [
                    sums[b + o] as i64,
                    sums[b + o + 1] as i64,
                    sums[b + o + 2] as i64,
                ]
            };
            num[s] = cm_finish(s, i3(0), bw, bh, p.noise_weight);
            aim[s] = cm_finish(s, i3(3), bw, bh, 0.0);
            den[s] = csf_den_finish(s, [sums[b + 6], sums[b + 7], sums[b + 8]], bw, bh, p);
        }
        out.adm = Some(AdmScores::finish(num, den, aim, l.w, l.h, p));
    }
    if plan.psnr {
        let mut v = [0.0; 3];
        for (p, &(pw, ph)) in l.planes.iter().enumerate() {
            v[p] = psnr::psnr_from_sse(sums[R_PSNR + p], pw, ph, l.bpc);
        }
        out.psnr = Some(v);
    }
    out.ssim = f.ssim;
    out.ms_ssim = f.ms_ssim;
    out
}

impl FeatureBackend for HipBackend {
    fn describe(&self) -> String {
        let i = &self.dev.info;
        format!(
            "hip: {} #{} ({}, warp {}, {} via {})",
            i.name,
            i.ordinal,
            i.arch,
            i.warp_size,
            self.dev.runtime().vendor().name(),
            self.dev.runtime().libraries
        )
    }

    fn submit(&mut self, input: FrameInput<'_>) -> Result<(), VmafError> {
        self.dev.make_current().map_err(be)?;
        let pic = input.reference;
        let changed = match &self.layout {
            None => true,
            Some(l) => {
                l.w != pic.width || l.h != pic.height || l.bpc != pic.bpc || l.format != pic.format
            }
        };
        if changed {
            self.drain()?;
            self.setup(pic)?;
        }
        self.submit_frame(input)
    }

    fn collect(&mut self, wait: bool) -> Result<Vec<RawFeatures>, VmafError> {
        self.dev.make_current().map_err(be)?;
        if wait {
            self.drain()?;
        } else {
            while self.retire_one(false)? {}
        }
        Ok(std::mem::take(&mut self.ready))
    }

    fn flush(&mut self) -> Result<Vec<RawFeatures>, VmafError> {
        let out = self.collect(true)?;
        self.prev_slot = None;
        self.prev_prev_slot = None;
        Ok(out)
    }

    fn reads_device_memory(&self) -> bool {
        true
    }

    fn input_counts(&self) -> InputCounts {
        self.counts
    }

    fn reset(&mut self) -> Result<(), VmafError> {
        self.dev.make_current().map_err(be)?;
        for slot in &mut self.slots {
            slot.stream.synchronize().map_err(be)?;
            slot.flight = None;
        }
        self.order.clear();
        self.ready.clear();
        self.prev_slot = None;
        self.prev_prev_slot = None;
        Ok(())
    }
}
