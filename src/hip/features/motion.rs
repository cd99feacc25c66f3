//! Motion on the GPU (`kernels/motion_sad.hip`): the sum of absolute
//! differences between this frame's reference luma and the one before (two
//! before with v1's five-frame window), blurred, as one u64; the CPU twin
//! (`vmaf::features::motion`) turns it into the score.

#![forbid(unsafe_code)]

use super::{Frame, GpuExtractor, Modules, Retired, blocks, sig};
use crate::hip::{Arg, HipError, Kernel};
use crate::vmaf::features::RawFeatures;
use crate::vmaf::features::motion::{self, MotionParams};

pub(in crate::hip) struct Kernels {
    sad8: Kernel,
    sad16: Kernel,
}

impl Kernels {
    pub(super) fn load(m: &Modules) -> Result<Self, HipError> {
        let args = sig("pp iiii p");
        let f = &m["motion_sad.hip"];
        Ok(Kernels {
            sad8: f.kernel("motion_sad_8", &args)?,
            sad16: f.kernel("motion_sad_16", &args)?,
        })
    }
}

pub(super) struct Motion {
    p: MotionParams,
}

impl Motion {
    pub(super) fn new(p: MotionParams) -> Self {
        Motion { p }
    }
}

impl GpuExtractor for Motion {
    fn stage(&self) -> &'static str {
        "motion"
    }

    fn sum_words(&self) -> usize {
        1
    }

    fn every_frame(&self) -> bool {
        true
    }

    fn frames_back(&self) -> usize {
        if self.p.five_frame_window { 2 } else { 1 }
    }

    /// The SAD against the earlier reference, once that one is uploaded;
    /// false when there is none (the first frame) or motion is forced to
    /// zero.
    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let Some(prev) = f.earlier[self.frames_back() - 1] else {
            return Ok(false);
        };
        if self.p.force_zero {
            return Ok(false);
        }
        let (g, k) = (f.geo, &f.kernels.motion);
        f.stream.wait(prev.uploaded)?;
        let kern = if g.bps == 1 { &k.sad8 } else { &k.sad16 };
        let shift = if g.bpc == 8 { 8 } else { i32::from(g.bpc) };
        // Rows per block: one block sum for several rows.
        let rows = 8;
        f.stream.launch(
            kern,
            (blocks(g.w), g.h.div_ceil(rows) as u32, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(prev.plane(0, 0), 0),
                Arg::Buf(f.plane(0, 0), 0),
                Arg::I32(g.w as i32),
                Arg::I32(g.h as i32),
                Arg::I32(shift),
                Arg::I32(rows as i32),
                Arg::Buf(f.sums, f.sums_at * 8),
            ],
        )?;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        out.motion_sad = Some(if r.computed {
            motion::sad_score(r.sums[0], r.geo.w, r.geo.h, &self.p)
        } else {
            0.0
        });
        Ok(())
    }
}
