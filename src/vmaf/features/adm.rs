//! Integer ADM (detail loss + additive impairment), mirroring libvmaf
//! `feature/integer_adm.c` (scalar C path; the AVX2 DWT differs on some
//! narrow frames and is not the reference).
//!
//! Per scale: a db2 DWT of reference and distorted (bands a, v, h, d), the
//! decoupling of the distorted detail bands into restored (r) and additive (a)
//! parts, the reference-band denominator, a contrast sensitivity weighting
//! (CSF) and contrast masking (CM). Scale 0 is 16-bit fixed point, scales
//! 1..3 32-bit; the masking and denominator sums are integers finished by
//! `powf(·, 1/3)` in float, exactly as libvmaf.

use super::adm_tables::{
    DWT_HI, DWT_LO, DWT_LO_SUM, Region, ceil_log2_minus, div_lookup, dwt_indices, half_of_pow2,
    pow2_unsigned, rfactors, rfactors_s123_fixed, rfactors_scale0_fixed,
};
use super::grow;

/// ADM options (`integer_adm.c:options`) that change numbers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdmParams {
    pub enhn_gain_limit: f64,
    pub norm_view_dist: f64,
    pub ref_display_height: i32,
    pub noise_weight: f64,
    pub dlm_weight: f64,
    pub min_val: f64,
}

impl Default for AdmParams {
    fn default() -> Self {
        Self {
            enhn_gain_limit: super::adm_tables::DEFAULT_EGL,
            norm_view_dist: super::adm_tables::DEFAULT_NORM_VIEW_DIST,
            ref_display_height: super::adm_tables::DEFAULT_REF_DISPLAY_HEIGHT,
            noise_weight: super::adm_tables::DEFAULT_NOISE_WEIGHT,
            dlm_weight: super::adm_tables::DEFAULT_DLM_WEIGHT,
            min_val: 0.0,
        }
    }
}

/// What one frame yields.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AdmScores {
    pub adm2: f64,
    /// `None` where libvmaf leaves it uninitialised (denominator 0).
    pub aim: Option<f64>,
    pub adm3: Option<f64>,
    /// Per scale: (numerator, denominator) as floats.
    pub num: [f32; 4],
    pub den: [f32; 4],
}

impl AdmScores {
    /// `integer_adm_scaleN`: a double division of the two floats.
    pub fn scale(&self, s: usize) -> f64 {
        f64::from(self.num[s]) / f64::from(self.den[s])
    }
}

/// The four DWT bands of one image at one scale; `w`x`h` samples each.
#[derive(Default, Clone)]
pub struct Bands {
    pub a: Vec<i32>,
    pub v: Vec<i32>,
    pub h: Vec<i32>,
    pub d: Vec<i32>,
    pub w: usize,
    pub hgt: usize,
}

impl Bands {
    /// Room for `w`x`h` samples. Buffers only grow (a smaller scale uses
    /// the front part), so no frame after the first clears or allocates.
    fn resize(&mut self, w: usize, h: usize) {
        for b in [&mut self.a, &mut self.v, &mut self.h, &mut self.d] {
            grow(b, w * h);
        }
        self.w = w;
        self.hgt = h;
    }
    /// Detail bands in libvmaf's θ order: h, v, d.
    pub fn hvd(&self) -> [&[i32]; 3] {
        [&self.h, &self.v, &self.d]
    }
}

/// Three detail bands (h, v, d) sharing one size.
#[derive(Default, Clone)]
pub struct Triple(pub [Vec<i32>; 3]);

impl Triple {
    /// Room for `n` samples per band; grows only, as [`Bands::resize`].
    fn resize(&mut self, n: usize) {
        for b in &mut self.0 {
            grow(b, n);
        }
    }
    fn refs(&self) -> [&[i32]; 3] {
        [&self.0[0], &self.0[1], &self.0[2]]
    }
}

/// Scratch for one ADM extractor.
#[derive(Default)]
pub struct Adm {
    div: Vec<i32>,
    ref_b: Bands,
    dis_b: Bands,
    ref_prev_a: Vec<i32>,
    dis_prev_a: Vec<i32>,
    rst: Triple,
    add: Triple,
    csf_y: Triple,
    csf_flt: Triple,
    tmp_lo: Vec<i32>,
    tmp_hi: Vec<i32>,
    cm: CmScratch,
    decouple: DecoupleScratch,
}

impl Adm {
    pub fn new() -> Self {
        Self {
            div: div_lookup(),
            ..Default::default()
        }
    }

