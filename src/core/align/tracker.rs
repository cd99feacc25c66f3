//! The tracker: which reference frame each distorted frame shows, frame by
//! frame, once the start's offset is known (see the module above).

use super::drift::Drift;
use super::{BETTER, Found, Thumb, best_offset, cost, difference};
use std::collections::VecDeque;

/// What the tracker decided about the oldest frames it holds.
#[derive(Debug, PartialEq)]
pub enum Step<R, D> {
    /// The offset found at start (once, before any other step).
    Aligned(Found),
    /// A distorted frame and the reference frame it shows; `duplicate`:
    /// it shows the frame the distorted frame before it showed.
    Pair {
        reference: R,
        distorted: D,
        duplicate: bool,
    },
    /// A reference frame the distorted input dropped: not scored.
    Dropped(R),
    /// The pairs stopped showing the reference frames they were paired
    /// with (an offset found on broken pictures, a delay that changed by
    /// more than a few frames without a gap): the offset is now `found`,
    /// `by` frames from where the pairs were (> 0: the distorted frames
    /// show later reference frames). The frames passed over follow, not
    /// scored: `by` reference frames as unpaired ones, or -`by` distorted
    /// frames (they show frames already paired) as leading ones.
    Shifted { found: Found, by: i32 },
    /// A reference frame before the distorted input's first frame (a
    /// trimmed start): not scored.
    LeadingReference(R),
    /// A distorted frame before the reference's first frame (an encoder's
    /// leading frames): not scored.
    LeadingDistorted(D),
    /// A reference frame no distorted frame shows (after the distorted
    /// input's last, or passed over by a shift): not scored.
    Unpaired(R),
    /// A distorted frame after the reference's last: not scored.
    Extra(D),
    /// A reference frame lost before it reached the tracker (numbered
    /// `reference`: it arrived too late on this machine, or not at all),
    /// and the distorted frame that shows it, when there is one: neither
    /// is scored, and no drop or duplicate is made of the gap.
    Lost {
        reference: u64,
        distorted: Option<D>,
    },
}

/// A reference frame held: its thumbnail, payload and number in the
/// order frames came ([`Drift`]), or the number of a frame lost in
/// delivery, with the thumbnail of the frame before it (the start's search
/// compares it in the lost frame's place).
#[derive(Debug)]
enum Held<R> {
    Frame(Thumb, R, u64),
    Lost(u64, Thumb),
}

impl<R> Held<R> {
    fn thumb(&self) -> &Thumb {
        match self {
            Held::Frame(t, ..) | Held::Lost(_, t) => t,
        }
    }

    fn is_frame(&self) -> bool {
        matches!(self, Held::Frame(..))
    }

    /// The step for this reference frame when it has no distorted frame:
    /// `made` for a frame, a loss for a lost one.
    fn alone<D>(self, made: impl FnOnce(R) -> Step<R, D>) -> Step<R, D> {
        match self {
            Held::Frame(_, r, _) => made(r),
            Held::Lost(n, _) => Step::Lost {
                reference: n,
                distorted: None,
            },
        }
    }
}

/// How far the tracker looks: in frames.
#[derive(Clone, Copy, Debug)]
pub struct Reach {
    /// The start's search window: ±frames.
    pub search: usize,
    /// The reference frames compared at each offset at start.
    pub span: usize,
    /// The most frames in a row a distorted input may drop and still be
    /// followed.
    pub drops: usize,
}

impl Reach {
    /// The reach for `search_s` seconds at `fps` frames a second: a span of
    /// a second (at least 8 frames) and drops of up to a fifth of a second
    /// (at least 4 frames).
    pub fn for_rate(fps: f64, search_s: f64) -> Reach {
        let fps = if fps.is_finite() && fps > 0.0 {
            fps
        } else {
            25.0
        };
        Reach {
            search: (search_s * fps).round().max(0.0) as usize,
            span: fps.round().max(8.0) as usize,
            drops: (fps / 5.0).round().max(4.0) as usize,
        }
    }
}

/// A pair's difference is unusual above this many times the typical one
/// (and [`UNUSUAL_FLOOR`] more): the tracker then looks around.
const UNUSUAL: f64 = 2.0;
const UNUSUAL_FLOOR: f64 = 0.5;
/// The pairs' differences the typical one is the median of.
const TYPICAL_OF: usize = 15;

