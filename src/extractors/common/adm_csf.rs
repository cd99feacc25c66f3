//! The contrast sensitivity both ADMs weigh their bands with (libvmaf
//! `integer_adm.c:dwt_quant_step`, `barten_csf_tools.h`,
//! `adm_csf_tools.h`): Watson's quantisation steps, Barten's CSF and the
//! DLM paper's native CSF, with libvmaf's float and double intermediates.

/// `adm_csf_mode` values (`integer_adm.h:ADM_CSF_MODE`).
pub const CSF_WATSON97: i32 = 0;
pub const CSF_BARTEN: i32 = 1;
pub const CSF_BLEND: i32 = 2;
pub const CSF_BLEND_MAE: i32 = 3;

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

/// `DEFAULT_ADM_CSF_LUM`, cd/m².
pub const CSF_LUM: f64 = 100.0;

/// `barten_csf_tools.h`: HDR-VDP-2's simplified Barten CSF, all its float
/// and double intermediates as libvmaf evaluates them.
pub mod barten {
    const ANCHORS: [f32; 6] = [0.002, 0.02, 0.2, 2.0, 20.0, 150.0];
    const PARAMS: [[f32; 5]; 6] = [
        [0.0160737, 0.991265, 3.74038, 0.50722, 4.46044],
        [0.383873, 0.800889, 3.54104, 0.682505, 4.94958],
        [0.929301, 0.476505, 4.37453, 0.750315, 5.28678],
        [1.29776, 0.405782, 4.40602, 0.935314, 5.61425],
        [1.49222, 0.334278, 3.79542, 1.07327, 6.4635],
        [1.46213, 0.394533, 2.7755, 1.16577, 7.45665],
    ];
    const SA: [f32; 4] = [30.162, 4.0627, 1.6596, 0.2712];
    // libvmaf's literals, as written there (rounded to float either way).
    #[allow(clippy::excessive_precision)]
    const MTF_A: [f32; 4] = [
        0.424838596301290,
        0.572435103936480,
        0.000167576239164937,
        0.00255872352306433,
    ];
    const MTF_B: [f32; 4] = [0.028, 0.37, 37.0, 360.0];

    fn lerp(lp: f32, lv: f32, rp: f32, rv: f32, sp: f32) -> f32 {
        lv + ((rv - lv) / (rp - lp)) * (sp - lp)
    }

    fn rod_cone_sens(lum: f32) -> f32 {
        (f64::from(SA[0])
            * (f64::from(SA[1] / lum).powf(f64::from(SA[2])) + 1.0).powf(-f64::from(SA[3])))
            as f32
    }

    fn mtf(sf: f32) -> f32 {
        let mut m = 0.0f32;
        for i in 0..4 {
            m = (f64::from(m) + f64::from(MTF_A[i]) * f64::from(-MTF_B[i] * sf).exp()) as f32;
        }
        m
    }

    /// `barten_csf(lambda, nvd, rdh, lum, scale)`.
    pub fn csf(lambda: usize, nvd: f64, rdh: i32, lum: f64, scale: f64) -> f32 {
        let r = (nvd * f64::from(rdh) * std::f64::consts::PI / 180.0) as f32;
        let sf = (f64::from(r) / 2f64.powi(lambda as i32 + 1)) as f32;
        let lo = f64::from(ANCHORS[0]);
        let hi = f64::from(ANCHORS[5]);
        let clamped = if lum > hi {
            hi
        } else if lum < lo {
            lo
        } else {
            lum
        };
        let (mut l, mut rr) = (0, 0);
        for i in 0..5 {
            if clamped >= f64::from(ANCHORS[i]) && clamped <= f64::from(ANCHORS[i + 1]) {
                l = i;
                rr = i + 1;
                break;
            }
        }
        let lp = f64::from(ANCHORS[l]).log10() as f32;
        let rp = f64::from(ANCHORS[rr]).log10() as f32;
        let sp = clamped.log10() as f32;
        let p = |k: usize| lerp(lp, PARAMS[l][k], rp, PARAMS[rr][k], sp);
        let (p0, p1, p2, p3) = (p(1), p(2), p(3), p(4));
        let a = (1.0 + f64::from(p0 * sf).powf(f64::from(p1))) as f32;
        let e = 1.0 - (-(f64::from(sf / 7.0).powi(2))).exp();
        let b = (1.0 / e.powf(f64::from(p2))) as f32;
        let c = (f64::from(p3) / f64::from(a * b).powf(0.5)) as f32;
        (f64::from(c * mtf(sf) * rod_cone_sens(lum as f32)) * scale) as f32
    }
}

/// `adm_csf_tools.h:adm_native_csf`: the CSF of the DLM paper at the
/// nominal frequency of DWT level `lambda`, diagonal (`theta` 45) or not.
pub fn native_csf(lambda: usize, nvd: f64, rdh: i32, theta: i32) -> f32 {
    let r = (nvd * f64::from(rdh) * std::f64::consts::PI / 180.0) as f32;
    let mut sf = (f64::from(r) / 2f64.powi(lambda as i32 + 1)) as f32;
    if theta == 45 {
        sf = (f64::from(sf) / 0.7) as f32;
    }
    ((0.31 + 0.69 * f64::from(sf)) * (-0.29 * f64::from(sf)).exp()) as f32
}

/// The float extractor's CSF factors (h and v, d) of one scale
/// (`adm_tools.c`): its `adm_csf_mode` 1 is Barten's CSF, 2 the native CSF
/// of the DLM paper, any other Watson's `1.0f / Q`.
pub fn float_csf_factors(
    scale: usize,
    nvd: f64,
    rdh: i32,
    mode: i32,
    csf_scale: f64,
    diag_scale: f64,
) -> (f32, f32) {
    match mode {
        CSF_BARTEN => (
            barten::csf(scale, nvd, rdh, CSF_LUM, csf_scale),
            barten::csf(scale, nvd, rdh, CSF_LUM, diag_scale),
        ),
        2 => (
            native_csf(scale, nvd, rdh, 0),
            native_csf(scale, nvd, rdh, 45),
        ),
        _ => (
            1.0f32 / dwt_quant_step(scale, 1, nvd, rdh),
            1.0f32 / dwt_quant_step(scale, 2, nvd, rdh),
        ),
    }
}
