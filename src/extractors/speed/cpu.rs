//! speed_chroma: SpEED (spatial efficient entropic differencing) on the U
//! and V planes, libvmaf `feature/speed.c` at f85a8536.
//!
//! Per chroma plane of reference and distorted: samples to float around 0,
//! an optional prescale (nearest, bilinear, bicubic or Lanczos-4), a 9-tap
//! Gaussian anti-aliasing filter, 16:1 decimation, and local-mean removal
//! with a 3-tap Gaussian. On that small image, 5x5 blocks are a Gaussian
//! scale mixture: the 25x25 covariance of the block's pixels, its
//! eigenvalues (Householder tridiagonalisation, implicit QR) and the
//! per-block variance from solving K·X = Y (Householder QR) give an entropy
//! per block; the score is the mean absolute difference of
//! variance-weighted entropies. All in float, with libvmaf's double
//! intermediates where its C promotes to double, so the CPU and GPU engines
//! agree bit for bit; against libvmaf (whose AVX paths reorder sums) it
//! agrees within 1e-4.

use crate::core::FrameError;
use crate::core::picture::{Frame, OwnedPlane};
use crate::extractors::common::float_filter::{
    filter_size, filter1d, gaussian_filter, gaussian_kernel, mirror, valid_kernelscale,
};
use crate::extractors::common::float_picture::float_scaler;
use crate::extractors::common::options::{OptSpec, Resolved};
use crate::extractors::common::prescale::{PrescaleMethod, scale_frame};

/// `speed.c:options_chroma`.
pub const OPTIONS: &[OptSpec] = &[
    OptSpec::num("speed_kernelscale", "ks", 1.0, 0.1, 4.0),
    OptSpec::num("speed_prescale", "ps", 1.0, 0.1, 4.0),
    OptSpec::text("speed_prescale_method", Some("psm"), "nearest"),
    OptSpec::num("speed_sigma_nn", "snn", 0.29, 0.1, 2.0),
    OptSpec::num("speed_nn_floor", "nnf", 0.0, 0.0, 1.0),
    OptSpec::num("speed_max_val", "mxv", 1000.0, 0.0, 1000.0),
    OptSpec::int("speed_weight_var_mode", "wvm", 0.0, 0.0, 6.0),
];

pub const NUM_SCALES: u32 = 4;
const BLOCK: usize = 5;
const N: usize = BLOCK * BLOCK;
const EIG_EPS: f64 = 1e-6;
const EIG_MAX_ITERS: u32 = 500;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpeedParams {
    pub kernelscale: f64,
    pub prescale: f64,
    pub method: PrescaleMethod,
    pub sigma_nn: f64,
    pub nn_floor: f64,
    pub max_val: f64,
    pub weight_var_mode: i32,
}

/// `speed.c:options` of speed_temporal (no weighting mode; its
/// `speed_max_val` is never applied).
pub const TEMPORAL_OPTIONS: &[OptSpec] = &[
    OptSpec::num("speed_kernelscale", "ks", 1.0, 0.1, 4.0),
    OptSpec::num("speed_prescale", "ps", 1.0, 0.1, 4.0),
    OptSpec::text("speed_prescale_method", Some("psm"), "nearest"),
    OptSpec::num("speed_sigma_nn", "snn", 0.29, 0.1, 2.0),
    OptSpec::num("speed_nn_floor", "nnf", 0.0, 0.0, 1.0),
    OptSpec::num("speed_max_val", "mxv", 1000.0, 0.0, 1000.0),
    OptSpec::boolean("speed_use_ref_diff", "urd"),
];

impl SpeedParams {
    /// From speed_chroma's options.
    pub fn from_options(o: &Resolved) -> Result<Self, String> {
        Self::from_table(o, OPTIONS)
    }

    /// From the options of `table` (speed_chroma's or speed_temporal's).
    pub fn from_table(o: &Resolved, table: &[OptSpec]) -> Result<Self, String> {
        let n = |k| o.num(table, k);
        let method = PrescaleMethod::parse(
            o.text(table, "speed_prescale_method"),
            "speed_prescale_method",
        )?;
        let ks = n("speed_kernelscale") as f32;
        if !valid_kernelscale(f64::from(ks)) {
            return Err(format!(
                "speed_kernelscale {} is not one of libvmaf's kernel scales",
                crate::extractors::common::options::fmt_g(n("speed_kernelscale"))
            ));
        }
        Ok(Self {
            kernelscale: n("speed_kernelscale"),
            prescale: n("speed_prescale"),
            method,
            sigma_nn: n("speed_sigma_nn"),
            nn_floor: n("speed_nn_floor"),
            max_val: n("speed_max_val"),
            weight_var_mode: if table.iter().any(|t| t.name == "speed_weight_var_mode") {
                n("speed_weight_var_mode") as i32
            } else {
                0
            },
        })
    }

