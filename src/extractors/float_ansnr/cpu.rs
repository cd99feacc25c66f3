//! libvmaf's `float_ansnr` (`float_ansnr.c`, `ansnr.c`, `ansnr_tools.c`):
//! the reference filtered by a 3×3 kernel (the signal) against the
//! distorted picture filtered by a 5×5 one; `float_ansnr` is their SNR and
//! `float_anpsnr` the PSNR of the same noise. All float, in libvmaf's
//! order: per row a float sum, rows added in float.

use crate::extractors::common::float_picture::{float_picture, peak_and_cap};

const REF_WIDTH: usize = 3;
const DIS_WIDTH: usize = 5;

/// The 3×3 reference kernel, as libvmaf rounds it to float.
pub fn ref_filter() -> [f32; 9] {
    [1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0].map(|v: f64| (v / 16.0) as f32)
}

/// The 5×5 distorted kernel, as libvmaf rounds it to float.
pub fn dis_filter() -> [f32; 25] {
    [
        2.0, 7.0, 12.0, 7.0, 2.0, 7.0, 31.0, 52.0, 31.0, 7.0, 12.0, 52.0, 127.0, 52.0, 12.0, 7.0,
        31.0, 52.0, 31.0, 7.0, 2.0, 7.0, 12.0, 7.0, 2.0,
    ]
    .map(|v: f64| (v / 571.0) as f32)
}

/// libvmaf's border: −k reads k, n−1+k reads n−k (the edge repeated on
/// the far side only, as `ansnr_filter2d_s` does).
fn reflect(i: isize, n: usize) -> usize {
    let n = n as isize;
    if i < 0 {
        (-i) as usize
    } else if i >= n {
        (2 * n - i - 1) as usize
    } else {
        i as usize
    }
}

/// `ansnr_filter2d_s`: a `width`×`width` kernel, per output a float sum of
/// each kernel row's float sum.
fn filter2d(f: &[f32], src: &[f32], w: usize, h: usize, width: usize) -> Vec<f32> {
    let half = (width / 2) as isize;
    let mut dst = vec![0f32; w * h];
    for i in 0..h {
        for j in 0..w {
            let mut accum = 0f32;
            for fi in 0..width {
                let ii = reflect(i as isize - half + fi as isize, h);
                let mut inner = 0f32;
                for fj in 0..width {
                    let jj = reflect(j as isize - half + fj as isize, w);
                    inner += f[fi * width + fj] * src[ii * w + jj];
                }
                accum += inner;
            }
            dst[i * w + j] = accum;
        }
    }
    dst
}

/// `[float_ansnr, float_anpsnr]` of two luma planes (`w`×`h`, packed).
pub fn float_ansnr(reference: &[u16], distorted: &[u16], w: usize, h: usize, bpc: u8) -> [f64; 2] {
    let r = float_picture(reference, bpc, -128);
    let d = float_picture(distorted, bpc, -128);
    let rf = filter2d(&ref_filter(), &r, w, h, REF_WIDTH);
    let df = filter2d(&dis_filter(), &d, w, h, DIS_WIDTH);
    let (mut sig, mut noise) = (0f32, 0f32);
    for (rr, dr) in rf.chunks_exact(w).zip(df.chunks_exact(w)) {
        let (mut s, mut n) = (0f32, 0f32);
        for (&a, &b) in rr.iter().zip(dr) {
            s += a * a;
            n += (a - b) * (a - b);
        }
        sig += s;
        noise += n;
    }
    from_sums(sig, noise, w, h, bpc)
}

/// `[float_ansnr, float_anpsnr]` from the float sums of the signal and
/// noise terms of a `w`×`h` pair.
pub fn from_sums(sig: f32, noise: f32, w: usize, h: usize, bpc: u8) -> [f64; 2] {
    let (peak, cap) = peak_and_cap(bpc);
    let snr = if noise == 0.0 {
        cap
    } else {
        10.0 * f64::from(sig / noise).log10()
    };
    let psnr =
        (10.0 * (peak * peak * (w * h) as f64 / f64::from(noise).max(1e-10)).log10()).min(cap);
    [snr, psnr]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noiseless_pictures_are_capped_and_the_filters_sum_to_one() {
        // Mid-grey is 0 after the −128 offset: no signal and no noise.
        let grey = vec![128u16; 48];
        assert_eq!(float_ansnr(&grey, &grey, 8, 6, 8), [60.0, 60.0]);
        // Identical textured pictures still differ after the two filters.
        let a: Vec<u16> = (0..48).map(|v| (v * 5) as u16).collect();
        let [snr, psnr] = float_ansnr(&a, &a, 8, 6, 8);
        assert!(
            snr.is_finite() && snr < 60.0 && psnr <= 60.0,
            "{snr} {psnr}"
        );
        let flat = vec![7.0f32; 30];
        for (f, width) in [(ref_filter().to_vec(), 3), (dis_filter().to_vec(), 5)] {
            let out = filter2d(&f, &flat, 6, 5, width);
            assert!(out.iter().all(|&v| (v - 7.0).abs() < 1e-5), "{out:?}");
        }
        assert_eq!((reflect(-2, 6), reflect(6, 6), reflect(7, 6)), (2, 5, 4));
    }
}
