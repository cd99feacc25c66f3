//! float_adm on the GPU (`float_adm.hip`, row sums from
//! `float_filter.hip`): per scale, the DWT of both pictures, the
//! decoupling into restored and additive parts, the CSF weighting and the
//! per-sample terms of den, num and AIM's numerator over the inner region,
//! summed per row on the device and over rows on the host. Every float
//! operation is the CPU twin's (`cpu.rs`) in its order,
//! and the reciprocal estimates libvmaf divides with are the host CPU's own
//! (a table read off it, `recip::recip_estimate_table`), so the scores equal
//! the CPU engine's on the same machine.

#![forbid(unsafe_code)]

use crate::core::RawFeatures;
use crate::extractors::Slots;
use crate::extractors::common::adm_scores::AdmScores;
use crate::extractors::common::float_filter_gpu::{self as ff, picture_bytes};
use crate::extractors::float_adm::cpu::{self as cpu, FloatAdmParams, Region};
use crate::hip::twin::{
    Frame, Geometry, GpuExtractor, KernelSet, Modules, Retired, blocks, sig, upload_table,
};
use crate::hip::{Arg, Device, DeviceBuffer, HipError, Kernel, Stream};
use std::sync::Arc;

/// Its kernel files.
pub(crate) const KERNELS: KernelSet = KernelSet {
    sources: &[("float_adm.hip", include_str!("float_adm.hip"))],
    load: |m, _, _| Ok(Box::new(Kernels::load(m)?)),
};

pub(crate) struct Kernels {
    dwt: Kernel,
    decouple: Kernel,
    csf: Kernel,
    den_terms: Kernel,
    cm_terms: Kernel,
}

impl Kernels {
    pub(crate) fn load(m: &Modules) -> Result<Self, HipError> {
        let f = &m["float_adm.hip"];
        Ok(Kernels {
            dwt: f.kernel("fadm_dwt", &sig("p ii pppp i"))?,
            decouple: f.kernel("fadm_decouple", &sig("pppppp iiiii dd p pppppp"))?,
            csf: f.kernel("fadm_csf", &sig("ppp iiiii ddd pppppp"))?,
            den_terms: f.kernel("fadm_den_terms", &sig("ppp iiiii ddd d ppp"))?,
            cm_terms: f.kernel("fadm_cm_terms", &sig("ppp ppp ppp iiiiii ddd d i ppp"))?,
        })
    }
}

/// Three detail bands (h, v, d).
type Hvd = [DeviceBuffer; 3];

/// One slot's pictures and bands.
struct Slot {
    pics: [DeviceBuffer; 2],
    /// Band a of each picture, alternately for even and odd scales.
    approx: [[DeviceBuffer; 2]; 2],
    detail: [Hvd; 2],
    restored: Hvd,
    additive: Hvd,
    csf: Hvd,
    masks: Hvd,
    terms: Hvd,
    rows: DeviceBuffer,
}

/// One scale's band size and regions.
#[derive(Clone, Copy)]
struct Scale {
    input: (usize, usize),
    bands: (usize, usize),
    taps: Region,
    inner: Region,
}

pub(crate) struct FloatAdm {
    slots: Slots,
    p: FloatAdmParams,
    rcp_table: DeviceBuffer,
    scales: [Scale; 4],
    scratch: Vec<Slot>,
}

impl FloatAdm {
    pub(crate) fn new(
        dev: &Arc<Device>,
        st: &Stream,
        geo: &Geometry,
        p: FloatAdmParams,
        slots: Slots,
    ) -> Result<Self, HipError> {
        let (table, _) = super::recip::recip_estimate_table();
        let rcp_table = upload_table(
            dev,
            st,
            &table,
            |x: f32| x.to_le_bytes().to_vec(),
            "float_adm reciprocal estimates",
        )?;
        let mut input = (geo.w, geo.h);
        let scales = std::array::from_fn(|_| {
            let bands = (input.0.div_ceil(2), input.1.div_ceil(2));
            let s = Scale {
                input,
                bands,
                taps: Region::with_taps(bands.0, bands.1),
                inner: Region::inner(bands.0, bands.1),
            };
            input = bands;
            s
        });
        Ok(FloatAdm {
            slots,
            p,
            rcp_table,
            scales,
            scratch: Vec::new(),
        })
    }

    /// Float offset of a scale's row sums in the read-back: den, num, AIM,
    /// each h, v, d.
    fn rows_at(&self, scale: usize) -> usize {
        9 * self.scales[..scale]
            .iter()
            .map(|s| s.inner.bottom - s.inner.top)
            .sum::<usize>()
    }

    fn band_bytes(&self) -> usize {
        let (w, h) = self.scales[0].bands;
        picture_bytes(w, h)
    }

