//! The check that the tracker's pairs still show what they are paired
//! with. The tracker follows drops of a few frames and single repeats; an
//! offset found on broken pictures (a decoder's after a loss), or a
//! transcoder whose delay changes by more than that without a gap, would
//! leave every later pair off by the same number of frames. Twice a
//! second, the last second of pairs is scored at each shift within the
//! search's reach, as the start's search scores offsets; a clear valley
//! away from the pairs' own shift, found twice in a row, is the shift to
//! take.

use super::{BETTER, Found, Thumb, difference, lowest};
use std::collections::VecDeque;

/// The confidence a shift needs (the start's search takes less, having no
/// pairs to keep): a shift taken wrongly puts every later pair off.
const SURE: f64 = 0.5;

/// The reference frames' thumbnails in the order they came, and the pairs
/// made lately: each distorted frame's thumbnail with the number of the
/// reference frame it was paired with.
#[derive(Debug)]
pub(super) struct Drift {
    reach: i32,
    span: usize,
    /// Thumbnails of reference frames `first`, `first + 1`, ...
    refs: VecDeque<Thumb>,
    first: u64,
    pairs: VecDeque<(u64, Thumb)>,
    /// Pairs made since the last check.
    since: usize,
    /// The shift the last check found, to be confirmed by the next.
    suspect: Option<i32>,
}

impl Drift {
    /// Shifts within ±`reach` frames checked on the last `span` pairs.
    pub(super) fn new(reach: usize, span: usize) -> Self {
        Drift {
            reach: reach as i32,
            span,
            refs: VecDeque::new(),
            first: 0,
            pairs: VecDeque::new(),
            since: 0,
            suspect: None,
        }
    }

    /// A reference frame came (or its place, with the thumbnail it is
    /// compared as): returns its number.
    pub(super) fn reference(&mut self, thumb: &Thumb) -> u64 {
        self.refs.push_back(thumb.clone());
        self.first + self.refs.len() as u64 - 1
    }

    /// The pairs so far are forgotten (the offset is searched again).
    pub(super) fn forget_pairs(&mut self) {
        self.pairs.clear();
        self.since = 0;
        self.suspect = None;
    }

    /// Distorted frame `dist` was paired with reference frame `number`.
    /// Returns the shift to take, once two checks in a row found it (as
    /// an offset, with the last check's confidence): the distorted frames
    /// show the reference frames that many after (or, below 0, before)
    /// those they are paired with.
    pub(super) fn paired(&mut self, number: u64, dist: &Thumb) -> Option<Found> {
        self.pairs.push_back((number, dist.clone()));
        self.since += 1;
        self.forget_old();
        if self.since < (self.span / 2).max(4) {
            return None;
        }
        self.since = 0;
        let shift = self.shift_found();
        let offset = shift.map(|f| f.offset);
        if offset.is_none() || offset != self.suspect {
            self.suspect = offset;
            return None;
        }
        self.forget_pairs();
        shift
    }

    /// The newest reference frame's number.
    fn newest(&self) -> Option<u64> {
        (self.first + self.refs.len() as u64).checked_sub(1)
    }

    fn thumb(&self, number: i64) -> Option<&Thumb> {
        let i = number.checked_sub(self.first as i64)?;
        self.refs.get(usize::try_from(i).ok()?)
    }

    /// Pairs and reference frames too old for the next check let go.
    fn forget_old(&mut self) {
        let keep = self.reach as usize + 2 * self.span;
        while self.pairs.len() > keep {
            self.pairs.pop_front();
        }
        let oldest = self.pairs.front().map_or(u64::MAX, |p| p.0);
        let newest = self.newest().unwrap_or(0);
        let from = oldest
            .min(newest.saturating_sub(keep as u64))
            .saturating_sub(self.reach as u64);
        while self.first < from && !self.refs.is_empty() {
            self.refs.pop_front();
            self.first += 1;
        }
    }

    /// The shift at which the last `span` pairs fit clearly better than
    /// their own (half as badly, in a valley of confidence [`SURE`]), if
    /// one does. A shift k > 0 is scored on the last `span` pairs whose
    /// reference frame k later has come.
    fn shift_found(&self) -> Option<Found> {
        let costs: Vec<(i32, f64)> = (-self.reach..=self.reach)
            .filter_map(|k| self.cost(k).map(|c| (k, c)))
            .collect();
        let own = costs.iter().find(|c| c.0 == 0)?.1;
        let (found, best): (Found, f64) = lowest(&costs)?;
        (found.offset != 0 && found.confidence >= SURE && best < own * BETTER).then_some(found)
    }

