//! Scaling a distorted rendition to the reference's size before it is
//! scored (an encoding ladder's smaller rungs), in integer arithmetic so
//! that the CPU here and the GPU (`gpu/scale.hip`) give the same
//! samples.
//!
//! A separable filter, as ffmpeg's swscale and every video scaler applies
//! one: for each output column (row), the source samples around its centre,
//! weighted by a kernel.
//! - Centres: output sample `i` of `dst` lies at source position
//!   `(i + 0.5) · src / dst − 0.5` (pixel centres aligned, as swscale and
//!   GStreamer's `videoscale` place them). Each plane is scaled on its own
//!   (chroma from the rendition's chroma size to the reference's).
//! - Kernels: [`ScaleMethod::Bicubic`] is swscale's default bicubic, the
//!   Mitchell–Netravali cubic with B = 0, C = 0.6 (a = −0.6);
//!   [`ScaleMethod::Bilinear`] the triangle; [`ScaleMethod::Lanczos`]
//!   Lanczos with three lobes. When shrinking, the kernel is stretched by
//!   the ratio (it low-passes as well).
//! - Weights: computed once per size in `f64`, normalised, rounded to
//!   14-bit integers summing to exactly 16384 (the rounding remainder goes
//!   to the heaviest tap). Samples past an edge repeat the edge sample.
//! - Arithmetic: the horizontal pass keeps its full integer sums (`i32`),
//!   the vertical pass sums those in `i64` and rounds once:
//!   `clamp((Σ cᵥ · Σ cₕ · s + 2²⁷) >> 28, 0, 2^bpc − 1)`. Output is that
//!   exact double sum, whatever the order of the additions.
//!
//! The samples are close to, but not bit-equal with, swscale's: swscale
//! keeps a 15-bit intermediate, dithers 8-bit output and sites 4:2:0 chroma
//! differently. What is exact is this definition, on both engines.

#![forbid(unsafe_code)]

use super::picture::{Picture, Planes};
use super::{PixelFormat, Plane, VmafError};

/// The kernel a rendition is scaled with (`scaler` property, `--scaler`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ScaleMethod {
    Bilinear,
    /// swscale's `flags=bicubic` kernel (B = 0, C = 0.6): what ladders
    /// scaled with ffmpeg's `scale` filter get by default.
    #[default]
    Bicubic,
    Lanczos,
}

impl ScaleMethod {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "bilinear" => Some(Self::Bilinear),
            "bicubic" => Some(Self::Bicubic),
            "lanczos" => Some(Self::Lanczos),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Bilinear => "bilinear",
            Self::Bicubic => "bicubic",
            Self::Lanczos => "lanczos",
        }
    }

    /// Half the kernel's width, in source samples at 1:1.
    fn radius(self) -> f64 {
        match self {
            Self::Bilinear => 1.0,
            Self::Bicubic => 2.0,
            Self::Lanczos => 3.0,
        }
    }

    /// The kernel's weight at distance `x` (0 outside its radius).
    fn weight(self, x: f64) -> f64 {
        let x = x.abs();
        match self {
            Self::Bilinear => (1.0 - x).max(0.0),
            Self::Bicubic => {
                // Mitchell–Netravali with B = 0, C = 0.6.
                const C: f64 = 0.6;
                if x < 1.0 {
                    ((12.0 - 6.0 * C) * x * x * x + (-18.0 + 6.0 * C) * x * x + 6.0) / 6.0
                } else if x < 2.0 {
                    (-6.0 * C * x * x * x + 30.0 * C * x * x - 48.0 * C * x + 24.0 * C) / 6.0
                } else {
                    0.0
                }
            }
            Self::Lanczos => {
                if x >= 3.0 {
                    0.0
                } else if x == 0.0 {
                    1.0
                } else {
                    let px = std::f64::consts::PI * x;
                    3.0 * px.sin() * (px / 3.0).sin() / (px * px)
                }
            }
        }
    }
}

/// The fixed-point weights' scale: they sum to `1 << WEIGHT_BITS`.
pub const WEIGHT_BITS: u32 = 14;

