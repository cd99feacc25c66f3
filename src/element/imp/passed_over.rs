//! Reference frames a live aggregator let go: they came after their time,
//! because the station was held up (a busy machine, a slow first frame on
//! the GPU) or because a demuxer gave a burst of them one timestamp. Each
//! is still a reference frame: counted in the reference's timeline and,
//! where the element aligns by content, given to the trackers like any
//! other (they pair by content, not by time, so that frames that came late
//! together are paired as they were sent); else counted late.

use super::super::align::thumb_of_buffer;
use super::super::late::{Arrived, Timed, WaitingRef};
use super::super::live::Pairings;
use super::{CAT, VmafHip};
use crate::element::VmafFrameMessage;
use crate::element::pad::VmafHipPad;
use gst::prelude::*;
use gst::subclass::prelude::*;
use std::sync::atomic::Ordering;

impl VmafHip {
    /// Whether `pad`'s frames are kept as they arrive: a live reference's.
    pub(crate) fn records_arrivals(&self, pad: &gst::Pad) -> bool {
        pad == self.ref_pad.upcast_ref::<gst::Pad>() && self.live.load(Ordering::Relaxed)
    }

    /// The reference frames that arrived before `current` (the one being
    /// aggregated) and were let go, each counted and then paired by
    /// content or counted late. Returns the messages of frames scored, and
    /// where `current` was seen arriving since the last call (a new frame,
    /// whatever its timestamp), its running time as it came.
    pub(super) fn take_passed_over(
        &self,
        current: Option<&gst::Buffer>,
    ) -> Result<(Vec<VmafFrameMessage>, Option<gst::ClockTime>), gst::FlowError> {
        let Some(pad) = self.ref_pad.downcast_ref::<VmafHipPad>() else {
            return Ok((Vec::new(), None));
        };
        let (passed, arrived) = pad.imp().take_passed_over(current);
        let mut msgs = Vec::new();
        for frame in passed {
            gst::debug!(
                CAT,
                imp = self,
                "the reference frame at {} came after its time",
                frame.at
            );
            self.new_reference(Some(frame.at), frame.duration)?;
            if self.aligning.load(Ordering::Relaxed) {
                msgs.extend(self.align_passed_over(frame)?);
            } else {
                self.count_late_reference();
            }
        }
        Ok((msgs, arrived))
    }

    /// A reference frame let go, given to every rendition's tracker.
    fn align_passed_over(
        &self,
        frame: Timed<Arrived>,
    ) -> Result<Vec<VmafFrameMessage>, gst::FlowError> {
        let (buffer, info) = &frame.frame;
        let Some(thumb) = thumb_of_buffer(buffer, info, self.gpu_input().as_deref()) else {
            return Err(self.unreadable_reference());
        };
        let waiting = Timed {
            at: frame.at,
            duration: frame.duration,
            frame: WaitingRef::upstream(frame.frame, Some(frame.at), frame.duration, 0),
        };
        let mut msgs = Vec::new();
        for pad in self.distorted_pads() {
            if self.ensure_rendition(&pad)? {
                msgs.extend(self.align_reference(waiting.clone(), &thumb, &pad)?);
            }
        }
        Ok(msgs)
    }

    /// A reference frame let go where frames are paired by time: late in
    /// every rendition.
    fn count_late_reference(&self) {
        self.count_late_in_renditions(|pairings| {
            pairings.late();
            1
        });
    }

    /// At the end: the reference frames that came after the last one
    /// aggregated (a stream's last frame, which its demuxer gives up only
    /// at the EOS, comes so), counted late with any lost before them.
    pub(super) fn count_passed_over_at_end(&self) {
        let Some(pad) = self.ref_pad.downcast_ref::<VmafHipPad>() else {
            return;
        };
        let (passed, _) = pad.imp().take_passed_over(None);
        self.count_late_in_renditions(|pairings| {
            passed
                .iter()
                .map(|f| pairings.passed_over(f.at, f.duration))
                .sum()
        });
    }

    /// Counts late frames in every rendition's pairings (`count` returns
    /// how many), then posts each rendition's late message.
    fn count_late_in_renditions(&self, mut count: impl FnMut(&mut Pairings) -> u64) {
        let late: Vec<(String, u64)> = match self.state.lock().unwrap().as_mut() {
            Some(st) => st
                .renditions
                .iter_mut()
                .map(|r| (r.name.clone(), count(&mut r.pairings)))
                .collect(),
            None => Vec::new(),
        };
        for (name, frames) in late {
            self.post_late(&name, frames);
        }
    }
}
