//! The plan's CPU twins for one worker, each with its scratch memory.

use crate::core::{FrameJob, RawFeatures};
use crate::extractors::CpuTwin;
use crate::extractors::plan::{Configured, Plan};

/// One worker's CPU twins with their scratch memory.
pub struct CpuExtractor {
    slots: usize,
    /// Each twin, and whether it runs on unscored frames too.
    twins: Vec<(Box<dyn CpuTwin>, bool)>,
}

impl CpuExtractor {
    /// The plan's CPU twins; `threads` each may use within one frame.
    pub fn new(plan: &Plan, threads: usize) -> Self {
        Self::of(plan.slot_count(), plan.extractors.iter(), threads)
    }

    /// The CPU twins of `extractors` alone (those the GPU left to the
    /// host), writing into frames of `slots` slots.
    pub(crate) fn of<'a>(
        slots: usize,
        extractors: impl Iterator<Item = &'a Configured>,
        threads: usize,
    ) -> Self {
        let twins = extractors
            .map(|c| (c.config.cpu(c.slots, threads), c.config.every_frame()))
            .collect();
        CpuExtractor { slots, twins }
    }

    /// Everything for one frame pair.
    pub fn extract(&mut self, job: &FrameJob) -> RawFeatures {
        let mut out = RawFeatures::new(job.index, job.scored, self.slots);
        for (twin, every_frame) in &mut self.twins {
            if job.scored || *every_frame {
                twin.extract(job, &mut out);
            }
        }
        out
    }
}
