//! ADM constants and the CSF weights, `feature/integer_adm.h` and
//! `integer_adm.c:dwt_quant_step`.

/// db2 wavelet in Q15 (`dwt2_db2_coeffs_lo` / `_hi`).
pub const DWT_LO: [i32; 4] = [15826, 27411, 7345, -4240];
pub const DWT_HI: [i32; 4] = [-4240, -7345, 27411, -15826];
/// Σ DWT_LO ≈ 2^15·√2; subtracted (times half the range) to centre scale 0.
pub const DWT_LO_SUM: i32 = 46342;

pub const DEFAULT_EGL: f64 = 100.0;
pub const DEFAULT_NORM_VIEW_DIST: f64 = 3.0;
pub const DEFAULT_REF_DISPLAY_HEIGHT: i32 = 1080;
pub const DEFAULT_NOISE_WEIGHT: f64 = 0.03125;
pub const DEFAULT_DLM_WEIGHT: f64 = 0.5;
pub const BORDER_FACTOR: f64 = 0.1;

/// `integer_adm.h:div_lookup_generator`: D[32768 ± i] = ±trunc(2^30 / i).
pub fn div_lookup() -> Vec<i32> {
    let mut t = vec![0i32; 65537];
    for i in 1..=32768i32 {
        let recip = (1i32 << 30) / i;
        t[(32768 + i) as usize] = recip;
        t[(32768 - i) as usize] = -recip;
    }
    t
}

// Watson's DWT noise model, luma row of `dwt_7_9_YCbCr_threshold`; all floats.
const MODEL_A: f32 = 0.495;
const MODEL_K: f32 = 0.466;
const MODEL_F0: f32 = 0.401;
const MODEL_G: [f32; 4] = [1.501, 1.0, 0.534, 1.0];
/// `dwt_7_9_basis_function_amplitudes`, rows λ = 0..3.
const BASIS_AMPLITUDES: [[f32; 4]; 4] = [
    [0.62171, 0.67234, 0.72709, 0.67234],
    [0.34537, 0.41317, 0.49428, 0.41317],
    [0.18004, 0.22727, 0.28688, 0.22727],
    [0.091401, 0.11792, 0.15214, 0.11792],
];

/// `dwt_quant_step`: the quantisation step Q(λ, θ), with libvmaf's mix of
/// float and double intermediates.
pub fn dwt_quant_step(
    lambda: usize,
    theta: usize,
    norm_view_dist: f64,
    ref_display_height: i32,
) -> f32 {
    let r = (norm_view_dist * f64::from(ref_display_height) * std::f64::consts::PI / 180.0) as f32;
    let temp = (2.0f64.powi(lambda as i32 + 1) * f64::from(MODEL_F0) * f64::from(MODEL_G[theta])
        / f64::from(r))
    .log10() as f32;
    let exponent = MODEL_K * temp * temp; // float products
    (2.0 * f64::from(MODEL_A) * 10.0f64.powf(f64::from(exponent))
        / f64::from(BASIS_AMPLITUDES[lambda][theta])) as f32
}

/// The CSF factors (h/v, d) of one scale: `1.0f / Q`.
pub fn rfactors(scale: usize, nvd: f64, rdh: i32) -> [f32; 3] {
    let f1 = 1.0f32 / dwt_quant_step(scale, 1, nvd, rdh);
    let f2 = 1.0f32 / dwt_quant_step(scale, 2, nvd, rdh);
    [f1, f1, f2]
}

/// Scale-0 fixed-point CSF factors (Q21, Q21, Q23). At the default viewing
/// conditions libvmaf uses hard-coded values, not the computed ones.
pub fn rfactors_scale0_fixed(nvd: f64, rdh: i32) -> [i32; 3] {
    if (nvd * f64::from(rdh) - DEFAULT_NORM_VIEW_DIST * f64::from(DEFAULT_REF_DISPLAY_HEIGHT)).abs()
        < 1.0e-8
    {
        [36453, 36453, 49417]
    } else {
        let rf = rfactors(0, nvd, rdh);
        [
            (f64::from(rf[0]) * 2f64.powi(21)) as u16 as i32,
            (f64::from(rf[1]) * 2f64.powi(21)) as u16 as i32,
            (f64::from(rf[2]) * 2f64.powi(23)) as u16 as i32,
        ]
    }
}

/// Scales 1..3 fixed-point CSF factors, Q32.
pub fn rfactors_s123_fixed(scale: usize, nvd: f64, rdh: i32) -> [u32; 3] {
    let rf = rfactors(scale, nvd, rdh);
    [
        (f64::from(rf[0]) * 2f64.powi(32)) as u32,
        (f64::from(rf[1]) * 2f64.powi(32)) as u32,
        (f64::from(rf[2]) * 2f64.powi(32)) as u32,
    ]
}

/// libvmaf computes some power-of-two divisors as `pow(2, a - b)` with
/// unsigned operands: a negative difference wraps and the divisor becomes
/// infinite. Kept so tiny or giant frames behave as libvmaf does.
pub fn pow2_unsigned(a: i64, b: i64) -> f64 {
    let e = (a - b) as u32;
    2f64.powf(f64::from(e))
}

