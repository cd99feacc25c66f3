//! ADM on the GPU (`adm_dwt.hip`, `adm_decouple.hip`, `adm_cm.hip`,
//! `adm_csf_den.hip`): at each of the four scales, the DWT of both pictures
//! (from the luma at scale 0, from the previous scale's bands after), the
//! decoupling with the CSF, the contrast-masking sums and the CSF-weighted
//! denominator sums (the contrast-masking sums, six u64 a scale, then the
//! denominator's, three a scale); the CPU twin (`cpu.rs`)
//! finishes them into the scores. In a ladder the reference's DWT and the
//! denominator, which reads the reference alone, are done once for every
//! rendition (`launch_reference`).

#![forbid(unsafe_code)]

use crate::core::RawFeatures;
use crate::extractors::Slots;
use crate::extractors::adm::cpu::{
    self as adm, AdmParams, AdmScores, CmShifts, cm_finish, csf_den_finish, den_shifts,
};
use crate::extractors::adm::tables::{
    DWT_LO_SUM, Region, div_lookup, dwt_indices, rfactors_s123_fixed, rfactors_scale0_fixed,
};
use crate::hip::twin::{
    Frame, Geometry, GpuExtractor, KernelSet, Modules, ReferenceWork, Retired, ZPair, blocks, sig,
    upload_table,
};
use crate::hip::{Arg, Device, DeviceBuffer, HipError, Kernel, Stream};
use std::sync::Arc;

/// Its kernel files.
pub(crate) const KERNELS: KernelSet = KernelSet {
    sources: &[
        ("adm_dwt.hip", include_str!("adm_dwt.hip")),
        ("adm_decouple.hip", include_str!("adm_decouple.hip")),
        ("adm_cm.hip", include_str!("adm_cm.hip")),
        ("adm_csf_den.hip", include_str!("adm_csf_den.hip")),
    ],
    load: |m, dev, st| Ok(Box::new(Kernels::load(m, dev, st)?)),
};

pub(crate) struct Kernels {
    dwt0_8: Kernel,
    dwt0_16: Kernel,
    dwt123: Kernel,
    decouple: Kernel,
    cm: Kernel,
    csf_den: Kernel,
    /// ADM's reciprocal table (i32), device copy.
    div_table: DeviceBuffer,
}

impl Kernels {
    pub(crate) fn load(m: &Modules, dev: &Arc<Device>, st: &Stream) -> Result<Self, HipError> {
        let div_table = upload_table(
            dev,
            st,
            &div_lookup(),
            |v: i32| v.to_le_bytes().to_vec(),
            "ADM reciprocal table",
        )?;
        let (dwt0, dwt123) = (sig("pppp iiii pp iii"), sig("pppp iiii pp li li"));
        let decouple = sig("pppp iiiiiii dd lll");
        let (cm, den) = (sig("p iiiiiii lll iiii p"), sig("p iiiiiiiii p"));
        Ok(Kernels {
            dwt0_8: m["adm_dwt.hip"].kernel("adm_dwt0_8", &dwt0)?,
            dwt0_16: m["adm_dwt.hip"].kernel("adm_dwt0_16", &dwt0)?,
            dwt123: m["adm_dwt.hip"].kernel("adm_dwt123", &dwt123)?,
            decouple: m["adm_decouple.hip"].kernel("adm_decouple_csf", &decouple)?,
            cm: m["adm_cm.hip"].kernel("adm_cm", &cm)?,
            csf_den: m["adm_csf_den.hip"].kernel("adm_csf_den", &den)?,
            div_table,
        })
    }
}

/// One slot's bands and decoupling planes.
struct Scratch {
    bands_ref: Vec<DeviceBuffer>,
    bands_dis: Vec<DeviceBuffer>,
    work: DeviceBuffer,
}

pub(crate) struct Adm {
    slots: Slots,
    p: AdmParams,
    /// Input size and band size per scale.
    input: [(usize, usize); 4],
    band: [(usize, usize); 4],
    /// DWT index tables of every scale (ix then iy), and their offsets.
    dwt_tables: DeviceBuffer,
    dwt_offsets: [(usize, usize); 4],
    scratch: Vec<Scratch>,
}

