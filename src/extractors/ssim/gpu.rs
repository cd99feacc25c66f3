//! float_ssim and float_ms_ssim on the GPU (`ssim.hip`): luma as
//! floats, float_ssim's box downscale or MS-SSIM's low-pass pyramid, the
//! five Gaussian-filtered pictures of each SSIM map, and per row of the map
//! the double sums of SSIM and its three terms, added in order on the host.
//! The CPU twin (`cpu.rs`) forms every value and sum the same
//! way and finishes the scores, so they are identical.

#![forbid(unsafe_code)]

use crate::core::{RawFeatures, Slots};
use crate::extractors::common::float_filter_gpu::picture_bytes;
use crate::extractors::ssim::cpu::{
    GAUSS, box_kernel, constants, float_scaler, lpf_kernel, ms_ssim_from_terms, ms_ssim_sizes,
    ssim_size, terms_from_sums,
};
use crate::hip::twin::{
    Frame, Geometry, GpuExtractor, KernelSet, Modules, Retired, blocks, sig, upload_table,
};
use crate::hip::{Arg, Device, DeviceBuffer, HipError, Kernel, Stream};
use std::sync::Arc;

/// Its kernel files.
pub(crate) const KERNELS: KernelSet = KernelSet {
    sources: &[("ssim.hip", include_str!("ssim.hip"))],
    load: |m, _, _| Ok(Box::new(Kernels::load(m)?)),
};

pub(crate) struct Kernels {
    to_float8: Kernel,
    to_float16: Kernel,
    decimate: Kernel,
    conv_h: Kernel,
    conv_v: Kernel,
    rows: Kernel,
}

impl Kernels {
    pub(crate) fn load(m: &Modules) -> Result<Self, HipError> {
        let f = &m["ssim.hip"];
        let to_float = sig("p i u p");
        Ok(Kernels {
            to_float8: f.kernel("ssim_to_float_8", &to_float)?,
            to_float16: f.kernel("ssim_to_float_16", &to_float)?,
            decimate: f.kernel("ssim_decimate", &sig("p iii p i ii p"))?,
            conv_h: f.kernel("ssim_conv_h", &sig("pp iii p p"))?,
            conv_v: f.kernel("ssim_conv_v", &sig("p ii p p"))?,
            rows: f.kernel("ssim_rows", &sig("ppppp ii uuu p"))?,
        })
    }
}

/// The valid-output size of the Gaussian over a `w`×`h` picture.
fn map_size((w, h): (usize, usize)) -> (usize, usize) {
    (w + 1 - GAUSS.len(), h + 1 - GAUSS.len())
}

/// One slot's pictures: both luma pictures as floats; float_ssim's
/// downscaled pair; MS-SSIM's scales 1..4 of each; the Gaussian's cache and
/// the five filtered pictures; the row sums.
struct Slot {
    pics: [DeviceBuffer; 2],
    small: Option<[DeviceBuffer; 2]>,
    pyramid: Vec<[DeviceBuffer; 2]>,
    cache: DeviceBuffer,
    maps: [DeviceBuffer; 5],
    rows: DeviceBuffer,
}

impl Slot {
    /// Device bytes this slot holds.
    fn device_bytes(&self) -> usize {
        let pairs = self.small.iter().chain(&self.pyramid).chain([&self.pics]);
        pairs
            .flatten()
            .chain(&self.maps)
            .chain([&self.cache, &self.rows])
            .map(DeviceBuffer::bytes)
            .sum()
    }
}

/// What a twin gives, and where.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Outputs {
    /// The score's slot, then the terms' (`enable_lcs`).
    pub slots: Slots,
    /// float_ms_ssim (else float_ssim).
    pub multi_scale: bool,
    pub lcs: bool,
    /// float_ssim's downscale factor (`cpu::ssim_factor`).
    pub factor: usize,
}

pub(crate) struct Ssim {
    out: Outputs,
    input: (usize, usize),
    scaler: f32,
    /// float_ssim's map size and downscale factor, when asked and large enough.
    ssim: Option<((usize, usize), usize)>,
    /// MS-SSIM's scale sizes, when asked and large enough.
    ms: Option<[(usize, usize); 5]>,
    /// Box kernel (float_ssim), 9×9 low-pass, Gaussian.
    box_taps: DeviceBuffer,
    lpf: DeviceBuffer,
    gauss: DeviceBuffer,
    scratch: Vec<Slot>,
    /// `enable_db`: the score in dB, capped at this (`cpu::db_max`).
    db: Option<f64>,
}

impl Ssim {
    /// The same twin giving its score in dB, capped at `max` (`enable_db`).
    pub(crate) fn in_db(mut self, max: f64) -> Self {
        self.db = Some(max);
        self
    }

