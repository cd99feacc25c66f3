//! `align`: the distorted frames paired with the reference's by content
//! ([`crate::core::align`]), in live pipelines and for files alike.
//!
//! Each distorted frame is taken on arrival (the pad's probe), with its
//! thumbnail; in a live pipeline it goes no further, for files it also
//! goes on to the aggregator, which paces the inputs and then lets it go.
//! Each reference frame is handed to every rendition's tracker as it is
//! aggregated. The tracker's decisions are carried out at once: pairs
//! scored (their messages posted late, with the reference frame's
//! timestamp), drops and duplicates counted and posted as `align-event`
//! messages. Frames the tracker holds past their turn are copied, so that
//! no upstream buffer is held.

use super::super::align::{ALIGN_EVENT, Aligner, thumb_of};
use super::super::hold::own_copy;
use super::super::late::{Arrived, Timed, WaitingRef};
use super::{CAT, ReferenceFrame, VmafHip, has_ended, running_time, waiting_reference};
use crate::core::align::{Found, Reach, Step, Thumb, Tracker};
use crate::element::VmafFrameMessage;
use crate::element::gap::Missed;
use crate::element::rendition::{Rendition, Told};
use crate::element::settings::Align;
use gst::prelude::*;
use gst::subclass::prelude::*;
use gst_base::prelude::*;

/// The tracker `align` asks for, for a reference of `fps` frames a second.
fn tracker(align: Align, fps: f64, window_ns: u64) -> Aligner {
    let reach = Reach::for_rate(fps, window_ns as f64 / 1e9);
    match align {
        Align::Frames(n) => Tracker::with_offset(reach, n),
        _ => Tracker::new(reach),
    }
}

impl VmafHip {
    /// The reference's frame rate (25 when unknown or variable).
    fn reference_rate(&self) -> f64 {
        self.ref_pad
            .current_caps()
            .and_then(|c| gst_video::VideoInfo::from_caps(&c).ok())
            .map(|i| i.fps())
            .filter(|f| f.numer() > 0 && f.denom() > 0)
            .map_or(25.0, |f| f.numer() as f64 / f.denom() as f64)
    }

    /// The thumbnail of the reference frame being aggregated; a frame
    /// whose luma cannot be read fails the stream.
    pub(super) fn reference_thumb(
        &self,
        frame: &gst_video::VideoFrameRef<&gst::BufferRef>,
    ) -> Result<Thumb, gst::FlowError> {
        thumb_of(frame, self.gpu_input().as_deref()).ok_or_else(|| self.unreadable_reference())
    }

    /// The error for a reference frame whose luma cannot be read.
    pub(super) fn unreadable_reference(&self) -> gst::FlowError {
        gst::element_imp_error!(
            self,
            gst::StreamError::Format,
            ("ref_sink: align: its frames' luma cannot be read"),
            ["frames are compared by content: 8- to 16-bit YUV or gray"]
        );
        gst::FlowError::Error
    }

