//! libvmaf's `float_moment` (`float_moment.c`, `moment.c`): the first and
//! second moments (mean, mean square) of each luma plane on the float
//! path's 8-bit scale, from the luma sums.
//!
//! libvmaf adds each float sample (`k / s`, `s` the picture_copy divisor)
//! or its float square into a double. Every such term is a whole multiple
//! of `1/s` or `1/s²`, so the sums here are kept as integers in those
//! units and turned into doubles once: equal to libvmaf's double sum while
//! that sum is exact (always up to 12 bits; at 13 to 16 bits on large
//! bright frames libvmaf's sum can round in its last bit, this one does
//! not), and the same in any order, which lets the GPU add them in
//! parallel with the same result.

use crate::extractors::common::float_picture::{float_square, sample_unit};

/// A luma pair's sums in whole units: samples, and their float squares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LumaSums {
    /// Σ k of the reference and of the distorted picture.
    pub samples: [u64; 2],
    /// Σ (k·k rounded to float) of each.
    pub squares: [u64; 2],
}

/// The sums of two luma planes (`w`×`h`, tightly packed).
pub fn luma_sums(reference: &[u16], distorted: &[u16], w: usize, h: usize) -> LumaSums {
    let mut s = LumaSums::default();
    for (&a, &b) in reference.iter().zip(distorted).take(w * h) {
        let (a, b) = (i32::from(a), i32::from(b));
        s.samples[0] += a as u64;
        s.samples[1] += b as u64;
        s.squares[0] += float_square(a);
        s.squares[1] += float_square(b);
    }
    s
}

/// `[ref1st, dis1st, ref2nd, dis2nd]` from the sums of a `w`×`h` pair.
pub fn moments(s: &LumaSums, w: usize, h: usize, bpc: u8) -> [f64; 4] {
    let (n, unit) = ((w * h) as f64, sample_unit(bpc));
    let first = |k: u64| k as f64 / unit / n;
    let second = |k: u64| k as f64 / (unit * unit) / n;
    [
        first(s.samples[0]),
        first(s.samples[1]),
        second(s.squares[0]),
        second(s.squares[1]),
    ]
}

/// `float_moment` of two luma planes: `[ref1st, dis1st, ref2nd, dis2nd]`.
pub fn float_moment(reference: &[u16], distorted: &[u16], w: usize, h: usize, bpc: u8) -> [f64; 4] {
    moments(&luma_sums(reference, distorted, w, h), w, h, bpc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_of_two_values() {
        let r = [10u16, 20, 10, 20];
        let d = [40u16; 4];
        assert_eq!(float_moment(&r, &d, 2, 2, 8), [15.0, 40.0, 250.0, 1600.0]);
        // 10-bit samples are read on the 8-bit scale.
        assert_eq!(float_moment(&[40u16; 4], &d, 2, 2, 10)[0], 10.0);
    }

    #[test]
    fn squares_round_as_floats_past_24_bits() {
        assert_eq!(float_square(4095), 4095 * 4095);
        assert_eq!(float_square(-3), 9);
        // 65535² = 4294836225 needs 32 bits; the float keeps 24.
        assert_eq!(float_square(65535), 4294836224);
        // A 16-bit mean square as libvmaf forms it: (k/256)² in float.
        let k = 65535u16;
        let v = f32::from(k) / 256.0;
        let want = f64::from(v * v);
        assert_eq!(float_moment(&[k; 4], &[k; 4], 2, 2, 16)[2], want);
    }
}
