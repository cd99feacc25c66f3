//! VIF's hand-written SIMD: the AVX2 and AVX-512 bodies of its row
//! filter, its 8-bit vertical moments and its logarithm sums, chosen at run
//! time by the CPU's instruction sets (`crate::core::isa`). Each entry point
//! does the leading columns it can and returns how far it got; the caller's
//! portable loop does the rest, so every copy gives the same numbers.

use crate::core::isa::{Isa, active};
#[cfg(target_arch = "x86_64")]
use crate::core::isa::{tap_pair, w256, w512};

/// `out[j] = bias + Σ_k taps[k]·v[j + k]` for every `j < out.len()`, in
/// wrapping 32-bit arithmetic (a caller that filters samples `x` stored as
/// `x − 32768` passes `32768·Σtaps` as `bias` and reads the exact u32 sum).
///
/// This is the engine's hottest loop (VIF's row filters). The portable form
/// vectorises to one 32-bit multiply per tap and lane; the AVX2 and AVX-512
/// copies here use `pmaddwd` instead (two 16×16-bit products and their sum
/// per 32-bit lane, one instruction), on unaligned loads at even and odd
/// offsets so that each lane meets a pair of neighbouring taps, and
/// interleave the even and odd outputs at the store. Every copy computes the
/// same sum modulo 2^32: a pair of products never overflows 32 signed bits
/// (|tap| ≤ 32767, |v| ≤ 32768), and the adds wrap alike.
///
/// Requires `v.len() + 1 >= out.len() + taps.len()`. Columns the vector loop
/// cannot reach without reading past `v` are done by the portable loop, so a
/// `v` a few samples longer than that lets the vector loop do every column.
pub fn filter_taps_i16(v: &[i16], taps: &[i16], bias: u32, out: &mut [u32]) {
    assert!(
        !taps.is_empty() && v.len() + 1 >= out.len() + taps.len(),
        "filter_taps_i16: {} samples for {} outputs of {} taps",
        v.len(),
        out.len(),
        taps.len()
    );
    #[allow(unused_mut)]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if taps.len() <= 2 * MADD_PAIRS {
        done = match active() {
            // SAFETY: `active()` returns `Avx512` only when `detected()` saw
            // the CPU report every feature the copy enables.
            Isa::Avx512 => unsafe { madd_taps_v4(v, taps, bias, out) },
            // SAFETY: as above, for the AVX2 (x86-64-v3) features.
            Isa::Avx2 => unsafe { madd_taps_v3(v, taps, bias, out) },
            Isa::Baseline => 0,
        };
    }
    for (j, o) in out.iter_mut().enumerate().skip(done) {
        *o = taps.iter().zip(&v[j..]).fold(bias, |s, (&c, &x)| {
            s.wrapping_add((i32::from(c) * i32::from(x)) as u32)
        });
    }
}

/// Most tap pairs the vector copies of [`filter_taps_i16`] take (18 taps).
const MADD_PAIRS: usize = 9;

/// The taps as `pmaddwd` operands: pair `p` is `taps[2p]` in the low and
/// `taps[2p + 1]` (0 past the end) in the high half of a 32-bit word.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tap_pairs(taps: &[i16]) -> ([i32; MADD_PAIRS], usize) {
    let mut pairs = [0i32; MADD_PAIRS];
    let n = taps.len().div_ceil(2);
    for (p, slot) in pairs[..n].iter_mut().enumerate() {
        *slot = tap_pair(taps[2 * p], taps.get(2 * p + 1).copied().unwrap_or(0));
    }
    (pairs, n)
}

