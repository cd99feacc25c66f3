//! float_vif on the GPU (`float_filter.hip`, `float_vif.hip`;
//! `vif_prescale` by `prescale.hip`'s `vif_scale_frame`): per scale,
//! from scale 1 on, both pictures blurred and decimated; then
//! the five filtered pictures, the per-sample statistic and its row sums,
//! read back and added in order on the host. Every float operation is the
//! CPU twin's (`cpu.rs`) in its order, so the scores are
//! identical.

#![forbid(unsafe_code)]

use crate::core::RawFeatures;
use crate::extractors::Slots;
use crate::extractors::common::float_filter::gaussian_filter;
use crate::extractors::common::float_filter_gpu::{self as ff, Source, Taps, picture_bytes};
use crate::extractors::common::prescale_gpu::Prescale;
use crate::extractors::float_vif::cpu::{FloatVifParams, FloatVifSums};
use crate::hip::twin::{Frame, Geometry, GpuExtractor, KernelSet, Modules, Retired, blocks, sig};
use crate::hip::{Arg, Device, DeviceBuffer, HipError, Kernel, Stream};
use std::sync::Arc;

/// Its kernel files.
pub(crate) const KERNELS: KernelSet = KernelSet {
    sources: &[("float_vif.hip", include_str!("float_vif.hip"))],
    load: |m, _, _| Ok(Box::new(Kernels::load(m)?)),
};

pub(crate) struct Kernels {
    decimate: Kernel,
    statistic: Kernel,
}

impl Kernels {
    pub(crate) fn load(m: &Modules) -> Result<Self, HipError> {
        let f = &m["float_vif.hip"];
        Ok(Kernels {
            decimate: f.kernel("fvif_decimate", &sig("p ii p"))?,
            statistic: f.kernel("fvif_statistic", &sig("ppppp i ddd"))?,
        })
    }
}

/// One slot's pictures: the scale images (reference, distorted) of scales
/// 0 and 2 (`even`) and 1 and 3 (`odd`), the filter's pass, the five
/// filtered pictures, and the row sums.
struct Slot {
    even: [DeviceBuffer; 2],
    odd: [DeviceBuffer; 2],
    tmp: DeviceBuffer,
    filtered: [DeviceBuffer; 5],
    rows: DeviceBuffer,
    /// A picture as floats before its prescale (only with one).
    unscaled: Option<DeviceBuffer>,
}

pub(crate) struct FloatVif {
    slots: Slots,
    p: FloatVifParams,
    taps: Taps,
    /// Scale 0 is the prescaled size.
    sizes: [(usize, usize); 4],
    prescale: Option<Prescale>,
    input: (usize, usize),
    scratch: Vec<Slot>,
}

impl FloatVif {
    /// The twin for `geo`; none where libvmaf refuses the prescale (the
    /// CPU twin beside the GPU then gives its error on each frame).
    pub(crate) fn new(
        dev: &Arc<Device>,
        st: &Stream,
        geo: &Geometry,
        p: FloatVifParams,
        slots: Slots,
    ) -> Result<Option<Self>, HipError> {
        let Ok(scaled) = p.scaled_size(geo.w, geo.h) else {
            return Ok(None);
        };
        let filters: Vec<Vec<f32>> = (0..4)
            .map(|s| gaussian_filter(s, p.kernelscale as f32))
            .collect();
        let mut sizes = [scaled; 4];
        for s in 1..4 {
            sizes[s] = (sizes[s - 1].0 / 2, sizes[s - 1].1 / 2);
        }
        let input = (geo.w, geo.h);
        let prescale = if scaled == input {
            None
        } else {
            Some(Prescale::upload(dev, st, p.method, input, scaled)?)
        };
        Ok(Some(FloatVif {
            slots,
            p,
            taps: Taps::upload(dev, st, &filters, "float_vif filters")?,
            sizes,
            prescale,
            input,
            scratch: Vec::new(),
        }))
    }

    /// Bytes of the float picture before the prescale (0 without one).
    fn unscaled_bytes(&self) -> usize {
        self.prescale
            .as_ref()
            .map_or(0, |_| picture_bytes(self.input.0, self.input.1))
    }

    /// Float offset of each scale's rows in the read-back: num rows, then
    /// den rows.
    fn rows_at(&self, scale: usize) -> usize {
        2 * self.sizes[..scale].iter().map(|s| s.1).sum::<usize>()
    }

    fn full(&self) -> usize {
        picture_bytes(self.sizes[0].0, self.sizes[0].1)
    }

