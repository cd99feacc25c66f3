//! libvmaf's `float_motion` (`float_motion.c`, `motion.c` at f85a8536): the
//! mean absolute difference of two consecutive reference pictures, each
//! blurred by a 5-tap Gaussian (`FILTER_5_s`), all in float.
//!
//! Per frame i ≥ 1 the extractor gives `motion` = min(SAD(i−1, i)·fps weight,
//! max); `motion2` of frame i is the smaller of frame i's and frame i+1's
//! (the last frame keeps its own), `motion3` the blend of that
//! (`motion_blend`); frame 0 has motion and motion2 0 and the motion3 of
//! frame 1's score. The temporal part is [`super::motion::Temporal`], shared
//! with the integer extractor.

use super::float_filter::filter1d;
use super::float_psnr::float_picture;
use super::grow;
use super::motion::MotionParams;
use super::options::{OptSpec, Resolved};

/// `motion_tools.h:FILTER_5_s` (libvmaf's literals, as written there).
#[allow(clippy::excessive_precision)]
pub const FILTER_5: [f32; 5] = [
    0.054488685,
    0.244201342,
    0.402619947,
    0.244201342,
    0.054488685,
];
/// `FILTER_3_s` (`motion_filter_size` 3) and `FILTER_5_NO_OP_s` (1).
#[allow(clippy::excessive_precision)]
pub const FILTER_3: [f32; 3] = [0.166378498, 0.667243004, 0.166378498];
pub const FILTER_NONE: [f32; 5] = [0.0, 0.0, 1.0, 0.0, 0.0];

/// The blur of `motion_filter_size`: 1 none, 3 three taps, else five.
pub fn filter_for_size(size: i32) -> &'static [f32] {
    match size {
        1 => &FILTER_NONE,
        3 => &FILTER_3,
        _ => &FILTER_5,
    }
}

/// `float_motion.c:options` (the ones that change numbers; `debug`, on by
/// default, makes it print `motion`).
pub const OPTIONS: &[OptSpec] = &[
    OptSpec::boolean("motion_force_zero", "force_0"),
    OptSpec::num("motion_fps_weight", "mfw", 1.0, 0.0, 5.0),
    OptSpec::num("motion_blend_factor", "mbf", 1.0, 0.0, 1.0),
    OptSpec::num("motion_blend_offset", "mbo", 40.0, 0.0, 1000.0),
    OptSpec::boolean("motion_add_scale1", "mdc"),
    OptSpec::int("motion_filter_size", "mfs", 5.0, 0.0, 9.0),
    OptSpec::boolean("motion_add_uv", "mau"),
    OptSpec::num("motion_max_val", "mmxv", 10000.0, 0.0, 10000.0),
    OptSpec::boolean("debug", "debug").not_param(),
];

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloatMotionParams {
    /// The temporal options (no five-frame window, no moving average).
    pub temporal: MotionParams,
    /// `motion_filter_size`.
    pub filter_size: i32,
}

impl FloatMotionParams {
    pub fn from_options(o: &Resolved) -> Result<Self, String> {
        for opt in ["motion_add_scale1", "motion_add_uv"] {
            if o.flag(OPTIONS, opt) {
                return Err(format!("{opt} is not implemented by this engine"));
            }
        }
        let n = |k| o.num(OPTIONS, k);
        Ok(Self {
            temporal: MotionParams {
                blend_factor: n("motion_blend_factor"),
                blend_offset: n("motion_blend_offset"),
                force_zero: o.flag(OPTIONS, "motion_force_zero"),
                fps_weight: n("motion_fps_weight"),
                max_val: n("motion_max_val"),
                moving_average: false,
                five_frame_window: false,
            },
            filter_size: n("motion_filter_size") as i32,
        })
    }

    /// `motion` of a frame from its weighted score: capped at the maximum.
    pub fn cap(&self, x: f64) -> f64 {
        if x < self.temporal.max_val {
            x
        } else {
            self.temporal.max_val
        }
    }
}

/// `motion.c:vmaf_image_sad_c`: Σ|a − b| row by row in float, over w·h.
pub fn image_sad(a: &[f32], b: &[f32], w: usize, h: usize) -> f32 {
    let mut accum = 0f32;
    for (ra, rb) in a.chunks_exact(w).zip(b.chunks_exact(w)).take(h) {
        let mut line = 0f32;
        for (&x, &y) in ra.iter().zip(rb) {
            line += (x - y).abs();
        }
        accum += line;
    }
    accum / (w * h) as f32
}

/// Scratch for one worker: the two blurred pictures.
#[derive(Default)]
pub struct FloatMotion {
    prev: Vec<f32>,
    cur: Vec<f32>,
}

impl FloatMotion {
    /// The raw score of frame i from the reference luma of frames i − 1 and
    /// i (`w`×`h`, packed), before the fps weight and the cap.
    pub fn score(
        &mut self,
        prev: &[u16],
        cur: &[u16],
        (w, h, bpc): (usize, usize, u8),
        filter: &[f32],
    ) -> f64 {
        blur(prev, w, h, bpc, filter, &mut self.prev);
        blur(cur, w, h, bpc, filter, &mut self.cur);
        f64::from(image_sad(&self.prev, &self.cur, w, h))
    }
}

/// The picture as floats around 0, blurred.
fn blur(luma: &[u16], w: usize, h: usize, bpc: u8, filter: &[f32], out: &mut Vec<f32>) {
    let f = float_picture(luma, bpc, -128);
    grow(out, w * h);
    filter1d(filter, &f, w, h, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sad_is_the_mean_absolute_difference() {
        let a = vec![1.0f32, 2.0, 3.0, 4.0];
        let b = vec![2.0f32, 2.0, 1.0, 8.0];
        assert_eq!(image_sad(&a, &b, 2, 2), 7.0 / 4.0);
    }

    #[test]
    fn a_shifted_ramp_moves_by_its_slope() {
        let (w, h) = (40, 36);
        let prev: Vec<u16> = (0..w * h).map(|i| (i % w) as u16 * 2).collect();
        let cur: Vec<u16> = prev.iter().map(|v| v + 3).collect();
        let s = FloatMotion::default().score(&prev, &cur, (w, h, 8), &FILTER_5);
        assert!((s - 3.0).abs() < 1e-4, "{s}");
        assert_eq!(
            FloatMotion::default().score(&prev, &prev, (w, h, 8), &FILTER_5),
            0.0
        );
    }
}