/// VIF's vertical moments of 8-bit samples for the leading columns: for a
/// symmetric filter `taps` (odd length ≤ 17, each ≤ 32767) over the rows
/// `r[k]`, `d[k]` (one per tap, samples ≤ 255), writes
/// `out = [Σc·x, Σc·y, Σc·x², Σc·y², Σc·x·y]` (exact in u32: Σc·255² < 2^32
/// for Σc = 2^16) and returns how many leading columns it did; the caller
/// does the rest (0 on the baseline copy, which has no such body).
///
/// One `pmaddwd` takes both rows of a symmetric pair: their samples (≤ 255)
/// or their products (≤ 65025, stored as `p − 32768` to fit an `i16`; the
/// `32768·Σc` this removes is added back once) interleaved, times the pair's
/// tap twice. All taps accumulate in registers for 16 (AVX2) or 32 (AVX-512)
/// columns before one store, where the portable loop reads and writes five
/// rows per tap.
pub fn vif_moments_8bit(r: &[&[u16]], d: &[&[u16]], taps: &[u16], out: [&mut [u32]; 5]) -> usize {
    let n = taps.len();
    let w = out[0].len();
    assert!(
        n % 2 == 1
            && n <= 17
            && r.len() == n
            && d.len() == n
            && out.iter().all(|o| o.len() == w)
            && r.iter().chain(d).all(|row| row.len() >= w)
            && taps.iter().all(|&c| c <= i16::MAX as u16)
            && (0..n).all(|k| taps[k] == taps[n - 1 - k]),
        "vif_moments_8bit: {n} taps, {} and {} rows, {w} columns",
        r.len(),
        d.len()
    );
    #[cfg(target_arch = "x86_64")]
    match active() {
        // SAFETY: `active()` returns `Avx512` only when `detected()` saw the
        // CPU report every feature the copy enables.
        Isa::Avx512 => return unsafe { moments_v4(r, d, taps, out) },
        // SAFETY: as above, for the AVX2 (x86-64-v3) features.
        Isa::Avx2 => return unsafe { moments_v3(r, d, taps, out) },
        Isa::Baseline => {}
    }
    #[allow(unreachable_code)]
    0
}

/// `32768·Σtaps` in wrapping u32: what storing samples or products as
/// `x − 32768` takes from a filtered sum (the `bias` a caller of
/// [`filter_taps_i16`] adds back).
pub fn product_bias(taps: &[u16]) -> u32 {
    taps.iter()
        .fold(0u32, |s, &c| s.wrapping_add(u32::from(c) << 15))
}

/// VIF's logarithm sums over the leading elements of one row: with
/// `L(x) = table[x >> k] + 2048·k`, `k = bit length of x − 16` (libvmaf's
/// `log2_32` / `log2_64`; every argument VIF forms is at least 2^17),
/// returns `(done, Σ L(den), Σ L(num) − L(numer1))` over the first `done`
/// elements; the caller does the rest (0 except on the AVX-512 copy, whose
/// `vplzcnt` and gathers make these look-ups vector code: AVX2 has neither a
/// leading-zero count nor a cheap gather, so there the scalar loop stays).
///
/// `table` must hold the 65536 entries of the 2048·log2 table. An argument
/// below 2^16, which VIF never forms, gives a meaningless sum but reads
/// inside the table all the same (the index is clamped).
pub fn vif_log_sums(table: &[u16], den: &[u32], num: &[u64], numer1: &[u32]) -> (usize, i64, i64) {
    let n = den.len();
    assert!(
        table.len() >= 65536 && num.len() == n && numer1.len() == n,
        "vif_log_sums: table of {}, rows of {n}, {} and {}",
        table.len(),
        num.len(),
        numer1.len()
    );
    #[cfg(target_arch = "x86_64")]
    if active() == Isa::Avx512 {
        // SAFETY: `active()` returns `Avx512` only when `detected()` saw the
        // CPU report every feature the copy enables.
        return unsafe { log_sums_v4(table, den, num, numer1) };
    }
    (0, 0, 0)
}

