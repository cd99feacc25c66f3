//! The float Gaussian filters and separable convolutions libvmaf's float
//! extractors share (`vif_tools.c`, `common/convolution.c` at f85a8536):
//! the kernels `vif_get_filter` builds, and `vif_filter1d_s` (a vertical,
//! then a horizontal pass, mirrored at the edges without repeating them,
//! every sum a float sum in tap order). `convolution_f32_c_s`, which
//! float_motion uses, is the same computation.
//!
//! The passes below run tap by tap over a whole row: each output is still
//! the sum of its taps in tap order, started from zero, so the result is
//! the scalar C's bit for bit, and the loops vectorise.

/// `vif_tools.h:valid_kernelscales`.
pub const VALID_KERNELSCALES: [f32; 21] = [
    1.0,
    1.0 / 2.0,
    3.0 / 2.0,
    2.0,
    2.0 / 3.0,
    24.0 / 10.0,
    360.0 / 97.0,
    4.0 / 3.0,
    3.5 / 3.0,
    3.75 / 3.0,
    4.25 / 3.0,
    5.0 / 3.0,
    3.0,
    1.0 / 2.25,
    1.4746,
    1.54,
    1.6,
    1.06667,
    0.711111,
    0.740740,
    1.111111,
];

/// `vif_validate_kernelscale`.
pub fn valid_kernelscale(ks: f64) -> bool {
    let ks = ks as f32;
    VALID_KERNELSCALES.iter().any(|v| (ks - v).abs() < 1e-3)
}

fn round_up_to_odd(f: f32) -> i32 {
    let c = f64::from(f).ceil() as i32;
    if c % 2 == 0 { c + 1 } else { c }
}

/// `vif_get_filter_size`.
pub fn filter_size(scale: i32, kernelscale: f32) -> usize {
    let n = (1 << (4 - scale)) + 1;
    round_up_to_odd(n as f32 * kernelscale).max(3) as usize
}

fn gaussian_pdf(x: f32, mean: f32, stdev: f32) -> f32 {
    let dx = f64::from(x - mean);
    let sd = f64::from(stdev);
    let num = ((-0.5 * dx / sd * dx) / sd).exp() as f32;
    let den = (1.0 / (sd * (2.0 * std::f64::consts::PI).sqrt())) as f32;
    num / den
}

/// `get_1d_gaussian_kernel`: `size` taps, normalised by their float sum.
pub fn gaussian_kernel(size: usize, stdev: f32) -> Vec<f32> {
    let k = (size as i32 - 1) / 2;
    let mut out: Vec<f32> = (0..size)
        .map(|i| gaussian_pdf((i as i32 - k) as f32, 0.0, stdev))
        .collect();
    let mut sum = 0f32;
    for &v in &out {
        sum += v;
    }
    for v in &mut out {
        *v /= sum;
    }
    out
}

/// `vif_get_filter(scale)`: 17, 9, 5 and 3 taps at kernel scale 1.
pub fn gaussian_filter(scale: i32, kernelscale: f32) -> Vec<f32> {
    let size = filter_size(scale, kernelscale);
    gaussian_kernel(size, size as f32 / 5.0)
}

/// Mirror without repeating the edge: −k reads k, n−1+k reads n−1−k.
pub fn mirror(i: isize, n: usize) -> usize {
    let n = n as isize;
    (if i < 0 {
        -i
    } else if i >= n {
        2 * n - i - 2
    } else {
        i
    }) as usize
}

/// `vif_filter1d_s` of `src` (`w`×`h`, packed) into `dst`.
pub fn filter1d(f: &[f32], src: &[f32], w: usize, h: usize, dst: &mut [f32]) {
    filter1d_of(f, w, h, dst, |row, out| {
        for (t, &x) in out.0.iter_mut().zip(&src[row * w..(row + 1) * w]) {
            *t += out.1 * x;
        }
    });
}

/// `vif_filter1d_sq_s`: the filter of the squares.
pub fn filter1d_sq(f: &[f32], src: &[f32], w: usize, h: usize, dst: &mut [f32]) {
    filter1d_of(f, w, h, dst, |row, out| {
        for (t, &x) in out.0.iter_mut().zip(&src[row * w..(row + 1) * w]) {
            *t += out.1 * (x * x);
        }
    });
}

