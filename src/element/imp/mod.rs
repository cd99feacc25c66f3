//! The `vmafhip` GstVideoAggregator subclass: the GObject glue. What it
//! does is in the modules beside it: `memory` (what the sink pads take),
//! `pairing` (which frames meet), `scoring`, `late_frames`, `aligned` and
//! `properties`.

mod aligned;
mod gaps;
mod late_frames;
mod memory;
mod pairing;
mod passed_over;
mod properties;
mod scoring;

use crate::element::align::Holding;
use crate::element::gpu_input::GpuInputs;
use crate::element::late::{Timed, WaitingRef};
use crate::element::metrics::{Metrics, MetricsServer};
use crate::element::opening::open_engine;
use crate::element::picture::*;
use crate::element::pinned_copy::PinnedCopier;
use crate::element::pinned_pool::PinnedBlocks;
use crate::element::rendition::{Files, Rendition, SegmentEnd};
use crate::element::settings::*;
use crate::gpu::SharedReference;
use crate::hip;
use crate::hip::gst_gpu::GpuMemoryKind;
use crate::vmaf;
use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;
use gst_base::prelude::*;
use gst_base::subclass::prelude::*;
use gst_video::prelude::*;
use gst_video::subclass::prelude::*;
use once_cell::sync::Lazy;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub(super) static CAT: Lazy<gst::DebugCategory> = Lazy::new(|| {
    gst::DebugCategory::new(
        "vmafhip",
        gst::DebugColorFlags::empty(),
        Some("VMAF on HIP"),
    )
});

/// An output frame's timing, for its messages, and its number among the
/// reference frames (None: the frame being aggregated).
#[derive(Clone, Copy)]
struct FrameTiming {
    pts: Option<gst::ClockTime>,
    duration: Option<gst::ClockTime>,
    reference: Option<u64>,
}

impl FrameTiming {
    fn of(outbuf: &gst::BufferRef) -> Self {
        FrameTiming {
            pts: outbuf.pts(),
            duration: outbuf.duration(),
            reference: None,
        }
    }
}

/// The reference frame being aggregated, mapped, and its buffer.
type ReferenceFrame<'a> = (
    &'a gst_video::VideoFrameRef<&'a gst::BufferRef>,
    Option<&'a gst::Buffer>,
);

/// Whether `pad`'s input has ended: its EOS reached the pad (stored at
/// once), or the aggregator has taken it from the pad's queue.
fn has_ended(pad: &gst_video::VideoAggregatorPad) -> bool {
    pad.is_eos() || pad.sticky_event::<gst::event::Eos>(0).is_some()
}

/// The reference frame being aggregated, to wait for its distorted frame:
/// its buffer (copied later if it waits), running time `at`, this output
/// frame's timing and its number `number` among the reference frames.
fn waiting_reference(
    (ref_frame, reference): (&gst_video::VideoFrameRef<&gst::BufferRef>, &gst::Buffer),
    at: gst::ClockTime,
    outbuf: &gst::BufferRef,
    number: u64,
) -> Timed<WaitingRef> {
    Timed {
        at,
        duration: reference.duration(),
        frame: WaitingRef::upstream(
            (reference.clone(), ref_frame.info().clone()),
            outbuf.pts(),
            outbuf.duration(),
            number,
        ),
    }
}

/// A buffer's running time in its pad's segment.
fn running_time(
    pad: &gst_video::VideoAggregatorPad,
    buf: Option<&gst::Buffer>,
) -> Option<gst::ClockTime> {
    let pts = buf?.pts();
    pad.segment()
        .downcast::<gst::ClockTime>()
        .ok()?
        .to_running_time(pts)
}

/// What an input is, as upstream answers the URI query (a file's path for
/// `file://`), else the upstream element's name.
fn input_name(pad: &gst_video::VideoAggregatorPad) -> String {
    let mut q = gst::query::Uri::new();
    if pad.peer_query(&mut q)
        && let Some(uri) = q.uri()
    {
        return match glib::filename_from_uri(&uri) {
            Ok((path, _)) => path.display().to_string(),
            Err(_) => uri.to_string(),
        };
    }
    match pad.peer().and_then(|p| p.parent_element()) {
        Some(e) => format!("{} (no URI upstream)", e.name()),
        None => format!("{} (not linked)", pad.name()),
    }
}