    /// `integer_compute_adm` for one frame of `w`x`h` luma.
    pub fn compute(
        &mut self,
        reference: &[u16],
        distorted: &[u16],
        w: usize,
        h: usize,
        bpc: u8,
        p: &AdmParams,
    ) -> AdmScores {
        let (mut cw, mut ch) = (w, h);
        let mut nums = [0f32; 4];
        let mut dens = [0f32; 4];
        let mut aims = [0f32; 4];
        for scale in 0..4 {
            let (bw, bh) = (cw.div_ceil(2), ch.div_ceil(2));
            if scale == 0 {
                dwt_scale0(
                    reference,
                    cw,
                    ch,
                    bpc,
                    &mut self.ref_b,
                    &mut self.tmp_lo,
                    &mut self.tmp_hi,
                );
                dwt_scale0(
                    distorted,
                    cw,
                    ch,
                    bpc,
                    &mut self.dis_b,
                    &mut self.tmp_lo,
                    &mut self.tmp_hi,
                );
            } else {
                std::mem::swap(&mut self.ref_prev_a, &mut self.ref_b.a);
                std::mem::swap(&mut self.dis_prev_a, &mut self.dis_b.a);
                dwt_s123(
                    &self.ref_prev_a,
                    cw,
                    ch,
                    scale,
                    &mut self.ref_b,
                    &mut self.tmp_lo,
                    &mut self.tmp_hi,
                );
                dwt_s123(
                    &self.dis_prev_a,
                    cw,
                    ch,
                    scale,
                    &mut self.dis_b,
                    &mut self.tmp_lo,
                    &mut self.tmp_hi,
                );
            }
            cw = bw;
            ch = bh;
            let n = bw * bh;
            for t in [
                &mut self.rst,
                &mut self.add,
                &mut self.csf_y,
                &mut self.csf_flt,
            ] {
                t.resize(n);
            }
            decouple(
                scale,
                &self.ref_b,
                &self.dis_b,
                p.enhn_gain_limit,
                &self.div,
                &mut self.rst,
                &mut self.add,
                &mut self.decouple,
            );
            let den_scale = csf_den(scale, &self.ref_b, p);
            // Detail loss: CSF of the additive part, masking of the restored part.
            csf(
                scale,
                &self.add.refs(),
                bw,
                bh,
                p,
                &mut self.csf_y,
                &mut self.csf_flt,
            );
            let num_scale = cm(
                scale,
                &self.rst.refs(),
                &self.csf_y.refs(),
                &self.csf_flt.refs(),
                bw,
                bh,
                p,
                p.noise_weight,
                &mut self.cm,
            );
            // AIM: CSF of the restored part, masking of the additive part, no noise floor.
            csf(
                scale,
                &self.rst.refs(),
                bw,
                bh,
                p,
                &mut self.csf_y,
                &mut self.csf_flt,
            );
            let aim_scale = cm(
                scale,
                &self.add.refs(),
                &self.csf_y.refs(),
                &self.csf_flt.refs(),
                bw,
                bh,
                p,
                0.0,
                &mut self.cm,
            );
            nums[scale] = num_scale;
            dens[scale] = den_scale;
            aims[scale] = aim_scale;
        }
        AdmScores::finish(nums, dens, aims, w, h, p)
    }
}

impl AdmScores {
    /// `integer_compute_adm`'s end: the per-scale floats summed in double,
    /// the tiny-value floor, and adm2 / aim / adm3.
    pub fn finish(
        num: [f32; 4],
        den: [f32; 4],
        aim: [f32; 4],
        w: usize,
        h: usize,
        p: &AdmParams,
    ) -> AdmScores {
        let mut out = AdmScores {
            num,
            den,
            ..Default::default()
        };
        let mut num_sum = 0f64;
        let mut den_sum = 0f64;
        let mut aim_sum = 0f64;
        for scale in 0..4 {
            num_sum += f64::from(num[scale]);
            den_sum += f64::from(den[scale]);
            aim_sum += f64::from(aim[scale]);
        }
        let limit = 1e-10 * (w * h) as f64 / (1920.0 * 1080.0);
        if num_sum < limit {
            num_sum = 0.0;
        }
        if den_sum < limit {
            den_sum = 0.0;
        }
        if den_sum == 0.0 {
            out.adm2 = 1.0;
        } else {
            let aim = aim_sum / den_sum;
            out.adm2 = num_sum / den_sum;
            out.aim = Some(aim);
            out.adm3 =
                Some((out.adm2 * p.dlm_weight + (1.0 - aim) * (1.0 - p.dlm_weight)).max(p.min_val));
        }
        out
    }
}

/// `adm_dwt2_8` / `adm_dwt2_16`: scale-0 DWT of pixels; everything narrowed to int16.
pub fn dwt_scale0(
    src: &[u16],
    w: usize,
    h: usize,
    bpc: u8,
    out: &mut Bands,
    lo: &mut Vec<i32>,
    hi: &mut Vec<i32>,
) {
    let shift = if bpc == 8 { 8 } else { u32::from(bpc) };
    let round = 1i32 << (shift - 1);
    let centre = DWT_LO_SUM.wrapping_mul(round);
    let (bw, bh) = (w.div_ceil(2), h.div_ceil(2));
    out.resize(bw, bh);
    grow(lo, w);
    grow(hi, w);
    let iy = dwt_indices(h);
    let ix = dwt_indices(w);
    for (i, idx) in iy.iter().enumerate() {
        let rows = idx.map(|r| &src[r as usize * w..r as usize * w + w]);
        let (lo, hi) = (&mut lo[..w], &mut hi[..w]);
        crate::isa::dispatch(
            #[inline(always)]
            || {
                for j in 0..w {
                    let s = [rows[0][j], rows[1][j], rows[2][j], rows[3][j]].map(i32::from);
                    let mut l = 0i32;
                    let mut hh = 0i32;
                    for k in 0..4 {
                        l = l.wrapping_add(DWT_LO[k] * s[k]);
                        hh = hh.wrapping_add(DWT_HI[k] * s[k]);
                    }
                    l = l.wrapping_sub(centre);
                    lo[j] = i32::from((l.wrapping_add(round) >> shift) as i16);
                    hi[j] = i32::from((hh.wrapping_add(round) >> shift) as i16);
                }
            },
        );
        // The inputs are int16, so |Σ f·x| ≤ 54822·2^15 < 2^31: the int64
        // sums of libvmaf fit i32 exactly here, which vectorises better.
        let fin = |acc: i32| i32::from((acc.wrapping_add(32768) >> 16) as i16);
        horizontal(lo, hi, &ix, out.row_mut(i), |f, s| dot4_i32(f, s), fin);
    }
}

