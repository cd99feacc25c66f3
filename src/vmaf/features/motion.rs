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
//! | frame 0                | sad[0] = 0  | 0 (always 0)      |
//! | frame i ≥ 1            | sad[i]      | i − 1             |
//! | flush after frame n−1  | —           | n − 1 (= sad[n−1])|

use super::mirror_r101;

/// The 5-tap filter (VIF's scale-2 taps), Q16.
pub const MOTION_FILTER: [i32; 5] = [3571, 16004, 26386, 16004, 3571];

/// Motion options (`integer_motion.c:options`) that change numbers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MotionParams {
    pub force_zero: bool,
    pub blend_factor: f64,
    pub blend_offset: f64,
    pub fps_weight: f64,
    pub max_val: f64,
    pub moving_average: bool,
}

impl Default for MotionParams {
    fn default() -> Self {
        Self {
            force_zero: false,
            blend_factor: 1.0,
            blend_offset: 40.0,
            fps_weight: 1.0,
            max_val: 10000.0,
            moving_average: false,
        }
    }
}

/// `motion_score_pipeline_8` / `_16`: Σ|blur(prev − cur)| in Q8 per pixel.
/// The CPU twin of `kernels/motion_sad.hip`.
pub fn motion_sad(
    prev: &[u16],
    cur: &[u16],
    w: usize,
    h: usize,
    bpc: u8,
    y_row: &mut Vec<i32>,
    acc: &mut Vec<i64>,
) -> u64 {
    let (shift, round) = if bpc == 8 {
        (8u32, 128i64)
    } else {
        (u32::from(bpc), 1i64 << (bpc - 1))
    };
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

/// The per-frame motion score from the SAD: `min(sad/256/(w·h)·fps_weight, max)`.
pub fn sad_score(sad: u64, w: usize, h: usize, p: &MotionParams) -> f64 {
    let s = sad as f64 / 256.0 / (w * h) as f64 * p.fps_weight;
    if s < p.max_val { s } else { p.max_val }
}

/// `motion_blend_tools.h:motion_blend`.
pub fn blend(x: f64, factor: f64, offset: f64) -> f64 {
    let clipped = if x < offset { x } else { offset };
    x * factor + (1.0 - factor) * clipped
}

/// motion2 and motion3 of frame `i` from the SAD scores of frames `i` and
/// `i + 1` (`next` is `None` for the last frame). `prev_processed` carries the
/// moving-average state; `first_next` is sad[1] (for motion3 of frame 0).
pub fn motion2_motion3(
    i: usize,
    sad_i: f64,
    next: Option<f64>,
    p: &MotionParams,
    prev_processed: &mut f64,
) -> (f64, f64) {
    let cap = |x: f64| if x < p.max_val { x } else { p.max_val };
    if i == 0 {
        // motion3[0] is the blended sad[1] when a second frame exists.
        let stamp = next
            .map(|s1| cap(blend(s1, p.blend_factor, p.blend_offset)))
            .unwrap_or(0.0);
        *prev_processed = stamp;
        return (0.0, stamp);
    }
    let m2 = match next {
        None => sad_i,
        Some(hi) => {
            if sad_i < hi {
                sad_i
            } else {
                hi
            }
        }
    };
    let processed = cap(blend(m2, p.blend_factor, p.blend_offset));
    let m3 = if p.moving_average {
        (processed + *prev_processed) / 2.0
    } else {
        processed
    };
    *prev_processed = processed;
    (m2, m3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_sequence_has_no_motion() {
        let frame: Vec<u16> = (0..64 * 48).map(|i| (i * 7 % 251) as u16).collect();
        let mut y = Vec::new();
        assert_eq!(
            motion_sad(&frame, &frame, 64, 48, 8, &mut y, &mut Vec::new()),
            0
        );
    }

    #[test]
    fn motion2_is_min_of_neighbours_and_last_uses_own() {
        let p = MotionParams::default();
        let mut st = 0.0;
        assert_eq!(motion2_motion3(0, 0.0, Some(5.0), &p, &mut st), (0.0, 5.0));
        assert_eq!(motion2_motion3(1, 5.0, Some(3.0), &p, &mut st).0, 3.0);
        assert_eq!(motion2_motion3(2, 3.0, None, &p, &mut st).0, 3.0);
    }
}
