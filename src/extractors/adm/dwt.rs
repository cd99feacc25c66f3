//! ADM's db2 DWT (`integer_adm.c:adm_dwt2_8/16`, `adm_dwt2_s123_combined`):
//! one scale of reference or distorted into the bands a, v, h, d.

use crate::extractors::adm::tables::{DWT_HI, DWT_LO, DWT_LO_SUM, dwt_indices};
use crate::extractors::adm::types::Bands;
use crate::extractors::common::grow;

/// `adm_dwt2_8` / `adm_dwt2_16`: scale-0 DWT of pixels; everything narrowed
/// to int16 (so the rows between the passes are `i16`, which the vector
/// copies multiply two taps at a time: `super::simd::adm_dwt0_vertical` and
/// `super::simd::adm_dwt0_horizontal`).
pub fn dwt_scale0(
    src: &[u16],
    w: usize,
    h: usize,
    bpc: u8,
    out: &mut Bands,
    lo: &mut Vec<i16>,
    hi: &mut Vec<i16>,
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
    let taps = [DWT_LO, DWT_HI].map(|t| t.map(|c| c as i16));
    for (i, idx) in iy.iter().enumerate() {
        let rows = idx.map(|r| &src[r as usize * w..r as usize * w + w]);
        let (lo_out, hi_out) = (&mut lo[..w], &mut hi[..w]);
        // The vector copies take samples as i16: up to 15 bits.
        let done = if bpc <= 15 {
            super::simd::adm_dwt0_vertical(rows, taps, centre, round, shift, lo_out, hi_out)
        } else {
            0
        };
        crate::core::isa::dispatch(
            #[inline(always)]
            move || {
                for j in done..w {
                    let s = [rows[0][j], rows[1][j], rows[2][j], rows[3][j]].map(i32::from);
                    let mut l = 0i32;
                    let mut hh = 0i32;
                    for k in 0..4 {
                        l = l.wrapping_add(DWT_LO[k] * s[k]);
                        hh = hh.wrapping_add(DWT_HI[k] * s[k]);
                    }
                    l = l.wrapping_sub(centre);
                    lo_out[j] = (l.wrapping_add(round) >> shift) as i16;
                    hi_out[j] = (hh.wrapping_add(round) >> shift) as i16;
                }
            },
        );
        let (lo, hi) = (&lo[..w], &hi[..w]);
        let row = out.row_mut(i);
        let mid = interior_end(ix.len());
        let from = super::simd::adm_dwt0_horizontal(
            lo,
            hi,
            taps,
            1,
            mid,
            [&mut *row.a, &mut *row.v, &mut *row.h, &mut *row.d],
        );
        horizontal(lo, hi, &ix, row, Scale0, from);
    }
}

/// `adm_dwt2_s123_combined` for one image: int64 sums narrowed to int32.
#[allow(clippy::too_many_arguments)]
pub fn dwt_s123(
    src: &[i32],
    w: usize,
    h: usize,
    scale: usize,
    out: &mut Bands,
    lo: &mut Vec<i32>,
    hi: &mut Vec<i32>,
    split: &mut [Vec<i32>; 4],
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
        let (lo_out, hi_out) = (&mut lo[..w], &mut hi[..w]);
        crate::core::isa::dispatch(
            #[inline(always)]
            move || {
                for j in 0..w {
                    let s = [rows[0][j], rows[1][j], rows[2][j], rows[3][j]].map(i64::from);
                    let mut l = 0i64;
                    let mut hh = 0i64;
                    for k in 0..4 {
                        l += i64::from(DWT_LO[k]) * s[k];
                        hh += i64::from(DWT_HI[k]) * s[k];
                    }
                    lo_out[j] = ((l + v_add) >> v_shift) as i32;
                    hi_out[j] = ((hh + v_add) >> v_shift) as i32;
                }
            },
        );
        let t = Wide {
            add: h_add,
            shift: h_shift,
        };
        let mid = interior_end(ix.len());
        let (lo, hi) = (&lo[..w], &hi[..w]);
        let [le, lodd, he, hodd] = &mut *split;
        split_even_odd(lo, le, lodd);
        split_even_odd(hi, he, hodd);
        interior_wide(le, lodd, he, hodd, t, mid, out.row_mut(i));
        horizontal(lo, hi, &ix, out.row_mut(i), t, mid);
    }
}