/// One direction's filter from `src` to `dst` samples: for output `i`,
/// `taps` weights from source sample `start[i]` on (indices outside the
/// source clamp to its edges; unused taps weigh 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    pub src: usize,
    pub dst: usize,
    pub taps: usize,
    pub start: Vec<i32>,
    /// `dst × taps` weights, output by output.
    pub weights: Vec<i32>,
}

impl Filter {
    pub fn new(method: ScaleMethod, src: usize, dst: usize) -> Filter {
        let ratio = src as f64 / dst as f64;
        let stretch = ratio.max(1.0);
        let radius = method.radius() * stretch;
        let one = 1i32 << WEIGHT_BITS;
        let mut rows: Vec<(i32, Vec<i32>)> = Vec::with_capacity(dst);
        for i in 0..dst {
            let centre = (i as f64 + 0.5) * ratio - 0.5;
            let first = (centre - radius).ceil() as i64;
            let last = (centre + radius).floor() as i64;
            let real: Vec<f64> = (first..=last)
                .map(|j| method.weight((j as f64 - centre) / stretch))
                .collect();
            let total: f64 = real.iter().sum();
            let mut fixed: Vec<i32> = real
                .iter()
                .map(|w| (w / total * f64::from(one)).round() as i32)
                .collect();
            let heaviest =
                (0..real.len()).fold(0, |best, k| if real[k] > real[best] { k } else { best });
            fixed[heaviest] += one - fixed.iter().sum::<i32>();
            // Zero weights at either end cost a tap each for nothing.
            let lead = fixed.iter().take_while(|&&w| w == 0).count();
            let trail = fixed.iter().rev().take_while(|&&w| w == 0).count();
            let kept = fixed[lead..fixed.len() - trail].to_vec();
            rows.push((first as i32 + lead as i32, kept));
        }
        let taps = rows.iter().map(|(_, w)| w.len()).max().unwrap_or(1);
        let mut start = Vec::with_capacity(dst);
        let mut weights = vec![0; dst * taps];
        for (i, (s, w)) in rows.into_iter().enumerate() {
            start.push(s);
            weights[i * taps..i * taps + w.len()].copy_from_slice(&w);
        }
        Filter {
            src,
            dst,
            taps,
            start,
            weights,
        }
    }

    /// The source index of output `i`'s tap `t`, clamped to the source.
    #[inline]
    fn source(&self, i: usize, t: usize) -> usize {
        (self.start[i] + t as i32).clamp(0, self.src as i32 - 1) as usize
    }

    fn taps_of(&self, i: usize) -> &[i32] {
        &self.weights[i * self.taps..(i + 1) * self.taps]
    }
}

/// One plane's pair of filters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaneFilters {
    pub horizontal: Filter,
    pub vertical: Filter,
}

/// Owned samples of a scaled picture (the depth of its source).
#[derive(Clone, Debug)]
enum Samples {
    U8(Vec<Vec<u8>>),
    U16(Vec<Vec<u16>>),
}

/// Scales pictures of one size and format to another: the filters are
/// made once, the output planes are reused frame after frame.
#[derive(Clone, Debug)]
pub struct Scaler {
    pub method: ScaleMethod,
    pub format: PixelFormat,
    pub bpc: u8,
    /// Source and output size (luma).
    pub from: (usize, usize),
    pub to: (usize, usize),
    pub planes: Vec<PlaneFilters>,
    samples: Samples,
    /// The horizontal pass's sums (source rows × output columns).
    sums: Vec<i32>,
    /// Threads each pass is split over (1 by default).
    pub threads: usize,
}

/// The size of plane `p` of a `width × height` picture as stored (ceil
/// halving for chroma, as GStreamer and ffmpeg lay frames out).
fn plane_size(format: PixelFormat, p: usize, (width, height): (usize, usize)) -> (usize, usize) {
    if p == 0 {
        (width, height)
    } else {
        format.stored_chroma_size(width, height).unwrap_or((0, 0))
    }
}