/// What exists between `start` and `stop`: the reference's side, and one
/// [`Rendition`] per distorted input.
struct State {
    settings: Settings,
    /// The first engine's description (`dist_sink`'s), for errors.
    backend: String,
    /// The GPU when the engines compute on one: sink pads propose a pool of
    /// its pinned host memory.
    device: Option<Arc<hip::Device>>,
    /// `dist_sink` first, then the requested pads in the order they came.
    renditions: Vec<Rendition>,
    /// Running time of the reference frame last scored: a live timeout can
    /// hand the aggregator the same reference frame again, which is passed
    /// through but not scored a second time.
    last_ref: Option<gst::ClockTime>,
    /// What the distorted branch's first frame took beyond its deadline,
    /// added to the element's latency (`live`).
    first_frame_delay: gst::ClockTime,
    /// Requested pads released (their names are not used again): the
    /// streaming thread may still see one until the aggregator removes it.
    released: Vec<String>,
    /// The reference the renditions' GPU engines share: with more than one
    /// rendition, each reference frame is uploaded, and the work on it
    /// alone done, once (`hip::SharedReference`).
    shared_reference: SharedReference,
    /// Reference frames scored so far: the number the engines know a
    /// frame's reference by.
    references: u64,
    /// False with `VMAFHIP_SHARE_REFERENCE=0`: every rendition does its
    /// reference's work itself (for comparisons).
    share_reference: bool,
}

impl State {
    fn rendition(&mut self, name: &str) -> Option<&mut Rendition> {
        self.renditions.iter_mut().find(|r| r.name == name)
    }
}

pub struct VmafHip {
    ref_pad: gst_video::VideoAggregatorPad,
    dist_pad: gst_video::VideoAggregatorPad,
    settings: Mutex<Settings>,
    state: Mutex<Option<State>>,
    /// GStreamer's GPU memory of the engine's device, when the engine runs
    /// on a GPU and GStreamer's library for it is present (set at start):
    /// the sink pads then also take `memory:CUDAMemory` / `memory:HIPMemory`.
    gpu_input: Mutex<Option<Arc<GpuInputs>>>,
    /// The HIP device the pipeline shares (`gst.hip.device` context), as
    /// GstHip's vendor and device number: the engine's unless `device-id`
    /// is set (`on_shared_device`).
    shared_device: Mutex<Option<(crate::hip::Vendor, u32)>>,
    /// Copies the planes the engine reads of frames in ordinary host memory
    /// into pinned memory in the sink pads' buffer probe, when the engine
    /// computes on a GPU (set at start; `pinned_copy`).
    copier: Mutex<Option<Arc<PinnedCopier>>>,
    /// The number of the next requested `dist_sink_N`.
    next_pad: Mutex<u32>,
    /// The recycled pinned blocks behind the sink pads' pools and copies,
    /// when the engine computes on a GPU (set at start).
    blocks: Mutex<Option<PinnedBlocks>>,
    /// The pipeline is live (the latency query said so).
    live: AtomicBool,
    /// The metrics every rendition feeds and the endpoint that serves
    /// them (`metrics-address`; set at start).
    metrics: Mutex<Option<(Metrics, MetricsServer)>>,
    /// The distorted frames are paired by content (`align` is not off;
    /// set at start).
    aligning: AtomicBool,
    /// Since when a live deadline has passed with no reference frame
    /// (`awaiting_reference`).
    reference_awaited: Mutex<Option<std::time::Instant>>,
}

#[glib::object_subclass]
impl ObjectSubclass for VmafHip {
    const NAME: &'static str = "GstVmafHip";
    type Type = super::VmafHip;
    type ParentType = gst_video::VideoAggregator;

