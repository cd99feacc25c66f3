//! ADM's hand-written SIMD: the AVX2 and AVX-512 bodies of the scale-0
//! DWT's vertical and horizontal passes, chosen at run time by the CPU's
//! instruction sets (`crate::core::isa`). Each entry point does the leading
//! columns it can and returns how far it got; the caller's portable loop
//! does the rest, so every copy gives the same numbers (`dwt.rs` checks
//! each copy the CPU has).

use crate::core::isa::{Isa, active};
#[cfg(target_arch = "x86_64")]
use crate::core::isa::{tap_pair, w256, w512};

/// ADM's scale-0 DWT, vertical pass, for the leading columns: with
/// `taps = [lo, hi]` (four each, every |tap| ≤ 32767) over four source rows
/// of samples ≤ 32767 (bit depth ≤ 15), writes
/// `lo_out[j] = (Σ lo·s − centre + round) >> shift` and
/// `hi_out[j] = (Σ hi·s + round) >> shift`, narrowed to `i16` by
/// truncation, in wrapping 32-bit arithmetic, and returns how many leading
/// columns it did (0 on the baseline copy; the caller does the rest).
///
/// Rows 0 and 1, and rows 2 and 3, are interleaved so that one `pmaddwd`
/// forms two taps' products and their sum (which cannot overflow: each is
/// below 2^31), where the portable loop multiplies in 32 bits per tap.
#[allow(clippy::too_many_arguments)]
pub fn adm_dwt0_vertical(
    rows: [&[u16]; 4],
    taps: [[i16; 4]; 2],
    centre: i32,
    round: i32,
    shift: u32,
    lo_out: &mut [i16],
    hi_out: &mut [i16],
) -> usize {
    let w = lo_out.len();
    assert!(
        hi_out.len() == w && rows.iter().all(|r| r.len() >= w) && shift < 32,
        "adm_dwt0_vertical: {w} columns, rows of {:?}, shift {shift}",
        rows.map(<[u16]>::len)
    );
    #[cfg(target_arch = "x86_64")]
    match active() {
        // SAFETY: `active()` returns `Avx512` only when `detected()` saw the
        // CPU report every feature the copy enables.
        Isa::Avx512 => {
            return unsafe { dwt0_vertical_v4(rows, taps, centre, round, shift, lo_out, hi_out) };
        }
        // SAFETY: as above, for the AVX2 (x86-64-v3) features.
        Isa::Avx2 => {
            return unsafe { dwt0_vertical_v3(rows, taps, centre, round, shift, lo_out, hi_out) };
        }
        Isa::Baseline => {}
    }
    #[allow(unreachable_code)]
    0
}

/// ADM's scale-0 DWT, horizontal pass, for outputs `from..to` as far as
/// the vector copy goes: output `j` of the four bands is
/// `fin(Σ_k t[k]·row[2j − 1 + k])` for `(t, row)` = (lo taps, `lo`),
/// (hi taps, `lo`), (lo taps, `hi`), (hi taps, `hi`), where
/// `fin(x) = ((x + 32768) >> 16)` narrowed to `i16` by truncation. Returns
/// the first output it did not do (`from` on the baseline copy). Output
/// `j` reads samples 2j − 1 ..= 2j + 2, so `from ≥ 1` and `2·to` must be
/// below both rows' lengths.
pub fn adm_dwt0_horizontal(
    lo: &[i16],
    hi: &[i16],
    taps: [[i16; 4]; 2],
    from: usize,
    to: usize,
    out: [&mut [i32]; 4],
) -> usize {
    assert!(
        from >= 1
            && from <= to
            && (from == to || 2 * to < lo.len().min(hi.len()))
            && out.iter().all(|o| o.len() >= to),
        "adm_dwt0_horizontal: outputs {from}..{to} of rows of {} and {}",
        lo.len(),
        hi.len()
    );
    #[cfg(target_arch = "x86_64")]
    match active() {
        // SAFETY: `active()` returns `Avx512` only when `detected()` saw the
        // CPU report every feature the copy enables.
        Isa::Avx512 => return unsafe { dwt0_horizontal_v4(lo, hi, taps, from, to, out) },
        // SAFETY: as above, for the AVX2 (x86-64-v3) features.
        Isa::Avx2 => return unsafe { dwt0_horizontal_v3(lo, hi, taps, from, to, out) },
        Isa::Baseline => {}
    }
    #[allow(unreachable_code)]
    from
}

