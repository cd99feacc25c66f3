//! ADM's decoupling (`integer_adm.c:adm_decouple`, `adm_decouple_s123`):
//! the distorted detail bands split into a restored part (what the reference
//! explains) and an additive part (the impairment).

use crate::extractors::adm::tables::Region;
use crate::extractors::adm::types::Bands;
use crate::extractors::common::grow;

/// (float)cos²(1°), `adm_decouple`.
pub fn cos_1deg_sq() -> f32 {
    let c = (1.0f64 * std::f64::consts::PI / 180.0).cos();
    (c * c) as f32
}

/// `adm_decouple` (scale 0, int16) and `adm_decouple_s123` (int32), over E.
///
/// Row passes (`decouple_rows`) where they vectorise: at scale 0 on every
/// copy, at scales 1..3 on the AVX-512 copy only. There the int64 sums of
/// the angle test are rounded to float (`vcvtqq2ps`) and the reciprocal's
/// variable shift is a 64-bit arithmetic one (`vpsravq`), neither of which
/// AVX2 has: libvmaf's pixel loop, as `decouple_pixelwise`, is faster on
/// the AVX2 and baseline copies (measured on the dev box's Zen 4;
/// docs/history/performance-notebook.md).
pub fn decouple(
    scale: usize,
    rb: &mut Bands,
    db: &mut Bands,
    egl: f64,
    div: &[i32],
    scratch: &mut DecoupleScratch,
) {
    if scale > 0 && crate::core::isa::active() < crate::core::isa::Isa::Avx512 {
        decouple_pixelwise(scale, rb, db, egl, div);
    } else {
        decouple_rows(scale, rb, db, egl, div, scratch);
    }
}

/// [`decouple`] row by row through [`decouple_row_s0`] and
/// [`decouple_row_s123`], on any copy.
fn decouple_rows(
    scale: usize,
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
    grow(&mut scratch.div_o_s123, n);
    grow(&mut scratch.shift, n);
    let gain = Gain::of(egl);
    for i in e.top as usize..e.bottom as usize {
        let at = i * w + cols.start..i * w + cols.end;
        let o = [
            &mut o0[at.clone()],
            &mut o1[at.clone()],
            &mut o2[at.clone()],
        ];
        let t = [
            &mut t0[at.clone()],
            &mut t1[at.clone()],
            &mut t2[at.clone()],
        ];
        let angle = &mut scratch.angle[..n];
        if scale == 0 {
            angle_row::<false>(&o, &t, cos_sq, angle);
            decouple_row_s0(o, t, div, gain, angle, &mut scratch.div_o[..n]);
        } else {
            angle_row::<true>(&o, &t, cos_sq, angle);
            decouple_row_s123(
                o,
                t,
                div,
                gain,
                angle,
                &mut scratch.div_o_s123[..n],
                &mut scratch.shift[..n],
            );
        }
    }
}

