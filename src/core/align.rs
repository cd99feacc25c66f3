//! Frame alignment by content: which reference frame each distorted frame
//! shows, when their timestamps cannot say (a transcoder's latency, an
//! encoder's leading frames, a trimmed start, dropped or repeated frames).
//!
//! Each frame's luma is reduced to a 64x36 thumbnail of block means, less
//! its own mean (an encode's brightness drift does not move it), and two
//! frames differ by the mean absolute difference of their thumbnails.
//!
//! - **At start** ([`best_offset`]): every offset within the search window
//!   is scored by how much the pairs it makes differ, and the lowest wins.
//!   The confidence says how clearly: 1 − best / the lower of the median
//!   cost and the lowest other local minimum (0 when another offset fits
//!   about as well, as for a still picture; near 1 for one clear valley).
//! - **Then** ([`Tracker`]): each distorted frame is expected to show the
//!   reference frame after the last one it paired. When it differs from
//!   that frame much more than pairs usually do, the tracker looks a few
//!   frames ahead and back: a distorted frame that shows a later reference
//!   frame means the frames between were dropped (reported, not scored);
//!   one that shows the last paired frame again is a duplicate (scored, as
//!   it is shown, against that frame).

use std::collections::VecDeque;

/// Thumbnail size: enough for motion to tell frames apart, small enough to
/// compare thousands of pairs at once.
pub const THUMB_W: usize = 64;
pub const THUMB_H: usize = 36;
/// Below this confidence the offset found is not trusted: the caller warns,
/// and the inputs are paired unshifted.
pub const MIN_CONFIDENCE: f64 = 0.2;
/// Rows read per thumbnail row: a thumbnail needs no more.
const ROWS_PER_BLOCK: usize = 4;

/// One frame's thumbnail, its mean taken out.
pub type Thumb = Vec<f32>;

/// A luma plane as it lies in memory.
#[derive(Clone, Copy, Debug)]
pub struct Luma<'a> {
    pub data: &'a [u8],
    /// Bytes from one row to the next.
    pub stride: usize,
    pub width: usize,
    pub height: usize,
    /// Bytes per sample: 1, or 2 (little endian).
    pub bytes: usize,
    /// Right shift that brings a sample to 8 bits (2 for 10-bit LSB-aligned
    /// samples, 8 for P010's MSB-aligned ones).
    pub shift: u32,
}

/// The offset found at start, and how clearly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Found {
    /// Frames the distorted input lags the reference: its frame k + offset
    /// shows the reference's frame k.
    pub offset: i32,
    pub confidence: f64,
}

impl Found {
    pub fn trusted(&self) -> bool {
        self.confidence >= MIN_CONFIDENCE
    }
}

/// The rows a thumbnail of a plane `height` rows high reads: every
/// `step`th from the first, `count` of them (for a caller that fetches
/// them first: [`thumbnail_of_rows`]).
pub fn sampled_rows(height: usize) -> (usize, usize) {
    let h = height.max(1);
    let step = (h / (THUMB_H * ROWS_PER_BLOCK)).max(1);
    (step, h.div_ceil(step))
}

/// The 64x36 block means of a luma plane, brought to 8 bits, less their
/// mean; the rows [`sampled_rows`] names are read.
pub fn thumbnail(p: &Luma<'_>) -> Thumb {
    let (step, _) = sampled_rows(p.height);
    block_means(p, |k| k * step * p.stride)
}

/// [`thumbnail`] of a plane whose sampled rows alone are in `p.data`,
/// one after another `p.stride` bytes apart (`p.height` is the plane's).
pub fn thumbnail_of_rows(p: &Luma<'_>) -> Thumb {
    block_means(p, |k| k * p.stride)
}

