//! float_moment and float_psnr on the GPU (`float_moment.hip`): the
//! luma sums both are made of (samples, float squares, float squares of the
//! differences) as five u64 sums; the CPU twin
//! (`vmaf::features::float_moment`, `float_psnr`) makes the features from
//! them, so they are identical.

#![forbid(unsafe_code)]

use crate::extractors::float_moment::cpu::LumaSums;
use crate::hip::features::{Frame, GpuExtractor, Modules, Retired, blocks, sig};
use crate::hip::{Arg, HipError, Kernel};
use crate::vmaf::features::{Plan, RawFeatures, float_sums_features};

pub(crate) struct Kernels {
    sums8: Kernel,
    sums16: Kernel,
}

impl Kernels {
    pub(crate) fn load(m: &Modules) -> Result<Self, HipError> {
        let args = sig("pp ii p");
        let f = &m["float_moment.hip"];
        Ok(Kernels {
            sums8: f.kernel("fm_sums_8", &args)?,
            sums16: f.kernel("fm_sums_16", &args)?,
        })
    }
}

/// float_psnr and float_moment, as `plan` asks for them.
pub(crate) struct FloatMoment {
    plan: Plan,
}

impl FloatMoment {
    /// The family for `plan`, if it asks for float_psnr or float_moment.
    pub(crate) fn for_plan(plan: &Plan) -> Option<Self> {
        (plan.float_psnr || plan.float_moment).then(|| FloatMoment { plan: plan.clone() })
    }
}

impl GpuExtractor for FloatMoment {
    fn stage(&self) -> &'static str {
        "float_moment"
    }

    fn sum_words(&self) -> usize {
        5
    }

    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let (g, k) = (f.geo, &f.kernels.float_moment);
        let kern = if g.bps == 1 { &k.sums8 } else { &k.sums16 };
        f.stream.launch(
            kern,
            (blocks(g.w), g.h as u32, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(f.plane(0, 0), 0),
                Arg::Buf(f.plane(1, 0), 0),
                Arg::I32(g.w as i32),
                Arg::I32(g.h as i32),
                Arg::Buf(f.sums, f.sums_at * 8),
            ],
        )?;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let s = r.sums;
        let sums = LumaSums {
            samples: [s[0], s[1]],
            squares: [s[2], s[3]],
            error_squares: s[4],
        };
        float_sums_features(&self.plan, &sums, (r.geo.w, r.geo.h, r.geo.bpc), out);
        Ok(())
    }
}