    fn with_class(klass: &Self::Class) -> Self {
        let templ = klass.pad_template("ref_sink").unwrap();
        let ref_pad = gst::PadBuilder::<super::VmafHipPad>::from_template(&templ)
            .build()
            .upcast();
        let templ = klass.pad_template("dist_sink").unwrap();
        let dist_pad = gst::PadBuilder::<super::VmafHipPad>::from_template(&templ)
            .build()
            .upcast();
        Self {
            ref_pad,
            dist_pad,
            settings: Mutex::new(Settings::default()),
            state: Mutex::new(None),
            gpu_input: Mutex::new(None),
            shared_device: Mutex::new(None),
            next_pad: Mutex::new(0),
            copier: Mutex::new(None),
            blocks: Mutex::new(None),
            live: AtomicBool::new(false),
            metrics: Mutex::new(None),
            aligning: AtomicBool::new(false),
            reference_awaited: Mutex::new(None),
        }
    }
}

impl ObjectImpl for VmafHip {
    fn properties() -> &'static [glib::ParamSpec] {
        Self::property_specs()
    }

    fn set_property(&self, _id: usize, value: &glib::Value, pspec: &glib::ParamSpec) {
        self.set_setting(value, pspec)
    }

    fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
        self.setting(pspec)
    }

    fn constructed(&self) {
        self.parent_constructed();
        let obj = self.obj();
        obj.add_pad(&self.ref_pad).unwrap();
        obj.add_pad(&self.dist_pad).unwrap();
    }
}

impl GstObjectImpl for VmafHip {}

impl ElementImpl for VmafHip {
    fn metadata() -> Option<&'static gst::subclass::ElementMetadata> {
        static META: Lazy<gst::subclass::ElementMetadata> = Lazy::new(|| {
            gst::subclass::ElementMetadata::new(
                "VMAF (HIP)",
                "Filter/Analyzer/Video",
                "Netflix VMAF between ref_sink and dist_sink, on the GPU through HIP or on the CPU, bit-exact with libvmaf; passes the reference through",
                "vmafhip developers",
            )
        });
        Some(&*META)
    }

    /// A ladder of requested pads only (`dist_sink` left unlinked): the
    /// unlinked `dist_sink` is ended as the pads become active, so that the
    /// aggregator does not wait for it, and it is not scored.
    fn change_state(
        &self,
        transition: gst::StateChange,
    ) -> Result<gst::StateChangeSuccess, gst::StateChangeError> {
        if transition == gst::StateChange::NullToReady {
            self.ask_for_shared_device();
        }
        let ret = self.parent_change_state(transition)?;
        let requested = self
            .obj()
            .sink_pads()
            .iter()
            .any(|p| p.name().starts_with("dist_sink_"));
        if transition == gst::StateChange::ReadyToPaused && requested && !self.dist_pad.is_linked()
        {
            if let Some(st) = self.state.lock().unwrap().as_mut() {
                st.released.push("dist_sink".into());
                if let Some(i) = st.renditions.iter().position(|r| r.name == "dist_sink") {
                    st.renditions.remove(i).discard();
                }
            }
            gst::info!(CAT, imp = self, "dist_sink is not linked: ending it");
            let pad = self.dist_pad.upcast_ref::<gst::Pad>();
            let _ = pad.send_event(gst::event::StreamStart::new("vmafhip-unlinked-dist-sink"));
            let _ = pad.send_event(gst::event::Segment::new(&gst::FormattedSegment::<
                gst::ClockTime,
            >::new()));
            let _ = pad.send_event(gst::event::Eos::new());
        }
        Ok(ret)
    }

    fn set_context(&self, context: &gst::Context) {
        self.take_context(context);
        self.parent_set_context(context);
    }

    /// A released `dist_sink_%u` ends its rendition: its last frames, its
    /// pooled message (`reason` "released"), its results file and report.
    fn release_pad(&self, pad: &gst::Pad) {
        let name = pad.name();
        if let Some(st) = self.state.lock().unwrap().as_mut() {
            st.released.push(name.to_string());
        }
        if let Err(e) = self.drain_inputs(SegmentEnd::Released, |n| n == name) {
            self.post_error_message(e);
        }
        if let Some(st) = self.state.lock().unwrap().as_mut() {
            st.renditions.retain(|r| r.name != name);
        }
        self.parent_release_pad(pad);
    }

    fn pad_templates() -> &'static [gst::PadTemplate] {
        static TEMPLATES: Lazy<Vec<gst::PadTemplate>> = Lazy::new(|| {
            // System memory, then GStreamer's GPU memories (taken where the
            // engine runs on that GPU: `filter_caps`).
            let formats = || {
                FORMATS
                    .iter()
                    .map(|f| f.parse::<gst_video::VideoFormat>().unwrap())
            };
            // And P010 and P012 (10- and 12-bit decoders' output), whose
            // samples are shifted into place as the frame is read: on the
            // host (`with_picture`), or on the GPU (`device_picture`).
            let formats = || {
                formats().chain([
                    gst_video::VideoFormat::P01010le,
                    gst_video::VideoFormat::P012Le,
                ])
            };
            let mut caps = gst_video::VideoCapsBuilder::new()
                .format_list(formats())
                .build();
            for kind in GpuMemoryKind::ALL {
                caps.merge(
                    gst_video::VideoCapsBuilder::new()
                        .features([kind.caps_feature()])
                        .format_list(formats())
                        .build(),
                );
            }
            vec![
                gst::PadTemplate::with_gtype(
                    "src",
                    gst::PadDirection::Src,
                    gst::PadPresence::Always,
                    &caps,
                    gst_base::AggregatorPad::static_type(),
                )
                .unwrap(),
                gst::PadTemplate::with_gtype(
                    "ref_sink",
                    gst::PadDirection::Sink,
                    gst::PadPresence::Always,
                    &caps,
                    super::VmafHipPad::static_type(),
                )
                .unwrap(),
                gst::PadTemplate::with_gtype(
                    "dist_sink",
                    gst::PadDirection::Sink,
                    gst::PadPresence::Always,
                    &caps,
                    super::VmafHipPad::static_type(),
                )
                .unwrap(),
                // More renditions of an encoding ladder, of any size.
                gst::PadTemplate::with_gtype(
                    "dist_sink_%u",
                    gst::PadDirection::Sink,
                    gst::PadPresence::Request,
                    &caps,
                    super::VmafHipPad::static_type(),
                )
                .unwrap(),
            ]
        });
        TEMPLATES.as_ref()
    }
}

