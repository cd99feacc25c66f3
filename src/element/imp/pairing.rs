//! Which frames meet: a reference frame and each rendition's distorted
//! frame, gaps and ends of either input, renditions made as their pads
//! bring frames, and the latency a live pipeline needs.

use super::{CAT, VmafHip, input_name, running_time};
use crate::element::live::{self, FirstFrame};
use crate::element::opening::open_engine;
use crate::element::picture::*;
use crate::element::rendition::{Files, Rendition};
use crate::element::settings::*;
use gst::prelude::*;
use gst::subclass::prelude::*;
use gst_base::prelude::*;
use std::sync::atomic::Ordering;

impl VmafHip {
    /// No reference frame: the end of the stream once the reference has
    /// ended (the output follows it), else a gap, passed on as a zeroed
    /// frame of the right size marked GAP.
    pub(super) fn no_reference_frame(
        &self,
        outbuf: &mut gst::BufferRef,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        if self.ref_pad.is_eos() {
            if let Some(more) = self.follow_distorted_to_end() {
                return more;
            }
            self.finish_late()?;
            if !self.aligning.load(Ordering::Relaxed) {
                // Aligned, the tracker counts them.
                self.note_distorted_past_end();
            }
            return Err(gst::FlowError::Eos);
        }
        let size = self
            .obj()
            .src_pad()
            .current_caps()
            .and_then(|c| gst_video::VideoInfo::from_caps(&c).ok())
            .map_or(0, |info| info.size());
        outbuf.append_memory(gst::Memory::from_mut_slice(vec![0u8; size]));
        outbuf.set_flags(gst::BufferFlags::GAP);
        Ok(gst::FlowSuccess::Ok)
    }

    /// The reference has ended while distorted inputs have not, so they
    /// have frames left (a non-live aggregator calls only once every pad
    /// has a frame or has ended): each such input is marked, for its pooled
    /// message and results, with one warning.
    pub(super) fn note_distorted_past_end(&self) {
        let longer: Vec<String> = self
            .distorted_pads()
            .iter()
            .filter(|p| !p.is_eos())
            .map(|p| p.name().to_string())
            .collect();
        let newly = {
            let mut guard = self.state.lock().unwrap();
            let Some(st) = guard.as_mut() else { return };
            longer
                .iter()
                .filter(|n| {
                    st.rendition(n).is_some_and(|r| {
                        !std::mem::replace(&mut r.pairings.counts.distorted_past_end, true)
                    })
                })
                .cloned()
                .collect::<Vec<_>>()
        };
        if !newly.is_empty() {
            gst::element_imp_warning!(
                self,
                gst::StreamError::Failed,
                (
                    "ref_sink ended before {}: the distorted frames past the reference's end are not scored",
                    newly.join(", ")
                ),
                ["ref_sink EOS"]
            );
        }
    }

    /// `src` passes the reference through without copying pixels, as it
    /// came (not the buffer the sink pad rebuilt around a pinned copy).
    pub(super) fn pass_reference_on(
        &self,
        reference: &gst::Buffer,
        outbuf: &mut gst::BufferRef,
    ) -> Result<(), gst::FlowError> {
        let reference =
            crate::element::pinned_copy::original(reference).unwrap_or_else(|| reference.clone());
        if reference.n_memory() == 1 && !in_gpu_memory(&reference) {
            // The output's memory holds the whole reference buffer, so a
            // pooled (pinned) reference goes back to its pool, intact,
            // only when downstream is done with it. Sharing its memory
            // instead would make the pool discard it as not writable.
            let mapped = reference
                .clone()
                .into_mapped_buffer_readable()
                .map_err(|_| gst::FlowError::Error)?;
            outbuf.append_memory(gst::Memory::from_slice(mapped));
            reference
                .copy_into(outbuf, gst::BufferCopyFlags::META, ..)
                .map_err(|_| gst::FlowError::Error)
        } else {
            reference
                .copy_into(
                    outbuf,
                    gst::BufferCopyFlags::MEMORY | gst::BufferCopyFlags::META,
                    ..,
                )
                .map_err(|_| gst::FlowError::Error)
        }
    }

    /// A reference of unknown (variable) frame rate, as an H.264 stream
    /// without timing in its headers gives: GstVideoAggregator stamps
    /// every output frame at its segment's start then, so the frame is
    /// stamped with the reference frame's own time instead (the messages,
    /// windows and reports go by it).
    pub(super) fn stamp_variable_rate(&self, reference: &gst::Buffer, outbuf: &mut gst::BufferRef) {
        let variable = self
            .ref_pad
            .current_caps()
            .and_then(|c| {
                c.structure(0)
                    .and_then(|s| s.get::<gst::Fraction>("framerate").ok())
            })
            .is_some_and(|f| f.numer() == 0);
        if !variable {
            return;
        }
        let src = self.obj().src_pad().segment();
        let at = running_time(&self.ref_pad, Some(reference)).and_then(|rt| {
            src.downcast_ref::<gst::ClockTime>()
                .and_then(|seg| seg.position_from_running_time(rt))
        });
        if let Some(pts) = at {
            outbuf.set_pts(pts);
            outbuf.set_duration(reference.duration());
        }
    }

