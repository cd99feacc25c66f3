//! libvmaf's `float_psnr` (`float_psnr.c`, `psnr.c`): the luma PSNR of the
//! float path, its samples scaled to 8-bit range, with libvmaf's peak and
//! cap per bit depth; its noise is a sum of float squares kept whole, the
//! same in any order, which lets the GPU add them in parallel.

#[cfg(test)]
use crate::extractors::common::float_picture::float_picture;
use crate::extractors::common::float_picture::{float_square, peak_and_cap, sample_unit};

/// Σ ((kr − kd)² rounded to float) of two luma planes (`w`×`h`, tightly
/// packed), in whole units.
pub fn error_squares(reference: &[u16], distorted: &[u16], w: usize, h: usize) -> u64 {
    reference
        .iter()
        .zip(distorted)
        .take(w * h)
        .map(|(&a, &b)| float_square(i32::from(a) - i32::from(b)))
        .sum()
}

/// `float_psnr` from the sum of float-squared luma differences (whole
/// units, [`error_squares`]) of a `w`×`h` pair.
pub fn psnr_from_error_squares(error_squares: u64, w: usize, h: usize, bpc: u8) -> f64 {
    let unit = sample_unit(bpc);
    let noise = error_squares as f64 / (unit * unit) / (w * h) as f64;
    let (peak, cap) = peak_and_cap(bpc);
    (10.0 * (peak * peak / noise.max(1e-10)).log10()).min(cap)
}

/// `float_psnr` of two luma planes (`w`×`h`, tightly packed).
pub fn float_psnr(reference: &[u16], distorted: &[u16], w: usize, h: usize, bpc: u8) -> f64 {
    psnr_from_error_squares(error_squares(reference, distorted, w, h), w, h, bpc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_planes_reach_the_cap_and_depths_scale_to_8_bits() {
        let a = vec![100u16; 64];
        assert_eq!(float_psnr(&a, &a, 8, 8, 8), 60.0);
        assert_eq!(float_psnr(&a, &a, 8, 8, 10), 72.0);
        assert_eq!(float_picture(&[400], 10, -128), vec![-28.0]);
        // One sample off by 100 in 64: noise 100²/64, PSNR 10·log10(255²·64/100²).
        let mut b = a.clone();
        b[5] = 200;
        let want = 10.0 * (255.0f64 * 255.0 * 64.0 / 10000.0).log10();
        assert!((float_psnr(&a, &b, 8, 8, 8) - want).abs() < 1e-12);
    }
}