    pub fn prescaled(&self) -> bool {
        (self.prescale - 1.0).abs() >= 1.0e-3
    }

    /// `speed_init_dimensions` for a `w`x`h` chroma plane.
    pub fn dims(&self, w: usize, h: usize) -> Result<Dims, String> {
        let sh = (h as f64 * self.prescale + 0.5) as usize;
        let sw = (w as f64 * self.prescale + 0.5) as usize;
        let (ow, oh) = (sw >> NUM_SCALES, sh >> NUM_SCALES);
        let (tw, th) = ((ow / BLOCK) * BLOCK, (oh / BLOCK) * BLOCK);
        if tw == 0 || th == 0 {
            return Err(format!(
                "SpEED: a {w}x{h} plane is too small (needs at least {}x{} after prescale {})",
                16 * BLOCK,
                16 * BLOCK,
                crate::extractors::common::options::fmt_g(self.prescale)
            ));
        }
        Ok(Dims {
            w,
            h,
            sw: if self.prescaled() { sw } else { w },
            sh: if self.prescaled() { sh } else { h },
            ow,
            oh,
            tw,
            th,
        })
    }
}

/// Plane sizes of one SpEED computation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dims {
    pub w: usize,
    pub h: usize,
    /// After the prescale.
    pub sw: usize,
    pub sh: usize,
    /// After the 16:1 decimation, and cut to whole 5x5 blocks.
    pub ow: usize,
    pub oh: usize,
    pub tw: usize,
    pub th: usize,
}

impl Dims {
    fn blocks_h(&self) -> usize {
        self.tw / BLOCK
    }
    pub fn blocks(&self) -> usize {
        (self.tw / BLOCK) * (self.th / BLOCK)
    }
}

/// Entropies and variances of one image's blocks, and whether its
/// covariance could be inverted.
#[derive(Default)]
struct BlockStats {
    entropies: Vec<f32>,
    variances: Vec<f32>,
    singular: bool,
}

/// Scratch for one speed_chroma extractor.
#[derive(Default)]
pub struct SpeedChroma {
    plane: Vec<f32>,
    scaled: Vec<f32>,
    small: Vec<f32>,
}

impl SpeedChroma {
    /// speed_chroma_u, _v, _uv of one frame pair, capped at `speed_max_val`.
    pub fn compute(
        &mut self,
        reference: &Frame,
        distorted: &Frame,
        p: &SpeedParams,
    ) -> Result<[f64; 3], FrameError> {
        if reference.planes.len() < 3 {
            return Err(FrameError(
                "speed_chroma needs chroma planes (the input is luma only)".into(),
            ));
        }
        let dims = p
            .dims(reference.planes[1].width, reference.planes[1].height)
            .map_err(FrameError)?;
        let mut raw = Vec::with_capacity(4);
        for c in 1..3 {
            for f in [reference, distorted] {
                self.small_image(&f.planes[c], f.bpc, p, &dims);
                raw.push(raw_stats(&self.small, &dims));
            }
        }
        let raw: [RawStats; 4] = raw.try_into().map_err(|_| FrameError("speed".into()))?;
        Ok(frame_scores(&raw, &dims, p))
    }

    /// `filter_and_downscale` into `self.small` (ow x oh, row stride ow).
    fn small_image(&mut self, plane: &OwnedPlane, bpc: u8, p: &SpeedParams, dims: &Dims) {
        to_float(plane, bpc, &mut self.plane);
        self.small_from_floats(p, dims);
    }