/// AVX-512 body of [`vif_log_sums`]: eight elements per step.
#[cfg(target_arch = "x86_64")]
#[target_feature(
    enable = "avx2,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
)]
fn log_sums_v4(table: &[u16], den: &[u32], num: &[u64], numer1: &[u32]) -> (usize, i64, i64) {
    use std::arch::x86_64::*;
    let n = den.len();
    let base = table.as_ptr().cast::<i32>();
    let (one, top) = (_mm256_set1_epi32(1), _mm256_set1_epi32(65535));
    let (one64, top64) = (_mm512_set1_epi64(1), _mm512_set1_epi64(65535));
    // Table entry `idx` from a 32-bit gather at `idx − 1` (its high half),
    // so that the last entry is read without passing the table's end.
    let look = |idx: __m256i| {
        let at = _mm256_sub_epi32(_mm256_max_epu32(_mm256_min_epu32(idx, top), one), one);
        // SAFETY: 0 ≤ at ≤ 65534, so each 4-byte read at byte 2·at lies
        // inside the table's 65536 entries (checked by `vif_log_sums`).
        _mm256_srli_epi32::<16>(unsafe { _mm256_i32gather_epi32::<2>(base, at) })
    };
    let log32 = |x: __m256i| {
        let k = _mm256_sub_epi32(_mm256_set1_epi32(16), _mm256_lzcnt_epi32(x));
        _mm256_add_epi32(look(_mm256_srlv_epi32(x, k)), _mm256_slli_epi32::<11>(k))
    };
    let (mut den_sum, mut num_sum) = (0i64, 0i64);
    let mut j = 0;
    while j + 8 <= n {
        // 32-bit lanes stay far from overflow over a block: each step adds
        // less than 2^18 per lane.
        let block_end = (j + 8 * 1024).min(n / 8 * 8);
        let (mut d_acc, mut n_acc) = (_mm256_setzero_si256(), _mm256_setzero_si256());
        while j < block_end {
            // SAFETY: j + 8 ≤ n, the length of all three rows.
            let (d, x, m) = unsafe {
                (
                    _mm256_loadu_si256(den.as_ptr().add(j).cast::<__m256i>()),
                    _mm512_loadu_si512(num.as_ptr().add(j).cast::<__m512i>()),
                    _mm256_loadu_si256(numer1.as_ptr().add(j).cast::<__m256i>()),
                )
            };
            d_acc = _mm256_add_epi32(d_acc, log32(d));
            let k = _mm512_sub_epi64(_mm512_set1_epi64(48), _mm512_lzcnt_epi64(x));
            let idx = _mm512_max_epu64(_mm512_min_epu64(_mm512_srlv_epi64(x, k), top64), one64);
            let at = _mm512_sub_epi64(idx, one64);
            // SAFETY: 0 ≤ at ≤ 65534, as in `look`.
            let t = _mm256_srli_epi32::<16>(unsafe { _mm512_i64gather_epi32::<2>(at, base) });
            let l = _mm256_add_epi32(t, _mm256_slli_epi32::<11>(_mm512_cvtepi64_epi32(k)));
            n_acc = _mm256_add_epi32(n_acc, _mm256_sub_epi32(l, log32(m)));
            j += 8;
        }
        let wide = |v: __m256i| _mm512_reduce_add_epi64(_mm512_cvtepi32_epi64(v));
        den_sum += wide(d_acc);
        num_sum += wide(n_acc);
    }
    (j, den_sum, num_sum)
}

