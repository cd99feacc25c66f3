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
//! The hand-written bodies live with their extractors (`vif/simd.rs`,
//! `adm/simd.rs`), each written once for both vector widths against the
//! names [`w256`] and [`w512`] give the operations here.
//!
//! With those bodies, this is the `unsafe` outside `src/hip`: calling a
//! `#[target_feature]` function is `unsafe` because running it on a CPU
//! without those features is undefined, so the call is guarded by the CPU's
//! own report of them.
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

#[cfg(target_arch = "x86_64")]
/// Two taps as one `pmaddwd` operand (the first in the low half).
#[inline(always)]
pub(crate) fn tap_pair(a: i16, b: i16) -> i32 {
    ((u32::from(b as u16) << 16) | u32::from(a as u16)) as i32
}

/// The 256-bit (AVX2) names of the vector operations the extractors' SIMD
/// bodies are written in (`vif/simd.rs`, `adm/simd.rs`).
#[cfg(target_arch = "x86_64")]
pub(crate) mod w256 {
    use std::arch::x86_64::*;
    pub(crate) use std::arch::x86_64::{
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
    pub(crate) const LANES: usize = 8;

    /// Outputs 0..8 and 8..16 from `even` (lane i: output 2i) and `odd`
    /// (2i + 1).
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
    pub(crate) fn interleave_epi32(even: V, odd: V) -> (V, V) {
        unpacked_in_order(
            _mm256_unpacklo_epi32(even, odd),
            _mm256_unpackhi_epi32(even, odd),
        )
    }

    /// Columns 0..8 and 8..16 from sums over `unpacklo` (columns 0–3,
    /// 8–11) and `unpackhi` (4–7, 12–15) pairs.
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
    pub(crate) fn unpacked_in_order(lo: V, hi: V) -> (V, V) {
        (
            _mm256_permute2x128_si256::<0x20>(lo, hi),
            _mm256_permute2x128_si256::<0x31>(lo, hi),
        )
    }
}

/// The 512-bit (AVX-512) names of the same operations as [`w256`].
#[cfg(target_arch = "x86_64")]
pub(crate) mod w512 {
    use std::arch::x86_64::*;
    pub(crate) use std::arch::x86_64::{
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
    pub(crate) const LANES: usize = 16;

    /// Outputs 0..16 and 16..32 from `even` (lane i: output 2i) and `odd`
    /// (2i + 1, index 16 + i of the pair).
    #[target_feature(
        enable = "avx2,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
    )]
    pub(crate) fn interleave_epi32(even: V, odd: V) -> (V, V) {
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
    pub(crate) fn unpacked_in_order(lo: V, hi: V) -> (V, V) {
        let first = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
        let second = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
        (
            _mm512_permutex2var_epi64(lo, first, hi),
            _mm512_permutex2var_epi64(lo, second, hi),
        )
    }
}

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

/// A small deterministic generator for the SIMD bodies' tests (no
/// dependency for tests).
#[cfg(test)]
pub(crate) struct Lcg(pub(crate) u64);

#[cfg(test)]
impl Lcg {
    pub(crate) fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
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
