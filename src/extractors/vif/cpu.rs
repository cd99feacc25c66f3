//! Integer VIF, mirroring libvmaf `feature/integer_vif.c` (scalar C path).
//!
//! Four scales. Scale 0 filters the full-resolution luma with a 17-tap filter;
//! each further scale low-passes the previous one with that scale's filter and
//! keeps the even samples. All filters are separable, vertical pass first, and
//! every border is a reflection without repeating the edge sample (R101).
//!
//! Per pixel the local means and (co)variances are fixed point; the
//! information terms go through a 2048·log2 look-up table and are summed in
//! 64-bit integers, so the only floating point is the per-pixel gain `g` (in
//! double, as libvmaf) and the per-scale num/den (stored as `f32`).

use crate::extractors::common::{grow, mirror_r101};

/// `integer_vif.h:vif_filter1d_table`: Q16 Gaussian taps, each row sums to 65536.
pub const VIF_FILTERS: [&[u16]; 4] = [
    &[
        489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784, 7455, 6547, 5274, 3896, 2640, 1640,
        935, 489,
    ],
    &[1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244],
    &[3571, 16004, 26386, 16004, 3571],
    &[10904, 43728, 10904],
];

/// sigma_nsq = 2.0 in Q16 of 8-bit-pixel² units.
pub const SIGMA_NSQ: i32 = 65536 << 1;

/// Default enhancement gain limit (`DEFAULT_VIF_ENHN_GAIN_LIMIT`).
pub const DEFAULT_EGL: f64 = 100.0;

/// The 2048·log2 table, `integer_vif.c:log_generate`. Only 32768..=65535 are
/// ever read (arguments are normalised to their top 16 bits).
pub fn log2_table() -> Vec<u16> {
    let mut table = vec![0u16; 65536];
    for (i, slot) in table.iter_mut().enumerate().skip(32767) {
        // log2f in float, times 2048 in float, rounded half away from zero in double.
        *slot = (f64::from((i as f32).log2() * 2048.0f32)).round() as u16;
    }
    table
}

/// `integer_vif.h:log2_32` / `log2_64`: 2048·log2(x) from the top 16 bits (truncated).
#[inline(always)]
pub fn log2_fixed(table: &[u16], x: u64) -> i64 {
    let k = 48 - x.leading_zeros() as i64; // bit length − 16
    i64::from(table[(x >> k) as usize]) + 2048 * k
}

/// Per-scale integer sums; the CPU twin of what `vif_statistic.hip` reduces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VifAccum {
    pub num_log: i64,
    pub den_log: i64,
    pub num_non_log: i64,
    pub den_non_log: i64,
}

impl VifAccum {
    pub fn add(&mut self, o: &VifAccum) {
        self.num_log += o.num_log;
        self.den_log += o.den_log;
        self.num_non_log += o.num_non_log;
        self.den_non_log += o.den_non_log;
    }

    /// `vif_statistic_*`: num and den computed in double, stored as float.
    pub fn num_den(&self) -> (f32, f32) {
        let num = self.num_log as f64 / 2048.0
            + (self.den_non_log as f64 - (self.num_non_log as f64 / 16384.0) / 65025.0);
        let den = self.den_log as f64 / 2048.0 + self.den_non_log as f64;
        (num as f32, den as f32)
    }

    /// One pixel's contribution from its filtered moments.
    ///
    /// `mu1`, `mu2` are the Q16·(8-bit) means; `xx`, `yy`, `xy` the 64-bit
    /// filtered second moments before the final `>> 16`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn pixel(
        &mut self,
        table: &[u16],
        egl: f64,
        mu1: u32,
        mu2: u32,
        xx: u64,
        yy: u64,
        xy: u64,
    ) {
        let round = |x: u64| ((x + 32768) >> 16) as u32;
        let t = PixelTerms::new::<false>(egl, mu1, mu2, round(xx), round(yy), round(xy));
        self.non_log(&t);
        self.log(table, t.den_arg, t.num_arg, t.numer1);
    }

    /// The sums that need no logarithm.
    #[inline(always)]
    fn non_log(&mut self, t: &PixelTerms) {
        self.num_non_log += i64::from(t.sigma2_non_log);
        self.den_non_log += i64::from(t.non_log);
    }

    /// The logarithmic sums from the arguments of [`PixelTerms`].
    #[inline(always)]
    fn log(&mut self, table: &[u16], den_arg: u32, num_arg: u64, numer1: u32) {
        self.den_log += log2_fixed(table, u64::from(den_arg)) - 2048 * 17;
        self.num_log += log2_fixed(table, num_arg) - log2_fixed(table, u64::from(numer1));
    }
}

/// Largest enhancement gain limit for which `PixelTerms` may truncate with
/// [`floor_small`]: g² · sigma1² < 2^21 · 2^31 = 2^52. (libvmaf's default
/// is 100, the NEG models use 1.)
const MAX_SMALL_GAIN: f64 = 1448.0;