/// Follows which reference frame each distorted frame shows (see the
/// module's text). `R` and `D` are the frames' payloads; a duplicate pair
/// gives its reference payload again (`R: Clone`).
#[derive(Debug)]
pub struct Tracker<R, D> {
    reach: Reach,
    refs: VecDeque<Held<R>>,
    dists: VecDeque<(Thumb, D)>,
    found: Option<Found>,
    told: bool,
    /// The reference frame last paired, for a duplicate.
    last: Option<(Thumb, R)>,
    /// Reference frames still to report dropped before the next pair.
    dropping: usize,
    /// Leading frames still to skip: distorted ones (> 0) or reference
    /// ones (< 0).
    leading: i32,
    recent: VecDeque<f64>,
    ref_ended: bool,
    dist_ended: bool,
    /// The offset was given: it is kept across gaps.
    given: bool,
    drift: Drift,
    /// A shift found by the drift check, to tell: the new offset, and by
    /// how much it moved the pairs.
    shifted: Option<(Found, i32)>,
    /// The frames `leading` skips are passed over by a shift, not before
    /// the other input's first.
    passing: bool,
}

impl<R: Clone, D> Tracker<R, D> {
    pub fn new(reach: Reach) -> Self {
        Tracker {
            reach,
            refs: VecDeque::new(),
            dists: VecDeque::new(),
            found: None,
            told: false,
            last: None,
            dropping: 0,
            leading: 0,
            recent: VecDeque::new(),
            ref_ended: false,
            dist_ended: false,
            given: false,
            drift: Drift::new(reach.search, reach.span),
            shifted: None,
            passing: false,
        }
    }

    /// Starts with a known offset: no search (its first step says it, with
    /// confidence 1).
    pub fn with_offset(reach: Reach, offset: i32) -> Self {
        let mut t = Self::new(reach);
        t.found = Some(Found {
            offset,
            confidence: 1.0,
        });
        t.leading = offset;
        t.given = true;
        t
    }

    /// An input had a gap (a stall, a reconnect): the offset is searched
    /// again over the frames held and those to come, unless it was given.
    /// Frames lost in the gap cannot be compared and are let go (they were
    /// counted where the gap was seen).
    pub fn realign(&mut self) {
        self.refs.retain(Held::is_frame);
        if self.given {
            return;
        }
        self.found = None;
        self.told = false;
        self.leading = 0;
        self.dropping = 0;
        self.last = None;
        self.shifted = None;
        self.passing = false;
        self.drift.forget_pairs();
    }

    /// The oldest reference frames for which `gone` holds (a gap of the
    /// distorted input passed them by), given up: not scored.
    pub fn give_up_references_while(&mut self, gone: impl Fn(&R) -> bool) -> Vec<R> {
        let mut out = Vec::new();
        while let Some(h) = self.refs.front() {
            match h {
                Held::Lost(..) => {
                    self.refs.pop_front();
                }
                Held::Frame(_, r, _) if gone(r) => {
                    if let Some(Held::Frame(_, r, _)) = self.refs.pop_front() {
                        out.push(r);
                    }
                }
                Held::Frame(..) => break,
            }
        }
        out
    }

    /// The oldest distorted frames for which `gone` holds (a gap of the
    /// reference passed them by), let go: not scored.
    pub fn shed_distorted_while(&mut self, gone: impl Fn(&D) -> bool) -> usize {
        let before = self.dists.len();
        while self.dists.front().is_some_and(|(_, d)| gone(d)) {
            self.dists.pop_front();
        }
        before - self.dists.len()
    }

    /// The frames the start's search compares, of each input.
    fn search_frames(&self) -> usize {
        self.reach.search + self.reach.span
    }

    /// The oldest distorted frame, when more than twice the search's
    /// frames wait with no reference frame to pair (the reference stalled):
    /// not scored, so that a stall does not hold frames without bound.
    pub fn shed_distorted(&mut self) -> Option<D> {
        if self.refs.is_empty() && self.dists.len() > 2 * self.search_frames() {
            return self.dists.pop_front().map(|(_, d)| d);
        }
        None
    }

    pub fn reference(&mut self, thumb: Thumb, frame: R) {
        let number = self.drift.reference(&thumb);
        self.refs.push_back(Held::Frame(thumb, frame, number));
    }

