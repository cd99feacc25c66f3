//! The motion extractors' temporal stage (`integer_motion.c:flush`, and
//! `float_motion.c`'s the same way): motion2 of frame *i* is the smaller of
//! its neighbours' SAD scores, blended and capped, motion3 its moving
//! average. Shared by `motion` (integer SADs) and `float_motion` (float
//! SADs), whose options it reads.

/// Motion options (`integer_motion.c:options`) that change numbers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MotionParams {
    pub force_zero: bool,
    pub blend_factor: f64,
    pub blend_offset: f64,
    pub fps_weight: f64,
    pub max_val: f64,
    pub moving_average: bool,
    /// `motion_five_frame_window`: the SAD of frame *i* compares reference
    /// *i* with reference *i − 2*, and motion2 takes min(sad[i−1], sad[i+1]).
    pub five_frame_window: bool,
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
            five_frame_window: false,
        }
    }
}

/// `motion_blend_tools.h:motion_blend`.
pub fn blend(x: f64, factor: f64, offset: f64) -> f64 {
    let clipped = if x < offset { x } else { offset };
    x * factor + (1.0 - factor) * clipped
}

impl MotionParams {
    /// First frame with a SAD: 1, or 2 with the five-frame window.
    pub fn min_index(&self) -> u64 {
        if self.five_frame_window { 2 } else { 1 }
    }
}

/// motion2 / motion3 as `integer_motion.c:flush` derives them from the SAD
/// scores, one frame at a time in display order.
#[derive(Clone, Debug, Default)]
pub struct Temporal {
    prev_processed: f64,
    /// sad[i − 1] of the frame last finished.
    prev_sad: Option<f64>,
}

impl Temporal {
    /// motion2 and motion3 of frame `i`. `next` is sad[i + 1] (`None` for the
    /// last frame); `stamp` is `sad[min_index]` when the stream has that frame
    /// (it gives frames before `min_index` their motion3).
    pub fn next(
        &mut self,
        i: u64,
        sad_i: f64,
        next: Option<f64>,
        stamp: Option<f64>,
        p: &MotionParams,
    ) -> (f64, f64) {
        let cap = |x: f64| if x < p.max_val { x } else { p.max_val };
        let min_idx = p.min_index();
        let prev_sad = self.prev_sad.replace(sad_i);
        if i < min_idx {
            let s = stamp
                .map(|s| cap(blend(s, p.blend_factor, p.blend_offset)))
                .unwrap_or(0.0);
            self.prev_processed = s;
            return (0.0, s);
        }
        // lo = sad[i − (stride − 1)]: sad[i] itself, or sad[i − 1] with the
        // five-frame window (only from min_index on).
        let lo = if p.five_frame_window {
            prev_sad.filter(|_| i > min_idx)
        } else {
            Some(sad_i)
        };
        let m2 = match (next, lo) {
            (None, _) => sad_i,
            (Some(hi), Some(lo)) => {
                if lo < hi {
                    lo
                } else {
                    hi
                }
            }
            (Some(hi), None) => hi,
        };
        let processed = cap(blend(m2, p.blend_factor, p.blend_offset));
        let m3 = if p.moving_average {
            (processed + self.prev_processed) / 2.0
        } else {
            processed
        };
        self.prev_processed = processed;
        (m2, m3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn motion2_is_min_of_neighbours_and_last_uses_own() {
        let p = MotionParams::default();
        let mut t = Temporal::default();
        assert_eq!(t.next(0, 0.0, Some(5.0), Some(5.0), &p), (0.0, 5.0));
        assert_eq!(t.next(1, 5.0, Some(3.0), Some(5.0), &p).0, 3.0);
        assert_eq!(t.next(2, 3.0, None, Some(5.0), &p).0, 3.0);
    }

    /// libvmaf's flush with the five-frame window and moving average:
    /// frames 0, 1 get the stamp from sad[2]; frame 2 takes sad[3]; later
    /// frames min(sad[i−1], sad[i+1]); the last its own; motion3 averages.
    #[test]
    fn five_frame_window_and_moving_average() {
        let p = MotionParams {
            five_frame_window: true,
            moving_average: true,
            max_val: 18.0,
            ..Default::default()
        };
        let sad = [0.0, 0.0, 4.0, 6.0, 2.0, 30.0];
        let mut t = Temporal::default();
        let got: Vec<(f64, f64)> = (0..sad.len())
            .map(|i| t.next(i as u64, sad[i], sad.get(i + 1).copied(), Some(sad[2]), &p))
            .collect();
        assert_eq!(got[0], (0.0, 4.0));
        assert_eq!(got[1], (0.0, 4.0));
        assert_eq!(got[2], (6.0, (6.0 + 4.0) / 2.0));
        assert_eq!(got[3], (2.0, (2.0 + 6.0) / 2.0));
        assert_eq!(got[4], (6.0, (6.0 + 2.0) / 2.0));
        assert_eq!(got[5], (30.0, (18.0 + 6.0) / 2.0));
    }
}