/// ⌊x⌋ as an integer for 0 ≤ x < 2^52, with float adds, a compare and bit
/// operations only, so it vectorises with SSE2 as well as AVX2 (Rust's
/// saturating `as` does not). Meaningless, but harmless, elsewhere: lanes
/// whose value is discarded (x < 0) wrap on purpose, hence `wrapping_sub`.
#[inline(always)]
fn floor_small(x: f64) -> u64 {
    const TWO52: f64 = 4503599627370496.0;
    // x rounded to an integer: exact, as the ulp of [2^52, 2^53) is 1.
    let r = (x + TWO52) - TWO52;
    let f = if r > x { r - 1.0 } else { r };
    (f + TWO52).to_bits().wrapping_sub(TWO52.to_bits())
}

/// Argument of the look-ups that cancel: log2(2^17)·2048 = 17·2048 is what
/// the denominator term subtracts, and equal numerator arguments give 0.
const NO_TERM: u32 = 1 << 17;

/// One pixel's VIF terms before the logarithms, formed without branches so
/// that a row of them vectorises (libvmaf's `vif_statistic_*` per pixel).
///
/// Where libvmaf takes no logarithm, the arguments are [`NO_TERM`], whose
/// look-ups cancel; so every pixel does the same three look-ups.
#[derive(Clone, Copy, Debug, PartialEq)]
struct PixelTerms {
    /// 1 where sigma1² < sigma_nsq (the non-log branch), else 0.
    non_log: u32,
    /// sigma2² in the non-log branch, else 0.
    sigma2_non_log: i32,
    den_arg: u32,
    num_arg: u64,
    numer1: u32,
}

impl PixelTerms {
    /// `SMALL_GAIN`: the caller checked `egl <= MAX_SMALL_GAIN`, so the
    /// float → integer truncations can use [`floor_small`] (exact there).
    ///
    /// `xx`, `yy`, `xy` are the second moments after libvmaf's final
    /// `(x + 32768) >> 16`.
    #[inline(always)]
    fn new<const SMALL_GAIN: bool>(
        egl: f64,
        mu1: u32,
        mu2: u32,
        xx: u32,
        yy: u32,
        xy: u32,
    ) -> Self {
        let mu1_sq = ((u64::from(mu1) * u64::from(mu1) + 0x8000_0000) >> 32) as u32;
        let mu2_sq = ((u64::from(mu2) * u64::from(mu2) + 0x8000_0000) >> 32) as u32;
        let mu1_mu2 = ((u64::from(mu1) * u64::from(mu2) + 0x8000_0000) >> 32) as u32;
        // uint32 differences reinterpreted as int32, as libvmaf does.
        let sigma1_sq = xx.wrapping_sub(mu1_sq) as i32;
        let sigma2_sq = (yy.wrapping_sub(mu2_sq) as i32).max(0);
        let sigma12 = xy.wrapping_sub(mu1_mu2) as i32;
        let log_branch = sigma1_sq >= SIGMA_NSQ;
        let num_term = log_branch && sigma12 > 0 && sigma2_sq > 0;
        // Double precision, in libvmaf's evaluation order; the gain limit
        // applies only after sv_sq was formed. Computed for every pixel and
        // used only where libvmaf computes it (`num_term`).
        let eps = 65536.0 * 1.0e-10;
        let mut g = f64::from(sigma12) / (f64::from(sigma1_sq) + eps);
        let sv = f64::from(sigma2_sq) - g * f64::from(sigma12);
        if egl < g {
            g = egl;
        }
        let gain_sq = g * g * f64::from(sigma1_sq);
        // libvmaf: (int32)sv clamped at 0, and (int64)gain_sq. Where
        // `num_term` holds, g > 0, 0 < sv < sigma2² < 2^31 and, when g ≤
        // MAX_SMALL_GAIN, 0 ≤ gain_sq < 2^21·2^31 = 2^52: there truncation
        // is floor, which `floor_small` gives exactly. Other pixels' values
        // are not used.
        let (sv_sq, gain_sq) = if SMALL_GAIN {
            let sv_sq = if sv > 0.0 { floor_small(sv) as i32 } else { 0 };
            (sv_sq, floor_small(gain_sq) as i64)
        } else {
            ((sv as i32).max(0), gain_sq as i64)
        };
        let numer1 = (sv_sq as u32).wrapping_add(SIGMA_NSQ as u32);
        let numer1_tmp = gain_sq + i64::from(numer1);
        PixelTerms {
            non_log: u32::from(!log_branch),
            sigma2_non_log: if log_branch { 0 } else { sigma2_sq },
            den_arg: if log_branch {
                SIGMA_NSQ.wrapping_add(sigma1_sq) as u32
            } else {
                NO_TERM
            },
            num_arg: if num_term {
                numer1_tmp as u64
            } else {
                u64::from(NO_TERM)
            },
            numer1: if num_term { numer1 } else { NO_TERM },
        }
    }
}

/// Fixed-point shifts of one VIF scale.
#[derive(Clone, Copy, Debug)]
pub struct VifShifts {
    /// Vertical mean: round then shift.
    pub mu_shift: u32,
    /// Vertical second moments shift (0 = unshifted, 8-bit scale 0).
    pub sq_shift: u32,
}

