//! libvmaf's `psnr`: the PSNR of each plane, `psnr_y`, `psnr_cb`,
//! `psnr_cr` (luma alone for GRAY).

pub mod cpu;
pub(crate) mod gpu;

use super::common::options::{Kind, OptSpec, Resolved};
use super::{Aggregate, Config, CpuTwin, Extractor, GpuRefusal, Output, Slots, Switch};
use crate::core::FrameJob;
use crate::core::RawFeatures;
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};
use cpu::Peaks;

pub static PSNR: Psnr = Psnr;

pub struct Psnr;

/// libvmaf's options of `psnr` (none renames outputs).
static OPTIONS: &[OptSpec] = &[
    OptSpec::new("enable_chroma", None, Kind::Bool, 1.0, "", 0.0, 1.0).not_param(),
    OptSpec::new("enable_mse", None, Kind::Bool, 0.0, "", 0.0, 1.0).not_param(),
    OptSpec::new("enable_apsnr", None, Kind::Bool, 0.0, "", 0.0, 1.0).not_param(),
    OptSpec::new("reduced_hbd_peak", None, Kind::Bool, 0.0, "", 0.0, 1.0).not_param(),
    OptSpec::new("min_sse", None, Kind::Num, 0.0, "", 0.0, f64::MAX).not_param(),
];

/// The options: chroma planes, MSE outputs, the reduced high-bit-depth
/// peak and the minimum SSE.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PsnrConfig {
    chroma: bool,
    mse: bool,
    /// `enable_apsnr`: the PSNR of the whole stream's error, per plane,
    /// at the end (`Apsnr`).
    apsnr: bool,
    reduced_hbd_peak: bool,
    min_sse: f64,
}

impl Extractor for Psnr {
    fn name(&self) -> &'static str {
        "psnr"
    }
    fn switch(&self) -> Option<&'static Switch> {
        Some(&Switch {
            property: "psnr",
            nick: "PSNR",
            blurb: "Also compute PSNR (psnr_y, psnr_cb, psnr_cr)",
            value: "psnr_y",
            field: "psnr-y",
        })
    }
    fn options(&self) -> &'static [OptSpec] {
        OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[("psnr_y", 0), ("psnr_cb", 1), ("psnr_cr", 2)]
    }
    fn configure(&self, o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(PsnrConfig {
            chroma: o.flag(OPTIONS, "enable_chroma"),
            mse: o.flag(OPTIONS, "enable_mse"),
            apsnr: o.flag(OPTIONS, "enable_apsnr"),
            reduced_hbd_peak: o.flag(OPTIONS, "reduced_hbd_peak"),
            min_sse: o.num(OPTIONS, "min_sse"),
        }))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[&gpu::KERNELS]
    }
}

/// Slots: PSNR of Y, Cb, Cr, then their MSE, then (for `enable_apsnr`,
/// not reported per frame) their sums of squared errors and sample counts.
const MSE: usize = 3;
const SSE: usize = 6;
const SAMPLES: usize = 9;
/// The peak APSNR is measured against (`Peaks::peak`).
const PEAK: usize = 12;

impl PsnrConfig {
    /// The planes reported: luma, and the chroma where enabled and present.
    pub(crate) fn planes(&self, present: usize) -> usize {
        if self.chroma { present.min(3) } else { 1 }
    }

    /// The peaks of a stream whose planes are `dims`.
    fn peaks(&self, bpc: u8, dims: &[(usize, usize)]) -> Peaks {
        let luma = dims[0];
        let sub = dims
            .get(1)
            .map_or((false, false), |c| (c.0 != luma.0, c.1 != luma.1));
        Peaks::new(bpc, luma, sub, self.reduced_hbd_peak, self.min_sse)
    }