/// `adm_dwt2_s123_combined` for one image: int64 sums narrowed to int32.
pub fn dwt_s123(
    src: &[i32],
    w: usize,
    h: usize,
    scale: usize,
    out: &mut Bands,
    lo: &mut Vec<i32>,
    hi: &mut Vec<i32>,
) {
    let (v_add, v_shift): (i64, u32) = match scale {
        1 => (0, 0),
        _ => (32768, 16),
    };
    let (h_add, h_shift): (i64, u32) = match scale {
        1 => (16384, 15),
        2 => (32768, 16),
        _ => (16384, 15),
    };
    let (bw, bh) = (w.div_ceil(2), h.div_ceil(2));
    out.resize(bw, bh);
    grow(lo, w);
    grow(hi, w);
    let iy = dwt_indices(h);
    let ix = dwt_indices(w);
    for (i, idx) in iy.iter().enumerate() {
        let rows = idx.map(|r| &src[r as usize * w..r as usize * w + w]);
        let (lo, hi) = (&mut lo[..w], &mut hi[..w]);
        crate::isa::dispatch(
            #[inline(always)]
            || {
                for j in 0..w {
                    let s = [rows[0][j], rows[1][j], rows[2][j], rows[3][j]].map(i64::from);
                    let mut l = 0i64;
                    let mut hh = 0i64;
                    for k in 0..4 {
                        l += i64::from(DWT_LO[k]) * s[k];
                        hh += i64::from(DWT_HI[k]) * s[k];
                    }
                    lo[j] = ((l + v_add) >> v_shift) as i32;
                    hi[j] = ((hh + v_add) >> v_shift) as i32;
                }
            },
        );
        let fin = |acc: i64| ((acc + h_add) >> h_shift) as i32;
        horizontal(lo, hi, &ix, out.row_mut(i), |f, s| dot4_i64(f, s), fin);
    }
}

/// One DWT tap set applied to four samples, in i32 (scale 0, see `dwt_scale0`).
#[inline(always)]
fn dot4_i32(f: &[i32; 4], s: [i32; 4]) -> i32 {
    (0..4).fold(0i32, |acc, k| acc.wrapping_add(f[k].wrapping_mul(s[k])))
}

/// One DWT tap set applied to four samples, in i64 (scales 1..3).
#[inline(always)]
fn dot4_i64(f: &[i32; 4], s: [i32; 4]) -> i64 {
    (0..4).map(|k| i64::from(f[k]) * i64::from(s[k])).sum()
}

/// The four bands' rows of one output row.
pub struct BandRows<'a> {
    a: &'a mut [i32],
    v: &'a mut [i32],
    h: &'a mut [i32],
    d: &'a mut [i32],
}

impl Bands {
    fn row_mut(&mut self, i: usize) -> BandRows<'_> {
        let at = i * self.w..(i + 1) * self.w;
        BandRows {
            a: &mut self.a[at.clone()],
            v: &mut self.v[at.clone()],
            h: &mut self.h[at.clone()],
            d: &mut self.d[at],
        }
    }
}

/// Horizontal DWT pass of one row pair (lo, hi) into the four bands. The
/// interior outputs read samples 2j−1 ..= 2j+2 directly (vectorised); the
/// first and the last two follow `ix`, the mirrored index table.
#[inline(always)]
fn horizontal<A: Copy>(
    lo: &[i32],
    hi: &[i32],
    ix: &[[i32; 4]],
    out: BandRows<'_>,
    dot: impl Fn(&[i32; 4], [i32; 4]) -> A + Copy,
    fin: impl Fn(A) -> i32 + Copy,
) {
    let bw = ix.len();
    let mid = bw.saturating_sub(2).max(1);
    let BandRows { a, v, h, d } = out;
    let one = |j: usize,
               sl: [i32; 4],
               sh: [i32; 4],
               a: &mut [i32],
               v: &mut [i32],
               h: &mut [i32],
               d: &mut [i32]| {
        a[j] = fin(dot(&DWT_LO, sl));
        v[j] = fin(dot(&DWT_HI, sl));
        h[j] = fin(dot(&DWT_LO, sh));
        d[j] = fin(dot(&DWT_HI, sh));
    };
    crate::isa::dispatch(
        #[inline(always)]
        || {
            for j in 1..mid {
                let (l, hh) = (&lo[2 * j - 1..2 * j + 3], &hi[2 * j - 1..2 * j + 3]);
                let sl = [l[0], l[1], l[2], l[3]];
                let sh = [hh[0], hh[1], hh[2], hh[3]];
                one(j, sl, sh, a, v, h, d);
            }
        },
    );
    for j in (0..1).chain(mid..bw) {
        let idx = ix[j];
        one(
            j,
            idx.map(|c| lo[c as usize]),
            idx.map(|c| hi[c as usize]),
            a,
            v,
            h,
            d,
        );
    }
}