impl VifShifts {
    /// `vif_statistic_8` / `vif_statistic_16` shift selection.
    pub fn for_scale(scale: usize, bpc: u8) -> Self {
        if scale == 0 {
            if bpc == 8 {
                Self {
                    mu_shift: 8,
                    sq_shift: 0,
                }
            } else {
                Self {
                    mu_shift: u32::from(bpc),
                    sq_shift: 2 * (u32::from(bpc) - 8),
                }
            }
        } else {
            Self {
                mu_shift: 16,
                sq_shift: 16,
            }
        }
    }
}

#[inline(always)]
fn rnd_u64(x: u64, s: u32) -> u64 {
    if s == 0 {
        x
    } else {
        (x + (1u64 << (s - 1))) >> s
    }
}

/// Scratch for one VIF extractor; sized once for the largest scale.
#[derive(Default)]
pub struct Vif {
    table: Vec<u16>,
    // Vertical-pass rows, padded by `PAD` on each side for the horizontal
    // mirror (and `SLACK` past the end): the means (ref, dis), as
    // [`biased`] samples, and the second moments (xx, yy, xy).
    v_mu: [Vec<i16>; 2],
    v_sq: [Vec<u32>; 3],
    // Vertical sums before their final shift.
    acc_mu: [Vec<u32>; 2],
    acc_sq: [Vec<u64>; 3],
    // Horizontal-pass rows.
    h_mu: [Vec<u32>; 2],
    /// Second moments after the horizontal pass and the final
    /// `(x + 32768) >> 16`.
    h_sq: [Vec<u32>; 3],
    /// A 32-bit row split into its 16-bit halves ([`biased`]), and their
    /// filtered sums.
    halves: [Vec<i16>; 2],
    half_sums: [Vec<u32>; 2],
    log_args: LogArgs,
    // Decimated images of the next scale (ref, dis).
    next_ref: Vec<u16>,
    next_dis: Vec<u16>,
    cur_ref: Vec<u16>,
    cur_dis: Vec<u16>,
}

const PAD: usize = 8;

/// Samples past a padded 16-bit row that the vector row filters may read
/// (and multiply by a zero tap), so that they reach every column.
const SLACK: usize = 32;

/// A 16-bit sample as the row filters take it: `x − 32768` in an `i16`, the
/// range `pmaddwd` multiplies (see [`filter_row`]).
#[inline(always)]
fn biased(x: u16) -> i16 {
    (x ^ 0x8000) as i16
}

/// Per-scale (num, den) as libvmaf stores them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VifScales {
    pub num: [f32; 4],
    pub den: [f32; 4],
}

impl VifScales {
    /// `integer_vif.c:write_scores`: a float division per scale.
    pub fn score(&self, scale: usize) -> f64 {
        f64::from(self.num[scale] / self.den[scale])
    }

    /// The four scales' scores.
    pub fn scores(&self) -> [f64; 4] {
        [0, 1, 2, 3].map(|s| self.score(s))
    }
}

impl Vif {
    pub fn new() -> Self {
        Self {
            table: log2_table(),
            ..Default::default()
        }
    }

    /// Row scratch for rows of up to `w` samples (grows only).
    fn ensure_rows(&mut self, w: usize) {
        for v in &mut self.v_mu {
            grow(v, w + 2 * PAD + SLACK);
        }
        for v in &mut self.v_sq {
            grow(v, w + 2 * PAD);
        }
        for v in self.acc_mu.iter_mut().chain(self.h_mu.iter_mut()) {
            grow(v, w);
        }
        for v in &mut self.acc_sq {
            grow(v, w);
        }
        for v in self.h_sq.iter_mut().chain(self.half_sums.iter_mut()) {
            grow(v, w);
        }
        for v in &mut self.halves {
            grow(v, w + 2 * PAD + SLACK);
        }
    }

    /// All four scales of one frame pair (`integer_vif.c:extract`).
    pub fn compute(
        &mut self,
        reference: &[u16],
        distorted: &[u16],
        w: usize,
        h: usize,
        bpc: u8,
        egl: f64,
    ) -> VifScales {
        self.ensure_rows(w);
        let mut out = VifScales::default();
        let mut cur_ref = std::mem::take(&mut self.cur_ref);
        let mut cur_dis = std::mem::take(&mut self.cur_dis);
        let mut next_ref = std::mem::take(&mut self.next_ref);
        let mut next_dis = std::mem::take(&mut self.next_dis);
        let (mut sw, mut sh) = (w, h);
        for scale in 0..4 {
            if scale > 0 {
                let (src_r, src_d): (&[u16], &[u16]) = if scale == 1 {
                    (reference, distorted)
                } else {
                    (&cur_ref, &cur_dis)
                };
                self.decimate(
                    src_r,
                    src_d,
                    sw,
                    sh,
                    scale,
                    bpc,
                    &mut next_ref,
                    &mut next_dis,
                );
                std::mem::swap(&mut cur_ref, &mut next_ref);
                std::mem::swap(&mut cur_dis, &mut next_dis);
                sw /= 2;
                sh /= 2;
            }
            let (r, d): (&[u16], &[u16]) = if scale == 0 {
                (reference, distorted)
            } else {
                (&cur_ref, &cur_dis)
            };
            let acc = self.statistic(r, d, sw, sh, scale, bpc, egl);
            let (num, den) = acc.num_den();
            out.num[scale] = num;
            out.den[scale] = den;
        }
        self.cur_ref = cur_ref;
        self.cur_dis = cur_dis;
        self.next_ref = next_ref;
        self.next_dis = next_dis;
        out
    }

