//! libvmaf's `float_vif` (`float_vif.c`, `vif.c`, `vif_tools.c` at
//! f85a8536): visual information fidelity at four scales, in float.
//!
//! Per scale s (0..3), with the Gaussian of that scale (17, 9, 5, 3 taps):
//! from scale 1 on, both pictures are blurred and every other sample of
//! every other row kept; then the local means µ, the filtered squares and
//! the filtered product give σ₁², σ₂², σ₁₂ per sample, and libvmaf's
//! "matching Matlab" statistic (gain g = σ₁₂/σ₁², clipped at the
//! enhancement-gain limit; log2 by libvmaf's polynomial) is summed in float,
//! row by row. `vif_scaleN` is num/den of scale N.

use crate::extractors::common::float_filter::{
    filter1d, filter1d_sq, filter1d_xy, gaussian_filter, valid_kernelscale,
};
use crate::extractors::common::float_picture::float_picture;
use crate::extractors::common::grow;
use crate::extractors::common::options::{OptSpec, Resolved};
use crate::extractors::common::prescale::{BILINEAR_MAX_WIDTH, PrescaleMethod, scale_frame};

/// `float_vif.c:options` (those that change numbers).
pub const OPTIONS: &[OptSpec] = &[
    OptSpec::num("vif_enhn_gain_limit", "egl", 100.0, 1.0, 100.0),
    OptSpec::num("vif_kernelscale", "ks", 1.0, 0.1, 4.0),
    OptSpec::num("vif_prescale", "ps", 1.0, 0.1, 4.0),
    OptSpec::num("vif_scale1_min_val", "s1miv", 0.0, 0.0, 1.0),
    OptSpec::num("vif_scale2_min_val", "s2miv", 0.0, 0.0, 1.0),
    OptSpec::num("vif_scale3_min_val", "s3miv", 0.0, 0.0, 1.0),
    OptSpec::text("vif_prescale_method", Some("pm"), "nearest"),
    OptSpec::num("vif_sigma_nsq", "snsq", 2.0, 0.0, 5.0),
    OptSpec::boolean("vif_skip_scale0", "ssclz"),
    OptSpec::boolean("debug", "debug").not_param(),
];

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloatVifParams {
    pub enhn_gain_limit: f64,
    pub kernelscale: f64,
    pub sigma_nsq: f64,
    /// Floors of scales 1..3.
    pub min_val: [f64; 3],
    pub skip_scale0: bool,
    /// `vif_prescale` and its method: both pictures are scaled by it
    /// before the four scales.
    pub prescale: f64,
    pub method: PrescaleMethod,
}

impl Default for FloatVifParams {
    fn default() -> Self {
        Self {
            enhn_gain_limit: 100.0,
            kernelscale: 1.0,
            sigma_nsq: 2.0,
            min_val: [0.0; 3],
            skip_scale0: false,
            prescale: 1.0,
            method: PrescaleMethod::Nearest,
        }
    }
}

impl FloatVifParams {
    pub fn from_options(o: &Resolved) -> Result<Self, String> {
        let n = |k| o.num(OPTIONS, k);
        let ks = n("vif_kernelscale");
        if !valid_kernelscale(ks) {
            return Err(format!(
                "vif_kernelscale {} is not one of libvmaf's kernel scales",
                crate::extractors::common::options::fmt_g(ks)
            ));
        }
        let method = PrescaleMethod::parse(
            o.text(OPTIONS, "vif_prescale_method"),
            "vif_prescale_method",
        )?;
        Ok(Self {
            enhn_gain_limit: n("vif_enhn_gain_limit"),
            kernelscale: ks,
            sigma_nsq: n("vif_sigma_nsq"),
            min_val: [
                n("vif_scale1_min_val"),
                n("vif_scale2_min_val"),
                n("vif_scale3_min_val"),
            ],
            skip_scale0: o.flag(OPTIONS, "vif_skip_scale0"),
            prescale: n("vif_prescale"),
            method,
        })
    }

    /// The size VIF runs at for a `w`×`h` picture: scaled by `vif_prescale`
    /// (rounded as libvmaf's `(int)(w * prescale + 0.5)`), or libvmaf's
    /// error for a bilinear prescale past its widest.
    pub fn scaled_size(&self, w: usize, h: usize) -> Result<(usize, usize), String> {
        let scale = |n: usize| (n as f64 * self.prescale + 0.5) as usize;
        let (sw, sh) = (scale(w), scale(h));
        if self.method == PrescaleMethod::Bilinear && sw > BILINEAR_MAX_WIDTH {
            return Err(format!(
                "float_vif: a bilinear vif_prescale to {sw} samples wide (libvmaf takes at most {BILINEAR_MAX_WIDTH})"
            ));
        }
        Ok((sw, sh))
    }
}

