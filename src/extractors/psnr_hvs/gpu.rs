//! psnr_hvs on the GPU (`psnr_hvs.hip`): per plane, every 8×8
//! block's 64 masked, CSF-weighted squared DCT errors, one thread per
//! block, then their float sum in libvmaf's order by one thread (the sum's
//! rounding shows in the scores, so it cannot be split), three floats read
//! back. The CPU twin (`cpu.rs`) forms every term and
//! the sum the same way and makes the scores, so they are identical.

#![forbid(unsafe_code)]

use crate::core::PixelFormat;
use crate::core::RawFeatures;
use crate::extractors::Slots;
use crate::extractors::psnr_hvs::cpu::{
    block_starts, csf_tables, from_planes, mask_table, plane_from_sum,
};
use crate::hip::twin::{
    Frame, Geometry, GpuExtractor, KernelSet, Modules, Retired, blocks, sig, upload_table,
};
use crate::hip::{Arg, Device, DeviceBuffer, HipError, Kernel, Stream};
use std::sync::Arc;

/// Its kernel files.
pub(crate) const KERNELS: KernelSet = KernelSet {
    sources: &[("psnr_hvs.hip", include_str!("psnr_hvs.hip"))],
    load: |m, _, _| Ok(Box::new(Kernels::load(m)?)),
};

pub(crate) struct Kernels {
    terms8: Kernel,
    terms16: Kernel,
    sum: Kernel,
}

impl Kernels {
    pub(crate) fn load(m: &Modules) -> Result<Self, HipError> {
        let f = &m["psnr_hvs.hip"];
        let terms = sig("pp iii p p");
        Ok(Kernels {
            terms8: f.kernel("phvs_terms_8", &terms)?,
            terms16: f.kernel("phvs_terms_16", &terms)?,
            sum: f.kernel("phvs_sum", &sig("p iii p"))?,
        })
    }
}

/// One plane's blocks: across, and in all.
#[derive(Clone, Copy)]
struct PlaneBlocks {
    across: usize,
    count: usize,
}

/// One slot's terms, all planes in one buffer, and the three sums.
struct Slot {
    terms: DeviceBuffer,
    sums: DeviceBuffer,
}

pub(crate) struct PsnrHvs {
    slots: Slots,
    planes: [PlaneBlocks; 3],
    /// Per plane its CSF table then its mask table (128 floats).
    tables: DeviceBuffer,
    scratch: Vec<Slot>,
}

impl PsnrHvs {
    /// The twin for a stream with chroma planes of at most 12 bits (the
    /// CPU twin beside the GPU gives the error for the others).
    pub(crate) fn new(
        dev: &Arc<Device>,
        st: &Stream,
        geo: &Geometry,
        slots: Slots,
    ) -> Result<Option<Self>, HipError> {
        if geo.format == PixelFormat::Gray || geo.planes.len() != 3 || geo.bpc > 12 {
            return Ok(None);
        }
        let planes = [0, 1, 2].map(|p| {
            let (w, h) = geo.planes[p];
            let across = block_starts(w).len();
            PlaneBlocks {
                across,
                count: across * block_starts(h).len(),
            }
        });
        let mut table = Vec::with_capacity(3 * 128);
        for csf in csf_tables() {
            table.extend(csf.iter().flatten());
            table.extend(mask_table(csf).iter().flatten());
        }
        let tables = upload_table(
            dev,
            st,
            &table,
            |v: f32| v.to_le_bytes().to_vec(),
            "psnr_hvs tables",
        )?;
        Ok(Some(PsnrHvs {
            slots,
            planes,
            tables,
            scratch: Vec::new(),
        }))
    }

    /// Floats of every plane's terms.
    fn terms(&self) -> usize {
        self.planes.iter().map(|p| 64 * p.count).sum()
    }
}

impl GpuExtractor for PsnrHvs {
    fn stage(&self) -> &'static str {
        "psnr_hvs"
    }

    /// The three planes' sums.
    fn extra_bytes(&self) -> usize {
        3 * 4
    }

    fn add_slot(&mut self, dev: &Arc<Device>) -> Result<(), HipError> {
        self.scratch.push(Slot {
            terms: DeviceBuffer::new(dev, (4 * self.terms()).max(4), "psnr_hvs terms")?,
            sums: DeviceBuffer::new(dev, self.extra_bytes(), "psnr_hvs sums")?,
        });
        Ok(())
    }

    fn slot_bytes(&self) -> usize {
        (4 * self.terms()).max(4) + self.extra_bytes()
    }

    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let (g, k) = (f.geo, f.kernels.get::<Kernels>());
        let s = &self.scratch[f.slot];
        let kern = if g.bps == 1 { &k.terms8 } else { &k.terms16 };
        let mut at = 0;
        for (p, b) in self.planes.iter().enumerate() {
            let terms_at = 4 * at;
            if b.count > 0 {
                f.stream.launch(
                    kern,
                    (blocks(b.count), 1, 1),
                    (256, 1, 1),
                    0,
                    &[
                        Arg::Buf(f.plane(0, p), 0),
                        Arg::Buf(f.plane(1, p), 0),
                        Arg::I32(g.planes[p].0 as i32),
                        Arg::I32(b.across as i32),
                        Arg::I32(b.count as i32),
                        Arg::Buf(&self.tables, 4 * 128 * p),
                        Arg::Buf(&s.terms, terms_at),
                    ],
                )?;
            }
            at += 64 * b.count;
        }
        let n = self.planes.map(|b| Arg::I32((64 * b.count) as i32));
        let [n0, n1, n2] = n;
        f.stream.launch(
            &k.sum,
            (3, 1, 1),
            (256, 1, 1),
            0,
            &[Arg::Buf(&s.terms, 0), n0, n1, n2, Arg::Buf(&s.sums, 0)],
        )?;
        f.read_back_extra(&s.sums, self.extra_bytes())?;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let sum =
            |p: usize| f32::from_le_bytes(r.extra[4 * p..4 * p + 4].try_into().expect("4 bytes"));
        let s = [0, 1, 2].map(|p| plane_from_sum(sum(p), self.planes[p].count, r.geo.bpc));
        out.put(self.slots, &from_planes(s));
        Ok(())
    }
}
