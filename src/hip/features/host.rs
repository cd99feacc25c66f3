//! The extractors that run on the CPU beside the GPU work, by their CPU
//! twins: float SSIM and MS-SSIM (`vmaf::features::ssim`; docs/architecture.md
//! says why they stay there), and `float_psnr`, `float_ansnr` and
//! `float_moment` (`vmaf::features::float_*`), which have no kernel yet. They
//! read the host pictures, or, for pictures in GPU memory, the uploaded luma
//! read back.

#![forbid(unsafe_code)]

use super::{Frame, Geometry, GpuExtractor, Retired};
use crate::hip::{HipError, PinnedHostMem};
use crate::vmaf::features::{Plan, RawFeatures, float_extras, ssim};

pub(super) struct Host {
    plan: Plan,
    /// Per slot: the frame's values, until it retires.
    results: Vec<RawFeatures>,
    /// Host copies of the uploaded luma, for pictures in GPU memory.
    luma: Option<PinnedHostMem>,
}

impl Host {
    /// The host family of `plan`, if it asks for any of its extractors.
    pub(super) fn for_plan(plan: &Plan) -> Option<Self> {
        let wanted =
            plan.ssim || plan.ms_ssim || plan.float_psnr || plan.float_ansnr || plan.float_moment;
        wanted.then(|| Host {
            plan: plan.clone(),
            results: Vec::new(),
            luma: None,
        })
    }

    /// The uploaded reference and distorted luma of the frame, read back
    /// (pictures in GPU memory have no host copy). Waits for the frame's
    /// work so far.
    fn luma_from_device(&mut self, f: &Frame<'_>) -> Result<[Vec<u16>; 2], HipError> {
        let g = f.geo;
        let (w, h) = g.planes[0];
        let bytes = w * h * g.bps;
        if self
            .luma
            .as_ref()
            .is_none_or(|m| m.shared().len() < 2 * bytes)
        {
            self.luma = Some(PinnedHostMem::new(f.stream.device(), 2 * bytes)?);
        }
        let host = self.luma.as_ref().expect("just made");
        for side in 0..2 {
            f.stream
                .download(host.shared(), side * bytes, &f.pix[side], 0, bytes)?;
        }
        f.stream.synchronize()?;
        let data = host.as_ref();
        Ok([widen(&data[..bytes], g), widen(&data[bytes..2 * bytes], g)])
    }
}

/// Read-back samples as 16-bit values.
fn widen(b: &[u8], g: &Geometry) -> Vec<u16> {
    if g.bps == 1 {
        b.iter().map(|&v| u16::from(v)).collect()
    } else {
        b.chunks_exact(2)
            .map(|c| u16::from_ne_bytes([c[0], c[1]]))
            .collect()
    }
}

impl GpuExtractor for Host {
    fn stage(&self) -> &'static str {
        "host"
    }

    fn add_slot(&mut self, _dev: &std::sync::Arc<crate::hip::Device>) -> Result<(), HipError> {
        self.results.push(RawFeatures::default());
        Ok(())
    }

    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let input = f.input;
        let [r, d] = if input.reference.on_device() || input.distorted.on_device() {
            self.luma_from_device(f)?
        } else {
            let r = crate::vmaf::Frame::from_picture(input.reference, false);
            let d = crate::vmaf::Frame::from_picture(input.distorted, false);
            [r.luma().data.to_vec(), d.luma().data.to_vec()]
        };
        let (w, h, bpc) = (f.geo.w, f.geo.h, f.geo.bpc);
        let mut out = RawFeatures::default();
        float_extras(&self.plan, &r, &d, w, h, bpc, &mut out);
        if self.plan.ssim || self.plan.ms_ssim {
            let (rf, df) = (ssim::to_float(&r, bpc), ssim::to_float(&d, bpc));
            if self.plan.ssim {
                out.ssim = ssim::float_ssim(&rf, &df, w, h);
            }
            if self.plan.ms_ssim {
                out.ms_ssim = ssim::float_ms_ssim(&rf, &df, w, h);
            }
        }
        self.results[f.slot] = out;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let v = std::mem::take(&mut self.results[r.slot]);
        out.ssim = v.ssim;
        out.ms_ssim = v.ms_ssim;
        out.float_psnr = v.float_psnr;
        out.float_ansnr = v.float_ansnr;
        out.float_moment = v.float_moment;
        Ok(())
    }
}
