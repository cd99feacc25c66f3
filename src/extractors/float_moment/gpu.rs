//! float_moment on the GPU (`float_moment.hip`): the luma sums (samples
//! and their float squares) as four u64 sums; the
//! CPU twin's `moments` makes the features from them, so they are
//! identical.

#![forbid(unsafe_code)]

use crate::core::RawFeatures;
use crate::extractors::Slots;
use crate::extractors::float_moment::cpu::{LumaSums, moments};
use crate::hip::twin::{Frame, GpuExtractor, KernelSet, Modules, Retired, sig};
use crate::hip::{HipError, Kernel};

/// Its kernel files.
pub(crate) const KERNELS: KernelSet = KernelSet {
    sources: &[("float_moment.hip", include_str!("float_moment.hip"))],
    load: |m, _, _| Ok(Box::new(Kernels::load(m)?)),
};

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

pub(crate) struct FloatMoment {
    slots: Slots,
}

impl FloatMoment {
    pub(crate) fn new(slots: Slots) -> Self {
        FloatMoment { slots }
    }
}

impl GpuExtractor for FloatMoment {
    fn stage(&self) -> &'static str {
        "float_moment"
    }

    fn sum_words(&self) -> usize {
        4
    }

    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let k = f.kernels.get::<Kernels>();
        let kern = if f.geo.bps == 1 { &k.sums8 } else { &k.sums16 };
        f.launch_over_plane(kern, 0, 0)?;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let s = r.sums;
        let sums = LumaSums {
            samples: [s[0], s[1]],
            squares: [s[2], s[3]],
        };
        let (w, h, bpc) = (r.geo.w, r.geo.h, r.geo.bpc);
        out.put(self.slots, &moments(&sums, w, h, bpc));
        Ok(())
    }
}
