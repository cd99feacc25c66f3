//! libvmaf's `cambi`: the banding of the distorted picture (and, with
//! `full_ref`, of the source and their difference).

pub mod cpu;
pub(crate) mod gpu;

use super::common::options::{OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, Geometry, GpuRefusal, Output, Slots};
use crate::core::RawFeatures;
use crate::core::{FrameJob, VmafError};
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};
use cpu::CambiParams;

pub static CAMBI: CambiExtractor = CambiExtractor;

pub struct CambiExtractor;

impl Extractor for CambiExtractor {
    fn name(&self) -> &'static str {
        "cambi"
    }
    fn options(&self) -> &'static [OptSpec] {
        cpu::OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[
            ("Cambi_feature_cambi_score", 0),
            ("cambi", 0),
            ("cambi_source", 1),
            ("cambi_full_reference", 2),
        ]
    }
    fn configure(&self, o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(CambiParams::from_options(o)?))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[&gpu::KERNELS]
    }
}

impl Config for CambiParams {
    fn outputs(&self) -> usize {
        3
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        let mut names = vec![Output::now(0, "cambi")];
        if self.full_ref {
            names.push(Output::now(1, "cambi_source"));
            names.push(Output::now(2, "cambi_full_reference"));
        }
        names
    }
    fn slow_on_gpu(&self) -> bool {
        true
    }
    fn check(&self, g: &Geometry) -> Result<(), VmafError> {
        self.setup(g.width as u32, g.height as u32, u32::from(g.bpc))
            .map(|_| ())
            .map_err(VmafError::TooSmall)
    }
    fn cpu(&self, slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(CambiCpu {
            p: *self,
            slots,
            cambi: cpu::Cambi::default(),
        })
    }
    fn gpu(
        &self,
        slots: Slots,
        s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        Ok(Some(Box::new(gpu::Cambi::new(
            s.dev, s.stream, s.geo, self, slots,
        )?)))
    }
}

struct CambiCpu {
    p: CambiParams,
    slots: Slots,
    cambi: cpu::Cambi,
}

impl CpuTwin for CambiCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        match self.cambi.compute(&job.reference, &job.distorted, &self.p) {
            Ok(v) => v.write(out, self.slots),
            Err(e) => out.fail(e),
        }
    }
}
