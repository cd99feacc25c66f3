//! libvmaf's `float_motion`: the float models' motion, the SAD of the
//! blurred reference against the frame before, and after it, in frame
//! order, `motion2` and `motion3`.

pub mod cpu;
pub(crate) mod gpu;

use super::common::options::{OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, GpuRefusal, History, Output, Slots, Temporal};
use crate::core::FrameJob;
use crate::core::{FrameError, RawFeatures};
use crate::extractors::common::motion_temporal::Temporal as MotionState;
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};
use cpu::FloatMotionParams;

pub static FLOAT_MOTION: FloatMotionExtractor = FloatMotionExtractor;

pub struct FloatMotionExtractor;

impl Extractor for FloatMotionExtractor {
    fn name(&self) -> &'static str {
        "float_motion"
    }
    fn options(&self) -> &'static [OptSpec] {
        cpu::OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[("motion", 0), ("motion2", 1), ("motion3", 2)]
    }
    fn configure(&self, o: &Resolved) -> Result<Box<dyn Config>, String> {
        Ok(Box::new(FloatMotionParams::from_options(o)?))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[
            &super::common::float_filter_gpu::KERNELS,
            &super::common::prescale_gpu::KERNELS,
        ]
    }
}

impl Config for FloatMotionParams {
    fn outputs(&self) -> usize {
        3
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        vec![
            Output::now(1, "motion2"),
            Output::now(0, "motion"),
            Output::later(2, "motion3"),
        ]
    }
    fn reads_chroma(&self) -> bool {
        self.add_uv
    }
    fn every_frame(&self) -> bool {
        true
    }
    fn history(&self) -> History {
        History {
            reference: 1,
            distorted: false,
        }
    }
    fn cpu(&self, slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(FloatMotionCpu {
            p: *self,
            slot: slots.at(0),
            motion: cpu::FloatMotion::default(),
        })
    }
    /// None where libvmaf refuses the options for the stream (the CPU twin
    /// beside the GPU then gives the error).
    fn gpu(
        &self,
        slots: Slots,
        s: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, GpuRefusal> {
        let m = gpu::FloatMotion::new(s.dev, s.stream, s.geo, *self, slots)?;
        Ok(m.map(|m| Box::new(m) as Box<dyn GpuExtractor>))
    }
    fn temporal(&self, slots: Slots) -> Option<Box<dyn Temporal>> {
        Some(Box::new(FloatMotionTemporal {
            p: *self,
            slots,
            state: MotionState::default(),
            stamp: None,
        }))
    }
}

/// Each frame's raw score (its SAD against the frame before, times the fps
/// weight; 0 for the first).
struct FloatMotionCpu {
    p: FloatMotionParams,
    slot: usize,
    motion: cpu::FloatMotion,
}

impl CpuTwin for FloatMotionCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        let score = match &job.prev_reference {
            Some(prev) if !self.p.temporal.force_zero => {
                match self.motion.score_frames(prev, &job.reference, &self.p) {
                    Ok(s) => s * self.p.temporal.fps_weight,
                    Err(e) => {
                        out.fail(FrameError(e));
                        0.0
                    }
                }
            }
            _ => 0.0,
        };
        out.set(self.slot, score);
    }
}

/// motion2 and motion3 from this frame's raw score and the next one's;
/// `motion` itself capped.
struct FloatMotionTemporal {
    p: FloatMotionParams,
    slots: Slots,
    state: MotionState,
    /// The raw score of frame 1, once it came.
    stamp: Option<f64>,
}

impl Temporal for FloatMotionTemporal {
    fn stamp_index(&self) -> u64 {
        1
    }
    fn stamp(&mut self, frame: &RawFeatures) {
        self.stamp = frame.get(self.slots.at(0));
    }
    fn stamped(&self) -> bool {
        self.stamp.is_some()
    }
    fn finish(&mut self, frame: &mut RawFeatures, next: Option<&RawFeatures>) {
        let raw = self.slots.at(0);
        let Some(score) = frame.get(raw) else {
            return;
        };
        let next = next.and_then(|n| n.get(raw));
        let (m2, m3) = self
            .state
            .next(frame.index, score, next, self.stamp, &self.p.temporal);
        frame.set(raw, self.p.cap(score));
        frame.set(self.slots.at(1), self.p.cap(m2));
        frame.set(self.slots.at(2), m3);
    }
}
