//! libvmaf's `float_adm` (`float_adm.c`, `adm.c`, `adm_tools.c` at
//! f85a8536): the detail loss and additive impairment measures of ADM, in
//! float.
//!
//! Per scale (0..3): a db2 DWT of both pictures (symmetric edges); the
//! distorted detail bands split into restored (the reference's, scaled by
//! the clipped ratio k, and up to the enhancement-gain limit where the
//! orientation differs by under 1°) and additive parts; both weighted by the
//! CSF of the scale; contrast masking subtracts a threshold from the 3×3
//! neighbourhood of the other part; the p-norms (p = 3) of the three bands
//! over the frame less a 10% border, plus a noise constant, give num (the
//! restored part masked by the additive one), den (the reference's CSF
//! bands) and AIM's numerator (the additive part masked by the restored
//! one). adm2 = Σnum/Σden, aim = ΣAIM/Σden (≤ 1), adm3 their blend.

use crate::extractors::common::adm_csf::float_csf_factors;
use crate::extractors::common::adm_scores::AdmScores;
use crate::extractors::common::float_picture::float_picture;
use crate::extractors::common::grow;
use crate::extractors::common::options::{OptSpec, Resolved};

/// `float_adm.c:options` (those that change numbers or names).
pub const OPTIONS: &[OptSpec] = &[
    OptSpec::num("adm_enhn_gain_limit", "egl", 100.0, 1.0, 100.0),
    OptSpec::num("adm_norm_view_dist", "nvd", 3.0, 0.75, 24.0),
    OptSpec::num("adm_noise_weight", "nw", 0.03125, 0.0, 1500.0),
    OptSpec::num("adm_csf_scale", "scf", 1.0, 0.0, 50.0),
    OptSpec::num("adm_csf_diag_scale", "scfd", 1.0, 0.0, 50.0),
    OptSpec::int("adm_ref_display_height", "rdf", 1080.0, 1.0, 4320.0),
    OptSpec::int("adm_csf_mode", "csf", 0.0, 0.0, 9.0),
    OptSpec::int("adm_bypass_cm", "bcm", 0.0, 0.0, 1.0),
    OptSpec::boolean("adm_adm3_apply_hm", "aah"),
    OptSpec::num("adm_p_norm", "apn", 3.0, 1.0, 20.0),
    OptSpec::num("adm_dlm_weight", "dlmw", 0.5, 0.0, 1.0),
    OptSpec::num("adm_min_val", "min", 0.0, 0.0, 1.0),
    OptSpec::num("adm_f1s0", "f1s0", -1.0, -1.0, 10.0),
    OptSpec::num("adm_f1s1", "f1s1", -1.0, -1.0, 10.0),
    OptSpec::num("adm_f1s2", "f1s2", -1.0, -1.0, 10.0),
    OptSpec::num("adm_f1s3", "f1s3", -1.0, -1.0, 10.0),
    OptSpec::num("adm_f2s0", "f2s0", -1.0, -1.0, 10.0),
    OptSpec::num("adm_f2s1", "f2s1", -1.0, -1.0, 10.0),
    OptSpec::num("adm_f2s2", "f2s2", -1.0, -1.0, 10.0),
    OptSpec::num("adm_f2s3", "f2s3", -1.0, -1.0, 10.0),
    OptSpec::int("adm_skip_aim_scale", "sasc", -1.0, 0.0, 3.0),
    OptSpec::boolean("adm_skip_scale0", "ssz"),
    OptSpec::boolean("debug", "debug").not_param(),
];

