//! Float SSIM and MS-SSIM, libvmaf `feature/float_ssim.c`, `float_ms_ssim.c`
//! over the IQA code in `feature/iqa/` (default arguments only).
//!
//! These are float algorithms; we follow libvmaf's float/double mix
//! (float products accumulated in double, stored as float) so results agree
//! to well within the 1e-4 the golden tests ask.

/// 11-tap Gaussian window (`iqa/ssim_tools.h:g_gaussian_window_h`).
pub const GAUSS: [f32; 11] = [
    0.001028, 0.007599, 0.036001, 0.109361, 0.213006, 0.266012, 0.213006, 0.109361, 0.036001,
    0.007599, 0.001028,
];

/// One quadrant of the 9x9 low-pass `g_lpf` (`ms_ssim.c`), by distance from
/// the centre; the table is symmetric in both axes.
const LPF_QUADRANT: [[f32; 5]; 5] = [
    [0.363505, 0.160885, -0.047149, -0.010146, 0.016114],
    [0.160885, 0.071207, -0.020867, -0.004490, 0.007132],
    [-0.047149, -0.020867, 0.006115, 0.001316, -0.002090],
    [-0.010146, -0.004490, 0.001316, 0.000283, -0.000450],
    [0.016114, 0.007132, -0.002090, -0.000450, 0.000714],
];

const MS_ALPHA: [f32; 5] = [0.0, 0.0, 0.0, 0.0, 0.1333];
const MS_BETA: [f32; 5] = [0.0448, 0.2856, 0.3001, 0.2363, 0.1333];

/// The divisor that brings `bpc`-bit samples to the 8-bit scale.
pub fn float_scaler(bpc: u8) -> f32 {
    match bpc {
        8 => 1.0f32,
        10 => 4.0,
        12 => 16.0,
        16 => 256.0,
        b => (1u32 << (b - 8)) as f32,
    }
}

/// Luma samples as floats on libvmaf's 8-bit scale (`picture_copy`).
pub fn to_float(luma: &[u16], bpc: u8) -> Vec<f32> {
    let scaler = float_scaler(bpc);
    luma.iter()
        .map(|&v| {
            if bpc == 8 {
                f32::from(v)
            } else {
                f32::from(v) / scaler
            }
        })
        .collect()
}

/// `KBND_SYMMETRIC`: −1 reads 0, n reads n−1.
#[inline]
fn sym(x: isize, n: usize) -> usize {
    let n = n as isize;
    (if x < 0 {
        -1 - x
    } else if x >= n {
        n - (x - n) - 1
    } else {
        x
    }) as usize
}

/// `_iqa_filter_pixel` with a `k`x`k` 2-D kernel (float products summed in double).
fn filter_pixel(
    img: &[f32],
    w: usize,
    h: usize,
    x: usize,
    y: usize,
    k: usize,
    kernel: &dyn Fn(usize, usize) -> f32,
) -> f32 {
    let c = (k / 2) as isize;
    let even = if k.is_multiple_of(2) { 1 } else { 0 };
    let mut sum = 0f64;
    for (kv, v) in (-c..=c - even).enumerate() {
        for (ku, u) in (-c..=c - even).enumerate() {
            let px = img[sym(y as isize + v, h) * w + sym(x as isize + u, w)];
            sum += f64::from(px * kernel(kv, ku));
        }
    }
    sum as f32
}

/// `_iqa_decimate`'s output size for factor `f`: `w/f + (w & 1)` by
/// `h/f + (h & 1)`.
pub fn decimated_size(w: usize, h: usize, f: usize) -> (usize, usize) {
    (w / f + (w & 1), h / f + (h & 1))
}

/// float_ssim's box kernel for factor `f` (`f`×`f` weights 1/f²).
pub fn box_kernel(f: usize) -> Vec<f32> {
    vec![1.0f32 / (f * f) as f32; f * f]
}

/// MS-SSIM's 9×9 low-pass, row-major.
pub fn lpf_kernel() -> Vec<f32> {
    (0..81)
        .map(|i: usize| LPF_QUADRANT[(i / 9).abs_diff(4)][(i % 9).abs_diff(4)])
        .collect()
}

/// `_iqa_decimate`: keep pixel (f·x, f·y) of the image filtered by the
/// `k`×`k` row-major `kernel`.
fn decimate(
    img: &[f32],
    w: usize,
    h: usize,
    f: usize,
    k: usize,
    kernel: &[f32],
) -> (Vec<f32>, usize, usize) {
    let (sw, sh) = decimated_size(w, h, f);
    let at = |kv: usize, ku: usize| kernel[kv * k + ku];
    let mut out = Vec::with_capacity(sw * sh);
    for y in 0..sh {
        for x in 0..sw {
            out.push(filter_pixel(img, w, h, x * f, y * f, k, &at));
        }
    }
    (out, sw, sh)
}