    /// `vif_statistic_8` / `vif_statistic_16` for one scale of a `w`x`h` image.
    ///
    /// Row by row: the vertical pass into padded rows, the horizontal pass one
    /// quantity at a time (each pass's two rows stay in the L1 cache), then
    /// the per-pixel information terms.
    #[allow(clippy::too_many_arguments)]
    pub fn statistic(
        &mut self,
        r: &[u16],
        d: &[u16],
        w: usize,
        h: usize,
        scale: usize,
        bpc: u8,
        egl: f64,
    ) -> VifAccum {
        self.ensure_rows(w);
        let filt = VIF_FILTERS[scale];
        let n = filt.len();
        let half = n / 2;
        let sh = VifShifts::for_scale(scale, bpc);
        let mu_round = 1u32 << (sh.mu_shift - 1);
        let mut total = VifAccum::default();
        let mut rows = [0usize; 17];
        for i in 0..h {
            for (k, row) in rows[..n].iter_mut().enumerate() {
                *row = mirror_r101(i as isize - half as isize + k as isize, h);
            }
            let rows = &rows[..n];
            let [v_mu1, v_mu2] = &mut self.v_mu;
            let [v_xx, v_yy, v_xy] = &mut self.v_sq;
            let inner = PAD..PAD + w;
            if scale == 0 && bpc == 8 {
                // Everything fits in u32: Σc·x² ≤ 65536·255² < 2^32.
                vertical_u32(
                    r,
                    d,
                    w,
                    rows,
                    filt,
                    &mut self.acc_mu,
                    [
                        &mut v_xx[inner.clone()],
                        &mut v_yy[inner.clone()],
                        &mut v_xy[inner.clone()],
                    ],
                );
            } else {
                vertical_u64(r, d, w, rows, filt, &mut self.acc_mu, &mut self.acc_sq);
                for (v, acc) in [v_xx, v_yy, v_xy].into_iter().zip(&self.acc_sq) {
                    narrow_sq(&acc[..w], sh.sq_shift, &mut v[inner.clone()]);
                }
            }
            // The means always fit 16 bits: (Σc·x + round) >> shift < 2^16.
            for (v, acc) in [&mut *v_mu1, &mut *v_mu2].into_iter().zip(&self.acc_mu) {
                narrow_mu(&acc[..w], mu_round, sh.mu_shift, &mut v[inner.clone()]);
            }
            let base = PAD - half;
            let span = base..PAD + w + half;
            for (v, out) in self.v_mu.iter_mut().zip(&mut self.h_mu) {
                pad_row(v, w, half);
                filter_row(&v[base..], filt, &mut out[..w]);
            }
            for (v, out) in self.v_sq.iter_mut().zip(&mut self.h_sq) {
                pad_row(v, w, half);
                filter_row_u32(
                    &v[span.clone()],
                    filt,
                    &mut self.halves,
                    &mut self.half_sums,
                    &mut out[..w],
                );
            }
            let row_acc = pixels(
                &self.table,
                egl,
                &self.h_mu,
                &self.h_sq,
                w,
                &mut self.log_args,
            );
            total.add(&row_acc);
        }
        total
    }

    /// `subsample_rd_8` / `subsample_rd_16` + `decimate_and_pad`: low-pass the
    /// `w`x`h` image with the filter of `new_scale` and keep even samples.
    /// Only the kept rows are filtered; the horizontal pass runs over the
    /// whole row (vectorised) and keeps the even columns.
    #[allow(clippy::too_many_arguments)]
    fn decimate(
        &mut self,
        r: &[u16],
        d: &[u16],
        w: usize,
        h: usize,
        new_scale: usize,
        bpc: u8,
        out_r: &mut Vec<u16>,
        out_d: &mut Vec<u16>,
    ) {
        let filt = VIF_FILTERS[new_scale];
        let n = filt.len();
        let half = n / 2;
        // Vertical shift: from 8-bit (or bpc) pixels into the ×256 domain at
        // the first decimation, Q16 afterwards.
        let v_shift: u32 = if new_scale == 1 { u32::from(bpc) } else { 16 };
        let v_round = 1u32 << (v_shift - 1);
        let (ow, oh) = (w / 2, h / 2);
        grow(out_r, ow * oh);
        grow(out_d, ow * oh);
        let mut rows = [0usize; 17];
        for oi in 0..oh {
            let i = 2 * oi;
            for (k, row) in rows[..n].iter_mut().enumerate() {
                *row = mirror_r101(i as isize - half as isize + k as isize, h);
            }
            let inner = PAD..PAD + w;
            let base = PAD - half;
            for (img, out) in [(r, &mut *out_r), (d, &mut *out_d)] {
                let [acc, h_row] = &mut self.acc_mu;
                let v = &mut self.v_mu[0];
                filter_col_u16(img, w, &rows[..n], filt, &mut acc[..w]);
                // 8-bit: uint32 tmp; 16-bit: stored through uint16. Both are
                // below 2^16 here, so one u16 row serves both.
                narrow_mu(&acc[..w], v_round, v_shift, &mut v[inner.clone()]);
                pad_row(v, w, half);
                filter_row(&v[base..], filt, &mut h_row[..w]);
                for (o, &s) in out[oi * ow..(oi + 1) * ow]
                    .iter_mut()
                    .zip(h_row.iter().step_by(2))
                {
                    *o = (s.wrapping_add(32768) >> 16) as u16;
                }
            }
        }
    }
}

