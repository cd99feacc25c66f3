//! PSNR on the GPU (`psnr_sse.hip`): each uploaded plane's sum of
//! squared errors as one u64; the options (`PsnrConfig::put`) turn it
//! into decibels and MSE, as on the CPU.

#![forbid(unsafe_code)]

use crate::core::RawFeatures;
use crate::extractors::Slots;
use crate::extractors::psnr::PsnrConfig;
use crate::hip::twin::{Frame, GpuExtractor, KernelSet, Modules, Retired, sig};
use crate::hip::{HipError, Kernel};

/// Its kernel files.
pub(crate) const KERNELS: KernelSet = KernelSet {
    sources: &[("psnr_sse.hip", include_str!("psnr_sse.hip"))],
    load: |m, _, _| Ok(Box::new(Kernels::load(m)?)),
};

pub(crate) struct Kernels {
    sse8: Kernel,
    sse16: Kernel,
}

impl Kernels {
    pub(crate) fn load(m: &Modules) -> Result<Self, HipError> {
        let args = sig("pp ii p");
        let f = &m["psnr_sse.hip"];
        Ok(Kernels {
            sse8: f.kernel("psnr_sse_8", &args)?,
            sse16: f.kernel("psnr_sse_16", &args)?,
        })
    }
}

pub(crate) struct Psnr {
    pub(crate) config: PsnrConfig,
    pub(crate) slots: Slots,
}

impl GpuExtractor for Psnr {
    fn stage(&self) -> &'static str {
        "psnr"
    }

    /// One per plane (luma, Cb, Cr).
    fn sum_words(&self) -> usize {
        3
    }

    /// One launch per plane reported (luma, and the uploaded chroma
    /// unless `enable_chroma=false`).
    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let k = f.kernels.get::<Kernels>();
        let kern = if f.geo.bps == 1 { &k.sse8 } else { &k.sse16 };
        for p in 0..self.config.planes(f.geo.planes.len()) {
            f.launch_over_plane(kern, p, p)?;
        }
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let g = r.geo;
        self.config.put(r.sums, &g.planes, g.bpc, self.slots, out);
        Ok(())
    }
}
