//! Live pipelines: how long the element waits for the distorted branch, and
//! how each reference frame was paired.
//!
//! In a live pipeline GstAggregator aggregates once a frame's deadline has
//! passed (its running time plus the pipeline's latency), with whatever the
//! pads hold: a distorted frame that is not there yet is missing, and
//! GstVideoAggregator hands over the distorted pad's last picture instead.
//! An encoder and decoder report their usual latency, which the aggregator
//! already waits for; but an encoder's first frame takes much longer than
//! the next ones, and a loaded machine makes frames late now and then. So,
//! unless `late-frame-wait` is 0, the element:
//! - widens every deadline by `late-frame-wait` (three frames' time by
//!   default), reported as its own latency so that sinks allow for it;
//! - at start-up, waits for the distorted branch's first frame (up to
//!   [`FIRST_FRAME_WAIT`]), then adds what that frame took beyond its
//!   deadline to its latency, so that the frames queued behind it are not
//!   late as well.
//!
//! Every reference frame is counted once: scored against a fresh distorted
//! frame, against a repeated one (the distorted pad's last picture, as a
//! viewer sees it), or not scored (no distorted frame yet, or any more).

use super::gap::Missed;
use gst::prelude::*;
use gst_base::prelude::*;
use std::time::{Duration, Instant};

/// The longest wait for the distorted branch's first frame.
pub(super) const FIRST_FRAME_WAIT: Duration = Duration::from_secs(10);

/// `late-frame-wait`'s default: three frames' time, and at least
/// [`LATE_WAIT_FLOOR`] (a scheduling hiccup lasts as long at any rate).
const LATE_FRAMES: u64 = 3;
const LATE_WAIT_FLOOR: gst::ClockTime = gst::ClockTime::from_mseconds(40);

/// `late-frame-wait` when the frame rate is unknown (or variable).
const LATE_WAIT_UNKNOWN_RATE: gst::ClockTime = gst::ClockTime::from_mseconds(100);

/// The wait for a late distorted frame that `late-frame-wait` asks for
/// (nanoseconds; -1: three frames' time at `fps`, at least 40 ms).
pub(super) fn late_frame_wait(setting: i64, fps: Option<gst::Fraction>) -> gst::ClockTime {
    if setting >= 0 {
        return gst::ClockTime::from_nseconds(setting as u64);
    }
    match fps {
        Some(f) if f.numer() > 0 && f.denom() > 0 => gst::ClockTime::SECOND
            .mul_div_round(LATE_FRAMES * f.denom() as u64, f.numer() as u64)
            .map_or(LATE_WAIT_UNKNOWN_RATE, |w| w.max(LATE_WAIT_FLOOR)),
        _ => LATE_WAIT_UNKNOWN_RATE,
    }
}

/// How the reference frames of a stream were paired.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pairing {
    /// Scored against a distorted frame not scored before.
    pub fresh: u64,
    /// Scored against the distorted picture of an earlier frame.
    pub repeated: u64,
    /// Passed through with no distorted frame to score against, or
    /// dropped by the aggregator (its time had passed: the reference pad
    /// was late beyond the wait).
    pub unscored: u64,
    /// Distorted frames that reached the pad in the segment.
    pub distorted: u64,
    /// The distorted input went on past the reference's end: frames that
    /// no reference frame was scored against.
    pub distorted_past_end: bool,
    /// `align`: reference frames the distorted input dropped (not scored),
    /// and distorted frames that repeat the one before (scored against the
    /// same reference frame, counted in `fresh` too).
    pub dropped: u64,
    pub duplicated: u64,
    /// Of the unscored reference frames, those lost to late delivery on
    /// this machine: a reference frame that came after its deadline (the
    /// aggregator let it go), or one whose distorted frame had not come
    /// within `max-pending`. Load here, not the distorted input's fault.
    pub late: u64,
}

impl Pairing {
    /// Reference frames in the segment: scored, or not.
    pub fn reference(&self) -> u64 {
        (self.fresh + self.repeated + self.unscored + self.dropped).saturating_sub(self.duplicated)
    }

    /// Whether one input ended before the other: reference frames with no
    /// distorted frame, or distorted frames past the reference's end.
    pub fn lengths_differ(&self) -> bool {
        self.unscored > 0 || self.distorted_past_end
    }
}

/// Follows the distorted frames a stream's reference frames are paired with.
#[derive(Debug, Default)]
pub(super) struct Pairings {
    pub counts: Pairing,
    /// Running time of the distorted frame last scored.
    last: Option<gst::ClockTime>,
    /// Running time and duration of the reference frame last seen.
    last_reference: Option<(gst::ClockTime, gst::ClockTime)>,
    /// The distorted branch delivered a frame, or its first frame was
    /// waited for in vain: no start-up wait any more.
    started: bool,
}

impl Pairings {
    /// A reference frame scored against the distorted frame at running
    /// time `dist` (None: unknown, counted fresh).
    pub fn scored(&mut self, dist: Option<gst::ClockTime>) {
        self.started = true;
        if dist.is_some() && dist == self.last {
            self.counts.repeated += 1;
        } else {
            self.counts.fresh += 1;
        }
        self.last = dist;
    }

    pub fn unscored(&mut self) {
        self.counts.unscored += 1;
    }

    /// A reference frame not scored because it, or its distorted frame,
    /// came too late.
    pub fn late(&mut self) {
        self.counts.unscored += 1;
        self.counts.late += 1;
    }