/// The AVX2 and AVX-512 bodies of the DWT passes, from one source: `$w`
/// names the operations alike for both vector widths (`w256`, `w512` in
/// `crate::core::isa`).
#[cfg(target_arch = "x86_64")]
macro_rules! adm_twins {
    ($w:ident, $features:literal, $dwt_v:ident, $dwt_h:ident) => {
        /// Vector body of [`adm_dwt0_vertical`], `2·LANES` columns per step.
        #[target_feature(enable = $features)]
        fn $dwt_v(
            rows: [&[u16]; 4],
            [lo, hi]: [[i16; 4]; 2],
            centre: i32,
            round: i32,
            shift: u32,
            lo_out: &mut [i16],
            hi_out: &mut [i16],
        ) -> usize {
            use $w::*;
            let w = lo_out.len();
            let pairs = [lo, hi]
                .map(|t| [tap_pair(t[0], t[1]), tap_pair(t[2], t[3])].map(|p| set1_epi32(p)));
            let (centre, round) = (set1_epi32(centre), set1_epi32(round));
            let count = std::arch::x86_64::_mm_cvtsi32_si128(shift as i32);
            let mut j = 0;
            while j + 2 * LANES <= w {
                // SAFETY: j + 2·LANES ≤ w ≤ every row's length (checked by
                // the caller).
                let s = rows.map(|r| unsafe { loadu(r.as_ptr().add(j).cast::<V>()) });
                // Per 128 bits, columns 0–3 (`unpacklo`) and 4–7 (`unpackhi`).
                let (a_lo, a_hi) = (unpacklo_epi16(s[0], s[1]), unpackhi_epi16(s[0], s[1]));
                let (b_lo, b_hi) = (unpacklo_epi16(s[2], s[3]), unpackhi_epi16(s[2], s[3]));
                let sum =
                    |p: &[V; 2], a: V, b: V| add_epi32(madd_epi16(a, p[0]), madd_epi16(b, p[1]));
                // (x + round) >> shift, its low 16 bits sign-extended: what
                // the truncating narrowing keeps, and then in range for
                // `packs`.
                let narrow = |x: V| {
                    let v = sra_epi32(add_epi32(x, round), count);
                    srai_epi32::<16>(slli_epi32::<16>(v))
                };
                let l = packs_epi32(
                    narrow(sub_epi32(sum(&pairs[0], a_lo, b_lo), centre)),
                    narrow(sub_epi32(sum(&pairs[0], a_hi, b_hi), centre)),
                );
                let h = packs_epi32(
                    narrow(sum(&pairs[1], a_lo, b_lo)),
                    narrow(sum(&pairs[1], a_hi, b_hi)),
                );
                // SAFETY: j + 2·LANES ≤ w, the length of both outputs.
                unsafe {
                    storeu(lo_out.as_mut_ptr().add(j).cast::<V>(), l);
                    storeu(hi_out.as_mut_ptr().add(j).cast::<V>(), h);
                }
                j += 2 * LANES;
            }
            j
        }

        /// Vector body of [`adm_dwt0_horizontal`], `LANES` outputs per step.
        #[target_feature(enable = $features)]
        fn $dwt_h(
            lo: &[i16],
            hi: &[i16],
            taps: [[i16; 4]; 2],
            from: usize,
            to: usize,
            mut out: [&mut [i32]; 4],
        ) -> usize {
            use $w::*;
            let n = lo.len().min(hi.len());
            let [p_lo, p_hi] =
                taps.map(|t| [tap_pair(t[0], t[1]), tap_pair(t[2], t[3])].map(|p| set1_epi32(p)));
            let half = set1_epi32(32768);
            let mut j = from;
            // Outputs j..j + LANES read samples 2j − 1 ..= 2j + 2·LANES.
            while j + LANES <= to && 2 * j + 2 * LANES < n {
                // SAFETY: the loads read 2·LANES samples from 2j − 1 and
                // from 2j + 1, the last at 2j + 2·LANES < n (loop
                // condition; j ≥ 1).
                let load =
                    |row: &[i16], at: usize| unsafe { loadu(row.as_ptr().add(at).cast::<V>()) };
                let (l0, l1, h0, h1) = (
                    load(lo, 2 * j - 1),
                    load(lo, 2 * j + 1),
                    load(hi, 2 * j - 1),
                    load(hi, 2 * j + 1),
                );
                // Lane i of a load at 2j − 1 pairs samples 2(j + i) − 1 and
                // 2(j + i).
                let dot = |p: &[V; 2], a: V, b: V| {
                    let x = add_epi32(madd_epi16(a, p[0]), madd_epi16(b, p[1]));
                    let v = srai_epi32::<16>(add_epi32(x, half));
                    srai_epi32::<16>(slli_epi32::<16>(v))
                };
                let bands = [
                    dot(&p_lo, l0, l1),
                    dot(&p_hi, l0, l1),
                    dot(&p_lo, h0, h1),
                    dot(&p_hi, h0, h1),
                ];
                for (o, b) in out.iter_mut().zip(bands) {
                    // SAFETY: j + LANES ≤ to ≤ o.len() (checked by the caller).
                    unsafe { storeu(o.as_mut_ptr().add(j).cast::<V>(), b) };
                }
                j += LANES;
            }
            j
        }
    };
}

