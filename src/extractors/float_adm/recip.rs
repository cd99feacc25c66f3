//! The reciprocals libvmaf's float ADM divides with: the CPU's SSE estimate
//! refined by one Newton step, and the same estimates as a table for the GPU.

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