    /// Reference frame `number` was lost before it came (its place in the
    /// reference's timeline is known by the frames around it): the
    /// distorted frame that shows it is not taken for a drop or a repeat.
    pub fn lost_reference(&mut self, number: u64) {
        let before = self
            .refs
            .back()
            .map(Held::thumb)
            .or(self.last.as_ref().map(|l| &l.0));
        let thumb = before.cloned().unwrap_or_default();
        self.drift.reference(&thumb);
        self.refs.push_back(Held::Lost(number, thumb));
    }

    pub fn distorted(&mut self, thumb: Thumb, frame: D) {
        self.dists.push_back((thumb, frame));
    }

    pub fn end_reference(&mut self) {
        self.ref_ended = true;
    }

    pub fn end_distorted(&mut self) {
        self.dist_ended = true;
    }

    /// The offset found at start, once found.
    pub fn found(&self) -> Option<Found> {
        self.found
    }

    /// Frames held, waiting for a decision: reference, distorted.
    pub fn held(&self) -> (usize, usize) {
        let frames = self.refs.iter().filter(|h| h.is_frame()).count();
        (frames, self.dists.len())
    }

    /// The oldest reference frame held.
    pub fn oldest_reference(&self) -> Option<&R> {
        self.refs.iter().find_map(|h| match h {
            Held::Frame(_, r, _) => Some(r),
            Held::Lost(..) => None,
        })
    }

    /// Whether the start's search is still gathering frames.
    pub fn searching(&self) -> bool {
        self.found.is_none()
    }

    /// The frames held, each payload to update (a copy that holds no
    /// upstream buffer).
    pub fn held_mut(&mut self) -> (impl Iterator<Item = &mut R>, impl Iterator<Item = &mut D>) {
        (
            self.refs
                .iter_mut()
                .filter_map(|h| match h {
                    Held::Frame(_, r, _) => Some(r),
                    Held::Lost(..) => None,
                })
                .chain(self.last.iter_mut().map(|(_, r)| r)),
            self.dists.iter_mut().map(|(_, d)| d),
        )
    }

    /// The oldest reference frame, given up on (it waited too long): not
    /// scored. Lost frames before it go with it (they were counted lost).
    /// While the offset is searched for, only frames past the search's
    /// are given up.
    pub fn give_up_reference(&mut self) -> Option<R> {
        if self.found.is_none() && self.refs.len() <= self.search_frames() {
            return None;
        }
        while let Some(h) = self.refs.pop_front() {
            if let Held::Frame(_, r, _) = h {
                return Some(r);
            }
        }
        None
    }

    /// The next decision, once the frames it needs are here.
    pub fn decide(&mut self) -> Option<Step<R, D>> {
        if self.found.is_none() {
            self.search()?;
        }
        if !self.told {
            self.told = true;
            return self.found.map(Step::Aligned);
        }
        if let Some((found, by)) = self.shifted.take() {
            return Some(Step::Shifted { found, by });
        }
        if self.leading != 0 {
            return self.skip_leading();
        }
        if self.dropping > 0 {
            self.dropping -= 1;
            return self.refs.pop_front().map(|h| h.alone(Step::Dropped));
        }
        match (self.refs.is_empty(), self.dists.is_empty()) {
            (true, true) => None,
            (true, false) => self
                .ref_ended
                .then(|| self.dists.pop_front().map(|(_, d)| Step::Extra(d)))?,
            (false, true) => self
                .dist_ended
                .then(|| self.refs.pop_front().map(|h| h.alone(Step::Unpaired)))?,
            (false, false) => self.pair(),
        }
    }

    /// The search at start, once enough frames of both are here (or one
    /// input has ended): an untrusted offset is taken as 0.
    fn search(&mut self) -> Option<()> {
        let need = self.search_frames();
        let ready = |n: usize, ended: bool| n >= need || ended;
        if !ready(self.refs.len(), self.ref_ended) || !ready(self.dists.len(), self.dist_ended) {
            return None;
        }
        let r: Vec<&Thumb> = self.refs.iter().map(Held::thumb).collect();
        let d: Vec<&Thumb> = self.dists.iter().map(|(t, _)| t).collect();
        let found =
            best_offset(&r, &d, self.reach.search as i32, self.reach.span).unwrap_or(Found {
                offset: 0,
                confidence: 0.0,
            });
        if let Some(c) = cost(&r, &d, found.offset, self.reach.span) {
            self.recent.push_back(c);
        }
        // An untrusted offset is reported as found, and paired unshifted.
        let found = if found.trusted() {
            found
        } else {
            Found { offset: 0, ..found }
        };
        self.found = Some(found);
        self.leading = found.offset;
        self.passing = false;
        self.drift.forget_pairs();
        Some(())
    }