    /// `filter_and_downscale` of the float picture in `self.plane`.
    fn small_from_floats(&mut self, p: &SpeedParams, dims: &Dims) {
        let src: &[f32] = if p.prescaled() {
            scale_frame(
                p.method,
                &self.plane,
                dims.w,
                dims.h,
                &mut self.scaled,
                dims.sw,
                dims.sh,
            );
            &self.scaled
        } else {
            &self.plane
        };
        let ks = p.kernelscale as f32;
        let aa = antialias_filter(ks);
        decimated_filter(
            src,
            dims.sw,
            dims.sh,
            &aa,
            dims.ow,
            dims.oh,
            &mut self.small,
        );
        let f = gaussian_filter(NUM_SCALES as i32, ks);
        let mut blurred = vec![0f32; dims.ow * dims.oh];
        filter1d(&f, &self.small, dims.ow, dims.oh, &mut blurred);
        for (v, b) in self.small.iter_mut().zip(&blurred) {
            *v -= *b;
        }
    }
}

/// speed_temporal: SpEED of the frame differences of the luma planes
/// (`speed.c`, `speed_temporal`): the reference's previous picture less its
/// current one against the same of the distorted (or, with
/// `speed_use_ref_diff`, the distorted's previous less the reference's
/// current). Frame 0 scores 0.
#[derive(Default)]
pub struct SpeedTemporal {
    inner: SpeedChroma,
    current: Vec<f32>,
}

impl SpeedTemporal {
    /// The score of a frame from the luma of frames i − 1 and i.
    pub fn compute(
        &mut self,
        previous: [&OwnedPlane; 2],
        current: [&OwnedPlane; 2],
        bpc: u8,
        (p, use_ref_diff): (&SpeedParams, bool),
    ) -> Result<f64, FrameError> {
        let dims = p
            .dims(current[0].width, current[0].height)
            .map_err(FrameError)?;
        let mut raw = Vec::with_capacity(2);
        for side in 0..2 {
            let now = if side == 1 && use_ref_diff {
                current[0]
            } else {
                current[side]
            };
            to_float(now, bpc, &mut self.current);
            to_float(previous[side], bpc, &mut self.inner.plane);
            for (d, c) in self.inner.plane.iter_mut().zip(&self.current) {
                *d -= *c;
            }
            self.inner.small_from_floats(p, &dims);
            raw.push(raw_stats(&self.inner.small, &dims));
        }
        let raw: [RawStats; 2] = raw.try_into().map_err(|_| FrameError("speed".into()))?;
        Ok(temporal_score(&raw, &dims, p))
    }
}

/// speed_temporal's score from the statistics of its two frame
/// differences (reference's, then distorted's).
pub fn temporal_score(raw: &[RawStats; 2], dims: &Dims, p: &SpeedParams) -> f64 {
    let sigma_nn = p.sigma_nn as f32;
    let mut stats: [BlockStats; 2] = Default::default();
    for (r, st) in raw.iter().zip(stats.iter_mut()) {
        finish_stats(r, sigma_nn, st);
    }
    f64::from(channel_score(&stats[0], &stats[1], dims, p).0)
}

/// `picture_copy` with offset −128: 8-bit samples as is, deeper ones
/// divided down to the 8-bit scale (10, 12 and 16 bits).
fn to_float(p: &OwnedPlane, bpc: u8, out: &mut Vec<f32>) {
    out.clear();
    let scaler = float_scaler(bpc);
    match scaler {
        Some(s) => out.extend(p.data.iter().map(|&v| f32::from(v) / s + -128.0)),
        None => out.extend(p.data.iter().map(|&v| f32::from(v) + -128.0)),
    }
}

/// `speed_get_antialias_filter`: the scale-1 size with the sigma of scale 4.
pub fn antialias_filter(kernelscale: f32) -> Vec<f32> {
    let size = filter_size(1, kernelscale);
    let sigma = (f64::from(NUM_SCALES).sqrt() * size as f64 / f64::from(5.0f32)) as f32;
    gaussian_kernel(size, sigma)
}

/// [`filter1d`] followed by `vif_dec16_s`, computing only the samples the
/// decimation keeps (rows 16k, then columns 16k of those rows), each exactly
/// as the full filter would.
fn decimated_filter(
    src: &[f32],
    w: usize,
    h: usize,
    f: &[f32],
    ow: usize,
    oh: usize,
    out: &mut Vec<f32>,
) {
    let half = (f.len() / 2) as isize;
    out.clear();
    out.resize(ow * oh, 0.0);
    let mut tmp = vec![0f32; w];
    for i in 0..oh {
        let row = 16 * i;
        // Every column of the kept row, tap by tap: each sum is formed in
        // the same order as one column at a time, and the loop vectorises.
        let tmp = &mut tmp[..];
        crate::core::isa::dispatch(
            #[inline(always)]
            || {
                tmp.fill(0.0);
                for (fi, &k) in f.iter().enumerate() {
                    let ii = mirror(row as isize - half + fi as isize, h);
                    for (t, &x) in tmp.iter_mut().zip(&src[ii * w..(ii + 1) * w]) {
                        *t += k * x;
                    }
                }
            },
        );
        for j in 0..ow {
            let mut acc = 0f32;
            for (fj, &k) in f.iter().enumerate() {
                acc += k * tmp[mirror((16 * j) as isize - half + fj as isize, w)];
            }
            out[i * ow + j] = acc;
        }
    }
}