    /// A frame's outputs from each plane's sum of squared errors.
    pub(crate) fn put(
        &self,
        sse: &[u64],
        dims: &[(usize, usize)],
        bpc: u8,
        slots: Slots,
        out: &mut RawFeatures,
    ) {
        let peaks = self.peaks(bpc, dims);
        for p in 0..self.planes(dims.len()) {
            let (w, h) = dims[p];
            out.set(slots.at(p), cpu::psnr_from_sse(sse[p], w, h, &peaks, p));
            if self.mse {
                out.set(slots.at(MSE + p), cpu::mse_from_sse(sse[p], w, h));
            }
            if self.apsnr {
                out.set(slots.at(SSE + p), sse[p] as f64);
                out.set(slots.at(SAMPLES + p), (w * h) as f64);
            }
        }
        if self.apsnr {
            out.set(slots.at(PEAK), peaks.peak);
        }
    }
}

impl Config for PsnrConfig {
    fn outputs(&self) -> usize {
        13
    }
    fn names(&self, chroma: bool) -> Vec<Output> {
        const PSNR: [&str; 3] = ["psnr_y", "psnr_cb", "psnr_cr"];
        const MSE_NAMES: [&str; 3] = ["mse_y", "mse_cb", "mse_cr"];
        let mut names = Vec::new();
        for p in 0..self.planes(if chroma { 3 } else { 1 }) {
            names.push(Output::now(p, PSNR[p]));
            if self.mse {
                names.push(Output::now(MSE + p, MSE_NAMES[p]));
            }
        }
        names
    }
    fn reads_chroma(&self) -> bool {
        self.chroma
    }
    fn aggregate(&self, slots: Slots) -> Option<Box<dyn Aggregate>> {
        self.apsnr.then(|| {
            Box::new(Apsnr {
                slots,
                peak: 0.0,
                sse: [0; 3],
                samples: [0; 3],
            }) as Box<dyn Aggregate>
        })
    }
    fn cpu(&self, slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(PsnrCpu {
            config: *self,
            slots,
        })
    }
    fn gpu(
        &self,
        slots: Slots,
        _s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        Ok(Some(Box::new(gpu::Psnr {
            config: *self,
            slots,
        })))
    }
}

struct PsnrCpu {
    config: PsnrConfig,
    slots: Slots,
}

impl CpuTwin for PsnrCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        let (r, d) = (&job.reference, &job.distorted);
        let n = self.config.planes(r.planes.len());
        let sse: Vec<u64> = (0..n)
            .map(|p| {
                let (rp, dp) = (&r.planes[p], &d.planes[p]);
                cpu::sse_plane(&rp.data, &dp.data, rp.width, rp.height)
            })
            .collect();
        let dims: Vec<(usize, usize)> = r.planes.iter().map(|p| (p.width, p.height)).collect();
        self.config.put(&sse, &dims, r.bpc, self.slots, out);
    }
}

/// libvmaf's APSNR (`enable_apsnr`): per plane, the PSNR of the error
/// summed over every scored frame, capped as its `flush` caps it.
struct Apsnr {
    slots: Slots,
    /// The peak, from the frames' `PEAK` slot.
    peak: f64,
    sse: [u64; 3],
    samples: [u64; 3],
}

impl Aggregate for Apsnr {
    fn push(&mut self, raw: &RawFeatures) {
        for p in 0..3 {
            if let (Some(e), Some(n)) = (
                raw.get(self.slots.at(SSE + p)),
                raw.get(self.slots.at(SAMPLES + p)),
            ) {
                self.sse[p] += e as u64;
                self.samples[p] += n as u64;
            }
        }
        if let Some(peak) = raw.get(self.slots.at(PEAK)) {
            self.peak = peak;
        }
    }

    fn values(&self) -> Vec<(String, f64)> {
        const NAMES: [&str; 3] = ["apsnr_y", "apsnr_cb", "apsnr_cr"];
        let peak = self.peak;
        (0..3)
            .map(|p| {
                let (e, n) = (self.sse[p] as f64, self.samples[p] as f64);
                let apsnr = 10.0 * ((peak * peak).log10() + n.log10() - e.log10());
                let max = (10.0 * (peak * peak * n * 2.0).log10()).ceil();
                // C's MIN: the cap unless the value is below it (NaN too).
                (NAMES[p].to_string(), if apsnr < max { apsnr } else { max })
            })
            .collect()
    }
}
