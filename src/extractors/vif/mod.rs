//! libvmaf's integer `vif`: visual information fidelity at four scales,
//! its logs from a fixed-point table.

pub mod cpu;
pub(crate) mod gpu;
#[allow(unsafe_code)] // vector loads, stores and calls of target-feature copies
mod simd;

use super::common::options::{OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, GpuRefusal, Output, Slots};
use crate::core::FrameJob;
use crate::core::RawFeatures;
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};

pub static VIF: VifExtractor = VifExtractor;

pub struct VifExtractor;

/// `integer_vif.c:options` (the ones that change numbers or names).
pub const OPTIONS: &[OptSpec] = &[
    OptSpec::num("vif_enhn_gain_limit", "egl", 100.0, 1.0, 100.0),
    OptSpec::boolean("debug", "debug").not_param(),
];

/// Its configuration: the enhancement gain limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VifParams {
    pub egl: f64,
}

impl Extractor for VifExtractor {
    fn name(&self) -> &'static str {
        "vif"
    }
    fn options(&self) -> &'static [OptSpec] {
        OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[
            ("integer_vif_scale0", 0),
            ("integer_vif_scale1", 1),
            ("integer_vif_scale2", 2),
            ("integer_vif_scale3", 3),
        ]
    }
    fn configure(&self, o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(VifParams {
            egl: o.num(OPTIONS, "vif_enhn_gain_limit"),
        }))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[&gpu::KERNELS]
    }
}

impl Config for VifParams {
    fn outputs(&self) -> usize {
        4
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        vec![
            Output::now(0, "integer_vif_scale0"),
            Output::now(1, "integer_vif_scale1"),
            Output::now(2, "integer_vif_scale2"),
            Output::now(3, "integer_vif_scale3"),
        ]
    }
    fn cpu(&self, slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(VifCpu {
            egl: self.egl,
            slots,
            vif: cpu::Vif::new(),
        })
    }
    fn gpu(
        &self,
        slots: Slots,
        setup: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        Ok(Some(Box::new(gpu::Vif::new(self.egl, setup.geo, slots))))
    }
}

struct VifCpu {
    egl: f64,
    slots: Slots,
    vif: cpu::Vif,
}

impl CpuTwin for VifCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        let (r, d) = (&job.reference, &job.distorted);
        let v = self.vif.compute(
            &r.luma().data,
            &d.luma().data,
            r.width(),
            r.height(),
            r.bpc,
            self.egl,
        );
        out.put(self.slots, &v.scores());
    }
}