    pub fn dropped(&mut self) {
        self.counts.dropped += 1;
    }

    pub fn duplicated(&mut self) {
        self.counts.duplicated += 1;
    }

    /// A new reference frame at running time `at` lasting `duration`:
    /// the frames missing since the last one, returned. Those of a short
    /// hole (lost in delivery) are counted late; those of a gap are not
    /// counted (the source sent none, or they come later with new
    /// timestamps and are counted then).
    pub fn reference(
        &mut self,
        at: Option<gst::ClockTime>,
        duration: Option<gst::ClockTime>,
    ) -> Missed {
        let missed = match (self.last_reference, at) {
            (Some(last), Some(at)) => Missed::between(last, at),
            _ => Missed::default(),
        };
        if !missed.is_gap() {
            self.counts.unscored += missed.frames;
            self.counts.late += missed.frames;
        }
        self.last_reference = at.zip(duration);
        missed
    }

    /// A reference frame at `at` that the aggregator let go (it came
    /// after its time): it and the frames lost in delivery before it
    /// counted as late; how many.
    pub fn passed_over(&mut self, at: gst::ClockTime, duration: Option<gst::ClockTime>) -> u64 {
        let missed = self.reference(Some(at), duration);
        self.late();
        if missed.is_gap() {
            1
        } else {
            missed.frames + 1
        }
    }

    /// Whether a reference frame waits for the distorted branch's first frame.
    pub fn awaiting_first(&self) -> bool {
        !self.started
    }

    /// The first frame was waited for (whether it came or not).
    pub fn start(&mut self) {
        self.started = true;
    }
}

/// What waiting for the distorted branch's first frame gave.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum FirstFrame {
    /// It came after this long.
    Came(Duration),
    /// The branch ended, or the element is flushing or stopping.
    Stopped,
    /// Not within [`FIRST_FRAME_WAIT`].
    TimedOut,
}

/// Waits until `dist` holds a buffer, polling every 2 ms: stops when it
/// ends, when any of `pads` flushes (a flushing seek, a state change: the
/// aggregator's task must be free to stop), or after [`FIRST_FRAME_WAIT`].
pub(super) fn wait_for_first_frame(
    dist: &gst_base::AggregatorPad,
    pads: &[gst::Pad],
) -> FirstFrame {
    let start = Instant::now();
    loop {
        if dist.has_buffer() {
            return FirstFrame::Came(start.elapsed());
        }
        let flushing = pads
            .iter()
            .any(|p| p.pad_flags().contains(gst::PadFlags::FLUSHING));
        if dist.is_eos() || flushing {
            return FirstFrame::Stopped;
        }
        if start.elapsed() >= FIRST_FRAME_WAIT {
            return FirstFrame::TimedOut;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_wait_is_three_frames() {
        let at = |n, d| Some(gst::Fraction::new(n, d));
        assert_eq!(
            late_frame_wait(-1, at(30, 1)),
            gst::ClockTime::from_mseconds(100)
        );
        assert_eq!(late_frame_wait(-1, at(60000, 1001)).nseconds(), 50_050_000);
        assert_eq!(late_frame_wait(-1, at(2000, 1)), LATE_WAIT_FLOOR);
        assert_eq!(late_frame_wait(-1, at(0, 1)), LATE_WAIT_UNKNOWN_RATE);
        assert_eq!(late_frame_wait(-1, None), LATE_WAIT_UNKNOWN_RATE);
        assert_eq!(late_frame_wait(0, at(30, 1)), gst::ClockTime::ZERO);
        assert_eq!(
            late_frame_wait(5_000_000, at(30, 1)),
            gst::ClockTime::from_mseconds(5)
        );
    }

    #[test]
    fn a_distorted_frame_scored_again_counts_as_repeated() {
        let mut p = Pairings::default();
        assert!(p.awaiting_first());
        p.unscored();
        let t = |ms| Some(gst::ClockTime::from_mseconds(ms));
        for dist in [t(0), t(40), t(40), t(40), t(120), None, None] {
            p.scored(dist);
        }
        assert!(!p.awaiting_first());
        // References 40 ms apart, then one 160 ms on: three came too late
        // (the aggregator let them go), or never.
        let d = Some(gst::ClockTime::from_mseconds(40));
        for at in [0, 40, 80] {
            assert_eq!(p.reference(t(at), d).frames, 0);
        }
        assert_eq!(p.reference(t(240), d).frames, 3);
        assert_eq!(
            p.counts,
            Pairing {
                fresh: 5,
                repeated: 2,
                unscored: 4,
                late: 3,
                ..Pairing::default()
            }
        );
    }

    #[test]
    fn a_reference_frame_passed_over_is_late_with_the_frames_lost_before_it() {
        let mut p = Pairings::default();
        let ms = gst::ClockTime::from_mseconds;
        let d = Some(ms(40));
        for at in [0, 40, 80] {
            p.reference(Some(ms(at)), d);
        }
        // The frame after the last (at 120 ms) lost, the one at 160 ms
        // passed over.
        assert_eq!(p.passed_over(ms(160), d), 2);
        assert_eq!((p.counts.unscored, p.counts.late), (2, 2));
        // Another with the same timestamp (a demuxer's after a burst).
        assert_eq!(p.passed_over(ms(160), d), 1);
        // One after a gap: the gap's frames are not counted.
        assert_eq!(p.passed_over(ms(2160), d), 1);
        assert_eq!((p.counts.unscored, p.counts.late), (4, 4));
    }
}