/// The kernel that scales a pair's distorted picture `d` to its reference
/// `r`'s size: none where the sizes agree; an error where they differ and
/// `scale` (the plan's) asks for no scaling.
pub fn method_for(
    scale: Option<ScaleMethod>,
    r: &Picture<'_>,
    d: &Picture<'_>,
) -> Result<Option<ScaleMethod>, VmafError> {
    if (d.width, d.height) == (r.width, r.height) {
        return Ok(None);
    }
    scale.map(Some).ok_or_else(|| {
        VmafError::Mismatch(format!(
            "reference is {}x{} but distorted is {}x{}, and no scaling was asked for",
            r.width, r.height, d.width, d.height
        ))
    })
}

impl Scaler {
    /// Whether this scaler takes `d` to `to` with `method`.
    pub fn fits(&self, method: ScaleMethod, d: &Picture<'_>, to: (usize, usize)) -> bool {
        self.method == method
            && (self.format, self.bpc) == (d.format, d.bpc)
            && self.from == (d.width, d.height)
            && self.to == to
    }

    /// A scaler from `from` to `to` for pictures of `format` at `bpc` bits.
    pub fn new(
        method: ScaleMethod,
        format: PixelFormat,
        bpc: u8,
        from: (usize, usize),
        to: (usize, usize),
    ) -> Result<Scaler, VmafError> {
        if from.0 == 0 || from.1 == 0 || to.0 == 0 || to.1 == 0 {
            return Err(VmafError::InvalidPicture(format!(
                "cannot scale {}x{} to {}x{}",
                from.0, from.1, to.0, to.1
            )));
        }
        let planes: Vec<PlaneFilters> = (0..format.plane_count())
            .map(|p| {
                let (sw, sh) = plane_size(format, p, from);
                let (dw, dh) = plane_size(format, p, to);
                PlaneFilters {
                    horizontal: Filter::new(method, sw, dw),
                    vertical: Filter::new(method, sh, dh),
                }
            })
            .collect();
        let sizes = planes.iter().map(|f| f.horizontal.dst * f.vertical.dst);
        let samples = if bpc == 8 {
            Samples::U8(sizes.map(|n| vec![0; n]).collect())
        } else {
            Samples::U16(sizes.map(|n| vec![0; n]).collect())
        };
        Ok(Scaler {
            method,
            format,
            bpc,
            from,
            to,
            planes,
            samples,
            sums: Vec::new(),
            threads: 1,
        })
    }

    /// Scales `pic` (host memory, of this scaler's format, depth and source
    /// size) and calls `f` with the scaled picture.
    pub fn scale<R>(
        &mut self,
        pic: &Picture<'_>,
        f: impl FnOnce(&Picture<'_>) -> R,
    ) -> Result<R, VmafError> {
        self.check(pic)?;
        let max = (1i64 << self.bpc) - 1;
        let threads = self.threads;
        let Scaler {
            planes,
            samples,
            sums,
            ..
        } = self;
        match (&pic.planes, samples) {
            (Planes::U8(src), Samples::U8(out)) => {
                scale_planes(src, planes, sums, out, (max, threads))
            }
            (Planes::U16(src), Samples::U16(out)) => {
                scale_planes(src, planes, sums, out, (max, threads))
            }
            _ => unreachable!("checked: the depth matches"),
        }
        let scaled = self.picture()?;
        Ok(f(&scaled))
    }

    /// The last scaled picture.
    fn picture(&self) -> Result<Picture<'_>, VmafError> {
        match &self.samples {
            Samples::U8(out) => Picture::new_u8(self.format, &self.packed(out)?),
            Samples::U16(out) => Picture::new_u16(self.format, self.bpc, &self.packed(out)?),
        }
    }

