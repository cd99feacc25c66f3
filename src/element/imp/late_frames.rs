//! Late distorted frames in live pipelines (`late`): the reference frames
//! wait, in order, and are scored when their distorted frames arrive.

use super::{
    CAT, FrameTiming, ReferenceFrame, VmafHip, has_ended, running_time, waiting_reference,
};
use crate::element::VmafFrameMessage;
use crate::element::align::Holding;
use crate::element::late::{Arrived, Paired, Timed, WaitingRef};
use crate::element::picture::*;
use crate::vmaf::KeepAlive;
use gst::prelude::*;
use gst::subclass::prelude::*;
use gst_base::prelude::*;
use gst_video::prelude::*;
use std::sync::atomic::Ordering;

/// Late distorted frames in live pipelines (`late`): the reference frames
/// wait, in order, and are scored when their distorted frames arrive.
impl VmafHip {
    /// What becomes of `pad`'s frames on arrival: a distorted input's go
    /// to the waiting reference frames rather than through the
    /// aggregator's queue in a live pipeline with `max-pending` above 0;
    /// with `align`, to its tracker (and on to the aggregator, which paces
    /// the inputs, unless the pipeline is live).
    pub(crate) fn holding(&self, pad: &gst::Pad) -> Holding {
        if pad == self.ref_pad.upcast_ref::<gst::Pad>() {
            return Holding::No;
        }
        let live = self.live.load(Ordering::Relaxed);
        if self.aligning.load(Ordering::Relaxed) {
            Holding::Aligned { live }
        } else if live && self.settings.lock().unwrap().max_pending > 0 {
            Holding::Late
        } else {
            Holding::No
        }
    }

    pub(crate) fn holds_late_frames(&self, pad: &gst::Pad) -> bool {
        self.holding(pad) != Holding::No
    }

    pub(super) fn max_pending(&self) -> gst::ClockTime {
        gst::ClockTime::from_nseconds(self.settings.lock().unwrap().max_pending)
    }

    /// `buffer` mapped for the engine: for the device where it lies in
    /// the element's GPU memory, else for the host.
    pub(super) fn map_for_engine(
        &self,
        buffer: &gst::Buffer,
        info: &gst_video::VideoInfo,
    ) -> Result<gst_video::VideoFrame<gst_video::video_frame::Readable>, gst::FlowError> {
        if let Some(frame) = self.gpu_input().and_then(|g| g.map_owned(buffer, info)) {
            return Ok(frame);
        }
        gst_video::VideoFrame::from_buffer_readable(buffer.clone(), info).map_err(|_| {
            gst::error!(CAT, imp = self, "cannot map a waiting frame");
            gst::FlowError::Error
        })
    }

    /// This output frame's reference, put to wait for input `pad`'s frame,
    /// then every waiting frame whose distorted frame is known scored;
    /// returns the messages of the frames that became final.
    pub(super) fn score_late(
        &self,
        token: &gst_video::subclass::AggregateFramesToken,
        (ref_frame, reference): ReferenceFrame<'_>,
        pad: &gst_video::VideoAggregatorPad,
        outbuf: &gst::BufferRef,
    ) -> Result<Vec<VmafFrameMessage>, gst::FlowError> {
        let name = pad.name();
        let Some((reference, at)) = reference.zip(running_time(&self.ref_pad, reference)) else {
            // No running time to pair by.
            return self.score_input(token, (ref_frame, reference), pad, outbuf);
        };
        // A frame queued before the pipeline was known to be live.
        let queued = match (pad.current_buffer(token), pad.prepared_frame(token)) {
            (Some(b), Some(f)) => running_time(pad, Some(&b)).map(|t| Timed {
                at: t,
                duration: b.duration(),
                frame: (b, f.info().clone()),
            }),
            _ => None,
        };
        self.take_arrived(pad, queued);
        {
            let mut guard = self.state.lock().unwrap();
            let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
            let number = st.references;
            let Some(r) = st.rendition(&name) else {
                return Ok(Vec::new());
            };
            r.late.wait(waiting_reference(
                (ref_frame, reference),
                at,
                outbuf,
                number,
            ));
        }
        self.score_ready(&name, at, pad.is_eos())
    }

