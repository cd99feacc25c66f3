//! The sink pads: GstVideoAggregator's pads, except that a buffer in GPU
//! memory of the element's own device is mapped for the device (its plane
//! pointers are device addresses) instead of being downloaded to the host,
//! and that a buffer probe copies the planes the engine reads of a frame in
//! ordinary host memory into pinned memory as it arrives (`pinned_copy`).

use gst::glib;

glib::wrapper! {
    /// `ref_sink` and `dist_sink`.
    pub struct VmafHipPad(ObjectSubclass<imp::VmafHipPad>)
        @extends gst_video::VideoAggregatorPad, gst_base::AggregatorPad, gst::Pad, gst::Object;
}

mod imp {
    use crate::core::align::Thumb;
    use crate::element::align::{Holding, thumb_of_buffer};
    use crate::element::late::{Arrived, Timed};
    use crate::hip::gst_gpu;
    use gst::glib;
    use gst::prelude::*;
    use gst::subclass::prelude::*;
    use gst_base::subclass::prelude::*;
    use gst_video::prelude::*;
    use gst_video::subclass::prelude::*;
    use std::collections::VecDeque;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    #[derive(Default)]
    pub struct VmafHipPad {
        /// A warning about GPU memory we cannot read in place went out.
        warned: AtomicBool,
        /// Frames of GPU memory on another device or in another context
        /// are copied on the GPU into buffers of this pool (of the
        /// engine's device) for the caps it was made for.
        copy_pool: Mutex<Option<(gst::Caps, gst_gpu::FramePool)>>,
        /// Planes copied so, since the element started.
        copied_on_device: AtomicU64,
        /// The video of the pad's current caps, for the buffer probe.
        info: Mutex<Option<(gst::Caps, gst_video::VideoInfo)>>,
        /// `label`: the rendition's name in messages and file names.
        label: Mutex<Option<String>>,
        /// `results-filename`, `report-filename`: where this rendition's
        /// files go, instead of the names made from the element's.
        results_filename: Mutex<Option<String>>,
        report_filename: Mutex<Option<String>>,
        /// Buffers that reached the pad since the last segment ended.
        received: AtomicU64,
        /// The last segment was not in time, and was refused: so are the
        /// buffers after it.
        refused: AtomicBool,
        /// A live reference's frames as they arrived, until the frame
        /// aggregated after them is: those the aggregator let go (they
        /// came after their time) are taken from here
        /// ([`VmafHipPad::take_passed_over`]).
        arrivals: Mutex<VecDeque<Timed<Arrived>>>,
        /// A distorted input's frames, kept out of the aggregator's queue as
        /// they arrive while the element holds late frames (`late`).
        /// Frames taken on arrival (`holding`), with their thumbnails when
        /// the element aligns by content.
        arrived: Mutex<Vec<(Timed<Arrived>, Option<Thumb>)>>,
    }

    impl VmafHipPad {
        /// Planes of GPU memory from elsewhere copied on the GPU since start.
        pub(crate) fn copied_on_device(&self) -> u64 {
            self.copied_on_device.load(Ordering::Relaxed)
        }

        /// A frame in GPU memory of another device or context, copied on
        /// the GPU into a buffer of the engine's device and mapped there
        /// (one warning says so); None where that fails (one warning: the
        /// frame is then downloaded to the host).
        fn copy_on_device(
            &self,
            aggregator: &gst_video::VideoAggregator,
            gpu: &gst_gpu::GstGpu,
            buffer: &gst::Buffer,
            info: &gst_video::VideoInfo,
        ) -> Option<gst_video::VideoFrame<gst_video::video_frame::Readable>> {
            let kind = gpu.kind();
            let whose = if kind == gst_gpu::GpuMemoryKind::Cuda {
                "another CUDA context"
            } else {
                "another HIP device"
            };
            let copied = self.copy_frame_here(gpu, buffer, info);
            let (frame, what) = match copied {
                Ok(frame) => {
                    self.copied_on_device
                        .fetch_add(info.n_planes() as u64, Ordering::Relaxed);
                    (Some(frame), "copied on the GPU for every frame".to_string())
                }
                Err(why) => (
                    None,
                    format!(
                        "downloaded to the host for every frame: the copy on the GPU failed ({why})"
                    ),
                ),
            };
            if !self.warned.swap(true, Ordering::Relaxed) {
                gst::element_warning!(
                    aggregator,
                    gst::StreamError::Format,
                    (
                        "{}: {} from {whose} is {what}; let upstream use vmafhip's device (it answers the {} context query) to read it in place",
                        self.obj().name(),
                        kind.caps_feature(),
                        kind.context_type()
                    ),
                    ["the buffer's memory belongs to a context vmafhip does not run in"]
                );
            }
            frame
        }