impl AggregatorImpl for VmafHip {
    fn start(&self) -> Result<(), gst::ErrorMessage> {
        self.parent_start()?;
        let settings = self.on_shared_device(self.settings.lock().unwrap().clone());
        let shared_reference = SharedReference::new();
        let vmaf::Opened {
            engine,
            name: backend,
            device,
            warning,
            reads_chroma,
        } = open_engine(&settings, &shared_reference)?;
        gst::info!(
            CAT,
            imp = self,
            "computing VMAF with {backend}, model {}",
            settings.model_filename
        );
        if let Some(w) = warning {
            gst::element_imp_warning!(self, gst::LibraryError::Init, ("{w}"), ["backend=auto"]);
        }
        // GPU memory from upstream, where GStreamer's library for this GPU
        // is present: otherwise system memory only, which always works.
        *self.gpu_input.lock().unwrap() = device.as_ref().and_then(|d| self.open_gpu_input(d));
        let blocks = device.clone().map(PinnedBlocks::new);
        *self.copier.lock().unwrap() = blocks
            .clone()
            .filter(|_| super::pinned_copy::enabled())
            .map(|b| Arc::new(PinnedCopier::new(b, reads_chroma)));
        *self.blocks.lock().unwrap() = blocks;
        // An unwritable results file or report fails now, not at the end of
        // the stream.
        let label = self.dist_pad.property::<Option<String>>("label");
        let mut first = Rendition::new(
            ("dist_sink".into(), label, true),
            Files::default(),
            (engine, backend.clone()),
            &settings,
        )?;
        first.metrics = self.serve_metrics(&settings)?;
        self.aligning
            .store(settings.align != Align::Off, Ordering::Relaxed);
        // A duplicated distorted frame gives a reference frame twice: the
        // renditions' engines then do their reference's work themselves.
        let share_reference = settings.align == Align::Off
            && std::env::var("VMAFHIP_SHARE_REFERENCE").map_or(true, |v| v != "0");
        *self.state.lock().unwrap() = Some(State {
            backend,
            device,
            settings,
            renditions: vec![first],
            last_ref: None,
            first_frame_delay: gst::ClockTime::ZERO,
            released: Vec::new(),
            shared_reference,
            references: 0,
            share_reference,
        });
        self.update_latency();
        Ok(())
    }