    /// The element's own latency (live pipelines): the wait for a late
    /// distorted frame, and what the distorted branch's first frame took
    /// beyond its deadline (`live`).
    pub(super) fn update_latency(&self) {
        let (setting, first) = match self.state.lock().unwrap().as_ref() {
            Some(st) => (st.settings.late_frame_wait, st.first_frame_delay),
            None => return,
        };
        let fps = self
            .ref_pad
            .current_caps()
            .and_then(|c| gst_video::VideoInfo::from_caps(&c).ok())
            .map(|info| info.fps());
        let wait = if setting < 0 && self.settings.lock().unwrap().max_pending > 0 {
            // Late frames are waited for without holding the reference up.
            gst::ClockTime::ZERO
        } else {
            live::late_frame_wait(setting, fps) + first
        };
        gst::debug!(
            CAT,
            imp = self,
            "own latency {wait} (late-frame wait, first frame's delay {first})"
        );
        self.obj().set_latency(wait, Some(wait));
    }

    /// A live deadline passed with a reference frame ready and the
    /// distorted branch's first frame not there yet: waits for it (unless
    /// `late-frame-wait` is 0), then adds what it took to the latency, so
    /// that the frames queued behind it have time to come as well.
    pub(super) fn wait_for_first_distorted(&self) {
        let awaiting = self.state.lock().unwrap().as_ref().is_some_and(|st| {
            st.settings.late_frame_wait != 0
                && st.settings.max_pending == 0
                && st.settings.align == Align::Off
                && st
                    .renditions
                    .first()
                    .is_some_and(|r| r.pairings.awaiting_first())
        });
        if !awaiting || !self.ref_pad.has_buffer() || self.dist_pad.has_buffer() {
            return;
        }
        let pads = [
            self.obj().src_pad().clone().upcast(),
            self.ref_pad.clone().upcast(),
            self.dist_pad.clone().upcast(),
        ];
        let waited = live::wait_for_first_frame(self.dist_pad.upcast_ref(), &pads);
        gst::info!(
            CAT,
            imp = self,
            "waiting for dist_sink's first frame: {waited:?}"
        );
        let mut guard = self.state.lock().unwrap();
        let Some(st) = guard.as_mut() else { return };
        match waited {
            FirstFrame::Came(took) => {
                st.first_frame_delay = gst::ClockTime::try_from(took).unwrap_or_default();
                drop(guard);
                self.update_latency();
            }
            FirstFrame::TimedOut => {
                if let Some(r) = st.renditions.first_mut() {
                    r.pairings.start();
                }
            }
            FirstFrame::Stopped => {}
        }
    }

    /// The distorted inputs: `dist_sink`, then the requested `dist_sink_%u`.
    pub(super) fn distorted_pads(&self) -> Vec<gst_video::VideoAggregatorPad> {
        let mut pads = vec![self.dist_pad.clone()];
        pads.extend(
            self.obj()
                .sink_pads()
                .into_iter()
                .filter(|p| p.name().starts_with("dist_sink_"))
                .filter_map(|p| p.downcast().ok()),
        );
        pads
    }

    /// The rendition of a requested pad, made at its first frame: its own
    /// engine (on the same backend), results file and report. False for a
    /// pad being released.
    pub(super) fn ensure_rendition(
        &self,
        pad: &gst_video::VideoAggregatorPad,
    ) -> Result<bool, gst::FlowError> {
        let name = pad.name().to_string();
        let ((settings, shared_reference), first_on_gpu) = {
            let mut guard = self.state.lock().unwrap();
            let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
            if st.released.contains(&name) {
                return Ok(false);
            }
            if st.rendition(&name).is_some() {
                return Ok(true);
            }
            (
                (st.settings.clone(), st.shared_reference.clone()),
                st.device.is_some(),
            )
        };
        let label = pad.property::<Option<String>>("label");
        let made = open_engine(&settings, &shared_reference).and_then(|o| {
            // dist_sink's engine warned already if it is on the CPU too.
            if let Some(w) = o.warning.as_ref().filter(|_| first_on_gpu) {
                gst::element_imp_warning!(
                    self,
                    gst::LibraryError::Init,
                    ("{name}: {w}"),
                    ["backend=auto"]
                );
            }
            let files = Files {
                results: pad.property("results-filename"),
                report: pad.property("report-filename"),
            };
            Rendition::new(
                (name.clone(), label, false),
                files,
                (o.engine, o.name),
                &settings,
            )
        });
        let mut rendition = made.map_err(|e| {
            self.post_error_message(e);
            gst::FlowError::Error
        })?;
        rendition.metrics = self.metrics.lock().unwrap().as_ref().map(|m| m.0.clone());
        gst::info!(CAT, imp = self, "{name}: scored with {}", rendition.backend);
        if let Some(st) = self.state.lock().unwrap().as_mut() {
            st.renditions.push(rendition);
        }
        Ok(true)
    }

