//! ciede on the GPU (`ciede.hip`): per luma sample the CIEDE2000
//! difference of the two pictures' colours, summed per row in double on
//! the device and over rows on the host, as the CPU twin
//! (`cpu.rs`) sums them. Its float and double steps are the
//! CPU's; its transcendental functions are the device's libm, so the score
//! can differ from the CPU's in the last bits (hip_parity bounds it).

#![forbid(unsafe_code)]

use crate::core::PixelFormat;
use crate::core::RawFeatures;
use crate::extractors::Slots;
use crate::extractors::ciede::cpu as ciede;
use crate::extractors::common::float_filter_gpu::picture_bytes;
use crate::hip::twin::{Frame, Geometry, GpuExtractor, KernelSet, Modules, Retired, blocks, sig};
use crate::hip::{Arg, Device, DeviceBuffer, HipError, Kernel};
use std::sync::Arc;

/// Its kernel files.
pub(crate) const KERNELS: KernelSet = KernelSet {
    sources: &[("ciede.hip", include_str!("ciede.hip"))],
    load: |m, _, _| Ok(Box::new(Kernels::load(m)?)),
};

pub(crate) struct Kernels {
    pixels8: Kernel,
    pixels16: Kernel,
    rows: Kernel,
}

impl Kernels {
    pub(crate) fn load(m: &Modules) -> Result<Self, HipError> {
        let f = &m["ciede.hip"];
        let px = sig("pppppp iiii ii i p");
        Ok(Kernels {
            pixels8: f.kernel("ciede_pixels_8", &px)?,
            pixels16: f.kernel("ciede_pixels_16", &px)?,
            rows: f.kernel("ciede_rows", &sig("p ii p"))?,
        })
    }
}

struct Slot {
    values: DeviceBuffer,
    rows: DeviceBuffer,
}

pub(crate) struct Ciede {
    slots: Slots,
    size: (usize, usize),
    scratch: Vec<Slot>,
}

impl Ciede {
    /// The twin for a stream with chroma planes (a GRAY stream's error
    /// is the CPU twin's, beside the GPU).
    pub(crate) fn for_geometry(geo: &Geometry, slots: Slots) -> Option<Self> {
        (geo.format != PixelFormat::Gray && geo.planes.len() == 3).then_some(Ciede {
            slots,
            size: (geo.w, geo.h),
            scratch: Vec::new(),
        })
    }
}

impl GpuExtractor for Ciede {
    fn stage(&self) -> &'static str {
        "ciede"
    }

    /// One double per row.
    fn extra_bytes(&self) -> usize {
        8 * self.size.1
    }

    fn add_slot(&mut self, dev: &Arc<Device>) -> Result<(), HipError> {
        self.scratch.push(Slot {
            values: DeviceBuffer::new(
                dev,
                picture_bytes(self.size.0, self.size.1),
                "ciede values",
            )?,
            rows: DeviceBuffer::new(dev, self.extra_bytes(), "ciede row sums")?,
        });
        Ok(())
    }

    fn slot_bytes(&self) -> usize {
        picture_bytes(self.size.0, self.size.1) + self.extra_bytes()
    }

    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let (g, k) = (f.geo, f.kernels.get::<Kernels>());
        let s = &self.scratch[f.slot];
        let (cw, ch) = g.planes[1];
        let (sx, sy) = match g.format {
            PixelFormat::Yuv420 => (1, 1),
            // libvmaf's own walk of a 4:2:2 plane (ciede.hip).
            PixelFormat::Yuv422 => (2, 0),
            _ => (0, 0),
        };
        let kern = if g.bps == 1 { &k.pixels8 } else { &k.pixels16 };
        let mut args: Vec<Arg<'_>> = (0..2)
            .flat_map(|side| (0..3).map(move |p| Arg::Buf(f.plane(side, p), 0)))
            .collect();
        args.extend([g.w, g.h, cw, ch, sx, sy].map(|v| Arg::I32(v as i32)));
        args.push(Arg::I32(i32::from(g.bpc)));
        args.push(Arg::Buf(&s.values, 0));
        f.stream
            .launch(kern, (blocks(g.w), g.h as u32, 1), (256, 1, 1), 0, &args)?;
        f.stream.launch(
            &k.rows,
            (blocks(g.h), 1, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(&s.values, 0),
                Arg::I32(g.w as i32),
                Arg::I32(g.h as i32),
                Arg::Buf(&s.rows, 0),
            ],
        )?;
        f.read_back_extra(&s.rows, self.extra_bytes())?;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let mut sum = 0f64;
        for c in r.extra.chunks_exact(8) {
            sum += f64::from_le_bytes(c.try_into().expect("8 bytes"));
        }
        out.set(
            self.slots.at(0),
            ciede::score(sum, self.size.0, self.size.1),
        );
        Ok(())
    }
}
