//! libvmaf's float prescale (`vif_tools.c`: `vif_scale_frame_s`), shared by
//! `float_vif` (`vif_prescale`), `float_motion` (`motion_add_scale1`'s
//! halving) and `speed` (`speed_prescale`): per output sample, source taps
//! and weights derived exactly as libvmaf derives them. The GPU samples the
//! same way (`prescale.h`, `prescale_gpu.rs`) from the same tap tables.

/// `vif_scale_frame_s`'s methods (`speed_prescale_method`,
/// `vif_prescale_method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrescaleMethod {
    Nearest,
    Bilinear,
    Bicubic,
    Lanczos4,
}

/// libvmaf's widest bilinear prescale (`VIF_BILINEAR_MAX_WIDTH`).
pub const BILINEAR_MAX_WIDTH: usize = 7680;

impl PrescaleMethod {
    /// The method named `name`, the value of option `option`.
    pub fn parse(name: &str, option: &str) -> Result<Self, String> {
        match name {
            "nearest" => Ok(PrescaleMethod::Nearest),
            "bilinear" => Ok(PrescaleMethod::Bilinear),
            "bicubic" => Ok(PrescaleMethod::Bicubic),
            "lanczos4" => Ok(PrescaleMethod::Lanczos4),
            other => Err(format!(
                "{option} \"{other}\" (nearest, bilinear, bicubic or lanczos4)"
            )),
        }
    }

    /// The GPU's code for the method (`prescale.h`: `scaled_at`).
    pub fn code(self) -> i32 {
        match self {
            PrescaleMethod::Nearest => 1,
            PrescaleMethod::Bilinear => 2,
            PrescaleMethod::Bicubic => 3,
            PrescaleMethod::Lanczos4 => 4,
        }
    }
}

/// Per output row or column of a prescale: `taps` source indices and
/// weights, exactly as `vif_tools.c` derives them (nearest: the index;
/// bilinear: the two indices and the fraction d, then 0; bicubic: 4 taps;
/// Lanczos-4: 9 taps).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AxisTaps {
    pub taps: usize,
    pub index: Vec<i32>,
    pub weight: Vec<f32>,
}

/// `xx = (x + 0.5) · ratio − 0.5` as libvmaf evaluates it (double, then float).
fn centre(k: usize, ratio: f32) -> f32 {
    ((k as f64 + 0.5) * f64::from(ratio) - 0.5) as f32
}

/// libvmaf's float mirror of the bilinear path (`i < left ? -i : i > right ? 2·right − i : i`).
fn fmirror(i: f32, right: f32) -> f32 {
    if i < 0.0 {
        -i
    } else if i > right {
        2.0 * right - i
    } else {
        i
    }
}

/// The taps of one axis scaled from `n` to `dn` samples.
pub fn axis_taps(method: PrescaleMethod, n: usize, dn: usize) -> AxisTaps {
    let ratio = n as f32 / dn as f32;
    let mut t = AxisTaps::default();
    match method {
        PrescaleMethod::Nearest => {
            t.taps = 1;
            for k in 0..dn {
                t.index.push((k as f32 * ratio) as i32);
                t.weight.push(1.0);
            }
        }
        PrescaleMethod::Bilinear => {
            t.taps = 2;
            let right = (n - 1) as f32;
            for k in 0..dn {
                let xx = centre(k, ratio);
                let x1 = fmirror(f64::from(xx).floor() as f32, right) as i32;
                let x2 = fmirror(f64::from(xx).ceil() as f32, right) as i32;
                t.index.extend([x1, x2]);
                t.weight.extend([xx - x1 as f32, 0.0]);
            }
        }
        PrescaleMethod::Bicubic | PrescaleMethod::Lanczos4 => {
            let a: i32 = if method == PrescaleMethod::Bicubic {
                2
            } else {
                4
            };
            let lo = if method == PrescaleMethod::Bicubic {
                -1
            } else {
                -a
            };
            t.taps = (a - lo + 1) as usize;
            for k in 0..dn {
                let xx = centre(k, ratio);
                let x0 = f64::from(xx).floor() as i32;
                let dx = xx - x0 as f32;
                for i in lo..=a {
                    t.index.push(index_mirror(x0 + i, n) as i32);
                    t.weight.push(if method == PrescaleMethod::Bicubic {
                        bicubic_kernel(i as f32 - dx)
                    } else {
                        lanczos4_kernel(i as f32 - dx, a as f32)
                    });
                }
            }
        }
    }
    t
}