/// `_iqa_convolve` with the separable Gaussian: "valid" output only.
fn convolve(img: &[f32], w: usize, h: usize) -> (Vec<f32>, usize, usize) {
    let k = GAUSS.len();
    let dw = w - k + 1;
    let dh = h - k + 1;
    // Horizontal into a full-height cache, then vertical.
    let mut cache = vec![0f32; dw * h];
    for y in 0..h {
        let row = &img[y * w..y * w + w];
        for x in 0..dw {
            let mut s = 0f64;
            for (u, &g) in GAUSS.iter().enumerate() {
                s += f64::from(row[x + u] * g);
            }
            cache[y * dw + x] = s as f32;
        }
    }
    let mut out = vec![0f32; dw * dh];
    for y in 0..dh {
        for x in 0..dw {
            let mut s = 0f64;
            for (v, &g) in GAUSS.iter().enumerate() {
                s += f64::from(cache[(y + v) * dw + x] * g);
            }
            out[y * dw + x] = s as f32;
        }
    }
    (out, dw, dh)
}

/// `_iqa_ssim`'s stabilising constants C1, C2, C3 (peak 255).
pub fn constants() -> [f32; 3] {
    let l_peak = 255.0f32;
    let c1 = (0.01f32 * l_peak) * (0.01f32 * l_peak);
    let c2 = (0.03f32 * l_peak) * (0.03f32 * l_peak);
    [c1, c2, c2 / 2.0]
}

/// Means of SSIM itself and of the luminance, contrast and structure terms
/// (`_iqa_ssim` with default arguments). libvmaf adds the map's values to
/// four doubles in one pass; here each row's are added first, then the
/// rows in order (the GPU's order; the two differ in the last bits of a
/// double only).
pub fn ssim_terms(r: &[f32], d: &[f32], w: usize, h: usize) -> (f32, f32, f32, f32) {
    let [c1, c2, c3] = constants();
    let (mu1, dw, dh) = convolve(r, w, h);
    let (mu2, _, _) = convolve(d, w, h);
    let rr: Vec<f32> = r.iter().map(|&x| x * x).collect();
    let dd: Vec<f32> = d.iter().map(|&x| x * x).collect();
    let rd: Vec<f32> = r.iter().zip(d).map(|(&x, &y)| x * y).collect();
    let (s11, _, _) = convolve(&rr, w, h);
    let (s22, _, _) = convolve(&dd, w, h);
    let (s12, _, _) = convolve(&rd, w, h);
    let mut total = [0f64; 4];
    for y in 0..dh {
        let (mut ssim, mut ls, mut cs, mut ss) = (0f64, 0f64, 0f64, 0f64);
        for i in y * dw..(y + 1) * dw {
            let (m1, m2) = (mu1[i], mu2[i]);
            let sig1 = (s11[i] - m1 * m1).max(0.0);
            let sig2 = (s22[i] - m2 * m2).max(0.0);
            let sig12 = s12[i] - m1 * m2;
            let sig_both = f64::from(sig1 * sig2).sqrt() as f32;
            let l = (2.0 * f64::from(m1) * f64::from(m2) + f64::from(c1))
                / f64::from(m1 * m1 + m2 * m2 + c1);
            let c = (2.0 * f64::from(sig_both) + f64::from(c2)) / f64::from(sig1 + sig2 + c2);
            let clamped = if sig12 < 0.0 && sig_both <= 0.0 {
                0.0
            } else {
                sig12
            };
            let s = f64::from((clamped + c3) / (sig_both + c3));
            ssim += l * c * s;
            ls += l;
            cs += c;
            ss += s;
        }
        for (t, v) in total.iter_mut().zip([ssim, ls, cs, ss]) {
            *t += v;
        }
    }
    terms_from_sums(total, dw * dh)
}

/// One scale's means of the luminance, contrast and structure terms.
pub type Terms = (f32, f32, f32);

/// The four means from the sums over the `n` samples of the SSIM map.
pub fn terms_from_sums(sums: [f64; 4], n: usize) -> (f32, f32, f32, f32) {
    let n = n as f64;
    let [ssim, ls, cs, ss] = sums;
    (
        (ssim / n) as f32,
        (ls / n) as f32,
        (cs / n) as f32,
        (ss / n) as f32,
    )
}

/// float_ssim's box downscale factor (1: none): `scale` where given
/// (libvmaf's option, 1 to 10), else its automatic one (`scale=0`).
pub fn ssim_factor(w: usize, h: usize, scale: usize) -> usize {
    if scale > 0 {
        return scale;
    }
    (1.0f32.max(((w.min(h)) as f32 / 256.0 + 0.5).floor())) as usize
}

/// The size SSIM's map is taken at, after the downscale by `f`; `None`
/// where it is smaller than the Gaussian window.
pub fn ssim_size(w: usize, h: usize, f: usize) -> Option<(usize, usize)> {
    let (sw, sh) = if f > 1 {
        decimated_size(w, h, f)
    } else {
        (w, h)
    };
    (sw >= GAUSS.len() && sh >= GAUSS.len()).then_some((sw, sh))
}