    fn skips(&self, scale: usize) -> bool {
        scale == 0 && self.p.skip_scale0
    }

    /// Launch grid over a region.
    fn grid(r: &Region) -> (u32, u32, u32) {
        (blocks(r.width() as usize), r.height() as u32, 1)
    }

    /// The DWT of both pictures at `scale`.
    fn dwt(&self, f: &Frame<'_>, scale: usize) -> Result<(), HipError> {
        let s = &self.scratch[f.slot];
        let sc = self.scales[scale];
        for side in 0..2 {
            let src = if scale == 0 {
                &s.pics[side]
            } else {
                &s.approx[side][(scale - 1) % 2]
            };
            let [bh, bv, bd] = &s.detail[side];
            f.stream.launch(
                &f.kernels.get::<Kernels>().dwt,
                (blocks(sc.bands.0), sc.bands.1 as u32, 1),
                (256, 1, 1),
                0,
                &[
                    Arg::Buf(src, 0),
                    Arg::I32(sc.input.0 as i32),
                    Arg::I32(sc.input.1 as i32),
                    Arg::Buf(&s.approx[side][scale % 2], 0),
                    Arg::Buf(bh, 0),
                    Arg::Buf(bv, 0),
                    Arg::Buf(bd, 0),
                    Arg::I32(i32::from(!self.skips(scale))),
                ],
            )?;
        }
        Ok(())
    }

    /// Region arguments: w, top, bottom, left, right.
    fn region_args(w: usize, r: &Region) -> [Arg<'static>; 5] {
        [
            Arg::I32(w as i32),
            Arg::I32(r.top as i32),
            Arg::I32(r.bottom as i32),
            Arg::I32(r.left as i32),
            Arg::I32(r.right as i32),
        ]
    }

    fn decouple(&self, f: &Frame<'_>, sc: &Scale) -> Result<(), HipError> {
        let s = &self.scratch[f.slot];
        let mut args: Vec<Arg<'_>> = s.detail.iter().flatten().map(|b| Arg::Buf(b, 0)).collect();
        args.extend(Self::region_args(sc.bands.0, &sc.taps));
        args.push(Arg::F64(self.p.enhn_gain_limit));
        args.push(Arg::F64(f64::from(cpu::cos_1deg_sq())));
        args.push(Arg::Buf(&self.rcp_table, 0));
        args.extend(s.restored.iter().chain(&s.additive).map(|b| Arg::Buf(b, 0)));
        f.stream.launch(
            &f.kernels.get::<Kernels>().decouple,
            Self::grid(&sc.taps),
            (256, 1, 1),
            0,
            &args,
        )
    }

    /// CSF weighting of `src` into the slot's csf and masks.
    fn csf(&self, f: &Frame<'_>, sc: &Scale, src: &Hvd, rf: [f32; 3]) -> Result<(), HipError> {
        let s = &self.scratch[f.slot];
        let mut args: Vec<Arg<'_>> = src.iter().map(|b| Arg::Buf(b, 0)).collect();
        args.extend(Self::region_args(sc.bands.0, &sc.taps));
        args.extend(rf.map(|x| Arg::F64(f64::from(x))));
        args.extend(s.csf.iter().chain(&s.masks).map(|b| Arg::Buf(b, 0)));
        f.stream.launch(
            &f.kernels.get::<Kernels>().csf,
            Self::grid(&sc.taps),
            (256, 1, 1),
            0,
            &args,
        )
    }

    /// The terms' row sums into block `block` (0 den, 1 num, 2 AIM) of the scale's rows.
    fn rows(&self, f: &Frame<'_>, scale: usize, block: usize) -> Result<(), HipError> {
        let s = &self.scratch[f.slot];
        let sc = &self.scales[scale];
        let n = sc.inner.bottom - sc.inner.top;
        for (b, t) in s.terms.iter().enumerate() {
            ff::row_sums(
                f,
                t,
                sc.bands.0,
                (sc.inner.top..sc.inner.bottom, sc.inner.left..sc.inner.right),
                &s.rows,
                self.rows_at(scale) + (3 * block + b) * n,
            )?;
        }
        Ok(())
    }

    /// The masked terms of `src` against the slot's csf and masks.
    fn cm_terms(&self, f: &Frame<'_>, sc: &Scale, src: &Hvd, rf: [f32; 3]) -> Result<(), HipError> {
        let s = &self.scratch[f.slot];
        let mut args: Vec<Arg<'_>> = src
            .iter()
            .chain(&s.csf)
            .chain(&s.masks)
            .map(|b| Arg::Buf(b, 0))
            .collect();
        let r = &sc.inner;
        args.extend(
            [sc.bands.0, sc.bands.1, r.top, r.bottom, r.left, r.right].map(|v| Arg::I32(v as i32)),
        );
        args.extend(rf.map(|x| Arg::F64(f64::from(x))));
        args.push(Arg::F64(self.p.p_norm));
        args.push(Arg::I32(i32::from(self.p.bypass_cm)));
        args.extend(s.terms.iter().map(|b| Arg::Buf(b, 0)));
        f.stream.launch(
            &f.kernels.get::<Kernels>().cm_terms,
            Self::grid(r),
            (256, 1, 1),
            0,
            &args,
        )
    }

