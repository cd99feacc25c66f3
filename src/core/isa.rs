//! Instruction-set dispatch for the CPU engine's hot loops.
//!
//! The crate is built for the x86-64 baseline (SSE2) so that the plugin loads
//! and runs on any x86-64 CPU. The engine's exact integer filters vectorise
//! far better with AVX2 (four 32×32→64-bit products per instruction instead
//! of two, 16-bit products sixteen at a time), so each hot loop is compiled a
//! second time inside [`dispatch`] with the x86-64-v3 features enabled, and
//! the copy that matches the running CPU is chosen at run time. A third copy
//! is compiled with the x86-64-v4 (AVX-512 F/BW/CD/DQ/VL) features for CPUs
//! that have them: twice the lanes again for the same source.
//!
//! Both copies are the same Rust source: only the instructions the compiler
//! may pick differ. The engine's floating point is unaffected (Rust never
//! contracts `a * b + c` into a fused multiply-add on its own, and no FMA
//! feature is enabled here), so the copies give bit-identical numbers;
//! `tests/engine.rs` checks every copy the running CPU has.
//!
//! This is the one `unsafe` outside `src/hip`: calling a `#[target_feature]`
//! function is `unsafe` because running it on a CPU without those features
//! is undefined, so the call is guarded by the CPU's own report of them.
//! [`stream_copy`] (non-temporal stores of the x86-64 baseline, for buffers a
//! DMA engine reads next) takes raw pointers, and is bounds-checked around them.
//!
//! `VMAFHIP_CPU_ISA=baseline|avx2|avx512` (read once) forces a copy, to
//! compare them or to rule the dispatch out when chasing a problem; a copy
//! the CPU cannot run is never chosen (the best one it can run is used).

use std::sync::atomic::{AtomicU8, Ordering};

/// Which copy of the hot loops runs. Ordered: a CPU that runs one runs the
/// ones before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isa {
    /// As built: x86-64 baseline (SSE2), or whatever the target is.
    Baseline,
    /// x86-64 with AVX2, BMI1/2, LZCNT and POPCNT (the x86-64-v3 integer set).
    Avx2,
    /// x86-64-v3 plus AVX-512 F, BW, CD, DQ and VL (the x86-64-v4 set).
    Avx512,
}

impl Isa {
    /// Every copy, in order.
    pub const ALL: [Isa; 3] = [Isa::Baseline, Isa::Avx2, Isa::Avx512];

