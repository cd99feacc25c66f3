//! libvmaf's SpEED extractors: `speed_chroma` (the chroma planes' entropy
//! differences) and `speed_temporal` (the luma frame differences'). Their
//! scaling stage also serves float_vif's and float_motion's prescale.

pub mod cpu;
pub(crate) mod gpu;

use super::common::options::{OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, Geometry, GpuRefusal, History, Output, Slots};
use crate::core::RawFeatures;
use crate::core::{FrameJob, VmafError};
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};
use cpu::SpeedParams;

pub static SPEED_CHROMA: SpeedChroma = SpeedChroma;
pub static SPEED_TEMPORAL: SpeedTemporal = SpeedTemporal;

pub struct SpeedChroma;
pub struct SpeedTemporal;

impl Extractor for SpeedChroma {
    fn name(&self) -> &'static str {
        "speed_chroma"
    }
    fn options(&self) -> &'static [OptSpec] {
        cpu::OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[
            ("Speed_chroma_feature_speed_chroma_u_score", 0),
            ("speed_chroma_u", 0),
            ("Speed_chroma_feature_speed_chroma_v_score", 1),
            ("speed_chroma_v", 1),
            ("Speed_chroma_feature_speed_chroma_uv_score", 2),
            ("speed_chroma_uv", 2),
        ]
    }
    fn configure(&self, o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(SpeedParams::from_options(o)?))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[&gpu::KERNELS]
    }
}

impl Config for SpeedParams {
    fn outputs(&self) -> usize {
        3
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        vec![
            Output::now(0, "speed_chroma_u"),
            Output::now(1, "speed_chroma_v"),
            Output::now(2, "speed_chroma_uv"),
        ]
    }
    fn reads_chroma(&self) -> bool {
        true
    }
    fn slow_on_gpu(&self) -> bool {
        true
    }
    fn check(&self, g: &Geometry) -> Result<(), VmafError> {
        let (cw, ch) = g.format.chroma_size(g.width, g.height).ok_or_else(|| {
            VmafError::Unsupported("speed_chroma needs chroma planes (input is GRAY)".into())
        })?;
        self.dims(cw, ch).map(|_| ()).map_err(VmafError::TooSmall)
    }
    fn cpu(&self, slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(ChromaCpu {
            p: *self,
            slots,
            speed: cpu::SpeedChroma::default(),
        })
    }
    fn gpu(
        &self,
        slots: Slots,
        s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        Ok(Some(Box::new(gpu::Speed::new(
            s.dev, s.stream, s.geo, self, slots,
        )?)))
    }
}

struct ChromaCpu {
    p: SpeedParams,
    slots: Slots,
    speed: cpu::SpeedChroma,
}

impl CpuTwin for ChromaCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        match self.speed.compute(&job.reference, &job.distorted, &self.p) {
            Ok(v) => out.put(self.slots, &v),
            Err(e) => out.fail(e),
        }
    }
}

/// speed_temporal's configuration: SpEED's parameters and
/// `speed_use_ref_diff`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TemporalParams {
    pub p: SpeedParams,
    pub use_ref_diff: bool,
}

impl Extractor for SpeedTemporal {
    fn name(&self) -> &'static str {
        "speed_temporal"
    }
    fn options(&self) -> &'static [OptSpec] {
        cpu::TEMPORAL_OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[
            ("Speed_temporal_feature_speed_temporal_score", 0),
            ("speed_temporal", 0),
        ]
    }
    fn configure(&self, o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(TemporalParams {
            p: SpeedParams::from_table(o, cpu::TEMPORAL_OPTIONS)?,
            use_ref_diff: o.flag(cpu::TEMPORAL_OPTIONS, "speed_use_ref_diff"),
        }))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[&gpu::KERNELS]
    }
}

impl Config for TemporalParams {
    fn outputs(&self) -> usize {
        1
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        vec![Output::now(0, "speed_temporal")]
    }
    fn history(&self) -> History {
        History {
            reference: 1,
            distorted: true,
        }
    }
    fn slow_on_gpu(&self) -> bool {
        true
    }
    fn check(&self, g: &Geometry) -> Result<(), VmafError> {
        self.p
            .dims(g.width, g.height)
            .map(|_| ())
            .map_err(VmafError::TooSmall)
    }
    fn cpu(&self, slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(TemporalCpu {
            p: *self,
            slot: slots.at(0),
            speed: cpu::SpeedTemporal::default(),
        })
    }
    fn gpu(
        &self,
        slots: Slots,
        s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        let t =
            gpu::SpeedTemporal::new(s.dev, s.stream, s.geo, (&self.p, self.use_ref_diff), slots)?;
        Ok(t.map(|t| Box::new(t) as Box<dyn GpuExtractor>))
    }
}

struct TemporalCpu {
    p: TemporalParams,
    slot: usize,
    speed: cpu::SpeedTemporal,
}

impl CpuTwin for TemporalCpu {
    /// The frame differences from the frame before; 0 for the first.
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        let (Some(pr), Some(pd)) = (&job.prev_reference, &job.prev_distorted) else {
            out.set(self.slot, 0.0);
            return;
        };
        let (r, d) = (&job.reference, &job.distorted);
        match self.speed.compute(
            [pr.luma(), pd.luma()],
            [r.luma(), d.luma()],
            r.bpc,
            (&self.p.p, self.p.use_ref_diff),
        ) {
            Ok(v) => out.set(self.slot, v),
            Err(e) => {
                out.fail(e);
                out.set(self.slot, 0.0);
            }
        }
    }
}
