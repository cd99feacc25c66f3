//! The HIP feature backend: VMAF's integer extractors as kernels, with a
//! ring of per-frame slots on streams owned by this backend.
//!
//! Per frame, on its slot's stream: upload luma (and chroma where an
//! extractor reads it) from pinned memory, launch every GPU twin
//! the plan asks for (`features/`, each through [`GpuExtractor`], in the
//! plan's order), then one read-back of their integer sums into pinned
//! memory. The float finish (log-domain ratios, cube roots, model) runs on
//! the CPU with the very functions the CPU engine uses, so the GPU
//! reproduces the CPU's numbers exactly when its integer sums are equal.
//! This file names no extractor.
//!
//! Slots are reused in order: frame *j* takes slot *j mod N* once frames up
//! to *j − N + lag* are retired (an extractor that reads the reference of
//! earlier frames reads slot *j mod N*'s until then). Upload of frame *j + 1* overlaps the kernels of
//! frame *j*; the caller blocks only when the ring is full.

#![forbid(unsafe_code)]

use super::fault;
use super::scale::{self, DeviceScaler};
use super::shared_reference::{
    ReferenceFrame, ReferenceLayout, ReferenceWorkDone, SharedReference, Taken,
};
use super::twins::{device_kernels, extractors_for, plan_kernel_sets};
use crate::core::picture::{DevicePlane, Planes};
use crate::core::{
    FeatureBackend, FrameInput, InputCounts, KeepAlive, Picture, RawFeatures, VmafError,
};
use crate::extractors::plan::Plan;
use crate::hip::twin::{
    Earlier, Frame, Geometry, GpuExtractor, Kernels, MAX_WIDTH, ReferenceWork, Retired, blocks,
};
use crate::hip::{
    Arg, Device, DeviceBuffer, Event, HipError, HostRegistration, PinnedBuffer, PinnedHostMem,
    Runtime, Stream, Vendor, pinned_owner, read_u64s, u16_bytes,
};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

/// How to open the backend.
#[derive(Clone, Debug)]
pub struct HipOptions {
    pub vendor: Vendor,
    pub device_id: usize,
    /// Frame slots in the ring (at least 3); 0 picks 8 for the first
    /// backend open on the device in this process, and 3 (4 when the plan
    /// has an extractor whose frames take longer, `Plan::slow_on_gpu`)
    /// for each further one: several streams keep the GPU busy together, and each
    /// slot costs device memory (two pictures and every extractor's
    /// scratch), so many streams share one GPU (docs/PERFORMANCE.md).
    pub ring: usize,
    /// The reference shared with the other renditions of a ladder: frames
    /// given with the same `FrameInput::reference_id` are uploaded, and
    /// the extractors' work on the reference alone done, once.
    pub shared_reference: Option<SharedReference>,
    /// A device opened from a program's own context
    /// ([`OpenedDevice::with_kernels`]), used instead of `vendor` and
    /// `device_id`: pictures in that program's GPU memory are read in place.
    pub device: Option<OpenedDevice>,
}

impl Default for HipOptions {
    fn default() -> Self {
        Self {
            vendor: Vendor::Auto,
            device_id: 0,
            ring: 0,
            shared_reference: None,
            device: None,
        }
    }
}

/// A device with the engine's kernels loaded in its context.
#[derive(Clone)]
pub struct OpenedDevice {
    pub device: Arc<Device>,
    kernels: Arc<Kernels>,
}

impl OpenedDevice {
    /// `device` with the engine's kernel sets, each compiled (or taken
    /// from the kernel cache) and loaded into its context when a backend
    /// first needs it.
    pub fn with_kernels(device: Arc<Device>) -> Self {
        let kernels = Arc::new(device_kernels(&device));
        OpenedDevice { device, kernels }
    }
}

impl std::fmt::Debug for OpenedDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "OpenedDevice({}, {})",
            self.device.info.name, self.device.info.arch
        )
    }
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
    let kernels = Arc::new(device_kernels(&dev));
    map.insert(key, (dev.clone(), kernels.clone()));
    Ok((dev, kernels))
}

/// The device a new `HipBackend` would open for `vendor` and `ordinal`,
/// opened (with its kernels) once per process: for callers that need the
/// device before a backend exists (the element answers GStreamer's context
/// queries before it starts).
pub fn shared_device(vendor: Vendor, ordinal: usize) -> Result<Arc<Device>, HipError> {
    open_device(vendor, ordinal).map(|(dev, _)| dev)
}

fn be(e: HipError) -> VmafError {
    VmafError::Backend(format!("HIP: {e}"))
}

/// What depends on the stream's geometry: the pictures, the extractor
/// twins for them, and where each one's sums and extra bytes lie in a
/// frame's read-back.
struct Layout {
    geo: Geometry,
    extractors: Vec<Box<dyn GpuExtractor>>,
    /// Per extractor: its first u64 in the sums, and its first byte after
    /// them in the read-back.
    sums_at: Vec<usize>,
    extra_at: Vec<usize>,
    /// u64 sums of all extractors (at least one), and read-back bytes.
    sum_words: usize,
    result_bytes: usize,
    /// A ladder's reference frame for this geometry and these extractors.
    reference: ReferenceLayout,
}