    /// Gives the distorted frames that reached `pad` (and `queued`, one
    /// the aggregator holds) to its rendition's waiting reference frames.
    pub(super) fn take_arrived(
        &self,
        pad: &gst_video::VideoAggregatorPad,
        queued: Option<Timed<Arrived>>,
    ) {
        let arrived = pad
            .downcast_ref::<crate::element::VmafHipPad>()
            .map(|p| p.imp().take_arrived(true))
            .unwrap_or_default();
        let mut guard = self.state.lock().unwrap();
        if let Some(r) = guard.as_mut().and_then(|st| st.rendition(&pad.name())) {
            for a in queued
                .into_iter()
                .chain(arrived.into_iter().map(|(a, _)| a))
            {
                r.late.arrive(a);
            }
        }
    }

    /// Scores input `name`'s waiting reference frames whose distorted
    /// frames are known, or that waited past `max-pending` (`now`: the
    /// newest reference frame's running time); the rest are copied, so
    /// that no upstream buffer is held.
    pub(super) fn score_ready(
        &self,
        name: &str,
        now: gst::ClockTime,
        ended: bool,
    ) -> Result<Vec<VmafFrameMessage>, gst::FlowError> {
        let bound = self.max_pending();
        let mut msgs = Vec::new();
        loop {
            let next = {
                let mut guard = self.state.lock().unwrap();
                let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
                match st.rendition(name) {
                    Some(r) => r.late.next(now, bound, ended),
                    None => return Ok(msgs),
                }
            };
            let Some((waiting, paired)) = next else { break };
            gst::log!(
                CAT,
                imp = self,
                "{name}: reference frame at {} paired with {:?}",
                waiting.at,
                match &paired {
                    Paired::Frame(d) => Some(d.at),
                    _ => None,
                }
            );
            match paired {
                Paired::Frame(d) => msgs.extend(self.score_waiting(name, waiting.frame, d)?),
                Paired::Missing => self.warn_once_no_distorted(name, waiting.frame.pts)?,
                Paired::Late(waited) => self.note_late(name, &waiting.frame, waited, bound)?,
            }
        }
        let mut guard = self.state.lock().unwrap();
        if let Some(r) = guard.as_mut().and_then(|st| st.rendition(name)) {
            for w in r.late.waiting_mut() {
                w.frame.own_copy();
            }
        }
        Ok(msgs)
    }

    /// Scores a waiting reference frame against its distorted frame.
    pub(super) fn score_waiting(
        &self,
        name: &str,
        w: WaitingRef,
        d: Timed<Arrived>,
    ) -> Result<Vec<VmafFrameMessage>, gst::FlowError> {
        let (dist, dist_info) = d.frame;
        let rf = self.map_for_engine(&w.buffer, &w.info)?;
        let df = self.map_for_engine(&dist, &dist_info)?;
        let (rf, df) = (rf.as_video_frame_ref(), df.as_video_frame_ref());
        self.check_frames(rf.info(), df.info(), name)?;
        // Paired by content, each distorted frame is scored once (a
        // repeat in content is a duplicate); by time, the same picture
        // may be scored again.
        let aligned = self.aligning.load(Ordering::Relaxed);
        self.note_pairing(name, (!aligned).then_some(d.at))?;
        let replay = BufferReplay::of(&rf, &df, (&w.buffer, &dist));
        let keep: KeepAlive = Box::new((w.buffer.clone(), dist));
        let timing = FrameTiming {
            pts: w.pts,
            duration: w.duration,
            reference: Some(w.reference),
        };
        self.score(name, &rf, &df, (Some(keep), replay), timing)?
            .map_err(|err| {
                gst::element_imp_error!(
                    self,
                    gst::StreamError::Failed,
                    ("VMAF failed on {name}: {err}"),
                    ["while scoring a frame that waited"]
                );
                gst::FlowError::Error
            })
    }

