//! Integer ADM's constants and CSF weights (`feature/integer_adm.h`); the
//! CSF both ADMs weigh with is `common::adm_csf`.

/// db2 wavelet in Q15 (`dwt2_db2_coeffs_lo` / `_hi`).
pub use super::types::{
    CSF_BARTEN, CSF_BLEND, CSF_BLEND_MAE, CSF_WATSON97, DEFAULT_DLM_WEIGHT, DEFAULT_EGL,
    DEFAULT_NOISE_WEIGHT, DEFAULT_NORM_VIEW_DIST, DEFAULT_REF_DISPLAY_HEIGHT,
};

use crate::extractors::common::adm_csf::{CSF_LUM, barten, dwt_quant_step};

pub const DWT_LO: [i32; 4] = [15826, 27411, 7345, -4240];
pub const DWT_HI: [i32; 4] = [-4240, -7345, 27411, -15826];
/// Σ DWT_LO ≈ 2^15·√2; subtracted (times half the range) to centre scale 0.
pub const DWT_LO_SUM: i32 = 46342;

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

/// `barten_watson_blend_csf` (mode 2) and `_mae` (mode 3) tables:
/// `[mode − 2][(rdh, nvd) row][θ][scale]`.
const BLEND_CONDITIONS: [(i32, f64); 8] = [
    (1080, 3.0),
    (1080, 5.0),
    (2160, 3.0),
    (2160, 5.0),
    (720, 3.0),
    (720, 5.0),
    (480, 3.0),
    (480, 5.0),
];
const BLEND: [[[[f32; 4]; 2]; 8]; 2] = [
    [
        [
            [0.01183, 0.025026, 0.04295, 0.058621],
            [0.004302, 0.011778, 0.023918, 0.035901],
        ],
        [
            [0.004212, 0.014809, 0.029642, 0.047464],
            [0.000984, 0.005852, 0.0146, 0.027574],
        ],
        [
            [0.00226, 0.01183, 0.025026, 0.04295],
            [0.000479, 0.004302, 0.011778, 0.023918],
        ],
        [
            [0.000092, 0.004212, 0.014809, 0.029642],
            [0.000050, 0.000984, 0.005852, 0.0146],
        ],
        [
            [0.018715, 0.035637, 0.052798, 0.061509],
            [0.007999, 0.018396, 0.031851, 0.037718],
        ],
        [
            [0.010144, 0.022561, 0.040309, 0.05672],
            [0.003463, 0.010282, 0.021839, 0.034641],
        ],
        [
            [0.027961, 0.045875, 0.060275, 0.056234],
            [0.013572, 0.026277, 0.036959, 0.034511],
        ],
        [
            [0.016781, 0.032822, 0.05032, 0.061594],
            [0.00691, 0.016545, 0.029917, 0.037777],
        ],
    ],
    [
        [
            [0.011249, 0.022606, 0.035930, 0.045673],
            [0.004097, 0.010921, 0.021430, 0.031313],
        ],
        [
            [0.004052, 0.013939, 0.026298, 0.038833],
            [0.000927, 0.005544, 0.013415, 0.024515],
        ],
        [
            [0.002166, 0.011249, 0.022606, 0.035930],
            [0.000447, 0.004097, 0.010921, 0.021430],
        ],
        [
            [0.000077, 0.004052, 0.013939, 0.026298],
            [0.000045, 0.000927, 0.005544, 0.013415],
        ],
        [
            [0.017329, 0.030870, 0.042134, 0.047410],
            [0.007509, 0.016707, 0.028072, 0.032722],
        ],
        [
            [0.009689, 0.020577, 0.034162, 0.044523],
            [0.003302, 0.009579, 0.019661, 0.030318],
        ],
        [
            [0.024969, 0.037825, 0.046676, 0.043974],
            [0.012511, 0.023424, 0.032139, 0.030166],
        ],
        [
            [0.015665, 0.028766, 0.040612, 0.047483],
            [0.006514, 0.015107, 0.026476, 0.032776],
        ],
    ],
];