    /// Short name, as the engine reports it (`"avx512"`, `"avx2"`, `"baseline"`).
    pub fn name(self) -> &'static str {
        match self {
            Isa::Baseline => "baseline",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    fn code(self) -> u8 {
        self as u8 + 1
    }

    fn from_code(code: u8) -> Option<Isa> {
        Isa::ALL.get(usize::from(code).checked_sub(1)?).copied()
    }
}

const UNSET: u8 = 0;

/// The choice, made once: `UNSET` until the first call of [`active`].
static CHOSEN: AtomicU8 = AtomicU8::new(UNSET);

/// The best copy the running CPU supports, ignoring any override.
pub fn detected() -> Isa {
    #[cfg(target_arch = "x86_64")]
    {
        let v3 = std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2")
            && std::is_x86_feature_detected!("lzcnt")
            && std::is_x86_feature_detected!("popcnt");
        let v4 = v3
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512cd")
            && std::is_x86_feature_detected!("avx512dq")
            && std::is_x86_feature_detected!("avx512vl");
        if v4 {
            return Isa::Avx512;
        }
        if v3 {
            return Isa::Avx2;
        }
    }
    Isa::Baseline
}

/// The copy [`dispatch`] runs: [`detected`], unless `VMAFHIP_CPU_ISA` or
/// [`force`] asked for a lower one.
#[inline]
pub fn active() -> Isa {
    if let Some(isa) = Isa::from_code(CHOSEN.load(Ordering::Relaxed)) {
        return isa;
    }
    let asked = std::env::var("VMAFHIP_CPU_ISA")
        .ok()
        .and_then(|v| Isa::ALL.into_iter().find(|i| i.name() == v));
    let isa = asked.map_or(detected(), |a| a.min(detected()));
    CHOSEN.store(isa.code(), Ordering::Relaxed);
    isa
}

/// Run copy `isa` from now on, if this CPU can (returns false and changes
/// nothing if it cannot). For tests and benchmarks that compare copies.
pub fn force(isa: Isa) -> bool {
    if isa > detected() {
        return false;
    }
    CHOSEN.store(isa.code(), Ordering::Relaxed);
    true
}

/// Runs `body` compiled for the best instruction set this CPU has.
///
/// `body` should be an `#[inline(always)]` closure whose callees in the hot
/// loop are `#[inline(always)]` too: only code inlined into a copy is
/// compiled with that copy's features.
#[inline(always)]
pub fn dispatch<R>(body: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        match active() {
            // SAFETY: `active()` returns `Avx512` only when `detected()` saw
            // the CPU report every feature `x86_64_v4` enables.
            Isa::Avx512 => return unsafe { x86_64_v4(body) },
            // SAFETY: `active()` returns `Avx2` only when `detected()` saw the
            // CPU report every feature `x86_64_v3` enables (avx2, bmi1, bmi2,
            // lzcnt, popcnt; AVX2 implies the AVX/SSE levels below it).
            Isa::Avx2 => return unsafe { x86_64_v3(body) },
            Isa::Baseline => {}
        }
    }
    body()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
fn x86_64_v3<R>(body: impl FnOnce() -> R) -> R {
    body()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(
    enable = "avx2,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
)]
fn x86_64_v4<R>(body: impl FnOnce() -> R) -> R {
    body()
}

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

/// Two taps as one `pmaddwd` operand (the first in the low half).
#[inline(always)]
fn tap_pair(a: i16, b: i16) -> i32 {
    ((u32::from(b as u16) << 16) | u32::from(a as u16)) as i32
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

/// The AVX2 and AVX-512 bodies of the hand-written kernels, from one
/// source: `$w` names the operations alike for both vector widths
/// ([`w256`], [`w512`]: `V`, `loadu`, `add_epi32`, …, `LANES` 32-bit lanes
/// per vector, and the lane reorderings each width does its own way).
#[cfg(target_arch = "x86_64")]
macro_rules! twin_kernels {
    ($w:ident, $features:literal, $madd_taps:ident, $moments:ident, $dwt_v:ident, $dwt_h:ident) => {
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

/// The 256-bit (AVX2) names of [`twin_kernels`]' operations.
#[cfg(target_arch = "x86_64")]
mod w256 {
    use std::arch::x86_64::*;
    pub(super) use std::arch::x86_64::{
        __m256i as V, _mm256_add_epi32 as add_epi32, _mm256_loadu_si256 as loadu,
        _mm256_madd_epi16 as madd_epi16, _mm256_mullo_epi16 as mullo_epi16,
        _mm256_packs_epi32 as packs_epi32, _mm256_set1_epi16 as set1_epi16,
        _mm256_set1_epi32 as set1_epi32, _mm256_setzero_si256 as setzero,
        _mm256_slli_epi32 as slli_epi32, _mm256_sra_epi32 as sra_epi32,
        _mm256_srai_epi32 as srai_epi32, _mm256_storeu_si256 as storeu,
        _mm256_sub_epi32 as sub_epi32, _mm256_unpackhi_epi16 as unpackhi_epi16,
        _mm256_unpacklo_epi16 as unpacklo_epi16, _mm256_xor_si256 as xor,
    };
    /// 32-bit lanes per vector.
    pub(super) const LANES: usize = 8;

    /// Outputs 0..8 and 8..16 from `even` (lane i: output 2i) and `odd`
    /// (2i + 1).
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
    pub(super) fn interleave_epi32(even: V, odd: V) -> (V, V) {
        unpacked_in_order(
            _mm256_unpacklo_epi32(even, odd),
            _mm256_unpackhi_epi32(even, odd),
        )
    }

    /// Columns 0..8 and 8..16 from sums over `unpacklo` (columns 0–3,
    /// 8–11) and `unpackhi` (4–7, 12–15) pairs.
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
    pub(super) fn unpacked_in_order(lo: V, hi: V) -> (V, V) {
        (
            _mm256_permute2x128_si256::<0x20>(lo, hi),
            _mm256_permute2x128_si256::<0x31>(lo, hi),
        )
    }
}

/// The 512-bit (AVX-512) names of [`twin_kernels`]' operations.
#[cfg(target_arch = "x86_64")]
mod w512 {
    use std::arch::x86_64::*;
    pub(super) use std::arch::x86_64::{
        __m512i as V, _mm512_add_epi32 as add_epi32, _mm512_loadu_si512 as loadu,
        _mm512_madd_epi16 as madd_epi16, _mm512_mullo_epi16 as mullo_epi16,
        _mm512_packs_epi32 as packs_epi32, _mm512_set1_epi16 as set1_epi16,
        _mm512_set1_epi32 as set1_epi32, _mm512_setzero_si512 as setzero,
        _mm512_slli_epi32 as slli_epi32, _mm512_sra_epi32 as sra_epi32,
        _mm512_srai_epi32 as srai_epi32, _mm512_storeu_si512 as storeu,
        _mm512_sub_epi32 as sub_epi32, _mm512_unpackhi_epi16 as unpackhi_epi16,
        _mm512_unpacklo_epi16 as unpacklo_epi16, _mm512_xor_si512 as xor,
    };
    /// 32-bit lanes per vector.
    pub(super) const LANES: usize = 16;

    /// Outputs 0..16 and 16..32 from `even` (lane i: output 2i) and `odd`
    /// (2i + 1, index 16 + i of the pair).
    #[target_feature(
        enable = "avx2,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
    )]
    pub(super) fn interleave_epi32(even: V, odd: V) -> (V, V) {
        let first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
        let second =
            _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
        (
            _mm512_permutex2var_epi32(even, first, odd),
            _mm512_permutex2var_epi32(even, second, odd),
        )
    }

    /// Columns 0..16 and 16..32 from sums over `unpacklo` (columns 0–3,
    /// 8–11, 16–19, 24–27) and `unpackhi` (the others) pairs, 128 bits at a
    /// time.
    #[target_feature(
        enable = "avx2,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
    )]
    pub(super) fn unpacked_in_order(lo: V, hi: V) -> (V, V) {
        let first = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
        let second = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
        (
            _mm512_permutex2var_epi64(lo, first, hi),
            _mm512_permutex2var_epi64(lo, second, hi),
        )
    }
}

