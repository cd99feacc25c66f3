//! Instruction-set dispatch for the CPU engine's hot loops.
//!
//! The crate is built for the x86-64 baseline (SSE2) so that the plugin loads
//! and runs on any x86-64 CPU. The engine's exact integer filters vectorise
//! far better with AVX2 (four 32×32→64-bit products per instruction instead
//! of two, 16-bit products sixteen at a time), so each hot loop is compiled a
//! second time inside [`dispatch`] with the x86-64-v3 features enabled, and
//! the copy that matches the running CPU is chosen at run time.
//!
//! Both copies are the same Rust source: only the instructions the compiler
//! may pick differ. The engine's floating point is unaffected (Rust never
//! contracts `a * b + c` into a fused multiply-add on its own, and no FMA
//! feature is enabled here), so the two copies give bit-identical numbers;
//! `tests/engine.rs` checks that on every run where the CPU has AVX2.
//!
//! This is the one `unsafe` outside `src/hip`: calling a `#[target_feature]`
//! function is `unsafe` because running it on a CPU without those features
//! is undefined, so the call is guarded by the CPU's own report of them.
//!
//! `VMAFHIP_CPU_ISA=baseline` (read once) forces the baseline copy, to
//! compare the two or to rule the dispatch out when chasing a problem.

use std::sync::atomic::{AtomicU8, Ordering};

/// Which copy of the hot loops runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// As built: x86-64 baseline (SSE2), or whatever the target is.
    Baseline,
    /// x86-64 with AVX2, BMI1/2, LZCNT and POPCNT (the x86-64-v3 integer set).
    Avx2,
}

impl Isa {
    /// Short name, as the engine reports it (`"avx2"`, `"baseline"`).
    pub fn name(self) -> &'static str {
        match self {
            Isa::Baseline => "baseline",
            Isa::Avx2 => "avx2",
        }
    }
}

const UNSET: u8 = 0;
const BASELINE: u8 = 1;
const AVX2: u8 = 2;

/// The choice, made once: `UNSET` until the first call of [`active`].
static CHOSEN: AtomicU8 = AtomicU8::new(UNSET);

/// What the running CPU supports, ignoring any override.
pub fn detected() -> Isa {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2")
            && std::is_x86_feature_detected!("lzcnt")
            && std::is_x86_feature_detected!("popcnt")
        {
            return Isa::Avx2;
        }
    }
    Isa::Baseline
}

/// The copy [`dispatch`] runs: [`detected`], unless `VMAFHIP_CPU_ISA=baseline`
/// or [`force_baseline`] said otherwise.
#[inline]
pub fn active() -> Isa {
    match CHOSEN.load(Ordering::Relaxed) {
        BASELINE => Isa::Baseline,
        AVX2 => Isa::Avx2,
        _ => {
            let baseline_asked = std::env::var("VMAFHIP_CPU_ISA").is_ok_and(|v| v == "baseline");
            let isa = if baseline_asked {
                Isa::Baseline
            } else {
                detected()
            };
            store(isa);
            isa
        }
    }
}

fn store(isa: Isa) {
    let code = match isa {
        Isa::Baseline => BASELINE,
        Isa::Avx2 => AVX2,
    };
    CHOSEN.store(code, Ordering::Relaxed);
}

/// Run the baseline copy from now on (`true`), or go back to what the CPU
/// supports (`false`). For tests and benchmarks that compare the two.
pub fn force_baseline(on: bool) {
    store(if on { Isa::Baseline } else { detected() });
}

/// Runs `body` compiled for the best instruction set this CPU has.
///
/// `body` should be an `#[inline(always)]` closure whose callees in the hot
/// loop are `#[inline(always)]` too: only code inlined into the AVX2 copy is
/// compiled with AVX2.
#[inline(always)]
pub fn dispatch<R>(body: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if active() == Isa::Avx2 {
            // SAFETY: `active()` returns `Avx2` only when `detected()` saw the
            // CPU report every feature `x86_64_v3` enables (avx2, bmi1, bmi2,
            // lzcnt, popcnt; AVX2 implies the AVX/SSE levels below it).
            return unsafe { x86_64_v3(body) };
        }
    }
    body()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
fn x86_64_v3<R>(body: impl FnOnce() -> R) -> R {
    body()
}
