//! VIF on the GPU (`vif_decimate.hip`, `vif_statistic.hip`):
//! at each of the four scales, the decimation of both pictures from the
//! scale above, then the per-pixel statistic summed into four u64 per
//! scale; the CPU twin (`cpu.rs`) turns the sums into the
//! scale's numerator and denominator. In a ladder the reference's side is
//! done once for every rendition (`launch_reference`): its decimations,
//! and its mean and variance at every pixel of every scale (its moments),
//! beside which each rendition's statistic filters its own picture and the
//! cross term only.

#![forbid(unsafe_code)]

use crate::core::RawFeatures;
use crate::extractors::Slots;
use crate::extractors::vif::cpu::{VifAccum, VifScales, VifShifts, log2_table};
use crate::hip::twin::{
    Frame, Geometry, GpuExtractor, KernelSet, Modules, ReferenceWork, Retired, ZPair, blocks, sig,
};
use crate::hip::{Arg, Device, DeviceBuffer, HipError, Kernel, Stream, u16_bytes};
use std::sync::Arc;

/// Its kernel files.
pub(crate) const KERNELS: KernelSet = KernelSet {
    sources: &[
        ("vif_statistic.hip", include_str!("vif_statistic.hip")),
        ("vif_decimate.hip", include_str!("vif_decimate.hip")),
    ],
    load: |m, dev, st| Ok(Box::new(Kernels::load(m, dev, st)?)),
};

pub(crate) struct Kernels {
    /// The statistic of a lone pair, by bytes per sample (1, 2).
    stat: [Kernel; 2],
    /// A ladder's reference: its moments.
    moments: [Kernel; 2],
    /// A rendition beside the reference's moments.
    beside: [Kernel; 2],
    dec8: Kernel,
    dec16: Kernel,
    /// 2048·log2 table (u16), device copy.
    log_table: DeviceBuffer,
}

impl Kernels {
    pub(crate) fn load(m: &Modules, dev: &Arc<Device>, st: &Stream) -> Result<Self, HipError> {
        let table = log2_table();
        let log_table = DeviceBuffer::new(dev, table.len() * 2, "VIF log2 table")?;
        st.upload_blocking(&log_table, 0, u16_bytes(&table))?;
        let (dec8, dec16) = (sig("pppp iiii"), sig("pppp iiiii"));
        let stat = &m["vif_statistic.hip"];
        let pair = |name: &str, letters: &str| -> Result<[Kernel; 2], HipError> {
            let s = sig(letters);
            Ok([
                stat.kernel(&format!("{name}_8"), &s)?,
                stat.kernel(&format!("{name}_16"), &s)?,
            ])
        };
        Ok(Kernels {
            stat: pair("vif_statistic", "pp iiiiii d pp")?,
            moments: pair("vif_moments", "pp iiiiii")?,
            beside: pair("vif_statistic_beside", "ppp iiiiii d pp")?,
            dec8: m["vif_decimate.hip"].kernel("vif_decimate_8", &dec8)?,
            dec16: m["vif_decimate.hip"].kernel("vif_decimate_16", &dec16)?,
            log_table,
        })
    }
}

/// Two scale images (reference, distorted).
type Pair = [DeviceBuffer; 2];

pub(crate) struct Vif {
    egl: f64,
    slots: Slots,
    /// Image sizes of the four scales.
    sizes: [(usize, usize); 4],
    /// Bytes of one scale image (scale 1's size, 16 bits a sample).
    image_bytes: usize,
    /// Per slot: the scale images, scale 1 and 3 in the first pair, scale 2
    /// in the second.
    scratch: Vec<[Pair; 2]>,
}