    /// A reference frame not scored: its distorted frame did not come
    /// within `max-pending`. Counted, with one warning per input.
    pub(super) fn note_late(
        &self,
        name: &str,
        w: &WaitingRef,
        waited: gst::ClockTime,
        bound: gst::ClockTime,
    ) -> Result<(), gst::FlowError> {
        let warn = {
            let mut guard = self.state.lock().unwrap();
            let st = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
            st.rendition(name).is_some_and(|r| {
                r.pairings.late();
                !std::mem::replace(&mut r.late_warned, true)
            })
        };
        self.post_late(name, 1);
        gst::info!(
            CAT,
            imp = self,
            "{name}: no frame for {} after {waited}: not scored",
            w.pts.display()
        );
        if warn {
            gst::element_imp_warning!(
                self,
                gst::StreamError::Failed,
                (
                    "{name}: no distorted frame for the reference frame at {} within max-pending ({bound}; it waited {waited}, {} more): not scored; raise max-pending if the distorted branch is that late",
                    w.pts.display(),
                    waited.saturating_sub(bound)
                ),
                ["the distorted branch is later than max-pending"]
            );
        }
        Ok(())
    }

    /// The reference has ended: the frames still waiting get their
    /// distorted frames as they arrive, until each input has ended or
    /// `max-pending` has passed (then they are not scored).
    pub(super) fn finish_late(&self) -> Result<(), gst::FlowError> {
        let start = std::time::Instant::now();
        let last = self
            .state
            .lock()
            .unwrap()
            .as_ref()
            .and_then(|st| st.last_ref)
            .unwrap_or_default();
        loop {
            let now = last + gst::ClockTime::try_from(start.elapsed()).unwrap_or_default();
            let mut waiting = 0;
            let mut msgs = Vec::new();
            for pad in self.distorted_pads() {
                let name = pad.name();
                if self.aligning.load(Ordering::Relaxed) {
                    let (m, held) = self.finish_aligned(&pad, now)?;
                    msgs.extend(m);
                    waiting += held;
                    continue;
                }
                self.take_arrived(&pad, None);
                msgs.extend(self.score_ready(&name, now, has_ended(&pad))?);
                if let Some(r) = self
                    .state
                    .lock()
                    .unwrap()
                    .as_mut()
                    .and_then(|st| st.rendition(&name))
                {
                    waiting += r.late.waiting();
                }
            }
            self.post_scored(&msgs);
            if waiting == 0 || self.ref_pad.pad_flags().contains(gst::PadFlags::FLUSHING) {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// A live deadline passed with no reference frame queued: whether to
    /// wait for it (up to `max-pending` from that deadline), so
    /// that a late reference frame is scored rather than passed over. The
    /// caller returns to the aggregator meanwhile, which handles the
    /// pads' events and queries (a new stream's caps and allocation
    /// query come before its first frame, and wait for that).
    pub(super) fn awaiting_reference(&self) -> bool {
        let mut since = self.reference_awaited.lock().unwrap();
        if !self.holds_late_frames(self.dist_pad.upcast_ref())
            || self.ref_pad.has_buffer()
            || has_ended(&self.ref_pad)
            || self.ref_pad.pad_flags().contains(gst::PadFlags::FLUSHING)
        {
            *since = None;
            return false;
        }
        let bound = std::time::Duration::from_nanos(self.max_pending().nseconds());
        let waiting = since.get_or_insert_with(std::time::Instant::now).elapsed() < bound;
        if !waiting {
            // Given up on this one: the next deadline waits afresh.
            *since = None;
        }
        waiting
    }
}