fn sqrt_f(x: f32) -> f32 {
    f64::from(x).sqrt() as f32
}

fn sign(x: f32) -> f32 {
    if x >= 0.0 { 1.0 } else { -1.0 }
}

fn pythagoras(x: f32, y: f32) -> f32 {
    sqrt_f(x * x + y * y)
}

/// What the GPU's `speed_stats` kernel computes for one decimated image:
/// the covariance's eigenvalues, the per-block variances, and whether the
/// covariance could not be inverted (the variances are then zero).
pub struct RawStats {
    pub eig: [f32; N],
    pub variances: Vec<f32>,
    pub singular: bool,
}

/// `est_params` up to the entropies (logarithms stay with `finish_stats`),
/// in the dispatched copy (the covariance sums are four-wide double
/// vectors there).
pub fn raw_stats(data: &[f32], d: &Dims) -> RawStats {
    crate::core::isa::dispatch(
        #[inline(always)]
        || raw_stats_in(data, d),
    )
}

#[inline(always)]
fn raw_stats_in(data: &[f32], d: &Dims) -> RawStats {
    let stride = d.ow;
    let (sub_w, sub_h) = (d.tw - BLOCK + 1, d.th - BLOCK + 1);
    let count = (sub_w * sub_h) as f32;
    let mut means = [0f32; N];
    for r in 0..BLOCK {
        for c in 0..BLOCK {
            let mut sum = 0f32;
            for i in 0..sub_h {
                for j in 0..sub_w {
                    sum += data[(r + i) * stride + c + j];
                }
            }
            means[r * BLOCK + c] = sum / count;
        }
    }
    let mut cov = [0f32; N * N];
    let count_d = (sub_w * sub_h) as f64;
    // The lower triangle's (x, y) pairs, four sums at a time: each is still
    // added in libvmaf's order, but four independent chains keep the adder
    // busy where one waits on its own latency.
    let pairs: Vec<(usize, usize)> = (0..N).flat_map(|x| (0..=x).map(move |y| (x, y))).collect();
    for group in pairs.chunks(4) {
        let mut acc = [0f64; 4];
        let at = |p: usize, i: usize| {
            let (x, y) = group[p.min(group.len() - 1)];
            (
                (x / BLOCK + i) * stride + x % BLOCK,
                (y / BLOCK + i) * stride + y % BLOCK,
            )
        };
        let m = |p: usize| {
            let (x, y) = group[p.min(group.len() - 1)];
            (f64::from(means[x]), f64::from(means[y]))
        };
        let ms = [m(0), m(1), m(2), m(3)];
        for i in 0..sub_h {
            let rows = [at(0, i), at(1, i), at(2, i), at(3, i)]
                .map(|(ax, ay)| (&data[ax..ax + sub_w], &data[ay..ay + sub_w]));
            for j in 0..sub_w {
                for p in 0..4 {
                    let (ax, ay) = rows[p];
                    acc[p] += (f64::from(ax[j]) - ms[p].0) * (f64::from(ay[j]) - ms[p].1);
                }
            }
        }
        for (p, &(x, y)) in group.iter().enumerate() {
            let v = (acc[p] / count_d) as f32;
            cov[x * N + y] = v;
            cov[y * N + x] = v;
        }
    }
    let eig = eigenvalues(&cov);
    let blocks = d.blocks();
    let bh = d.blocks_h();
    // Y: row k holds pixel k of every block.
    let mut y = vec![0f32; N * blocks];
    for si in 0..BLOCK {
        for sj in 0..BLOCK {
            let row = si * BLOCK + sj;
            for bi in 0..d.th / BLOCK {
                for bj in 0..bh {
                    y[row * blocks + bi * bh + bj] =
                        data[(si + BLOCK * bi) * stride + sj + BLOCK * bj];
                }
            }
        }
    }
    let regular = eig.iter().all(|&e| f64::from(e) >= EIG_EPS);
    let mut x = if regular {
        solve(&cov, &y, blocks)
    } else {
        None
    };
    let singular = x.is_none();
    let x = x.get_or_insert_with(|| vec![0f32; N * blocks]);
    let denom = N as f32;
    for (xv, yv) in x.iter_mut().zip(&y) {
        *xv = (*xv * *yv) / denom;
    }
    for k in 1..N {
        for b in 0..blocks {
            x[b] += x[k * blocks + b];
        }
    }
    x.truncate(blocks);
    RawStats {
        eig,
        variances: std::mem::take(x),
        singular,
    }
}

