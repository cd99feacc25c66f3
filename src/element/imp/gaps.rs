//! Gaps in a live input (see [`crate::element::gap`]): reported once, when
//! the input comes back, by each rendition that saw it; with `align=auto`
//! its tracker searches the offset again.

use super::{CAT, VmafHip};
use crate::element::gap::{Gap, LATE_EVENT, Missed};
use crate::element::rendition::Rendition;
use gst::subclass::prelude::*;

/// How much of the other input is kept for the new search, before where
/// the gap's input came back (less the lag it had): half the default
/// search's reach, so that a transcoder back with about its old lag, or
/// up to a second more or less, is found.
const KEPT: gst::ClockTime = gst::ClockTime::from_seconds(1);

/// The frames that a gap passed by: those of the other input more than
/// [`KEPT`] before where the input came back (at running time `back`), by
/// the lag at the last pair, and, after a gap of the distorted input, its
/// own frames held from before the gap (they show another run of the
/// reference than the frames after it, and the new search starts after
/// the gap). Those held are let go now, those of the other input still to
/// come as they come ([`Rendition::passed_by`]). Returns how many
/// reference frames (not scored: late) and distorted frames went now.
fn passed_by(r: &mut Rendition, reference_gap: bool, back: gst::ClockTime) -> (u64, usize) {
    let lag = r.lag;
    let Some(t) = r.aligner.as_mut() else {
        return (0, 0);
    };
    let before_gap = if reference_gap {
        0
    } else {
        t.shed_distorted_while(|d| d.at < back)
    };
    let Some(lag) = lag else {
        return (0, before_gap);
    };
    let cut =
        |shift: i64| gst::ClockTime::from_nseconds((back.nseconds() as i64 + shift).max(0) as u64);
    if reference_gap {
        // The distorted frames that show reference frames before `back`.
        let cut = cut(lag - KEPT.nseconds() as i64);
        r.passed_by.distorted = Some(cut);
        (0, t.shed_distorted_while(|d| d.at < cut))
    } else {
        // The reference frames shown by distorted frames before `back`.
        let cut = cut(-lag - KEPT.nseconds() as i64);
        r.passed_by.reference = Some(cut);
        let gone = t.give_up_references_while(|w| w.at < cut);
        (gone.len() as u64, before_gap)
    }
}

impl VmafHip {
    /// `missed`, a gap of `input` (`reference` or `distorted`) seen by
    /// `rendition` when the input's frame at running time `back` came:
    /// the tracker told to search again, and the other input's frames
    /// that the gap passed by let go; returns the gap to report once the
    /// state is unlocked ([`VmafHip::report_gaps`]), with the reference
    /// frames it passed by (late).
    pub(super) fn gap_seen(
        rendition: &mut Rendition,
        input: &str,
        missed: Missed,
        back: gst::ClockTime,
    ) -> (Gap, u64) {
        let mut passed = 0;
        if let Some(t) = rendition.aligner.as_mut() {
            t.realign();
            rendition.realigned = true;
            let (late, shed) = passed_by(rendition, input == "reference", back);
            rendition.pairings.counts.unscored += late;
            rendition.pairings.counts.late += late;
            passed = late;
            gst::debug!(
                CAT,
                "{}: after the gap, {late} reference and {shed} distorted frames it passed by let go",
                rendition.name
            );
        }
        if let Some(m) = &rendition.metrics {
            m.gap(&rendition.name, missed.length.nseconds() as f64 / 1e9);
        }
        let gap = Gap {
            input: input.to_string(),
            missed,
            rendition: rendition.name.clone(),
            label: rendition.label.clone(),
        };
        (gap, passed)
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
    pub(super) fn report_gaps(&self, gaps: Vec<(Gap, u64)>) -> Result<(), gst::FlowError> {
        for (g, late) in gaps {
            self.post_late(&g.rendition, late);
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