    /// The twin giving float_ssim or float_ms_ssim (and their terms) as
    /// `out` says.
    pub(crate) fn new(
        dev: &Arc<Device>,
        st: &Stream,
        geo: &Geometry,
        out: Outputs,
    ) -> Result<Option<Self>, HipError> {
        let (w, h) = (geo.w, geo.h);
        let factor = out.factor;
        let ssim = ssim_size(w, h, factor)
            .filter(|_| !out.multi_scale)
            .map(|s| (s, factor));
        let ms = ms_ssim_sizes(w, h).filter(|_| out.multi_scale);
        let floats =
            |v: &[f32], what| upload_table(dev, st, v, |x: f32| x.to_le_bytes().to_vec(), what);
        Ok(Some(Ssim {
            out,
            input: (w, h),
            scaler: float_scaler(geo.bpc),
            ssim,
            ms,
            box_taps: floats(&box_kernel(factor), "float_ssim box kernel")?,
            lpf: floats(&lpf_kernel(), "float_ms_ssim low-pass")?,
            gauss: floats(&GAUSS, "ssim Gaussian")?,
            scratch: Vec::new(),
            db: None,
        }))
    }

    /// The pictures whose SSIM map it takes, in read-back order: float_ssim's,
    /// then MS-SSIM's five scales.
    fn maps(&self) -> Vec<(usize, usize)> {
        let mut v: Vec<(usize, usize)> = self.ssim.iter().map(|&(s, _)| s).collect();
        if let Some(ms) = &self.ms {
            v.extend(ms);
        }
        v
    }

    /// Rows of every map.
    fn rows(&self) -> usize {
        self.maps().into_iter().map(|s| map_size(s).1).sum()
    }

    /// Decimates float picture `src` (`from`) into `out` by `factor` with
    /// the `k`×`k` kernel `taps`.
    fn decimate(
        &self,
        f: &Frame<'_>,
        (src, from): (&DeviceBuffer, (usize, usize)),
        (factor, taps, k): (usize, &DeviceBuffer, usize),
        (out, to): (&DeviceBuffer, (usize, usize)),
    ) -> Result<(), HipError> {
        f.stream.launch(
            &f.kernels.get::<Kernels>().decimate,
            (blocks(to.0), to.1 as u32, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(src, 0),
                Arg::I32(from.0 as i32),
                Arg::I32(from.1 as i32),
                Arg::I32(factor as i32),
                Arg::Buf(taps, 0),
                Arg::I32(k as i32),
                Arg::I32(to.0 as i32),
                Arg::I32(to.1 as i32),
                Arg::Buf(out, 0),
            ],
        )
    }

    /// The SSIM map of pair `pics` (`w`×`h`): its row sums from row `at`.
    fn map_rows(
        &self,
        f: &Frame<'_>,
        pics: [&DeviceBuffer; 2],
        (w, h): (usize, usize),
        at: usize,
    ) -> Result<(), HipError> {
        let (s, k) = (&self.scratch[f.slot], f.kernels.get::<Kernels>());
        let (dw, dh) = map_size((w, h));
        let [r, d] = pics;
        for (i, (a, b, mode)) in [(r, r, 0), (d, d, 0), (r, r, 1), (d, d, 1), (r, d, 2)]
            .into_iter()
            .enumerate()
        {
            f.stream.launch(
                &k.conv_h,
                (blocks(dw), h as u32, 1),
                (256, 1, 1),
                0,
                &[
                    Arg::Buf(a, 0),
                    Arg::Buf(b, 0),
                    Arg::I32(mode),
                    Arg::I32(w as i32),
                    Arg::I32(h as i32),
                    Arg::Buf(&self.gauss, 0),
                    Arg::Buf(&s.cache, 0),
                ],
            )?;
            f.stream.launch(
                &k.conv_v,
                (blocks(dw), dh as u32, 1),
                (256, 1, 1),
                0,
                &[
                    Arg::Buf(&s.cache, 0),
                    Arg::I32(dw as i32),
                    Arg::I32(dh as i32),
                    Arg::Buf(&self.gauss, 0),
                    Arg::Buf(&s.maps[i], 0),
                ],
            )?;
        }
        let [c1, c2, c3] = constants().map(|c| Arg::U32(c.to_bits()));
        let mut args: Vec<Arg<'_>> = s.maps.iter().map(|m| Arg::Buf(m, 0)).collect();
        args.extend([Arg::I32(dw as i32), Arg::I32(dh as i32), c1, c2, c3]);
        args.push(Arg::Buf(&s.rows, 32 * at));
        f.stream
            .launch(&k.rows, (blocks(dh), 1, 1), (256, 1, 1), 0, &args)
    }

