//! Reference frames a live aggregator let go: they came after their time,
//! because the station was held up (a busy machine, a slow first frame on
//! the GPU) or because a demuxer gave a burst of them one timestamp. Each
//! is still a reference frame: counted in the reference's timeline and,
//! where the element aligns by content, given to the trackers like any
//! other (they pair by content, not by time, so that frames that came late
//! together are paired as they were sent); else counted late.

use super::super::align::thumb_of_buffer;
use super::super::late::{Arrived, Timed, WaitingRef};
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
    /// whether `current` was seen arriving since the last call (a new
    /// frame, whatever its timestamp).
    pub(super) fn take_passed_over(
        &self,
        current: Option<&gst::Buffer>,
    ) -> Result<(Vec<VmafFrameMessage>, bool), gst::FlowError> {
        let Some(pad) = self.ref_pad.downcast_ref::<VmafHipPad>() else {
            return Ok((Vec::new(), false));
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
        let (buffer, info) = frame.frame;
        let Some(thumb) = thumb_of_buffer(&buffer, &info, self.gpu_input().as_deref()) else {
            return Err(self.unreadable_reference());
        };
        let waiting = Timed {
            at: frame.at,
            duration: frame.duration,
            frame: WaitingRef {
                buffer,
                info,
                pts: Some(frame.at),
                duration: frame.duration,
                reference: 0,
                copied: false,
            },
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
        let names: Vec<String> = self
            .state
            .lock()
            .unwrap()
            .as_mut()
            .map(|st| {
                st.renditions
                    .iter_mut()
                    .map(|r| {
                        r.pairings.late();
                        r.name.clone()
                    })
                    .collect()
            })
            .unwrap_or_default();
        for name in names {
            self.post_late(&name, 1);
        }
    }

    /// At the end: the reference frames that came after the last one
    /// aggregated (a stream's last frame, which its demuxer gives up only
    /// at the EOS, comes so), counted late with any lost before them.
    pub(super) fn count_passed_over_at_end(&self) {
        let Some(pad) = self.ref_pad.downcast_ref::<VmafHipPad>() else {
            return;
        };
        let (passed, _) = pad.imp().take_passed_over(None);
        let mut late = Vec::new();
        if let Some(st) = self.state.lock().unwrap().as_mut() {
            for r in &mut st.renditions {
                let frames: u64 = passed
                    .iter()
                    .map(|f| r.pairings.passed_over(f.at, f.duration))
                    .sum();
                late.push((r.name.clone(), frames));
            }
        }
        for (name, frames) in late {
            self.post_late(&name, frames);
        }
    }
}