/// (float)cos²(1°), `adm_decouple`.
pub fn cos_1deg_sq() -> f32 {
    let c = (1.0f64 * std::f64::consts::PI / 180.0).cos();
    (c * c) as f32
}

/// `adm_decouple` (scale 0, int16) and `adm_decouple_s123` (int32), over E.
pub fn decouple(
    scale: usize,
    rb: &Bands,
    db: &Bands,
    egl: f64,
    div: &[i32],
    rst: &mut Triple,
    add: &mut Triple,
    scratch: &mut DecoupleScratch,
) {
    crate::isa::dispatch(
        #[inline(always)]
        || {
            let (w, h) = (rb.w, rb.hgt);
            let e = Region::extended(w, h);
            let cos_sq = f64::from(cos_1deg_sq());
            let o_b = rb.hvd();
            let t_b = db.hvd();
            if scale == 0 {
                let cols = e.left as usize..e.right as usize;
                let n = cols.len();
                grow(&mut scratch.angle, n);
                grow(&mut scratch.div_o, n);
                for i in e.top as usize..e.bottom as usize {
                    let at = i * w + cols.start..i * w + cols.end;
                    let o = o_b.map(|b| &b[at.clone()]);
                    let t = t_b.map(|b| &b[at.clone()]);
                    let [r0, r1, r2] = &mut rst.0;
                    let [a0, a1, a2] = &mut add.0;
                    decouple_row_s0(
                        o,
                        t,
                        div,
                        egl,
                        cos_sq,
                        [
                            &mut r0[at.clone()],
                            &mut r1[at.clone()],
                            &mut r2[at.clone()],
                        ],
                        [
                            &mut a0[at.clone()],
                            &mut a1[at.clone()],
                            &mut a2[at.clone()],
                        ],
                        &mut scratch.angle[..n],
                        &mut scratch.div_o[..n],
                    );
                }
                return;
            }
            for i in e.top..e.bottom {
                for j in e.left..e.right {
                    let at = i as usize * w + j as usize;
                    let (oh, ov) = (i64::from(o_b[0][at]), i64::from(o_b[1][at]));
                    let (th, tv) = (i64::from(t_b[0][at]), i64::from(t_b[1][at]));
                    let ot_dp = oh * th + ov * tv;
                    let o_mag_sq = oh * oh + ov * ov;
                    let t_mag_sq = th * th + tv * tv;
                    let dp = f64::from(ot_dp as f32) / 4096.0;
                    let angle_flag = dp >= 0.0
                        && dp * dp
                            >= cos_sq
                                * (f64::from(o_mag_sq as f32) / 4096.0)
                                * (f64::from(t_mag_sq as f32) / 4096.0);
                    for theta in 0..3 {
                        let o = o_b[theta][at];
                        let t = t_b[theta][at];
                        let k: i64 = if o == 0 {
                            32768
                        } else if scale == 0 {
                            // int32_t = (int64 * int16 + 16384) >> 15
                            (((i64::from(div[(o + 32768) as usize]) * i64::from(t)) + 16384) >> 15)
                                as i32 as i64
                        } else {
                            let abs_o = o.unsigned_abs();
                            let sign: i64 = if o < 0 { -1 } else { 1 };
                            let (msb, sh) = if abs_o < 32768 {
                                (abs_o, 0)
                            } else {
                                best15_from32(abs_o)
                            };
                            (i64::from(div[msb as usize + 32768]) * i64::from(t) * sign
                                + (1i64 << (14 + sh)))
                                >> (15 + sh)
                        };
                        let k = k.clamp(0, 32768);
                        let mut r: i64 = (k * i64::from(o) + 16384) >> 15;
                        if scale == 0 {
                            r = i64::from(r as i16);
                        } else {
                            r = i64::from(r as i32);
                        }
                        let rst_f = (k as f32 / 32768.0) * (o as f32 / 64.0);
                        if angle_flag && rst_f > 0.0 {
                            let m = (r as f64 * egl).min_c(f64::from(t));
                            r = if scale == 0 {
                                i64::from(m as i16)
                            } else {
                                i64::from(m as i32)
                            };
                        } else if angle_flag && rst_f < 0.0 {
                            let m = (r as f64 * egl).max_c(f64::from(t));
                            r = if scale == 0 {
                                i64::from(m as i16)
                            } else {
                                i64::from(m as i32)
                            };
                        }
                        rst.0[theta][at] = r as i32;
                        let a = i64::from(t) - r;
                        add.0[theta][at] = if scale == 0 {
                            i32::from(a as i16)
                        } else {
                            a as i32
                        };
                    }
                }
            }
        },
    )
}