    /// No frame on a distorted input (it ended, has a gap, or has not
    /// started): warns once per input; the reference frames pass through
    /// unscored against it until it has one.
    pub(super) fn warn_once_no_distorted(
        &self,
        name: &str,
        pts: Option<gst::ClockTime>,
    ) -> Result<(), gst::FlowError> {
        let warn = {
            let mut guard = self.state.lock().unwrap();
            let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
            // None: the pad is being released.
            st.rendition(name).is_some_and(|r| {
                r.pairings.unscored();
                !std::mem::replace(&mut r.no_frame_warned, true)
            })
        };
        if warn {
            gst::element_imp_warning!(
                self,
                gst::StreamError::Failed,
                (
                    "{name} has no frame for {}: reference frames pass through unscored until it has",
                    pts.display()
                ),
                ["{name} ended or has a gap"]
            );
        }
        Ok(())
    }

    /// Whether this reference frame was scored already: the aggregator
    /// hands the same frame again when the distorted stream runs faster,
    /// or while a live reference has no new frame. A frame seen arriving
    /// (`arrived_at`, its running time as it came: a live reference's) is
    /// new; else one at the last frame's time is the same, and so is one
    /// that the pad's segment cannot place after timed frames (the last
    /// frame of a source that stopped, held while its new segment is in).
    /// The first time, it is counted ([`VmafHip::new_reference`]).
    pub(super) fn is_repeated_reference(
        &self,
        reference: Option<&gst::Buffer>,
        arrived_at: Option<gst::ClockTime>,
    ) -> Result<bool, gst::FlowError> {
        let ref_time = arrived_at.or_else(|| running_time(&self.ref_pad, reference));
        {
            let guard = self.state.lock().unwrap();
            let st = guard.as_ref().ok_or(gst::FlowError::NotNegotiated)?;
            let held = match ref_time {
                Some(_) => ref_time == st.last_ref,
                None => st.last_ref.is_some(),
            };
            if arrived_at.is_none() && held {
                return Ok(true);
            }
        }
        self.new_reference(ref_time, reference.and_then(|b| b.duration()))?;
        Ok(false)
    }

    /// A new reference frame at running time `at`, numbered by its place
    /// in the reference's timeline: frames lost in delivery before it keep
    /// their numbers, are counted late, and each tracker learns of them. A
    /// gap (the source stalled, or came back: its frames never came, or
    /// came late with new timestamps) is reported, its frames not counted.
    /// The first time, also learns the inputs' names for the reports
    /// (asked outside the state lock: the query travels upstream).
    pub(super) fn new_reference(
        &self,
        at: Option<gst::ClockTime>,
        duration: Option<gst::ClockTime>,
    ) -> Result<(), gst::FlowError> {
        let mut gaps = Vec::new();
        let mut late = Vec::new();
        let ask_inputs = {
            let mut guard = self.state.lock().unwrap();
            let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
            st.last_ref = at;
            let first = st.references + 1;
            let mut lost = 0;
            for r in &mut st.renditions {
                let missed = r.pairings.reference(at, duration);
                if missed.is_gap() {
                    gaps.push(Self::gap_seen(
                        r,
                        "reference",
                        missed,
                        at.unwrap_or_default(),
                    ));
                    continue;
                }
                if let Some(t) = r.aligner.as_mut() {
                    (first..first + missed.frames).for_each(|n| t.lost_reference(n));
                }
                late.push((r.name.clone(), missed.frames));
                lost = lost.max(missed.frames);
            }
            st.references += 1 + lost;
            st.renditions.iter().any(Rendition::wants_inputs)
        };
        self.report_gaps(gaps)?;
        for (name, frames) in late {
            self.post_late(&name, frames);
        }
        if ask_inputs {
            self.learn_input_names();
        }
        Ok(())
    }

    /// The inputs' names, for the renditions' reports that want them.
    fn learn_input_names(&self) {
        let reference = input_name(&self.ref_pad);
        let named: Vec<(String, String)> = self
            .distorted_pads()
            .iter()
            .map(|p| (p.name().to_string(), input_name(p)))
            .collect();
        if let Some(st) = self.state.lock().unwrap().as_mut() {
            for (name, distorted) in named {
                if let Some(r) = st.rendition(&name).filter(|r| r.wants_inputs()) {
                    r.inputs = Some([reference.clone(), distorted]);
                }
            }
        }
    }

    /// Counts a reference frame scored against input `name`'s frame at
    /// running time `dist` (fresh, or repeated).
    pub(super) fn note_pairing(
        &self,
        name: &str,
        dist: Option<gst::ClockTime>,
    ) -> Result<(), gst::FlowError> {
        let mut guard = self.state.lock().unwrap();
        let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
        if let Some(r) = st.rendition(name) {
            r.pairings.scored(dist);
        }
        Ok(())
    }
}