    /// The frames before the other input's first (a distorted input
    /// lagging by N > 0 starts with N frames of its own), or those a shift
    /// passes over.
    fn skip_leading(&mut self) -> Option<Step<R, D>> {
        if self.leading > 0 {
            let (_, d) = self.dists.pop_front()?;
            self.leading -= 1;
            Some(Step::LeadingDistorted(d))
        } else {
            let r = self.refs.pop_front()?;
            self.leading += 1;
            Some(r.alone(if self.passing {
                Step::Unpaired
            } else {
                Step::LeadingReference
            }))
        }
    }

    /// The oldest distorted frame's pair: the next reference frame, unless
    /// it differs unusually and a frame a little later (drops) or the last
    /// one (a duplicate) fits much better, and as pairs usually do. A
    /// distorted frame that fits no frame near (a stray: a frame from
    /// before a gap, a picture broken in delivery) is paired where
    /// expected: a drop or duplicate made of it would shift every pair
    /// after it.
    fn pair(&mut self) -> Option<Step<R, D>> {
        if !self.refs[0].is_frame() {
            return self.pair_lost();
        }
        let d = &self.dists.front()?.0;
        let expected = difference(d, self.refs[0].thumb());
        if self.unusual(expected) {
            let ahead = self.refs.len().min(self.reach.drops + 1);
            if ahead < self.reach.drops + 1 && !self.ref_ended {
                // Look ahead once those frames are here.
                return None;
            }
            let dup = self.last.as_ref().map(|(t, _)| difference(d, t));
            let later = (1..ahead)
                .filter(|&n| self.refs[n].is_frame())
                .map(|n| (n, difference(d, self.refs[n].thumb())))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let fits = |c: f64| c < expected * BETTER && !self.unusual(c);
            match (dup, later) {
                (Some(c), l) if fits(c) && l.is_none_or(|(_, lc)| c <= lc) => {
                    let (_, distorted) = self.dists.pop_front()?;
                    let reference = self.last.as_ref()?.1.clone();
                    return Some(Step::Pair {
                        reference,
                        distorted,
                        duplicate: true,
                    });
                }
                (_, Some((n, c))) if fits(c) => {
                    self.dropping = n - 1;
                    return self.refs.pop_front().map(|h| h.alone(Step::Dropped));
                }
                _ => {}
            }
        }
        self.note_typical(expected);
        let Held::Frame(thumb, reference, number) = self.refs.pop_front()? else {
            return None;
        };
        let (shows, distorted) = self.dists.pop_front()?;
        self.last = Some((thumb, reference.clone()));
        if !self.given
            && let Some(shift) = self.drift.paired(number, &shows)
        {
            self.shift(shift);
        }
        Some(Step::Pair {
            reference,
            distorted,
            duplicate: false,
        })
    }

    /// The oldest reference frame was lost: the oldest distorted frame
    /// shows it, unless it shows the next frame that came (it fits that
    /// one as pairs usually do, and clearly better than the frame before
    /// the loss: the distorted input lacks the lost frame as well).
    fn pair_lost(&mut self) -> Option<Step<R, D>> {
        let d = &self.dists.front()?.0;
        let next = self.refs.iter().find(|h| h.is_frame());
        let shows_next = match next {
            Some(n) => {
                let c = difference(d, n.thumb());
                let before = self.last.as_ref().map(|(t, _)| difference(d, t));
                !self.unusual(c) && before.is_none_or(|b| c < b * BETTER)
            }
            // Wait for the next frame, unless the reference has ended.
            None if !self.ref_ended => return None,
            None => false,
        };
        let Held::Lost(reference, _) = self.refs.pop_front()? else {
            return None;
        };
        let distorted = if shows_next {
            None
        } else {
            self.dists.pop_front().map(|(_, d)| d)
        };
        Some(Step::Lost {
            reference,
            distorted,
        })
    }

    /// The distorted frames show the reference frames `shift.offset`
    /// after those they are paired with: the frames between are passed
    /// over (reference frames, or distorted frames showing frames already
    /// paired), and the new offset told before the next step.
    fn shift(&mut self, shift: Found) {
        let offset = self.found.map_or(0, |f| f.offset) - shift.offset;
        let found = Found {
            offset,
            confidence: shift.confidence,
        };
        self.found = Some(found);
        self.shifted = Some((found, shift.offset));
        self.leading = -shift.offset;
        self.passing = true;
        self.dropping = 0;
        self.last = None;
        self.recent.clear();
    }