/// Row scratch of [`decouple`] at scale 0.
#[derive(Default)]
pub struct DecoupleScratch {
    angle: Vec<bool>,
    div_o: Vec<i32>,
}

/// `adm_decouple` (scale 0) over one row of E, in vectorisable passes: the
/// angle test, then per band a gather of the reciprocal table and the
/// restored / additive parts. Bands are int16 here, which the integer
/// shortcuts below rely on (each is exact for int16 inputs):
/// - the dot product and squared magnitudes are formed in double (each
///   product < 2^31, the sums < 2^32, so exact) and rounded once to float,
///   as libvmaf's int64 → float conversion rounds the exact value once;
/// - `(div·t + 2^14) >> 15` narrowed to int32 keeps bits 15..46 of the
///   int64 sum, which a logical shift gives as well as an arithmetic one;
/// - `k·o` ≤ 2^30 fits int32;
/// - the float `rst = (k/32768)·(o/64)` is positive exactly when k > 0 and
///   o > 0, negative when k > 0 and o < 0 (its smallest magnitude, 2^-21,
///   is far from underflow), so its sign is taken from the integers.
#[allow(clippy::too_many_arguments)]
fn decouple_row_s0(
    o: [&[i32]; 3],
    t: [&[i32]; 3],
    div: &[i32],
    egl: f64,
    cos_sq: f64,
    rst: [&mut [i32]; 3],
    add: [&mut [i32]; 3],
    angle: &mut [bool],
    div_o: &mut [i32],
) {
    let n = angle.len();
    let [oh, ov, _] = o.map(|b| &b[..n]);
    let [th, tv, _] = t.map(|b| &b[..n]);
    crate::isa::dispatch(
        #[inline(always)]
        || {
            for j in 0..n {
                let f = |x: i32| f64::from(x);
                let ot_dp = f(oh[j]) * f(th[j]) + f(ov[j]) * f(tv[j]);
                let o_mag_sq = f(oh[j]) * f(oh[j]) + f(ov[j]) * f(ov[j]);
                let t_mag_sq = f(th[j]) * f(th[j]) + f(tv[j]) * f(tv[j]);
                let dp = f64::from(ot_dp as f32) / 4096.0;
                angle[j] = dp >= 0.0
                    && dp * dp
                        >= cos_sq
                            * (f64::from(o_mag_sq as f32) / 4096.0)
                            * (f64::from(t_mag_sq as f32) / 4096.0);
            }
        },
    );
    for ((o, t), (rst, add)) in o.iter().zip(t).zip(rst.into_iter().zip(add)) {
        let (o, t, rst, add) = (&o[..n], &t[..n], &mut rst[..n], &mut add[..n]);
        for (d, &x) in div_o.iter_mut().zip(o) {
            *d = div[(x + 32768) as usize];
        }
        crate::isa::dispatch(
            #[inline(always)]
            || {
                for j in 0..n {
                    let (oj, tj) = (o[j], t[j]);
                    let q = i64::from(div_o[j]) * i64::from(tj) + 16384;
                    let k = if oj == 0 {
                        32768
                    } else {
                        ((q as u64) >> 15) as u32 as i32
                    };
                    let k = k.clamp(0, 32768);
                    let mut r = i32::from(((k * oj + 16384) >> 15) as i16);
                    if angle[j] && k > 0 && oj != 0 {
                        let scaled = f64::from(r) * egl;
                        let m = if oj > 0 {
                            scaled.min_c(f64::from(tj))
                        } else {
                            scaled.max_c(f64::from(tj))
                        };
                        r = i32::from(m as i16);
                    }
                    rst[j] = r;
                    add[j] = i32::from((tj - r) as i16);
                }
            },
        );
    }
}

/// C's `MIN`/`MAX` macros: `(x < y) ? x : y`, no NaN special cases.
trait CMinMax {
    fn min_c(self, o: Self) -> Self;
    fn max_c(self, o: Self) -> Self;
}
impl CMinMax for f64 {
    fn min_c(self, o: f64) -> f64 {
        if self < o { self } else { o }
    }
    fn max_c(self, o: f64) -> f64 {
        if self > o { self } else { o }
    }
}

/// `get_best15_from32`: the top 15 bits of `x`, rounded, and the shift used.
#[inline(always)]
fn best15_from32(x: u32) -> (u32, i64) {
    let k = 17 - x.leading_zeros() as i64;
    let m = (x + (1u32 << (k - 1))) >> k;
    (u32::from(m as u16), k)
}

/// `adm_csf_den_scale` / `adm_csf_den_s123`: Σ|ref band|³ over C, per band.
pub fn csf_den(scale: usize, rb: &Bands, p: &AdmParams) -> f32 {
    let sums = csf_den_sums(scale, &rb.hvd(), rb.w, rb.hgt);
    csf_den_finish(scale, sums, rb.w, rb.hgt, p)
}

