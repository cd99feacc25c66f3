//! libvmaf's `float_adm`: ADM in floating point, the float models' detail
//! loss measure.

pub mod cpu;
pub(crate) mod gpu;
#[allow(unsafe_code)] // the SSE reciprocal estimate
pub mod recip;

use super::common::options::{OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, GpuRefusal, Output, Slots};
use crate::core::FrameJob;
use crate::core::RawFeatures;
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};
use cpu::FloatAdmParams;

pub static FLOAT_ADM: FloatAdmExtractor = FloatAdmExtractor;

pub struct FloatAdmExtractor;

const NAMES: [&str; 7] = [
    "adm2",
    "aim",
    "adm3",
    "adm_scale0",
    "adm_scale1",
    "adm_scale2",
    "adm_scale3",
];

impl Extractor for FloatAdmExtractor {
    fn name(&self) -> &'static str {
        "float_adm"
    }
    fn options(&self) -> &'static [OptSpec] {
        cpu::OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[
            ("adm2", 0),
            ("aim", 1),
            ("adm3", 2),
            ("adm_scale0", 3),
            ("adm_scale1", 4),
            ("adm_scale2", 5),
            ("adm_scale3", 6),
        ]
    }
    fn configure(&self, o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(FloatAdmParams::from_options(o)))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        // Its twin converts the pictures to floats and sums rows with the
        // shared float filter's kernels.
        &[&super::common::float_filter_gpu::KERNELS, &gpu::KERNELS]
    }
}

impl Config for FloatAdmParams {
    fn outputs(&self) -> usize {
        7
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        NAMES
            .iter()
            .enumerate()
            .map(|(i, n)| Output::now(i, n))
            .collect()
    }
    fn cpu(&self, slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(FloatAdmCpu {
            p: *self,
            slots,
            adm: cpu::FloatAdm::default(),
        })
    }
    fn gpu(
        &self,
        slots: Slots,
        s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        Ok(Some(Box::new(gpu::FloatAdm::new(
            s.dev, s.stream, s.geo, *self, slots,
        )?)))
    }
}

struct FloatAdmCpu {
    p: FloatAdmParams,
    slots: Slots,
    adm: cpu::FloatAdm,
}

impl CpuTwin for FloatAdmCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        let (r, d) = (&job.reference, &job.distorted);
        let geo = (r.width(), r.height(), r.bpc);
        self.adm
            .compute(&r.luma().data, &d.luma().data, geo, &self.p)
            .write(out, self.slots);
    }
}