/// The AVX2 and AVX-512 bodies of VIF's kernels, from one source: `$w`
/// names the operations alike for both vector widths (`w256`, `w512` in
/// `crate::core::isa`: `V`, `loadu`, `add_epi32`, …, `LANES` 32-bit lanes
/// per vector, and the lane reorderings each width does its own way).
#[cfg(target_arch = "x86_64")]
macro_rules! vif_twins {
    ($w:ident, $features:literal, $madd_taps:ident, $moments:ident) => {
        /// Vector body of [`filter_taps_i16`]: `2·LANES` outputs per step.
        /// Returns how many leading outputs it wrote (a multiple of that).
        #[target_feature(enable = $features)]
        fn $madd_taps(v: &[i16], taps: &[i16], bias: u32, out: &mut [u32]) -> usize {
            use $w::*;
            let (pairs, n) = tap_pairs(taps);
            let coef = pairs.map(|c| set1_epi32(c));
            let start = set1_epi32(bias as i32);
            // The odd outputs' last load starts at j + 1 + 2(n − 1) and
            // reads 2·LANES samples.
            let reach = 2 * n + 2 * LANES - 1;
            let mut j = 0;
            while j + 2 * LANES <= out.len() && j + reach <= v.len() {
                let (mut even, mut odd) = (start, start);
                for (p, &c) in coef[..n].iter().enumerate() {
                    // SAFETY: both loads read 2·LANES samples starting at
                    // most at j + 2p + 1 ≤ j + reach − 2·LANES, inside `v`
                    // by the loop condition.
                    let (a, b) = unsafe {
                        let at = v.as_ptr().add(j + 2 * p);
                        (loadu(at.cast::<V>()), loadu(at.add(1).cast::<V>()))
                    };
                    even = add_epi32(even, madd_epi16(a, c));
                    odd = add_epi32(odd, madd_epi16(b, c));
                }
                // Lane i of `even` is output j + 2i, of `odd` j + 2i + 1.
                let (first, second) = interleave_epi32(even, odd);
                // SAFETY: j + 2·LANES ≤ out.len(): both stores of LANES
                // lie inside `out`.
                unsafe {
                    let at = out.as_mut_ptr().add(j);
                    storeu(at.cast::<V>(), first);
                    storeu(at.add(LANES).cast::<V>(), second);
                }
                j += 2 * LANES;
            }
            j
        }

        /// Vector body of [`vif_moments_8bit`], `2·LANES` columns per step.
        #[target_feature(enable = $features)]
        fn $moments(r: &[&[u16]], d: &[&[u16]], taps: &[u16], mut out: [&mut [u32]; 5]) -> usize {
            use $w::*;
            let (n, w) = (taps.len(), out[0].len());
            let half = n / 2;
            let zero = setzero();
            let flip = set1_epi16(i16::MIN);
            let bias = set1_epi32(product_bias(taps) as i32);
            // SAFETY (every call below): `j + 2·LANES <= w`, and
            // `vif_moments_8bit` checked that every row holds at least `w`
            // samples.
            let load = |row: &[u16], j: usize| unsafe { loadu(row.as_ptr().add(j).cast::<V>()) };
            let mut j = 0;
            while j + 2 * LANES <= w {
                // [Σc·x, Σc·y, Σc·x², Σc·y², Σc·xy], each as the columns
                // that `unpacklo` and `unpackhi` pair up (per 128 bits:
                // 0–3 and 4–7).
                let mut lo = [zero; 5];
                let mut hi = [zero; 5];
                for k in 0..=half {
                    let cc = set1_epi32(i32::from(taps[k]) * 0x1_0001);
                    let (xa, ya) = (load(r[k], j), load(d[k], j));
                    let (xb, yb) = if k == half {
                        (zero, zero)
                    } else {
                        (load(r[n - 1 - k], j), load(d[n - 1 - k], j))
                    };
                    let sq = |a: V, b: V| xor(mullo_epi16(a, b), flip);
                    let (xxa, yya, xya) = (sq(xa, xa), sq(ya, ya), sq(xa, ya));
                    let (xxb, yyb, xyb) = if k == half {
                        (zero, zero, zero)
                    } else {
                        (sq(xb, xb), sq(yb, yb), sq(xb, yb))
                    };
                    let mut pair = |q: usize, a: V, b: V| {
                        lo[q] = add_epi32(lo[q], madd_epi16(unpacklo_epi16(a, b), cc));
                        hi[q] = add_epi32(hi[q], madd_epi16(unpackhi_epi16(a, b), cc));
                    };
                    pair(0, xa, xb);
                    pair(1, ya, yb);
                    pair(2, xxa, xxb);
                    pair(3, yya, yyb);
                    pair(4, xya, xyb);
                }
                for (q, o) in out.iter_mut().enumerate() {
                    let (l, h) = if q < 2 {
                        (lo[q], hi[q])
                    } else {
                        (add_epi32(lo[q], bias), add_epi32(hi[q], bias))
                    };
                    let (first, second) = unpacked_in_order(l, h);
                    let o = &mut o[j..j + 2 * LANES];
                    // SAFETY: `o` holds 2·LANES u32: both stores of LANES
                    // lie inside it.
                    unsafe {
                        storeu(o.as_mut_ptr().cast::<V>(), first);
                        storeu(o.as_mut_ptr().add(LANES).cast::<V>(), second);
                    }
                }
                j += 2 * LANES;
            }
            j
        }
    };
}

