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

mod drift;
mod tracker;

pub use tracker::{Reach, Step, Tracker};

/// Thumbnail size: enough for motion to tell frames apart, small enough to
/// compare thousands of pairs at once.
pub const THUMB_W: usize = 64;
pub const THUMB_H: usize = 36;
/// Below this confidence the offset found is not trusted: the caller warns,
/// and the inputs are paired unshifted.
pub const MIN_CONFIDENCE: f64 = 0.2;
/// Another reference frame, or shift, is taken only where it fits this
/// much better than the expected one.
const BETTER: f64 = 0.5;
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
    lowest(&costs).map(|(found, _)| found)
}

/// The offset of the lowest of `costs` (offset, cost), in order of
/// offset, and its cost; its confidence: 1 − that cost / the lower of the
/// median cost and the lowest other local minimum. None when empty.
pub(super) fn lowest(costs: &[(i32, f64)]) -> Option<(Found, f64)> {
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
    Some((Found { offset, confidence }, best))
}

/// Mean difference of reference frame i against distorted frame i + k,
/// over the first `span` frames of the input that starts later in the
/// other's timeline (the reference's for k >= 0, the distorted input's
/// for k < 0: a distorted input that leads is compared from its own first
/// frame, however far it leads); None when fewer than half of them (and
/// fewer than 4) have a pair.
pub(super) fn cost(r: &[&Thumb], d: &[&Thumb], k: i32, span: usize) -> Option<f64> {
    let (first, other, shift) = if k >= 0 {
        (r, d, k as usize)
    } else {
        (d, r, k.unsigned_abs() as usize)
    };
    let n = span.min(first.len());
    let pairs: Vec<f64> = (0..n)
        .filter_map(|i| Some(difference(first[i], other.get(i + shift)?)))
        .collect();
    if pairs.is_empty() || pairs.len() < (n / 2).max(4.min(n)) {
        return None;
    }
    Some(pairs.iter().sum::<f64>() / pairs.len() as f64)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A moving gradient: frame t's thumbnail, with a little noise of
    /// seed `n` (an encode).
    pub(crate) fn moving(t: usize, n: usize) -> Thumb {
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

    /// An offset far past half the span either way (the reference starts
    /// 25 frames before the distorted input's content, or after it).
    #[test]
    fn an_offset_beyond_half_the_span_is_found_both_ways() {
        for lag in [-25i32, 25] {
            let r: Vec<Thumb> = (30..130).map(|t| moving(t, 0)).collect();
            let d: Vec<Thumb> = ((30 + lag) as usize..140).map(|t| moving(t, 1)).collect();
            let (r, d): (Vec<&Thumb>, Vec<&Thumb>) = (r.iter().collect(), d.iter().collect());
            let f = best_offset(&r, &d, 30, 20).unwrap();
            assert_eq!(f.offset, -lag, "{lag}: {f:?}");
            assert!(f.trusted(), "{lag}: {f:?}");
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