    /// Requested pads are named `dist_sink_N` (GstAggregator would name
    /// them `sink_N`): N as asked, or the next number not used yet.
    fn create_new_pad(
        &self,
        templ: &gst::PadTemplate,
        req_name: Option<&str>,
        _caps: Option<&gst::Caps>,
    ) -> Option<gst_base::AggregatorPad> {
        let mut next = self.next_pad.lock().unwrap();
        let asked = req_name
            .and_then(|n| n.strip_prefix("dist_sink_"))
            .and_then(|n| n.parse::<u32>().ok());
        let serial = match asked {
            Some(n) if self.obj().static_pad(&format!("dist_sink_{n}")).is_none() => n,
            _ => *next,
        };
        *next = (*next).max(serial + 1);
        let pad = gst::PadBuilder::<super::VmafHipPad>::from_template(templ)
            .name(format!("dist_sink_{serial}"))
            .build();
        Some(pad.upcast())
    }

    fn stop(&self) -> Result<(), gst::ErrorMessage> {
        for pad in self.obj().sink_pads() {
            if let Some(p) = pad.downcast_ref::<super::VmafHipPad>() {
                p.imp().reset_copies();
                p.imp().forget_arrivals();
            }
        }
        *self.state.lock().unwrap() = None;
        *self.metrics.lock().unwrap() = None;
        *self.gpu_input.lock().unwrap() = None;
        *self.copier.lock().unwrap() = None;
        *self.blocks.lock().unwrap() = None;
        self.parent_stop()
    }

    fn sink_event(&self, pad: &gst_base::AggregatorPad, event: gst::Event) -> bool {
        // (A segment in another format than time never gets here: the pads
        // refuse it, `pad.rs`.)
        if let gst::EventView::CustomDownstreamOob(e) = event.view()
            && e.structure()
                .is_some_and(|s| s.name() == super::INTERRUPTED_EVENT)
        {
            if let Some(st) = self.state.lock().unwrap().as_mut() {
                for r in &mut st.renditions {
                    r.interrupted = true;
                }
            }
            return true;
        }
        self.parent_sink_event(pad, event)
    }

    fn sink_query(&self, pad: &gst_base::AggregatorPad, query: &mut gst::QueryRef) -> bool {
        if let gst::QueryViewMut::AcceptCaps(q) = query.view_mut() {
            self.accept_caps(pad, q);
            return true;
        }
        if self.answer_context(pad, query) {
            return true;
        }
        if let gst::QueryViewMut::Caps(q) = query.view_mut() {
            return self.answer_caps(pad, q);
        }
        self.parent_sink_query(pad, query)
    }

    fn src_query(&self, query: &mut gst::QueryRef) -> bool {
        let answered = self.parent_src_query(query);
        if answered && let gst::QueryViewMut::Latency(q) = query.view_mut() {
            self.live.store(q.result().0, Ordering::Relaxed);
        }
        answered
    }

    fn aggregate(&self, timeout: bool) -> Result<gst::FlowSuccess, gst::FlowError> {
        // Asked here too: a sink that does not sync sends no latency query.
        self.live
            .store(self.obj().latency().is_some(), Ordering::Relaxed);
        if timeout {
            // A live deadline passed: the distorted branch may not have
            // started, or the reference frame is late.
            self.wait_for_first_distorted();
            if self.awaiting_reference() {
                std::thread::sleep(std::time::Duration::from_millis(2));
                return Err(gst_base::AGGREGATOR_FLOW_NEED_DATA);
            }
        }
        let ret = self.parent_aggregate(timeout);
        if ret == Err(gst::FlowError::Eos) {
            self.count_passed_over_at_end();
            self.finish_late()?;
            // Every sink is done: last messages and the pooled score go out before EOS.
            if let Err(e) = self.drain(SegmentEnd::Eos) {
                self.post_error_message(e);
                return Err(gst::FlowError::Error);
            }
        }
        ret
    }

    fn negotiated_src_caps(&self, caps: &gst::Caps) -> Result<(), gst::LoggableError> {
        self.parent_negotiated_src_caps(caps)?;
        // The default late-frame wait follows the reference's frame rate.
        self.update_latency();
        Ok(())
    }

