//! libvmaf's `float_motion` (`float_motion.c`, `motion.c` at f85a8536): the
//! mean absolute difference of two consecutive reference pictures, each
//! blurred by a 5-tap Gaussian (`FILTER_5_s`), all in float.
//!
//! Per frame i ≥ 1 the extractor gives `motion` = min(SAD(i−1, i)·fps weight,
//! max); `motion2` of frame i is the smaller of frame i's and frame i+1's
//! (the last frame keeps its own), `motion3` the blend of that
//! (`motion_blend`); frame 0 has motion and motion2 0 and the motion3 of
//! frame 1's score. The temporal part is [`crate::extractors::common::motion_temporal::Temporal`], shared
//! with the integer extractor.
//!
//! `motion_add_scale1` adds to each plane's SAD the SAD of the two blurred
//! pictures halved by bilinear `vif_scale_frame_s` (a float sum of the two
//! means); `motion_add_uv` adds, in double, the SADs of the Cb and Cr planes,
//! each blurred the same way. libvmaf reads the halved chroma pictures of
//! the two together with the luma's row stride, past the samples it wrote
//! (memory it never set), so that pair is refused.

use crate::core::picture::{Frame, OwnedPlane};
use crate::extractors::common::float_filter::filter1d;
use crate::extractors::common::float_picture::float_picture;
use crate::extractors::common::grow;
use crate::extractors::common::motion_temporal::MotionParams;
use crate::extractors::common::options::{OptSpec, Resolved};
use crate::extractors::common::prescale::{BILINEAR_MAX_WIDTH, PrescaleMethod, scale_frame};

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
    /// `motion_add_scale1`: each SAD plus that of the halved pictures.
    pub add_scale1: bool,
    /// `motion_add_uv`: the Cb and Cr planes' SADs added.
    pub add_uv: bool,
}

impl FloatMotionParams {
    pub fn from_options(o: &Resolved) -> Result<Self, String> {
        let (add_scale1, add_uv) = (
            o.flag(OPTIONS, "motion_add_scale1"),
            o.flag(OPTIONS, "motion_add_uv"),
        );
        if add_scale1 && add_uv {
            return Err(
                "motion_add_scale1 with motion_add_uv: libvmaf reads its halved \
                 chroma pictures past what it wrote (memory it never set), so there is \
                 no number to match; ask for one of the two"
                    .into(),
            );
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
            add_scale1,
            add_uv,
        })
    }

    /// The planes it reads: luma, and both chroma planes with `add_uv`.
    pub fn planes(&self) -> usize {
        if self.add_uv { 3 } else { 1 }
    }

    /// libvmaf's refusals for a stream: `add_uv` without chroma, a halved
    /// luma wider than its bilinear scaler takes.
    pub fn check(&self, w: usize, gray: bool) -> Result<(), String> {
        if self.add_uv && gray {
            return Err(
                "float_motion: motion_add_uv needs the chroma planes (the input is GRAY)".into(),
            );
        }
        if self.add_scale1 && half(w) > BILINEAR_MAX_WIDTH {
            return Err(format!(
                "float_motion: motion_add_scale1 halves {w} samples to more than libvmaf's {BILINEAR_MAX_WIDTH}"
            ));
        }
        Ok(())
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

/// `(int)(n * 0.5 + 0.5)`: a side halved for `motion_add_scale1`.
pub fn half(n: usize) -> usize {
    (n as f64 * 0.5 + 0.5) as usize
}

/// `vmaf_image_sad_c` with `motion_add_scale1`: the SAD of two blurred
/// `w`×`h` pictures plus the SAD of their bilinear halves, in float.
pub fn sad_with_scale1(a: &[f32], b: &[f32], w: usize, h: usize) -> f32 {
    let (hw, hh) = (half(w), half(h));
    let (mut ha, mut hb) = (Vec::new(), Vec::new());
    scale_frame(PrescaleMethod::Bilinear, a, w, h, &mut ha, hw, hh);
    scale_frame(PrescaleMethod::Bilinear, b, w, h, &mut hb, hw, hh);
    image_sad(a, b, w, h) + image_sad(&ha, &hb, hw, hh)
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
        f64::from(self.plane_sad(prev, cur, (w, h, bpc), filter, false))
    }

    /// The raw score of frame i from the reference pictures of frames
    /// i − 1 and i, with the options that add scale 1 and chroma: each
    /// plane's SAD added in double, luma first.
    pub fn score_frames(
        &mut self,
        prev: &Frame,
        cur: &Frame,
        p: &FloatMotionParams,
    ) -> Result<f64, String> {
        p.check(cur.width(), cur.planes.len() < 3)?;
        let filter = filter_for_size(p.filter_size);
        let mut score = 0f64;
        for k in 0..p.planes() {
            let (a, b): (&OwnedPlane, &OwnedPlane) = (&prev.planes[k], &cur.planes[k]);
            let geo = (b.width, b.height, cur.bpc);
            score += f64::from(self.plane_sad(&a.data, &b.data, geo, filter, p.add_scale1));
        }
        Ok(score)
    }

    fn plane_sad(
        &mut self,
        prev: &[u16],
        cur: &[u16],
        (w, h, bpc): (usize, usize, u8),
        filter: &[f32],
        add_scale1: bool,
    ) -> f32 {
        blur(prev, w, h, bpc, filter, &mut self.prev);
        blur(cur, w, h, bpc, filter, &mut self.cur);
        let (a, b) = (&self.prev[..w * h], &self.cur[..w * h]);
        if add_scale1 {
            sad_with_scale1(a, b, w, h)
        } else {
            image_sad(a, b, w, h)
        }
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
    fn scale1_adds_the_halves_sad_and_uv_needs_chroma() {
        // A constant difference of 3 survives blurring and halving alike.
        let (w, h) = (9, 7);
        let a: Vec<f32> = (0..w * h).map(|i| (i % w) as f32).collect();
        let b: Vec<f32> = a.iter().map(|v| v + 3.0).collect();
        assert_eq!(half(9), 5);
        assert_eq!(sad_with_scale1(&a, &b, w, h), 6.0);
        let p = FloatMotionParams {
            temporal: MotionParams::default(),
            filter_size: 5,
            add_scale1: false,
            add_uv: true,
        };
        assert_eq!(p.planes(), 3);
        assert!(p.check(64, true).unwrap_err().contains("GRAY"));
        assert!(p.check(64, false).is_ok());
        let wide = FloatMotionParams {
            add_scale1: true,
            add_uv: false,
            ..p
        };
        assert!(wide.check(15360, false).is_ok());
        assert!(wide.check(15362, false).unwrap_err().contains("7680"));
    }

    #[test]
    fn scale1_with_uv_is_refused_by_name() {
        use crate::core::model::OptValue;
        let opts = |names: &[&str]| {
            let given: Vec<(String, OptValue)> = names
                .iter()
                .map(|n| (n.to_string(), OptValue::Bool(true)))
                .collect();
            let o = crate::extractors::common::options::resolve(OPTIONS, &given, "float_motion")
                .unwrap();
            FloatMotionParams::from_options(&o)
        };
        assert!(opts(&["motion_add_scale1"]).unwrap().add_scale1);
        assert!(opts(&["motion_add_uv"]).unwrap().add_uv);
        let err = opts(&["motion_add_scale1", "motion_add_uv"]).unwrap_err();
        assert!(
            err.contains("motion_add_scale1 with motion_add_uv"),
            "{err}"
        );
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