/// The five MS-SSIM scale sizes, `None` when a scale is smaller than the
/// Gaussian window (libvmaf fails with "scale below 1x1!").
pub fn ms_ssim_sizes(w: usize, h: usize) -> Option<[(usize, usize); 5]> {
    let (mut cw, mut ch) = (w, h);
    for _ in 0..5 {
        if cw < GAUSS.len() || ch < GAUSS.len() {
            return None;
        }
        cw /= 2;
        ch /= 2;
    }
    let mut sizes = [(w, h); 5];
    for s in 1..5 {
        sizes[s] = decimated_size(sizes[s - 1].0, sizes[s - 1].1, 2);
    }
    Some(sizes)
}

/// MS-SSIM from each scale's (luminance, contrast, structure) means.
pub fn ms_ssim_from_terms(terms: &[(f32, f32, f32); 5]) -> f64 {
    let mut ms = 1.0f64;
    for (s, &(l, c, st)) in terms.iter().enumerate() {
        ms *= f64::from(l).powf(f64::from(MS_ALPHA[s]))
            * f64::from(c).powf(f64::from(MS_BETA[s]))
            * f64::from(st).powf(f64::from(MS_BETA[s]));
    }
    ms
}

/// `float_ssim` after the box downscale by `f` ([`ssim_factor`]): SSIM
/// and the means of its luminance, contrast and structure terms.
pub fn float_ssim(
    r: &[f32],
    d: &[f32],
    w: usize,
    h: usize,
    f: usize,
) -> Option<(f32, f32, f32, f32)> {
    let (sw, sh) = ssim_size(w, h, f)?;
    if f > 1 {
        let box_k = box_kernel(f);
        let (rr, _, _) = decimate(r, w, h, f, f, &box_k);
        let (dd, _, _) = decimate(d, w, h, f, f, &box_k);
        return Some(ssim_terms(&rr, &dd, sw, sh));
    }
    Some(ssim_terms(r, d, w, h))
}

/// `float_ms_ssim`: MS-SSIM and each scale's (luminance, contrast,
/// structure) means; `None` when the frame is too small (libvmaf fails
/// with "scale below 1x1!").
pub fn float_ms_ssim(r: &[f32], d: &[f32], w: usize, h: usize) -> Option<(f64, [Terms; 5])> {
    ms_ssim_sizes(w, h)?;
    let lpf = lpf_kernel();
    let mut refs = vec![(r.to_vec(), w, h)];
    let mut diss = vec![d.to_vec()];
    for s in 1..5 {
        let (pr, pw, ph) = &refs[s - 1];
        let (nr, nw, nh) = decimate(pr, *pw, *ph, 2, 9, &lpf);
        let (nd, _, _) = decimate(&diss[s - 1], *pw, *ph, 2, 9, &lpf);
        refs.push((nr, nw, nh));
        diss.push(nd);
    }
    let terms: [(f32, f32, f32); 5] = std::array::from_fn(|s| {
        let (rr, sw, sh) = &refs[s];
        let (_, l, c, st) = ssim_terms(rr, &diss[s], *sw, *sh);
        (l, c, st)
    });
    Some((ms_ssim_from_terms(&terms), terms))
}

/// libvmaf's `enable_db` cap: with `clip_db`, the dB of an error of half a
/// sample's square over the frame, rounded up; else none.
pub fn db_max(clip: bool, bpc: u8, w: usize, h: usize) -> f64 {
    if !clip {
        return f64::INFINITY;
    }
    let peak = f64::from((1u32 << bpc) - 1);
    let mse = 0.5 / (w * h) as f64;
    (10.0 * (peak * peak / mse).log10()).ceil()
}

/// A score as libvmaf's `enable_db` writes it: −10·log10(1 − score), capped.
pub fn to_db(score: f64, max: f64) -> f64 {
    (-10.0 * (1.0 - score).log10()).min(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_border() {
        assert_eq!(sym(-1, 10), 0);
        assert_eq!(sym(-2, 10), 1);
        assert_eq!(sym(10, 10), 9);
        assert_eq!(sym(11, 10), 8);
    }

    #[test]
    fn identical_images_are_one() {
        let (w, h) = (200, 180);
        let img: Vec<f32> = (0..w * h).map(|i| ((i * 37) % 255) as f32).collect();
        let f = ssim_factor(w, h, 0);
        assert!((float_ssim(&img, &img, w, h, f).unwrap().0 - 1.0).abs() < 1e-6);
        assert!((float_ms_ssim(&img, &img, w, h).unwrap().0 - 1.0).abs() < 1e-5);
        assert_eq!(float_ms_ssim(&img, &img, 150, 150), None);
    }
}
