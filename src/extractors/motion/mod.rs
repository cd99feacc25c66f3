//! libvmaf's integer `motion`: the SAD of the blurred reference luma
//! against the frame before (two before with v1's five-frame window), and
//! after it, in frame order, `integer_motion2` and `integer_motion3`.

pub mod cpu;
pub(crate) mod gpu;

use super::common::motion_temporal::{self as temporal, MotionParams};
use super::common::options::{OptSpec, Resolved};
use super::{Config, CpuTwin, Extractor, History, Output, Slots, Temporal};
use crate::core::FrameJob;
use crate::core::RawFeatures;
use crate::hip::twin::{GpuExtractor, GpuSetup, KernelSet};

pub static MOTION: Motion = Motion;

pub struct Motion;

/// `integer_motion.c:options`.
pub const OPTIONS: &[OptSpec] = &[
    OptSpec::boolean("motion_force_zero", "force_0"),
    OptSpec::num("motion_blend_factor", "mbf", 1.0, 0.0, 1.0),
    OptSpec::num("motion_blend_offset", "mbo", 40.0, 0.0, 1000.0),
    OptSpec::num("motion_fps_weight", "mfw", 1.0, 0.0, 5.0),
    OptSpec::num("motion_max_val", "mmxv", 10000.0, 0.0, 10000.0),
    OptSpec::boolean("motion_five_frame_window", "mffw"),
    OptSpec::boolean("motion_moving_average", "mma"),
    OptSpec::boolean("debug", "debug").not_param(),
];

impl Extractor for Motion {
    fn name(&self) -> &'static str {
        "motion"
    }
    fn options(&self) -> &'static [OptSpec] {
        OPTIONS
    }
    fn provides(&self) -> &'static [(&'static str, usize)] {
        &[
            ("integer_motion_sad", 0),
            ("integer_motion2", 1),
            ("integer_motion3", 2),
        ]
    }
    fn configure(&self, o: &Resolved) -> Result<Box<dyn Config>, String> {
        let n = |k| o.num(OPTIONS, k);
        Ok(Box::new(MotionParams {
            blend_factor: n("motion_blend_factor"),
            blend_offset: n("motion_blend_offset"),
            force_zero: o.flag(OPTIONS, "motion_force_zero"),
            fps_weight: n("motion_fps_weight"),
            max_val: n("motion_max_val"),
            moving_average: o.flag(OPTIONS, "motion_moving_average"),
            five_frame_window: o.flag(OPTIONS, "motion_five_frame_window"),
        }))
    }
    fn kernels(&self) -> &'static [&'static KernelSet] {
        &[&gpu::KERNELS]
    }
}

impl Config for MotionParams {
    fn outputs(&self) -> usize {
        3
    }
    fn names(&self, _chroma: bool) -> Vec<Output> {
        vec![
            Output::now(0, "VMAF_integer_feature_motion_sad_score"),
            Output::later(1, "integer_motion2"),
            Output::later(2, "integer_motion3"),
        ]
    }
    fn every_frame(&self) -> bool {
        true
    }
    fn history(&self) -> History {
        History {
            reference: if self.five_frame_window { 2 } else { 1 },
            distorted: false,
        }
    }
    fn cpu(&self, slots: Slots, _threads: usize) -> Box<dyn CpuTwin> {
        Box::new(MotionCpu {
            p: *self,
            slot: slots.at(0),
            y_row: Vec::new(),
            acc: Vec::new(),
        })
    }
    fn gpu(
        &self,
        slots: Slots,
        _setup: &GpuSetup<'_>,
    ) -> Result<Option<Box<dyn GpuExtractor>>, super::GpuRefusal> {
        Ok(Some(Box::new(gpu::Motion::new(*self, slots))))
    }
    fn temporal(&self, slots: Slots) -> Option<Box<dyn Temporal>> {
        Some(Box::new(MotionTemporal {
            p: *self,
            slots,
            state: temporal::Temporal::default(),
            stamp: None,
        }))
    }
}

/// The SAD score of each frame, on the CPU.
struct MotionCpu {
    p: MotionParams,
    slot: usize,
    y_row: Vec<i32>,
    acc: Vec<i64>,
}

impl CpuTwin for MotionCpu {
    fn extract(&mut self, job: &FrameJob, out: &mut RawFeatures) {
        let prev = if self.p.five_frame_window {
            &job.prev_prev_reference
        } else {
            &job.prev_reference
        };
        let r = &job.reference;
        let (w, h) = (r.width(), r.height());
        let sad = match (prev, self.p.force_zero) {
            (Some(prev), false) => cpu::sad_score(
                cpu::motion_sad(
                    &prev.luma().data,
                    &r.luma().data,
                    w,
                    h,
                    r.bpc,
                    &mut self.y_row,
                    &mut self.acc,
                ),
                w,
                h,
                &self.p,
            ),
            _ => 0.0,
        };
        out.set(self.slot, sad);
    }
}

/// motion2 and motion3 from this frame's SAD and the next one's.
struct MotionTemporal {
    p: MotionParams,
    slots: Slots,
    state: temporal::Temporal,
    /// The SAD of frame `min_index`, once it came.
    stamp: Option<f64>,
}

impl Temporal for MotionTemporal {
    fn stamp_index(&self) -> u64 {
        self.p.min_index()
    }
    fn stamp(&mut self, frame: &RawFeatures) {
        self.stamp = frame.get(self.slots.at(0));
    }
    fn stamped(&self) -> bool {
        self.stamp.is_some()
    }
    fn finish(&mut self, frame: &mut RawFeatures, next: Option<&RawFeatures>) {
        let sad = self.slots.at(0);
        let Some(sad_i) = frame.get(sad) else {
            return;
        };
        let next = next.and_then(|n| n.get(sad));
        let (m2, m3) = self
            .state
            .next(frame.index, sad_i, next, self.stamp, &self.p);
        frame.set(self.slots.at(1), m2);
        frame.set(self.slots.at(2), m3);
    }
}
