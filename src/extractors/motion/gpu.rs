//! Motion on the GPU (`motion_sad.hip`): the sum of absolute
//! differences between this frame's reference luma and the one before (two
//! before with v1's five-frame window), blurred, as one u64; the CPU twin
//! (`cpu.rs`) turns it into the score. In a ladder the SAD
//! is computed once for the renditions whose earlier frames are the same
//! (`launch_reference`).

#![forbid(unsafe_code)]

use crate::core::RawFeatures;
use crate::extractors::Slots;
use crate::extractors::common::motion_temporal::MotionParams;
use crate::extractors::motion::cpu as motion;
use crate::hip::twin::{
    Frame, Geometry, GpuExtractor, KernelSet, Modules, ReferenceWork, Retired, blocks, sig,
};
use crate::hip::{Arg, DeviceBuffer, HipError, Kernel, Stream};

/// Its kernel file.
pub(crate) const KERNELS: KernelSet = KernelSet {
    sources: &[("motion_sad.hip", include_str!("motion_sad.hip"))],
    load: |m, _, _| Ok(Box::new(Kernels::load(m)?)),
};

pub(crate) struct Kernels {
    sad8: Kernel,
    sad16: Kernel,
}

impl Kernels {
    pub(crate) fn load(m: &Modules) -> Result<Self, HipError> {
        let args = sig("pp iiii p");
        let f = &m["motion_sad.hip"];
        Ok(Kernels {
            sad8: f.kernel("motion_sad_8", &args)?,
            sad16: f.kernel("motion_sad_16", &args)?,
        })
    }
}

pub(crate) struct Motion {
    p: MotionParams,
    slots: Slots,
}

impl Motion {
    pub(crate) fn new(p: MotionParams, slots: Slots) -> Self {
        Motion { p, slots }
    }
}

/// The SAD of two luma planes (earlier, current) added into the u64 at
/// byte `at` of `out`.
fn sad(
    kernels: &crate::hip::twin::Kernels,
    g: &Geometry,
    stream: &Stream,
    [earlier, current]: [&DeviceBuffer; 2],
    out: &DeviceBuffer,
    at: usize,
) -> Result<(), HipError> {
    let k = kernels.get::<Kernels>();
    let kern = if g.bps == 1 { &k.sad8 } else { &k.sad16 };
    let shift = if g.bpc == 8 { 8 } else { i32::from(g.bpc) };
    // Rows per block: one block sum for several rows.
    let rows = 8;
    stream.launch(
        kern,
        (blocks(g.w), g.h.div_ceil(rows) as u32, 1),
        (256, 1, 1),
        0,
        &[
            Arg::Buf(earlier, 0),
            Arg::Buf(current, 0),
            Arg::I32(g.w as i32),
            Arg::I32(g.h as i32),
            Arg::I32(shift),
            Arg::I32(rows as i32),
            Arg::Buf(out, at),
        ],
    )
}

impl GpuExtractor for Motion {
    fn stage(&self) -> &'static str {
        "motion"
    }

    fn sum_words(&self) -> usize {
        1
    }

    fn every_frame(&self) -> bool {
        true
    }

    fn frames_back(&self) -> usize {
        if self.p.five_frame_window { 2 } else { 1 }
    }

    /// The reference's SAD (one u64).
    fn reference_buffers(&self) -> Vec<usize> {
        vec![8]
    }

    /// The SAD once for a ladder's renditions, as [`Motion::launch`].
    fn launch_reference(&self, w: &ReferenceWork<'_>) -> Result<bool, HipError> {
        let Some(prev) = w.earlier[self.frames_back() - 1] else {
            return Ok(false);
        };
        if self.p.force_zero {
            return Ok(false);
        }
        w.stream.memset(&w.out[0], 0, 8, 0)?;
        w.stream.wait(prev.uploaded)?;
        let pictures = [prev.plane(0, 0), &w.reference[0]];
        sad(w.kernels, w.geo, w.stream, pictures, &w.out[0], 0)?;
        Ok(true)
    }

    /// The SAD against the earlier reference, once that one is uploaded
    /// (or the ladder's, copied); false when there is none (the first
    /// frame) or motion is forced to zero.
    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let Some(prev) = f.earlier[self.frames_back() - 1] else {
            return Ok(false);
        };
        if self.p.force_zero {
            return Ok(false);
        }
        if let Some(shared) = f.shared {
            f.stream.copy(f.sums, f.sums_at * 8, &shared[0], 0, 8)?;
            return Ok(true);
        }
        f.stream.wait(prev.uploaded)?;
        let pictures = [prev.plane(0, 0), f.plane(0, 0)];
        sad(f.kernels, f.geo, f.stream, pictures, f.sums, f.sums_at * 8)?;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let sad = if r.computed {
            motion::sad_score(r.sums[0], r.geo.w, r.geo.h, &self.p)
        } else {
            0.0
        };
        out.set(self.slots.at(0), sad);
        Ok(())
    }
}