/// The thumbnail of `p`, sampled row k lying at byte `row_at(k)`: the
/// rows of each thumbnail row summed column by column, then the columns
/// of each block.
fn block_means(p: &Luma<'_>, row_at: impl Fn(usize) -> usize) -> Thumb {
    let (w, h) = (p.width.max(1), p.height.max(1));
    let (step, count) = sampled_rows(h);
    let mut sums = vec![0u64; THUMB_W * THUMB_H];
    let mut counts = vec![0u32; THUMB_W * THUMB_H];
    let edge: Vec<usize> = (0..=THUMB_W).map(|c| (c * w).div_ceil(THUMB_W)).collect();
    // A block is a few sampled rows high (`no_block_has_many_sampled_rows`):
    // u16 sums of 8-bit samples hold it.
    let mut columns = vec![0u16; w];
    let mut k = 0;
    for ty in 0..THUMB_H {
        columns.fill(0);
        let mut rows = 0u32;
        while k < count && k * step * THUMB_H / h == ty {
            let at = row_at(k);
            k += 1;
            let Some(row) = p.data.get(at..at + w * p.bytes) else {
                continue;
            };
            add_row(&mut columns, row, p.bytes, p.shift);
            rows += 1;
        }
        for c in 0..THUMB_W {
            let (a, b) = (edge[c], edge[c + 1]);
            sums[ty * THUMB_W + c] = columns[a..b].iter().map(|&v| u64::from(v)).sum();
            counts[ty * THUMB_W + c] = (b - a) as u32 * rows;
        }
    }
    let means: Vec<f32> = sums
        .iter()
        .zip(&counts)
        .map(|(&s, &c)| {
            if c > 0 {
                (s as f64 / f64::from(c)) as f32
            } else {
                0.0
            }
        })
        .collect();
    let mean = means.iter().sum::<f32>() / means.len() as f32;
    means.iter().map(|m| m - mean).collect()
}

/// Adds one row's samples, brought to 8 bits, to the column sums.
fn add_row(columns: &mut [u16], row: &[u8], bytes: usize, shift: u32) {
    if bytes == 2 {
        for (c, s) in columns.iter_mut().zip(row.chunks_exact(2)) {
            *c += (u16::from_le_bytes([s[0], s[1]]) >> shift).min(255);
        }
    } else {
        for (c, &v) in columns.iter_mut().zip(row) {
            *c += u16::from(v);
        }
    }
}

/// How much two thumbnails differ: the mean absolute difference.
pub fn difference(a: &Thumb, b: &Thumb) -> f64 {
    let total: f64 = a.iter().zip(b).map(|(x, y)| f64::from((x - y).abs())).sum();
    total / a.len().max(1) as f64
}

/// The offset in `-reach..=reach` whose pairs of the first `span`
/// reference frames differ least, and its confidence; None when no offset
/// pairs enough frames.
pub fn best_offset(r: &[&Thumb], d: &[&Thumb], reach: i32, span: usize) -> Option<Found> {
    let costs: Vec<(i32, f64)> = (-reach..=reach)
        .filter_map(|k| cost(r, d, k, span).map(|c| (k, c)))
        .collect();
    let at = (0..costs.len()).min_by(|&a, &b| costs[a].1.total_cmp(&costs[b].1))?;
    let (offset, best) = costs[at];
    let mut sorted: Vec<f64> = costs.iter().map(|c| c.1).collect();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    // Another valley: a local minimum other than the best one.
    let rival = (0..costs.len())
        .filter(|&i| i != at)
        .filter(|&i| {
            let c = costs[i].1;
            (i == 0 || c <= costs[i - 1].1) && (i + 1 == costs.len() || c <= costs[i + 1].1)
        })
        .map(|i| costs[i].1)
        .fold(median, f64::min);
    let confidence = if rival > 0.0 {
        (1.0 - best / rival).clamp(0.0, 1.0)
    } else {
        0.0
    };
    Some(Found { offset, confidence })
}

/// Mean difference of reference frame i against distorted frame i + k,
/// over the first `span` reference frames that have one; None when fewer
/// than half of them (and fewer than 4) do.
fn cost(r: &[&Thumb], d: &[&Thumb], k: i32, span: usize) -> Option<f64> {
    let pairs: Vec<f64> = (0..span.min(r.len()))
        .filter_map(|i| {
            let j = usize::try_from(i as i64 + k as i64).ok()?;
            Some(difference(r[i], d.get(j)?))
        })
        .collect();
    if pairs.is_empty() || pairs.len() < (span.min(r.len()) / 2).max(4.min(r.len())) {
        return None;
    }
    Some(pairs.iter().sum::<f64>() / pairs.len() as f64)
}

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
    /// A reference frame before the distorted input's first frame (a
    /// trimmed start): not scored.
    LeadingReference(R),
    /// A distorted frame before the reference's first frame (an encoder's
    /// leading frames): not scored.
    LeadingDistorted(D),
    /// A reference frame after the distorted input's last: not scored.
    Unpaired(R),
    /// A distorted frame after the reference's last: not scored.
    Extra(D),
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
/// Another reference frame is taken only where it fits this much better
/// than the expected one.
const BETTER: f64 = 0.5;
/// The pairs' differences the typical one is the median of.
const TYPICAL_OF: usize = 15;