impl Adm {
    /// ADM for `geo`, its DWT index tables uploaded.
    pub(crate) fn new(
        dev: &Arc<Device>,
        st: &Stream,
        geo: &Geometry,
        p: AdmParams,
        slots: Slots,
    ) -> Result<Self, HipError> {
        let mut input = [(geo.w, geo.h); 4];
        let mut band = [(geo.w.div_ceil(2), geo.h.div_ceil(2)); 4];
        for s in 1..4 {
            input[s] = band[s - 1];
            band[s] = (input[s].0.div_ceil(2), input[s].1.div_ceil(2));
        }
        // ix (band width × 4) then iy (band height × 4), per scale.
        let mut table: Vec<u8> = Vec::new();
        let mut dwt_offsets = [(0, 0); 4];
        for s in 0..4 {
            dwt_offsets[s].0 = table.len();
            table.extend(
                dwt_indices(input[s].0)
                    .iter()
                    .flatten()
                    .flat_map(|v| v.to_le_bytes()),
            );
            dwt_offsets[s].1 = table.len();
            table.extend(
                dwt_indices(input[s].1)
                    .iter()
                    .flatten()
                    .flat_map(|v| v.to_le_bytes()),
            );
        }
        let dwt_tables = DeviceBuffer::new(dev, table.len(), "DWT index tables")?;
        st.upload_blocking(&dwt_tables, 0, &table)?;
        Ok(Adm {
            slots,
            p,
            input,
            band,
            dwt_tables,
            dwt_offsets,
            scratch: Vec::new(),
        })
    }

    /// The DWT at `scale` of both pictures, or, when the ladder did the
    /// reference's, of the distorted one only.
    fn launch_dwt(&self, f: &Frame<'_>, scale: usize) -> Result<(), HipError> {
        let sc = &self.scratch[f.slot];
        let src = match scale {
            0 => [f.plane(0, 0), f.plane(1, 0)],
            _ => [&sc.bands_ref[scale - 1], &sc.bands_dis[scale - 1]],
        };
        let pictures = match f.shared {
            Some(_) => ZPair::one(src[1], &sc.bands_dis[scale]),
            None => ZPair::both(src, [&sc.bands_ref[scale], &sc.bands_dis[scale]]),
        };
        self.dwt(f.kernels.get::<Kernels>(), f.stream, f.geo, scale, pictures)
    }

    /// The DWT at `scale` of the luma (scale 0) or the scale above's bands.
    fn dwt(
        &self,
        k: &Kernels,
        stream: &Stream,
        g: &Geometry,
        scale: usize,
        pictures: ZPair<'_>,
    ) -> Result<(), HipError> {
        let (w, h) = self.input[scale];
        let (bw, bh) = self.band[scale];
        let (ox, oy) = self.dwt_offsets[scale];
        let grid = (blocks(bw), bh as u32, pictures.depth());
        let mut args = pictures.args();
        args.extend([
            Arg::I32(w as i32),
            Arg::I32(h as i32),
            Arg::I32(bw as i32),
            Arg::I32(bh as i32),
            Arg::Buf(&self.dwt_tables, ox),
            Arg::Buf(&self.dwt_tables, oy),
        ]);
        if scale == 0 {
            let shift = if g.bpc == 8 { 8 } else { i32::from(g.bpc) };
            let round = 1i32 << (shift - 1);
            let kern = if g.bps == 1 { &k.dwt0_8 } else { &k.dwt0_16 };
            args.extend([
                Arg::I32(shift),
                Arg::I32(round),
                Arg::I32(DWT_LO_SUM.wrapping_mul(round)),
            ]);
            return stream.launch(kern, grid, (256, 1, 1), 0, &args);
        }
        let (v_add, v_shift) = if scale == 1 { (0, 0) } else { (32768, 16) };
        let (h_add, h_shift) = if scale == 2 { (32768, 16) } else { (16384, 15) };
        args.extend([
            Arg::I64(v_add),
            Arg::I32(v_shift),
            Arg::I64(h_add),
            Arg::I32(h_shift),
        ]);
        stream.launch(&k.dwt123, grid, (256, 1, 1), 0, &args)
    }

    /// The reference's bands at `scale`: this slot's, or the ladder's.
    fn bands_ref<'a>(&'a self, f: &Frame<'a>, scale: usize) -> &'a DeviceBuffer {
        f.shared
            .map_or(&self.scratch[f.slot].bands_ref[scale], |b| &b[scale])
    }

