//! ADM's contrast sensitivity weighting, contrast masking and reference
//! denominator (`integer_adm.c:adm_csf`, `adm_cm`, `adm_csf_den_*`): the
//! integer sums and their float finish.

use crate::extractors::adm::tables::{
    Region, ceil_log2_minus, half_of_pow2, pow2_unsigned, rfactors, rfactors_s123_fixed,
    rfactors_scale0_fixed,
};
#[cfg(test)]
#[cfg(test)]
use crate::extractors::adm::types::Triple;
use crate::extractors::adm::types::{AdmParams, Bands};
use crate::extractors::common::grow;

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
/// `adm_csf_den.hip`.
pub fn csf_den_sums(scale: usize, bands: &[&[i32]; 3], w: usize, h: usize) -> [u64; 3] {
    crate::core::isa::dispatch(
        #[inline(always)]
        move || {
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
    let rf = rfactors(scale, p);
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

/// libvmaf's CSF of one sample and what the masking takes from it, per
/// scale and band: the weighted value `y` (`adm_csf` / `i4_adm_csf`), its
/// neighbour term ≈ |y|/30 (the `flt` band libvmaf stores) and its centre
/// term ≈ |y|/15 (`adm_cm`'s `thr` start).
#[derive(Clone, Copy)]
struct CsfTerms {
    /// Scale 0's fixed-point factor, rounding and shift for this band.
    rf0: i32,
    add0: i32,
    shift0: u32,
    /// Scales 1..3: this band's factor.
    rf123: i64,
}

impl CsfTerms {
    fn new(scale: usize, theta: usize, p: &AdmParams) -> CsfTerms {
        const SHIFT: [u32; 3] = [15, 15, 17];
        const ADD: [i32; 3] = [16384, 16384, 65535];
        CsfTerms {
            rf0: rfactors_scale0_fixed(p)[theta],
            add0: ADD[theta],
            shift0: SHIFT[theta],
            rf123: if scale == 0 {
                0
            } else {
                i64::from(rfactors_s123_fixed(scale, p)[theta])
            },
        }
    }

    /// The CSF-weighted sample (`S0`: at scale 0).
    #[inline(always)]
    fn y<const S0: bool>(self, x: i32) -> i32 {
        if S0 {
            i32::from((self.rf0.wrapping_mul(x).wrapping_add(self.add0) >> self.shift0) as i16)
        } else {
            ((self.rf123 * i64::from(x) + (1 << 27)) >> 28) as i32
        }
    }

    /// The neighbour term of a weighted sample (libvmaf's `flt` band), ≈ |y|/30.
    #[inline(always)]
    fn neighbour<const S0: bool>(y: i32) -> i32 {
        Self::abs_fraction::<S0>(y, 4369, 143165577)
    }

    /// The centre term of a weighted sample, ≈ |y|/15.
    #[inline(always)]
    fn centre<const S0: bool>(y: i32) -> i32 {
        Self::abs_fraction::<S0>(y, 8738, 286331153)
    }

    /// |y| times a fixed-point fraction: Q12 at scale 0, narrowed to int16;
    /// Q32 at scales 1..3, where libvmaf's +2^31 rounding lives in an int32
    /// and is −2^31.
    #[inline(always)]
    fn abs_fraction<const S0: bool>(y: i32, q12: i32, q32: i64) -> i32 {
        if S0 {
            i32::from(((q12 * y.abs() + 2048) >> 12) as i16)
        } else {
            ((q32 * i64::from(y.wrapping_abs()) - (1i64 << 31)) >> 32) as i32
        }
    }
}

/// `adm_csf` / `i4_adm_csf` over E: `y` = CSF-weighted band, `flt` ≈ |y|/30,
/// as libvmaf stores them ([`cm_sums`] forms them as it goes instead; this
/// is what its tests compare with).
#[cfg(test)]
pub fn csf(
    scale: usize,
    src: &[&[i32]; 3],
    w: usize,
    h: usize,
    p: &AdmParams,
    y: &mut Triple,
    flt: &mut Triple,
) {
    let e = Region::extended(w, h);
    for (theta, (y_band, f_band)) in y.0.iter_mut().zip(&mut flt.0).enumerate() {
        let terms = CsfTerms::new(scale, theta, p);
        for i in e.top as usize..e.bottom as usize {
            for j in e.left as usize..e.right as usize {
                let x = src[theta][i * w + j];
                let (yy, f) = if scale == 0 {
                    let yy = terms.y::<true>(x);
                    (yy, CsfTerms::neighbour::<true>(yy))
                } else {
                    let yy = terms.y::<false>(x);
                    (yy, CsfTerms::neighbour::<false>(yy))
                };
                y_band[i * w + j] = yy;
                f_band[i * w + j] = f;
            }
        }
    }
}

/// `adm_csf` then `adm_cm` / `i4_adm_cm`: contrast masking of `src` by the
/// CSF of the `other` part, summed over C.
#[allow(clippy::too_many_arguments)]
pub fn cm(
    scale: usize,
    src: &[&[i32]; 3],
    other: &[&[i32]; 3],
    w: usize,
    h: usize,
    p: &AdmParams,
    noise_weight: f64,
    scratch: &mut CmScratch,
) -> f32 {
    let sums = cm_sums(scale, src, other, w, h, p, scratch);
    cm_finish(scale, sums, w, h, noise_weight)
}

/// Scratch of [`cm_sums`], sized once per band size.
#[derive(Default)]
pub struct CmScratch {
    /// Σθ of the three bands' neighbour terms, over E.
    nbr_sum: Vec<i32>,
    /// Σθ of the three bands' centre terms, over C.
    centre_sum: Vec<i32>,
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
/// C. The CPU twin of the CSF in `adm_decouple_csf` (`adm_decouple.hip`)
/// and of `adm_cm` (`adm_cm.hip`).
///
/// Two passes share the scratch planes: the CSF-weighted sum planes over E
/// ([`csf_pass`]), then, per row of C, the box's thresholds
/// ([`threshold_row`]) and each band's masked cube sum ([`masked_cubes`]),
/// each loop body dispatched whole to the SIMD copies.
///
/// libvmaf's threshold at a pixel is Σθ (the 8 neighbours of band θ's
/// |y|/30 + the centre term of band θ's y), y being band θ of `other`
/// weighted by the CSF, in wrapping int32. Wrapping addition is associative
/// and commutative, so the same number is formed here as Σθ over a 3×3 box
/// minus the centre, from one plane of Σθ: column sums of three rows, then
/// three columns. The neighbour mirror (−1 reads 1, n reads n−1) is applied
/// to those rows and columns. The CSF is applied as the sums are formed, in
/// one pass over E (libvmaf's `adm_csf` region, which holds every
/// neighbour the box reads), where libvmaf stores the weighted bands and
/// their |y|/30 first: two planes here instead of six.
#[allow(clippy::too_many_arguments)]
pub fn cm_sums(
    scale: usize,
    src: &[&[i32]; 3],
    other: &[&[i32]; 3],
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
    let add_inner = half_of_pow2(sh.shift_inner);
    let CmScratch {
        nbr_sum,
        centre_sum,
        col,
        thr,
    } = scratch;
    grow(nbr_sum, w * h);
    grow(centre_sum, w * h);
    grow(col, w + 2);
    grow(thr, w);
    let terms: [CsfTerms; 3] = std::array::from_fn(|theta| CsfTerms::new(scale, theta, p));
    csf_pass(scale, &terms, other, (w, h), &rows, (nbr_sum, centre_sum));
    // The box's columns: C widened by one each side, mirrored into the band.
    let box_cols = cols.start.saturating_sub(1)..(cols.end + 1).min(w);
    let add_cub = sh.shift_cub.map(half_of_pow2);
    let mut acc = [0i64; 3];
    for i in rows {
        let at = i * w;
        let (up, dn) = (my(i as isize - 1) * w, my(i as isize + 1) * w);
        let sums = (&nbr_sum[..], &centre_sum[..]);
        let (col, thr_out) = (&mut col[..w + 2], &mut thr[..w]);
        let (box_cols, c_cols) = (box_cols.clone(), cols.clone());
        crate::core::isa::dispatch(
            #[inline(always)]
            move || threshold_row(sums, w, [up, at, dn], (box_cols, c_cols), col, thr_out),
        );
        let thr: &[i32] = &*thr;
        for theta in 0..3 {
            let x_row = &src[theta][at + cols.start..at + cols.end];
            let t_row = &thr[cols.clone()];
            let cube = (sh.shift_cub[theta], add_cub[theta]);
            let inner = crate::core::isa::dispatch(
                #[inline(always)]
                move || masked_cubes(scale, theta, &terms, x_row, t_row, cube),
            );
            acc[theta] = acc[theta].wrapping_add(inner.wrapping_add(add_inner) >> sh.shift_inner);
        }
    }
    acc
}

/// [`cm_sums`]' first pass: over E, Σθ of the CSF-weighted neighbour terms
/// into `nbr_sum`, and, on C's rows, Σθ of the centre terms into
/// `centre_sum`.
fn csf_pass(
    scale: usize,
    terms: &[CsfTerms; 3],
    other: &[&[i32]; 3],
    (w, h): (usize, usize),
    rows: &std::ops::Range<usize>,
    (nbr_sum, centre_sum): (&mut [i32], &mut [i32]),
) {
    let e = Region::extended(w, h);
    for i in e.top as usize..e.bottom as usize {
        let at = i * w + e.left as usize..i * w + e.right as usize;
        let in_c = rows.contains(&i);
        let (n_out, c_out) = (&mut nbr_sum[at.clone()], &mut centre_sum[at.clone()]);
        let bands = other.map(|b| &b[at.clone()]);
        crate::core::isa::dispatch(
            #[inline(always)]
            move || match (scale == 0, in_c) {
                (true, true) => csf_sums::<true, true>(terms, bands, n_out, c_out),
                (true, false) => csf_sums::<true, false>(terms, bands, n_out, c_out),
                (false, true) => csf_sums::<false, true>(terms, bands, n_out, c_out),
                (false, false) => csf_sums::<false, false>(terms, bands, n_out, c_out),
            },
        );
    }
}

/// One row of thresholds over C's columns: the 3×3 box of the neighbour
/// sums (rows `up`, `mid`, `dn`, mirrored), less its centre, plus the
/// centre terms. `col[j + 1]` holds column j's three-row sum.
#[inline(always)]
fn threshold_row(
    (nbr_sum, centre_sum): (&[i32], &[i32]),
    w: usize,
    [up, mid, dn]: [usize; 3],
    (box_cols, cols): (std::ops::Range<usize>, std::ops::Range<usize>),
    col: &mut [i32],
    thr_out: &mut [i32],
) {
    let (su, sm, sd) = (
        &nbr_sum[up..][..w],
        &nbr_sum[mid..][..w],
        &nbr_sum[dn..][..w],
    );
    for j in box_cols {
        col[j + 1] = su[j].wrapping_add(sm[j]).wrapping_add(sd[j]);
    }
    // Column −1 reads column 1, column w reads w−1.
    if cols.start == 0 {
        col[0] = col[2.min(w)];
    }
    if cols.end == w {
        col[w + 1] = col[w];
    }
    let (left, mid_col, right) = (
        &col[cols.start..cols.end],
        &col[cols.start + 1..cols.end + 1],
        &col[cols.start + 2..cols.end + 2],
    );
    let (sm, cs) = (&sm[cols.clone()], &centre_sum[mid..][cols.clone()]);
    let out = &mut thr_out[cols];
    for j in 0..out.len() {
        let boxed = left[j].wrapping_add(mid_col[j]).wrapping_add(right[j]);
        out[j] = boxed.wrapping_sub(sm[j]).wrapping_add(cs[j]);
    }
}

/// Band `theta`'s masked cube sum over one row of C: Σ cube(max(|x| − t,
/// 0)), x the band's CSF-weighted sample and t the threshold, in libvmaf's
/// int64 accumulator (it wraps only for bands at int32's extremes, the
/// tests' edge cases, as C's does).
#[inline(always)]
fn masked_cubes(
    scale: usize,
    theta: usize,
    terms: &[CsfTerms; 3],
    x_row: &[i32],
    t_row: &[i32],
    (shift_cub, add_cub): (u32, i64),
) -> i64 {
    let mut sum = 0i64;
    if scale == 0 {
        const SUB: [u32; 3] = [10, 10, 12];
        const SQ_SHIFT: [u32; 3] = [29, 29, 30];
        // libvmaf weights the sample here without the CSF's shift (the
        // threshold is shifted up by `sub`).
        let (rf, sub, sq) = (terms[theta].rf0, SUB[theta], SQ_SHIFT[theta]);
        for (&s, &t) in x_row.iter().zip(t_row) {
            let x = s.wrapping_mul(rf);
            let u = x.wrapping_abs().wrapping_sub(t.wrapping_shl(sub)).max(0);
            sum = sum.wrapping_add(cube_term(u, sq, add_cub, shift_cub));
        }
    } else {
        let csf = terms[theta];
        for (&s, &t) in x_row.iter().zip(t_row) {
            let x = csf.y::<false>(s);
            let u = x.wrapping_abs().wrapping_sub(t).max(0);
            sum = sum.wrapping_add(cube_term(u, 30, add_cub, shift_cub));
        }
    }
    sum
}

/// One row of [`cm_sums`]'s CSF pass: Σθ of the neighbour terms into
/// `nbr`, and with `CENTRE` Σθ of the centre terms into `centre`. `S0` is
/// scale 0: both are compile-time so that each case is one straight loop
/// (which vectorises).
#[inline(always)]
fn csf_sums<const S0: bool, const CENTRE: bool>(
    terms: &[CsfTerms; 3],
    bands: [&[i32]; 3],
    nbr: &mut [i32],
    centre: &mut [i32],
) {
    let n = nbr.len();
    let [b0, b1, b2] = bands.map(|b| &b[..n]);
    let centre = &mut centre[..n];
    for j in 0..n {
        let y = [
            terms[0].y::<S0>(b0[j]),
            terms[1].y::<S0>(b1[j]),
            terms[2].y::<S0>(b2[j]),
        ];
        nbr[j] = CsfTerms::neighbour::<S0>(y[0])
            .wrapping_add(CsfTerms::neighbour::<S0>(y[1]))
            .wrapping_add(CsfTerms::neighbour::<S0>(y[2]));
        if CENTRE {
            centre[j] = CsfTerms::centre::<S0>(y[0])
                .wrapping_add(CsfTerms::centre::<S0>(y[1]))
                .wrapping_add(CsfTerms::centre::<S0>(y[2]));
        }
    }
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
    use crate::extractors::common::test_samples as band;

    /// libvmaf's threshold at pixel (i, j), written directly: the 8
    /// neighbours of each band, mirrored at the edges (−1 reads 1, n reads
    /// n−1), and the centre term.
    fn direct_threshold(
        scale: usize,
        centre: &[&[i32]; 3],
        nbr: &[&[i32]; 3],
        (w, h): (usize, usize),
        (i, j): (i32, i32),
    ) -> i32 {
        let (wi, hi) = (w as i32, h as i32);
        let mirror = |v: i32, n: i32| -> usize {
            (if v < 0 {
                -v
            } else if v >= n {
                n - 1
            } else {
                v
            }) as usize
        };
        let mut thr = 0i32;
        let interior = i > 0 && j > 0 && i < hi - 1 && j < wi - 1;
        for theta in 0..3 {
            let f = nbr[theta];
            let mut sum = 0i32;
            if interior {
                let c = i as usize * w + j as usize;
                for o in [
                    c - w - 1,
                    c - w,
                    c - w + 1,
                    c - 1,
                    c + 1,
                    c + w - 1,
                    c + w,
                    c + w + 1,
                ] {
                    sum = sum.wrapping_add(f[o]);
                }
            } else {
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        if dy == 0 && dx == 0 {
                            continue;
                        }
                        sum = sum.wrapping_add(f[mirror(i + dy, hi) * w + mirror(j + dx, wi)]);
                    }
                }
            }
            let yc = centre[theta][i as usize * w + j as usize];
            let centre_term = if scale == 0 {
                i32::from(((8738 * yc.abs() + 2048) >> 12) as i16)
            } else {
                ((286331153i64 * i64::from(yc.wrapping_abs()) - (1i64 << 31)) >> 32) as i32
            };
            thr = thr.wrapping_add(sum.wrapping_add(centre_term));
        }
        thr
    }

    /// libvmaf's masking loop written directly, each pixel's threshold from
    /// [`direct_threshold`]. Kept literal on purpose: it is the reference
    /// `cm_sums` is held to, so it should read like libvmaf's loop, not like
    /// our code.
    fn cm_sums_direct(
        scale: usize,
        src: &[&[i32]; 3],
        centre: &[&[i32]; 3],
        nbr: &[&[i32]; 3],
        w: usize,
        h: usize,
        p: &AdmParams,
    ) -> [i64; 3] {
        let c = Region::core(w, h);
        let rows = c.top.max(0)..c.bottom.min(h as i32);
        let cols = c.left.max(0)..c.right.min(w as i32);
        let sh = CmShifts::new(scale, w, h);
        let shift_inner = sh.shift_inner;
        let add_inner = half_of_pow2(shift_inner);
        let thr_at = |i: i32, j: i32| direct_threshold(scale, centre, nbr, (w, h), (i, j));

        let mut acc = [0i64; 3];
        if scale == 0 {
            let rf = rfactors_scale0_fixed(p);
            let shift_cub = sh.shift_cub;
            let add_cub = shift_cub.map(half_of_pow2);
            const SUB: [u32; 3] = [10, 10, 12];
            const SQ_SHIFT: [u32; 3] = [29, 29, 30];
            for i in rows {
                let mut inner = [0i64; 3];
                for j in cols.clone() {
                    let thr = thr_at(i, j);
                    let at = i as usize * w + j as usize;
                    for theta in 0..3 {
                        let x = src[theta][at].wrapping_mul(rf[theta]);
                        let u =
                            (x.wrapping_abs().wrapping_sub(thr.wrapping_shl(SUB[theta]))).max(0);
                        let u64v = i64::from(u);
                        let u2 = ((u64v * u64v + (1i64 << (SQ_SHIFT[theta] - 1)))
                            >> SQ_SHIFT[theta]) as i32;
                        inner[theta] = inner[theta].wrapping_add(
                            (i64::from(u2) * u64v + add_cub[theta]) >> shift_cub[theta],
                        );
                    }
                }
                for theta in 0..3 {
                    acc[theta] = acc[theta]
                        .wrapping_add(inner[theta].wrapping_add(add_inner) >> shift_inner);
                }
            }
        } else {
            let rf = rfactors_s123_fixed(scale, p);
            let shift_cub = sh.shift_cub[0];
            let add_cub = half_of_pow2(shift_cub);
            for i in rows {
                let mut inner = [0i64; 3];
                for j in cols.clone() {
                    let thr = thr_at(i, j);
                    let at = i as usize * w + j as usize;
                    for theta in 0..3 {
                        let x = ((i64::from(src[theta][at]) * i64::from(rf[theta]) + (1 << 27))
                            >> 28) as i32;
                        let u = (x.wrapping_abs().wrapping_sub(thr)).max(0);
                        let u64v = i64::from(u);
                        let u2 = ((u64v * u64v + (1i64 << 29)) >> 30) as i32;
                        inner[theta] = inner[theta]
                            .wrapping_add((i64::from(u2) * u64v + add_cub) >> shift_cub);
                    }
                }
                for theta in 0..3 {
                    acc[theta] = acc[theta]
                        .wrapping_add(inner[theta].wrapping_add(add_inner) >> shift_inner);
                }
            }
        }
        acc
    }

    /// The planes [`cm_sums`] forms cover E only (where libvmaf's CSF
    /// writes): every row and column its 3x3 box reads, mirrored at the
    /// band's edges, must lie in E, at every band size (else it would read
    /// another scale's leftovers). Bands are at least 3 samples (scale 3 of
    /// the smallest frame, 33).
    #[test]
    fn the_box_reads_only_inside_e() {
        for n in 3..=2200usize {
            let (c, e) = (Region::core(n, n), Region::extended(n, n));
            let mirror = |y: isize| -> isize {
                if y < 0 {
                    -y
                } else if y >= n as isize {
                    n as isize - 1
                } else {
                    y
                }
            };
            let inside = c.top.max(0) as isize..c.bottom.min(n as i32) as isize;
            for i in inside.clone() {
                for d in -1..=1 {
                    let m = mirror(i + d);
                    assert!(
                        (e.top as isize..e.bottom as isize).contains(&m),
                        "band size {n}: sample {i}{d:+} reads {m}, outside E {}..{}",
                        e.top,
                        e.bottom
                    );
                }
            }
            // C lies in E (its centre terms are formed on E's columns).
            if !inside.is_empty() {
                assert!(e.top as isize <= inside.start && inside.end <= e.bottom as isize);
            }
        }
    }

    #[test]
    fn box_sums_equal_the_direct_neighbour_loop() {
        let p = AdmParams::default();
        // The band sizes of the smallest frames (33 samples → 17, 9, 5, 3)
        // and some larger ones.
        for (w, h) in [(3, 3), (5, 3), (9, 5), (17, 9), (31, 17), (64, 36)] {
            for scale in 0..4 {
                let (lo, hi) = if scale == 0 {
                    (-32768, 32767)
                } else {
                    (i32::MIN, i32::MAX)
                };
                let src: [Vec<i32>; 3] = std::array::from_fn(|b| band(w * h, lo, hi, b as u64));
                let other: [Vec<i32>; 3] =
                    std::array::from_fn(|b| band(w * h, lo, hi, 10 + b as u64));
                let (mut y, mut flt) = (Triple::default(), Triple::default());
                y.resize(w * h);
                flt.resize(w * h);
                let other_refs = [&other[0][..], &other[1][..], &other[2][..]];
                csf(scale, &other_refs, w, h, &p, &mut y, &mut flt);
                let src_refs = [&src[0][..], &src[1][..], &src[2][..]];
                let (y_refs, f_refs) = (y.refs(), flt.refs());
                let mut scratch = CmScratch::default();
                let fast = cm_sums(scale, &src_refs, &other_refs, w, h, &p, &mut scratch);
                let slow = cm_sums_direct(scale, &src_refs, &y_refs, &f_refs, w, h, &p);
                assert_eq!(fast, slow, "{w}x{h} scale {scale}");
            }
        }
    }
}