/// `ADM_BORDER_FACTOR`.
const BORDER: f64 = 0.1;
/// `FLOAT_ONE_BY_30`, `FLOAT_ONE_BY_15`.
const ONE_BY_30: f32 = 0.033_333_335;
const ONE_BY_15: f32 = 0.066_666_67;
/// `dwt2_db2_coeffs_lo_s` / `_hi_s`, libvmaf's literals as written there
/// (rounded to float either way).
#[allow(clippy::excessive_precision)]
const LO: [f32; 4] = [
    0.482962913144690,
    0.836516303737469,
    0.224143868041857,
    -0.129409522550921,
];
#[allow(clippy::excessive_precision)]
const HI: [f32; 4] = [
    -0.129409522550921,
    -0.224143868041857,
    0.836516303737469,
    -0.482962913144690,
];

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloatAdmParams {
    pub enhn_gain_limit: f64,
    pub norm_view_dist: f64,
    pub ref_display_height: i32,
    pub noise_weight: f64,
    pub csf_scale: f64,
    pub csf_diag_scale: f64,
    pub csf_mode: i32,
    pub bypass_cm: bool,
    pub adm3_apply_hm: bool,
    pub p_norm: f64,
    pub dlm_weight: f64,
    pub min_val: f64,
    /// Per scale: the h/v (f1) and d (f2) CSF factors given instead (< 0: computed).
    pub f1: [f64; 4],
    pub f2: [f64; 4],
    /// The scale AIM leaves out (−1: none).
    pub skip_aim_scale: i32,
    pub skip_scale0: bool,
}

impl Default for FloatAdmParams {
    fn default() -> Self {
        Self {
            enhn_gain_limit: 100.0,
            norm_view_dist: 3.0,
            ref_display_height: 1080,
            noise_weight: 0.03125,
            csf_scale: 1.0,
            csf_diag_scale: 1.0,
            csf_mode: 0,
            bypass_cm: false,
            adm3_apply_hm: false,
            p_norm: 3.0,
            dlm_weight: 0.5,
            min_val: 0.0,
            f1: [-1.0; 4],
            f2: [-1.0; 4],
            skip_aim_scale: -1,
            skip_scale0: false,
        }
    }
}

impl FloatAdmParams {
    pub fn from_options(o: &Resolved) -> Self {
        let n = |k: &str| o.num(OPTIONS, k);
        let four = |p: &str| std::array::from_fn(|s| n(&format!("{p}{s}")));
        Self {
            enhn_gain_limit: n("adm_enhn_gain_limit"),
            norm_view_dist: n("adm_norm_view_dist"),
            ref_display_height: n("adm_ref_display_height") as i32,
            noise_weight: n("adm_noise_weight"),
            csf_scale: n("adm_csf_scale"),
            csf_diag_scale: n("adm_csf_diag_scale"),
            csf_mode: n("adm_csf_mode") as i32,
            bypass_cm: n("adm_bypass_cm") != 0.0,
            adm3_apply_hm: o.flag(OPTIONS, "adm_adm3_apply_hm"),
            p_norm: n("adm_p_norm"),
            dlm_weight: n("adm_dlm_weight"),
            min_val: n("adm_min_val"),
            f1: four("adm_f1s"),
            f2: four("adm_f2s"),
            skip_aim_scale: n("adm_skip_aim_scale") as i32,
            skip_scale0: o.flag(OPTIONS, "adm_skip_scale0"),
        }
    }

    /// The CSF weights of the h, v and d bands of one scale.
    pub fn rfactors(&self, scale: usize) -> [f32; 3] {
        let (mut f1, mut f2) = float_csf_factors(
            scale,
            self.norm_view_dist,
            self.ref_display_height,
            self.csf_mode,
            self.csf_scale,
            self.csf_diag_scale,
        );
        if self.f1[scale] >= 0.0 {
            f1 = self.f1[scale] as f32;
        }
        if self.f2[scale] >= 0.0 {
            f2 = self.f2[scale] as f32;
        }
        [f1, f1, f2]
    }

    /// `x^p` of a non-negative float (`x·x·x` at p = 3).
    #[inline]
    fn pow(&self, x: f32) -> f32 {
        if self.p_norm == 3.0 {
            x * x * x
        } else {
            x.powf(self.p_norm as f32)
        }
    }

