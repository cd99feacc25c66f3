//! float_motion on the GPU (`float_filter.hip`): this frame's and the
//! previous frame's reference as floats, each blurred by the 5-tap filter,
//! and the per-row sums of their absolute differences, added in order on the
//! host; with `motion_add_scale1` also of the blurred pictures halved
//! (`prescale.hip`'s `vif_scale_frame`, bilinear), with `motion_add_uv`
//! of the Cb and Cr planes too. The CPU twin (`cpu.rs`)
//! forms every value the same way, so the scores are identical.

#![forbid(unsafe_code)]

use crate::core::PixelFormat;
use crate::core::RawFeatures;
use crate::extractors::Slots;
use crate::extractors::common::float_filter_gpu::{self as ff, Source, Taps, picture_bytes};
use crate::extractors::common::prescale::PrescaleMethod;
use crate::extractors::common::prescale_gpu::Prescale;
use crate::extractors::float_motion::cpu::{FloatMotionParams, filter_for_size, half};
use crate::hip::twin::{Frame, Geometry, GpuExtractor, Retired};
use crate::hip::{Device, DeviceBuffer, HipError, Stream};
use std::sync::Arc;

/// One slot's pictures: two float pictures, the filter's pass, two
/// blurred, two halved (with `motion_add_scale1`), and the row sums.
struct Slot {
    pics: [DeviceBuffer; 2],
    tmp: DeviceBuffer,
    blurred: [DeviceBuffer; 2],
    halves: Option<[DeviceBuffer; 2]>,
    rows: DeviceBuffer,
}

/// One plane it reads: its size, and its halving with `motion_add_scale1`.
struct PlaneSad {
    size: (usize, usize),
    half: Option<Prescale>,
}

impl PlaneSad {
    /// Row sums it reads back: its rows, and its half's.
    fn rows(&self) -> usize {
        self.size.1 + self.half.as_ref().map_or(0, |_| half(self.size.1))
    }
}

pub(crate) struct FloatMotion {
    slots: Slots,
    p: FloatMotionParams,
    taps: Taps,
    planes: Vec<PlaneSad>,
    scratch: Vec<Slot>,
}

impl FloatMotion {
    /// The twin for `geo`; none where libvmaf refuses the options for
    /// the stream (the CPU twin beside the GPU then gives the error).
    pub(crate) fn new(
        dev: &Arc<Device>,
        st: &Stream,
        geo: &Geometry,
        p: FloatMotionParams,
        slots: Slots,
    ) -> Result<Option<Self>, HipError> {
        let gray = geo.format == PixelFormat::Gray || geo.planes.len() < p.planes();
        if p.check(geo.w, gray).is_err() {
            return Ok(None);
        }
        let mut planes = Vec::new();
        for &(w, h) in &geo.planes[..p.planes()] {
            let half = if p.add_scale1 {
                let to = (half(w), half(h));
                Some(Prescale::upload(
                    dev,
                    st,
                    PrescaleMethod::Bilinear,
                    (w, h),
                    to,
                )?)
            } else {
                None
            };
            planes.push(PlaneSad { size: (w, h), half });
        }
        let filter = filter_for_size(p.filter_size).to_vec();
        Ok(Some(FloatMotion {
            slots,
            p,
            taps: Taps::upload(dev, st, &[filter], "float_motion filter")?,
            planes,
            scratch: Vec::new(),
        }))
    }

    /// Bytes of a float picture of the largest plane (luma).
    fn full(&self) -> usize {
        picture_bytes(self.planes[0].size.0, self.planes[0].size.1)
    }

    /// One plane's SAD rows (and its half's) from float `at` of the rows.
    fn plane_rows(
        &self,
        f: &Frame<'_>,
        k: usize,
        prev: &DeviceBuffer,
        at: usize,
    ) -> Result<(), HipError> {
        let s = &self.scratch[f.slot];
        let plane = &self.planes[k];
        let (w, h) = plane.size;
        for (side, pix) in [prev, f.plane(0, k)].into_iter().enumerate() {
            ff::to_float_samples(f, pix, w * h, &s.pics[side])?;
            ff::filter(
                f,
                (&self.taps, 0),
                Source::Samples(&s.pics[side]),
                (w, h),
                &s.tmp,
                &s.blurred[side],
            )?;
        }
        ff::row_absdiff(f, &s.blurred[0], &s.blurred[1], (w, h), (&s.rows, at))?;
        if let (Some(pre), Some(halves)) = (&plane.half, &s.halves) {
            for (blurred, halved) in s.blurred.iter().zip(halves) {
                pre.scale(f, blurred, halved)?;
            }
            let hs = (half(w), half(h));
            ff::row_absdiff(f, &halves[0], &halves[1], hs, (&s.rows, at + h))?;
        }
        Ok(())
    }
}

impl GpuExtractor for FloatMotion {
    fn stage(&self) -> &'static str {
        "float_motion"
    }

    /// The row sums of every plane.
    fn extra_bytes(&self) -> usize {
        4 * self.planes.iter().map(PlaneSad::rows).sum::<usize>()
    }

    fn add_slot(&mut self, dev: &Arc<Device>) -> Result<(), HipError> {
        let full = self.full();
        let buf = |bytes| DeviceBuffer::new(dev, bytes, "float_motion picture");
        let (w, h) = self.planes[0].size;
        let halves = if self.p.add_scale1 {
            let bytes = picture_bytes(half(w), half(h));
            Some([buf(bytes)?, buf(bytes)?])
        } else {
            None
        };
        self.scratch.push(Slot {
            pics: [buf(full)?, buf(full)?],
            tmp: buf(full)?,
            blurred: [buf(full)?, buf(full)?],
            halves,
            rows: DeviceBuffer::new(dev, self.extra_bytes(), "float_motion row sums")?,
        });
        Ok(())
    }

    fn slot_bytes(&self) -> usize {
        let (w, h) = self.planes[0].size;
        let halves = if self.p.add_scale1 {
            2 * picture_bytes(half(w), half(h))
        } else {
            0
        };
        5 * self.full() + halves + self.extra_bytes()
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
        let Some(prev) = f.earlier[0] else {
            return Ok(false);
        };
        if self.p.temporal.force_zero {
            return Ok(false);
        }
        f.stream.wait(prev.uploaded)?;
        let mut at = 0;
        for k in 0..self.planes.len() {
            self.plane_rows(f, k, prev.plane(0, k), at)?;
            at += self.planes[k].rows();
        }
        let s = &self.scratch[f.slot];
        f.read_back_extra(&s.rows, self.extra_bytes())?;
        Ok(true)
    }

    /// Each plane's mean (plus its half's), added in double.
    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        if !r.computed {
            out.set(self.slots.at(0), 0.0);
            return Ok(());
        }
        let rows =
            |from: usize, n: usize| ff::add_rows(ff::floats(&r.extra[4 * from..4 * (from + n)]));
        let (mut score, mut at) = (0f64, 0);
        for plane in &self.planes {
            let (w, h) = plane.size;
            let mut sad = rows(at, h) / (w * h) as f32;
            if plane.half.is_some() {
                let (hw, hh) = (half(w), half(h));
                sad += rows(at + h, hh) / (hw * hh) as f32;
            }
            score += f64::from(sad);
            at += plane.rows();
        }
        out.set(self.slots.at(0), score * self.p.temporal.fps_weight);
        Ok(())
    }
}