        /// `buffer` copied into a frame of the pad's copy pool (made for the
        /// current caps when it has none, or one for other caps), mapped.
        fn copy_frame_here(
            &self,
            gpu: &gst_gpu::GstGpu,
            buffer: &gst::Buffer,
            info: &gst_video::VideoInfo,
        ) -> Result<gst_video::VideoFrame<gst_video::video_frame::Readable>, String> {
            let src = gpu
                .map_frame(buffer, info)
                .ok_or("the frame does not map for the device")?;
            let caps = self.obj().current_caps().ok_or("no caps")?;
            let mut pool = self.copy_pool.lock().unwrap();
            if pool.as_ref().is_none_or(|(c, _)| *c != caps) {
                *pool = Some((caps.clone(), gpu.buffer_pool(&caps, 2)?));
            }
            let copy = gpu.copy_frame(&src, &pool.as_ref().expect("made above").1)?;
            drop(pool);
            gpu.map_frame(&copy, info)
                .ok_or_else(|| "the copy does not map for the device".to_string())
        }

        /// Forgets the copy pool and its count (the element stops).
        pub(crate) fn reset_copies(&self) {
            *self.copy_pool.lock().unwrap() = None;
            self.copied_on_device.store(0, Ordering::Relaxed);
            self.warned.store(false, Ordering::Relaxed);
        }

        /// The frames that arrived before `current` (the buffer being
        /// aggregated) and were never aggregated: the aggregator let them
        /// go; and, where `current` is among those that arrived (a new
        /// frame), its running time in the segment it came in. Those up to
        /// `current` are forgotten; None for `current` takes them all (the
        /// end). Each frame kept is alive, so that no other buffer has its
        /// address.
        pub(in crate::element) fn take_passed_over(
            &self,
            current: Option<&gst::Buffer>,
        ) -> (Vec<Timed<Arrived>>, Option<gst::ClockTime>) {
            let mut arrivals = self.arrivals.lock().unwrap();
            let Some(current) = current else {
                return (arrivals.drain(..).collect(), None);
            };
            let is_current = |t: &Timed<Arrived>| t.frame.0.as_ptr() == current.as_ptr();
            if let Some(i) = arrivals.iter().position(is_current) {
                let passed = arrivals.drain(..i).collect();
                let at = arrivals.pop_front().map(|t| t.at);
                return (passed, at);
            }
            // Not seen arriving (before the pipeline was known to be
            // live, or handed again): those before its time went by.
            let at = self.timed(current).map(|t| t.at);
            let before = arrivals
                .iter()
                .take_while(|t| at.is_some_and(|at| t.at < at))
                .count();
            (arrivals.drain(..before).collect(), None)
        }

        /// Forgets the frames that arrived (a flush, a stop).
        pub(crate) fn forget_arrivals(&self) {
            self.arrivals.lock().unwrap().clear();
        }

        /// Keeps `buf`, a frame of a live reference, as it arrives.
        fn note_arrival(&self, buf: &gst::Buffer) {
            let pad = self.obj();
            let records = pad
                .parent()
                .and_then(|p| p.downcast::<crate::element::VmafHip>().ok())
                .is_some_and(|e| e.imp().records_arrivals(pad.upcast_ref()));
            if records && let Some(t) = self.timed(buf) {
                self.arrivals.lock().unwrap().push_back(t);
            }
        }

        /// The buffers that reached the pad since the last call.
        pub(crate) fn take_received(&self) -> u64 {
            self.received.swap(0, Ordering::Relaxed)
        }

        /// The distorted frames that arrived since the last call, with
        /// any still in the aggregator's queue (queued before the pipeline
        /// was known to be live).
        /// The frames taken on arrival, after those `pop` takes from the
        /// aggregator's queue (queued before they were taken).
        pub(in crate::element) fn take_arrived(
            &self,
            pop: bool,
        ) -> Vec<(Timed<Arrived>, Option<Thumb>)> {
            let mut queued = Vec::new();
            while pop && let Some(b) = self.obj().pop_buffer() {
                queued.extend(self.timed(&b).map(|t| (t, None)));
            }
            let mut arrived = std::mem::take(&mut *self.arrived.lock().unwrap());
            queued.append(&mut arrived);
            queued
        }

