//! Live pipelines with `max-pending`: reference frames wait for their late
//! distorted frames instead of being scored against whatever the distorted
//! pad holds at their deadline.
//!
//! The reference passes through on time; each reference frame is kept
//! (in order, since temporal features need the frames in sequence) until
//! the distorted frame shown at its time has arrived, and is scored then,
//! its message posted late with its own timestamp. The distorted frame
//! shown at running time `t` is the last one that starts by `t` (with a
//! millisecond's slack for rounded timestamps). It is known once a
//! later distorted frame has arrived, once this one is known to last past
//! `t`, or once the input has ended. A reference frame that waits longer
//! than the bound (running time of the newest reference frame minus its
//! own) is not scored.

use std::collections::VecDeque;

/// A distorted frame and its video.
pub(super) type Arrived = (gst::Buffer, gst_video::VideoInfo);

/// A reference frame waiting for its distorted frame: the buffer (a copy
/// once it waits: no upstream buffer is held), its video, its output
/// timing and its number among the reference frames.
#[derive(Clone, Debug)]
pub(super) struct WaitingRef {
    pub buffer: gst::Buffer,
    pub info: gst_video::VideoInfo,
    pub pts: Option<gst::ClockTime>,
    pub duration: Option<gst::ClockTime>,
    pub reference: u64,
    pub copied: bool,
}

impl WaitingRef {
    /// A reference frame as it came, numbered `reference`, with its
    /// output timing; still the upstream buffer.
    pub fn upstream(
        (buffer, info): (gst::Buffer, gst_video::VideoInfo),
        pts: Option<gst::ClockTime>,
        duration: Option<gst::ClockTime>,
        reference: u64,
    ) -> Self {
        Self {
            buffer,
            info,
            pts,
            duration,
            reference,
            copied: false,
        }
    }

    /// Holds a copy of its frame rather than the upstream buffer, once
    /// ([`super::hold::own_copy`]).
    pub fn own_copy(&mut self) {
        if !self.copied {
            super::hold::own_copy(&mut self.buffer);
            self.copied = true;
        }
    }
}

type Time = gst::ClockTime;

/// How much later than a reference frame a distorted frame may start and
/// still be taken as the one of its time (timestamps rounded on the way).
const SLACK: Time = Time::from_mseconds(1);

/// A frame with its running time and duration.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Timed<T> {
    pub at: Time,
    pub duration: Option<Time>,
    pub frame: T,
}

impl<T> Timed<T> {
    fn lasts_past(&self, t: Time) -> bool {
        self.duration.is_none_or(|d| self.at + d > t)
    }
}

/// What a waiting reference frame is scored against.
#[derive(Debug, PartialEq)]
pub(super) enum Paired<D> {
    /// The distorted frame shown at its time (fresh, or the same picture
    /// as the frame before: the distorted input dropped a frame).
    Frame(Timed<D>),
    /// None: the distorted input had not started, or had ended.
    Missing,
    /// None within the bound: it waited this long (running time).
    Late(Time),
}

/// One distorted input's reference frames waiting, and its distorted
/// frames not yet passed.
#[derive(Debug)]
pub(super) struct LateQueue<R, D> {
    waiting: VecDeque<Timed<R>>,
    arrived: VecDeque<Timed<D>>,
    /// The distorted frame before `arrived`'s first: what a viewer sees
    /// until the next one starts.
    shown: Option<Timed<D>>,
}

impl<R, D> Default for LateQueue<R, D> {
    fn default() -> Self {
        LateQueue {
            waiting: VecDeque::new(),
            arrived: VecDeque::new(),
            shown: None,
        }
    }
}

impl<R, D: Clone> LateQueue<R, D> {
    pub fn wait(&mut self, reference: Timed<R>) {
        self.waiting.push_back(reference);
    }

    /// A distorted frame, in the order of running time (the aggregator
    /// hands them over from more than one thread); one already here (the
    /// same running time) is not added again.
    pub fn arrive(&mut self, distorted: Timed<D>) {
        let k = self.arrived.partition_point(|a| a.at < distorted.at);
        if self.arrived.get(k).is_none_or(|a| a.at != distorted.at)
            && self.shown.as_ref().is_none_or(|s| s.at != distorted.at)
        {
            self.arrived.insert(k, distorted);
        }
    }

    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// The waiting reference frames, to replace their payloads (a copy
    /// that holds no upstream buffer).
    pub fn waiting_mut(&mut self) -> impl Iterator<Item = &mut Timed<R>> {
        self.waiting.iter_mut()
    }

