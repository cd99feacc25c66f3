//! float_ansnr on the GPU (`float_ansnr.hip`): both luma pictures
//! as floats, the two filters, per sample the signal and noise terms, and
//! their per-row float sums, added in order on the host. The CPU twin
//! (`cpu.rs`) forms every value the same way, so the
//! scores are identical.

#![forbid(unsafe_code)]

use crate::core::RawFeatures;
use crate::extractors::Slots;
use crate::extractors::common::float_filter_gpu::{self as ff, Taps, picture_bytes};
use crate::extractors::float_ansnr::cpu::{dis_filter, from_sums, ref_filter};
use crate::hip::twin::{Frame, Geometry, GpuExtractor, KernelSet, Modules, Retired, blocks, sig};
use crate::hip::{Arg, Device, DeviceBuffer, HipError, Kernel, Stream};
use std::sync::Arc;

/// Its kernel files.
pub(crate) const KERNELS: KernelSet = KernelSet {
    sources: &[("float_ansnr.hip", include_str!("float_ansnr.hip"))],
    load: |m, _, _| Ok(Box::new(Kernels::load(m)?)),
};

pub(crate) struct Kernels {
    terms: Kernel,
}

impl Kernels {
    pub(crate) fn load(m: &Modules) -> Result<Self, HipError> {
        Ok(Kernels {
            terms: m["float_ansnr.hip"].kernel("ansnr_terms", &sig("pp ii p pp"))?,
        })
    }
}

/// One slot's pictures: both as floats, the signal and noise terms.
struct Slot {
    pics: [DeviceBuffer; 2],
    terms: [DeviceBuffer; 2],
    rows: DeviceBuffer,
}

pub(crate) struct FloatAnsnr {
    slots: Slots,
    taps: Taps,
    size: (usize, usize),
    scratch: Vec<Slot>,
}

impl FloatAnsnr {
    pub(crate) fn new(
        dev: &Arc<Device>,
        st: &Stream,
        geo: &Geometry,
        slots: Slots,
    ) -> Result<Self, HipError> {
        let filters = [ref_filter().to_vec(), dis_filter().to_vec()];
        Ok(FloatAnsnr {
            slots,
            taps: Taps::upload(dev, st, &filters, "float_ansnr filters")?,
            size: (geo.w, geo.h),
            scratch: Vec::new(),
        })
    }
}

impl GpuExtractor for FloatAnsnr {
    fn stage(&self) -> &'static str {
        "float_ansnr"
    }

    /// The signal's row sums, then the noise's.
    fn extra_bytes(&self) -> usize {
        2 * 4 * self.size.1
    }

    fn add_slot(&mut self, dev: &Arc<Device>) -> Result<(), HipError> {
        let full = picture_bytes(self.size.0, self.size.1);
        let buf = || DeviceBuffer::new(dev, full, "float_ansnr picture");
        self.scratch.push(Slot {
            pics: [buf()?, buf()?],
            terms: [buf()?, buf()?],
            rows: DeviceBuffer::new(dev, self.extra_bytes(), "float_ansnr row sums")?,
        });
        Ok(())
    }

    fn slot_bytes(&self) -> usize {
        4 * picture_bytes(self.size.0, self.size.1) + self.extra_bytes()
    }

    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let s = &self.scratch[f.slot];
        let (w, h) = self.size;
        ff::to_float(f, f.plane(0, 0), &s.pics[0])?;
        ff::to_float(f, f.plane(1, 0), &s.pics[1])?;
        f.stream.launch(
            &f.kernels.get::<Kernels>().terms,
            (blocks(w), h as u32, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(&s.pics[0], 0),
                Arg::Buf(&s.pics[1], 0),
                Arg::I32(w as i32),
                Arg::I32(h as i32),
                Arg::Buf(&self.taps.table, 0),
                Arg::Buf(&s.terms[0], 0),
                Arg::Buf(&s.terms[1], 0),
            ],
        )?;
        for (k, terms) in s.terms.iter().enumerate() {
            ff::row_sums(f, terms, w, (0..h, 0..w), &s.rows, k * h)?;
        }
        f.read_back_extra(&s.rows, self.extra_bytes())?;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let (w, h) = self.size;
        let sig = ff::add_rows(ff::floats(&r.extra[..4 * h]));
        let noise = ff::add_rows(ff::floats(&r.extra[4 * h..]));
        out.put(self.slots, &from_sums(sig, noise, w, h, r.geo.bpc));
        Ok(())
    }
}
