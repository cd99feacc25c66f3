//! libvmaf's `float_moment` (`float_moment.c`, `moment.c`): the first and
//! second moments (mean, mean square) of each luma plane on the float
//! path's 8-bit scale, summed in double.

use super::float_psnr::float_picture;

/// `[ref1st, dis1st, ref2nd, dis2nd]`.
pub fn float_moment(reference: &[u16], distorted: &[u16], w: usize, h: usize, bpc: u8) -> [f64; 4] {
    let n = (w * h) as f64;
    let first = |p: &[f32]| p.iter().take(w * h).map(|&v| f64::from(v)).sum::<f64>() / n;
    let second = |p: &[f32]| p.iter().take(w * h).map(|&v| f64::from(v * v)).sum::<f64>() / n;
    let (r, d) = (
        float_picture(reference, bpc, 0),
        float_picture(distorted, bpc, 0),
    );
    [first(&r), first(&d), second(&r), second(&d)]
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
}