/// The entropies `est_params` ends with: Σ over eigenvalues L of
/// log2(L·S + σ_nn) + log2(2πe), per block.
fn finish_stats(raw: &RawStats, sigma_nn: f32, out: &mut BlockStats) {
    let blocks = raw.variances.len();
    let log2_2pie = (2.0 * std::f64::consts::PI * std::f64::consts::E).log2();
    out.entropies.clear();
    out.entropies.resize(blocks, 0.0);
    for &e in &raw.eig {
        let l = if e < 0.0 { 0.0 } else { e };
        for b in 0..blocks {
            let v = f64::from(l * raw.variances[b] + sigma_nn).log2() + log2_2pie;
            out.entropies[b] = (f64::from(out.entropies[b]) + v) as f32;
        }
    }
    out.variances.clear();
    out.variances.extend_from_slice(&raw.variances);
    out.singular = raw.singular;
}

/// speed_chroma u, v, uv of one frame from the raw statistics of its four
/// images (U reference, U distorted, V reference, V distorted). The
/// entropies (25 logarithms per block and image) are independent per image;
/// large frames take them on four threads, with the same result.
pub fn frame_scores(raw: &[RawStats; 4], dims: &Dims, p: &SpeedParams) -> [f64; 3] {
    let sigma_nn = p.sigma_nn as f32;
    let mut stats: [BlockStats; 4] = Default::default();
    if dims.blocks() >= 256 {
        std::thread::scope(|scope| {
            for (r, st) in raw.iter().zip(stats.iter_mut()) {
                scope.spawn(move || finish_stats(r, sigma_nn, st));
            }
        });
    } else {
        for (r, st) in raw.iter().zip(stats.iter_mut()) {
            finish_stats(r, sigma_nn, st);
        }
    }
    let mut s = [0f32; 2];
    let mut err = [false; 2];
    for c in 0..2 {
        (s[c], err[c]) = channel_score(&stats[2 * c], &stats[2 * c + 1], dims, p);
    }
    combine(s, err, p)
}

/// One channel's score from the finished statistics of reference and
/// distorted (`speed_extract_score`): the score, and whether either was singular.
fn channel_score(rs: &BlockStats, ds: &BlockStats, dims: &Dims, p: &SpeedParams) -> (f32, bool) {
    let score = if rs.singular != ds.singular {
        0.0
    } else {
        speed_score(dims, rs, ds, p)
    };
    (score, rs.singular || ds.singular)
}

/// speed_chroma u, v, uv from the two channels' scores and singular flags,
/// capped at `speed_max_val`.
pub fn combine(s: [f32; 2], err: [bool; 2], p: &SpeedParams) -> [f64; 3] {
    // One singular channel: the combination takes the other's score.
    let uv = match err {
        [true, false] => s[1],
        [false, true] => s[0],
        _ => ((f64::from(s[0]) + f64::from(s[1])) / 2.0) as f32,
    };
    let cap = |v: f32| {
        let v = f64::from(v);
        if v < p.max_val { v } else { p.max_val }
    };
    [cap(s[0]), cap(s[1]), cap(uv)]
}