    /// The mean difference of the last `span` pairs (of those whose
    /// reference frame `k` later has come, among the last `span + k`)
    /// were each distorted frame paired `k` reference frames later; None
    /// unless `span` of them have that frame here.
    fn cost(&self, k: i32) -> Option<f64> {
        let newest = self.newest()? as i64;
        let d: Vec<f64> = self
            .pairs
            .iter()
            .rev()
            .take(self.span + k.max(0) as usize)
            .filter_map(|(n, t)| {
                let at = *n as i64 + i64::from(k);
                (at <= newest)
                    .then(|| self.thumb(at))
                    .flatten()
                    .map(|r| difference(t, r))
            })
            .take(self.span)
            .collect();
        (d.len() == self.span).then(|| d.iter().sum::<f64>() / d.len() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::moving;
    use super::super::{THUMB_H, THUMB_W};
    use super::*;
    use crate::core::align::{Reach, Step, Tracker};

    /// A picture of noise, its own for each `seed` (a broken picture).
    fn broken(seed: usize) -> Thumb {
        let mut h = seed as u64 * 0x9E37_79B9_7F4A_7C15 + 1;
        (0..THUMB_W * THUMB_H)
            .map(|_| {
                h ^= h << 13;
                h ^= h >> 7;
                h ^= h << 17;
                (h % 200) as f32 - 100.0
            })
            .collect()
    }

    fn tracker() -> Tracker<usize, usize> {
        Tracker::new(Reach {
            search: 10,
            span: 20,
            drops: 4,
        })
    }

    /// The tracker over reference frames 0..`r` and distorted frames
    /// `shows` (what each shows, its payload too; None: a broken
    /// picture), every frame handed over first. Returns the shifts told
    /// (by how much) and the pairs (distorted payload, reference).
    fn track(r: usize, shows: &[Option<usize>]) -> (Vec<i32>, Vec<(usize, usize)>) {
        let mut t = tracker();
        for i in 0..r {
            t.reference(moving(i, 0), i);
        }
        for (j, s) in shows.iter().enumerate() {
            let thumb = s.map_or_else(|| broken(j), |s| moving(s, j + 1));
            t.distorted(thumb, s.unwrap_or(usize::MAX));
        }
        t.end_reference();
        t.end_distorted();
        let (mut shifts, mut pairs) = (Vec::new(), Vec::new());
        while let Some(s) = t.decide() {
            match s {
                Step::Shifted { by, .. } => shifts.push(by),
                Step::Pair {
                    reference,
                    distorted,
                    ..
                } => pairs.push((distorted, reference)),
                _ => {}
            }
        }
        (shifts, pairs)
    }

    /// Whether the last `n` pairs each pair a distorted frame with the
    /// reference frame it shows.
    fn last_right(pairs: &[(usize, usize)], n: usize) -> bool {
        pairs.len() >= n && pairs[pairs.len() - n..].iter().all(|(d, r)| d == r)
    }

    #[test]
    fn a_delay_grown_by_many_frames_without_a_gap_is_followed() {
        // From its frame 80 the transcode shows reference frames 9 earlier
        // (its delay grew, its timestamps went on): more than a repeat.
        let shows: Vec<Option<usize>> = (0..80).chain(71..200).map(Some).collect();
        let (shifts, pairs) = track(200, &shows);
        assert_eq!(shifts, [-9]);
        assert!(last_right(&pairs, 80), "{:?}", &pairs[pairs.len() - 80..]);
        assert!(pairs[..80].iter().all(|(d, r)| d == r));
    }

    #[test]
    fn a_jump_past_the_drops_followed_is_followed() {
        // From its frame 60 the transcode shows reference frames 8 later
        // (a drop the tracker cannot take for one: more than 4 frames).
        let shows: Vec<Option<usize>> = (0..60).chain(68..200).map(Some).collect();
        let (shifts, pairs) = track(200, &shows);
        assert_eq!(shifts, [8]);
        assert!(last_right(&pairs, 80), "{:?}", &pairs[pairs.len() - 80..]);
    }

    #[test]
    fn an_offset_found_on_broken_pictures_is_put_right() {
        // The first 25 distorted frames are broken (a decoder after a
        // loss, until its next key frame); the transcode lags by 5.
        let shows: Vec<Option<usize>> = (0..220).map(|j| (j >= 25).then(|| j - 5)).collect();
        let (shifts, pairs) = track(215, &shows);
        assert_eq!(shifts.len(), 1, "{shifts:?}");
        assert!(last_right(&pairs, 100), "{:?}", &pairs[pairs.len() - 100..]);
    }

    #[test]
    fn drops_and_repeats_move_nothing() {
        // Frames dropped one to four at a time, repeated once, over 400.
        let mut shows = Vec::new();
        for i in 0..400 {
            match i % 37 {
                5 | 20 | 21 | 30..=33 => {}
                11 => shows.extend([Some(i), Some(i)]),
                _ => shows.push(Some(i)),
            }
        }
        let (shifts, pairs) = track(400, &shows);
        assert!(shifts.is_empty(), "{shifts:?}");
        let wrong: Vec<_> = pairs.iter().filter(|(d, r)| d != r).collect();
        assert!(wrong.is_empty(), "{wrong:?}");
    }

    #[test]
    fn a_still_picture_moves_nothing() {
        let mut t = tracker();
        for i in 0..100 {
            t.reference(moving(0, 0), i);
            t.distorted(moving(0, i + 1), i);
        }
        t.end_reference();
        t.end_distorted();
        let mut steps = 0;
        while let Some(s) = t.decide() {
            assert!(!matches!(s, Step::Shifted { .. }), "{s:?}");
            steps += 1;
        }
        assert_eq!(steps, 1 + 100);
    }
}