    /// Decoupling of the distorted bands from the reference's at `scale`,
    /// with the CSF's fixed-point factors `rf`, into the slot's planes.
    fn launch_decouple(&self, f: &Frame<'_>, scale: usize, rf: [i64; 3]) -> Result<(), HipError> {
        let (k, sc) = (f.kernels.get::<Kernels>(), &self.scratch[f.slot]);
        let (bw, bh) = self.band[scale];
        let cos_sq = f64::from(adm::cos_1deg_sq());
        let e = Region::extended(bw, bh);
        f.stream.launch(
            &k.decouple,
            (
                blocks((e.right - e.left).max(0) as usize),
                (e.bottom - e.top).max(0) as u32,
                1,
            ),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(self.bands_ref(f, scale), 0),
                Arg::Buf(&sc.bands_dis[scale], 0),
                Arg::Buf(&k.div_table, 0),
                Arg::Buf(&sc.work, 0),
                Arg::I32(bw as i32),
                Arg::I32(bh as i32),
                Arg::I32(e.top),
                Arg::I32(e.bottom),
                Arg::I32(e.left),
                Arg::I32(e.right),
                Arg::I32(scale as i32),
                Arg::F64(self.p.enhn_gain_limit),
                Arg::F64(cos_sq),
                Arg::I64(rf[0]),
                Arg::I64(rf[1]),
                Arg::I64(rf[2]),
            ],
        )
    }

    /// The contrast-masking sums of `scale` (num θ0..2, aim θ0..2).
    fn launch_masking(&self, f: &Frame<'_>, scale: usize, rf: [i64; 3]) -> Result<(), HipError> {
        let (k, sc) = (f.kernels.get::<Kernels>(), &self.scratch[f.slot]);
        let (bw, bh) = self.band[scale];
        let c = Region::core(bw, bh);
        let (top, bottom) = (c.top.max(0), c.bottom.min(bh as i32));
        let (left, right) = (c.left.max(0), c.right.min(bw as i32));
        let shifts = CmShifts::new(scale, bw, bh);
        f.stream.launch(
            &k.cm,
            (1, (bottom - top).max(0) as u32, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(&sc.work, 0),
                Arg::I32(bw as i32),
                Arg::I32(bh as i32),
                Arg::I32(top),
                Arg::I32(bottom),
                Arg::I32(left),
                Arg::I32(right),
                Arg::I32(scale as i32),
                Arg::I64(rf[0]),
                Arg::I64(rf[1]),
                Arg::I64(rf[2]),
                Arg::I32(shifts.shift_cub[0] as i32),
                Arg::I32(shifts.shift_cub[1] as i32),
                Arg::I32(shifts.shift_cub[2] as i32),
                Arg::I32(shifts.shift_inner as i32),
                Arg::Buf(f.sums, (f.sums_at + CM_WORDS * scale) * 8),
            ],
        )
    }

    /// The CSF-weighted denominator sums of the reference's bands at
    /// `scale` (θ0..2), added into `out` at byte `at`.
    fn launch_csf_den(
        &self,
        k: &Kernels,
        stream: &Stream,
        bands_ref: &DeviceBuffer,
        scale: usize,
        out: &DeviceBuffer,
        at: usize,
    ) -> Result<(), HipError> {
        let (bw, bh) = self.band[scale];
        let c = Region::core(bw, bh);
        let ds = den_shifts(scale, &c);
        stream.launch(
            &k.csf_den,
            (1, (c.bottom - c.top).max(0) as u32, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(bands_ref, 0),
                Arg::I32(bw as i32),
                Arg::I32(bh as i32),
                Arg::I32(c.top),
                Arg::I32(c.left),
                Arg::I32(c.right),
                Arg::I32(scale as i32),
                Arg::I32(ds.shift_acc as i32),
                Arg::I32(ds.shift_sq as i32),
                Arg::I32(ds.shift_cub as i32),
                Arg::Buf(out, at + DEN_WORDS * scale * 8),
            ],
        )
    }

    /// The denominator sums of every scale: the ladder's, copied, or
    /// this frame's.
    fn launch_denominators(&self, f: &Frame<'_>) -> Result<(), HipError> {
        let at = (f.sums_at + 4 * CM_WORDS) * 8;
        if let Some(shared) = f.shared {
            let den = &shared[SHARED_DEN];
            return f.stream.copy(f.sums, at, den, 0, 4 * DEN_WORDS * 8);
        }
        for scale in 0..4 {
            let bands = &self.scratch[f.slot].bands_ref[scale];
            self.launch_csf_den(
                f.kernels.get::<Kernels>(),
                f.stream,
                bands,
                scale,
                f.sums,
                at,
            )?;
        }
        Ok(())
    }
}