/// Per scale (num, den) as float sums.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FloatVifSums {
    pub num: [f32; 4],
    pub den: [f32; 4],
}

impl FloatVifSums {
    /// `vif_scale0..3`: a double division per scale, floored from scale 1
    /// on; scale 0 is 0 when skipped.
    pub fn scores(&self, p: &FloatVifParams) -> [f64; 4] {
        let ratio = |s: usize| f64::from(self.num[s]) / f64::from(self.den[s]);
        let floor = |s: usize| {
            let v = ratio(s);
            if v > p.min_val[s - 1] {
                v
            } else {
                p.min_val[s - 1]
            }
        };
        let s0 = if p.skip_scale0 { 0.0 } else { ratio(0) };
        [s0, floor(1), floor(2), floor(3)]
    }
}

/// Scratch for one worker.
#[derive(Default)]
pub struct FloatVif {
    bufs: [Vec<f32>; 7],
}

impl FloatVif {
    /// The four scales' sums of two luma planes (`w`×`h`, packed), or the
    /// error of a prescale libvmaf refuses.
    pub fn compute(
        &mut self,
        reference: &[u16],
        distorted: &[u16],
        (w, h, bpc): (usize, usize, u8),
        p: &FloatVifParams,
    ) -> Result<FloatVifSums, String> {
        let (sw, sh) = p.scaled_size(w, h)?;
        let prescaled = |plane: &[u16]| {
            let f = float_picture(plane, bpc, -128);
            if (sw, sh) == (w, h) {
                return f;
            }
            let mut out = Vec::new();
            scale_frame(p.method, &f, w, h, &mut out, sw, sh);
            out
        };
        let (mut r, mut d) = (prescaled(reference), prescaled(distorted));
        let (w, h) = (sw, sh);
        let [mu1, mu2, xx, yy, xy, nr, nd] = &mut self.bufs;
        for b in [
            &mut *mu1, &mut *mu2, &mut *xx, &mut *yy, &mut *xy, &mut *nr, &mut *nd,
        ] {
            grow(b, w * h);
        }
        let (mut w, mut h) = (w, h);
        let mut out = FloatVifSums::default();
        let ks = p.kernelscale as f32;
        for scale in 0..4 {
            let f = gaussian_filter(scale as i32, ks);
            if scale > 0 {
                filter1d(&f, &r, w, h, mu1);
                filter1d(&f, &d, w, h, mu2);
                decimate2(mu1, w, h, nr);
                decimate2(mu2, w, h, nd);
                (w, h) = (w / 2, h / 2);
                r.clear();
                r.extend_from_slice(&nr[..w * h]);
                d.clear();
                d.extend_from_slice(&nd[..w * h]);
            }
            if scale == 0 && p.skip_scale0 {
                continue;
            }
            filter1d(&f, &r, w, h, mu1);
            filter1d(&f, &d, w, h, mu2);
            filter1d_sq(&f, &r, w, h, xx);
            filter1d_sq(&f, &d, w, h, yy);
            filter1d_xy(&f, &r, &d, w, h, xy);
            let n = w * h;
            (out.num[scale], out.den[scale]) =
                statistic([&mu1[..n], &mu2[..n], &xx[..n], &yy[..n], &xy[..n]], w, p);
        }
        Ok(out)
    }
}

/// `vif_dec2_s`: every other sample of every other row.
fn decimate2(src: &[f32], w: usize, h: usize, dst: &mut [f32]) {
    let (dw, dh) = (w / 2, h / 2);
    for i in 0..dh {
        for j in 0..dw {
            dst[i * dw + j] = src[2 * i * w + 2 * j];
        }
    }
}

/// `vif_statistic_s` over planes µ₁, µ₂, filtered x², y², xy (`w` wide):
/// the float sums of num and den, row by row.
pub fn statistic(planes: [&[f32]; 5], w: usize, p: &FloatVifParams) -> (f32, f32) {
    let [mu1, mu2, xx, yy, xy] = planes;
    let nsq = p.sigma_nsq;
    let sigma_max_inv = (f64::from((nsq as f32).powf(2.0)) / (255.0 * 255.0)) as f32;
    let egl = p.enhn_gain_limit as f32;
    let (mut num, mut den) = (0f32, 0f32);
    for row in 0..mu1.len() / w {
        let (mut rn, mut rd) = (0f32, 0f32);
        for k in row * w..(row + 1) * w {
            let (n, d) = pixel(
                [mu1[k], mu2[k], xx[k], yy[k], xy[k]],
                nsq,
                sigma_max_inv,
                egl,
            );
            rn += n;
            rd += d;
        }
        num += rn;
        den += rd;
    }
    (num, den)
}