impl Layout {
    fn new(dev: &Arc<Device>, geo: Geometry, extractors: Vec<Box<dyn GpuExtractor>>) -> Layout {
        let (mut sums_at, mut extra_at) = (Vec::new(), Vec::new());
        let mut words = 0;
        for e in &extractors {
            sums_at.push(words);
            words += e.sum_words();
        }
        let sum_words = words.max(1);
        let mut bytes = sum_words * 8;
        for e in &extractors {
            extra_at.push(bytes);
            bytes += e.extra_bytes();
        }
        let reference = ReferenceLayout::new(
            dev,
            geo.planes.iter().map(|&(w, h)| w * h * geo.bps).collect(),
            extractors.iter().map(|e| e.reference_buffers()).collect(),
        );
        Layout {
            geo,
            extractors,
            reference,
            sums_at,
            extra_at,
            sum_words,
            result_bytes: bytes,
        }
    }

    /// How many frames back any extractor reads the reference (at least 1).
    fn lag(&self) -> u64 {
        self.extractors
            .iter()
            .map(|e| e.frames_back())
            .max()
            .unwrap_or(0)
            .max(1) as u64
    }

    /// Profiling stages in stream order: the upload, each extractor, the
    /// read-back.
    fn stages(&self) -> Vec<&'static str> {
        let mut v = vec!["upload"];
        v.extend(self.extractors.iter().map(|e| e.stage()));
        v.push("readback");
        v
    }
}

/// Device memory and sync objects of one frame in flight (the extractors
/// keep their own scratch per slot).
struct Slot {
    stream: Stream,
    uploaded: Event,
    done: Event,
    /// Packed pictures for inputs that are not already in pinned memory.
    staging: PinnedHostMem,
    /// Uploaded planes: the reference's (`Geometry::planes`), then the
    /// distorted picture's.
    pix: Vec<DeviceBuffer>,
    /// The ladder's reference frame this slot's frame reads instead of its
    /// own reference planes (`shared_reference.rs`).
    reference: Option<Arc<ReferenceFrame>>,
    /// The extractors' integer sums on the device.
    sums: DeviceBuffer,
    /// The read-back: the sums, then the extractors' extra bytes.
    result: PinnedHostMem,
    flight: Option<InFlight>,
    /// Events between stages, recorded only while profiling.
    marks: Vec<Event>,
}

impl Slot {
    /// The uploaded planes (`n` of them) of the reference (`side` 0: the
    /// ladder's, where this frame shares it) or of the distorted picture (1).
    fn picture(&self, side: usize, n: usize) -> &[DeviceBuffer] {
        match (&self.reference, side) {
            (Some(r), 0) => &r.buffers().planes,
            _ => &self.pix[side * n..(side + 1) * n],
        }
    }
}

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
    /// What each extractor's launch returned (false: not launched).
    computed: Vec<bool>,
    profiled: bool,
    /// What keeps the input memory alive and unwritten: released as soon
    /// as the frame's uploads are done (`release_uploaded_inputs`), not
    /// when the frame retires.
    inputs: Option<Inputs>,
}

/// VMAF's per-frame features on a GPU.
pub struct HipBackend {
    dev: Arc<Device>,
    kernels: Arc<Kernels>,
    /// How this backend's kernels were obtained (compiled now, or from the
    /// disk cache).
    compile_note: String,
    plan: Plan,
    ring: usize,
    layout: Option<Layout>,
    slots: Vec<Slot>,
    /// Slot of the next frame.
    next_slot: usize,
    /// Frames in flight, oldest first: (index, slot).
    order: VecDeque<(u64, usize)>,
    /// Slots holding the previous reference and the one before (the
    /// extractors that read earlier frames, `GpuExtractor::frames_back`).
    prev_slot: Option<usize>,
    prev_prev_slot: Option<usize>,
    /// Have every extractor pool on the host what it can pool on the device.
    host_pooling: bool,
    ready: Vec<RawFeatures>,
    /// Page-lock kept host memory in place instead of staging it (NVIDIA;
    /// `VMAFHIP_REGISTER_HOST=0` turns it off).
    register_host: bool,
    /// How the input planes got here.
    counts: InputCounts,
    profiling: bool,
    /// Per stage (`Layout::stages`): total milliseconds and frames, while profiling.
    stage_ms: Vec<f64>,
    profiled_frames: u64,
    /// The fault `VMAFHIP_FAULT` injects (tests only; `fault.rs`).
    fault: fault::Injector,
    /// Scales distorted pictures of another size to the reference's
    /// (`Plan::scale`), made for the size last seen.
    scaler: Option<DeviceScaler>,
    /// The ladder this backend is a rendition of.
    share: Option<SharedReference>,
}