/// Widening 16×16 → 32-bit product (what SSE2/AVX2 multiply 8/16 at a time).
#[inline(always)]
fn wide(c: u16, v: u16) -> u32 {
    u32::from(c) * u32::from(v)
}

/// Vertical moments of one output row, 8-bit scale 0: all in u32 (exact,
/// see `statistic`). `rows` are the mirrored source rows of the taps; the
/// mean sums go to `mu`, the second moments straight to `sq`.
///
/// 8-bit samples (≤ 255, pictures of 8 bits come only from `u8`) make every
/// product one of two 16-bit numbers: taps < 2^13, `xa + xb` ≤ 510, and `x²`,
/// `x·y` ≤ 65025 are formed in `u16`.
fn vertical_u32(
    r: &[u16],
    d: &[u16],
    w: usize,
    rows: &[usize],
    filt: &[u16],
    mu: &mut [Vec<u32>; 2],
    sq: [&mut [u32]; 3],
) {
    let n = filt.len();
    let half = n / 2;
    let [m1, m2] = mu;
    let [xx, yy, xy] = sq;
    let (m1, m2, xx, yy, xy) = (
        &mut m1[..w],
        &mut m2[..w],
        &mut xx[..w],
        &mut yy[..w],
        &mut xy[..w],
    );
    let mut r_rows: [&[u16]; 17] = [&[]; 17];
    let mut d_rows: [&[u16]; 17] = [&[]; 17];
    for (k, &row) in rows.iter().enumerate() {
        r_rows[k] = &r[row * w..][..w];
        d_rows[k] = &d[row * w..][..w];
    }
    let done = super::simd::vif_moments_8bit(
        &r_rows[..n],
        &d_rows[..n],
        filt,
        [&mut *m1, &mut *m2, &mut *xx, &mut *yy, &mut *xy],
    );
    // The columns the vector copy left (all of them on the baseline copy).
    let w = w - done;
    let (m1, m2, xx, yy, xy) = (
        &mut m1[done..],
        &mut m2[done..],
        &mut xx[done..],
        &mut yy[done..],
        &mut xy[done..],
    );
    let r_rows = r_rows.map(|row| row.get(done..).unwrap_or_default());
    let d_rows = d_rows.map(|row| row.get(done..).unwrap_or_default());
    crate::core::isa::dispatch(
        #[inline(always)]
        || {
            let c = filt[half];
            let (rr, dr) = (&r_rows[half][..w], &d_rows[half][..w]);
            for j in 0..w {
                let (x, y) = (rr[j], dr[j]);
                m1[j] = wide(c, x);
                m2[j] = wide(c, y);
                xx[j] = wide(c, x.wrapping_mul(x));
                yy[j] = wide(c, y.wrapping_mul(y));
                xy[j] = wide(c, x.wrapping_mul(y));
            }
            for k in 0..half {
                let c = filt[k];
                let (ra, rb) = (&r_rows[k][..w], &r_rows[n - 1 - k][..w]);
                let (da, db) = (&d_rows[k][..w], &d_rows[n - 1 - k][..w]);
                for j in 0..w {
                    let (xa, xb) = (ra[j], rb[j]);
                    let (ya, yb) = (da[j], db[j]);
                    m1[j] += wide(c, xa.wrapping_add(xb));
                    m2[j] += wide(c, ya.wrapping_add(yb));
                    xx[j] += wide(c, xa.wrapping_mul(xa)) + wide(c, xb.wrapping_mul(xb));
                    yy[j] += wide(c, ya.wrapping_mul(ya)) + wide(c, yb.wrapping_mul(yb));
                    xy[j] += wide(c, xa.wrapping_mul(ya)) + wide(c, xb.wrapping_mul(yb));
                }
            }
        },
    )
}