/// Shifts of the denominator sums: (per-row shift, its rounding term, and
/// for scales 1..3 the square and cube shifts).
pub struct DenShifts {
    pub shift_acc: u32,
    pub add_acc: u64,
    pub shift_sq: u32,
    pub add_sq: u64,
    pub shift_cub: u32,
    pub add_cub: u64,
}

pub fn den_shifts(scale: usize, c: &Region) -> DenShifts {
    if scale == 0 {
        let shift = (f64::from(c.area()).log2() - 20.0).ceil() as i32;
        let shift = shift.max(0) as u32;
        DenShifts {
            shift_acc: shift,
            add_acc: if shift > 0 { 1 << (shift - 1) } else { 0 },
            shift_sq: 0,
            add_sq: 0,
            shift_cub: 0,
            add_cub: 0,
        }
    } else {
        let shift_sq = [31u32, 30, 31][scale - 1];
        let shift_cub = ceil_log2_minus((c.right - c.left) as usize, 0.0);
        let shift_acc = ceil_log2_minus((c.bottom - c.top) as usize, 0.0);
        DenShifts {
            shift_acc,
            add_acc: half_of_pow2(shift_acc) as u64,
            shift_sq,
            add_sq: 1u64 << shift_sq,
            shift_cub,
            add_cub: half_of_pow2(shift_cub) as u64,
        }
    }
}

/// The integer part of the denominator: per band (h, v, d), the per-row
/// rounded sums of |x|³ over C. The CPU twin of `adm_csf_den` in
/// `kernels/adm.hip`.
pub fn csf_den_sums(scale: usize, bands: &[&[i32]; 3], w: usize, h: usize) -> [u64; 3] {
    crate::isa::dispatch(
        #[inline(always)]
        || {
            let c = Region::core(w, h);
            let s = den_shifts(scale, &c);
            let mut out = [0u64; 3];
            for (theta, band) in bands.iter().enumerate() {
                let mut acc = 0u64;
                for i in c.top..c.bottom {
                    let row = &band[i as usize * w..];
                    let mut inner = 0u64;
                    if scale == 0 {
                        for j in c.left..c.right {
                            let x = u64::from(row[j as usize].unsigned_abs() as u16);
                            inner += x * x * x;
                        }
                    } else {
                        for j in c.left..c.right {
                            let x = u64::from(row[j as usize].unsigned_abs());
                            inner += ((((x * x) + s.add_sq) >> s.shift_sq) * x + s.add_cub)
                                >> s.shift_cub;
                        }
                    }
                    acc += (inner + s.add_acc) >> s.shift_acc;
                }
                out[theta] = acc;
            }
            out
        },
    )
}

/// The float part of the denominator from [`csf_den_sums`].
pub fn csf_den_finish(scale: usize, sums: [u64; 3], w: usize, h: usize, p: &AdmParams) -> f32 {
    let c = Region::core(w, h);
    let s = den_shifts(scale, &c);
    let rf = rfactors(scale, p.norm_view_dist, p.ref_display_height);
    let noise = (f64::from(c.area()) * p.noise_weight) as f32;
    let mut total = 0f32;
    for (theta, &acc) in sums.iter().enumerate() {
        let csf = if scale == 0 {
            let div = 2f64.powi(18 - s.shift_acc as i32);
            (acc as f64 / div) * f64::from(rf[theta]).powi(3)
        } else {
            let convert = [32i64, 27, 23][scale - 1];
            let div = pow2_unsigned(convert, i64::from(s.shift_acc) + i64::from(s.shift_cub));
            (acc as f64 / div) * f64::from(rf[theta]).powi(3)
        };
        let band_val = (csf as f32).powf(1.0 / 3.0) + noise.powf(1.0 / 3.0);
        total = if theta == 0 {
            band_val
        } else {
            total + band_val
        };
    }
    total
}

/// `adm_csf` / `i4_adm_csf` over E: `y` = CSF-weighted band, `flt` ≈ |y|/30.
pub fn csf(
    scale: usize,
    src: &[&[i32]; 3],
    w: usize,
    h: usize,
    p: &AdmParams,
    y: &mut Triple,
    flt: &mut Triple,
) {
    crate::isa::dispatch(
        #[inline(always)]
        || {
            let e = Region::extended(w, h);
            if scale == 0 {
                let rf = rfactors_scale0_fixed(p.norm_view_dist, p.ref_display_height);
                const SHIFT: [u32; 3] = [15, 15, 17];
                const ADD: [i32; 3] = [16384, 16384, 65535];
                for theta in 0..3 {
                    for i in e.top..e.bottom {
                        for j in e.left..e.right {
                            let at = i as usize * w + j as usize;
                            let v = rf[theta].wrapping_mul(src[theta][at]);
                            let yy = (v.wrapping_add(ADD[theta]) >> SHIFT[theta]) as i16;
                            y.0[theta][at] = i32::from(yy);
                            flt.0[theta][at] =
                                i32::from(((4369 * i32::from(yy).abs() + 2048) >> 12) as i16);
                        }
                    }
                }
            } else {
                let rf = rfactors_s123_fixed(scale, p.norm_view_dist, p.ref_display_height);
                for theta in 0..3 {
                    for i in e.top..e.bottom {
                        for j in e.left..e.right {
                            let at = i as usize * w + j as usize;
                            let yy = ((i64::from(rf[theta]) * i64::from(src[theta][at])
                                + (1 << 27))
                                >> 28) as i32;
                            y.0[theta][at] = yy;
                            // The +2^31 rounding lives in an int32 in libvmaf and is −2^31.
                            flt.0[theta][at] = ((143165577i64 * i64::from(yy.wrapping_abs())
                                - (1i64 << 31))
                                >> 32) as i32;
                        }
                    }
                }
            }
        },
    )
}