/// `vif_scale_frame_s`: `src` (w x h) to `dst` (dw x dh).
pub fn scale_frame(
    method: PrescaleMethod,
    src: &[f32],
    w: usize,
    h: usize,
    dst: &mut Vec<f32>,
    dw: usize,
    dh: usize,
) {
    dst.clear();
    dst.resize(dw * dh, 0.0);
    if w == dw && h == dh {
        dst.copy_from_slice(src);
        return;
    }
    let cols = axis_taps(method, w, dw);
    let rows = axis_taps(method, h, dh);
    for y in 0..dh {
        for x in 0..dw {
            dst[y * dw + x] = scaled_sample(method, src, w, &rows, &cols, y, x);
        }
    }
}

/// One prescaled sample (the GPU's `scaled_at` in `prescale.h`).
fn scaled_sample(
    method: PrescaleMethod,
    src: &[f32],
    w: usize,
    rows: &AxisTaps,
    cols: &AxisTaps,
    y: usize,
    x: usize,
) -> f32 {
    let at = |r: i32, c: i32| src[r as usize * w + c as usize];
    match method {
        PrescaleMethod::Nearest => at(rows.index[y], cols.index[x]),
        PrescaleMethod::Bilinear => {
            let (y1, y2, dy) = (rows.index[2 * y], rows.index[2 * y + 1], rows.weight[2 * y]);
            let (x1, x2, dx) = (cols.index[2 * x], cols.index[2 * x + 1], cols.weight[2 * x]);
            (1.0 - dy) * (1.0 - dx) * at(y1, x1)
                + (1.0 - dy) * dx * at(y1, x2)
                + dy * (1.0 - dx) * at(y2, x1)
                + dy * dx * at(y2, x2)
        }
        PrescaleMethod::Bicubic | PrescaleMethod::Lanczos4 => {
            let t = cols.taps;
            let (mut v, mut wsum) = (0f32, 0f32);
            for j in 0..t {
                for i in 0..t {
                    let weight = cols.weight[x * t + i] * rows.weight[y * t + j];
                    wsum += weight;
                    v += at(rows.index[y * t + j], cols.index[x * t + i]) * weight;
                }
            }
            if method == PrescaleMethod::Lanczos4 {
                v / wsum
            } else {
                v
            }
        }
    }
}

fn bicubic_kernel(t: f32) -> f32 {
    let a = -0.75f32;
    let t = if t < 0.0 { -t } else { t };
    if t < 1.0 {
        ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0
    } else if t < 2.0 {
        (((t - 5.0) * t + 8.0) * t - 4.0) * a
    } else {
        0.0
    }
}

fn index_mirror(i: i32, n: usize) -> usize {
    let right = (n - 1) as f32;
    let f = i as f32;
    (if f < 0.0 {
        -f
    } else if f > right {
        2.0 * right - f
    } else {
        f
    }) as i32 as usize
}

fn lanczos4_kernel(x: f32, a: f32) -> f32 {
    if x == 0.0 {
        return 1.0;
    }
    if x > -a && x < a {
        let pi = std::f64::consts::PI;
        let (xd, ad) = (f64::from(x), f64::from(a));
        return (ad * (pi * xd).sin() * (pi * xd / ad).sin() / (pi * pi * xd * xd)) as f32;
    }
    0.0
}