    /// Gives the distorted frames that reached `pad` to its rendition's
    /// tracker (made on first use); `ended`: the input had ended before
    /// they were taken. A frame whose luma cannot be read
    /// fails the stream.
    fn take_aligned(
        &self,
        pad: &gst_video::VideoAggregatorPad,
        ended: bool,
    ) -> Result<(), gst::FlowError> {
        let arrived = pad
            .downcast_ref::<crate::element::VmafHipPad>()
            .map(|p| p.imp().take_arrived(false))
            .unwrap_or_default();
        let mut guard = self.state.lock().unwrap();
        let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
        let (align, window) = (st.settings.align, st.settings.align_window);
        let Some(r) = st.rendition(&pad.name()) else {
            return Ok(());
        };
        r.aligner
            .get_or_insert_with(|| tracker(align, self.reference_rate(), window));
        let mut gaps = Vec::new();
        for (d, thumb) in arrived {
            // Frames may share a timestamp (a demuxer's after a burst): each
            // is taken.
            if r.last_distorted.is_some_and(|last| d.at < last) {
                gst::debug!(
                    CAT,
                    imp = self,
                    "{}: the distorted frame at {} again: not taken twice",
                    pad.name(),
                    d.at
                );
                continue;
            }
            let missed = r
                .last_distorted
                .zip(d.duration)
                .map_or_else(Missed::default, |last| Missed::between(last, d.at));
            if missed.is_gap() {
                gaps.push(Self::gap_seen(r, "distorted", missed, d.at));
            }
            r.last_distorted = Some(d.at);
            if r.passed_by.distorted.is_some_and(|cut| d.at < cut) {
                // A gap of the reference passed this frame by.
                continue;
            }
            let Some(thumb) = thumb else {
                drop(guard);
                gst::element_imp_error!(
                    self,
                    gst::StreamError::Format,
                    (
                        "{}: align={align}: its frames' luma cannot be read",
                        pad.name()
                    ),
                    ["frames are compared by content: 8- to 16-bit YUV or gray"]
                );
                return Err(gst::FlowError::Error);
            };
            let t = r.aligner.as_mut().expect("made above");
            t.distorted(thumb, d);
            while let Some(d) = t.shed_distorted() {
                gst::debug!(
                    CAT,
                    imp = self,
                    "{}: the distorted frame at {} has no reference frame to pair: let go",
                    pad.name(),
                    d.at
                );
            }
        }
        if ended && let Some(t) = r.aligner.as_mut() {
            t.end_distorted();
        }
        drop(guard);
        self.report_gaps(gaps)
    }

    /// This output frame's reference, given to input `pad`'s tracker with
    /// its thumbnail ([`VmafHip::align_reference`]).
    pub(super) fn score_aligned(
        &self,
        (ref_frame, reference): ReferenceFrame<'_>,
        thumb: &Thumb,
        pad: &gst_video::VideoAggregatorPad,
        outbuf: &gst::BufferRef,
    ) -> Result<Vec<VmafFrameMessage>, gst::FlowError> {
        let (Some(reference), Some(at)) = (reference, running_time(&self.ref_pad, reference))
        else {
            return Ok(Vec::new());
        };
        let frame = waiting_reference((ref_frame, reference), at, outbuf, 0);
        self.align_reference(frame, thumb, pad)
    }

    /// A reference frame (numbered here) given to input `pad`'s tracker
    /// with its thumbnail; then every decision the tracker can make is
    /// carried out. Returns the messages of the frames that became final.
    pub(super) fn align_reference(
        &self,
        mut frame: Timed<WaitingRef>,
        thumb: &Thumb,
        pad: &gst_video::VideoAggregatorPad,
    ) -> Result<Vec<VmafFrameMessage>, gst::FlowError> {
        let name = pad.name();
        let at = frame.at;
        let ended = has_ended(pad);
        self.take_aligned(pad, ended)?;
        {
            let mut guard = self.state.lock().unwrap();
            let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
            frame.frame.reference = st.references;
            let Some(r) = st.rendition(&name) else {
                return Ok(Vec::new());
            };
            if r.passed_by.reference.is_some_and(|cut| at < cut) {
                // A gap of the distorted input passed this frame by.
                r.pairings.late();
                drop(guard);
                self.post_late(&name, 1);
                return self.run_aligned(&name, at);
            }
            let Some(t) = r.aligner.as_mut() else {
                return Ok(Vec::new());
            };
            t.reference(thumb.clone(), frame);
        }
        self.run_aligned(&name, at)
    }

    /// Carries out input `name`'s tracker's decisions, until it needs more
    /// frames; in a live pipeline, a reference frame with no distorted
    /// frame within `max-pending` of `now` (the newest reference frame's
    /// running time) is given up. The frames still held are then copied.
    fn run_aligned(
        &self,
        name: &str,
        now: gst::ClockTime,
    ) -> Result<Vec<VmafFrameMessage>, gst::FlowError> {
        let live = self.live.load(std::sync::atomic::Ordering::Relaxed);
        let bound = self.max_pending();
        let mut msgs = Vec::new();
        loop {
            let step = {
                let mut guard = self.state.lock().unwrap();
                let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
                let Some(t) = st.rendition(name).and_then(|r| r.aligner.as_mut()) else {
                    return Ok(msgs);
                };
                match t.decide() {
                    Some(s) => s,
                    None if live && t.held().1 == 0 => {
                        let overdue = t
                            .oldest_reference()
                            .is_some_and(|r| now.saturating_sub(r.at) > bound);
                        match overdue.then(|| t.give_up_reference()).flatten() {
                            Some(r) => {
                                drop(guard);
                                let waited = now.saturating_sub(r.at);
                                self.note_late(name, &r.frame, waited, bound)?;
                                continue;
                            }
                            None => break,
                        }
                    }
                    None => break,
                }
            };
            msgs.extend(self.carry_out(name, step)?);
        }
        self.copy_held(name);
        Ok(msgs)
    }

