//! Integer motion, libvmaf `feature/integer_motion.c` at f85a8536 (the
//! "pipelined v2" kernel that filters the frame difference).
//!
//! Temporal: the SAD of frame *i* compares reference *i* with reference
//! *i − 1*; motion2 of frame *i* is `min(sad[i], sad[i+1])`, so it is final
//! only once frame *i + 1* arrived. libvmaf computes motion2 at flush; we do
//! it as frames arrive, with the same result:
//!
//! | call                   | sad written | motion2 final for |
//! |------------------------|-------------|-------------------|
//! | frame 0                | sad\[0\] = 0 | 0 (always 0)      |
//! | frame i ≥ 1            | sad\[i\]    | i − 1             |
//! | flush after frame n−1  | —           | n − 1 (= sad[n−1])|
//!
//! That temporal stage, shared with `float_motion`, is
//! `common::motion_temporal`.

use crate::extractors::common::mirror_r101;
use crate::extractors::common::motion_temporal::MotionParams;

/// The 5-tap filter (VIF's scale-2 taps), Q16.
pub const MOTION_FILTER: [i32; 5] = [3571, 16004, 26386, 16004, 3571];

/// `motion_score_pipeline_8` / `_16`: Σ|blur(prev − cur)| in Q8 per pixel.
/// The CPU twin of `motion_sad.hip`.
pub fn motion_sad(
    prev: &[u16],
    cur: &[u16],
    w: usize,
    h: usize,
    bpc: u8,
    y_row: &mut Vec<i32>,
    acc: &mut Vec<i64>,
) -> u64 {
    crate::core::isa::dispatch(
        #[inline(always)]
        move || {
            let (shift, round) = if bpc == 8 {
                (8u32, 128i64)
            } else {
                (u32::from(bpc), 1i64 << (bpc - 1))
            };
            // Samples within their bit depth (an OR of all of them stays below 2^bpc)
            // take the 16-bit path; out-of-range data keeps the 64-bit arithmetic.
            let in_range = |v: &[u16]| v.iter().fold(0u16, |a, &b| a | b) >> bpc == 0;
            if bpc <= 12 && in_range(prev) && in_range(cur) {
                return motion_sad_narrow(prev, cur, w, h, shift, round as i32);
            }
            motion_sad_wide(prev, cur, w, h, shift, round, y_row, acc)
        },
    )
}

/// [`motion_sad`] in 64-bit arithmetic, for any samples.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn motion_sad_wide(
    prev: &[u16],
    cur: &[u16],
    w: usize,
    h: usize,
    shift: u32,
    round: i64,
    y_row: &mut Vec<i32>,
    acc: &mut Vec<i64>,
) -> u64 {
    y_row.resize(w, 0);
    let mut sad = 0u64;
    acc.resize(w, 0);
    for i in 0..h {
        acc.fill(0);
        for (k, &c) in MOTION_FILTER.iter().enumerate() {
            let r = mirror_r101(i as isize - 2 + k as isize, h);
            let pr = &prev[r * w..r * w + w];
            let cr = &cur[r * w..r * w + w];
            for j in 0..w {
                acc[j] += i64::from(c) * (i64::from(pr[j]) - i64::from(cr[j]));
            }
        }
        let mut any = 0i32;
        for j in 0..w {
            y_row[j] = ((acc[j] + round) >> shift) as i32;
            any |= y_row[j];
        }
        if any == 0 {
            continue;
        }
        let mut row_sad = 0u32;
        for j in 0..w {
            let mut a = 0i64;
            for (k, &c) in MOTION_FILTER.iter().enumerate() {
                a += i64::from(c) * i64::from(y_row[mirror_r101(j as isize - 2 + k as isize, w)]);
            }
            let v = ((a + 32768) >> 16) as i32;
            row_sad = row_sad.wrapping_add(v.unsigned_abs());
        }
        sad += u64::from(row_sad);
    }
    sad
}