    /// Scale `scale`'s images from the scale above: blurred, decimated.
    fn decimate(
        &self,
        f: &Frame<'_>,
        scale: usize,
        from: &[DeviceBuffer; 2],
        to: &[DeviceBuffer; 2],
    ) -> Result<(), HipError> {
        let s = &self.scratch[f.slot];
        let (w, h) = self.sizes[scale - 1];
        for side in 0..2 {
            let mu = &s.filtered[side];
            ff::filter(
                f,
                (&self.taps, scale),
                Source::Samples(&from[side]),
                (w, h),
                &s.tmp,
                mu,
            )?;
            f.stream.launch(
                &f.kernels.get::<Kernels>().decimate,
                (blocks(w / 2), (h / 2) as u32, 1),
                (256, 1, 1),
                0,
                &[
                    Arg::Buf(mu, 0),
                    Arg::I32(w as i32),
                    Arg::I32(h as i32),
                    Arg::Buf(&to[side], 0),
                ],
            )?;
        }
        Ok(())
    }

    /// The statistic of one scale into its row sums.
    fn statistic(
        &self,
        f: &Frame<'_>,
        scale: usize,
        pics: &[DeviceBuffer; 2],
    ) -> Result<(), HipError> {
        let s = &self.scratch[f.slot];
        let (w, h) = self.sizes[scale];
        let [mu1, mu2, xx, yy, xy] = &s.filtered;
        let [r, d] = pics;
        let t = (&self.taps, scale);
        for (src, out) in [
            (Source::Samples(r), mu1),
            (Source::Samples(d), mu2),
            (Source::Squares(r), xx),
            (Source::Squares(d), yy),
            (Source::Products(r, d), xy),
        ] {
            ff::filter(f, t, src, (w, h), &s.tmp, out)?;
        }
        let nsq = self.p.sigma_nsq;
        let sigma_max_inv = (f64::from((nsq as f32).powf(2.0)) / (255.0 * 255.0)) as f32;
        let n = w * h;
        f.stream.launch(
            &f.kernels.get::<Kernels>().statistic,
            (blocks(n), 1, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(mu1, 0),
                Arg::Buf(mu2, 0),
                Arg::Buf(xx, 0),
                Arg::Buf(yy, 0),
                Arg::Buf(xy, 0),
                Arg::I32(n as i32),
                Arg::F64(nsq),
                Arg::F64(f64::from(sigma_max_inv)),
                Arg::F64(f64::from(self.p.enhn_gain_limit as f32)),
            ],
        )?;
        let at = self.rows_at(scale);
        ff::row_sums(f, xx, w, (0..h, 0..w), &s.rows, at)?;
        ff::row_sums(f, yy, w, (0..h, 0..w), &s.rows, at + h)
    }
}

impl GpuExtractor for FloatVif {
    fn stage(&self) -> &'static str {
        "float_vif"
    }

    /// Each scale's num and den row sums.
    fn extra_bytes(&self) -> usize {
        4 * self.rows_at(4)
    }

    fn add_slot(&mut self, dev: &Arc<Device>) -> Result<(), HipError> {
        let (full, quarter) = (self.full(), picture_bytes(self.sizes[1].0, self.sizes[1].1));
        let buf = |bytes| DeviceBuffer::new(dev, bytes, "float_vif picture");
        self.scratch.push(Slot {
            even: [buf(full)?, buf(full)?],
            odd: [buf(quarter)?, buf(quarter)?],
            tmp: buf(full)?,
            filtered: [buf(full)?, buf(full)?, buf(full)?, buf(full)?, buf(full)?],
            rows: DeviceBuffer::new(dev, self.extra_bytes().max(4), "float_vif row sums")?,
            unscaled: match self.prescale {
                Some(_) => Some(buf(self.unscaled_bytes())?),
                None => None,
            },
        });
        Ok(())
    }

    fn slot_bytes(&self) -> usize {
        8 * self.full()
            + 2 * picture_bytes(self.sizes[1].0, self.sizes[1].1)
            + self.extra_bytes()
            + self.unscaled_bytes()
    }

    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let s = &self.scratch[f.slot];
        for side in 0..2 {
            match (&self.prescale, &s.unscaled) {
                (Some(pre), Some(unscaled)) => {
                    ff::to_float(f, f.plane(side, 0), unscaled)?;
                    pre.scale(f, unscaled, &s.even[side])?;
                }
                _ => ff::to_float(f, f.plane(side, 0), &s.even[side])?,
            }
        }
        for scale in 0..4 {
            let (from, to) = if scale % 2 == 1 {
                (&s.even, &s.odd)
            } else {
                (&s.odd, &s.even)
            };
            if scale > 0 {
                self.decimate(f, scale, from, to)?;
            }
            if scale == 0 && self.p.skip_scale0 {
                continue;
            }
            self.statistic(f, scale, to)?;
        }
        f.read_back_extra(&s.rows, self.extra_bytes())?;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let mut sums = FloatVifSums::default();
        for scale in 0..4 {
            if scale == 0 && self.p.skip_scale0 {
                continue;
            }
            let h = self.sizes[scale].1;
            let at = 4 * self.rows_at(scale);
            let rows =
                |k: usize| ff::add_rows(ff::floats(&r.extra[at + 4 * k * h..at + 4 * (k + 1) * h]));
            (sums.num[scale], sums.den[scale]) = (rows(0), rows(1));
        }
        out.put(self.slots, &sums.scores(&self.p));
        Ok(())
    }
}