    /// Carries out one of input `name`'s tracker's decisions; returns the
    /// messages of the frames it made final.
    fn carry_out(
        &self,
        name: &str,
        step: Step<Timed<WaitingRef>, Timed<Arrived>>,
    ) -> Result<Vec<VmafFrameMessage>, gst::FlowError> {
        let mut msgs = Vec::new();
        match step {
            Step::Aligned(found) => {
                if !self.hold_offset_found_again(name, found) {
                    self.note_alignment(name, found, Told::Start);
                }
            }
            Step::Shifted { found, .. } => self.count_pairing(name, |r| {
                r.found_again = Some((found, Told::Shifted));
            }),
            Step::Pair {
                reference,
                distorted,
                duplicate,
            } => msgs.extend(self.carry_out_pair(name, reference, distorted, duplicate)?),
            Step::Dropped(r) => self.note_align_event(name, "dropped", &r.frame),
            Step::LeadingReference(r) => self.leading_reference(name, &r.frame),
            Step::LeadingDistorted(d) => {
                gst::debug!(
                    CAT,
                    imp = self,
                    "{name}: distorted frame at {} precedes the reference's first",
                    d.at
                );
            }
            Step::Unpaired(r) => {
                gst::debug!(
                    CAT,
                    imp = self,
                    "{name}: reference frame {} has no distorted frame",
                    r.frame.reference
                );
                self.count_pairing(name, |r| r.pairings.unscored());
            }
            Step::Lost {
                reference,
                distorted,
            } => {
                // Counted as late when the gap was seen (`Pairings::reference`).
                gst::debug!(
                    CAT,
                    imp = self,
                    "{name}: reference frame {reference} was lost in delivery{}: not scored",
                    distorted.map_or(String::new(), |d| format!(
                        "; the distorted frame at {} shows it",
                        d.at
                    ))
                );
            }
            Step::Extra(d) => {
                gst::debug!(
                    CAT,
                    imp = self,
                    "{name}: distorted frame at {} is past the reference's end",
                    d.at
                );
                self.count_pairing(name, |r| r.pairings.counts.distorted_past_end = true);
            }
        }
        Ok(msgs)
    }

    /// A pair the tracker made: a duplicate noted, else its lag kept (and
    /// the offset found again after a gap told); then scored.
    fn carry_out_pair(
        &self,
        name: &str,
        reference: Timed<WaitingRef>,
        distorted: Timed<Arrived>,
        duplicate: bool,
    ) -> Result<Vec<VmafFrameMessage>, gst::FlowError> {
        gst::log!(
            CAT,
            imp = self,
            "{name}: reference frame {} at {} shown by the distorted frame at {}{}",
            reference.frame.reference,
            reference.at,
            distorted.at,
            if duplicate { " (a duplicate)" } else { "" }
        );
        if duplicate {
            self.note_align_event(name, "duplicated", &reference.frame);
        } else {
            let lag = distorted.at.nseconds() as i64 - reference.at.nseconds() as i64;
            let mut again = None;
            self.count_pairing(name, |r| {
                r.lag = Some(lag);
                again = r.found_again.take();
            });
            if let Some((found, why)) = again {
                let frame = reference.duration.or(distorted.duration);
                self.note_alignment(name, offset_of_lag(found, lag, frame), why);
            }
        }
        self.score_waiting(name, reference.frame, distorted)
    }