#[cfg(target_arch = "x86_64")]
adm_twins!(
    w256,
    "avx2,bmi1,bmi2,lzcnt,popcnt",
    dwt0_vertical_v3,
    dwt0_horizontal_v3
);
#[cfg(target_arch = "x86_64")]
adm_twins!(
    w512,
    "avx2,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl",
    dwt0_vertical_v4,
    dwt0_horizontal_v4
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::isa::{FORCED, Lcg, copies, force};

    #[test]
    fn every_copy_of_the_adm_dwt0_passes_equals_the_sums() {
        let taps: [[i16; 4]; 2] = [[15826, 27411, 7345, -4240], [-4240, -7345, 27411, -15826]];
        let mut g = Lcg(3);
        let _forced = FORCED.lock().unwrap_or_else(|e| e.into_inner());
        let before = active();
        for copy in copies() {
            assert!(force(copy));
            for w in [1, 15, 16, 17, 33, 64, 100, 1920] {
                for (bpc, shift) in [(8u32, 8u32), (10, 10), (15, 15)] {
                    let max = (1u32 << bpc) - 1;
                    let rows: Vec<Vec<u16>> = (0..4)
                        .map(|k| {
                            (0..w)
                                .map(|j| match (j + k) % 5 {
                                    0 => max as u16,
                                    1 => 0,
                                    _ => (g.next() % (max + 1)) as u16,
                                })
                                .collect()
                        })
                        .collect();
                    let round = 1i32 << (shift - 1);
                    let centre = 46342i32.wrapping_mul(round);
                    let (mut lo, mut hi) = (vec![0i16; w], vec![0i16; w]);
                    let r = [&rows[0][..], &rows[1][..], &rows[2][..], &rows[3][..]];
                    let done = adm_dwt0_vertical(r, taps, centre, round, shift, &mut lo, &mut hi);
                    for j in 0..done {
                        let dot = |t: &[i16; 4]| {
                            (0..4).fold(0i32, |a, k| {
                                a.wrapping_add(i32::from(t[k]) * i32::from(rows[k][j]))
                            })
                        };
                        let want_lo = (dot(&taps[0]).wrapping_sub(centre).wrapping_add(round)
                            >> shift) as i16;
                        let want_hi = (dot(&taps[1]).wrapping_add(round) >> shift) as i16;
                        assert_eq!(
                            (lo[j], hi[j]),
                            (want_lo, want_hi),
                            "{} copy, w {w}, bpc {bpc}, column {j}",
                            copy.name()
                        );
                    }
                }
                // Horizontal: any int16 rows.
                let row = |g: &mut Lcg| -> Vec<i16> {
                    (0..w)
                        .map(|j| match j % 6 {
                            0 => i16::MIN,
                            1 => i16::MAX,
                            _ => g.next() as i16,
                        })
                        .collect()
                };
                let (lo, hi) = (row(&mut g), row(&mut g));
                let bw = w.div_ceil(2);
                let mid = bw.saturating_sub(2).max(1);
                let mut out = [
                    vec![0i32; bw],
                    vec![0i32; bw],
                    vec![0i32; bw],
                    vec![0i32; bw],
                ];
                let [a, v, h, d] = &mut out;
                let end = adm_dwt0_horizontal(&lo, &hi, taps, 1, mid, [a, v, h, d]);
                assert!((1..=mid).contains(&end));
                for j in 1..end {
                    let fin = |t: &[i16; 4], s: &[i16]| {
                        let x = (0..4).fold(0i32, |a, k| {
                            a.wrapping_add(i32::from(t[k]) * i32::from(s[2 * j - 1 + k]))
                        });
                        i32::from((x.wrapping_add(32768) >> 16) as i16)
                    };
                    let want = [
                        fin(&taps[0], &lo),
                        fin(&taps[1], &lo),
                        fin(&taps[0], &hi),
                        fin(&taps[1], &hi),
                    ];
                    for b in 0..4 {
                        assert_eq!(
                            out[b][j],
                            want[b],
                            "{} copy, w {w}, band {b}, output {j}",
                            copy.name()
                        );
                    }
                }
            }
        }
        force(before);
    }
}