/// u64 sums a scale: the contrast masking's (num θ0..2, aim θ0..2), then,
/// after those of the four scales, the denominator's (θ0..2).
const CM_WORDS: usize = 6;
const DEN_WORDS: usize = 3;

/// A ladder's ADM buffers (`Adm::reference_buffers`): the reference's bands
/// at scales 0..3, then this one, its denominator sums.
const SHARED_DEN: usize = 4;

impl GpuExtractor for Adm {
    fn stage(&self) -> &'static str {
        "adm"
    }

    fn memory(&self) -> &'static str {
        "ADM bands (4 scales, both pictures) and decouple/CSF planes"
    }

    /// Four scales × (num θ0..2, aim θ0..2), then four × den θ0..2.
    fn sum_words(&self) -> usize {
        4 * (CM_WORDS + DEN_WORDS)
    }

    fn add_slot(&mut self, dev: &Arc<Device>) -> Result<(), HipError> {
        let buf = |what: &str, n: usize| DeviceBuffer::new(dev, n, what);
        let (mut bands_ref, mut bands_dis) = (Vec::new(), Vec::new());
        for &(bw, bh) in &self.band {
            bands_ref.push(buf("ADM reference bands", 4 * bw * bh * 4)?);
            bands_dis.push(buf("ADM distorted bands", 4 * bw * bh * 4)?);
        }
        let n0 = self.band[0].0 * self.band[0].1;
        self.scratch.push(Scratch {
            bands_ref,
            bands_dis,
            work: buf("ADM decouple/CSF planes", 18 * n0 * 4)?,
        });
        Ok(())
    }

    fn slot_bytes(&self) -> usize {
        self.scratch.first().map_or(0, |s| {
            let bands: usize = s
                .bands_ref
                .iter()
                .chain(&s.bands_dis)
                .map(DeviceBuffer::bytes)
                .sum();
            bands + s.work.bytes()
        })
    }

    fn table_bytes(&self) -> usize {
        self.dwt_tables.bytes()
    }

    /// The reference's bands at every scale, then its denominator sums.
    fn reference_buffers(&self) -> Vec<usize> {
        let bands = self.band.iter().map(|&(bw, bh)| 4 * bw * bh * 4);
        bands.chain([4 * DEN_WORDS * 8]).collect()
    }

    fn launch_reference(&self, w: &ReferenceWork<'_>) -> Result<bool, HipError> {
        let k = &w.kernels.get::<Kernels>();
        let den = &w.out[SHARED_DEN];
        w.stream.memset(den, 0, den.bytes(), 0)?;
        for scale in 0..4 {
            let src = match scale {
                0 => &w.reference[0],
                _ => &w.out[scale - 1],
            };
            let pictures = ZPair::one(src, &w.out[scale]);
            self.dwt(k, w.stream, w.geo, scale, pictures)?;
            self.launch_csf_den(k, w.stream, &w.out[scale], scale, den, 0)?;
        }
        Ok(true)
    }

    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        for scale in 0..4 {
            self.launch_dwt(f, scale)?;
            let rf: [i64; 3] = if scale == 0 {
                rfactors_scale0_fixed(&self.p).map(i64::from)
            } else {
                rfactors_s123_fixed(scale, &self.p).map(i64::from)
            };
            self.launch_decouple(f, scale, rf)?;
            self.launch_masking(f, scale, rf)?;
        }
        self.launch_denominators(f)?;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let p = &self.p;
        let (mut num, mut den, mut aim) = ([0f32; 4], [0f32; 4], [0f32; 4]);
        for s in 0..4 {
            let (bw, bh) = self.band[s];
            let three = |at: usize| [0, 1, 2].map(|t| r.sums[at + t]);
            let (cm, d) = (CM_WORDS * s, 4 * CM_WORDS + DEN_WORDS * s);
            num[s] = cm_finish(s, three(cm).map(|v| v as i64), bw, bh, p.noise_weight);
            aim[s] = cm_finish(s, three(cm + 3).map(|v| v as i64), bw, bh, 0.0);
            den[s] = csf_den_finish(s, three(d), bw, bh, p);
        }
        AdmScores::finish(num, den, aim, r.geo.w, r.geo.h, p).write(out, self.slots);
        Ok(())
    }
}