/// `adm_cm` / `i4_adm_cm`: contrast masking of `src` by the CSF output of the
/// other part (`centre` = its y, `nbr` = its |y|/30), summed over C.
#[allow(clippy::too_many_arguments)]
pub fn cm(
    scale: usize,
    src: &[&[i32]; 3],
    centre: &[&[i32]; 3],
    nbr: &[&[i32]; 3],
    w: usize,
    h: usize,
    p: &AdmParams,
    noise_weight: f64,
    scratch: &mut CmScratch,
) -> f32 {
    let sums = cm_sums(scale, src, centre, nbr, w, h, p, scratch);
    cm_finish(scale, sums, w, h, noise_weight)
}

/// Scratch of [`cm_sums`], sized once per band size.
#[derive(Default)]
pub struct CmScratch {
    /// Σθ of the three neighbour bands, over the whole band.
    nbr_sum: Vec<i32>,
    /// One row's three-row column sums, with one mirrored sample each side.
    col: Vec<i32>,
    /// One row's masking thresholds.
    thr: Vec<i32>,
}

/// Shifts of the masking sums: per band the cube shift, and the per-row shift.
pub struct CmShifts {
    pub shift_cub: [u32; 3],
    pub shift_inner: u32,
}

impl CmShifts {
    pub fn new(scale: usize, w: usize, h: usize) -> Self {
        let shift_cub = if scale == 0 {
            [
                ceil_log2_minus(w, 4.0),
                ceil_log2_minus(w, 4.0),
                ceil_log2_minus(w, 3.0),
            ]
        } else {
            [ceil_log2_minus(w, 0.0); 3]
        };
        CmShifts {
            shift_cub,
            shift_inner: ceil_log2_minus(h, 0.0),
        }
    }
}

/// The float part of the masking from [`cm_sums`]: per band a power-of-two
/// division, cube roots and the noise floor.
pub fn cm_finish(scale: usize, acc: [i64; 3], w: usize, h: usize, noise_weight: f64) -> f32 {
    let sh = CmShifts::new(scale, w, h);
    let noise = (f64::from(Region::core(w, h).area()) * noise_weight) as f32;
    let f: [f32; 3] = if scale == 0 {
        let k = [52i64, 52, 57];
        [0, 1, 2].map(|t| {
            (acc[t] as f64
                / pow2_unsigned(k[t], i64::from(sh.shift_cub[t]) + i64::from(sh.shift_inner)))
                as f32
        })
    } else {
        let k = [45i64, 39, 36][scale - 1];
        let fs = pow2_unsigned(k, i64::from(sh.shift_cub[0]) + i64::from(sh.shift_inner)) as f32;
        acc.map(|a| a as f32 / fs)
    };
    let nz = noise.powf(1.0 / 3.0);
    let b = f.map(|x| x.powf(1.0 / 3.0) + nz);
    (b[0] + b[1]) + b[2]
}