    /// The output planes `out` as planes of packed rows.
    fn packed<'a, T: Copy>(&self, out: &'a [Vec<T>]) -> Result<Vec<Plane<'a, T>>, VmafError> {
        out.iter()
            .zip(&self.planes)
            .map(|(v, f)| Plane::new(v, f.horizontal.dst, f.vertical.dst, f.horizontal.dst))
            .collect()
    }

    fn check(&self, pic: &Picture<'_>) -> Result<(), VmafError> {
        if pic.on_device() {
            return Err(VmafError::InvalidPicture(
                "the CPU scaler reads host memory, and this picture is in GPU memory".into(),
            ));
        }
        if pic.format != self.format || pic.bpc != self.bpc || (pic.width, pic.height) != self.from
        {
            return Err(VmafError::Mismatch(format!(
                "the scaler was made for {}x{} {:?} {}-bit pictures, not {}x{} {:?} {}-bit",
                self.from.0,
                self.from.1,
                self.format,
                self.bpc,
                pic.width,
                pic.height,
                pic.format,
                pic.bpc
            )));
        }
        for (p, filters) in self.planes.iter().enumerate() {
            let (w, h) = match &pic.planes {
                Planes::U8(pl) => pl[p].map(|x| (x.width, x.height)),
                Planes::U16(pl) => pl[p].map(|x| (x.width, x.height)),
                Planes::Device(_) => None,
            }
            .unwrap_or((0, 0));
            if w < filters.horizontal.src || h < filters.vertical.src {
                return Err(VmafError::InvalidPicture(format!(
                    "plane {p} is {w}x{h}; scaling needs {}x{}",
                    filters.horizontal.src, filters.vertical.src
                )));
            }
        }
        Ok(())
    }
}