/// `get_speed_score`.
fn speed_score(d: &Dims, r: &BlockStats, s: &BlockStats, p: &SpeedParams) -> f32 {
    let sigma_nn = p.sigma_nn as f32;
    let nn_floor = p.nn_floor as f32;
    let log2_2pie = (2.0 * std::f64::consts::PI * std::f64::consts::E).log2();
    let base = (N as f64 * (f64::from((1.0 + nn_floor) * sigma_nn).log2() + log2_2pie)) as f32;
    let mut score = 0f32;
    let lg = |v: f64| v.log2();
    for i in 0..d.blocks() {
        let (er, ed) = (r.entropies[i], s.entropies[i]);
        if er < base && ed < base {
            continue;
        }
        let (vr, vd) = (r.variances[i], s.variances[i]);
        let one = |v: f32| lg(f64::from(1.0 + v));
        let mix = |a: f64, b: f64| lg(1.0 + (a * f64::from(vr) + b * f64::from(vd)));
        let (wr, wd) = match p.weight_var_mode {
            0 => (one(vr), one(vd)),
            1 => (one(vr), one(vr)),
            2 => (one(vd), one(vd)),
            3 => {
                let m = lg(1.0 + (f64::from(vr) + f64::from(vd)) / 2.0);
                (m, m)
            }
            4 => (one(vr), lg(1.0 + (f64::from(vr) + f64::from(vd)) / 2.0)),
            5 => (one(vr), mix(0.75, 0.25)),
            _ => (one(vr), mix(0.25, 0.75)),
        };
        let sr = (f64::from(er) * wr) as f32;
        let sd = (f64::from(ed) * wd) as f32;
        score += (sr - sd).abs();
    }
    score / d.blocks() as f32
}

/// `compute_eigenvalues` of the symmetric 25x25 covariance.
fn eigenvalues(cov: &[f32; N * N]) -> [f32; N] {
    let mut a = *cov;
    let (mut d, mut sd) = ([0f32; N], [0f32; N]);
    tridiagonalize(&mut a, &mut d, &mut sd);
    eigen_tridiagonal(&mut d, &mut sd);
    d
}

/// Householder vector of column `col` below `start` (`compute_householder_transform`).
fn householder(a: &mut [f32], col: usize, start: usize, n: usize) -> f32 {
    if n - start == 1 {
        return 0.0;
    }
    let mut norm = 0f32;
    for i in start + 1..n {
        norm += a[i * n + col] * a[i * n + col];
    }
    let xnorm = sqrt_f(norm);
    if xnorm == 0.0 {
        return 0.0;
    }
    let alpha = a[start * n + col];
    let beta = -sign(alpha) * pythagoras(alpha, xnorm);
    let tau = (beta - alpha) / beta;
    let s = alpha - beta;
    if s != 0.0 {
        for i in start..n {
            a[i * n + col] /= s;
        }
        a[start * n + col] = beta;
    }
    tau
}

/// `convert_to_tridiagonal` (GSL's symmtd).
fn tridiagonalize(a: &mut [f32; N * N], d: &mut [f32; N], sd: &mut [f32; N]) {
    let n = N;
    let (mut v, mut x) = ([0f32; N], [0f32; N]);
    for i in 0..n - 2 {
        let tau = householder(a, i, i + 1, n);
        for j in i + 1..n {
            v[j] = a[j * n + i];
        }
        if tau != 0.0 {
            a[(i + 1) * n + i] = v[i + 1];
            v[i + 1] = 1.0;
            for r in i + 1..n {
                x[r] = 0.0;
                for c in i + 1..n {
                    x[r] += tau * a[r * n + c] * v[c];
                }
            }
            let mut xv = 0f32;
            for r in i + 1..n {
                xv += x[r] * v[r];
            }
            let alpha = (-0.5 * f64::from(tau) * f64::from(xv)) as f32;
            for r in i + 1..n {
                x[r] += alpha * v[r];
            }
            for r in i + 1..n {
                for c in i + 1..n {
                    a[r * n + c] -= x[r] * v[c] + v[r] * x[c];
                }
            }
        }
    }
    for i in 0..n {
        d[i] = a[i * n + i];
    }
    for i in 0..n - 1 {
        sd[i] = a[(i + 1) * n + i];
    }
}

fn chop_small(d: &[f32], sd: &mut [f32], n: usize) {
    for i in 0..n - 1 {
        if f64::from(sd[i].abs()) < EIG_EPS * f64::from(d[i].abs() + d[i + 1].abs()) {
            sd[i] = 0.0;
        }
    }
}

fn trailing_eigenvalue(d: &[f32], sd: &[f32], n: usize) -> f32 {
    let (ta, tb, tab) = (d[n - 2], d[n - 1], sd[n - 2]);
    let dt = (f64::from(ta - tb) / 2.0) as f32;
    if dt > 0.0 {
        tb - tab * (tab / (dt + pythagoras(dt, tab)))
    } else if dt == 0.0 {
        tb - tab.abs()
    } else {
        tb + tab * (tab / (-dt + pythagoras(dt, tab)))
    }
}