/// The integer part of the masking: per band, the per-row rounded sums over
/// C. The CPU twin of `adm_cm` in `kernels/adm.hip`.
///
/// libvmaf's threshold at a pixel is Σθ (the 8 neighbours of band θ's
/// |y|/30 + the centre term of band θ's y), in wrapping int32. Wrapping
/// addition is associative and commutative, so the same number is formed
/// here as Σθ over a 3×3 box minus the centre, from one band of Σθ: column
/// sums of three rows, then three columns. The neighbour mirror (−1 reads 1,
/// n reads n−1) is applied to those rows and columns.
#[allow(clippy::too_many_arguments)]
pub fn cm_sums(
    scale: usize,
    src: &[&[i32]; 3],
    centre: &[&[i32]; 3],
    nbr: &[&[i32]; 3],
    w: usize,
    h: usize,
    p: &AdmParams,
    scratch: &mut CmScratch,
) -> [i64; 3] {
    let c = Region::core(w, h);
    let rows = c.top.max(0) as usize..c.bottom.min(h as i32).max(0) as usize;
    let cols = c.left.max(0) as usize..c.right.min(w as i32).max(0) as usize;
    let my = |y: isize| -> usize {
        (if y < 0 {
            -y
        } else if y >= h as isize {
            h as isize - 1
        } else {
            y
        }) as usize
    };
    let sh = CmShifts::new(scale, w, h);
    let shift_inner = sh.shift_inner;
    let add_inner = half_of_pow2(shift_inner);
    let CmScratch { nbr_sum, col, thr } = scratch;
    grow(nbr_sum, w * h);
    grow(col, w + 2);
    grow(thr, w);
    let (nbr_sum, col, thr) = (&mut nbr_sum[..w * h], &mut col[..w + 2], &mut thr[..w]);
    crate::isa::dispatch(
        #[inline(always)]
        || {
            let [n0, n1, n2] = nbr.map(|b| &b[..w * h]);
            for (j, s) in nbr_sum.iter_mut().enumerate() {
                *s = n0[j].wrapping_add(n1[j]).wrapping_add(n2[j]);
            }
        },
    );
    let rf0 = rfactors_scale0_fixed(p.norm_view_dist, p.ref_display_height);
    let rf123 = if scale == 0 {
        [0; 3]
    } else {
        rfactors_s123_fixed(scale, p.norm_view_dist, p.ref_display_height)
    };
    let add_cub = sh.shift_cub.map(half_of_pow2);
    let mut acc = [0i64; 3];
    for i in rows {
        let at = i * w;
        let (up, mid, dn) = (my(i as isize - 1) * w, at, my(i as isize + 1) * w);
        let cr = centre.map(|b| &b[at..at + w]);
        crate::isa::dispatch(
            #[inline(always)]
            || {
                let (su, sm, sd) = (
                    &nbr_sum[up..][..w],
                    &nbr_sum[mid..][..w],
                    &nbr_sum[dn..][..w],
                );
                for j in 0..w {
                    col[j + 1] = su[j].wrapping_add(sm[j]).wrapping_add(sd[j]);
                }
                // Column −1 reads column 1, column w reads w−1.
                col[0] = col[2.min(w)];
                col[w + 1] = col[w];
                for j in 0..w {
                    let boxed = col[j].wrapping_add(col[j + 1]).wrapping_add(col[j + 2]);
                    let mut t = boxed.wrapping_sub(sm[j]);
                    for band in &cr {
                        let yc = band[j];
                        let centre_term = if scale == 0 {
                            i32::from(((8738 * yc.abs() + 2048) >> 12) as i16)
                        } else {
                            ((286331153i64 * i64::from(yc.wrapping_abs()) - (1i64 << 31)) >> 32)
                                as i32
                        };
                        t = t.wrapping_add(centre_term);
                    }
                    thr[j] = t;
                }
            },
        );
        let mut inner = [0i64; 3];
        for theta in 0..3 {
            let x_row = &src[theta][at + cols.start..at + cols.end];
            let t_row = &thr[cols.clone()];
            let (shift_cub, add_cub) = (sh.shift_cub[theta], add_cub[theta]);
            inner[theta] = crate::isa::dispatch(
                #[inline(always)]
                || {
                    let mut sum = 0i64;
                    if scale == 0 {
                        const SUB: [u32; 3] = [10, 10, 12];
                        const SQ_SHIFT: [u32; 3] = [29, 29, 30];
                        let (rf, sub, sq) = (rf0[theta], SUB[theta], SQ_SHIFT[theta]);
                        for (&s, &t) in x_row.iter().zip(t_row) {
                            let x = s.wrapping_mul(rf);
                            let u = x.wrapping_abs().wrapping_sub(t.wrapping_shl(sub)).max(0);
                            sum += cube_term(u, sq, add_cub, shift_cub);
                        }
                    } else {
                        let rf = i64::from(rf123[theta]);
                        for (&s, &t) in x_row.iter().zip(t_row) {
                            let x = ((i64::from(s) * rf + (1 << 27)) >> 28) as i32;
                            let u = x.wrapping_abs().wrapping_sub(t).max(0);
                            sum += cube_term(u, 30, add_cub, shift_cub);
                        }
                    }
                    sum
                },
            );
        }
        for theta in 0..3 {
            acc[theta] += (inner[theta] + add_inner) >> shift_inner;
        }
    }
    acc
}

/// `u³` in libvmaf's fixed point: `u²` rounded and shifted by `sq_shift` and
/// stored in an int32, times `u` in int64, rounded and shifted by `shift`.
/// `u` is non-negative, so `u²` is formed unsigned.
#[inline(always)]
fn cube_term(u: i32, sq_shift: u32, add: i64, shift: u32) -> i64 {
    let uu = u as u32 as u64;
    let u2 = ((uu * uu + (1u64 << (sq_shift - 1))) >> sq_shift) as i32;
    (i64::from(u2) * i64::from(u) + add) >> shift
}

#[cfg(test)]
mod tests {
    use super::*;

    fn textured(w: usize, h: usize, seed: u32) -> Vec<u16> {
        let mut s = seed;
        (0..w * h)
            .map(|i| {
                s = s.wrapping_mul(1664525).wrapping_add(1013904223);
                let base = ((i % w) * 3 + (i / w) * 2) % 200;
                (base as u32 + (s >> 28)) as u16
            })
            .collect()
    }

    #[test]
    fn identical_frames_score_one() {
        let (w, h) = (96, 64);
        let img = textured(w, h, 7);
        let s = Adm::new().compute(&img, &img, w, h, 8, &AdmParams::default());
        assert!((s.adm2 - 1.0).abs() < 1e-4, "{s:?}");
    }

    #[test]
    fn best15_rounds_top_bits() {
        assert_eq!(best15_from32(65535), (32768, 1));
        assert_eq!(best15_from32(1 << 20), (1 << 14, 6));
    }
}