    /// `powf(sum, 1.0f / p)` plus `get_noise_constant` of a `w`×`h` region.
    pub fn norm(&self, sum: f32, w: i32, h: i32, weight: f64) -> f32 {
        let inv = (1.0 / self.p_norm) as f32;
        sum.powf(inv) + ((f64::from(w * h) * weight) as f32).powf(inv)
    }
}

/// Detail bands h, v, d of one picture at one scale.
type Hvd = [Vec<f32>; 3];

/// The four DWT bands of one picture at one scale.
#[derive(Default)]
struct Bands {
    a: Vec<f32>,
    hvd: Hvd,
}

/// Scratch for one worker.
#[derive(Default)]
pub struct FloatAdm {
    r_bands: Bands,
    d_bands: Bands,
    restored: Hvd,
    additive: Hvd,
    csf: Hvd,
    masks: Hvd,
}

/// Half-open sample ranges of one scale's bands.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Region {
    pub top: usize,
    pub bottom: usize,
    pub left: usize,
    pub right: usize,
}

impl Region {
    /// The frame less `BORDER` on every side (`int left = w * 0.1 - 0.5`).
    pub fn inner(w: usize, h: usize) -> Self {
        let l = (w as f64 * BORDER - 0.5) as i32;
        let t = (h as f64 * BORDER - 0.5) as i32;
        Region {
            top: t.max(0) as usize,
            bottom: (h as i32 - t) as usize,
            left: l.max(0) as usize,
            right: (w as i32 - l) as usize,
        }
    }

    /// The inner region grown by one sample for the masking filter's taps.
    pub fn with_taps(w: usize, h: usize) -> Self {
        let l = (w as f64 * BORDER - 0.5 - 1.0) as i32;
        let t = (h as f64 * BORDER - 0.5 - 1.0) as i32;
        Region {
            top: t.max(0) as usize,
            bottom: ((h as i32 - t + 2) as usize).min(h),
            left: l.max(0) as usize,
            right: ((w as i32 - l + 2) as usize).min(w),
        }
    }

    pub fn width(&self) -> i32 {
        self.right as i32 - self.left as i32
    }

    pub fn height(&self) -> i32 {
        self.bottom as i32 - self.top as i32
    }
}

impl FloatAdm {
    /// adm2, aim, adm3 and per-scale (num, den) of two luma planes.
    pub fn compute(
        &mut self,
        reference: &[u16],
        distorted: &[u16],
        (w, h, bpc): (usize, usize, u8),
        p: &FloatAdmParams,
    ) -> AdmScores {
        let (mut r, mut d) = (
            float_picture(reference, bpc, -128),
            float_picture(distorted, bpc, -128),
        );
        let (mut w, mut h, orig) = (w, h, (w, h));
        let mut out = AdmScores::default();
        let mut aim_num = [0f32; 4];
        let mut skip_aim = [false; 4];
        for scale in 0..4 {
            let detail = !(scale == 0 && p.skip_scale0);
            dwt2(&r, w, h, &mut self.r_bands, detail);
            dwt2(&d, w, h, &mut self.d_bands, detail);
            (w, h) = (w.div_ceil(2), h.div_ceil(2));
            if detail {
                let (num, den, aim) = self.scale_sums(scale, w, h, p);
                (out.num[scale], out.den[scale], aim_num[scale]) = (num, den, aim);
            } else {
                out.den[scale] = 1e-10;
            }
            skip_aim[scale] = p.skip_aim_scale == scale as i32;
            std::mem::swap(&mut r, &mut self.r_bands.a);
            std::mem::swap(&mut d, &mut self.d_bands.a);
        }
        finish(&mut out, aim_num, skip_aim, orig, p);
        out
    }