impl Vif {
    pub(crate) fn new(egl: f64, geo: &Geometry, slots: Slots) -> Self {
        let sizes = Self::sizes(geo.w, geo.h);
        let (w1, h1) = sizes[1];
        Vif {
            egl,
            slots,
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
        let k = f.kernels.get::<Kernels>();
        let pictures = match f.shared {
            Some(_) => ZPair::one(src[1], &out[1]),
            None => ZPair::both(src, [&out[0], &out[1]]),
        };
        decimate(k, stream, geo, scale, pictures)
    }

    /// The statistic of `scale` into its four sums: of both pictures, or
    /// of the distorted one beside the reference's moments.
    fn launch_statistic(&self, f: &Frame<'_>, scale: usize) -> Result<(), HipError> {
        let (g, k) = (f.geo, f.kernels.get::<Kernels>());
        let [a, b] = &self.scratch[f.slot];
        let (r, d) = match scale {
            0 => (f.plane(0, 0), f.plane(1, 0)),
            2 => (&b[0], &b[1]),
            _ => (&a[0], &a[1]),
        };
        let on = StatisticLaunch::new(g, scale);
        let tail = [
            Arg::F64(self.egl),
            Arg::Buf(&k.log_table, 0),
            Arg::Buf(f.sums, (f.sums_at + 4 * scale) * 8),
        ];
        let Some(shared) = f.shared else {
            let args = [&[Arg::Buf(r, 0), Arg::Buf(d, 0)][..], &on.args(), &tail].concat();
            return on.launch(f.stream, &k.stat[on.kernel], &args);
        };
        let r = if scale == 0 {
            r
        } else {
            shared_image(shared, scale)
        };
        let moments = shared_moments(shared, scale);
        let pictures = [Arg::Buf(r, 0), Arg::Buf(d, 0), Arg::Buf(moments, 0)];
        let args = [&pictures[..], &on.args(), &tail].concat();
        on.launch(f.stream, &k.beside[on.kernel], &args)
    }
}

/// The reference's image at `scale` (1..3) in a ladder's VIF buffers
/// (`Vif::reference_buffers`).
fn shared_image(bufs: &[DeviceBuffer], scale: usize) -> &DeviceBuffer {
    &bufs[scale - 1]
}

/// The reference's moments at `scale` (0..3) in a ladder's VIF buffers.
fn shared_moments(bufs: &[DeviceBuffer], scale: usize) -> &DeviceBuffer {
    &bufs[3 + scale]
}

/// How one scale's statistic kernel is launched.
struct StatisticLaunch {
    /// The scale and its image size.
    scale: usize,
    w: usize,
    h: usize,
    /// Output rows per block (vif_statistic.hip).
    rows: usize,
    shifts: VifShifts,
    /// Index of its kernel in a pair: 8-bit scale 0 (0) or 16-bit (1).
    kernel: usize,
}

impl StatisticLaunch {
    fn new(g: &Geometry, scale: usize) -> Self {
        let (w, h) = Vif::sizes(g.w, g.h)[scale];
        // Several output rows per block at the two large scales, so each
        // input row is read fewer times; one on tiny images, where blocks
        // would be too few.
        let rows: usize = match scale {
            0 if h >= 64 => 4,
            1 if h >= 128 => 4,
            1 if h >= 32 => 2,
            _ => 1,
        };
        StatisticLaunch {
            scale,
            w,
            h,
            rows,
            shifts: VifShifts::for_scale(scale, g.bpc),
            kernel: usize::from(scale > 0 || g.bps > 1),
        }
    }

    /// The arguments after the pictures: size, scale, rows and shifts.
    fn args(&self) -> [Arg<'static>; 6] {
        [
            Arg::I32(self.w as i32),
            Arg::I32(self.h as i32),
            Arg::I32(self.scale as i32),
            Arg::I32(self.rows as i32),
            Arg::I32(self.shifts.mu_shift as i32),
            Arg::I32(self.shifts.sq_shift as i32),
        ]
    }

    /// 512 columns per block (VIF_SPAN), `rows` rows.
    fn launch(&self, st: &Stream, kernel: &Kernel, args: &[Arg<'_>]) -> Result<(), HipError> {
        let grid = (
            self.w.div_ceil(512) as u32,
            self.h.div_ceil(self.rows) as u32,
            1,
        );
        st.launch(kernel, grid, (256, 1, 1), 0, args)
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

    /// The reference's images at scales 1, 2 and 3, then its moments (a
    /// u64 a pixel) at scales 0 to 3.
    fn reference_buffers(&self) -> Vec<usize> {
        let images = self.sizes[1..].iter().map(|&(w, h)| w * h * 2);
        let moments = self.sizes.iter().map(|&(w, h)| w * h * 8);
        images.chain(moments).collect()
    }

    fn launch_reference(&self, w: &ReferenceWork<'_>) -> Result<bool, HipError> {
        let k = w.kernels.get::<Kernels>();
        let mut image = &w.reference[0];
        for scale in 0..4 {
            if scale > 0 {
                let above = image;
                image = shared_image(w.out, scale);
                decimate(k, w.stream, w.geo, scale, ZPair::one(above, image))?;
            }
            let on = StatisticLaunch::new(w.geo, scale);
            let moments = shared_moments(w.out, scale);
            let pictures = [Arg::Buf(image, 0), Arg::Buf(moments, 0)];
            let args = [&pictures[..], &on.args()].concat();
            on.launch(w.stream, &k.moments[on.kernel], &args)?;
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
        out.put(self.slots, &v.scores());
        Ok(())
    }
}