#[cfg(target_arch = "x86_64")]
twin_kernels!(
    w256,
    "avx2,bmi1,bmi2,lzcnt,popcnt",
    madd_taps_v3,
    moments_v3,
    dwt0_vertical_v3,
    dwt0_horizontal_v3
);
#[cfg(target_arch = "x86_64")]
twin_kernels!(
    w512,
    "avx2,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl",
    madd_taps_v4,
    moments_v4,
    dwt0_vertical_v4,
    dwt0_horizontal_v4
);

/// Copies `src` into `dst` (equal lengths) with non-temporal stores where
/// `dst` is 16-byte aligned. For a destination that only a DMA engine reads
/// next (the GPU's pinned staging buffer): a plain copy first reads every
/// destination cache line it is about to overwrite, so streaming stores move
/// a third less memory, which is what bounds many pipelines staging at once.
/// Call [`stream_fence`] once the copies are done, before the device reads
/// the buffer.
pub fn stream_copy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "stream_copy: lengths differ");
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let head = dst.as_ptr().align_offset(16).min(dst.len());
        let body = (dst.len() - head) / 16 * 16;
        dst[..head].copy_from_slice(&src[..head]);
        let (d, s) = (&mut dst[head..head + body], &src[head..head + body]);
        for i in (0..body).step_by(16) {
            // SAFETY: `i + 16 <= body`, so both 16-byte accesses lie inside
            // `d` and `s`; `d`'s start is 16-byte aligned (`head`) and `i` a
            // multiple of 16, as `_mm_stream_si128` requires; the load is
            // unaligned. SSE2 is part of the x86-64 baseline.
            unsafe {
                let v = _mm_loadu_si128(s.as_ptr().add(i).cast::<__m128i>());
                _mm_stream_si128(d.as_mut_ptr().add(i).cast::<__m128i>(), v);
            }
        }
        dst[head + body..].copy_from_slice(&src[head + body..]);
        return;
    }
    #[allow(unreachable_code)]
    dst.copy_from_slice(src);
}