impl HipBackend {
    /// The device memory this backend holds, by what it holds: the uploaded
    /// planes, the sums and each extractor's scratch (summed over the ring),
    /// the extractors' tables for the picture size, and the ring's length.
    /// Empty before the first frame. The context and the compiled kernels,
    /// shared by every backend on the device, are not in it.
    pub fn memory_breakdown(&self) -> (Vec<(&'static str, usize)>, usize) {
        let Some(l) = &self.layout else {
            return (Vec::new(), 0);
        };
        let n = self.slots.len();
        let sum = |v: &[DeviceBuffer]| v.iter().map(DeviceBuffer::bytes).sum::<usize>();
        let mut out = vec![
            (
                "uploaded planes (reference and distorted)",
                self.slots.iter().map(|s| sum(&s.pix)).sum(),
            ),
            (
                "feature sums",
                self.slots.iter().map(|s| s.sums.bytes()).sum(),
            ),
        ];
        out.extend(
            l.extractors
                .iter()
                .map(|e| (e.memory(), n * e.slot_bytes())),
        );
        if let Some(sc) = &self.scaler {
            out.push(("scaling renditions", n * sc.slot_bytes()));
        }
        out.push((
            "tables for the picture size",
            l.extractors.iter().map(|e| e.table_bytes()).sum(),
        ));
        out.retain(|p| p.1 > 0);
        (out, n)
    }

    /// Device bytes of one slot of `l` (pinned host memory not included).
    fn slot_bytes(l: &Layout, slot: &Slot) -> usize {
        let pix: usize = slot.pix.iter().map(DeviceBuffer::bytes).sum();
        pix + slot.sums.bytes() + l.extractors.iter().map(|e| e.slot_bytes()).sum::<usize>()
    }

    /// Backends live on this one's device in this process, this one included.
    pub fn live_on_device(&self) -> usize {
        live_backends(&self.kernels)
    }

    /// Opens the GPU (`options.vendor`, `options.device_id`) and its kernels.
    pub fn new(plan: Plan, options: &HipOptions) -> Result<Self, HipError> {
        let (dev, kernels) = match &options.device {
            Some(o) => (o.device.clone(), o.kernels.clone()),
            None => open_device(options.vendor, options.device_id)?,
        };
        let compile_note = kernels.ensure(&plan_kernel_sets(&plan))?;
        let register_host = dev.runtime().vendor() == Vendor::Nvidia
            && std::env::var("VMAFHIP_REGISTER_HOST").map_or(true, |v| v != "0");
        // This backend holds `kernels` already: any more are others.
        let others = live_backends(&kernels).saturating_sub(1);
        // Frames in flight: eight for a backend alone on its device (more
        // streams for small kernels to overlap; ten are faster still but
        // take too much memory for sixteen engines: the measurements are in
        // docs/history/performance-notebook.md); when the device is shared, the GPU
        // already overlaps the backends, and three (four with extractors whose
        // frames take longer) keep many elements' memory small.
        let (alone, shared) = if plan.slow_on_gpu() { (8, 4) } else { (8, 3) };
        let ring = match options.ring {
            0 if others == 0 => alone,
            0 => shared,
            n => n.max(3),
        };
        Ok(Self {
            dev,
            kernels,
            compile_note,
            plan,
            ring,
            layout: None,
            slots: Vec::new(),
            next_slot: 0,
            order: VecDeque::new(),
            prev_slot: None,
            prev_prev_slot: None,
            host_pooling: false,
            counts: InputCounts::default(),
            register_host,
            ready: Vec::new(),
            profiling: false,
            stage_ms: Vec::new(),
            profiled_frames: 0,
            fault: fault::Injector::from_env(),
            scaler: None,
            share: options.shared_reference.clone(),
        })
    }

    /// Records device events between stages of every frame from now on (or
    /// stops); the totals restart. Timings of frames that overlap on the
    /// device include each other's time: profile with one frame in flight.
    pub fn set_profiling(&mut self, on: bool) {
        self.profiling = on;
        self.stage_ms.iter_mut().for_each(|ms| *ms = 0.0);
        self.profiled_frames = 0;
    }

    /// Mean device milliseconds per frame of each stage: the upload, each
    /// extractor the plan runs, the read-back (empty before the first frame).
    pub fn stage_times(&self) -> Vec<(&'static str, f64)> {
        let n = self.profiled_frames.max(1) as f64;
        let Some(l) = &self.layout else {
            return Vec::new();
        };
        l.stages()
            .into_iter()
            .zip(&self.stage_ms)
            .map(|(s, ms)| (s, ms / n))
            .collect()
    }

    pub fn device(&self) -> &Arc<Device> {
        &self.dev
    }

    /// Have every extractor pool on the host what it can pool on the device
    /// (`GpuExtractor::set_host_pooling`), as they do on their own only where
    /// the device's exact sum could differ from libvmaf's. For tests.
    pub fn set_host_pooling(&mut self, on: bool) {
        self.host_pooling = on;
        if let Some(l) = &mut self.layout {
            l.extractors.iter_mut().for_each(|e| e.set_host_pooling(on));
        }
    }

    /// How the kernels were obtained (compiled now, or from the disk cache).
    pub fn compile_note(&self) -> &str {
        &self.compile_note
    }

    /// The layout and the ring of slots for `pic`'s geometry.
    fn setup(&mut self, pic: &Picture<'_>) -> Result<(), VmafError> {
        let (w, h) = (pic.width, pic.height);
        if w > MAX_WIDTH {
            return Err(VmafError::Unsupported(format!(
                "{w} samples wide: the HIP backend takes at most {MAX_WIDTH} (use backend=cpu)"
            )));
        }
        let mut planes = vec![(w, h)];
        if self.plan.reads_chroma()
            && let Some(c) = pic.format.chroma_size(w, h)
        {
            planes.push(c);
            planes.push(c);
        }
        let geo = Geometry {
            w,
            h,
            bpc: pic.bpc,
            format: pic.format,
            bps: if pic.bpc == 8 { 1 } else { 2 },
            planes,
        };
        self.dev.make_current().map_err(be)?;
        // Free the previous geometry's memory before taking the new one's.
        self.slots.clear();
        self.layout = None;
        let mut extractors = extractors_for(&self.plan, &self.dev, &geo)?;
        extractors
            .iter_mut()
            .for_each(|e| e.set_host_pooling(self.host_pooling));
        let mut layout = Layout::new(&self.dev, geo, extractors);
        self.stage_ms = vec![0.0; layout.stages().len()];
        let mut slots: Vec<Slot> = Vec::with_capacity(self.ring);
        while slots.len() < self.ring {
            if slots.len() == 1 {
                // Every slot is the size of the first: refuse now, naming the
                // need, rather than fail part-way on a device that is too small.
                let (free, _) = self.dev.memory_info().map_err(be)?;
                if (self.ring - 1) * Self::slot_bytes(&layout, &slots[0]) > free {
                    return Err(self.out_of_memory(&layout, &slots, None));
                }
            }
            match self.new_slot(&mut layout) {
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
                let each = Self::slot_bytes(l, s);
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
        let held: usize = slots.iter().map(|s| Self::slot_bytes(l, s)).sum();
        let (free, total) = match self.dev.memory_info() {
            Ok(m) => m,
            Err(e) => return be(e),
        };
        VmafError::Backend(format!(
            "HIP: GPU out of memory for {}x{} {}-bit frames: {needs}, and the device ({}) has {} MiB free of {} MiB; \
             free GPU memory, measure a smaller picture, or use backend=cpu",
            l.geo.w,
            l.geo.h,
            l.geo.bpc,
            self.dev.info.name,
            mib(free + held),
            mib(total)
        ))
    }

    /// One more ring slot: its planes, sums, read-back and events, and every
    /// extractor's scratch for it.
    fn new_slot(&self, l: &mut Layout) -> Result<Slot, HipError> {
        let dev = &self.dev;
        let g = &l.geo;
        let mut pix = Vec::new();
        let mut staging_len = 0;
        for side in ["reference", "distorted"] {
            for &(pw, ph) in &g.planes {
                pix.push(DeviceBuffer::new(dev, pw * ph * g.bps, side)?);
                staging_len += pw * ph * g.bps;
            }
        }
        for e in &mut l.extractors {
            e.add_slot(dev)?;
        }
        Ok(Slot {
            stream: Stream::new(dev)?,
            uploaded: Event::new(dev)?,
            done: Event::blocking(dev)?,
            staging: PinnedHostMem::new(dev, staging_len)?,
            pix,
            reference: None,
            sums: DeviceBuffer::new(dev, l.sum_words * 8, "feature sums")?,
            result: PinnedHostMem::new(dev, l.result_bytes)?,
            flight: None,
            marks: (0..=l.stages().len())
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
        let slot_count = self.plan.slot_count();
        let slot = &mut self.slots[s];
        if block && alone {
            // Alone on the device, the GPU is the bound and a frame retires
            // every few hundred microseconds: poll, so that the next frame's
            // work is queued without a thread's wake-up in between (sleeping
            // here measurably slowed a lone engine; docs/history/performance-notebook.md).
            while !slot.done.query().map_err(be)? {
                std::hint::spin_loop();
            }
        } else if block {
            // Sharing the device, wait asleep (`done` is a blocking-sync
            // event): a spinning wait takes a core from the sources that
            // feed the other elements (docs/PERFORMANCE.md measures both).
            slot.done.synchronize().map_err(be)?;
        } else if !slot.done.query().map_err(be)? {
            return Ok(false);
        }
        self.order.pop_front();
        let f = slot.flight.take().ok_or_else(|| {
            VmafError::Backend(format!("HIP: frame {index} lost its slot record"))
        })?;
        if f.profiled {
            for (k, ms) in self.stage_ms.iter_mut().enumerate() {
                *ms +=
                    f64::from(Event::elapsed_ms(&slot.marks[k], &slot.marks[k + 1]).map_err(be)?);
            }
            self.profiled_frames += 1;
        }
        let layout = self
            .layout
            .as_mut()
            .expect("slots exist only with a layout");
        let raw = finish(layout, (s, slot_count), slot, &f)?;
        self.ready.push(raw);
        Ok(true)
    }

    /// The scaler for this pair's distorted picture when it is of another
    /// size than the reference (made again, after the frames in flight are
    /// through, when that size changes); none when the sizes agree.
    fn ensure_scaler(&mut self, input: &FrameInput<'_>) -> Result<(), VmafError> {
        let (r, d) = (input.reference, input.distorted);
        let Some(method) = crate::core::scale::method_for(self.plan.scale, r, d)? else {
            return Ok(());
        };
        let planes = self.layout.as_ref().map_or(1, |l| l.geo.planes.len());
        let (from, to) = ((d.width, d.height), (r.width, r.height));
        if self
            .scaler
            .as_ref()
            .is_some_and(|s| s.fits((method, (d.format, d.bpc)), from, to, (planes, self.ring)))
        {
            return Ok(());
        }
        self.drain()?;
        self.scaler = None;
        let scaler = DeviceScaler::new(
            &self.dev,
            method,
            (d.format, d.bpc),
            from,
            to,
            planes,
            self.ring,
        )?;
        // A rendition larger than the reference is staged at its own size.
        if let Some(l) = &self.layout {
            let bps = l.geo.bps;
            let need: usize = (0..planes)
                .map(|p| {
                    (l.geo.planes[p].0 * l.geo.planes[p].1
                        + scaler.source_size(p).0 * scaler.source_size(p).1)
                        * bps
                })
                .sum();
            for slot in &mut self.slots {
                if slot.staging.as_ref().len() < need {
                    slot.staging = PinnedHostMem::new(&self.dev, need).map_err(be)?;
                }
            }
        }
        self.scaler = Some(scaler);
        Ok(())
    }

    /// One frame onto the GPU: take its ring slot, upload its planes,
    /// launch every extractor the plan asks for, read the sums back, and
    /// record what is in flight.
    fn submit_frame(&mut self, input: FrameInput<'_>) -> Result<(), VmafError> {
        self.release_uploaded_inputs()?;
        let s = self.take_slot(input.index)?;
        // Counted before anything else clones the kernels' Arc.
        let live = live_backends(&self.kernels);
        self.mark(s, 0)?;
        let new_reference = self.take_reference(s, &input)?;
        let upload_reference = new_reference.is_some() || self.slots[s].reference.is_none();
        let held = self.upload(s, &input, live, upload_reference)?;
        if let Some(frame) = new_reference {
            self.launch_reference_work(s, &frame, input.scored)?;
        }
        if input.scaled() {
            self.scale_distorted(s)?;
        }
        let slot = &self.slots[s];
        slot.stream.record(&slot.uploaded).map_err(be)?;
        self.mark(s, 1)?;
        let computed = self.launch_features(s, &input)?;
        self.read_back(s)?;
        self.slots[s].flight = Some(InFlight {
            index: input.index,
            scored: input.scored,
            computed,
            profiled: self.profiling,
            // Nothing to hold (staged or device-copied input without a
            // keep-alive): no event to poll for it later.
            inputs: (!held.pinned.is_empty() || input.keep.is_some()).then_some(Inputs {
                _registered: held.registered,
                _pinned: held.pinned,
                _keep: input.keep,
            }),
        });
        self.order.push_back((input.index, s));
        self.prev_prev_slot = self.prev_slot;
        self.prev_slot = Some(s);
        self.next_slot = (s + 1) % self.ring;
        Ok(())
    }

    /// The ring slot of frame `index`, once the frames that still need it
    /// are retired. Frame j takes slot j mod N once frames ≤ j − N + lag are
    /// retired (frame j − N + lag reads slot j mod N's reference: lag is how
    /// far back an extractor reads, `GpuExtractor::frames_back`).
    fn take_slot(&mut self, index: u64) -> Result<usize, VmafError> {
        let ring = self.ring as u64;
        let lag = self.layout.as_ref().map_or(1, Layout::lag);
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
    fn upload(
        &mut self,
        s: usize,
        input: &FrameInput<'_>,
        live: usize,
        upload_reference: bool,
    ) -> Result<Held, VmafError> {
        let l = &self.layout.as_ref().expect("set up before submitting").geo;
        let slot = &self.slots[s];
        let st = &slot.stream;
        let mut held = Held::default();
        let mut staged = Vec::new(); // (plane, side, offset in the staging buffer)
        let mut staged_bytes = 0usize;
        let mut counts = self.counts;
        // Kept host memory of a whole plane or more is page-locked where it
        // lies and read by DMA in place, rather than staged (NVIDIA) — only
        // while this backend is alone on the device: page-locking serialises
        // in the driver, so one stream gains and sixteen at once lose (raw
        // log docs/history/device-runs/2026-11-23-gpu-input-pipelines-h100.txt,
        // run 5).
        let register = self.register_host && input.keep.is_some() && live == 1;
        let scaled = input.scaled();
        for p in 0..l.planes.len() {
            for (side, pic) in [input.reference, input.distorted].into_iter().enumerate() {
                if side == 0 && !upload_reference {
                    continue;
                }
                let (dst, (pw, ph)) = self.upload_target(s, p, side, scaled);
                let row = pw * l.bps;
                if let Planes::Device(planes) = &pic.planes {
                    // GPU memory of this context: one copy on the device into
                    // the ring, which keeps the reference for later frames
                    // anyway, so that upstream gets its buffer back at once.
                    let src = planes[p].as_ref().expect("validated picture");
                    if src.interleaved || src.msb_shift > 0 {
                        self.unpack(st, src, dst, (pw, ph), l.bps)?;
                    } else {
                        st.copy_2d_from_device(dst, 0, row, src.ptr, src.bytes, src.pitch, row, ph)
                            .map_err(be)?;
                    }
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

    /// A plane in GPU memory that is not plain samples into `dst`, packed:
    /// NV12's interleaved chroma split, P010's planes split and shifted down.
    fn unpack(
        &self,
        st: &Stream,
        src: &DevicePlane,
        dst: &DeviceBuffer,
        (w, h): (usize, usize),
        bps: usize,
    ) -> Result<(), VmafError> {
        let step = if src.interleaved { 2 } else { 1 };
        let reach = (h.max(1) - 1) * src.pitch + ((w.max(1) - 1) * step + 1) * bps;
        let kernels = self.kernels.get::<scale::Kernels>();
        let kernel = match (bps, src.interleaved, src.msb_shift) {
            (1, true, 0) => Some(&kernels.split8),
            (2, _, shift) if shift < 16 => Some(&kernels.unpack16),
            _ => None,
        };
        let Some(kernel) = kernel.filter(|_| reach <= src.bytes && dst.bytes() >= w * h * bps)
        else {
            return Err(VmafError::InvalidPicture(format!(
                "a {w}x{h} plane of {bps}-byte samples in GPU memory (interleaved: {}, shifted by {}; {} bytes mapped, pitch {}) cannot be unpacked",
                src.interleaved, src.msb_shift, src.bytes, src.pitch
            )));
        };
        let mut args = vec![
            Arg::Foreign(src.ptr),
            Arg::I32(src.pitch as i32),
            Arg::I32(w as i32),
            Arg::I32(h as i32),
        ];
        if bps == 2 {
            args.extend([Arg::I32(step as i32), Arg::I32(i32::from(src.msb_shift))]);
        }
        args.push(Arg::Buf(dst, 0));
        st.launch(kernel, (blocks(w), h as u32, 1), (256, 1, 1), 0, &args)
            .map_err(be)
    }

    /// The ladder's reference frame for slot `s`'s frame, into the slot
    /// (none when this backend has no ladder, or for a frame without a
    /// reference number: a replay after a failover). Returns it when it is
    /// new, for this backend to upload and work on; when another backend
    /// has, the slot's stream waits for that work.
    fn take_reference(
        &mut self,
        s: usize,
        input: &FrameInput<'_>,
    ) -> Result<Option<Arc<ReferenceFrame>>, VmafError> {
        // The frame this slot held goes first: its memory may serve now.
        self.slots[s].reference = None;
        let (Some(share), Some(id), Some(layout)) = (
            &self.share,
            input.reference_id,
            self.layout.as_ref().map(|l| &l.reference),
        ) else {
            return Ok(None);
        };
        let slot = &mut self.slots[s];
        match share
            .take(&self.dev, layout, (id, input.scored))
            .map_err(be)?
        {
            Taken::Done(frame) => {
                slot.stream.wait(&frame.buffers().done).map_err(be)?;
                slot.reference = Some(frame);
                Ok(None)
            }
            Taken::New(frame) => {
                slot.reference = Some(frame.clone());
                Ok(Some(frame))
            }
        }
    }

    /// The extractors' work on the reference alone of a ladder's new
    /// reference frame (uploaded into it on slot `s`'s stream), then its
    /// event, and the frame published for the other renditions.
    fn launch_reference_work(
        &self,
        s: usize,
        frame: &Arc<ReferenceFrame>,
        scored: bool,
    ) -> Result<(), VmafError> {
        let l = self.layout.as_ref().expect("set up before submitting");
        let (stream, b) = (&self.slots[s].stream, frame.buffers());
        // The earlier frames the work may read: the ladder's ones only, so
        // that another backend can tell whether they are its own too.
        let back = [self.prev_slot, self.prev_prev_slot];
        let history = history(&self.slots, back);
        let mut earlier = earlier_frames(&self.slots, back, l.geo.planes.len());
        for (e, h) in earlier.iter_mut().zip(history) {
            *e = e.filter(|_| h.is_some());
        }
        let mut ran = Vec::with_capacity(b.twins.len());
        for (e, out) in l.extractors.iter().zip(&b.twins) {
            let mut done = false;
            if !out.is_empty() && (scored || e.every_frame()) {
                let w = ReferenceWork {
                    kernels: &self.kernels,
                    geo: &l.geo,
                    stream,
                    reference: &b.planes,
                    earlier,
                    out,
                };
                done = e.launch_reference(&w).map_err(be)?;
            }
            ran.push(done);
        }
        stream.record(&b.done).map_err(be)?;
        if let Some(share) = &self.share {
            share.publish(frame, ReferenceWorkDone { ran, history });
        }
        Ok(())
    }

    /// Where plane `p` of `side` (0 reference, 1 distorted) of slot `s` is
    /// uploaded, and its size: the slot's plane, or, for a distorted
    /// picture to be scaled, the scaler's buffer at the rendition's size.
    fn upload_target(
        &self,
        s: usize,
        p: usize,
        side: usize,
        scaled: bool,
    ) -> (&DeviceBuffer, (usize, usize)) {
        let planes = &self
            .layout
            .as_ref()
            .expect("set up before submitting")
            .geo
            .planes;
        match &self.scaler {
            Some(sc) if scaled && side == 1 => (sc.source(s, p), sc.source_size(p)),
            _ => (&self.slots[s].picture(side, planes.len())[p], planes[p]),
        }
    }

    /// Scales slot `s`'s uploaded rendition into its distorted planes, on
    /// its stream after the uploads.
    fn scale_distorted(&self, s: usize) -> Result<(), VmafError> {
        let sc = self.scaler.as_ref().expect("made for a scaled pair");
        let slot = &self.slots[s];
        let planes = self.layout.as_ref().map_or(0, |l| l.geo.planes.len());
        for p in 0..planes {
            sc.launch(
                self.kernels.get::<scale::Kernels>(),
                &slot.stream,
                s,
                p,
                &slot.picture(1, planes)[p],
            )
            .map_err(be)?;
        }
        Ok(())
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
        let scaled = input.scaled();
        let sizes: Vec<(usize, usize)> = staged
            .iter()
            .map(|&(p, side, _)| self.upload_target(s, p, side, scaled).1)
            .collect();
        let l = &self.layout.as_ref().expect("set up before submitting").geo;
        let slot = &mut self.slots[s];
        let mut dst_all: &mut [u8] = slot.staging.as_mut();
        let mut jobs: Vec<(&mut [u8], &[u8], usize, usize)> = Vec::new(); // (dst, src, pitch, row)
        let mut at = 0usize;
        for (&(p, side, off), &(pw, ph)) in staged.iter().zip(&sizes) {
            let pic = if side == 0 {
                input.reference
            } else {
                input.distorted
            };
            let (bytes, pitch) = plane_bytes(pic, p);
            let row = pw * l.bps;
            let (_, rest) = std::mem::take(&mut dst_all).split_at_mut(off - at);
            let (dst, rest) = rest.split_at_mut(row * ph);
            dst_all = rest;
            at = off + row * ph;
            jobs.push((dst, bytes, pitch, row));
        }
        super::staging::stage_copy(jobs, staged_bytes, live);
        let slot = &self.slots[s];
        for (&(p, side, off), &(pw, ph)) in staged.iter().zip(&sizes) {
            let row = pw * l.bps;
            let (dst, _) = self.upload_target(s, p, side, scaled);
            slot.stream
                .upload_2d(dst, 0, row, slot.staging.shared(), off, row, row, ph)
                .map_err(be)?;
        }
        Ok(())
    }

    /// Every extractor's launches for slot `s`, in stream order, each
    /// followed by its profiling mark: on scored frames all of them, on the
    /// frames `subsample` skips those that run on every frame.
    /// Returns what each launch returned (false: not launched).
    fn launch_features(
        &mut self,
        s: usize,
        input: &FrameInput<'_>,
    ) -> Result<Vec<bool>, VmafError> {
        let l = self.layout.as_mut().expect("set up before submitting");
        let slot = &self.slots[s];
        slot.stream
            .memset(&slot.sums, 0, l.sum_words * 8, 0)
            .map_err(be)?;
        let n = l.geo.planes.len();
        let back = [self.prev_slot, self.prev_prev_slot];
        let history = history(&self.slots, back);
        let work = slot.reference.as_ref().and_then(|r| r.work());
        let mut computed = Vec::with_capacity(l.extractors.len());
        for (i, e) in l.extractors.iter_mut().enumerate() {
            let ran = if input.scored || e.every_frame() {
                let f = Frame {
                    kernels: &self.kernels,
                    geo: &l.geo,
                    slot: s,
                    stream: &slot.stream,
                    pictures: [0, 1].map(|side| slot.picture(side, n)),
                    earlier: earlier_frames(&self.slots, back, n),
                    shared: work
                        .filter(|w| shares(w, i, e.frames_back(), history))
                        .and(slot.reference.as_ref())
                        .map(|r| &r.buffers().twins[i][..]),
                    sums: &slot.sums,
                    sums_at: l.sums_at[i],
                    result: &slot.result,
                    extra_at: l.extra_at[i],
                    input,
                };
                e.launch(&f).map_err(be)?
            } else {
                false
            };
            computed.push(ran);
            if self.profiling {
                slot.stream.record(&slot.marks[2 + i]).map_err(be)?;
            }
        }
        Ok(computed)
    }

    /// The sums read back into slot `s`'s pinned result, and its done event.
    fn read_back(&self, s: usize) -> Result<(), VmafError> {
        let slot = &self.slots[s];
        let l = self.layout.as_ref().expect("set up before submitting");
        slot.stream
            .download(slot.result.shared(), 0, &slot.sums, 0, l.sum_words * 8)
            .map_err(be)?;
        self.mark(s, l.stages().len())?;
        slot.stream.record(&slot.done).map_err(be)
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

/// The earlier frames of slots `back` (1 and 2 frames back), `n` planes a
/// picture.
fn earlier_frames(slots: &[Slot], back: [Option<usize>; 2], n: usize) -> [Option<Earlier<'_>>; 2] {
    back.map(|k| {
        k.map(|p| Earlier {
            pictures: [0, 1].map(|side| slots[p].picture(side, n)),
            uploaded: &slots[p].uploaded,
        })
    })
}

/// The ladder's numbers of the reference frames in slots `back` (none for
/// a frame that is not the ladder's).
fn history(slots: &[Slot], back: [Option<usize>; 2]) -> [Option<u64>; 2] {
    back.map(|k| k.and_then(|p| slots[p].reference.as_ref().map(|r| r.id())))
}

/// Whether extractor `i`, which reads `frames_back` frames back, may use
/// the ladder's work `w` on a backend whose earlier frames are `history`:
/// the work ran, on the same earlier frames.
fn shares(w: &ReferenceWorkDone, i: usize, frames_back: usize, history: [Option<u64>; 2]) -> bool {
    w.ran[i] && w.history[..frames_back] == history[..frames_back]
}

/// Planes smaller than this are staged: page-locking costs more than
/// copying them.
const REGISTER_MIN_BYTES: usize = 1 << 20;

/// Backends live on the device whose kernels these are: the per-process
/// table holds one reference to them, each backend (and each backend being
/// opened) another.
fn live_backends(kernels: &Arc<Kernels>) -> usize {
    Arc::strong_count(kernels).saturating_sub(1)
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

/// A retired frame's features: every extractor's finish from its read-back
/// sums and bytes (those that ran on it: all on scored frames, the
/// every-frame ones on the others).
fn finish(
    l: &mut Layout,
    (s, slots): (usize, usize),
    slot: &Slot,
    f: &InFlight,
) -> Result<RawFeatures, VmafError> {
    let bytes = slot.result.as_ref();
    let sums = read_u64s(bytes, l.sum_words);
    let mut out = RawFeatures::new(f.index, f.scored, slots);
    for (i, e) in l.extractors.iter_mut().enumerate() {
        if !(f.scored || e.every_frame()) {
            continue;
        }
        let r = Retired {
            geo: &l.geo,
            slot: s,
            stream: &slot.stream,
            computed: f.computed[i],
            sums: &sums[l.sums_at[i]..l.sums_at[i] + e.sum_words()],
            extra: &bytes[l.extra_at[i]..l.extra_at[i] + e.extra_bytes()],
        };
        e.finish(&r, &mut out).map_err(be)?;
    }
    Ok(out)
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
        self.fault.check(fault::Kind::Launch, input.index)?;
        self.dev.make_current().map_err(be)?;
        let pic = input.reference;
        let changed = match &self.layout {
            None => true,
            Some(Layout { geo: g, .. }) => {
                g.w != pic.width || g.h != pic.height || g.bpc != pic.bpc || g.format != pic.format
            }
        };
        if changed {
            self.drain()?;
            self.fault.check(fault::Kind::Alloc, input.index)?;
            self.setup(pic)?;
        }
        self.ensure_scaler(&input)?;
        self.submit_frame(input)
    }

    fn collect(&mut self, wait: bool) -> Result<Vec<RawFeatures>, VmafError> {
        if let Some(e) = self.fault.lost() {
            return Err(e);
        }
        self.dev.make_current().map_err(be)?;
        if wait {
            self.drain()?;
        } else {
            while self.retire_one(false)? {}
        }
        let ready = std::mem::take(&mut self.ready);
        for r in &ready {
            self.fault.check(fault::Kind::Sync, r.index)?;
        }
        Ok(ready)
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
