//! Float SSIM and MS-SSIM beside the GPU work: float extractors, computed
//! on the CPU by the CPU twin (`vmaf::features::ssim`) from the host
//! pictures, or, for pictures in GPU memory, from the uploaded luma read
//! back (docs/architecture.md says why they stay on the CPU).

#![forbid(unsafe_code)]

use super::{Frame, Geometry, GpuExtractor, Retired};
use crate::hip::{HipError, PinnedHostMem};
use crate::vmaf::features::{RawFeatures, ssim};

pub(super) struct Ssim {
    ssim: bool,
    ms_ssim: bool,
    /// Per slot: the frame's (SSIM, MS-SSIM), until it retires.
    results: Vec<(Option<f64>, Option<f64>)>,
    /// Host copies of the uploaded luma, for pictures in GPU memory.
    luma: Option<PinnedHostMem>,
}

impl Ssim {
    pub(super) fn new(ssim: bool, ms_ssim: bool) -> Self {
        Ssim {
            ssim,
            ms_ssim,
            results: Vec::new(),
            luma: None,
        }
    }

    /// The uploaded reference and distorted luma of the frame, read back
    /// and widened (pictures in GPU memory have no host copy). Waits for
    /// the frame's work so far.
    fn luma_from_device(&mut self, f: &Frame<'_>) -> Result<(Vec<f32>, Vec<f32>), HipError> {
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
        Ok((widen(&data[..bytes], g), widen(&data[bytes..2 * bytes], g)))
    }
}

/// Samples as floats for the SSIM extractors.
fn widen(b: &[u8], g: &Geometry) -> Vec<f32> {
    let v: Vec<u16> = if g.bps == 1 {
        b.iter().map(|&v| u16::from(v)).collect()
    } else {
        b.chunks_exact(2)
            .map(|c| u16::from_ne_bytes([c[0], c[1]]))
            .collect()
    };
    ssim::to_float(&v, g.bpc)
}

impl GpuExtractor for Ssim {
    fn stage(&self) -> &'static str {
        "ssim"
    }

    fn add_slot(&mut self, _dev: &std::sync::Arc<crate::hip::Device>) -> Result<(), HipError> {
        self.results.push((None, None));
        Ok(())
    }

    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let input = f.input;
        let (rf, df) = if input.reference.on_device() || input.distorted.on_device() {
            self.luma_from_device(f)?
        } else {
            let r = crate::vmaf::Frame::from_picture(input.reference, false);
            let d = crate::vmaf::Frame::from_picture(input.distorted, false);
            (
                ssim::to_float(&r.luma().data, r.bpc),
                ssim::to_float(&d.luma().data, d.bpc),
            )
        };
        let (w, h) = (f.geo.w, f.geo.h);
        self.results[f.slot] = (
            self.ssim
                .then(|| ssim::float_ssim(&rf, &df, w, h))
                .flatten(),
            self.ms_ssim
                .then(|| ssim::float_ms_ssim(&rf, &df, w, h))
                .flatten(),
        );
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        (out.ssim, out.ms_ssim) = std::mem::take(&mut self.results[r.slot]);
        Ok(())
    }
}