/// Follows which reference frame each distorted frame shows (see the
/// module's text). `R` and `D` are the frames' payloads; a duplicate pair
/// gives its reference payload again (`R: Clone`).
#[derive(Debug)]
pub struct Tracker<R, D> {
    reach: Reach,
    refs: VecDeque<(Thumb, R)>,
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
        t
    }

    pub fn reference(&mut self, thumb: Thumb, frame: R) {
        self.refs.push_back((thumb, frame));
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
        (self.refs.len(), self.dists.len())
    }

    /// The oldest reference frame held.
    pub fn oldest_reference(&self) -> Option<&R> {
        self.refs.front().map(|(_, r)| r)
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
                .map(|(_, r)| r)
                .chain(self.last.iter_mut().map(|(_, r)| r)),
            self.dists.iter_mut().map(|(_, d)| d),
        )
    }

    /// The oldest reference frame, given up on (it waited too long): not
    /// scored.
    pub fn give_up_reference(&mut self) -> Option<R> {
        self.found?;
        self.refs.pop_front().map(|(_, r)| r)
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
        if self.leading != 0 {
            return self.skip_leading();
        }
        if self.dropping > 0 {
            self.dropping -= 1;
            return self.refs.pop_front().map(|(_, r)| Step::Dropped(r));
        }
        match (self.refs.is_empty(), self.dists.is_empty()) {
            (true, true) => None,
            (true, false) => self
                .ref_ended
                .then(|| self.dists.pop_front().map(|(_, d)| Step::Extra(d)))?,
            (false, true) => self
                .dist_ended
                .then(|| self.refs.pop_front().map(|(_, r)| Step::Unpaired(r)))?,
            (false, false) => self.pair(),
        }
    }

    /// The search at start, once enough frames of both are here (or one
    /// input has ended): an untrusted offset is taken as 0.
    fn search(&mut self) -> Option<()> {
        let need = self.reach.search + self.reach.span;
        let ready = |n: usize, ended: bool| n >= need || ended;
        if !ready(self.refs.len(), self.ref_ended) || !ready(self.dists.len(), self.dist_ended) {
            return None;
        }
        let r: Vec<&Thumb> = self.refs.iter().map(|(t, _)| t).collect();
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
        Some(())
    }

    /// The frames before the other input's first: a distorted input
    /// lagging by N > 0 starts with N frames of its own.
    fn skip_leading(&mut self) -> Option<Step<R, D>> {
        if self.leading > 0 {
            let (_, d) = self.dists.pop_front()?;
            self.leading -= 1;
            Some(Step::LeadingDistorted(d))
        } else {
            let (_, r) = self.refs.pop_front()?;
            self.leading += 1;
            Some(Step::LeadingReference(r))
        }
    }

    /// The oldest distorted frame's pair: the next reference frame, unless
    /// it differs unusually and a frame a little later (drops) or the last
    /// one (a duplicate) fits much better.
    fn pair(&mut self) -> Option<Step<R, D>> {
        let d = &self.dists.front()?.0;
        let expected = difference(d, &self.refs[0].0);
        if self.unusual(expected) {
            let ahead = self.refs.len().min(self.reach.drops + 1);
            if ahead < self.reach.drops + 1 && !self.ref_ended {
                // Look ahead once those frames are here.
                return None;
            }
            let dup = self.last.as_ref().map(|(t, _)| difference(d, t));
            let later = (1..ahead)
                .map(|n| (n, difference(d, &self.refs[n].0)))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let fits = |c: f64| c < expected * BETTER;
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
                    return self.refs.pop_front().map(|(_, r)| Step::Dropped(r));
                }
                _ => {}
            }
        }
        self.note_typical(expected);
        let (thumb, reference) = self.refs.pop_front()?;
        let (_, distorted) = self.dists.pop_front()?;
        self.last = Some((thumb, reference.clone()));
        Some(Step::Pair {
            reference,
            distorted,
            duplicate: false,
        })
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

    /// A moving gradient: frame t's thumbnail, with a little noise of
    /// seed `n` (an encode).
    fn moving(t: usize, n: usize) -> Thumb {
        let (w, h) = (THUMB_W * 4, THUMB_H * 4);
        let plane: Vec<u8> = (0..h)
            .flat_map(|y| {
                (0..w).map(move |x| {
                    let v = (x * 3 + y + t * 7) % 200 + 20;
                    (v + (x * 31 + y * 17 + n * 7) % 3) as u8
                })
            })
            .collect();
        thumbnail(&Luma {
            data: &plane,
            stride: w,
            width: w,
            height: h,
            bytes: 1,
            shift: 0,
        })
    }

    /// The thumbnail of a plane's sampled rows fetched alone (as from GPU
    /// memory) is the plane's own, at 8 and 16 bits.
    #[test]
    fn sampled_rows_alone_give_the_planes_thumbnail() {
        for (w, h, bytes) in [(1920, 1080, 1), (1280, 720, 2), (100, 30, 1)] {
            let stride = w * bytes + 64;
            let plane: Vec<u8> = (0..stride * h).map(|i| ((i * 7919) >> 3) as u8).collect();
            let luma = |data, stride| Luma {
                data,
                stride,
                width: w,
                height: h,
                bytes,
                shift: if bytes == 2 { 8 } else { 0 },
            };
            let (step, count) = sampled_rows(h);
            let rows: Vec<u8> = (0..count)
                .flat_map(|k| plane[k * step * stride..][..w * bytes].to_vec())
                .collect();
            let whole = thumbnail(&luma(&plane, stride));
            assert_eq!(whole, thumbnail_of_rows(&luma(&rows, w * bytes)));
            assert!(whole.iter().any(|&v| v != 0.0));
        }
    }

    /// The u16 column sums of one block never overflow: no block is
    /// more than a few sampled rows high, at any height.
    #[test]
    fn no_block_has_many_sampled_rows() {
        for h in 1..=17_280 {
            let (step, count) = sampled_rows(h);
            let mut rows = vec![0usize; THUMB_H];
            for k in 0..count {
                rows[k * step * THUMB_H / h] += 1;
            }
            assert!(rows.iter().all(|&n| n <= 16), "height {h}: {rows:?}");
        }
    }

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
        let mut t: Tracker<usize, usize> = Tracker::new(reach());
        for i in 0..r {
            t.reference(moving(i, 0), i);
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
            });
        }
        (t.found(), out)
    }

    #[test]
    fn the_offset_of_a_shifted_copy_is_found_clearly() {
        let r: Vec<Thumb> = (5..80).map(|t| moving(t, 0)).collect();
        for lag in [-5i32, 0, 3, 5] {
            let d: Vec<Thumb> = ((5 + lag) as usize..90).map(|t| moving(t, 1)).collect();
            let (r, d): (Vec<&Thumb>, Vec<&Thumb>) = (r.iter().collect(), d.iter().collect());
            let f = best_offset(&r, &d, 10, 30).unwrap();
            assert_eq!(f.offset, -lag, "{lag}: {f:?}");
            assert!(f.confidence > 0.5, "{lag}: {f:?}");
        }
    }

    #[test]
    fn a_still_picture_has_no_confidence() {
        let r: Vec<Thumb> = (0..60).map(|_| moving(0, 0)).collect();
        let r: Vec<&Thumb> = r.iter().collect();
        let f = best_offset(&r, &r, 10, 30).unwrap();
        assert!(!f.trusted(), "{f:?}");
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

    #[test]
    fn ten_bit_samples_are_brought_to_eight() {
        // Left half 4 (1 in 8 bits), right half 1020 (255).
        let p: Vec<u8> = (0..THUMB_H)
            .flat_map(|_| {
                (0..THUMB_W).flat_map(|x| if x < THUMB_W / 2 { [4u8, 0] } else { [0xfc, 3] })
            })
            .collect();
        let t = thumbnail(&Luma {
            data: &p,
            stride: THUMB_W * 2,
            width: THUMB_W,
            height: THUMB_H,
            bytes: 2,
            shift: 2,
        });
        assert_eq!((t[0], t[THUMB_W - 1]), (-127.0, 127.0));
    }
}