/// Orders this thread's [`stream_copy`] stores before whatever it does next
/// (handing the buffer to the device, or ending a thread another joins).
pub fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` has no operands or preconditions; SSE is part of the
    // x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    }
}

#[cfg(test)]
mod stream_tests {
    use super::*;

    #[test]
    fn stream_copy_equals_a_plain_copy_at_any_length_and_alignment() {
        let src: Vec<u8> = (0..4099u32).map(|i| (i * 7 + 3) as u8).collect();
        for len in [0, 1, 15, 16, 17, 31, 64, 100, 1920, 4000] {
            for dst_off in 0..17 {
                for src_off in [0, 1, 5, 16] {
                    let mut dst = vec![0xAAu8; len + 40];
                    stream_copy(
                        &mut dst[dst_off..dst_off + len],
                        &src[src_off..src_off + len],
                    );
                    stream_fence();
                    assert_eq!(&dst[dst_off..dst_off + len], &src[src_off..src_off + len]);
                    assert!(dst[..dst_off].iter().all(|&b| b == 0xAA));
                    assert!(dst[dst_off + len..].iter().all(|&b| b == 0xAA));
                }
            }
        }
    }
}

/// Held by each test that forces copies: `force` is process-wide, and such
/// tests check which copy ran. (Other tests running beside them are
/// unaffected: every copy gives the same numbers.)
#[cfg(test)]
pub(crate) static FORCED: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The copies this CPU can run, each to be forced in turn (saying which
/// ones it cannot, so that a copy never tested here is visible).
#[cfg(test)]
pub(crate) fn copies() -> Vec<Isa> {
    for i in Isa::ALL {
        if i > detected() {
            eprintln!("not exercised here: the {} copy", i.name());
        }
    }
    Isa::ALL.into_iter().filter(|&i| i <= detected()).collect()
}

#[cfg(test)]
mod kernel_tests {
    use super::*;

    /// A small deterministic generator (no dependency for tests).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u32 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) as u32
        }
    }

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

/// The CPU's reciprocal estimate of `x` (SSE `rcpss`); elsewhere the true
/// reciprocal.
#[inline]
fn recip_estimate(x: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "sse")]
        fn rcp_sse(x: f32) -> f32 {
            use std::arch::x86_64::{_mm_cvtss_f32, _mm_rcp_ss, _mm_set_ss};
            _mm_cvtss_f32(_mm_rcp_ss(_mm_set_ss(x)))
        }
        // SAFETY: SSE is part of the x86-64 baseline every x86-64 CPU has.
        unsafe { rcp_sse(x) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        1.0 / x
    }
}

/// `rcp_s` of libvmaf's float ADM (`adm_tools.c`, `ADM_OPT_RECIP_DIVISION`,
/// its divisions `n / d` taken as `n · rcp_s(d)`): the SSE approximate
/// reciprocal (`rcpss`) refined by one Newton step. The approximation is the
/// CPU's, so the last bit can differ between CPU makers, as libvmaf's does.
/// Off x86-64, the true reciprocal.
#[inline]
pub fn recip_newton(x: f32) -> f32 {
    if cfg!(target_arch = "x86_64") {
        let xi = recip_estimate(x);
        xi + xi * (1.0 - x * xi)
    } else {
        1.0 / x
    }
}

/// The reciprocal estimates [`recip_newton`] starts from, as a table the
/// GPU can use: entry k is the estimate for the float 1 + k/4096 (mantissa
/// top 12 bits k). Where the estimate's mantissa depends only on those 12
/// bits of its input's (its exponent and sign following the input's), the
/// table gives every estimate; the second value says whether that holds on
/// this CPU (checked on 2^16 inputs over the whole normal range, both
/// signs). Off x86-64, the true reciprocals.
pub fn recip_estimate_table() -> (Vec<f32>, bool) {
    let table: Vec<f32> = (0..4096u32)
        .map(|k| recip_estimate(f32::from_bits(0x3F80_0000 | (k << 11))))
        .collect();
    let from_table = |x: f32| {
        let u = x.to_bits();
        let e = ((u >> 23) & 0xFF) as i32;
        let r = table[((u >> 11) & 0xFFF) as usize].to_bits();
        f32::from_bits(((r as i32 - ((e - 127) << 23)) as u32) | (u & 0x8000_0000))
    };
    let mut s = 0x9E37_79B9u32;
    let holds = (0..1 << 16).all(|_| {
        s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        // Exponents 1..252: normal inputs with normal estimates.
        let e = 1 + (s >> 8) % 252;
        let x = f32::from_bits((s & 0x8000_0000) | (e << 23) | (s.rotate_left(11) & 0x7F_FFFF));
        recip_estimate(x).to_bits() == from_table(x).to_bits()
    });
    (table, holds)
}
