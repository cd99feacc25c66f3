//! Gaps in a live input (see [`crate::element::gap`]): reported once, when
//! the input comes back, by each rendition that saw it; with `align=auto`
//! its tracker searches the offset again.

use super::{CAT, VmafHip};
use crate::element::gap::{Gap, LATE_EVENT, Missed};
use gst::subclass::prelude::*;

impl VmafHip {
    /// `missed`, a gap of `input` (`reference` or `distorted`) seen by
    /// rendition `name`: the tracker told to search again; returns the gap
    /// to report once the state is unlocked ([`VmafHip::report_gaps`]).
    pub(super) fn gap_seen(
        rendition: &mut crate::element::rendition::Rendition,
        input: &str,
        missed: Missed,
    ) -> Gap {
        if let Some(t) = rendition.aligner.as_mut() {
            t.realign();
            rendition.realigned = true;
        }
        if let Some(m) = &rendition.metrics {
            m.gap(&rendition.name, missed.length.nseconds() as f64 / 1e9);
        }
        Gap {
            input: input.to_string(),
            missed,
            rendition: rendition.name.clone(),
            label: rendition.label.clone(),
        }
    }

    /// Posts a `late-frames` message: `frames` reference frames of
    /// rendition `name` not scored because they came too late.
    pub(super) fn post_late(&self, name: &str, frames: u64) {
        if frames > 0 {
            self.post(
                gst::Structure::builder(LATE_EVENT)
                    .field("frames", frames)
                    .field("rendition", name)
                    .build(),
            );
        }
    }

    /// Reports gaps: logged, posted as `gap` messages, and written to the
    /// renditions' JSON Lines results.
    pub(super) fn report_gaps(&self, gaps: Vec<Gap>) -> Result<(), gst::FlowError> {
        for g in gaps {
            gst::info!(
                CAT,
                imp = self,
                "{}: the {} input had a gap of {} from {}: {} frames",
                g.rendition,
                g.input,
                g.missed.length,
                g.missed.start,
                g.missed.frames
            );
            let written = {
                let mut guard = self.state.lock().unwrap();
                match guard.as_mut().and_then(|st| st.rendition(&g.rendition)) {
                    Some(r) => r.write_gap(&g),
                    None => Ok(()),
                }
            };
            if let Err(e) = written {
                self.post_error_message(e);
                return Err(gst::FlowError::Error);
            }
            self.post(gst::Structure::from(&g));
        }
        Ok(())
    }
}