/// Vertical moments of one output row for scales 1..3 and deeper samples:
/// means in u32 (Σc·x < 2^32), second moments in u64.
fn vertical_u64(
    r: &[u16],
    d: &[u16],
    w: usize,
    rows: &[usize],
    filt: &[u16],
    mu: &mut [Vec<u32>; 2],
    sq: &mut [Vec<u64>; 3],
) {
    let [m1, m2] = mu;
    let [xx, yy, xy] = sq;
    let (m1, m2, xx, yy, xy) = (
        &mut m1[..w],
        &mut m2[..w],
        &mut xx[..w],
        &mut yy[..w],
        &mut xy[..w],
    );
    crate::core::isa::dispatch(
        #[inline(always)]
        || {
            m1.fill(0);
            m2.fill(0);
            xx.fill(0);
            yy.fill(0);
            xy.fill(0);
            for (k, &c) in filt.iter().enumerate() {
                let c = u32::from(c);
                let (rr, dr) = (&r[rows[k] * w..][..w], &d[rows[k] * w..][..w]);
                for j in 0..w {
                    let (x, y) = (u32::from(rr[j]), u32::from(dr[j]));
                    let (cx, cy) = (c * x, c * y);
                    m1[j] = m1[j].wrapping_add(cx);
                    m2[j] = m2[j].wrapping_add(cy);
                    xx[j] += u64::from(cx) * u64::from(x);
                    yy[j] += u64::from(cy) * u64::from(y);
                    xy[j] += u64::from(cx) * u64::from(y);
                }
            }
        },
    )
}

/// Vertical low-pass of one row of `img` (decimation): Σc·x in u32, exact
/// since Σc = 2^16 and x < 2^16.
fn filter_col_u16(img: &[u16], w: usize, rows: &[usize], filt: &[u16], out: &mut [u32]) {
    crate::core::isa::dispatch(
        #[inline(always)]
        || {
            out.fill(0);
            for (&c, &row) in filt.iter().zip(rows) {
                let src = &img[row * w..][..w];
                for (o, &x) in out.iter_mut().zip(src) {
                    *o += wide(c, x);
                }
            }
        },
    )
}

/// Means of the vertical pass: `(acc + round) >> shift` in u32 (libvmaf's
/// uint32 arithmetic), always below 2^16 (Σc = 2^16 and samples < 2^shift),
/// stored [`biased`] for the row filter.
fn narrow_mu(acc: &[u32], round: u32, shift: u32, out: &mut [i16]) {
    crate::core::isa::dispatch(
        #[inline(always)]
        || {
            for (o, &a) in out.iter_mut().zip(acc) {
                *o = biased((a.wrapping_add(round) >> shift) as u16);
            }
        },
    )
}

/// Second moments of the vertical pass, rounded and shifted into u32.
fn narrow_sq(acc: &[u64], shift: u32, out: &mut [u32]) {
    crate::core::isa::dispatch(
        #[inline(always)]
        || {
            for (o, &a) in out.iter_mut().zip(acc) {
                *o = rnd_u64(a, shift) as u32;
            }
        },
    )
}

/// Horizontal pass of a 16-bit row: `out[j] = Σ_k c_k·x[j + k]` in u32
/// (below 2^32: Σc = 2^16, x < 2^16), where `v` holds the samples `x`
/// [`biased`], from `half` mirrored samples before the row's first to at
/// least `half + 1` past its last (the row buffers' `SLACK` gives the vector
/// copies room for every column).
///
/// With `x = x' + 32768`, `Σc·x = Σc·x' + 32768·Σc`: the signed sum is what
/// `super::simd::filter_taps_i16` forms (two products per instruction), and
/// the constant is added back in wrapping u32, exact as the true sum fits.
/// Taps above 32767 (scale 3's centre) take the portable loop on `x`.
fn filter_row(v: &[i16], filt: &[u16], out: &mut [u32]) {
    let bias = super::simd::product_bias(filt);
    let mut taps = [0i16; 17];
    let signed = filt.iter().all(|&c| c <= i16::MAX as u16);
    if signed {
        for (t, &c) in taps.iter_mut().zip(filt) {
            *t = c as i16;
        }
        super::simd::filter_taps_i16(v, &taps[..filt.len()], bias, out);
        return;
    }
    let n = filt.len();
    let w = out.len();
    crate::core::isa::dispatch(
        #[inline(always)]
        || {
            let x = |k: usize| &v[k..k + w];
            for (o, &s) in out.iter_mut().zip(x(0)) {
                *o = wide(filt[0], s as u16 ^ 0x8000);
            }
            for (k, &c) in filt.iter().enumerate().take(n).skip(1) {
                for (o, &s) in out.iter_mut().zip(x(k)) {
                    *o += wide(c, s as u16 ^ 0x8000);
                }
            }
        },
    )
}

/// Horizontal pass of a 32-bit row, rounded as libvmaf rounds the 64-bit
/// sums of the second moments: `out[j] = (Σ_k c_k·v[j + k] + 32768) >> 16`.
///
/// Each sample is split as `v = 65536·hi + lo` (both 16-bit), so
/// `Σc·v = 65536·H + L` with `H = Σc·hi` and `L = Σc·lo` each below 2^32
/// (Σc = 2^16), filtered by [`filter_row`]. As 65536·H is a multiple of
/// 2^16, `(Σc·v + 32768) >> 16 = H + ((L + 32768) >> 16)`, which fits u32
/// (it is at most (2^16·(2^32 − 1) + 2^15) >> 16), and `L + 32768` cannot
/// overflow. No 64-bit product is formed.
fn filter_row_u32(
    v: &[u32],
    filt: &[u16],
    halves: &mut [Vec<i16>; 2],
    sums: &mut [Vec<u32>; 2],
    out: &mut [u32],
) {
    let (len, w) = (v.len(), out.len());
    let [lo, hi] = halves;
    crate::core::isa::dispatch(
        #[inline(always)]
        || {
            for ((l, h), &x) in lo[..len].iter_mut().zip(&mut hi[..len]).zip(v) {
                *l = biased(x as u16);
                *h = biased((x >> 16) as u16);
            }
        },
    );
    let [sum_lo, sum_hi] = sums;
    let (sum_lo, sum_hi) = (&mut sum_lo[..w], &mut sum_hi[..w]);
    filter_row(lo, filt, sum_lo);
    filter_row(hi, filt, sum_hi);
    crate::core::isa::dispatch(
        #[inline(always)]
        || {
            for ((o, &h), &l) in out.iter_mut().zip(&*sum_hi).zip(&*sum_lo) {
                *o = h + ((l + 32768) >> 16);
            }
        },
    );
}