/// [`motion_sad`] for up to 12 bits in 16-bit products with 32-bit sums
/// (which SSE2 does eight at a time), exact:
/// - vertical: sample differences and pairs of them fit `i16`, every tap fits
///   `i16`, and |Σc·d| ≤ 65536·4095 < 2^31;
/// - the filtered row `y` reaches ±65535, so its horizontal sum (up to 2^32)
///   is split: `y = 256·hi + lo` with `hi = y >> 8` in −256..=255 and
///   `lo = y & 255`; `a = 256·A_hi + A_lo` with both sums < 2^24, and
///   `(a + 32768) >> 16 = (A_hi + ((A_lo + 32768) >> 8)) >> 8` (floor division
///   nests).
#[inline(always)]
fn motion_sad_narrow(prev: &[u16], cur: &[u16], w: usize, h: usize, shift: u32, round: i32) -> u64 {
    // The filtered row's two halves, mirrored by two samples at each end.
    let mut hi = vec![0i16; w + 4];
    let mut lo = vec![0i16; w + 4];
    let mut sad = 0u64;
    let [c0, c1, c2, _, _] = MOTION_FILTER.map(|c| c as i16);
    for i in 0..h {
        let rows: [usize; 5] = std::array::from_fn(|k| mirror_r101(i as isize - 2 + k as isize, h));
        let line = |r: usize| (&prev[r * w..][..w], &cur[r * w..][..w]);
        let ((p0, q0), (p1, q1), (p2, q2), (p3, q3), (p4, q4)) = (
            line(rows[0]),
            line(rows[1]),
            line(rows[2]),
            line(rows[3]),
            line(rows[4]),
        );
        let (hm, lm) = (&mut hi[2..2 + w], &mut lo[2..2 + w]);
        let mut any = 0i32;
        for j in 0..w {
            let d = |p: &[u16], q: &[u16]| p[j] as i16 - q[j] as i16;
            let (s04, s13, s2) = (d(p0, q0) + d(p4, q4), d(p1, q1) + d(p3, q3), d(p2, q2));
            let a = i32::from(c0) * i32::from(s04)
                + i32::from(c1) * i32::from(s13)
                + i32::from(c2) * i32::from(s2);
            let y = (a + round) >> shift;
            any |= y;
            hm[j] = (y >> 8) as i16;
            lm[j] = (y & 255) as i16;
        }
        if any == 0 {
            continue;
        }
        for v in [&mut hi, &mut lo] {
            for f in 1..=2 {
                v[2 - f] = v[2 + mirror_r101(-(f as isize), w)];
                v[2 + w - 1 + f] = v[2 + mirror_r101((w - 1 + f) as isize, w)];
            }
        }
        let sum = |v: &[i16], j: usize| {
            i32::from(c0) * i32::from(v[j] + v[j + 4])
                + i32::from(c1) * i32::from(v[j + 1] + v[j + 3])
                + i32::from(c2) * i32::from(v[j + 2])
        };
        let mut row_sad = 0u32;
        for j in 0..w {
            let v = (sum(&hi, j) + ((sum(&lo, j) + 32768) >> 8)) >> 8;
            row_sad = row_sad.wrapping_add(v.unsigned_abs());
        }
        sad += u64::from(row_sad);
    }
    sad
}

/// The per-frame motion score from the SAD: `min(sad/256/(w·h)·fps_weight, max)`.
pub fn sad_score(sad: u64, w: usize, h: usize, p: &MotionParams) -> f64 {
    let s = sad as f64 / 256.0 / (w * h) as f64 * p.fps_weight;
    if s < p.max_val { s } else { p.max_val }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_bit_path_equals_the_wide_one() {
        // Extremes (full-range flips, which drive the filtered row to ±65535
        // and its horizontal sums past 2^31), noise, odd sizes, 8/10/12 bits.
        let mut seed = 12345u32;
        let mut rnd = move || {
            seed = seed.wrapping_mul(1664525).wrapping_add(1013904223);
            seed >> 8
        };
        for bpc in [8u8, 10, 12] {
            let max = (1u16 << bpc) - 1;
            for (w, h) in [(7, 5), (33, 17), (64, 9)] {
                let flat = |v: u16| vec![v; w * h];
                let noise: Vec<u16> = (0..w * h).map(|_| (rnd() as u16) & max).collect();
                let stripes: Vec<u16> = (0..w * h)
                    .map(|i| if (i / 3) % 2 == 0 { max } else { 0 })
                    .collect();
                for (p, c) in [
                    (flat(max), flat(0)),
                    (flat(0), flat(max)),
                    (noise.clone(), stripes.clone()),
                    (stripes, noise),
                ] {
                    let (shift, round) = if bpc == 8 {
                        (8, 128)
                    } else {
                        (u32::from(bpc), 1i64 << (bpc - 1))
                    };
                    let wide = motion_sad_wide(
                        &p,
                        &c,
                        w,
                        h,
                        shift,
                        round,
                        &mut Vec::new(),
                        &mut Vec::new(),
                    );
                    let narrow = motion_sad_narrow(&p, &c, w, h, shift, round as i32);
                    assert_eq!(narrow, wide, "{bpc}-bit {w}x{h}");
                }
            }
        }
    }

    #[test]
    fn static_sequence_has_no_motion() {
        let frame: Vec<u16> = (0..64 * 48).map(|i| (i * 7 % 251) as u16).collect();
        let mut y = Vec::new();
        assert_eq!(
            motion_sad(&frame, &frame, 64, 48, 8, &mut y, &mut Vec::new()),
            0
        );
    }
}