#[cfg(target_arch = "x86_64")]
vif_twins!(
    w256,
    "avx2,bmi1,bmi2,lzcnt,popcnt",
    madd_taps_v3,
    moments_v3
);
#[cfg(target_arch = "x86_64")]
vif_twins!(
    w512,
    "avx2,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl",
    madd_taps_v4,
    moments_v4
);

#[cfg(test)]
mod kernel_tests {
    use super::*;
    use crate::core::isa::{FORCED, Lcg, copies, force};

    const VIF_TAPS: [&[u16]; 3] = [
        &[
            489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784, 7455, 6547, 5274, 3896, 2640, 1640,
            935, 489,
        ],
        &[1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244],
        &[3571, 16004, 26386, 16004, 3571],
    ];

    #[test]
    fn every_copy_of_the_tap_filter_equals_the_sum() {
        let mut g = Lcg(7);
        let _forced = FORCED.lock().unwrap_or_else(|e| e.into_inner());
        let before = active();
        for copy in copies() {
            assert!(force(copy));
            for w in [1, 15, 16, 17, 31, 32, 33, 63, 64, 100, 960, 1920] {
                for ntaps in 1..=18 {
                    let taps: Vec<i16> = (0..ntaps)
                        .map(|k| match (k + w) % 4 {
                            0 => i16::MAX,
                            1 => -i16::MAX,
                            _ => g.next() as i16 / 2,
                        })
                        .collect();
                    for slack in [0, 40] {
                        let v: Vec<i16> = (0..w + ntaps - 1 + slack)
                            .map(|i| match i % 5 {
                                0 => i16::MIN,
                                1 => i16::MAX,
                                _ => g.next() as i16,
                            })
                            .collect();
                        let bias = g.next();
                        let mut out = vec![0u32; w];
                        filter_taps_i16(&v, &taps, bias, &mut out);
                        for (j, &o) in out.iter().enumerate() {
                            let want =
                                taps.iter().enumerate().fold(i64::from(bias), |s, (k, &c)| {
                                    s + i64::from(c) * i64::from(v[j + k])
                                });
                            assert_eq!(
                                o,
                                want as u32,
                                "{} copy, {w} columns, {ntaps} taps, slack {slack}, column {j}",
                                copy.name()
                            );
                        }
                    }
                }
            }
        }
        force(before);
    }