    /// The oldest waiting reference frame with what it is scored against,
    /// once that is known: `now` is the newest reference frame's running
    /// time, `ended` whether the distorted input has ended.
    pub fn next(&mut self, now: Time, bound: Time, ended: bool) -> Option<(Timed<R>, Paired<D>)> {
        let head = self.waiting.front()?;
        let t = head.at + head.duration.map_or(SLACK, |d| SLACK.min(d / 2));
        while self.arrived.len() >= 2 && self.arrived[1].at <= t {
            self.shown = self.arrived.pop_front();
        }
        let paired = match self.arrived.front() {
            // Shown at its time, or (a gap in the distorted input) still
            // shown, as the next one starts later.
            Some(c) if c.at <= t && (c.lasts_past(head.at) || self.arrived.len() >= 2) => {
                Some(Paired::Frame(c.clone()))
            }
            Some(c) if c.at <= t => ended.then_some(Paired::Missing),
            // The distorted frame of this time never came (the input
            // dropped it): the one before is what was shown.
            Some(_) => Some(self.shown.clone().map_or(Paired::Missing, Paired::Frame)),
            None if ended => Some(
                self.shown
                    .clone()
                    .filter(|s| s.lasts_past(head.at))
                    .map_or(Paired::Missing, Paired::Frame),
            ),
            None => None,
        };
        let paired = paired.or_else(|| {
            let waited = now.saturating_sub(head.at);
            (waited > bound).then_some(Paired::Late(waited))
        })?;
        Some((self.waiting.pop_front()?, paired))
    }

    /// Every waiting reference frame, unpaired (a flush), and the
    /// distorted frames dropped.
    pub fn clear(&mut self) -> usize {
        let n = self.waiting.len();
        *self = LateQueue::default();
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Time {
        Time::from_mseconds(v)
    }

    fn at(v: u64) -> Timed<u64> {
        Timed {
            at: ms(v),
            duration: Some(ms(40)),
            frame: v,
        }
    }

    fn drain(q: &mut LateQueue<u64, u64>, now: u64, ended: bool) -> Vec<(u64, Option<u64>)> {
        let mut out = Vec::new();
        while let Some((r, p)) = q.next(ms(now), ms(1000), ended) {
            out.push((
                r.frame,
                match p {
                    Paired::Frame(d) => Some(d.frame),
                    _ => None,
                },
            ));
        }
        out
    }

    #[test]
    fn a_reference_frame_waits_for_its_late_distorted_frame() {
        let mut q = LateQueue::default();
        q.wait(at(0));
        q.wait(at(40));
        assert!(drain(&mut q, 40, false).is_empty());
        q.arrive(at(0));
        assert_eq!(drain(&mut q, 40, false), [(0, Some(0))]);
        q.arrive(at(40));
        assert_eq!(drain(&mut q, 80, false), [(40, Some(40))]);
        assert_eq!(q.waiting(), 0);
    }

    #[test]
    fn a_dropped_distorted_frame_is_the_one_before_it_shown_again() {
        let mut q = LateQueue::default();
        for t in [0, 40, 80] {
            q.wait(at(t));
        }
        q.arrive(at(0));
        q.arrive(at(80));
        assert_eq!(
            drain(&mut q, 80, false),
            [(0, Some(0)), (40, Some(0)), (80, Some(80))]
        );
    }

    #[test]
    fn no_distorted_frame_yet_or_any_more_is_missing() {
        let mut q = LateQueue::default();
        q.wait(at(0));
        q.arrive(at(40));
        q.wait(at(40));
        assert_eq!(drain(&mut q, 40, false), [(0, None), (40, Some(40))]);
        q.wait(at(80));
        q.wait(at(120));
        assert!(drain(&mut q, 120, false).is_empty());
        // Ended: the last frame lasts until 80, so 80 and 120 have none.
        assert_eq!(drain(&mut q, 120, true), [(80, None), (120, None)]);
    }

    #[test]
    fn frames_handed_over_out_of_order_are_put_in_order_once() {
        let mut q = LateQueue::default();
        q.wait(at(0));
        q.wait(at(40));
        for t in [40, 0, 40] {
            q.arrive(at(t));
        }
        assert_eq!(drain(&mut q, 40, false), [(0, Some(0)), (40, Some(40))]);
    }

    #[test]
    fn past_the_bound_a_reference_frame_is_late() {
        let mut q: LateQueue<u64, u64> = LateQueue::default();
        q.wait(at(0));
        assert!(q.next(ms(1000), ms(1000), false).is_none());
        let (r, p) = q.next(ms(1040), ms(1000), false).unwrap();
        assert_eq!((r.frame, p), (0, Paired::Late(ms(1040))));
    }

    #[test]
    fn a_faster_distorted_input_gives_the_frame_shown_at_the_time() {
        // Distorted at 20 ms a frame: the reference frame at 40 ms gets
        // the distorted frame of 40 ms.
        let mut q = LateQueue::default();
        q.wait(at(40));
        let d = |v, duration| Timed {
            at: ms(v),
            duration,
            frame: v,
        };
        for v in [0, 20] {
            q.arrive(d(v, Some(ms(20))));
        }
        assert!(drain(&mut q, 40, false).is_empty());
        q.arrive(d(40, Some(ms(20))));
        assert_eq!(drain(&mut q, 40, false), [(40, Some(40))]);
        // One with no duration is taken to last.
        q.wait(at(80));
        q.arrive(d(80, None));
        assert_eq!(drain(&mut q, 80, false), [(80, Some(80))]);
    }
}