    /// num, den and AIM's numerator of one scale (`w`×`h` bands).
    fn scale_sums(
        &mut self,
        scale: usize,
        w: usize,
        h: usize,
        p: &FloatAdmParams,
    ) -> (f32, f32, f32) {
        let taps = Region::with_taps(w, h);
        let inner = Region::inner(w, h);
        for b in [
            &mut self.restored,
            &mut self.additive,
            &mut self.csf,
            &mut self.masks,
        ] {
            for v in b.iter_mut() {
                grow(v, w * h);
            }
        }
        decouple(
            &self.r_bands.hvd,
            &self.d_bands.hvd,
            w,
            taps,
            p.enhn_gain_limit,
            (&mut self.restored, &mut self.additive),
        );
        let rf = p.rfactors(scale);
        let den = csf_den(&self.r_bands.hvd, w, inner, rf, p);
        csf(
            &self.additive,
            w,
            taps,
            rf,
            (&mut self.csf, &mut self.masks),
        );
        let num = masked_sum(
            &self.restored,
            (&self.csf, &self.masks),
            (w, h),
            inner,
            rf,
            p,
            p.noise_weight,
        );
        csf(
            &self.restored,
            w,
            taps,
            rf,
            (&mut self.csf, &mut self.masks),
        );
        let aim = masked_sum(
            &self.additive,
            (&self.csf, &self.masks),
            (w, h),
            inner,
            rf,
            p,
            0.0,
        );
        (num, den, aim)
    }
}

/// The frame's scores from the per-scale sums (`compute_adm`, `float_adm.c`).
pub fn finish(
    out: &mut AdmScores,
    aim_num: [f32; 4],
    skip_aim: [bool; 4],
    (w, h): (usize, usize),
    p: &FloatAdmParams,
) {
    let limit = 1e-10 * (w * h) as f64 / (1920.0 * 1080.0);
    let (mut num, mut den, mut anum, mut aden) = (0f64, 0f64, 0f64, 0f64);
    for s in 0..4 {
        num += f64::from(out.num[s]);
        den += f64::from(out.den[s]);
        if !skip_aim[s] {
            aden += f64::from(out.den[s]);
            anum += f64::from(aim_num[s]);
        }
    }
    if num < limit {
        num = 0.0;
    }
    if den < limit {
        den = 0.0;
    }
    if den == 0.0 {
        // libvmaf leaves aim (and so adm3) uninitialised here.
        out.adm2 = 1.0;
        return;
    }
    let aim = (anum / aden).min(1.0);
    let adm2 = num / den;
    let adm3 = if p.adm3_apply_hm {
        2.0 * adm2 * aim / (adm2 + aim)
    } else {
        adm2 * p.dlm_weight + (1.0 - aim) * (1.0 - p.dlm_weight)
    };
    out.adm2 = adm2;
    out.aim = Some(aim);
    out.adm3 = Some(if adm3 > p.min_val { adm3 } else { p.min_val });
}

/// `dwt2_src_indices_filt_s`: the four source rows (or columns) of output
/// `i`, reflected with the edge repeated.
fn taps_of(i: usize, n: usize) -> [usize; 4] {
    let n = n as isize;
    let fold = |k: isize| if k >= n { 2 * n - k - 1 } else { k };
    let i = i as isize;
    let first = if 2 * i - 1 < 0 {
        1 - 2 * i
    } else {
        fold(2 * i - 1)
    };
    [first, fold(2 * i), fold(2 * i + 1), fold(2 * i + 2)].map(|k| k as usize)
}

/// `Σ c[k]·s[k]` in float, from zero, in tap order.
#[inline]
fn dot4(c: &[f32; 4], s: [f32; 4]) -> f32 {
    let mut acc = 0f32;
    for k in 0..4 {
        acc += c[k] * s[k];
    }
    acc
}