/// One sample's (num, den) terms of the statistic.
#[inline]
pub fn pixel(v: [f32; 5], nsq: f64, sigma_max_inv: f32, egl: f32) -> (f32, f32) {
    const EPS: f32 = 1.0e-10;
    let [m1, m2, xx, yy, xy] = v;
    let mut s1 = max0(xx - m1 * m1);
    let s2 = max0(yy - m2 * m2);
    let s12 = xy - m1 * m2;
    let mut g = s12 / (s1 + EPS);
    let mut sv = s2 - g * s12;
    if s1 < EPS {
        g = 0.0;
        sv = s2;
        s1 = 0.0;
    }
    if s2 < EPS {
        g = 0.0;
        sv = 0.0;
    }
    if g < 0.0 {
        sv = s2;
        g = 0.0;
    }
    // C's MAX(sv, eps) and MIN(g, egl): a NaN takes the bound.
    sv = if sv > EPS { sv } else { EPS };
    g = if g < egl { g } else { egl };
    let mut num = log2f_approx((1.0 + f64::from(g * g * s1) / (f64::from(sv) + nsq)) as f32);
    let mut den = log2f_approx((1.0 + f64::from(s1) / nsq) as f32);
    if s12 < 0.0 {
        num = 0.0;
    }
    if f64::from(s1) < nsq {
        num = 1.0 - s2 * sigma_max_inv;
        den = 1.0;
    }
    (num, den)
}

/// `MAX(x, 0.0f)`: NaN becomes 0, as in C.
#[inline]
fn max0(x: f32) -> f32 {
    if x > 0.0 { x } else { 0.0 }
}

/// `vif_tools.c:log2f_approx` (`VIF_OPT_FAST_LOG2`): the exponent plus a
/// degree-8 polynomial of the mantissa, in float.
pub fn log2f_approx(x: f32) -> f32 {
    // libvmaf's literals, as written there.
    #[allow(clippy::excessive_precision)]
    const POLY: [f32; 9] = [
        -0.012671635276421,
        0.064841182402670,
        -0.157048836463065,
        0.257167726303123,
        -0.353800560300520,
        0.480131410397451,
        -0.721314327952201,
        1.442694803896991,
        0.0,
    ];
    if x == 0.0 {
        return f32::NEG_INFINITY;
    }
    if x < 0.0 {
        return f32::NAN;
    }
    let u = x.to_bits();
    let exponent = (u & 0x7F80_0000) >> 23;
    let remain = f32::from_bits((u & 0x007F_FFFF) | 0x3F80_0000);
    let log_base = (exponent as i32 - 127) as f32;
    let t = remain - 1.0;
    let mut v = 0f32;
    for c in POLY {
        v = v * t + c;
    }
    log_base + v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_approximation_is_close() {
        for x in [1.0f32, 1.5, 2.0, 3.7, 100.0, 12345.6] {
            assert!((log2f_approx(x) - x.log2()).abs() < 1e-4, "{x}");
        }
        assert_eq!(log2f_approx(1.0), 0.0);
    }

    #[test]
    fn identical_pictures_score_about_one() {
        let (w, h) = (64, 48);
        let img: Vec<u16> = (0..w * h).map(|i| ((i * 7919) % 251) as u16).collect();
        let p = FloatVifParams::default();
        let s = FloatVif::default()
            .compute(&img, &img, (w, h, 8), &p)
            .unwrap()
            .scores(&p);
        for v in s {
            assert!((v - 1.0).abs() < 1e-4, "{s:?}");
        }
    }

    #[test]
    fn prescale_sizes_round_as_libvmaf_and_bilinear_has_a_widest() {
        let p = FloatVifParams {
            prescale: 1.5,
            method: PrescaleMethod::Bilinear,
            ..Default::default()
        };
        // (int)(351 * 1.5 + 0.5) = 527, (int)(287 * 1.5 + 0.5) = 431.
        assert_eq!(p.scaled_size(351, 287), Ok((527, 431)));
        assert_eq!(p.scaled_size(5120, 2880), Ok((7680, 4320)));
        let err = p.scaled_size(5121, 2880).unwrap_err();
        assert!(err.contains("7682") && err.contains("7680"), "{err}");
        let nearest = FloatVifParams {
            method: PrescaleMethod::Nearest,
            ..p
        };
        assert_eq!(nearest.scaled_size(5121, 2880), Ok((7682, 4320)));
    }
}