    /// A reference frame before the distorted input's first, not scored:
    /// after a gap, lost with it (late); live, unscored (a file's offset
    /// leaves them out, as its lengths do not differ).
    fn leading_reference(&self, name: &str, frame: &WaitingRef) {
        let live = self.live.load(std::sync::atomic::Ordering::Relaxed);
        let mut lost = false;
        self.count_pairing(name, |r| {
            if r.realigned {
                r.pairings.late();
                lost = true;
            } else if live {
                r.pairings.unscored();
            }
        });
        if lost {
            self.post_late(name, 1);
        }
        gst::debug!(
            CAT,
            imp = self,
            "{name}: reference frame {} precedes the distorted input's first",
            frame.reference
        );
    }

    fn count_pairing(&self, name: &str, count: impl FnOnce(&mut Rendition)) {
        if let Some(r) = self
            .state
            .lock()
            .unwrap()
            .as_mut()
            .and_then(|st| st.rendition(name))
        {
            count(r);
        }
    }

    /// After a gap, a clear offset found again is held until the first
    /// pair after it (see [`Rendition::found_again`]); returns whether it
    /// was.
    fn hold_offset_found_again(&self, name: &str, found: Found) -> bool {
        let mut held = false;
        self.count_pairing(name, |r| {
            if r.realigned && found.trusted() {
                r.found_again = Some((found, Told::AfterGap));
                held = true;
            }
        });
        held
    }

    /// The offset found at start, again after a gap, or moved by the drift
    /// check (`why`): kept for the messages and the results, said in the
    /// log, and a warning when it is too unclear to use or was moved.
    fn note_alignment(&self, name: &str, found: Found, why: Told) {
        let given = matches!(self.settings.lock().unwrap().align, Align::Frames(_));
        if let Some(r) = self
            .state
            .lock()
            .unwrap()
            .as_mut()
            .and_then(|st| st.rendition(name))
        {
            r.alignment = Some((found.offset, (!given).then_some(found.confidence)));
        }
        if given {
            return;
        }
        if !found.trusted() {
            gst::element_imp_warning!(
                self,
                gst::StreamError::Failed,
                (
                    "{name}: align=auto: no clear offset to the reference (confidence {:.2}): paired unshifted",
                    found.confidence
                ),
                ["a still picture, or inputs that do not show the same video"]
            );
            return;
        }
        let side = |n: i32| match n {
            0 => "is aligned with the reference".to_string(),
            n if n > 0 => format!("lags the reference by {n} frames"),
            n => format!("leads the reference by {} frames", -n),
        };
        let how = match (found.offset, why) {
            (0, Told::Start) => side(0),
            (n, Told::AfterGap) => format!("after the gap, {}", side(n)),
            (n, Told::Shifted) => {
                gst::element_imp_warning!(
                    self,
                    gst::StreamError::Failed,
                    (
                        "{name}: align=auto: its frames stopped showing the reference frames they were paired with: realigned, it now {} (confidence {:.2})",
                        side(n),
                        found.confidence
                    ),
                    [
                        "the last seconds' pairs fit other reference frames clearly better; the pairs scored before this were off"
                    ]
                );
                return;
            }
            (n, Told::Start) if n > 0 => {
                format!("lags the reference by {n} frames: its first {n} are not scored")
            }
            (n, Told::Start) => format!(
                "leads the reference by {} frames: the reference's first {} are not scored",
                -n, -n
            ),
        };
        gst::element_imp_info!(
            self,
            gst::StreamError::Failed,
            (
                "{name}: align=auto: {how} (confidence {:.2})",
                found.confidence
            ),
            [
                "offset found {}",
                if why == Told::AfterGap {
                    "again after a gap"
                } else {
                    "at start"
                }
            ]
        );
    }