/// `adm_dwt2_s` (or `adm_dwt2_lo_s` without `detail`): the bands of a
/// `w`×`h` picture, ⌈w/2⌉×⌈h/2⌉ each.
fn dwt2(src: &[f32], w: usize, h: usize, out: &mut Bands, detail: bool) {
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    for b in std::iter::once(&mut out.a).chain(out.hvd.iter_mut()) {
        grow(b, cw * ch);
    }
    let cols: Vec<[usize; 4]> = (0..cw).map(|j| taps_of(j, w)).collect();
    let (mut lo, mut hi) = (vec![0f32; w], vec![0f32; w]);
    for i in 0..ch {
        let rows = taps_of(i, h).map(|r| &src[r * w..(r + 1) * w]);
        for j in 0..w {
            let s = rows.map(|r| r[j]);
            lo[j] = dot4(&LO, s);
            hi[j] = dot4(&HI, s);
        }
        for (j, c) in cols.iter().enumerate() {
            let sl = c.map(|k| lo[k]);
            out.a[i * cw + j] = dot4(&LO, sl);
            if detail {
                let sh = c.map(|k| hi[k]);
                out.hvd[1][i * cw + j] = dot4(&HI, sl);
                out.hvd[0][i * cw + j] = dot4(&LO, sh);
                out.hvd[2][i * cw + j] = dot4(&HI, sh);
            }
        }
    }
}

/// cos²(1°) as libvmaf rounds it (`ADM_OPT_AVOID_ATAN`): the angle test.
pub fn cos_1deg_sq() -> f32 {
    let c = (std::f64::consts::PI / 180.0).cos();
    (c * c) as f32
}

/// `adm_decouple_s` over `region`: the restored (`r`) and additive (`a`)
/// parts of the distorted detail bands.
fn decouple(o: &Hvd, t: &Hvd, w: usize, region: Region, egl: f64, (r, a): (&mut Hvd, &mut Hvd)) {
    let cos_1deg_sq = cos_1deg_sq();
    const EPS: f32 = 1e-30;
    for i in region.top..region.bottom {
        for k in i * w + region.left..i * w + region.right {
            let (oh, ov, od) = (o[0][k], o[1][k], o[2][k]);
            let (th, tv, td) = (t[0][k], t[1][k], t[2][k]);
            let ratio = |t: f32, o: f32| (t * super::recip::recip_newton(o + EPS)).clamp(0.0, 1.0);
            let mut rst = [ratio(th, oh) * oh, ratio(tv, ov) * ov, ratio(td, od) * od];
            let ot_dp = oh * th + ov * tv;
            let o_mag_sq = oh * oh + ov * ov;
            let t_mag_sq = th * th + tv * tv;
            let same_angle = ot_dp >= 0.0 && ot_dp * ot_dp >= cos_1deg_sq * o_mag_sq * t_mag_sq;
            let tv3 = [th, tv, td];
            if same_angle {
                for (x, &tt) in rst.iter_mut().zip(&tv3) {
                    let tt = f64::from(tt);
                    if *x > 0.0 {
                        *x = (f64::from(*x) * egl).min(tt) as f32;
                    }
                    if *x < 0.0 {
                        *x = (f64::from(*x) * egl).max(tt) as f32;
                    }
                }
            }
            for b in 0..3 {
                r[b][k] = rst[b];
                a[b][k] = tv3[b] - rst[b];
            }
        }
    }
}

/// `adm_csf_s` over `region`: the CSF-weighted bands, and a 30th of their
/// magnitudes (the masking filter's outer taps).
fn csf(src: &Hvd, w: usize, region: Region, rf: [f32; 3], (dst, flt): (&mut Hvd, &mut Hvd)) {
    for b in 0..3 {
        for i in region.top..region.bottom {
            for k in i * w + region.left..i * w + region.right {
                let v = rf[b] * src[b][k];
                dst[b][k] = v;
                flt[b][k] = ONE_BY_30 * v.abs();
            }
        }
    }
}

