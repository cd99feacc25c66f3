//! libvmaf's `ciede` (`ciede.c`, itself a port of av-metrics' CIEDE2000):
//! each pixel's YUV (BT.709, limited range) to CIELAB, the CIEDE2000
//! difference of reference and distorted with kL = 0.65, kC = 1, kH = 4,
//! averaged, reported as `ciede2000` = 45 − 20·log10(mean ΔE00) (infinite,
//! written `null`, for identical pictures).
//!
//! libvmaf mixes float and double on purpose or not; every step here
//! rounds where its C does (a `float` variable or return value), so that
//! the numbers are its own. Chroma is upsampled by repetition, as libvmaf
//! does for 4:2:0. For 4:2:2 libvmaf's upsampler mixes up its two
//! directions: luma row i reads chroma row i / 2 with the column not halved,
//! running on past the row's end into the rows after it; this engine reads
//! the same samples (`chroma_422`), so that its numbers are libvmaf's.

use crate::core::FrameError;
use crate::core::PixelFormat;
use crate::core::picture::Frame;
use std::f64::consts::PI;

#[derive(Clone, Copy)]
struct Lab {
    l: f32,
    a: f32,
    b: f32,
}

fn rgb_to_xyz_map(c: f64) -> f64 {
    if c > 10.0 / 255.0 {
        ((c + 0.055) * (1.0 / 1.055)).powf(2.4)
    } else {
        c * (1.0 / 12.92)
    }
}

/// Returns `float` in libvmaf.
fn xyz_to_lab_map(c: f64) -> f32 {
    let kappa = 24389.0 / 27.0;
    let epsilon = 216.0 / 24389.0;
    if c > epsilon {
        c.powf(1.0 / 3.0) as f32
    } else {
        ((kappa * c + 16.0) * (1.0 / 116.0)) as f32
    }
}

fn lab(y: f64, u: f64, v: f64, bpc: u8) -> Lab {
    let scale = f64::from(1u32 << (bpc - 8));
    let y = (y - 16.0 * scale) * (1.0 / (219.0 * scale));
    let u = (u - 128.0 * scale) * (1.0 / (224.0 * scale));
    let v = (v - 128.0 * scale) * (1.0 / (224.0 * scale));
    let r = rgb_to_xyz_map(y + 1.28033 * v);
    let g = rgb_to_xyz_map(y - 0.21482 * u - 0.38059 * v);
    let b = rgb_to_xyz_map(y + 2.12798 * u);
    let x = r * 0.4124564390896921 + g * 0.357576077643909 + b * 0.18043748326639894;
    let yy = r * 0.21267285140562248 + g * 0.715152155287818 + b * 0.07217499330655958;
    let z = r * 0.019333895582329317 + g * 0.119192025881303 + b * 0.9503040785363677;
    let x = f64::from(xyz_to_lab_map(x * (1.0 / 0.95047)));
    let yy = f64::from(xyz_to_lab_map(yy));
    let z = f64::from(xyz_to_lab_map(z * (1.0 / 1.08883)));
    Lab {
        l: ((116.0 * yy) - 16.0) as f32,
        a: (500.0 * (x - yy)) as f32,
        b: (200.0 * (yy - z)) as f32,
    }
}

fn h_prime(x: f32, y: f32) -> f32 {
    if x == 0.0 && y == 0.0 {
        return 0.0;
    }
    let mut hue = f64::from(x).atan2(f64::from(y)) as f32;
    if hue < 0.0 {
        hue = (f64::from(hue) + 2.0 * PI) as f32;
    }
    hue
}

fn delta_h_prime(c1: f32, c2: f32, h1: f32, h2: f32) -> f32 {
    if c1 == 0.0 || c2 == 0.0 {
        return 0.0;
    }
    if f64::from((h1 - h2).abs()) <= PI {
        return h2 - h1;
    }
    if h2 <= h1 {
        (f64::from(h2 - h1) + 2.0 * PI) as f32
    } else {
        (f64::from(h2 - h1) - 2.0 * PI) as f32
    }
}

fn upcase_h_bar_prime(h1: f32, h2: f32) -> f32 {
    if f64::from(h1 - h2).abs() > PI {
        ((f64::from(h1 + h2) + 2.0 * PI) / 2.0) as f32
    } else {
        (f64::from(h1 + h2) / 2.0) as f32
    }
}

