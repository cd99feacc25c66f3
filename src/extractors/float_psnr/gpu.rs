//! float_psnr on the GPU (`float_psnr.hip`): the float squares of the luma
//! differences as one u64 sum; the CPU twin's `psnr_from_error_squares`
//! turns it into decibels, so the two are identical.

#![forbid(unsafe_code)]

use super::cpu::psnr_from_error_squares;
use crate::core::RawFeatures;
use crate::hip::twin::{Frame, GpuExtractor, KernelSet, Modules, Retired, sig};
use crate::hip::{HipError, Kernel};

/// Its kernel file.
pub(crate) const KERNELS: KernelSet = KernelSet {
    sources: &[("float_psnr.hip", include_str!("float_psnr.hip"))],
    load: |m, _, _| Ok(Box::new(Kernels::load(m)?)),
};

pub(crate) struct Kernels {
    sums8: Kernel,
    sums16: Kernel,
}

impl Kernels {
    fn load(m: &Modules) -> Result<Self, HipError> {
        let args = sig("pp ii p");
        let f = &m["float_psnr.hip"];
        Ok(Kernels {
            sums8: f.kernel("fp_error_squares_8", &args)?,
            sums16: f.kernel("fp_error_squares_16", &args)?,
        })
    }
}

pub(crate) struct FloatPsnr {
    slot: usize,
}

impl FloatPsnr {
    pub(crate) fn new(slot: usize) -> Self {
        FloatPsnr { slot }
    }
}

impl GpuExtractor for FloatPsnr {
    fn stage(&self) -> &'static str {
        "float_psnr"
    }

    fn sum_words(&self) -> usize {
        1
    }

    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let k = f.kernels.get::<Kernels>();
        let kern = if f.geo.bps == 1 { &k.sums8 } else { &k.sums16 };
        f.launch_over_plane(kern, 0, 0)?;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let (w, h, bpc) = (r.geo.w, r.geo.h, r.geo.bpc);
        out.set(self.slot, psnr_from_error_squares(r.sums[0], w, h, bpc));
        Ok(())
    }
}