/// `adm_csf_den_scale_s`: the p-norms of the reference's CSF-weighted bands
/// over `region`, plus the noise constant, summed over h, v, d.
fn csf_den(o: &Hvd, w: usize, region: Region, rf: [f32; 3], p: &FloatAdmParams) -> f32 {
    let mut acc = [0f32; 3];
    for i in region.top..region.bottom {
        let mut row = [0f32; 3];
        let span = i * w + region.left..i * w + region.right;
        for (b, sum) in row.iter_mut().enumerate() {
            for &x in &o[b][span.clone()] {
                *sum += p.pow((rf[b] * x).abs());
            }
        }
        for b in 0..3 {
            acc[b] += row[b];
        }
    }
    let (rw, rh) = (region.width(), region.height());
    let mut den = 0f32;
    for a in acc {
        den += p.norm(a, rw, rh, p.noise_weight);
    }
    den
}

/// `adm_cm_s`: `src` weighted by the CSF, less the masking threshold of the
/// other part (`angles`: its CSF bands, `flt`: a 30th of their magnitudes)
/// over the 3×3 neighbourhood, floored at 0; p-norms over `region`, plus
/// the noise constant of `noise_weight`, summed over h, v, d.
fn masked_sum(
    src: &Hvd,
    (angles, flt): (&Hvd, &Hvd),
    (w, h): (usize, usize),
    region: Region,
    rf: [f32; 3],
    p: &FloatAdmParams,
    noise_weight: f64,
) -> f32 {
    let mut acc = [0f32; 3];
    for i in region.top..region.bottom {
        let mut row = [0f32; 3];
        for j in region.left..region.right {
            let thr = if p.bypass_cm {
                0.0
            } else {
                threshold(angles, flt, (w, h), i, j)
            };
            let k = i * w + j;
            for b in 0..3 {
                let x = (src[b][k] * rf[b]).abs() - thr;
                row[b] += p.pow(if x < 0.0 { 0.0 } else { x });
            }
        }
        for b in 0..3 {
            acc[b] += row[b];
        }
    }
    let (rw, rh) = (region.width(), region.height());
    let mut num = 0f32;
    for a in acc {
        num += p.norm(a, rw, rh, noise_weight);
    }
    num
}

/// The masking threshold at (i, j) (`ADM_CM_THRESH_S_*`): per band, the
/// eight neighbours of `flt` and a 15th of the centre of `angles`, in row
/// order; outside the picture, row (column) −1 reads 1 and h (w) reads
/// h − 1 (w − 1).
#[inline]
fn threshold(angles: &Hvd, flt: &Hvd, (w, h): (usize, usize), i: usize, j: usize) -> f32 {
    let near = |k: usize, n: usize| -> [usize; 3] {
        let before = if k == 0 { 1.min(n - 1) } else { k - 1 };
        [before, k, (k + 1).min(n - 1)]
    };
    let (rows, cols) = (near(i, h), near(j, w));
    let mut total = 0f32;
    for b in 0..3 {
        let mut sum = 0f32;
        for (ri, &r) in rows.iter().enumerate() {
            for (ci, &c) in cols.iter().enumerate() {
                sum += if ri == 1 && ci == 1 {
                    ONE_BY_15 * angles[b][r * w + c].abs()
                } else {
                    flt[b][r * w + c]
                };
            }
        }
        total += sum;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dwt_taps_reflect_with_the_edge_repeated() {
        assert_eq!(taps_of(0, 10), [1, 0, 1, 2]);
        assert_eq!(taps_of(4, 10), [7, 8, 9, 9]);
        assert_eq!(taps_of(4, 9), [7, 8, 8, 7]);
    }

    #[test]
    fn identical_pictures_score_one_and_no_aim() {
        let (w, h) = (96, 64);
        let img: Vec<u16> = (0..w * h)
            .map(|i| (((i % w) * 3 + (i / w) * 5 + (i * 7919) % 13) % 230) as u16)
            .collect();
        let p = FloatAdmParams::default();
        let s = FloatAdm::default().compute(&img, &img, (w, h, 8), &p);
        assert!((s.adm2 - 1.0).abs() < 1e-4, "{s:?}");
        assert!(s.aim.is_some_and(|a| a.abs() < 1e-4), "{s:?}");
    }
}
