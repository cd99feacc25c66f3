//! float_motion on the GPU (`kernels/float_filter.hip`): this frame's and the
//! previous frame's reference as floats, each blurred by the 5-tap filter,
//! and the per-row sums of their absolute differences, added in order on the
//! host. The CPU twin (`vmaf::features::float_motion`) forms every value
//! the same way, so the scores are identical.

#![forbid(unsafe_code)]

use super::float_filter::{self as ff, Source, Taps, picture_bytes};
use super::{Frame, Geometry, GpuExtractor, Retired};
use crate::hip::{Device, DeviceBuffer, HipError, Stream};
use crate::vmaf::features::RawFeatures;
use crate::vmaf::features::float_motion::{FloatMotionParams, filter_for_size};
use std::sync::Arc;

/// One slot's pictures: two float pictures, the filter's pass, two blurred.
struct Slot {
    pics: [DeviceBuffer; 2],
    tmp: DeviceBuffer,
    blurred: [DeviceBuffer; 2],
    rows: DeviceBuffer,
}

pub(super) struct FloatMotion {
    p: FloatMotionParams,
    taps: Taps,
    size: (usize, usize),
    scratch: Vec<Slot>,
}

impl FloatMotion {
    pub(super) fn new(
        dev: &Arc<Device>,
        st: &Stream,
        geo: &Geometry,
        p: FloatMotionParams,
    ) -> Result<Self, HipError> {
        let filter = filter_for_size(p.filter_size).to_vec();
        Ok(FloatMotion {
            p,
            taps: Taps::upload(dev, st, &[filter], "float_motion filter")?,
            size: (geo.w, geo.h),
            scratch: Vec::new(),
        })
    }
}

impl GpuExtractor for FloatMotion {
    fn stage(&self) -> &'static str {
        "float_motion"
    }

    /// The row sums.
    fn extra_bytes(&self) -> usize {
        4 * self.size.1
    }

    fn add_slot(&mut self, dev: &Arc<Device>) -> Result<(), HipError> {
        let full = picture_bytes(self.size.0, self.size.1);
        let buf = || DeviceBuffer::new(dev, full, "float_motion picture");
        self.scratch.push(Slot {
            pics: [buf()?, buf()?],
            tmp: buf()?,
            blurred: [buf()?, buf()?],
            rows: DeviceBuffer::new(dev, self.extra_bytes(), "float_motion row sums")?,
        });
        Ok(())
    }

    fn slot_bytes(&self) -> usize {
        5 * picture_bytes(self.size.0, self.size.1) + self.extra_bytes()
    }

    fn every_frame(&self) -> bool {
        true
    }

    fn frames_back(&self) -> usize {
        1
    }

    /// The previous frame's reference against this one's, once that one is
    /// uploaded; false for the first frame and with motion forced to zero.
    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let Some((prev, uploaded)) = f.earlier[0] else {
            return Ok(false);
        };
        if self.p.temporal.force_zero {
            return Ok(false);
        }
        f.stream.wait(uploaded)?;
        let s = &self.scratch[f.slot];
        for (side, pix) in [&prev[0], &f.pix[0]].into_iter().enumerate() {
            ff::to_float(f, pix, &s.pics[side])?;
            ff::filter(
                f,
                (&self.taps, 0),
                Source::Samples(&s.pics[side]),
                self.size,
                &s.tmp,
                &s.blurred[side],
            )?;
        }
        ff::row_absdiff(f, &s.blurred[0], &s.blurred[1], self.size, &s.rows)?;
        f.read_back_extra(&s.rows, self.extra_bytes())?;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        out.float_motion = Some(if r.computed {
            let (w, h) = self.size;
            let sad = ff::add_rows(ff::floats(r.extra)) / (w * h) as f32;
            f64::from(sad) * self.p.temporal.fps_weight
        } else {
            0.0
        });
        Ok(())
    }
}