        /// The video of the pad's current caps.
        fn video_info(&self) -> Option<gst_video::VideoInfo> {
            let caps = self.obj().current_caps()?;
            let mut cached = self.info.lock().unwrap();
            match &*cached {
                Some((c, info)) if c.as_ptr() == caps.as_ptr() => Some(info.clone()),
                _ => {
                    let info = gst_video::VideoInfo::from_caps(&caps).ok()?;
                    *cached = Some((caps, info.clone()));
                    Some(info)
                }
            }
        }

        /// `buffer` with its running time (by the segment that came before
        /// it) and video; None without a timestamp or caps.
        fn timed(&self, buffer: &gst::Buffer) -> Option<Timed<Arrived>> {
            let segment = self
                .obj()
                .sticky_event::<gst::event::Segment>(0)?
                .segment()
                .downcast_ref::<gst::ClockTime>()?
                .clone();
            Some(Timed {
                at: segment.to_running_time(buffer.pts()?)?,
                duration: buffer.duration(),
                frame: (buffer.clone(), self.video_info()?),
            })
        }

        /// While the element holds late frames (a distorted input of a
        /// live pipeline), its frames go to the reference frames that wait
        /// for them instead of through the aggregator's queue.
        /// Takes `buf` where the element holds this pad's frames; returns
        /// whether it goes no further.
        fn hold_late(&self, buf: &gst::Buffer) -> bool {
            let pad = self.obj();
            let element = pad
                .parent()
                .and_then(|p| p.downcast::<crate::element::VmafHip>().ok());
            let holding = element
                .as_ref()
                .map_or(Holding::No, |e| e.imp().holding(pad.upcast_ref()));
            if holding == Holding::No {
                return false;
            }
            let Some(t) = self.timed(buf) else {
                return false;
            };
            let (thumb, taken) = match holding {
                Holding::Aligned { live } => {
                    let gpu = element.and_then(|e| e.imp().gpu_input());
                    (
                        thumb_of_buffer(&t.frame.0, &t.frame.1, gpu.as_deref()),
                        live,
                    )
                }
                _ => (None, true),
            };
            self.arrived.lock().unwrap().push((t, thumb));
            taken
        }

        fn copy_in(&self, buf: &gst::Buffer) -> Option<gst::Buffer> {
            let pad = self.obj();
            let element = pad.parent()?.downcast::<crate::element::VmafHip>().ok()?;
            let copier = element.imp().pinned_copier()?;
            if crate::element::picture::in_gpu_memory(buf) {
                return None;
            }
            copier.copy_in(buf, &self.video_info()?)
        }
    }

    #[glib::object_subclass]
    impl ObjectSubclass for VmafHipPad {
        const NAME: &'static str = "GstVmafHipPad";
        type Type = super::VmafHipPad;
        type ParentType = gst_video::VideoAggregatorPad;
    }

    impl ObjectImpl for VmafHipPad {
        fn properties() -> &'static [glib::ParamSpec] {
            static PROPS: std::sync::OnceLock<Vec<glib::ParamSpec>> = std::sync::OnceLock::new();
            PROPS.get_or_init(|| {
                vec![
                    glib::ParamSpecString::builder("label")
                        .nick("Label")
                        .blurb("A distorted input's name for its rendition (e.g. 720p): the messages' label field, and its results file and report are named with it (out.json -> out.720p.json) instead of with the pad's name; letters, digits, '.', '_' and '-'")
                        .mutable_ready()
                        .build(),
                    glib::ParamSpecString::builder("results-filename")
                        .nick("Results file")
                        .blurb("A dist_sink_%u rendition's results file, instead of the element's results-filename with the label or pad name before the extension (the element's results-format)")
                        .mutable_ready()
                        .build(),
                    glib::ParamSpecString::builder("report-filename")
                        .nick("Report file")
                        .blurb("A dist_sink_%u rendition's HTML report, instead of the element's report-filename with the label or pad name before the extension")
                        .mutable_ready()
                        .build(),
                ]
            })
        }

        fn set_property(&self, _id: usize, value: &glib::Value, pspec: &glib::ParamSpec) {
            match pspec.name() {
                "label" => {
                    let label: Option<String> = value.get().unwrap();
                    let ok = |l: &str| {
                        !l.is_empty()
                            && l.chars()
                                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
                    };
                    match label {
                        Some(l) if !ok(&l) => glib::g_warning!(
                            "vmafhip",
                            "{}: label \"{l}\" refused: it names files, so letters, digits, '.', '_' and '-' only",
                            self.obj().name()
                        ),
                        label => *self.label.lock().unwrap() = label,
                    }
                }
                "results-filename" => *self.results_filename.lock().unwrap() = value.get().unwrap(),
                "report-filename" => *self.report_filename.lock().unwrap() = value.get().unwrap(),
                other => unreachable!("unknown property {other}"),
            }
        }

        fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
            match pspec.name() {
                "label" => self.label.lock().unwrap().to_value(),
                "results-filename" => self.results_filename.lock().unwrap().to_value(),
                "report-filename" => self.report_filename.lock().unwrap().to_value(),
                other => unreachable!("unknown property {other}"),
            }
        }

        fn constructed(&self) {
            self.parent_constructed();
            // GstVideoAggregator asserts (aborts the process) on a segment in
            // any format but time, and GstAggregator 1.28 fails it before
            // the element's event handler: it is refused here, before
            // either sees it, with an error naming the pad.
            self.obj()
                .add_probe(gst::PadProbeType::EVENT_DOWNSTREAM, |pad, info| {
                    let Some(gst::PadProbeData::Event(event)) = &info.data else {
                        return gst::PadProbeReturn::Ok;
                    };
                    let gst::EventView::Segment(e) = event.view() else {
                        return gst::PadProbeReturn::Ok;
                    };
                    let format = e.segment().format();
                    pad.imp()
                        .refused
                        .store(format != gst::Format::Time, Ordering::Relaxed);
                    if format == gst::Format::Time {
                        return gst::PadProbeReturn::Ok;
                    }
                    if let Some(element) = pad.parent_element() {
                        gst::element_error!(
                            element,
                            gst::StreamError::Format,
                            (
                                "{}: a segment in {format:?} format; vmafhip needs timestamped video (put a parser such as rawvideoparse before it)",
                                pad.name()
                            ),
                            ["segment {:?}", e.segment()]
                        );
                    }
                    // Taken here (with `Drop` the bindings unref it and the
                    // pad then unrefs it again); upstream stops at its next
                    // buffer (the buffer probe).
                    info.data = None;
                    gst::PadProbeReturn::Handled
                });
            let weak = self.downgrade();
            self.obj()
                .add_probe(gst::PadProbeType::BUFFER, move |_, info| {
                    let Some(pad) = weak.upgrade() else {
                        return gst::PadProbeReturn::Ok;
                    };
                    if pad.refused.load(Ordering::Relaxed) {
                        // After the error: upstream stops here.
                        info.data = None;
                        info.flow_res = Err(gst::FlowError::NotNegotiated);
                        return gst::PadProbeReturn::Handled;
                    }
                    if let Some(gst::PadProbeData::Buffer(buf)) = &mut info.data {
                        pad.received.fetch_add(1, Ordering::Relaxed);
                        if let Some(copied) = pad.copy_in(buf) {
                            *buf = copied;
                        }
                        pad.note_arrival(buf);
                        if pad.hold_late(buf) {
                            // Kept by the element: the aggregator never sees it.
                            info.data = None;
                            return gst::PadProbeReturn::Handled;
                        }
                    }
                    gst::PadProbeReturn::Ok
                });
        }
    }
    impl GstObjectImpl for VmafHipPad {}
    impl PadImpl for VmafHipPad {}
    impl AggregatorPadImpl for VmafHipPad {}

    impl VideoAggregatorPadImpl for VmafHipPad {
        fn prepare_frame(
            &self,
            aggregator: &gst_video::VideoAggregator,
            token: &gst_video::subclass::AggregateFramesToken,
            buffer: &gst::Buffer,
        ) -> Option<gst_video::VideoFrame<gst_video::video_frame::Readable>> {
            let gpu = aggregator
                .downcast_ref::<crate::element::VmafHip>()
                .and_then(|e| e.imp().gpu_input());
            if let Some(gpu) = gpu.as_ref().and_then(|g| g.of_buffer(buffer))
                && let Some(info) = self.obj().video_info()
            {
                let frame = if buffer.iter_memories().all(|m| gpu.owns(m)) {
                    gpu.map_frame(buffer, &info)
                } else {
                    self.copy_on_device(aggregator, gpu, buffer, &info)
                };
                if let Some(frame) = frame {
                    debug_assert!(gst_gpu::mapped_for_device(&frame));
                    return Some(frame);
                }
            }
            self.parent_prepare_frame(aggregator, token, buffer)
        }
    }
}