fn givens(a: f32, b: f32) -> (f32, f32) {
    if b == 0.0 {
        (1.0, 0.0)
    } else if b.abs() > a.abs() {
        let t = -a / b;
        let s1 = (1.0 / f64::from(1.0 + t * t).sqrt()) as f32;
        (s1 * t, s1)
    } else {
        let t = -b / a;
        let c1 = (1.0 / f64::from(1.0 + t * t).sqrt()) as f32;
        (c1, c1 * t)
    }
}

/// One implicit symmetric QR step on the unreduced block `d`, `sd` of size `n`.
fn qr_step(d: &mut [f32], sd: &mut [f32], n: usize) {
    let mut mu = trailing_eigenvalue(d, sd, n);
    if EIG_EPS * f64::from(mu.abs()) > f64::from(d[0].abs() + sd[0].abs()) {
        mu = 0.0;
    }
    let mut x = d[0] - mu;
    let mut z = sd[0];
    let (mut ak, mut bk, mut zk);
    let mut ap = d[0];
    let mut bp = sd[0];
    let mut aq = d[1];
    if n == 2 {
        let (c, s) = givens(x, z);
        let ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        let bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        let aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        d[0] = ap1;
        sd[0] = bp1;
        d[1] = aq1;
        return;
    }
    let mut bq = sd[1];
    bk = 0.0;
    zk = 0.0;
    for k in 0..n - 1 {
        let (c, s) = givens(x, z);
        let bk1 = c * bk - s * zk;
        let ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        let bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        let zp1 = -s * bq;
        let aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        let bq1 = c * bq;
        ak = ap1;
        bk = bp1;
        zk = zp1;
        ap = aq1;
        bp = bq1;
        if k < n - 2 {
            aq = d[k + 2];
        }
        if k + 3 < n {
            bq = sd[k + 2];
        }
        d[k] = ak;
        if k > 0 {
            sd[k - 1] = bk1;
        }
        if k < n - 2 {
            sd[k + 1] = bp;
        }
        x = bk;
        z = zk;
    }
    d[n - 1] = ap;
    sd[n - 2] = bk;
}

/// `compute_eigenvalues_tridiagonal` (GSL's symm): eigenvalues land in `d`.
fn eigen_tridiagonal(d: &mut [f32; N], sd: &mut [f32; N]) {
    let n = N;
    chop_small(d, sd, n);
    let mut b = n - 1;
    let mut iter = 0;
    while b > 0 && iter < EIG_MAX_ITERS {
        if sd[b - 1] == 0.0 {
            b -= 1;
            continue;
        }
        let mut a = b - 1;
        while a > 0 {
            if sd[a - 1] == 0.0 {
                break;
            }
            a -= 1;
        }
        let nb = b - a + 1;
        qr_step(&mut d[a..], &mut sd[a..], nb);
        chop_small(&d[a..], &mut sd[a..], nb);
        iter += 1;
    }
}

/// `matrix_mul`: dst = x·y, each entry summed over k ascending, in float.
fn matmul(x: &[f32], y: &[f32], rows: usize, inner: usize, cols: usize, dst: &mut [f32]) {
    dst[..rows * cols].iter_mut().for_each(|v| *v = 0.0);
    for i in 0..rows {
        for k in 0..inner {
            for j in 0..cols {
                dst[i * cols + j] += x[i * inner + k] * y[k * cols + j];
            }
        }
    }
}

fn vector_norm(v: &[f32]) -> f32 {
    let mut s = 0f32;
    for &x in v {
        s += x * x;
    }
    sqrt_f(s)
}