fn upcase_t(h: f32) -> f32 {
    let h = f64::from(h);
    (1.0 - 0.17 * (h - PI / 6.0).cos()
        + 0.24 * (2.0 * h).cos()
        + 0.32 * (3.0 * h + PI / 30.0).cos()
        - 0.20 * (4.0 * h - 7.0 * PI / 20.0).cos()) as f32
}

fn r_sub_t(c_bar_prime: f32, h_bar_prime: f32) -> f32 {
    let to_degrees = (f64::from(h_bar_prime) * (180.0 / PI)) as f32;
    let degrees = ((f64::from(to_degrees) - 275.0) * (1.0 / 25.0)) as f32;
    let c7 = c_bar_prime.powf(7.0);
    let ratio = c7 / (c7 + 25f32.powf(7.0));
    let angle = (60.0 * (-f64::from(degrees.powf(2.0))).exp()) as f32;
    let to_radians = (f64::from(angle) * (PI / 180.0)) as f32;
    (-2.0 * f64::from(ratio).sqrt() * f64::from(to_radians).sin()) as f32
}

/// CIEDE2000 with kL = 0.65, kC = 1, kH = 4, in libvmaf's float/double mix.
fn ciede2000(c1: Lab, c2: Lab) -> f32 {
    let (kl, kc, kh) = (0.65f32, 1.0f32, 4.0f32);
    let sq = |v: f32| f64::from(v).powf(2.0);
    let delta_l_prime = c2.l - c1.l;
    let l_bar = (c1.l + c2.l) / 2.0;
    let ch1 = (sq(c1.a) + sq(c1.b)).sqrt() as f32;
    let ch2 = (sq(c2.a) + sq(c2.b)).sqrt() as f32;
    let c_bar = (ch1 + ch2) / 2.0;
    let g =
        1.0 - (f64::from(c_bar).powf(7.0) / (f64::from(c_bar).powf(7.0) + 25f64.powf(7.0))).sqrt();
    let a_prime_1 = (f64::from(c1.a) + f64::from(c1.a / 2.0) * g) as f32;
    let a_prime_2 = (f64::from(c2.a) + f64::from(c2.a / 2.0) * g) as f32;
    let c_prime_1 = (sq(a_prime_1) + sq(c1.b)).sqrt() as f32;
    let c_prime_2 = (sq(a_prime_2) + sq(c2.b)).sqrt() as f32;
    let c_bar_prime = (c_prime_1 + c_prime_2) / 2.0;
    let delta_c_prime = c_prime_2 - c_prime_1;
    let s_sub_l = (1.0 + (0.015 * sq(l_bar - 50.0)) / (20.0 + sq(l_bar - 50.0)).sqrt()) as f32;
    let s_sub_c = (1.0 + 0.045 * f64::from(c_bar_prime)) as f32;
    let h_prime_1 = h_prime(c1.b, a_prime_1);
    let h_prime_2 = h_prime(c2.b, a_prime_2);
    let dh = delta_h_prime(ch1, ch2, h_prime_1, h_prime_2);
    let delta_upcase_h_prime =
        (2.0 * f64::from(c_prime_1 * c_prime_2).sqrt() * (f64::from(dh) / 2.0).sin()) as f32;
    let h_bar_prime = upcase_h_bar_prime(h_prime_1, h_prime_2);
    let t = upcase_t(h_bar_prime);
    let s_sub_upcase_h = (1.0 + 0.015 * f64::from(c_bar_prime) * f64::from(t)) as f32;
    let rt = r_sub_t(c_bar_prime, h_bar_prime);
    let lightness = delta_l_prime / (kl * s_sub_l);
    let chroma = delta_c_prime / (kc * s_sub_c);
    let hue = delta_upcase_h_prime / (kh * s_sub_upcase_h);
    (sq(lightness) + sq(chroma) + sq(hue) + f64::from(rt * chroma * hue)).sqrt() as f32
}

/// The chroma sample (plane `p` of `f`) shown at luma position (`i`, `j`).
/// At an odd width or height the last luma column or row has no chroma
/// sample of its own (libvmaf's chroma planes are the floor of half the
/// size, and its `ciede` reads past them there, which crashed its CLI at
/// 351x287): it takes the last one.
fn chroma_at(f: &Frame, p: usize, i: usize, j: usize) -> u16 {
    let pl = &f.planes[p];
    let (ci, cj) = match f.format {
        PixelFormat::Yuv420 => (i / 2, j / 2),
        PixelFormat::Yuv422 => return chroma_422(f, p, i, j),
        _ => (i, j),
    };
    pl.data[ci.min(pl.height - 1) * pl.width + cj.min(pl.width - 1)]
}