    /// Both luma pictures as floats into the slot's pictures.
    fn to_float(&self, f: &Frame<'_>) -> Result<(), HipError> {
        let (g, k) = (f.geo, f.kernels.get::<Kernels>());
        let kern = if g.bps == 1 {
            &k.to_float8
        } else {
            &k.to_float16
        };
        let n = self.input.0 * self.input.1;
        for side in 0..2 {
            f.stream.launch(
                kern,
                (blocks(n), 1, 1),
                (256, 1, 1),
                0,
                &[
                    Arg::Buf(f.plane(side, 0), 0),
                    Arg::I32(n as i32),
                    Arg::U32(self.scaler.to_bits()),
                    Arg::Buf(&self.scratch[f.slot].pics[side], 0),
                ],
            )?;
        }
        Ok(())
    }
}

impl GpuExtractor for Ssim {
    fn stage(&self) -> &'static str {
        "ssim"
    }

    /// Four doubles per row of every map.
    fn extra_bytes(&self) -> usize {
        32 * self.rows()
    }

    fn add_slot(&mut self, dev: &Arc<Device>) -> Result<(), HipError> {
        let buf =
            |(w, h): (usize, usize)| DeviceBuffer::new(dev, picture_bytes(w, h), "ssim picture");
        let pair = |size| -> Result<[DeviceBuffer; 2], HipError> { Ok([buf(size)?, buf(size)?]) };
        // The largest picture filtered: the cache and the maps fit it.
        let largest = self
            .maps()
            .into_iter()
            .max()
            .unwrap_or((GAUSS.len(), GAUSS.len()));
        let (dw, dh) = map_size(largest);
        let small = match self.ssim {
            Some((size, factor)) if factor > 1 => Some(pair(size)?),
            _ => None,
        };
        let pyramid = match &self.ms {
            Some(ms) => ms[1..].iter().map(|&s| pair(s)).collect::<Result<_, _>>()?,
            None => Vec::new(),
        };
        self.scratch.push(Slot {
            pics: pair(self.input)?,
            small,
            pyramid,
            cache: buf((dw, largest.1))?,
            maps: [
                buf((dw, dh))?,
                buf((dw, dh))?,
                buf((dw, dh))?,
                buf((dw, dh))?,
                buf((dw, dh))?,
            ],
            rows: DeviceBuffer::new(dev, self.extra_bytes().max(4), "ssim row sums")?,
        });
        Ok(())
    }

    fn slot_bytes(&self) -> usize {
        self.scratch.first().map_or(0, Slot::device_bytes)
    }

    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        if self.ssim.is_none() && self.ms.is_none() {
            return Ok(false);
        }
        self.to_float(f)?;
        let s = &self.scratch[f.slot];
        let full = [&s.pics[0], &s.pics[1]];
        let mut at = 0;
        if let Some((size, factor)) = self.ssim {
            let pics = match &s.small {
                Some(small) => {
                    for side in 0..2 {
                        let taps = (factor, &self.box_taps, factor);
                        self.decimate(f, (full[side], self.input), taps, (&small[side], size))?;
                    }
                    [&small[0], &small[1]]
                }
                None => full,
            };
            self.map_rows(f, pics, size, at)?;
            at += map_size(size).1;
        }
        if let Some(ms) = self.ms {
            let mut pics = full;
            for (scale, &size) in ms.iter().enumerate() {
                if scale > 0 {
                    let next = &s.pyramid[scale - 1];
                    for side in 0..2 {
                        let taps = (2, &self.lpf, 9);
                        self.decimate(f, (pics[side], ms[scale - 1]), taps, (&next[side], size))?;
                    }
                    pics = [&next[0], &next[1]];
                }
                self.map_rows(f, pics, size, at)?;
                at += map_size(size).1;
            }
        }
        f.read_back_extra(&s.rows, self.extra_bytes())?;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        if !r.computed {
            return Ok(());
        }
        let double =
            |i: usize| f64::from_le_bytes(r.extra[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        let mut at = 0;
        let mut terms = |size: (usize, usize)| {
            let (dw, dh) = map_size(size);
            let mut sums = [0f64; 4];
            for row in at..at + dh {
                for (k, v) in sums.iter_mut().enumerate() {
                    *v += double(4 * row + k);
                }
            }
            at += dh;
            terms_from_sums(sums, dw * dh)
        };
        let db = |v: f64| self.db.map_or(v, |max| super::cpu::to_db(v, max));
        let mut scored = None;
        if let Some((size, _)) = self.ssim {
            let (v, l, c, st) = terms(size);
            scored = Some((f64::from(v), vec![(l, c, st)]));
        }
        if let Some(ms) = self.ms {
            let t: [(f32, f32, f32); 5] = std::array::from_fn(|s| {
                let (_, l, c, st) = terms(ms[s]);
                (l, c, st)
            });
            scored = Some((ms_ssim_from_terms(&t), t.to_vec()));
        }
        if let Some((v, t)) = scored {
            let slots = self.out.slots;
            out.set(slots.at(0), db(v));
            if self.out.lcs {
                for (i, x) in super::lcs_values(&t).into_iter().enumerate() {
                    out.set(slots.at(1 + i), x);
                }
            }
        }
        Ok(())
    }
}