/// `solve_linear_system`: K·X = Y by libvmaf's Householder QR and back
/// substitution; `None` when a diagonal of R is below 1e-6.
fn solve(k: &[f32; N * N], y: &[f32], cols: usize) -> Option<Vec<f32>> {
    let n = N;
    let a = *k;
    let mut z = a;
    let mut q = [0f32; N * N];
    for i in 0..n {
        q[i * n + i] = 1.0;
    }
    let mut hq = [0f32; N * N];
    let mut tmp = [0f32; N * N];
    let mut vec = [0f32; N];
    for kk in 0..n - 1 {
        for i in 0..n {
            for j in 0..n {
                if i < kk || j < kk {
                    z[i * n + j] = if i == j { 1.0 } else { 0.0 };
                }
            }
        }
        for i in 0..n {
            vec[i] = z[i * n + kk];
        }
        let norm = vector_norm(&vec);
        vec[kk] += sign(a[kk * n + kk]) * norm;
        let nn = vector_norm(&vec);
        for v in &mut vec {
            *v /= nn;
        }
        for i in 0..n {
            for j in 0..n {
                hq[i * n + j] = -2.0 * vec[i] * vec[j];
            }
        }
        for i in 0..n {
            hq[i * n + i] += 1.0;
        }
        matmul(&hq, &z, n, n, n, &mut tmp);
        z = tmp;
        matmul(&hq, &q, n, n, n, &mut tmp);
        q = tmp;
    }
    let mut r = [0f32; N * N];
    matmul(&q, &a, n, n, n, &mut r);
    // libvmaf transposes Q after the decomposition and again before use.
    let mut qb = vec![0f32; n * cols];
    matmul(&q, y, n, n, cols, &mut qb);
    let mut x = vec![0f32; n * cols];
    for i in (0..n).rev() {
        let den = r[i * n + i];
        if f64::from(den.abs()) < EIG_EPS {
            return None;
        }
        for j in 0..cols {
            let mut t = qb[i * cols + j];
            for kk in i + 1..n {
                t -= x[kk * cols + j] * r[i * n + kk];
            }
            x[i * cols + j] = t / den;
        }
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_match_libvmafs_sizes() {
        assert_eq!(filter_size(1, 1.0), 9);
        assert_eq!(filter_size(4, 1.0), 3);
        let f = antialias_filter(1.0);
        assert_eq!(f.len(), 9);
        assert!((f.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(f[4] > f[3] && f[3] > f[0]);
    }

    /// The decimated filter equals the full filter sampled every 16th pixel.
    #[test]
    fn decimated_filter_equals_full_filter_then_decimation() {
        let (w, h) = (83, 50);
        let src: Vec<f32> = (0..w * h)
            .map(|i| ((i * 7919) % 251) as f32 - 128.0)
            .collect();
        let f = antialias_filter(1.0);
        let mut full = vec![0f32; w * h];
        filter1d(&f, &src, w, h, &mut full);
        let mut dec = Vec::new();
        decimated_filter(&src, w, h, &f, w >> 4, h >> 4, &mut dec);
        for i in 0..h >> 4 {
            for j in 0..w >> 4 {
                assert_eq!(
                    dec[i * (w >> 4) + j].to_bits(),
                    full[16 * i * w + 16 * j].to_bits()
                );
            }
        }
    }

    /// Eigenvalues of a known symmetric matrix (diagonal plus a rank-one term).
    #[test]
    fn eigenvalues_of_a_known_matrix() {
        let mut m = [0f32; N * N];
        for i in 0..N {
            for j in 0..N {
                m[i * N + j] = if i == j { (i + 1) as f32 } else { 0.0 };
            }
        }
        let mut e = eigenvalues(&m);
        e.sort_by(f32::total_cmp);
        for (i, v) in e.iter().enumerate() {
            assert!((v - (i + 1) as f32).abs() < 1e-4, "{e:?}");
        }
        let mut m2 = [1f32; N * N];
        for i in 0..N {
            m2[i * N + i] += 1.0;
        }
        let mut e = eigenvalues(&m2);
        e.sort_by(f32::total_cmp);
        assert!((e[N - 1] - 26.0).abs() < 1e-3, "{e:?}");
        assert!((e[0] - 1.0).abs() < 1e-3, "{e:?}");
    }

    /// The QR solve reproduces K·X = Y for a well-conditioned K.
    #[test]
    fn qr_solve_inverts() {
        let mut k = [0f32; N * N];
        for i in 0..N {
            for j in 0..N {
                k[i * N + j] = if i == j {
                    4.0
                } else {
                    1.0 / (1.0 + (i as f32 - j as f32).abs())
                };
            }
        }
        let cols = 3;
        let y: Vec<f32> = (0..N * cols).map(|i| (i % 7) as f32 - 3.0).collect();
        let x = solve(&k, &y, cols).unwrap();
        for i in 0..N {
            for c in 0..cols {
                let mut s = 0f32;
                for kk in 0..N {
                    s += k[i * N + kk] * x[kk * cols + c];
                }
                assert!((s - y[i * cols + c]).abs() < 1e-3);
            }
        }
    }
}