/// Look-up arguments of one row, kept between the two passes of [`pixels`].
#[derive(Default)]
struct LogArgs {
    den: Vec<u32>,
    num: Vec<u64>,
    numer1: Vec<u32>,
}

/// The information terms of one row from its filtered moments, in two
/// passes: [`PixelTerms`] for the whole row (vectorised, no branches), then
/// the table look-ups (scalar, three per pixel, no branches either).
fn pixels(
    table: &[u16],
    egl: f64,
    mu: &[Vec<u32>; 2],
    sq: &[Vec<u32>; 3],
    w: usize,
    args: &mut LogArgs,
) -> VifAccum {
    let (mu1, mu2) = (&mu[0][..w], &mu[1][..w]);
    let (xx, yy, xy) = (&sq[0][..w], &sq[1][..w], &sq[2][..w]);
    grow(&mut args.den, w);
    grow(&mut args.num, w);
    grow(&mut args.numer1, w);
    let (den, num, numer1) = (
        &mut args.den[..w],
        &mut args.num[..w],
        &mut args.numer1[..w],
    );
    crate::core::isa::dispatch(
        #[inline(always)]
        || {
            let mut acc = VifAccum::default();
            let mut terms = |j: usize, t: PixelTerms| {
                acc.non_log(&t);
                den[j] = t.den_arg;
                num[j] = t.num_arg;
                numer1[j] = t.numer1;
            };
            if egl <= MAX_SMALL_GAIN {
                for j in 0..w {
                    terms(
                        j,
                        PixelTerms::new::<true>(egl, mu1[j], mu2[j], xx[j], yy[j], xy[j]),
                    );
                }
            } else {
                for j in 0..w {
                    terms(
                        j,
                        PixelTerms::new::<false>(egl, mu1[j], mu2[j], xx[j], yy[j], xy[j]),
                    );
                }
            }
            let (done, den_log, num_log) = super::simd::vif_log_sums(table, den, num, numer1);
            acc.den_log += den_log - 2048 * 17 * done as i64;
            acc.num_log += num_log;
            for j in done..w {
                acc.log(table, den[j], num[j], numer1[j]);
            }
            acc
        },
    )
}