    /// den, num and AIM's rows of one scale.
    fn scale_rows(&self, f: &Frame<'_>, scale: usize) -> Result<(), HipError> {
        let s = &self.scratch[f.slot];
        let sc = self.scales[scale];
        let rf = self.p.rfactors(scale);
        self.decouple(f, &sc)?;
        let mut args: Vec<Arg<'_>> = s.detail[0].iter().map(|b| Arg::Buf(b, 0)).collect();
        args.extend(Self::region_args(sc.bands.0, &sc.inner));
        args.extend(rf.map(|x| Arg::F64(f64::from(x))));
        args.push(Arg::F64(self.p.p_norm));
        args.extend(s.terms.iter().map(|b| Arg::Buf(b, 0)));
        f.stream.launch(
            &f.kernels.get::<Kernels>().den_terms,
            Self::grid(&sc.inner),
            (256, 1, 1),
            0,
            &args,
        )?;
        self.rows(f, scale, 0)?;
        self.csf(f, &sc, &s.additive, rf)?;
        self.cm_terms(f, &sc, &s.restored, rf)?;
        self.rows(f, scale, 1)?;
        self.csf(f, &sc, &s.restored, rf)?;
        self.cm_terms(f, &sc, &s.additive, rf)?;
        self.rows(f, scale, 2)
    }
}

impl GpuExtractor for FloatAdm {
    fn stage(&self) -> &'static str {
        "float_adm"
    }

    /// Each scale's den, num and AIM row sums, per band.
    fn extra_bytes(&self) -> usize {
        4 * self.rows_at(4)
    }

    fn add_slot(&mut self, dev: &Arc<Device>) -> Result<(), HipError> {
        let full = picture_bytes(self.scales[0].input.0, self.scales[0].input.1);
        let band = || DeviceBuffer::new(dev, self.band_bytes(), "float_adm band");
        let hvd = || -> Result<Hvd, HipError> { Ok([band()?, band()?, band()?]) };
        let pic = || DeviceBuffer::new(dev, full, "float_adm picture");
        self.scratch.push(Slot {
            pics: [pic()?, pic()?],
            approx: [[band()?, band()?], [band()?, band()?]],
            detail: [hvd()?, hvd()?],
            restored: hvd()?,
            additive: hvd()?,
            csf: hvd()?,
            masks: hvd()?,
            terms: hvd()?,
            rows: DeviceBuffer::new(dev, self.extra_bytes().max(4), "float_adm row sums")?,
        });
        Ok(())
    }

    fn slot_bytes(&self) -> usize {
        let full = picture_bytes(self.scales[0].input.0, self.scales[0].input.1);
        2 * full + 25 * self.band_bytes() + self.extra_bytes()
    }

    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let s = &self.scratch[f.slot];
        ff::to_float(f, f.plane(0, 0), &s.pics[0])?;
        ff::to_float(f, f.plane(1, 0), &s.pics[1])?;
        for scale in 0..4 {
            self.dwt(f, scale)?;
            if !self.skips(scale) {
                self.scale_rows(f, scale)?;
            }
        }
        f.read_back_extra(&s.rows, self.extra_bytes())?;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let mut scores = AdmScores::default();
        let mut aim = [0f32; 4];
        for (scale, aim) in aim.iter_mut().enumerate() {
            if self.skips(scale) {
                scores.den[scale] = 1e-10;
                continue;
            }
            let sc = &self.scales[scale];
            let n = sc.inner.bottom - sc.inner.top;
            let (rw, rh) = (sc.inner.width(), sc.inner.height());
            let at = self.rows_at(scale);
            let block = |k: usize, weight: f64| {
                let mut v = 0f32;
                for b in 0..3 {
                    let from = 4 * (at + (3 * k + b) * n);
                    let sum = ff::add_rows(ff::floats(&r.extra[from..from + 4 * n]));
                    v += self.p.norm(sum, rw, rh, weight);
                }
                v
            };
            scores.den[scale] = block(0, self.p.noise_weight);
            scores.num[scale] = block(1, self.p.noise_weight);
            *aim = block(2, 0.0);
        }
        let skip_aim = std::array::from_fn(|s| self.p.skip_aim_scale == s as i32);
        cpu::finish(&mut scores, aim, skip_aim, (r.geo.w, r.geo.h), &self.p);
        scores.write(out, self.slots);
        Ok(())
    }
}