/// Scales every plane of `src` into `out` (`scale_plane`).
fn scale_planes<T: Copy + Into<i32> + TryFrom<i64> + Send + Sync>(
    src: &[Option<Plane<'_, T>>; 3],
    planes: &[PlaneFilters],
    sums: &mut Vec<i32>,
    out: &mut [Vec<T>],
    depth_threads: (i64, usize),
) {
    for ((plane, filters), out) in src.iter().zip(planes).zip(out) {
        let plane = plane.as_ref().expect("validated");
        scale_plane(plane, filters, sums, out, depth_threads);
    }
}

/// Rows per thread below which a pass is not split (thread start-up
/// would cost more than it saves).
const MIN_ROWS_PER_THREAD: usize = 16;

/// Runs `f(first_row, rows)` over `data` split into bands of whole rows of
/// `row_len` samples, on up to `threads` threads.
fn in_bands<T: Send>(
    data: &mut [T],
    row_len: usize,
    threads: usize,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    let rows = data.len() / row_len.max(1);
    let bands = threads.min(rows / MIN_ROWS_PER_THREAD).max(1);
    if bands == 1 {
        f(0, data);
        return;
    }
    let per = rows.div_ceil(bands);
    std::thread::scope(|scope| {
        for (b, band) in data.chunks_mut(per * row_len).enumerate() {
            let f = &f;
            scope.spawn(move || f(b * per, band));
        }
    });
}

/// Scales one plane: horizontal sums of every source row, then the
/// vertical pass, rounded once and clamped to `0..=max`; each pass split
/// into bands of rows over `threads` threads (the samples do not depend on
/// the split).
fn scale_plane<T: Copy + Into<i32> + TryFrom<i64> + Send + Sync>(
    src: &Plane<'_, T>,
    filters: &PlaneFilters,
    sums: &mut Vec<i32>,
    out: &mut [T],
    (max, threads): (i64, usize),
) {
    let (h, v) = (&filters.horizontal, &filters.vertical);
    sums.clear();
    sums.resize(v.src * h.dst, 0);
    in_bands(sums, h.dst, threads, |first, band| {
        for (k, row_sums) in band.chunks_exact_mut(h.dst).enumerate() {
            let row = src.row(first + k);
            for (x, sum) in row_sums.iter_mut().enumerate() {
                *sum = h
                    .taps_of(x)
                    .iter()
                    .enumerate()
                    .map(|(t, &w)| w * row[h.source(x, t)].into())
                    .sum();
            }
        }
    });
    let sums = &sums[..];
    let round = 1i64 << (2 * WEIGHT_BITS - 1);
    in_bands(out, h.dst, threads, |first, band| {
        for (k, out_row) in band.chunks_exact_mut(h.dst).enumerate() {
            let y = first + k;
            let weights = v.taps_of(y);
            let rows: Vec<&[i32]> = (0..v.taps)
                .map(|t| &sums[v.source(y, t) * h.dst..][..h.dst])
                .collect();
            for (x, o) in out_row.iter_mut().enumerate() {
                let acc: i64 = weights
                    .iter()
                    .zip(&rows)
                    .map(|(&w, row)| i64::from(w) * i64::from(row[x]))
                    .sum();
                let value = ((acc + round) >> (2 * WEIGHT_BITS)).clamp(0, max);
                *o = T::try_from(value).unwrap_or_else(|_| unreachable!("clamped to the depth"));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic test plane with edges and gradients.
    fn pattern(w: usize, h: usize, max: u32) -> Vec<u16> {
        (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as u32, (i / w) as u32);
                ((x * 37 + y * 11 + (x * y) % 53 + if (x / 5 + y / 3) % 2 == 0 { 90 } else { 0 })
                    % (max + 1)) as u16
            })
            .collect()
    }

    #[test]
    fn weights_sum_to_one_and_stay_in_reach() {
        for method in [
            ScaleMethod::Bilinear,
            ScaleMethod::Bicubic,
            ScaleMethod::Lanczos,
        ] {
            for (src, dst) in [
                (1920, 1080),
                (960, 1920),
                (427, 1920),
                (7, 3),
                (3, 7),
                (1, 5),
            ] {
                let f = Filter::new(method, src, dst);
                assert_eq!(f.start.len(), dst);
                for i in 0..dst {
                    assert_eq!(f.taps_of(i).iter().sum::<i32>(), 1 << WEIGHT_BITS);
                    // The first tap lies within the kernel's reach of the centre.
                    let centre = (i as f64 + 0.5) * src as f64 / dst as f64 - 0.5;
                    let reach = method.radius() * (src as f64 / dst as f64).max(1.0);
                    assert!(f64::from(f.start[i]) >= centre - reach - 1e-9);
                }
            }
        }
    }

    #[test]
    fn the_same_size_is_the_identity() {
        for method in [
            ScaleMethod::Bilinear,
            ScaleMethod::Bicubic,
            ScaleMethod::Lanczos,
        ] {
            let (w, h) = (67, 45);
            let y = pattern(w, h, 1023);
            let c = pattern(34, 23, 1023);
            let planes = [
                Plane::new(&y, w, h, w).unwrap(),
                Plane::new(&c, 34, 23, 34).unwrap(),
                Plane::new(&c, 34, 23, 34).unwrap(),
            ];
            let pic = Picture::new_u16(PixelFormat::Yuv420, 10, &planes).unwrap();
            let mut s = Scaler::new(method, PixelFormat::Yuv420, 10, (w, h), (w, h)).unwrap();
            assert!(s.planes.iter().all(|p| p.horizontal.taps == 1));
            let same = s
                .scale(&pic, |out| match out.planes {
                    Planes::U16(pl) => {
                        pl[0].unwrap().data == &y[..] && pl[1].unwrap().data == &c[..]
                    }
                    _ => false,
                })
                .unwrap();
            assert!(same, "{method:?}");
        }
    }

    /// The definition, computed directly: every output sample as one 2-D
    /// weighted sum of source samples, with the weights made again here.
    fn direct(
        method: ScaleMethod,
        src: &[u16],
        from: (usize, usize),
        to: (usize, usize),
        max: i64,
    ) -> Vec<u16> {
        let weights = |s: usize, d: usize, i: usize| -> Vec<(usize, i64)> {
            let ratio = s as f64 / d as f64;
            let stretch = ratio.max(1.0);
            let centre = (i as f64 + 0.5) * ratio - 0.5;
            let r = method.radius() * stretch;
            let js: Vec<i64> = ((centre - r).ceil() as i64..=(centre + r).floor() as i64).collect();
            let real: Vec<f64> = js
                .iter()
                .map(|&j| method.weight((j as f64 - centre) / stretch))
                .collect();
            let total: f64 = real.iter().sum();
            let mut fixed: Vec<i64> = real
                .iter()
                .map(|w| (w / total * 16384.0).round() as i64)
                .collect();
            let mut best = 0;
            for k in 0..real.len() {
                if real[k] > real[best] {
                    best = k;
                }
            }
            fixed[best] += 16384 - fixed.iter().sum::<i64>();
            js.iter()
                .zip(fixed)
                .map(|(&j, w)| (j.clamp(0, s as i64 - 1) as usize, w))
                .collect()
        };
        let mut out = Vec::new();
        for y in 0..to.1 {
            let wy = weights(from.1, to.1, y);
            for x in 0..to.0 {
                let wx = weights(from.0, to.0, x);
                let mut acc = 0i64;
                for &(sy, cy) in &wy {
                    for &(sx, cx) in &wx {
                        acc += cy * cx * i64::from(src[sy * from.0 + sx]);
                    }
                }
                out.push(((acc + (1 << 27)) >> 28).clamp(0, max) as u16);
            }
        }
        out
    }

    #[test]
    fn scaled_samples_are_the_direct_weighted_sums() {
        let cases = [
            ((48, 36), (96, 72)),
            ((50, 40), (37, 61)),
            ((96, 54), (33, 35)),
            ((35, 33), (160, 90)),
        ];
        for method in [
            ScaleMethod::Bilinear,
            ScaleMethod::Bicubic,
            ScaleMethod::Lanczos,
        ] {
            for &(from, to) in &cases {
                for bpc in [8u8, 12] {
                    let max = (1i64 << bpc) - 1;
                    let y = pattern(from.0, from.1, max as u32);
                    let want = direct(method, &y, from, to, max);
                    let mut s = Scaler::new(method, PixelFormat::Gray, bpc, from, to).unwrap();
                    // Split into bands of rows, or not: the same samples.
                    s.threads = if bpc == 12 { 3 } else { 1 };
                    let got: Vec<u16> = if bpc == 8 {
                        let y8: Vec<u8> = y.iter().map(|&v| v as u8).collect();
                        let pic = Picture::new_u8(
                            PixelFormat::Gray,
                            &[Plane::new(&y8, from.0, from.1, from.0).unwrap()],
                        )
                        .unwrap();
                        s.scale(&pic, |o| match o.planes {
                            Planes::U8(pl) => {
                                pl[0].unwrap().data.iter().map(|&v| u16::from(v)).collect()
                            }
                            _ => unreachable!(),
                        })
                        .unwrap()
                    } else {
                        let pic = Picture::new_u16(
                            PixelFormat::Gray,
                            bpc,
                            &[Plane::new(&y, from.0, from.1, from.0).unwrap()],
                        )
                        .unwrap();
                        s.scale(&pic, |o| match o.planes {
                            Planes::U16(pl) => pl[0].unwrap().data.to_vec(),
                            _ => unreachable!(),
                        })
                        .unwrap()
                    };
                    assert_eq!(got, want, "{method:?} {from:?} -> {to:?} at {bpc} bits");
                }
            }
        }
    }

    #[test]
    fn bicubic_is_swscales_default_kernel() {
        // B = 0, C = 0.6: 1 at 0, 0 at the integers, −0.075 at 1.5
        // (the classic Catmull-Rom, C = 0.5, gives −0.0625 there).
        let k = |x| ScaleMethod::Bicubic.weight(x);
        assert_eq!(k(0.0), 1.0);
        assert!(k(1.0).abs() < 1e-12 && k(2.0).abs() < 1e-12);
        assert!((k(1.5) + 0.075).abs() < 1e-12, "{}", k(1.5));
        assert!((k(0.5) - 0.575).abs() < 1e-12, "{}", k(0.5));
    }

    #[test]
    fn wrong_pictures_are_refused_with_the_reason() {
        let y = vec![0u8; 64 * 48];
        let pic =
            Picture::new_u8(PixelFormat::Gray, &[Plane::new(&y, 64, 48, 64).unwrap()]).unwrap();
        let mut s = Scaler::new(
            ScaleMethod::Bicubic,
            PixelFormat::Gray,
            8,
            (32, 24),
            (64, 48),
        )
        .unwrap();
        let e = s.scale(&pic, |_| ()).unwrap_err().to_string();
        assert!(e.contains("32x24") && e.contains("64x48"), "{e}");
        assert!(
            Scaler::new(
                ScaleMethod::Bicubic,
                PixelFormat::Gray,
                8,
                (0, 24),
                (64, 48)
            )
            .is_err()
        );
    }
}