    fn unusual(&self, c: f64) -> bool {
        let mut v: Vec<f64> = self.recent.iter().copied().collect();
        v.sort_by(f64::total_cmp);
        let typical = v.get(v.len() / 2).copied().unwrap_or(0.0);
        c > typical * UNUSUAL + UNUSUAL_FLOOR
    }

    fn note_typical(&mut self, c: f64) {
        self.recent.push_back(c);
        if self.recent.len() > TYPICAL_OF {
            self.recent.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::align::tests::moving;

    fn reach() -> Reach {
        Reach {
            search: 10,
            span: 20,
            drops: 4,
        }
    }

    /// Runs the tracker over reference frames `r` and distorted frames
    /// showing reference frames `shows`; returns the steps as text.
    fn track(r: usize, shows: &[usize]) -> (Option<Found>, Vec<String>) {
        track_lost(r, &[], shows)
    }

    /// As [`track`], with the reference frames `lost` lost before the
    /// tracker (in their place: [`Tracker::lost_reference`]).
    fn track_lost(r: usize, lost: &[usize], shows: &[usize]) -> (Option<Found>, Vec<String>) {
        let mut t: Tracker<usize, usize> = Tracker::new(reach());
        for i in 0..r {
            if lost.contains(&i) {
                t.lost_reference(i as u64);
            } else {
                t.reference(moving(i, 0), i);
            }
        }
        for (j, &s) in shows.iter().enumerate() {
            t.distorted(moving(s, j + 1), j);
        }
        t.end_reference();
        t.end_distorted();
        let mut out = Vec::new();
        while let Some(s) = t.decide() {
            out.push(match s {
                Step::Aligned(_) => continue,
                Step::Shifted { by, .. } => format!("shift{by}"),
                Step::Pair {
                    reference,
                    distorted,
                    duplicate,
                } => format!(
                    "{distorted}={reference}{}",
                    if duplicate { "d" } else { "" }
                ),
                Step::Dropped(r) => format!("drop{r}"),
                Step::LeadingReference(r) | Step::Unpaired(r) => format!("ref{r}"),
                Step::LeadingDistorted(d) | Step::Extra(d) => format!("dist{d}"),
                Step::Lost {
                    reference,
                    distorted,
                } => format!(
                    "lost{reference}{}",
                    distorted.map_or(String::new(), |d| format!("={d}"))
                ),
            });
        }
        (t.found(), out)
    }

    #[test]
    fn leading_frames_are_skipped_and_the_rest_paired() {
        // The distorted input starts with 3 frames of its own.
        let shows: Vec<usize> = [90, 91, 92].into_iter().chain(0..40).collect();
        let (found, steps) = track(40, &shows);
        assert_eq!(found.map(|f| f.offset), Some(3));
        assert_eq!(&steps[..4], ["dist0", "dist1", "dist2", "3=0"]);
        assert_eq!(steps.len(), 43);
    }

    #[test]
    fn a_trimmed_start_leaves_the_first_reference_frames_unpaired() {
        let shows: Vec<usize> = (2..40).collect();
        let (found, steps) = track(40, &shows);
        assert_eq!(found.map(|f| f.offset), Some(-2));
        assert_eq!(&steps[..3], ["ref0", "ref1", "0=2"]);
    }

    #[test]
    fn drops_and_duplicates_are_found_where_they_are() {
        // Reference frames 10 and 21-22 dropped; 30 shown twice.
        let shows: Vec<usize> = (0..10).chain(11..21).chain(23..31).chain(30..45).collect();
        let (found, steps) = track(45, &shows);
        assert_eq!(found.map(|f| f.offset), Some(0));
        let events: Vec<&String> = steps
            .iter()
            .filter(|s| s.starts_with("drop") || s.ends_with('d'))
            .collect();
        assert_eq!(events, ["drop10", "drop21", "drop22", "28=30d"]);
        assert!(steps.contains(&"10=11".to_string()));
        assert!(steps.contains(&"29=31".to_string()));
    }

    #[test]
    fn a_stray_distorted_frame_shifts_no_pair() {
        // Distorted frame 20 shows reference frame 26 (a frame from
        // elsewhere): it fits frame 24 better than half as badly as 20, yet
        // far worse than pairs do.
        let shows: Vec<usize> = (0..20).chain([26]).chain(21..50).collect();
        let (found, steps) = track(50, &shows);
        assert_eq!(found.map(|f| f.offset), Some(0));
        assert!(events(&steps).is_empty(), "{steps:?}");
        for pair in ["20=20", "21=21", "49=49"] {
            assert!(steps.contains(&pair.to_string()), "{pair}: {steps:?}");
        }
    }

    #[test]
    fn a_still_picture_is_paired_in_order() {
        let mut t: Tracker<usize, usize> = Tracker::new(reach());
        for i in 0..40 {
            t.reference(moving(0, 0), i);
            t.distorted(moving(0, i + 1), i);
        }
        t.end_reference();
        t.end_distorted();
        let first = t.decide();
        assert!(matches!(first, Some(Step::Aligned(f)) if !f.trusted() && f.offset == 0));
        let mut n = 0;
        while let Some(s) = t.decide() {
            assert_eq!(
                s,
                Step::Pair {
                    reference: n,
                    distorted: n,
                    duplicate: false
                }
            );
            n += 1;
        }
        assert_eq!(n, 40);
    }

    #[test]
    fn ends_leave_the_longer_inputs_frames_unpaired() {
        let shows: Vec<usize> = (0..38).collect();
        let (_, steps) = track(40, &shows);
        assert_eq!(&steps[steps.len() - 2..], ["ref38", "ref39"]);
    }

    /// Steps that say a drop or a duplicate.
    fn events(steps: &[String]) -> Vec<&String> {
        steps
            .iter()
            .filter(|s| s.starts_with("drop") || s.ends_with('d'))
            .collect()
    }

    #[test]
    fn a_reference_frame_lost_in_delivery_is_no_drop_or_duplicate() {
        // Reference frames 30 and 33-34 never reached the tracker; the
        // distorted input shows them all (one run of drops of its own, 40).
        let shows: Vec<usize> = (0..40).chain(41..60).collect();
        let (found, steps) = track_lost(60, &[30, 33, 34], &shows);
        assert_eq!(found.map(|f| f.offset), Some(0));
        assert_eq!(events(&steps), ["drop40"]);
        for (lost, dist) in [(30, 30), (33, 33), (34, 34)] {
            assert!(steps.contains(&format!("lost{lost}={dist}")), "{steps:?}");
        }
        assert!(steps.contains(&"31=31".to_string()), "{steps:?}");
        assert!(steps.contains(&"40=41".to_string()), "{steps:?}");
    }

    #[test]
    fn a_lost_frame_the_distorted_input_also_lacks_takes_no_distorted_frame() {
        // Reference frame 30 lost here; the distorted input dropped it too.
        let shows: Vec<usize> = (0..30).chain(31..50).collect();
        let (_, steps) = track_lost(50, &[30], &shows);
        assert!(steps.contains(&"lost30".to_string()), "{steps:?}");
        assert!(steps.contains(&"30=31".to_string()), "{steps:?}");
        assert!(events(&steps).is_empty(), "{steps:?}");
    }

    #[test]
    fn after_a_gap_the_offset_is_found_again() {
        // Paired at offset 0; then the distorted input stops, and comes back
        // 7 frames behind where it was (an encoder restarted).
        let mut t: Tracker<usize, usize> = Tracker::new(reach());
        for i in 0..40 {
            t.reference(moving(i, 0), i);
            t.distorted(moving(i, 1), i);
        }
        let mut first = Vec::new();
        while let Some(s) = t.decide() {
            first.push(s);
        }
        assert!(matches!(first[0], Step::Aligned(f) if f.offset == 0));
        t.realign();
        for i in 40..100 {
            t.reference(moving(i, 0), i);
        }
        for (j, shown) in (47..100).enumerate() {
            t.distorted(moving(shown, 2), 100 + j);
        }
        t.end_reference();
        t.end_distorted();
        let mut leading = 0;
        let mut again = None;
        while let Some(s) = t.decide() {
            match s {
                Step::Aligned(f) => again = Some(f),
                Step::LeadingReference(_) => leading += 1,
                Step::Pair {
                    reference,
                    distorted,
                    duplicate,
                } => {
                    assert!(!duplicate);
                    assert_eq!(reference + 53, distorted, "{reference} {distorted}");
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(again.map(|f| f.offset), Some(-7));
        assert_eq!(leading, 7);
    }
}