/// `vif_filter1d_xy_s`: the filter of the products of two pictures.
pub fn filter1d_xy(f: &[f32], a: &[f32], b: &[f32], w: usize, h: usize, dst: &mut [f32]) {
    filter1d_of(f, w, h, dst, |row, out| {
        let (ra, rb) = (&a[row * w..(row + 1) * w], &b[row * w..(row + 1) * w]);
        for ((t, &x), &y) in out.0.iter_mut().zip(ra).zip(rb) {
            *t += out.1 * (x * y);
        }
    });
}

/// The separable filter: per output row, `add_tap(source row, (sums, tap))`
/// adds one tap's products to the vertical sums; the horizontal pass then
/// filters those sums.
fn filter1d_of(
    f: &[f32],
    w: usize,
    h: usize,
    dst: &mut [f32],
    add_tap: impl Fn(usize, (&mut [f32], f32)) + Copy,
) {
    let half = (f.len() / 2) as isize;
    let mut tmp = vec![0f32; w];
    for i in 0..h {
        let tmp = &mut tmp[..];
        let out = &mut dst[i * w..(i + 1) * w];
        crate::core::isa::dispatch(
            #[inline(always)]
            || {
                tmp.fill(0.0);
                for (fi, &k) in f.iter().enumerate() {
                    add_tap(mirror(i as isize - half + fi as isize, h), (&mut *tmp, k));
                }
                horizontal(f, tmp, out);
            },
        );
    }
}

/// The horizontal pass of one row: interior samples tap by tap over the
/// row, the mirrored edges one at a time.
#[inline(always)]
fn horizontal(f: &[f32], src: &[f32], out: &mut [f32]) {
    let w = src.len();
    let half = f.len() / 2;
    let edge = |j: usize| {
        let mut acc = 0f32;
        for (fj, &k) in f.iter().enumerate() {
            acc += k * src[mirror(j as isize - half as isize + fj as isize, w)];
        }
        acc
    };
    if w <= 2 * half {
        for (j, o) in out.iter_mut().enumerate() {
            *o = edge(j);
        }
        return;
    }
    let inner = &mut out[half..w - half];
    inner.fill(0.0);
    for (fj, &k) in f.iter().enumerate() {
        for (o, &x) in inner.iter_mut().zip(&src[fj..fj + w - 2 * half]) {
            *o += k * x;
        }
    }
    for j in (0..half).chain(w - half..w) {
        out[j] = edge(j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain loops of `vif_filter1d_s`, one output at a time.
    fn filter1d_scalar(f: &[f32], src: &[f32], w: usize, h: usize) -> Vec<f32> {
        let half = (f.len() / 2) as isize;
        let mut tmp = vec![0f32; w * h];
        let mut out = vec![0f32; w * h];
        for i in 0..h {
            for j in 0..w {
                let mut acc = 0f32;
                for (fi, &k) in f.iter().enumerate() {
                    acc += k * src[mirror(i as isize - half + fi as isize, h) * w + j];
                }
                tmp[i * w + j] = acc;
            }
        }
        for i in 0..h {
            for j in 0..w {
                let mut acc = 0f32;
                for (fj, &k) in f.iter().enumerate() {
                    acc += k * tmp[i * w + mirror(j as isize - half + fj as isize, w)];
                }
                out[i * w + j] = acc;
            }
        }
        out
    }

    #[test]
    fn row_at_a_time_filter_is_the_scalar_one_bit_for_bit() {
        for (w, h) in [(40, 33), (17, 9), (5, 7), (3, 3)] {
            let src: Vec<f32> = (0..w * h)
                .map(|i| ((i * 37 % 255) as f32) - 128.0 + (i % 7) as f32 * 0.3)
                .collect();
            for scale in 0..4 {
                let f = gaussian_filter(scale, 1.0);
                if f.len() / 2 >= w.min(h) {
                    continue;
                }
                let mut dst = vec![0f32; w * h];
                filter1d(&f, &src, w, h, &mut dst);
                let want = filter1d_scalar(&f, &src, w, h);
                assert!(
                    dst.iter()
                        .zip(&want)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{w}x{h} scale {scale}"
                );
            }
        }
    }

    #[test]
    fn kernels_have_libvmafs_sizes_and_sum_to_one() {
        let sizes: Vec<usize> = (0..4).map(|s| gaussian_filter(s, 1.0).len()).collect();
        assert_eq!(sizes, [17, 9, 5, 3]);
        for s in 0..4 {
            let sum: f32 = gaussian_filter(s, 1.0).iter().sum();
            assert!((sum - 1.0).abs() < 1e-6);
        }
        assert!(valid_kernelscale(1.5) && !valid_kernelscale(1.3));
    }
}