    fn propose_allocation(
        &self,
        pad: &gst_base::AggregatorPad,
        decide_query: Option<&gst::query::Allocation>,
        query: &mut gst::query::Allocation,
    ) -> Result<(), gst::LoggableError> {
        // The parent (GstVideoAggregator) announces GstVideoMeta support.
        self.parent_propose_allocation(pad, decide_query, query)?;
        self.propose_pinned_pool(pad, query)
    }

    fn flush(&self) -> Result<gst::FlowSuccess, gst::FlowError> {
        // A flushing seek ends the segment: report what was measured, start
        // afresh. Frames waiting for late distorted frames are not scored.
        if let Some(p) = self.ref_pad.downcast_ref::<super::VmafHipPad>() {
            p.imp().forget_arrivals();
        }
        for pad in self.distorted_pads() {
            if let Some(p) = pad.downcast_ref::<super::VmafHipPad>() {
                p.imp().take_arrived(true);
            }
        }
        if let Some(st) = self.state.lock().unwrap().as_mut() {
            for r in &mut st.renditions {
                r.pairings.counts.unscored += r.late.clear() as u64;
                // Paired by content afresh: a new search.
                if let Some(t) = r.aligner.take() {
                    r.pairings.counts.unscored += t.held().0 as u64;
                }
                r.last_distorted = None;
            }
        }
        if let Err(e) = self.drain(SegmentEnd::Flush) {
            self.post_error_message(e);
        }
        if let Some(st) = self.state.lock().unwrap().as_mut() {
            for r in &mut st.renditions {
                r.no_frame_warned = false;
                r.late_warned = false;
            }
            st.last_ref = None;
        }
        self.parent_flush()
    }
}

impl VideoAggregatorImpl for VmafHip {
    fn update_caps(&self, caps: &gst::Caps) -> Result<gst::Caps, gst::LoggableError> {
        // The reference passes through unchanged, so src carries its caps.
        match self.ref_pad.current_caps() {
            Some(rc) => {
                let out = rc.intersect(caps);
                if out.is_empty() {
                    return Err(gst::loggable_error!(
                        CAT,
                        "downstream does not accept the reference caps {rc}"
                    ));
                }
                Ok(out)
            }
            None => Ok(caps.clone()),
        }
    }

    fn create_output_buffer(&self) -> Result<Option<gst::Buffer>, gst::FlowError> {
        // No memory of its own: aggregate_frames gives it the reference's.
        Ok(Some(gst::Buffer::new()))
    }

    /// One output frame: the reference passed on, and scored against each
    /// distorted input. Steps: an ended or missing reference; pass it on;
    /// a repeated reference; each input (`score_input`); post the messages.
    fn aggregate_frames(
        &self,
        token: &gst_video::subclass::AggregateFramesToken,
        outbuf: &mut gst::BufferRef,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        let Some(ref_frame) = self.ref_pad.prepared_frame(token) else {
            return self.no_reference_frame(outbuf);
        };
        let reference = self.ref_pad.current_buffer(token);
        if let Some(r) = &reference {
            self.pass_reference_on(r, outbuf)?;
            self.stamp_variable_rate(r, outbuf);
        }
        let (mut msgs, arrived_at) = self.take_passed_over(reference.as_ref())?;
        if self.is_repeated_reference(reference.as_ref(), arrived_at)? {
            self.post_scored(&msgs);
            return Ok(gst::FlowSuccess::Ok);
        }
        let mut result = Ok(());
        let holding = self.holding(self.dist_pad.upcast_ref());
        let thumb = match holding {
            Holding::Aligned { .. } => Some(self.reference_thumb(&ref_frame)?),
            _ => None,
        };
        for pad in self.distorted_pads() {
            match self.ensure_rendition(&pad) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
            let frames = (&ref_frame, reference.as_ref());
            let scored = match (holding, &thumb) {
                (Holding::Aligned { .. }, Some(t)) => self.score_aligned(frames, t, &pad, outbuf),
                (Holding::Late, _) => self.score_late(token, frames, &pad, outbuf),
                _ => self.score_input(token, frames, &pad, outbuf),
            };
            match scored {
                Ok(m) => msgs.extend(m),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.post_scored(&msgs);
        result.map(|()| gst::FlowSuccess::Ok)
    }
}
