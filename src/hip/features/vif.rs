//! VIF on the GPU (`kernels/vif_decimate.hip`, `kernels/vif_statistic.hip`):
//! at each of the four scales, the decimation of both pictures from the
//! scale above, then the per-pixel statistic summed into four u64 per
//! scale; the CPU twin (`vmaf::features::vif`) turns the sums into the
//! scale's numerator and denominator. In a ladder the reference's
//! decimations are done once for every rendition (`launch_reference`).

#![forbid(unsafe_code)]

use super::{Frame, Geometry, GpuExtractor, Modules, ReferenceWork, Retired, ZPair, blocks, sig};
use crate::hip::{Arg, Device, DeviceBuffer, HipError, Kernel, Stream, u16_bytes};
use crate::vmaf::features::RawFeatures;
use crate::vmaf::features::vif::{VifAccum, VifScales, VifShifts, log2_table};
use std::sync::Arc;

pub(in crate::hip) struct Kernels {
    stat8: Kernel,
    stat16: Kernel,
    dec8: Kernel,
    dec16: Kernel,
    /// 2048·log2 table (u16), device copy.
    log_table: DeviceBuffer,
}

impl Kernels {
    pub(super) fn load(m: &Modules, dev: &Arc<Device>, st: &Stream) -> Result<Self, HipError> {
        let table = log2_table();
        let log_table = DeviceBuffer::new(dev, table.len() * 2, "VIF log2 table")?;
        st.upload_blocking(&log_table, 0, u16_bytes(&table))?;
        let stat = sig("pp iiiiii d pp");
        let (dec8, dec16) = (sig("pppp iiii"), sig("pppp iiiii"));
        Ok(Kernels {
            stat8: m["vif_statistic.hip"].kernel("vif_statistic_8", &stat)?,
            stat16: m["vif_statistic.hip"].kernel("vif_statistic_16", &stat)?,
            dec8: m["vif_decimate.hip"].kernel("vif_decimate_8", &dec8)?,
            dec16: m["vif_decimate.hip"].kernel("vif_decimate_16", &dec16)?,
            log_table,
        })
    }
}

/// Two scale images (reference, distorted).
type Pair = [DeviceBuffer; 2];

pub(super) struct Vif {
    egl: f64,
    /// Image sizes of the four scales.
    sizes: [(usize, usize); 4],
    /// Bytes of one scale image (scale 1's size, 16 bits a sample).
    image_bytes: usize,
    /// Per slot: the scale images, scale 1 and 3 in the first pair, scale 2
    /// in the second.
    scratch: Vec<[Pair; 2]>,
}

impl Vif {
    pub(super) fn new(egl: f64, geo: &Geometry) -> Self {
        let sizes = Self::sizes(geo.w, geo.h);
        let (w1, h1) = sizes[1];
        Vif {
            egl,
            sizes,
            image_bytes: w1 * h1 * 2,
            scratch: Vec::new(),
        }
    }

    /// Image sizes of the four scales.
    fn sizes(w: usize, h: usize) -> [(usize, usize); 4] {
        let mut s = [(w, h); 4];
        for k in 1..4 {
            s[k] = (s[k - 1].0 / 2, s[k - 1].1 / 2);
        }
        s
    }

    /// The decimation into `scale` (1..3) of the pictures of the scale
    /// above: both, or, when the ladder did the reference's, the
    /// distorted one's only.
    fn launch_decimate(&self, f: &Frame<'_>, scale: usize) -> Result<(), HipError> {
        let [a, b] = &self.scratch[f.slot];
        let bufs = [a, b, a];
        let out = bufs[scale - 1];
        let src = match scale {
            1 => [f.plane(0, 0), f.plane(1, 0)],
            _ => [&bufs[scale - 2][0], &bufs[scale - 2][1]],
        };
        let (stream, geo) = (f.stream, f.geo);
        let k = &f.kernels.vif;
        let pictures = match f.shared {
            Some(_) => ZPair::one(src[1], &out[1]),
            None => ZPair::both(src, [&out[0], &out[1]]),
        };
        decimate(k, stream, geo, scale, pictures)
    }