/// `(uint32_t)ceil(log2(n) - k)` clamped at 0 for the rounding constants.
pub fn ceil_log2_minus(n: usize, k: f64) -> u32 {
    ((n as f64).log2() - k).ceil().max(0.0) as u32
}

/// Rounding term `(uint32_t)pow(2, s - 1)`, 0 when `s` is 0.
pub fn half_of_pow2(s: u32) -> i64 {
    if s == 0 { 0 } else { 1i64 << (s - 1) }
}

/// Band regions of one scale, from that scale's band size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub top: i32,
    pub bottom: i32,
    pub left: i32,
    pub right: i32,
}

impl Region {
    /// E: where decouple and CSF write (`adm_decouple`, `adm_csf`), clipped.
    pub fn extended(w: usize, h: usize) -> Region {
        let left = (w as f64 * BORDER_FACTOR - 0.5 - 1.0) as i32;
        let top = (h as f64 * BORDER_FACTOR - 0.5 - 1.0) as i32;
        let right = w as i32 - left + 2;
        let bottom = h as i32 - top + 2;
        Region {
            left: left.max(0),
            top: top.max(0),
            right: right.min(w as i32),
            bottom: bottom.min(h as i32),
        }
    }

    /// C: where the masking and the denominator sum (not clipped).
    pub fn core(w: usize, h: usize) -> Region {
        let left = (w as f64 * BORDER_FACTOR - 0.5) as i32;
        let top = (h as f64 * BORDER_FACTOR - 0.5) as i32;
        Region {
            left,
            top,
            right: w as i32 - left,
            bottom: h as i32 - top,
        }
    }

    pub fn area(&self) -> i32 {
        (self.bottom - self.top) * (self.right - self.left)
    }
}

/// `dwt2_src_indices_filt`: the four source indices of each DWT output along
/// one axis of an `n`-sample input. R101 at the start, half-sample symmetric
/// at the end; libvmaf's loop bounds are kept verbatim for tiny inputs.
pub fn dwt_indices(n: usize) -> Vec<[i32; 4]> {
    let half = n.div_ceil(2);
    let mut ind = vec![[0i32; 4]; half.max(1)];
    ind[0] = [1, 0, 1, 2];
    let n = n as i32;
    let mid_end = half.saturating_sub(2); // unsigned `half - 2` in C
    for (i, slot) in ind.iter_mut().enumerate().take(mid_end).skip(1) {
        let b = 2 * i as i32;
        *slot = [b - 1, b, b + 1, b + 2];
    }
    if half >= 2 {
        for (i, slot) in ind.iter_mut().enumerate().take(half).skip(half - 2) {
            let b = 2 * i as i32;
            *slot = [b - 1, b, b + 1, b + 2].map(|x| if x >= n { 2 * n - x - 1 } else { x });
        }
    }
    ind
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quant_steps_match_measured_values() {
        // REFERENCE.md §3: Q(λ) for LH / HH at nvd 3, rdh 1080, gcc/glibc.
        let want = [
            (57.5323105, 169.759491),
            (31.2648239, 69.9346313),
            (23.0559978, 40.9888),
            (21.894577, 31.9358845),
        ];
        for (l, (lh, hh)) in want.iter().enumerate() {
            assert!(
                (f64::from(dwt_quant_step(l, 1, 3.0, 1080)) - lh).abs() < 1e-4,
                "λ{l} LH"
            );
            assert!(
                (f64::from(dwt_quant_step(l, 2, 3.0, 1080)) - hh).abs() < 1e-4,
                "λ{l} HH"
            );
        }
    }

    #[test]
    fn s123_fixed_factors_match_libvmaf() {
        assert_eq!(
            rfactors_s123_fixed(1, 3.0, 1080),
            [137373792, 137373792, 61414028]
        );
        assert_eq!(
            rfactors_s123_fixed(2, 3.0, 1080),
            [186284160, 186284160, 104783920]
        );
        assert_eq!(
            rfactors_s123_fixed(3, 3.0, 1080),
            [196165808, 196165808, 134487184]
        );
    }

    #[test]
    fn dwt_indices_mirror_rules() {
        let ind = dwt_indices(10);
        assert_eq!(ind[0], [1, 0, 1, 2]);
        assert_eq!(ind[1], [1, 2, 3, 4]);
        assert_eq!(ind[4], [7, 8, 9, 9]); // 10 → 9: edge repeated at the end
        let odd = dwt_indices(9);
        assert_eq!(odd[4], [7, 8, 8, 7]);
    }

    #[test]
    fn regions_for_576x324_scale0() {
        // REFERENCE.md §3 example: band 288x162.
        let e = Region::extended(288, 162);
        assert_eq!((e.left, e.right, e.top, e.bottom), (27, 263, 14, 150));
        let c = Region::core(288, 162);
        assert_eq!((c.left, c.right, c.top, c.bottom), (28, 260, 15, 147));
    }

    #[test]
    fn div_lookup_ends() {
        let d = div_lookup();
        assert_eq!(d[32768 + 1], 1 << 30);
        assert_eq!(d[32768 - 1], -(1 << 30));
        assert_eq!(d[65536], 32768);
        assert_eq!(d[0], -32768);
    }
}