    /// A distorted frame dropped (`dropped`: the reference frame it should
    /// have shown) or repeated (`duplicated`: the frame it repeats):
    /// counted, and posted as an `align-event` message.
    fn note_align_event(&self, name: &str, what: &str, reference: &WaitingRef) {
        let label = {
            let mut guard = self.state.lock().unwrap();
            let Some(r) = guard.as_mut().and_then(|st| st.rendition(name)) else {
                return;
            };
            match what {
                "dropped" => r.pairings.dropped(),
                _ => r.pairings.duplicated(),
            }
            r.label.clone()
        };
        gst::info!(
            CAT,
            imp = self,
            "{name}: a distorted frame {what} at reference frame {}",
            reference.reference
        );
        let s = gst::Structure::builder(ALIGN_EVENT)
            .field("event", what)
            .field("reference-frame", reference.reference.saturating_sub(1))
            .field("timestamp", reference.pts)
            .field("rendition", name)
            .field("label", label)
            .build();
        self.post(s);
    }

    /// Copies the frames input `name`'s tracker holds past their turn, so
    /// that no upstream buffer is held ([`WaitingRef::own_copy`]), but
    /// those marked holdable ([`super::super::hold::HOLDABLE_META`]).
    fn copy_held(&self, name: &str) {
        let mut guard = self.state.lock().unwrap();
        let Some(t) = guard
            .as_mut()
            .and_then(|st| st.rendition(name))
            .and_then(|r| r.aligner.as_mut())
        else {
            return;
        };
        let (refs, dists) = t.held_mut();
        for w in refs {
            w.frame.own_copy();
        }
        for d in dists.filter(|d| !d.frame.0.is_writable()) {
            own_copy(&mut d.frame.0);
        }
    }

    /// The reference of a file has ended and some distorted input has
    /// not: its frames are taken as they come (their frames past the
    /// reference's end counted), the aggregator asked for more data (it
    /// answers the inputs' queries meanwhile). None once every input has
    /// ended, or in a live pipeline.
    pub(super) fn follow_distorted_to_end(
        &self,
    ) -> Option<Result<gst::FlowSuccess, gst::FlowError>> {
        if !self.aligning.load(std::sync::atomic::Ordering::Relaxed)
            || self.live.load(std::sync::atomic::Ordering::Relaxed)
        {
            return None;
        }
        let pads = self.distorted_pads();
        if pads.iter().all(has_ended) {
            return None;
        }
        let now = gst::ClockTime::ZERO;
        let mut msgs = Vec::new();
        for pad in &pads {
            match self.finish_aligned(pad, now) {
                Ok((m, _)) => msgs.extend(m),
                Err(e) => return Some(Err(e)),
            }
        }
        self.post_scored(&msgs);
        Some(Err(gst_base::AGGREGATOR_FLOW_NEED_DATA))
    }

    /// The reference has ended: input `pad`'s tracker takes its last
    /// distorted frames (those left in the aggregator's queue are let go:
    /// the probe took them), and decides the rest once the input has
    /// ended. Returns the messages and how many reference frames still
    /// wait for a distorted frame.
    pub(super) fn finish_aligned(
        &self,
        pad: &gst_video::VideoAggregatorPad,
        now: gst::ClockTime,
    ) -> Result<(Vec<VmafFrameMessage>, usize), gst::FlowError> {
        let name = pad.name();
        let ended = has_ended(pad);
        while pad.drop_buffer() {}
        self.take_aligned(pad, ended)?;
        if let Some(t) = self
            .state
            .lock()
            .unwrap()
            .as_mut()
            .and_then(|st| st.rendition(&name))
            .and_then(|r| r.aligner.as_mut())
        {
            t.end_reference();
        }
        let msgs = self.run_aligned(&name, now)?;
        let held = self
            .state
            .lock()
            .unwrap()
            .as_mut()
            .and_then(|st| st.rendition(&name))
            .and_then(|r| r.aligner.as_ref())
            .map_or(0, |t| if ended { 0 } else { t.held().0 });
        Ok((msgs, held))
    }
}

/// The offset of a distorted frame shown `lag` nanoseconds after the
/// reference frame it shows (before: it leads), in frames of `frame`
/// each; the search's own where a frame's duration is unknown.
fn offset_of_lag(found: Found, lag: i64, frame: Option<gst::ClockTime>) -> Found {
    match frame.map(|f| f.nseconds() as f64) {
        Some(f) if f > 0.0 => Found {
            offset: (lag as f64 / f).round() as i32,
            ..found
        },
        _ => found,
    }
}
