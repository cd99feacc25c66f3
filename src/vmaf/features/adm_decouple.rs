//! ADM's decoupling (`integer_adm.c:adm_decouple`, `adm_decouple_s123`):
//! the distorted detail bands split into a restored part (what the reference
//! explains) and an additive part (the impairment).

use super::adm::Bands;
use super::adm_tables::Region;
use super::grow;

/// (float)cos²(1°), `adm_decouple`.
pub fn cos_1deg_sq() -> f32 {
    let c = (1.0f64 * std::f64::consts::PI / 180.0).cos();
    (c * c) as f32
}

/// `adm_decouple` (scale 0, int16) and `adm_decouple_s123` (int32), over E.
#[allow(clippy::too_many_arguments)]
pub fn decouple(
    scale: usize,
    rb: &mut Bands,
    db: &mut Bands,
    egl: f64,
    div: &[i32],
    scratch: &mut DecoupleScratch,
) {
    if scale == 0 {
        decouple_s0(rb, db, egl, div, scratch);
    } else {
        decouple_pixelwise(scale, rb, db, egl, div);
    }
}

/// Scale 0, row by row through [`decouple_row_s0`].
fn decouple_s0(
    rb: &mut Bands,
    db: &mut Bands,
    egl: f64,
    div: &[i32],
    scratch: &mut DecoupleScratch,
) {
    let (w, h) = (rb.w, rb.hgt);
    let e = Region::extended(w, h);
    let cos_sq = f64::from(cos_1deg_sq());
    let [o0, o1, o2] = rb.hvd_mut();
    let [t0, t1, t2] = db.hvd_mut();
    let cols = e.left as usize..e.right as usize;
    let n = cols.len();
    grow(&mut scratch.angle, n);
    grow(&mut scratch.div_o, n);
    for i in e.top as usize..e.bottom as usize {
        let at = i * w + cols.start..i * w + cols.end;
        decouple_row_s0(
            [
                &mut o0[at.clone()],
                &mut o1[at.clone()],
                &mut o2[at.clone()],
            ],
            [
                &mut t0[at.clone()],
                &mut t1[at.clone()],
                &mut t2[at.clone()],
            ],
            div,
            egl,
            cos_sq,
            &mut scratch.angle[..n],
            &mut scratch.div_o[..n],
        );
    }
}

/// libvmaf's loop pixel by pixel, for any scale, in place as [`decouple`].
/// Scales 1..3 (int32 bands) run it; at scale 0 it is what the row passes
/// are tested against.
fn decouple_pixelwise(scale: usize, rb: &mut Bands, db: &mut Bands, egl: f64, div: &[i32]) {
    let (w, h) = (rb.w, rb.hgt);
    let e = Region::extended(w, h);
    let cos_sq = f64::from(cos_1deg_sq());
    let o_b = rb.hvd_mut();
    let t_b = db.hvd_mut();
    crate::isa::dispatch(
        #[inline(always)]
        move || {
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
                        // Band θ's o and t at `at` are read above and
                        // nowhere after: overwrite them.
                        o_b[theta][at] = r as i32;
                        let a = i64::from(t) - r;
                        t_b[theta][at] = if scale == 0 {
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
///
/// In place: each band's `o` becomes the restored and its `t` the additive
/// part, sample by sample once both are read (the angle test, which reads
/// the h and v bands, runs over the row first).
fn decouple_row_s0(
    o: [&mut [i32]; 3],
    t: [&mut [i32]; 3],
    div: &[i32],
    egl: f64,
    cos_sq: f64,
    angle: &mut [bool],
    div_o: &mut [i32],
) {
    let n = angle.len();
    let [oh, ov, _] = [&*o[0], &*o[1], &*o[2]].map(|b| &b[..n]);
    let [th, tv, _] = [&*t[0], &*t[1], &*t[2]].map(|b| &b[..n]);
    let angle_out = &mut *angle;
    crate::isa::dispatch(
        #[inline(always)]
        move || {
            for j in 0..n {
                let f = |x: i32| f64::from(x);
                let ot_dp = f(oh[j]) * f(th[j]) + f(ov[j]) * f(tv[j]);
                let o_mag_sq = f(oh[j]) * f(oh[j]) + f(ov[j]) * f(ov[j]);
                let t_mag_sq = f(th[j]) * f(th[j]) + f(tv[j]) * f(tv[j]);
                let dp = f64::from(ot_dp as f32) / 4096.0;
                angle_out[j] = dp >= 0.0
                    && dp * dp
                        >= cos_sq
                            * (f64::from(o_mag_sq as f32) / 4096.0)
                            * (f64::from(t_mag_sq as f32) / 4096.0);
            }
        },
    );
    let angle: &[bool] = angle;
    for (o, t) in o.into_iter().zip(t) {
        let (o, t) = (&mut o[..n], &mut t[..n]);
        for (d, &x) in div_o.iter_mut().zip(&*o) {
            *d = div[(x + 32768) as usize];
        }
        let div_o: &[i32] = &div_o[..n];
        crate::isa::dispatch(
            #[inline(always)]
            move || {
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
                    o[j] = r;
                    t[j] = i32::from((tj - r) as i16);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vmaf::features::adm_tables::div_lookup;

    /// Reference and distorted int16 bands: extremes, zeros, random values,
    /// and distorted samples that follow the reference (so that the angle
    /// test passes) with a gain from 0.25 to 2.
    fn band_pair(w: usize, h: usize, seed: u64) -> (Bands, Bands) {
        let (mut rb, mut db) = (Bands::default(), Bands::default());
        rb.resize(w, h);
        db.resize(w, h);
        let mut s = seed;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) as i32
        };
        for band in 0..3 {
            for at in 0..w * h {
                let o = match next() % 6 {
                    0 => 0,
                    1 => -32768,
                    2 => 32767,
                    _ => next() % 65536 - 32768,
                };
                let t = if next() % 2 == 0 {
                    (o * (1 + next() % 8) / 4 + next() % 64 - 32).clamp(-32768, 32767)
                } else {
                    next() % 65536 - 32768
                };
                let (rv, dv) = match band {
                    0 => (&mut rb.h, &mut db.h),
                    1 => (&mut rb.v, &mut db.v),
                    _ => (&mut rb.d, &mut db.d),
                };
                rv[at] = o;
                dv[at] = t;
            }
        }
        (rb, db)
    }

    #[test]
    fn best15_rounds_top_bits() {
        assert_eq!(best15_from32(65535), (32768, 1));
        assert_eq!(best15_from32(1 << 20), (1 << 14, 6));
    }

    #[test]
    fn scale0_rows_equal_the_pixelwise_loop() {
        let div = div_lookup();
        for (w, h, seed) in [(3, 3, 1), (9, 5, 2), (17, 9, 3), (64, 40, 4), (131, 21, 5)] {
            let (rb, db) = band_pair(w, h, seed);
            for egl in [1.0, 100.0] {
                let mut fast = (rb.clone(), db.clone());
                let mut slow = (rb.clone(), db.clone());
                let mut scratch = DecoupleScratch::default();
                decouple(0, &mut fast.0, &mut fast.1, egl, &div, &mut scratch);
                decouple_pixelwise(0, &mut slow.0, &mut slow.1, egl, &div);
                assert_eq!(fast.0.hvd(), slow.0.hvd(), "restored, {w}x{h} egl {egl}");
                assert_eq!(fast.1.hvd(), slow.1.hvd(), "additive, {w}x{h} egl {egl}");
                // Outside the region the bands are untouched.
                assert_eq!(fast.0.a, rb.a);
            }
        }
    }
}