/// Row of the blend tables for these viewing conditions. 2160 lines at
/// 1.5 H has the pixels per degree of 1080 at 3 H and shares its row.
fn blend_row(nvd: f64, rdh: i32) -> Option<usize> {
    if rdh == 2160 && nvd == 1.5 {
        return Some(0);
    }
    BLEND_CONDITIONS
        .iter()
        .position(|&(h, d)| h == rdh && d == nvd)
}

/// Modes 2 and 3 only know the viewing conditions of their tables; libvmaf
/// would use −EINVAL (−22.0) as a weight elsewhere, so this engine refuses.
pub fn check_csf(p: &super::types::AdmParams) -> Result<(), String> {
    if matches!(p.csf_mode, CSF_BLEND | CSF_BLEND_MAE)
        && blend_row(p.norm_view_dist, p.ref_display_height).is_none()
    {
        return Err(format!(
            "adm_csf_mode {} has CSF tables only for adm_ref_display_height/adm_norm_view_dist \
             1080/3, 1080/5, 2160/1.5, 2160/3, 2160/5, 720/3, 720/5, 480/3, 480/5 (got {}/{})",
            p.csf_mode,
            p.ref_display_height,
            fmt_num(p.norm_view_dist)
        ));
    }
    Ok(())
}

fn fmt_num(v: f64) -> String {
    crate::extractors::common::options::fmt_g(v)
}

/// The CSF factors (h, v, d) of one scale for the extractor's `adm_csf_mode`
/// (`adm_csf`, `i4_adm_csf`, `adm_csf_den_*`): Watson's `1.0f / Q`, Barten's
/// CSF, or the blended tables.
pub fn rfactors(scale: usize, p: &super::types::AdmParams) -> [f32; 3] {
    let (nvd, rdh) = (p.norm_view_dist, p.ref_display_height);
    let (f1, f2) = match p.csf_mode {
        CSF_BARTEN => (
            barten::csf(scale, nvd, rdh, CSF_LUM, p.csf_scale),
            barten::csf(scale, nvd, rdh, CSF_LUM, p.csf_diag_scale),
        ),
        CSF_BLEND | CSF_BLEND_MAE => {
            let t = &BLEND[(p.csf_mode - CSF_BLEND) as usize]
                [blend_row(nvd, rdh).expect("checked by check_csf")];
            (t[0][scale], t[1][scale])
        }
        _ => (
            1.0f32 / dwt_quant_step(scale, 1, nvd, rdh),
            1.0f32 / dwt_quant_step(scale, 2, nvd, rdh),
        ),
    };
    [f1, f1, f2]
}

/// Scale-0 fixed-point CSF factors (Q21, Q21, Q23). At the default viewing
/// conditions with Watson's CSF libvmaf uses hard-coded values, not the
/// computed ones.
pub fn rfactors_scale0_fixed(p: &super::types::AdmParams) -> [i32; 3] {
    let (nvd, rdh) = (p.norm_view_dist, p.ref_display_height);
    if (nvd * f64::from(rdh) - DEFAULT_NORM_VIEW_DIST * f64::from(DEFAULT_REF_DISPLAY_HEIGHT)).abs()
        < 1.0e-8
        && p.csf_mode == CSF_WATSON97
    {
        [36453, 36453, 49417]
    } else {
        let rf = rfactors(0, p);
        [
            (f64::from(rf[0]) * 2f64.powi(21)) as u16 as i32,
            (f64::from(rf[1]) * 2f64.powi(21)) as u16 as i32,
            (f64::from(rf[2]) * 2f64.powi(23)) as u16 as i32,
        ]
    }
}

/// Scales 1..3 fixed-point CSF factors, Q32.
pub fn rfactors_s123_fixed(scale: usize, p: &super::types::AdmParams) -> [u32; 3] {
    let rf = rfactors(scale, p);
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
            rfactors_s123_fixed(1, &crate::extractors::adm::types::AdmParams::default()),
            [137373792, 137373792, 61414028]
        );
        assert_eq!(
            rfactors_s123_fixed(2, &crate::extractors::adm::types::AdmParams::default()),
            [186284160, 186284160, 104783920]
        );
        assert_eq!(
            rfactors_s123_fixed(3, &crate::extractors::adm::types::AdmParams::default()),
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