/// `row`'s even samples into `even`, odd ones into `odd` (each resized).
fn split_even_odd(row: &[i32], even: &mut Vec<i32>, odd: &mut Vec<i32>) {
    grow(even, row.len().div_ceil(2));
    grow(odd, row.len() / 2);
    crate::core::isa::dispatch(
        #[inline(always)]
        move || {
            for (k, pair) in row.chunks_exact(2).enumerate() {
                even[k] = pair[0];
                odd[k] = pair[1];
            }
            if row.len() % 2 == 1 {
                even[row.len() / 2] = row[row.len() - 1];
            }
        },
    );
}

/// The interior outputs 1..mid of a scales-1..3 horizontal pass, from the
/// rows split into even and odd samples: output j reads samples 2j − 1,
/// 2j, 2j + 1 and 2j + 2, which are `odd[j − 1]`, `even[j]`, `odd[j]` and
/// `even[j + 1]`, so that every operand is a contiguous run (the loop
/// vectorises; read in place, the pairs of stride two did not).
fn interior_wide(
    lo_even: &[i32],
    lo_odd: &[i32],
    hi_even: &[i32],
    hi_odd: &[i32],
    t: Wide,
    mid: usize,
    out: BandRows<'_>,
) {
    if mid < 2 {
        return;
    }
    crate::core::isa::dispatch(
        #[inline(always)]
        move || {
            let n = mid - 1;
            let (a, v, h, d) = (
                &mut out.a[1..mid],
                &mut out.v[1..mid],
                &mut out.h[1..mid],
                &mut out.d[1..mid],
            );
            let (l0, l1, l2, l3) = (
                &lo_odd[..n],
                &lo_even[1..mid],
                &lo_odd[1..mid],
                &lo_even[2..mid + 1],
            );
            let (h0, h1, h2, h3) = (
                &hi_odd[..n],
                &hi_even[1..mid],
                &hi_odd[1..mid],
                &hi_even[2..mid + 1],
            );
            for k in 0..n {
                let sl = [l0[k], l1[k], l2[k], l3[k]];
                let sh = [h0[k], h1[k], h2[k], h3[k]];
                a[k] = t.fin(Wide::dot(&DWT_LO, sl));
                v[k] = t.fin(Wide::dot(&DWT_HI, sl));
                h[k] = t.fin(Wide::dot(&DWT_LO, sh));
                d[k] = t.fin(Wide::dot(&DWT_HI, sh));
            }
        },
    );
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

/// How a horizontal output is formed: the tap sums' type and the rounding
/// shift that narrows them (a trait rather than closures, so that every call
/// is inlined into the dispatched loop and compiled for the chosen
/// instruction set).
trait Taps: Copy {
    type Acc: Copy;
    fn dot(f: &[i32; 4], s: [i32; 4]) -> Self::Acc;
    fn fin(self, acc: Self::Acc) -> i32;
}

/// Scale 0: int16 inputs, so |Σ f·x| ≤ 54822·2^15 < 2^31: libvmaf's int64
/// sums fit i32 exactly, which vectorises better.
#[derive(Clone, Copy)]
struct Scale0;

impl Taps for Scale0 {
    type Acc = i32;
    #[inline(always)]
    fn dot(f: &[i32; 4], s: [i32; 4]) -> i32 {
        dot4_i32(f, s)
    }
    #[inline(always)]
    fn fin(self, acc: i32) -> i32 {
        i32::from((acc.wrapping_add(32768) >> 16) as i16)
    }
}

/// Scales 1..3: int64 sums, rounded and shifted per scale.
#[derive(Clone, Copy)]
struct Wide {
    add: i64,
    shift: u32,
}

impl Taps for Wide {
    type Acc = i64;
    #[inline(always)]
    fn dot(f: &[i32; 4], s: [i32; 4]) -> i64 {
        dot4_i64(f, s)
    }
    #[inline(always)]
    fn fin(self, acc: i64) -> i32 {
        ((acc + self.add) >> self.shift) as i32
    }
}

/// The four outputs of column `j`.
#[inline(always)]
fn one<T: Taps>(t: T, j: usize, sl: [i32; 4], sh: [i32; 4], out: &mut BandRows<'_>) {
    out.a[j] = t.fin(T::dot(&DWT_LO, sl));
    out.v[j] = t.fin(T::dot(&DWT_HI, sl));
    out.h[j] = t.fin(T::dot(&DWT_LO, sh));
    out.d[j] = t.fin(T::dot(&DWT_HI, sh));
}

/// End of a horizontal pass's interior outputs (1..end read samples
/// 2j − 1 ..= 2j + 2 directly; the first and the last two go through the
/// index table).
fn interior_end(bw: usize) -> usize {
    bw.saturating_sub(2).max(1)
}

/// Horizontal DWT pass of one row pair (lo, hi) into the four bands. The
/// interior outputs from `from` on read samples 2j−1 ..= 2j+2 directly
/// (vectorised; those before `from` are already done); the first and the
/// last two follow `ix`, the mirrored index table.
#[inline(always)]
fn horizontal<T: Taps, S: Copy + Into<i32>>(
    lo: &[S],
    hi: &[S],
    ix: &[[i32; 4]],
    mut out: BandRows<'_>,
    t: T,
    from: usize,
) {
    let bw = ix.len();
    let mid = interior_end(bw);
    let rows = &mut out;
    crate::core::isa::dispatch(
        #[inline(always)]
        move || {
            for j in from..mid {
                let (l, hh) = (&lo[2 * j - 1..2 * j + 3], &hi[2 * j - 1..2 * j + 3]);
                let sl = [l[0], l[1], l[2], l[3]].map(Into::into);
                let sh = [hh[0], hh[1], hh[2], hh[3]].map(Into::into);
                one(t, j, sl, sh, rows);
            }
        },
    );
    for j in (0..1).chain(mid..bw) {
        let idx = ix[j];
        one(
            t,
            j,
            idx.map(|c| lo[c as usize].into()),
            idx.map(|c| hi[c as usize].into()),
            &mut out,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extractors::common::test_samples as samples;

    /// The horizontal pass with every column read through the index table
    /// in int64, as libvmaf writes it.
    fn by_table(lo: &[i32], hi: &[i32], ix: &[[i32; 4]], fin: impl Fn(i64) -> i32) -> Bands {
        let mut out = Bands::default();
        out.resize(ix.len(), 1);
        for (j, idx) in ix.iter().enumerate() {
            let dot = |f: &[i32; 4], s: &[i32]| -> i64 {
                (0..4)
                    .map(|k| i64::from(f[k]) * i64::from(s[idx[k] as usize]))
                    .sum()
            };
            out.a[j] = fin(dot(&DWT_LO, lo));
            out.v[j] = fin(dot(&DWT_HI, lo));
            out.h[j] = fin(dot(&DWT_LO, hi));
            out.d[j] = fin(dot(&DWT_HI, hi));
        }
        out
    }

    /// The whole scales-1..3 DWT (split rows and all) against libvmaf's
    /// loops written directly: every sample through the index tables, int64
    /// sums, for every width from the narrowest on, on every copy.
    #[test]
    fn scales_1_to_3_equal_the_direct_loops() {
        let _forced = crate::core::isa::FORCED
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let before = crate::core::isa::active();
        for isa in crate::core::isa::copies() {
            assert!(crate::core::isa::force(isa));
            for (w, h) in (5..=41).map(|w| (w, 7)).chain([(64, 5), (121, 9)]) {
                let src = samples(w * h, i32::MIN, i32::MAX, (w * h) as u64);
                for scale in 1..4 {
                    let (v_add, v_shift) = if scale == 1 { (0, 0) } else { (32768, 16) };
                    let (h_add, h_shift) = if scale == 2 { (32768, 16) } else { (16384, 15) };
                    let (iy, ix) = (dwt_indices(h), dwt_indices(w));
                    let mut fast = Bands::default();
                    let (mut lo, mut hi, mut split) = (Vec::new(), Vec::new(), Default::default());
                    dwt_s123(&src, w, h, scale, &mut fast, &mut lo, &mut hi, &mut split);
                    for (i, idx) in iy.iter().enumerate() {
                        let vertical = |f: &[i32; 4]| -> Vec<i32> {
                            (0..w)
                                .map(|j| {
                                    let acc: i64 = (0..4)
                                        .map(|k| {
                                            i64::from(f[k])
                                                * i64::from(src[idx[k] as usize * w + j])
                                        })
                                        .sum();
                                    ((acc + v_add) >> v_shift) as i32
                                })
                                .collect()
                        };
                        let (vl, vh) = (vertical(&DWT_LO), vertical(&DWT_HI));
                        let slow = by_table(&vl, &vh, &ix, |acc| ((acc + h_add) >> h_shift) as i32);
                        let row = i * fast.w..(i + 1) * fast.w;
                        assert_eq!(
                            (
                                &fast.a[row.clone()],
                                &fast.v[row.clone()],
                                &fast.h[row.clone()],
                                &fast.d[row]
                            ),
                            (&slow.a[..], &slow.v[..], &slow.h[..], &slow.d[..]),
                            "{isa:?} scale {scale}, {w}x{h}, row {i}"
                        );
                    }
                }
            }
        }
        crate::core::isa::force(before);
    }

    #[test]
    fn direct_interior_equals_the_index_table() {
        // 5 is the narrowest DWT input: scale 3 of a 33-sample frame (MIN_SIZE).
        for w in 5..=41 {
            let ix = dwt_indices(w);
            // Scale 0: int16 rows, i32 sums.
            let (lo, hi) = (
                samples(w, -32768, 32767, w as u64),
                samples(w, -32768, 32767, 99),
            );
            let fin0 = |acc: i64| i32::from(((acc + 32768) >> 16) as i16);
            let mut fast = Bands::default();
            fast.resize(ix.len(), 1);
            horizontal(&lo, &hi, &ix, fast.row_mut(0), Scale0, 1);
            let slow = by_table(&lo, &hi, &ix, fin0);
            assert_eq!(
                (&fast.a, &fast.v, &fast.h, &fast.d),
                (&slow.a, &slow.v, &slow.h, &slow.d),
                "scale 0, w {w}"
            );
            // Scales 1..3: int32 rows, i64 sums.
            let (lo, hi) = (
                samples(w, i32::MIN, i32::MAX, 7),
                samples(w, -(1 << 20), 1 << 20, 8),
            );
            let fin3 = |acc: i64| ((acc + 16384) >> 15) as i32;
            let mut fast = Bands::default();
            fast.resize(ix.len(), 1);
            let wide = Wide {
                add: 16384,
                shift: 15,
            };
            horizontal(&lo, &hi, &ix, fast.row_mut(0), wide, 1);
            let slow = by_table(&lo, &hi, &ix, fin3);
            assert_eq!(
                (&fast.a, &fast.v, &fast.h, &fast.d),
                (&slow.a, &slow.v, &slow.h, &slow.d),
                "scale 3, w {w}"
            );
        }
    }
}