    #[test]
    fn every_copy_of_the_vif_moments_equals_the_sums() {
        let mut g = Lcg(11);
        let _forced = FORCED.lock().unwrap_or_else(|e| e.into_inner());
        let before = active();
        for copy in copies() {
            assert!(force(copy));
            for w in [1, 16, 31, 32, 33, 64, 100, 1920] {
                for taps in VIF_TAPS {
                    let n = taps.len();
                    let img = |g: &mut Lcg| -> Vec<Vec<u16>> {
                        (0..n)
                            .map(|k| {
                                (0..w + k)
                                    .map(|i| match (i + k) % 7 {
                                        0 => 255,
                                        1 => 0,
                                        _ => (g.next() % 256) as u16,
                                    })
                                    .collect()
                            })
                            .collect()
                    };
                    let (r, d) = (img(&mut g), img(&mut g));
                    let rr: Vec<&[u16]> = r.iter().map(|x| &x[..]).collect();
                    let dr: Vec<&[u16]> = d.iter().map(|x| &x[..]).collect();
                    let mut out = [
                        vec![0u32; w],
                        vec![0u32; w],
                        vec![0u32; w],
                        vec![0u32; w],
                        vec![0u32; w],
                    ];
                    let [a, b, c, e, f] = &mut out;
                    let done = vif_moments_8bit(&rr, &dr, taps, [a, b, c, e, f]);
                    let expect_all = match copy {
                        Isa::Baseline => 0,
                        Isa::Avx2 => w / 16 * 16,
                        Isa::Avx512 => w / 32 * 32,
                    };
                    assert_eq!(done, expect_all, "{} copy, {w} columns", copy.name());
                    for j in 0..done {
                        let sum = |f: &dyn Fn(u64, u64) -> u64| -> u32 {
                            (0..n)
                                .map(|k| {
                                    u64::from(taps[k]) * f(u64::from(r[k][j]), u64::from(d[k][j]))
                                })
                                .sum::<u64>() as u32
                        };
                        let want = [
                            sum(&|x, _| x),
                            sum(&|_, y| y),
                            sum(&|x, _| x * x),
                            sum(&|_, y| y * y),
                            sum(&|x, y| x * y),
                        ];
                        for q in 0..5 {
                            assert_eq!(
                                out[q][j],
                                want[q],
                                "{} copy, {w} columns, {n} taps, moment {q}, column {j}",
                                copy.name()
                            );
                        }
                    }
                }
            }
        }
        force(before);
    }

    #[test]
    fn every_copy_of_the_vif_log_sums_equals_the_look_ups() {
        let table = crate::extractors::vif::cpu::log2_table();
        let log = |x: u64| crate::extractors::vif::cpu::log2_fixed(&table, x);
        let mut g = Lcg(5);
        let _forced = FORCED.lock().unwrap_or_else(|e| e.into_inner());
        let before = active();
        for copy in copies() {
            assert!(force(copy));
            for n in [0, 1, 7, 8, 9, 100, 8 * 1024 + 13, 20000] {
                let arg32 = |g: &mut Lcg, i: usize| -> u32 {
                    match i % 6 {
                        0 => 1 << 17,
                        1 => u32::MAX,
                        2 => (1 << 17) + (g.next() >> 15),
                        _ => g.next().max(1 << 17),
                    }
                };
                let den: Vec<u32> = (0..n).map(|i| arg32(&mut g, i)).collect();
                let numer1: Vec<u32> = (0..n).map(|i| arg32(&mut g, i + 3)).collect();
                let num: Vec<u64> = (0..n)
                    .map(|i| match i % 5 {
                        0 => 1 << 17,
                        1 => u64::MAX >> 1,
                        2 => (1 << 52) + u64::from(g.next()),
                        _ => (u64::from(g.next()) << (g.next() % 31)).max(1 << 17),
                    })
                    .collect();
                let (done, d, m) = vif_log_sums(&table, &den, &num, &numer1);
                let want_done = if copy == Isa::Avx512 { n / 8 * 8 } else { 0 };
                assert_eq!(done, want_done, "{} copy, {n} elements", copy.name());
                let want_d: i64 = den[..done].iter().map(|&x| log(u64::from(x))).sum();
                let want_m: i64 = (0..done)
                    .map(|j| log(num[j]) - log(u64::from(numer1[j])))
                    .sum();
                assert_eq!(
                    (d, m),
                    (want_d, want_m),
                    "{} copy, {n} elements",
                    copy.name()
                );
            }
        }
        force(before);
    }
}