/// The 4:2:2 chroma sample libvmaf's `ciede` reads at luma position
/// (`i`, `j`). Its picture holds each chroma row in `stride` samples (half
/// the luma width, rounded down, then up to a multiple of 32; zeros past
/// the row's samples); luma row i reads from the start of chroma row i / 2,
/// `j` samples on, which past the row's end are its padding and the next
/// row's samples.
fn chroma_422(f: &Frame, p: usize, i: usize, j: usize) -> u16 {
    let pl = &f.planes[p];
    let row_samples = f.luma().width / 2;
    let stride = row_samples.next_multiple_of(32);
    let flat = (i / 2) * stride + j;
    let (row, col) = (flat / stride, flat % stride);
    if col >= row_samples {
        return 0;
    }
    pl.data[row.min(pl.height - 1) * pl.width + col]
}

/// `ciede2000` of two frames with chroma planes.
pub fn ciede(r: &Frame, d: &Frame) -> Result<f64, FrameError> {
    if r.format == PixelFormat::Gray || r.planes.len() < 3 || d.planes.len() < 3 {
        return Err(FrameError(
            "ciede needs the chroma planes (the input is GRAY)".into(),
        ));
    }
    let (w, h, bpc) = (r.luma().width, r.luma().height, r.bpc);
    let (ry, dy) = (&r.luma().data, &d.luma().data);
    // Row by row (each row's double sum from zero, then the rows in
    // order), as the GPU adds them; libvmaf adds every sample to one sum,
    // which differs only in the last bits.
    let mut sum = 0f64;
    for i in 0..h {
        let mut row = 0f64;
        for j in 0..w {
            let px = |f: &Frame, y: u16| {
                lab(
                    f64::from(f32::from(y)),
                    f64::from(f32::from(chroma_at(f, 1, i, j))),
                    f64::from(f32::from(chroma_at(f, 2, i, j))),
                    bpc,
                )
            };
            row += f64::from(ciede2000(px(r, ry[i * w + j]), px(d, dy[i * w + j])));
        }
        sum += row;
    }
    Ok(score(sum, w, h))
}

/// `ciede2000` from the sum of its samples' differences.
pub fn score(sum: f64, w: usize, h: usize) -> f64 {
    45.0 - 20.0 * (sum / (w * h) as f64).log10()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn white_and_black_are_far_apart_and_equal_colours_are_zero() {
        let white = lab(235.0, 128.0, 128.0, 8);
        let black = lab(16.0, 128.0, 128.0, 8);
        assert!(
            (white.l - 100.0).abs() < 0.01 && black.l.abs() < 0.01,
            "{} {}",
            white.l,
            black.l
        );
        assert_eq!(ciede2000(white, white), 0.0);
        // ΔE00 of white and black with kL = 0.65: 100 / 0.65 / S_L.
        let de = ciede2000(white, black);
        assert!(de > 100.0 && de < 160.0, "{de}");
        // 10-bit values on the 10-bit scale give the 8-bit colour.
        let w10 = lab(940.0, 512.0, 512.0, 10);
        assert!((w10.l - white.l).abs() < 1e-4);
    }

    /// An odd size (libvmaf's CLI crashed there): the last column and row
    /// take the last chroma sample; a small change gives a finite score.
    #[test]
    fn odd_sizes_take_the_last_chroma_sample() {
        use crate::core::picture::OwnedPlane;
        let plane = |w: usize, h: usize, v: u16| OwnedPlane {
            data: vec![v; w * h],
            width: w,
            height: h,
        };
        let frame = |y: u16| Frame {
            format: PixelFormat::Yuv420,
            bpc: 8,
            planes: vec![plane(5, 3, y), plane(2, 1, 100), plane(2, 1, 150)],
        };
        assert_eq!(ciede(&frame(80), &frame(80)).unwrap(), f64::INFINITY);
        let v = ciede(&frame(80), &frame(90)).unwrap();
        assert!(v.is_finite() && v > 0.0, "{v}");
    }
}