/// `integer_vif.h:PADDING_SQ_DATA`: mirror `half` samples at each end of a
/// row stored at offset `PAD`, without repeating the edge sample.
#[inline(always)]
fn pad_row<T: Copy>(v: &mut [T], w: usize, half: usize) {
    for f in 1..=half {
        v[PAD - f] = v[PAD + f];
        v[PAD + w - 1 + f] = v[PAD + w - 1 - f];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libvmaf's per-pixel statistic with its branches, for comparison
    /// with the branch-free two passes.
    #[allow(clippy::too_many_arguments)]
    fn pixel_branchy(
        acc: &mut VifAccum,
        table: &[u16],
        egl: f64,
        mu1: u32,
        mu2: u32,
        xx: u64,
        yy: u64,
        xy: u64,
    ) {
        let mu1_sq = ((u64::from(mu1) * u64::from(mu1) + 0x8000_0000) >> 32) as u32;
        let mu2_sq = ((u64::from(mu2) * u64::from(mu2) + 0x8000_0000) >> 32) as u32;
        let mu1_mu2 = ((u64::from(mu1) * u64::from(mu2) + 0x8000_0000) >> 32) as u32;
        let xx = ((xx + 32768) >> 16) as u32;
        let yy = ((yy + 32768) >> 16) as u32;
        let xy = ((xy + 32768) >> 16) as u32;
        // uint32 differences reinterpreted as int32, as libvmaf does.
        let sigma1_sq = xx.wrapping_sub(mu1_sq) as i32;
        let sigma2_sq = (yy.wrapping_sub(mu2_sq) as i32).max(0);
        let sigma12 = xy.wrapping_sub(mu1_mu2) as i32;
        if sigma1_sq >= SIGMA_NSQ {
            let den_arg = SIGMA_NSQ.wrapping_add(sigma1_sq) as u32;
            acc.den_log += log2_fixed(table, u64::from(den_arg)) - 2048 * 17;
            if sigma12 > 0 && sigma2_sq > 0 {
                // Double precision, in libvmaf's evaluation order; the gain
                // limit applies only after sv_sq was formed.
                let eps = 65536.0 * 1.0e-10;
                let mut g = f64::from(sigma12) / (f64::from(sigma1_sq) + eps);
                let sv_sq = ((f64::from(sigma2_sq) - g * f64::from(sigma12)) as i32).max(0);
                if egl < g {
                    g = egl;
                }
                let numer1 = (sv_sq as u32).wrapping_add(SIGMA_NSQ as u32);
                let numer1_tmp = (g * g * f64::from(sigma1_sq)) as i64 + i64::from(numer1);
                acc.num_log +=
                    log2_fixed(table, numer1_tmp as u64) - log2_fixed(table, u64::from(numer1));
            }
        } else {
            acc.num_non_log += i64::from(sigma2_sq);
            acc.den_non_log += 1;
        }
    }

    #[test]
    fn two_passes_equal_the_branchy_pixel() {
        let table = log2_table();
        let mut s = 12345u64;
        let mut next = |bits: u32| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) & ((1u64 << bits) - 1)
        };
        let w = 4000;
        let mut mu: [Vec<u32>; 2] = [vec![0; w], vec![0; w]];
        let mut sq: [Vec<u64>; 3] = [vec![0; w], vec![0; w], vec![0; w]];
        for j in 0..w {
            // Means up to 2^24 (their squares >> 32 up to 2^16); second
            // moments around the squared means ± a spread of up to 2^(k+16),
            // k random, so every branch and sign occurs.
            let (m1, m2) = (next(24), next(24));
            mu[0][j] = m1 as u32;
            mu[1][j] = m2 as u32;
            let around = |m: u64, spread: u64, up: bool| {
                let base = (m * m) >> 16;
                if up {
                    base + spread
                } else {
                    base.saturating_sub(spread)
                }
            };
            let k = next(5) as u32;
            sq[0][j] = around(m1, next(k) << 16, next(3) != 0);
            sq[1][j] = around(m2, next(k) << 16, next(3) != 0);
            sq[2][j] = around((m1 * m2).isqrt(), next(k) << 16, next(1) != 0);
        }
        for egl in [1.0, DEFAULT_EGL, MAX_SMALL_GAIN, 1e6] {
            let mut want = VifAccum::default();
            for j in 0..w {
                pixel_branchy(
                    &mut want, &table, egl, mu[0][j], mu[1][j], sq[0][j], sq[1][j], sq[2][j],
                );
            }
            let rounded = sq
                .clone()
                .map(|v| v.iter().map(|&x| ((x + 32768) >> 16) as u32).collect());
            let got = pixels(&table, egl, &mu, &rounded, w, &mut LogArgs::default());
            assert_eq!(got, want, "egl {egl}");
            assert!(want.num_log != 0 && want.den_non_log != 0 && want.den_non_log < w as i64);
        }
    }

    #[test]
    fn split_row_filter_equals_the_64_bit_sum() {
        let mut s = 99u64;
        let v: Vec<u32> = (0..300)
            .map(|i| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                match i % 7 {
                    0 => u32::MAX,
                    1 => 0,
                    2 => 0xFFFF,
                    3 => 0x1_0000,
                    _ => (s >> 32) as u32,
                }
            })
            .collect();
        for filt in VIF_FILTERS {
            let w = v.len() - filt.len() + 1;
            let mut out = vec![0u32; w];
            let mut halves = [vec![0i16; v.len()], vec![0i16; v.len()]];
            let mut sums = [vec![0u32; w], vec![0u32; w]];
            filter_row_u32(&v, filt, &mut halves, &mut sums, &mut out);
            for (j, &o) in out.iter().enumerate() {
                let sum: u64 = (0..filt.len())
                    .map(|k| u64::from(filt[k]) * u64::from(v[j + k]))
                    .sum();
                assert_eq!(
                    u64::from(o),
                    (sum + 32768) >> 16,
                    "taps {}, column {j}",
                    filt.len()
                );
            }
        }
    }

    #[test]
    fn filters_sum_to_one_in_q16() {
        for f in VIF_FILTERS {
            assert_eq!(f.iter().map(|&c| u32::from(c)).sum::<u32>(), 65536);
        }
    }

    #[test]
    fn log2_table_known_values() {
        let t = log2_table();
        assert_eq!(t[32768], 15 * 2048);
        assert_eq!(t[65535], 32768); // log2(65535)·2048 = 32767.96 → 32768
        // log2_fixed reads the top 16 bits: 2^17 → 17·2048.
        assert_eq!(log2_fixed(&t, 1 << 17), 17 * 2048);
        assert_eq!(log2_fixed(&t, (1 << 40) + 12345), 40 * 2048);
    }

    #[test]
    fn identical_flat_images_have_no_information_loss() {
        let (w, h) = (64, 48);
        let img = vec![128u16; w * h];
        let mut vif = Vif::new();
        let s = vif.compute(&img, &img, w, h, 8, DEFAULT_EGL);
        // Flat: every pixel takes the non-log branch with sigma2 = 0, so num = den.
        for scale in 0..4 {
            assert_eq!(s.score(scale), 1.0, "scale {scale}");
        }
    }
}