    /// The statistic of `scale` into its four sums.
    fn launch_statistic(&self, f: &Frame<'_>, scale: usize) -> Result<(), HipError> {
        let (g, k) = (f.geo, &f.kernels.vif);
        let [a, b] = &self.scratch[f.slot];
        let (sw, sh) = Self::sizes(g.w, g.h)[scale];
        let shifts = VifShifts::for_scale(scale, g.bpc);
        let (r, d) = match scale {
            0 => (f.plane(0, 0), f.plane(1, 0)),
            2 => (&b[0], &b[1]),
            _ => (&a[0], &a[1]),
        };
        let r = f.shared.map_or(r, |ref_scales| match scale {
            0 => r,
            _ => &ref_scales[scale - 1],
        });
        let kern = if scale == 0 && g.bps == 1 {
            &k.stat8
        } else {
            &k.stat16
        };
        // Output rows per block (kernels/vif_statistic.hip): several at
        // the two large scales, so each input row is read fewer times; one
        // on tiny images, where blocks would be too few.
        let rows: usize = match scale {
            0 if sh >= 64 => 4,
            1 if sh >= 128 => 4,
            1 if sh >= 32 => 2,
            _ => 1,
        };
        // 512 columns per block (VIF_SPAN).
        f.stream.launch(
            kern,
            (sw.div_ceil(512) as u32, sh.div_ceil(rows) as u32, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(r, 0),
                Arg::Buf(d, 0),
                Arg::I32(sw as i32),
                Arg::I32(sh as i32),
                Arg::I32(scale as i32),
                Arg::I32(rows as i32),
                Arg::I32(shifts.mu_shift as i32),
                Arg::I32(shifts.sq_shift as i32),
                Arg::F64(self.egl),
                Arg::Buf(&k.log_table, 0),
                Arg::Buf(f.sums, (f.sums_at + 4 * scale) * 8),
            ],
        )
    }
}

/// The decimation into `scale` (1..3) of the pictures of the scale above.
fn decimate(
    k: &Kernels,
    stream: &Stream,
    g: &Geometry,
    scale: usize,
    pictures: ZPair<'_>,
) -> Result<(), HipError> {
    let (pw, ph) = Vif::sizes(g.w, g.h)[scale - 1];
    let grid = (blocks(pw / 2), (ph / 2) as u32, pictures.depth());
    let mut args = pictures.args();
    args.extend([Arg::I32(pw as i32), Arg::I32(ph as i32)]);
    if scale == 1 {
        args.extend([Arg::I32(i32::from(g.bpc)), Arg::I32(i32::from(g.bpc == 8))]);
        if g.bps == 1 {
            return stream.launch(&k.dec8, grid, (256, 1, 1), 0, &args);
        }
        args.push(Arg::I32(1));
    } else {
        args.extend([Arg::I32(16), Arg::I32(0), Arg::I32(scale as i32)]);
    }
    stream.launch(&k.dec16, grid, (256, 1, 1), 0, &args)
}

impl GpuExtractor for Vif {
    fn stage(&self) -> &'static str {
        "vif"
    }

    fn memory(&self) -> &'static str {
        "VIF scale images"
    }

    /// Four scales × (num_log, den_log, num_non_log, den_non_log).
    fn sum_words(&self) -> usize {
        16
    }

    fn add_slot(&mut self, dev: &Arc<Device>) -> Result<(), HipError> {
        let img = || DeviceBuffer::new(dev, self.image_bytes, "VIF scale image");
        self.scratch.push([[img()?, img()?], [img()?, img()?]]);
        Ok(())
    }

    fn slot_bytes(&self) -> usize {
        4 * self.image_bytes
    }

    /// The reference's images at scales 1, 2 and 3.
    fn reference_buffers(&self) -> Vec<usize> {
        self.sizes[1..].iter().map(|&(w, h)| w * h * 2).collect()
    }

    fn launch_reference(&self, w: &ReferenceWork<'_>) -> Result<bool, HipError> {
        let k = &w.kernels.vif;
        for scale in 1..4 {
            let src = match scale {
                1 => &w.reference[0],
                _ => &w.out[scale - 2],
            };
            let pictures = ZPair::one(src, &w.out[scale - 1]);
            decimate(k, w.stream, w.geo, scale, pictures)?;
        }
        Ok(true)
    }

    /// Scale s reads the raw pictures (s = 0), then alternately the first
    /// pair, the second, the first.
    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        for scale in 0..4 {
            if scale > 0 {
                self.launch_decimate(f, scale)?;
            }
            self.launch_statistic(f, scale)?;
        }
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let mut v = VifScales::default();
        for s in 0..4 {
            let b = 4 * s;
            let acc = VifAccum {
                num_log: r.sums[b] as i64,
                den_log: r.sums[b + 1] as i64,
                num_non_log: r.sums[b + 2] as i64,
                den_non_log: r.sums[b + 3] as i64,
            };
            (v.num[s], v.den[s]) = acc.num_den();
        }
        out.vif = Some(v);
        Ok(())
    }
}