/// libvmaf's loop pixel by pixel, for any scale, in place as [`decouple`]:
/// what the row passes are tested against, and what scales 1..3 run
/// below AVX-512.
fn decouple_pixelwise(scale: usize, rb: &mut Bands, db: &mut Bands, egl: f64, div: &[i32]) {
    let (w, h) = (rb.w, rb.hgt);
    let e = Region::extended(w, h);
    let cos_sq = f64::from(cos_1deg_sq());
    let o_b = rb.hvd_mut();
    let t_b = db.hvd_mut();
    crate::core::isa::dispatch(
        #[inline(always)]
        move || {
            for i in e.top..e.bottom {
                for j in e.left..e.right {
                    let at = i as usize * w + j as usize;
                    let (oh, ov) = (i64::from(o_b[0][at]), i64::from(o_b[1][at]));
                    let (th, tv) = (i64::from(t_b[0][at]), i64::from(t_b[1][at]));
                    // libvmaf's int64 sums of two int32 products: only
                    // bands at both ends of int32's range reach 2^63, where
                    // C's int64 wraps, and so do these.
                    let ot_dp = (oh * th).wrapping_add(ov * tv);
                    let o_mag_sq = (oh * oh).wrapping_add(ov * ov);
                    let t_mag_sq = (th * th).wrapping_add(tv * tv);
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

/// Row scratch of [`decouple`].
#[derive(Default)]
pub struct DecoupleScratch {
    angle: Vec<bool>,
    div_o: Vec<i32>,
    div_o_s123: Vec<i32>,
    shift: Vec<u8>,
}

/// `adm_decouple` (scale 0) over one row of E whose angle test
/// ([`angle_row`]) is done, in vectorisable passes: per band a gather of
/// the reciprocal table, then the restored / additive parts. Bands are int16 here, which the integer
/// shortcuts below rely on (each is exact for int16 inputs):
/// - `(div·t + 2^14) >> 15` narrowed to int32 keeps bits 15..46 of the
///   int64 sum, which a logical shift gives as well as an arithmetic one;
/// - `k·o` ≤ 2^30 fits int32;
/// - the float `rst = (k/32768)·(o/64)` is positive exactly when k > 0 and
///   o > 0, negative when k > 0 and o < 0 (its smallest magnitude, 2^-21,
///   is far from underflow), so its sign is taken from the integers;
/// - the enhancement limit's result is in range: see [`Gain::limit`].
///
/// In place: each band's `o` becomes the restored and its `t` the additive
/// part, sample by sample once both are read (the angle test, which reads
/// the h and v bands, ran over the row first).
fn decouple_row_s0(
    o: [&mut [i32]; 3],
    t: [&mut [i32]; 3],
    div: &[i32],
    gain: Gain,
    angle: &[bool],
    div_o: &mut [i32],
) {
    let n = angle.len();
    for (o, t) in o.into_iter().zip(t) {
        let (o, t) = (&mut o[..n], &mut t[..n]);
        for (d, &x) in div_o.iter_mut().zip(&*o) {
            *d = div[(x + 32768) as usize];
        }
        let div_o: &[i32] = &div_o[..n];
        crate::core::isa::dispatch(
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
                    let r0 = i32::from(((k * oj + 16384) >> 15) as i16);
                    let limited = gain.limit(i64::from(r0), i64::from(oj), i64::from(tj)) as i32;
                    let r = if angle[j] && k > 0 && oj != 0 {
                        limited
                    } else {
                        r0
                    };
                    o[j] = r;
                    t[j] = i32::from((tj - r) as i16);
                }
            },
        );
    }
}

/// `adm_decouple_s123` over one row of E (int32 bands) whose angle test is
/// done, in the same passes as [`decouple_row_s0`]: per band the reciprocal
/// of o's top 15 bits with its sign and shift, then the restored / additive
/// parts. `div_o` and `shift` are row scratch.
fn decouple_row_s123(
    o: [&mut [i32]; 3],
    t: [&mut [i32]; 3],
    div: &[i32],
    gain: Gain,
    angle: &[bool],
    div_o: &mut [i32],
    shift: &mut [u8],
) {
    let n = angle.len();
    for (o, t) in o.into_iter().zip(t) {
        let (o, t) = (&mut o[..n], &mut t[..n]);
        for ((d, s), &x) in div_o.iter_mut().zip(shift.iter_mut()).zip(&*o) {
            let abs_o = x.unsigned_abs();
            let (msb, sh) = if abs_o < 32768 {
                (abs_o, 0)
            } else {
                best15_from32(abs_o)
            };
            let v = div[msb as usize + 32768];
            *d = if x < 0 { -v } else { v };
            *s = sh as u8;
        }
        let (div_o, shift) = (&div_o[..n], &shift[..n]);
        // One loop per kind of limit, the kind fixed inside each.
        match gain {
            Gain::Whole(e) => parts_s123(o, t, div_o, shift, angle, move |r, o, t| {
                Gain::Whole(e).limit(r, o, t)
            }),
            Gain::Real(e) => parts_s123(o, t, div_o, shift, angle, move |r, o, t| {
                Gain::Real(e).limit(r, o, t)
            }),
        }
    }
}

/// The restored and additive parts of one band's row at scales 1..3, from
/// the signed reciprocals `div_o` and their shifts; `limit` is the gain
/// limit ([`Gain::limit`]) as a closure so that each kind compiles to its
/// own loop.
#[inline(always)]
fn parts_s123(
    o: &mut [i32],
    t: &mut [i32],
    div_o: &[i32],
    shift: &[u8],
    angle: &[bool],
    limit: impl Fn(i64, i64, i64) -> i64,
) {
    crate::core::isa::dispatch(
        #[inline(always)]
        move || {
            // Every slice cut to one length here, where the loop is
            // compiled, so that it needs no bounds checks and vectorises.
            let n = o.len();
            let (t, div_o, shift, angle) = (&mut t[..n], &div_o[..n], &shift[..n], &angle[..n]);
            for j in 0..n {
                let (oj, tj) = (o[j], t[j]);
                let s = u64::from(shift[j]);
                // (d·t + 2^(14+s)) >> (15+s), as ((d·t >> (14+s)) + 1) >> 1,
                // the variable arithmetic shift through a logical one
                // (x >> s = !(!x >>> s) for negative x), which AVX2 has.
                let x = i64::from(div_o[j]) * i64::from(tj);
                let m = x >> 63;
                let q = (((((x ^ m) as u64) >> (14 + s)) as i64 ^ m) + 1) >> 1;
                let k = if oj == 0 {
                    32768
                } else {
                    q.clamp(0, 32768) as i32
                };
                let r0 = i64::from(((i64::from(k) * i64::from(oj) + 16384) >> 15) as i32);
                let limited = limit(r0, i64::from(oj), i64::from(tj));
                let r = if angle[j] && k > 0 && oj != 0 {
                    limited
                } else {
                    r0
                };
                o[j] = r as i32;
                t[j] = tj.wrapping_sub(r as i32);
            }
        },
    );
}

/// The angle test of one row (`angle.len()` samples of the h and v bands).
/// The dot product and squared magnitudes are rounded once to float, as
/// libvmaf's int64 → float conversion rounds them: at scales 1..3 (`WIDE`,
/// int32 bands) formed in int64; at scale 0 (int16 bands, each product
/// < 2^31 and each sum < 2^32) in double, exact, which every vector unit
/// converts to float (AVX2 has no int64 → float conversion).
#[inline(always)]
fn angle_row<const WIDE: bool>(
    o: &[&mut [i32]; 3],
    t: &[&mut [i32]; 3],
    cos_sq: f64,
    angle: &mut [bool],
) {
    let n = angle.len();
    let [oh, ov, th, tv] = [&*o[0], &*o[1], &*t[0], &*t[1]].map(|b| &b[..n]);
    crate::core::isa::dispatch(
        #[inline(always)]
        move || {
            for j in 0..n {
                let sums = |a: i32, b: i32, c: i32, d: i32| -> f32 {
                    if WIDE {
                        // int64 as libvmaf's, wrapping where it does (see
                        // `decouple_pixelwise`).
                        (i64::from(a) * i64::from(b)).wrapping_add(i64::from(c) * i64::from(d))
                            as f32
                    } else {
                        (f64::from(a) * f64::from(b) + f64::from(c) * f64::from(d)) as f32
                    }
                };
                let ot_dp = sums(oh[j], th[j], ov[j], tv[j]);
                let o_mag_sq = sums(oh[j], oh[j], ov[j], ov[j]);
                let t_mag_sq = sums(th[j], th[j], tv[j], tv[j]);
                angle[j] = angle_holds(ot_dp, o_mag_sq, t_mag_sq, cos_sq);
            }
        },
    );
}

/// libvmaf's angle test: `dp ≥ 0` and `dp² ≥ cos²(1°)·|o|²·|t|²`, from the
/// three sums already rounded to float, in double and scaled by 1/4096.
#[inline(always)]
fn angle_holds(ot_dp: f32, o_mag_sq: f32, t_mag_sq: f32, cos_sq: f64) -> bool {
    let dp = f64::from(ot_dp) / 4096.0;
    dp >= 0.0 && dp * dp >= cos_sq * (f64::from(o_mag_sq) / 4096.0) * (f64::from(t_mag_sq) / 4096.0)
}

/// The enhancement gain limit `egl` as the decoupling applies it.
#[derive(Clone, Copy)]
enum Gain {
    /// A whole number (libvmaf's 100 and VMAF v1's 1.0): the limit in
    /// integers.
    Whole(i64),
    /// Any other value, in double as libvmaf.
    Real(f64),
}

impl Gain {
    fn of(egl: f64) -> Gain {
        if egl.fract() == 0.0 && (0.0..=65536.0).contains(&egl) {
            Gain::Whole(egl as i64)
        } else {
            Gain::Real(egl)
        }
    }

    /// libvmaf's `MIN(r·egl, t)` where the restored part is positive
    /// (o > 0), `MAX(r·egl, t)` where it is negative, truncated to an
    /// integer. For o > 0 the restored `r` is ≥ 0 and so is `r·egl`, so the
    /// result lies between min(0, t) and t; for o < 0 between t and
    /// max(0, t): always in t's range, so no narrowing cast saturates, and
    /// a whole `egl` gives the same integer in integer arithmetic (|r·egl|
    /// < 2^48, exact in double too). The caller uses the result only where
    /// k > 0 and o ≠ 0. `r` is a restored sample, so within int32.
    #[inline(always)]
    fn limit(self, r: i64, o: i64, t: i64) -> i64 {
        match self {
            Gain::Whole(e) => {
                // |r| < 2^31 and e ≤ 2^16: a product of two int32s (which
                // vectorises where a full int64 product does not).
                let s = i64::from(r as i32) * i64::from(e as i32);
                let (lo, hi) = (s.min(t), s.max(t));
                if o > 0 { lo } else { hi }
            }
            Gain::Real(e) => {
                let s = r as f64 * e;
                let t = t as f64;
                let m = if o > 0 { s.min_c(t) } else { s.max_c(t) };
                m as i64
            }
        }
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
    use crate::extractors::adm::tables::div_lookup;

    /// Reference and distorted bands: extremes, zeros, random values, and
    /// distorted samples that follow the reference (so that the angle test
    /// passes) with a gain from 0.25 to 2. Int16 values, or with `wide` the
    /// int32 values of scales 1..3 (up to ±2^31, both sides of the 2^15
    /// where the reciprocal's argument is rounded to 15 bits).
    fn band_pair(w: usize, h: usize, seed: u64, wide: bool) -> (Bands, Bands) {
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
        let (lo, hi) = if wide {
            (i32::MIN, i32::MAX)
        } else {
            (-32768, 32767)
        };
        for band in 0..3 {
            for at in 0..w * h {
                let random = |next: &mut dyn FnMut() -> i32| {
                    if wide {
                        // Magnitudes spread over every bit length.
                        let bits = next() % 32;
                        let v = (i64::from(next()) << 2) & ((1i64 << bits) - 1);
                        (if next() % 2 == 0 { v } else { -v }) as i32
                    } else {
                        next() % 65536 - 32768
                    }
                };
                let o = match next() % 6 {
                    0 => 0,
                    1 => lo,
                    2 => hi,
                    _ => random(&mut next),
                };
                let t = if next() % 2 == 0 {
                    (i64::from(o) * i64::from(1 + next() % 8) / 4 + i64::from(next() % 64 - 32))
                        .clamp(i64::from(lo), i64::from(hi)) as i32
                } else {
                    random(&mut next)
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

    /// The row passes against libvmaf's pixel loop, at scale 0 (int16) and
    /// scales 1..3 (int32), for whole and fractional gain limits, with every
    /// instruction-set copy this CPU runs.
    #[test]
    fn rows_equal_the_pixelwise_loop() {
        let div = div_lookup();
        let _forced = crate::core::isa::FORCED
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let before = crate::core::isa::active();
        for isa in crate::core::isa::copies() {
            assert!(crate::core::isa::force(isa));
            for scale in 0..4 {
                for (w, h, seed) in [(3, 3, 1), (9, 5, 2), (17, 9, 3), (64, 40, 4), (131, 21, 5)] {
                    let (rb, db) = band_pair(w, h, seed + scale as u64 * 7, scale > 0);
                    for egl in [1.0, 1.5, 100.0] {
                        let mut slow = (rb.clone(), db.clone());
                        decouple_pixelwise(scale, &mut slow.0, &mut slow.1, egl, &div);
                        // The row passes on every copy, and what `decouple`
                        // picks for this copy.
                        let mut rows = (rb.clone(), db.clone());
                        let mut picked = (rb.clone(), db.clone());
                        let mut scratch = DecoupleScratch::default();
                        decouple_rows(scale, &mut rows.0, &mut rows.1, egl, &div, &mut scratch);
                        decouple(scale, &mut picked.0, &mut picked.1, egl, &div, &mut scratch);
                        for (fast, how) in [(rows, "rows"), (picked, "decouple")] {
                            let what = format!("{how}, {isa:?} scale {scale}, {w}x{h}, egl {egl}");
                            assert_eq!(fast.0.hvd(), slow.0.hvd(), "restored, {what}");
                            assert_eq!(fast.1.hvd(), slow.1.hvd(), "additive, {what}");
                            // Outside the region the bands are untouched.
                            assert_eq!(fast.0.a, rb.a);
                        }
                    }
                }
            }
        }
        crate::core::isa::force(before);
    }
}
