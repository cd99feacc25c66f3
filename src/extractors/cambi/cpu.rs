//! CAMBI, Netflix's contrast-aware multiscale banding index (libvmaf
//! `feature/cambi.c` at f85a8536), a no-reference feature of the distorted
//! luma (and of the reference too with `full_ref`).
//!
//! Per frame: the luma is brought to 10 bits at the encode resolution
//! (nearest-neighbour sampling), smoothed by a 2x2 anti-dithering mean when
//! the encode was below 10 bits, and a spatial mask marks pixels in flat
//! areas (7x7 count of zero-derivative pixels above a size-dependent
//! threshold). Then over five scales (each a 2:1 decimation of image and
//! mask): a 3x3 separable mode filter, and per masked pixel a "c-value" from
//! the counts of its own value and of values ±1..±2^mlc in a window around
//! it, weighted by contrast and gated by a visibility threshold per contrast
//! step (TVI). The mean of the top-k c-values per scale, weighted 16:8:4:2:1,
//! divided by the window area, is the score.
//!
//! Everything but the last pooling is integer; the c-values are floats formed
//! exactly as libvmaf forms them, and the top-k mean sums them in double in
//! the order libvmaf's quick-select leaves them, so the result is bit-exact.

use crate::core::FrameError;
use crate::core::picture::Frame;
use crate::extractors::common::options::{OptSpec, Resolved};

/// `cambi.c:options`, feature parameters and their aliases.
pub const OPTIONS: &[OptSpec] = &[
    OptSpec::num("cambi_max_val", "cmxv", 1000.0, 0.0, 1000.0),
    OptSpec::int("enc_width", "encw", 0.0, 180.0, 7680.0),
    OptSpec::int("enc_height", "ench", 0.0, 150.0, 7680.0),
    OptSpec::int("enc_bitdepth", "encbd", 0.0, 6.0, 16.0),
    OptSpec::int("src_width", "srcw", 0.0, 320.0, 7680.0),
    OptSpec::int("src_height", "srch", 0.0, 200.0, 4320.0),
    OptSpec::int("window_size", "ws", 65.0, 15.0, 127.0),
    OptSpec::new(
        "topk",
        None,
        crate::extractors::common::options::Kind::Num,
        0.6,
        "",
        0.0001,
        1.0,
    ),
    OptSpec::num("cambi_topk", "ctpk", 0.6, 0.0001, 1.0),
    OptSpec::num("tvi_threshold", "tvit", 0.019, 0.0001, 1.0),
    OptSpec::num("cambi_vis_lum_threshold", "vlt", 0.0, 0.0, 300.0),
    OptSpec::int("max_log_contrast", "mlc", 2.0, 0.0, 5.0),
    OptSpec::boolean("full_ref", "full_ref").not_param(),
    OptSpec::text("eotf", None, "bt1886"),
    OptSpec::text("cambi_eotf", Some("ceot"), "bt1886"),
    OptSpec::int("cambi_high_res_speedup", "hrs", 0.0, 0.0, 2160.0),
    OptSpec::text("heatmaps_path", None, "").not_param(),
];

pub const NUM_SCALES: usize = 5;
const SCALE_WEIGHTS: [u32; NUM_SCALES] = [16, 8, 4, 2, 1];
/// Suprathreshold contrast response per contrast step.
const CONTRAST_WEIGHTS: [u32; 32] = [
    1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
];
const MIN_WIDTH_HEIGHT: u32 = 216;
const MASK_FILTER_SIZE: usize = 7;
/// Entries of libvmaf's reciprocal table (window areas up to 65² fit).
const RECIPROCAL_LUT_SIZE: usize = 4226;

/// The EOTF for the visibility thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eotf {
    Bt1886,
    Pq,
}

/// CAMBI options after libvmaf's precedence rules (`topk` over `cambi_topk`
/// when set, `cambi_eotf` over `eotf` when set).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CambiParams {
    pub max_val: f64,
    pub enc_width: u32,
    pub enc_height: u32,
    pub enc_bitdepth: u32,
    pub src_width: u32,
    pub src_height: u32,
    pub window_size: u32,
    pub topk: f64,
    pub tvi_threshold: f64,
    pub vis_lum_threshold: f64,
    pub max_log_contrast: u32,
    pub full_ref: bool,
    pub eotf: Eotf,
    pub high_res_speedup: u32,
}

impl CambiParams {
    pub fn from_options(o: &Resolved) -> Result<Self, String> {
        let n = |k| o.num(OPTIONS, k);
        let eotf_name = if o.text(OPTIONS, "cambi_eotf") != "bt1886" {
            o.text(OPTIONS, "cambi_eotf")
        } else {
            o.text(OPTIONS, "eotf")
        };
        if !o.text(OPTIONS, "heatmaps_path").is_empty() {
            return Err(
                "heatmaps_path (libvmaf's debug dump of c-value maps) is not supported".into(),
            );
        }
        let eotf = match eotf_name {
            "bt1886" => Eotf::Bt1886,
            "pq" => Eotf::Pq,
            other => return Err(format!("unknown EOTF \"{other}\" (bt1886 or pq)")),
        };
        let topk = if n("topk") != 0.6 {
            n("topk")
        } else {
            n("cambi_topk")
        };
        Ok(Self {
            max_val: n("cambi_max_val"),
            enc_width: n("enc_width") as u32,
            enc_height: n("enc_height") as u32,
            enc_bitdepth: n("enc_bitdepth") as u32,
            src_width: n("src_width") as u32,
            src_height: n("src_height") as u32,
            window_size: n("window_size") as u32,
            topk,
            tvi_threshold: n("tvi_threshold"),
            vis_lum_threshold: n("cambi_vis_lum_threshold"),
            max_log_contrast: n("max_log_contrast") as u32,
            full_ref: o.flag(OPTIONS, "full_ref"),
            eotf,
            high_res_speedup: n("cambi_high_res_speedup") as u32,
        })
    }

    /// `cambi.c:init` for a `w`x`h` stream of `bpc` bits: the sizes, window
    /// and thresholds every frame uses, or libvmaf's reason to refuse.
    pub fn setup(&self, w: u32, h: u32, bpc: u32) -> Result<CambiSetup, String> {
        let enc_bitdepth = if self.enc_bitdepth == 0 {
            bpc
        } else {
            self.enc_bitdepth
        };
        let (mut ew, mut eh) = if self.enc_width == 0 || self.enc_height == 0 {
            (w, h)
        } else {
            (self.enc_width, self.enc_height)
        };
        let (sw, sh) = if self.src_width == 0 || self.src_height == 0 {
            (w, h)
        } else {
            (self.src_width, self.src_height)
        };
        // A downscaled encode is measured at its own size, never upscaled.
        if eh > h || ew > w {
            (ew, eh) = (w, h);
        }
        if ew < MIN_WIDTH_HEIGHT && eh < MIN_WIDTH_HEIGHT {
            return Err(format!(
                "CAMBI needs an encode width or height of at least {MIN_WIDTH_HEIGHT} (encode is {ew}x{eh})"
            ));
        }
        if sw < MIN_WIDTH_HEIGHT && sh < MIN_WIDTH_HEIGHT {
            return Err(format!(
                "CAMBI needs a source width or height of at least {MIN_WIDTH_HEIGHT} (source is {sw}x{sh})"
            ));
        }
        if (sw > ew && sh < eh) || (sw < ew && sh > eh) {
            return Err(format!(
                "CAMBI source {sw}x{sh} and encode {ew}x{eh} are scaled in opposite directions"
            ));
        }
        if self.full_ref && (sw > w || sh > h) {
            return Err(format!(
                "CAMBI src_width/src_height {sw}x{sh} exceed the {w}x{h} reference"
            ));
        }
        let enc_pix = u64::from(ew) * u64::from(eh);
        let speedup = match self.high_res_speedup {
            1080 => enc_pix >= 1920 * 1080,
            1440 => enc_pix >= 2560 * 1440,
            2160 => enc_pix >= 3840 * 2160,
            _ => false,
        };
        let num_diffs = 1usize << self.max_log_contrast;
        let range = LumaRange::limited_10bit();
        let tvi_for_diff: Vec<u16> = (1..=num_diffs as i32)
            .map(|d| {
                (tvi_for_diff(d, self.tvi_threshold, range, self.eotf) + num_diffs as i32) as u16
            })
            .collect();
        let vlt_luma = vlt_luma(self.vis_lum_threshold, range, self.eotf);
        let window = adjust_window(self.window_size, ew, eh, speedup);
        let src_window = adjust_window(self.window_size, sw, sh, speedup);
        let max_window = window.max(src_window) as usize;
        if max_window * max_window >= RECIPROCAL_LUT_SIZE {
            return Err(format!(
                "CAMBI window {max_window} is too large (window_size {} at {ew}x{eh})",
                self.window_size
            ));
        }
        let band_base = (i32::from(vlt_luma) - 3 * num_diffs as i32 + 1).max(0) as u16;
        let band_size = tvi_for_diff[num_diffs - 1] + 1 - band_base;
        Ok(CambiSetup {
            enc: (ew as usize, eh as usize),
            src: (sw as usize, sh as usize),
            enc_bitdepth,
            speedup,
            window: window as usize,
            src_window: src_window as usize,
            topk: self.topk,
            max_val: self.max_val,
            full_ref: self.full_ref,
            tvi_for_diff,
            vlt_luma,
            band_base,
            band_size,
            reciprocal: reciprocal_lut(),
        })
    }
}

/// What `cambi.c:init` derives once per stream.
#[derive(Clone, Debug, PartialEq)]
pub struct CambiSetup {
    pub enc: (usize, usize),
    pub src: (usize, usize),
    pub enc_bitdepth: u32,
    pub speedup: bool,
    pub window: usize,
    pub src_window: usize,
    pub topk: f64,
    pub max_val: f64,
    pub full_ref: bool,
    /// Per contrast step d + 1: the highest (value + num_diffs) still gated in.
    pub tvi_for_diff: Vec<u16>,
    pub vlt_luma: u16,
    /// Values outside [band_base, band_base + band_size) can never matter.
    pub band_base: u16,
    pub band_size: u16,
    pub reciprocal: Vec<f32>,
}

/// CAMBI of one frame: the distorted score, and with `full_ref` the
/// reference's and their difference (all capped at `cambi_max_val`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CambiScores {
    pub distorted: f64,
    pub source: Option<f64>,
    pub full_reference: Option<f64>,
}

impl CambiScores {
    /// Into `slots`: the distorted picture's banding, then, with
    /// `full_ref`, the source's and the full-reference score.
    pub fn write(&self, out: &mut crate::core::RawFeatures, slots: crate::extractors::Slots) {
        out.set(slots.at(0), self.distorted);
        for (i, v) in [self.source, self.full_reference].into_iter().enumerate() {
            if let Some(v) = v {
                out.set(slots.at(1 + i), v);
            }
        }
    }
}

/// `(window · (w + h) / 375) >> 4`, halved with the speed-up, made odd.
fn adjust_window(window: u32, w: u32, h: u32, speedup: bool) -> u32 {
    let mut ws = ((window * (w + h)) / 375) >> 4;
    ws &= 0xffff;
    if speedup {
        ws = (ws + 1) >> 1;
    }
    ws | 1
}

/// libvmaf's `reciprocal_lut`: 1/i printed with 9 significant digits and
/// read back as a float (not always `1.0f / i`: 42 entries differ).
pub fn reciprocal_lut() -> Vec<f32> {
    let mut t = vec![0.0f32; RECIPROCAL_LUT_SIZE];
    for (i, slot) in t.iter_mut().enumerate().skip(1) {
        *slot = format!("{:.8e}", 1.0 / i as f64)
            .parse()
            .expect("a formatted number parses");
    }
    t
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct LumaRange {
    foot: i32,
    head: i32,
}

impl LumaRange {
    /// Limited ("standard") range at 10 bits: 64..940.
    fn limited_10bit() -> Self {
        Self {
            foot: 64,
            head: 940,
        }
    }
}

const BT1886_GAMMA: f64 = 2.4;
const BT1886_LW: f64 = 300.0;
const BT1886_LB: f64 = 0.01;

fn bt1886_eotf(v: f64) -> f64 {
    let lw = BT1886_LW.powf(1.0 / BT1886_GAMMA);
    let lb = BT1886_LB.powf(1.0 / BT1886_GAMMA);
    let a = (lw - lb).powf(BT1886_GAMMA);
    let b = lb / (lw - lb);
    a * (v + b).max(0.0).powf(BT1886_GAMMA)
}

fn pq_eotf(v: f64) -> f64 {
    let m1 = 0.1593017578125;
    let m2 = 78.84375;
    let c1 = 0.8359375;
    let c2 = 18.8515625;
    let c3 = 18.6875;
    let num = (v.powf(1.0 / m2) - c1).max(0.0);
    let den = c2 - c3 * v.powf(1.0 / m2);
    10000.0 * (num / den).powf(1.0 / m1)
}

/// `luminance_tools.c:vmaf_luminance_get_luminance`.
fn luminance(sample: i32, r: LumaRange, eotf: Eotf) -> f64 {
    let clipped = sample.clamp(r.foot, r.head);
    let v = f64::from(clipped - r.foot) / f64::from(r.head - r.foot);
    match eotf {
        Eotf::Bt1886 => bt1886_eotf(v),
        Eotf::Pq => pq_eotf(v),
    }
}

fn tvi_condition(sample: i32, diff: i32, tvi: f64, r: LumaRange, eotf: Eotf) -> bool {
    let mean = luminance(sample, r, eotf);
    let diffed = luminance(sample + diff, r, eotf);
    diffed - mean > tvi * mean
}

#[derive(PartialEq)]
enum Bisect {
    TooSmall,
    Correct,
    TooBig,
}

fn tvi_bisect(sample: i32, diff: i32, tvi: f64, r: LumaRange, eotf: Eotf) -> Bisect {
    if !tvi_condition(sample, diff, tvi, r, eotf) {
        Bisect::TooBig
    } else if tvi_condition(sample + 1, diff, tvi, r, eotf) {
        Bisect::TooSmall
    } else {
        Bisect::Correct
    }
}

/// `cambi.c:get_tvi_for_diff`: the largest 10-bit value at which a step of
/// `diff` is still below the visibility threshold, by bisection.
fn tvi_for_diff(diff: i32, tvi: f64, r: LumaRange, eotf: Eotf) -> i32 {
    let max_val = (1 << 10) - 1;
    let mut foot = r.foot;
    let mut head = r.head - diff - 1;
    match tvi_bisect(foot, diff, tvi, r, eotf) {
        Bisect::TooBig => return 0,
        Bisect::Correct => return foot,
        Bisect::TooSmall => {}
    }
    match tvi_bisect(head, diff, tvi, r, eotf) {
        Bisect::TooSmall => return max_val,
        Bisect::Correct => return head,
        Bisect::TooBig => {}
    }
    loop {
        let mid = foot + (head - foot) / 2;
        match tvi_bisect(mid, diff, tvi, r, eotf) {
            Bisect::TooBig => head = mid,
            Bisect::TooSmall => foot = mid,
            Bisect::Correct => return mid,
        }
    }
}

/// `cambi.c:get_vlt_luma`: the smallest 10-bit value at least as bright as
/// the visibility threshold (0 when the range's foot already is).
fn vlt_luma(threshold: f64, r: LumaRange, eotf: Eotf) -> u16 {
    let mut sample = r.foot as u16;
    while luminance(i32::from(sample), r, eotf) < threshold {
        sample += 1;
    }
    if i32::from(sample) == r.foot {
        0
    } else {
        sample
    }
}

/// Scratch for one CAMBI extractor.
#[derive(Default)]
pub struct Cambi {
    setup: Option<((usize, usize, u8), CambiSetup)>,
    image: Vec<u16>,
    mask: Vec<u8>,
    deriv: Vec<u8>,
    col_sums: Vec<u8>,
    hrow: Vec<u16>,
    hist: Vec<u16>,
    c_values: Vec<f32>,
}

impl Cambi {
    /// The stream's setup; errors are the reasons libvmaf's init refuses.
    pub fn prepare(
        &mut self,
        w: usize,
        h: usize,
        bpc: u8,
        p: &CambiParams,
    ) -> Result<&CambiSetup, String> {
        let key = (w, h, bpc);
        if self.setup.as_ref().is_none_or(|(k, _)| *k != key) {
            let s = p.setup(w as u32, h as u32, u32::from(bpc))?;
            self.setup = Some((key, s));
        }
        Ok(&self.setup.as_ref().expect("just set").1)
    }

    /// CAMBI of one frame pair.
    pub fn compute(
        &mut self,
        reference: &Frame,
        distorted: &Frame,
        p: &CambiParams,
    ) -> Result<CambiScores, FrameError> {
        let (w, h, bpc) = (distorted.width(), distorted.height(), distorted.bpc);
        let setup = self.prepare(w, h, bpc, p).map_err(FrameError)?.clone();
        let dist = self.score(distorted, &setup, false)?;
        let mut out = CambiScores {
            distorted: dist.min(setup.max_val),
            ..Default::default()
        };
        if setup.full_ref {
            let src = self.score(reference, &setup, true)?;
            out.source = Some(src.min(setup.max_val));
            out.full_reference = Some((dist - src).max(0.0).min(setup.max_val));
        }
        Ok(out)
    }

    fn score(&mut self, frame: &Frame, s: &CambiSetup, is_src: bool) -> Result<f64, FrameError> {
        let (w, h) = if is_src { s.src } else { s.enc };
        let window = if is_src { s.src_window } else { s.window };
        preprocess(frame, w, h, s.enc_bitdepth, &mut self.image, &mut self.hrow)?;
        spatial_mask(
            &self.image,
            w,
            h,
            &mut self.mask,
            &mut self.deriv,
            &mut self.col_sums,
        );
        let (mut sw, mut sh) = (w, h);
        let mut scores = [0f64; NUM_SCALES];
        for (scale, slot) in scores.iter_mut().enumerate() {
            if scale > 0 || s.speedup {
                let (nw, nh) = (sw.div_ceil(2), sh.div_ceil(2));
                decimate(&mut self.image, sw, nw, nh);
                decimate(&mut self.mask, sw, nw, nh);
                (sw, sh) = (nw, nh);
            }
            filter_mode(&mut self.image, sw, sh, &mut self.hrow);
            c_values(
                &self.image,
                &self.mask,
                sw,
                sh,
                window,
                s,
                &mut self.hist,
                &mut self.c_values,
            );
            *slot = spatial_pooling(&mut self.c_values[..sw * sh], s.topk);
        }
        Ok(combine_scales(&scores, window))
    }
}

/// The five per-scale top-k means weighted 16:8:4:2:1, over the window area.
pub fn combine_scales(scores: &[f64; NUM_SCALES], window: usize) -> f64 {
    let side = 2 * (window >> 1) + 1;
    let pixels_in_window = ((side * side) & 0xffff) as f64;
    let mut score = 0.0;
    for (sc, wt) in scores.iter().zip(SCALE_WEIGHTS) {
        score += sc * f64::from(wt);
    }
    score / pixels_in_window
}

/// How many c-values of an `n`-pixel scale the top-k mean takes.
pub fn topk_count(n: usize, topk: f64) -> usize {
    ((topk * n as f64) as i64).clamp(1, n as i64) as usize
}

/// Source row (or column) of each of `n` encode-size rows taken from `src_n`
/// (the nearest-neighbour stepping of `decimate_generic_*_to_10b`).
pub fn sample_positions(src_n: usize, n: usize) -> Vec<usize> {
    if src_n == n {
        return (0..n).collect();
    }
    let ratio = src_n as f32 / n as f32;
    let mut x = (f64::from(ratio / 2.0) - 0.5) as f32;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push((f64::from(x) + 0.5) as i32 as usize);
        x += ratio;
    }
    out
}

/// Sizes of the five scales of a `w`x`h` picture: the first halved with the
/// high-resolution speed-up, each next one halved (rounding up).
pub fn scale_sizes(w: usize, h: usize, speedup: bool) -> [(usize, usize); NUM_SCALES] {
    let mut out = [(w, h); NUM_SCALES];
    let (mut sw, mut sh) = (w, h);
    for (scale, slot) in out.iter_mut().enumerate() {
        if scale > 0 || speedup {
            (sw, sh) = (sw.div_ceil(2), sh.div_ceil(2));
        }
        *slot = (sw, sh);
    }
    out
}

/// `cambi_preprocessing`: luma to 10 bits at `w`x`h` (nearest neighbour
/// when the size differs), then the anti-dithering 2x2 mean when the encode
/// had fewer than 10 bits.
pub fn preprocess(
    frame: &Frame,
    w: usize,
    h: usize,
    enc_bitdepth: u32,
    out: &mut Vec<u16>,
    row: &mut Vec<u16>,
) -> Result<(), FrameError> {
    let luma = frame.luma();
    let bpc = u32::from(frame.bpc);
    if bpc < 16 {
        let max = (1u32 << bpc) - 1;
        // The largest sample (a reduction that vectorises), then the
        // offending value named only when there is one.
        let top = crate::core::isa::dispatch(
            #[inline(always)]
            || luma.data.iter().fold(0u16, |m, &v| m.max(v)),
        );
        if u32::from(top) > max {
            return Err(FrameError(format!(
                "CAMBI: luma value {top} exceeds the {bpc}-bit maximum {max}"
            )));
        }
    }
    // To 10 bits: deeper samples rounded down by `right`, shallower ones
    // moved up by `left` (one of the two is 0).
    let (right, left) = (bpc.saturating_sub(10), 10u32.saturating_sub(bpc));
    let round = if right == 0 { 0 } else { 1u32 << (right - 1) };
    let convert = move |v: u16| -> u16 { (((u32::from(v) + round) >> right) << left) as u16 };
    let (iw, ih) = (luma.width, luma.height);
    crate::extractors::common::grow(out, w * h);
    let out = &mut out[..w * h];
    if iw == w && ih == h {
        let out = &mut *out;
        crate::core::isa::dispatch(
            #[inline(always)]
            move || {
                for (o, &v) in out.iter_mut().zip(&luma.data) {
                    *o = convert(v);
                }
            },
        );
    } else {
        let cols = sample_positions(iw, w);
        for (i, &r) in sample_positions(ih, h).iter().enumerate() {
            let src = luma.row(r);
            for (o, &c) in out[i * w..(i + 1) * w].iter_mut().zip(&cols) {
                *o = convert(src[c]);
            }
        }
    }
    if enc_bitdepth < 10 {
        anti_dither(&mut out[..w * h], w, h, row);
    }
    Ok(())
}

/// Mean of each pixel with its right, lower and lower-right neighbours (the
/// last row and column average the two they have). Row by row, top down:
/// each output reads only samples not yet replaced (its own, the next in
/// its row, and the unchanged row below), so a row's outputs are formed
/// from a copy of it, in a loop that vectorises.
fn anti_dither(d: &mut [u16], w: usize, h: usize, row: &mut Vec<u16>) {
    crate::extractors::common::grow(row, w);
    let cur_copy = &mut row[..w];
    for i in 0..h - 1 {
        let (top, bottom) = d[i * w..(i + 2) * w].split_at_mut(w);
        cur_copy.copy_from_slice(top);
        let (cur, next) = (&*cur_copy, &*bottom);
        crate::core::isa::dispatch(
            #[inline(always)]
            || {
                for j in 0..w - 1 {
                    let s = u32::from(cur[j])
                        + u32::from(cur[j + 1])
                        + u32::from(next[j])
                        + u32::from(next[j + 1]);
                    top[j] = (s >> 2) as u16;
                }
            },
        );
        top[w - 1] = ((u32::from(cur[w - 1]) + u32::from(next[w - 1])) >> 1) as u16;
    }
    let last = &mut d[(h - 1) * w..h * w];
    for j in 0..w - 1 {
        last[j] = ((u32::from(last[j]) + u32::from(last[j + 1])) >> 1) as u16;
    }
}

fn ceil_log2(n: u32) -> i32 {
    if n == 0 {
        0
    } else {
        (32 - (n - 1).leading_zeros()) as i32
    }
}

/// `get_mask_index`: how many of the 7x7 neighbours must have no derivative.
pub fn mask_index(w: usize, h: usize) -> u32 {
    let shifted = ((w >> 6) * (h >> 6)) as u32;
    let f = MASK_FILTER_SIZE as i32;
    (((f * f + 3 * (ceil_log2(shifted) - 11) - 1) >> 1) & 0xffff) as u32
}

/// Row `i` of the zero-derivative map: 1 where a sample equals its right and
/// lower neighbours (the last column and row compare with themselves: equal,
/// as libvmaf counts them).
fn derivative_row(img: &[u16], w: usize, h: usize, i: usize, out: &mut [u8]) {
    let cur = &img[i * w..(i + 1) * w];
    let below = if i + 1 < h {
        &img[(i + 1) * w..(i + 2) * w]
    } else {
        cur
    };
    crate::core::isa::dispatch(
        #[inline(always)]
        || {
            for ((o, (&v, &right)), &down) in
                out.iter_mut().zip(cur.iter().zip(&cur[1..])).zip(below)
            {
                *o = u8::from(v == right) & u8::from(v == down);
            }
        },
    );
    out[w - 1] = u8::from(cur[w - 1] == below[w - 1]);
}

/// `get_spatial_mask`: 1 where more than `mask_index` of the 7x7 window
/// (clipped to the frame) has a zero derivative (equal to its right and
/// lower neighbours; the last column and row count as equal). The
/// derivative rows live in a ring of the 2·pad + 2 rows the sliding column
/// sums still need, not a whole frame.
pub fn spatial_mask(
    img: &[u16],
    w: usize,
    h: usize,
    mask: &mut Vec<u8>,
    deriv: &mut Vec<u8>,
    col_sums: &mut Vec<u8>,
) {
    let pad = MASK_FILTER_SIZE / 2;
    let ring = 2 * pad + 2;
    let threshold = mask_index(w, h);
    crate::extractors::common::grow(deriv, ring * w);
    // Every mask sample is written below; the column sums start at 0.
    crate::extractors::common::grow(mask, w * h);
    col_sums.clear();
    col_sums.resize(w, 0);
    // Row i's derivative into its ring slot, added to or taken from the sums.
    // Column sums count at most 2·pad + 1 = 7 ones: bytes.
    let slide = |deriv: &mut [u8], col_sums: &mut [u8], i: usize, add: bool| {
        let out = &mut deriv[(i % ring) * w..(i % ring + 1) * w];
        if add {
            derivative_row(img, w, h, i, out);
        }
        crate::core::isa::dispatch(
            #[inline(always)]
            || {
                for (c, &d) in col_sums.iter_mut().zip(&*out) {
                    if add {
                        *c += d;
                    } else {
                        *c -= d;
                    }
                }
            },
        );
    };
    // Column sums over rows [i - pad, i + pad], slid down the frame.
    for r in 0..pad.min(h) {
        slide(deriv, col_sums, r, true);
    }
    for i in 0..h {
        if i + pad < h {
            slide(deriv, col_sums, i + pad, true);
        }
        if i > pad {
            slide(deriv, col_sums, i - pad - 1, false);
        }
        // Row sums of the clipped window: the edges one by one, the
        // interior as a sum of 2·pad + 1 columns (vectorised).
        let row = &mut mask[i * w..(i + 1) * w];
        let window = |j: usize| -> u32 {
            col_sums[j.saturating_sub(pad)..(j + pad + 1).min(w)]
                .iter()
                .map(|&c| u32::from(c))
                .sum()
        };
        let inner = pad..w.saturating_sub(pad).max(pad);
        for j in (0..inner.start.min(w)).chain(inner.end..w) {
            row[j] = u8::from(window(j) > threshold);
        }
        let cs = &col_sums[..];
        let out = &mut row[inner.clone()];
        crate::core::isa::dispatch(
            #[inline(always)]
            || {
                // Column sums are at most 2·pad + 1 = 7, window sums 49.
                out.fill(0);
                for k in 0..=2 * pad {
                    let src = &cs[inner.start - pad + k..][..out.len()];
                    for (o, &c) in out.iter_mut().zip(src) {
                        *o += c;
                    }
                }
                for o in out.iter_mut() {
                    *o = u8::from(u32::from(*o) > threshold);
                }
            },
        );
    }
}

/// 2:1 decimation in place: (i, j) takes (2i, 2j) of the `old_w`-wide image.
pub fn decimate<T: Copy>(d: &mut [T], old_w: usize, w: usize, h: usize) {
    crate::core::isa::dispatch(
        #[inline(always)]
        || {
            // Row 0 in place (it reads ahead of its writes), then each row i
            // from row 2i, which lies wholly after it.
            for j in 0..w.min(h * w) {
                d[j] = d[2 * j];
            }
            for i in 1..h {
                let (to, from) = d.split_at_mut(i * w + w);
                let from = &from[2 * i * old_w - (i * w + w)..][..2 * w - 1];
                let to = &mut to[i * w..];
                for (t, pair) in to.iter_mut().zip(from.chunks_exact(2)) {
                    *t = pair[0];
                }
                to[w - 1] = from[2 * w - 2];
            }
        },
    )
}

#[inline(always)]
fn mode3(a: u16, b: u16, c: u16) -> u16 {
    if a == b || a == c {
        a
    } else if b == c {
        b
    } else {
        a.min(b).min(c)
    }
}

/// `filter_mode`: 3-tap mode across, then 3-tap mode down; the first and
/// last rows stay as they are, and the first and last columns are not
/// filtered across (they enter the vertical mode unchanged).
pub fn filter_mode(d: &mut [u16], w: usize, h: usize, buf: &mut Vec<u16>) {
    crate::extractors::common::grow(buf, 3 * w);
    let buf = &mut buf[..3 * w];
    crate::core::isa::dispatch(
        #[inline(always)]
        move || {
            let horizontal = |r: &[u16], out: &mut [u16]| {
                out[0] = r[0];
                if w > 2 {
                    let (l, m, rr) = (&r[..w - 2], &r[1..w - 1], &r[2..]);
                    for (j, o) in out[1..w - 1].iter_mut().enumerate() {
                        *o = mode3(l[j], m[j], rr[j]);
                    }
                }
                out[w - 1] = r[w - 1];
            };
            for i in 0..h {
                let slot = i % 3;
                horizontal(&d[i * w..(i + 1) * w], &mut buf[slot * w..(slot + 1) * w]);
                if i > 1 {
                    let (a, b, c) = ((i - 2) % 3, (i - 1) % 3, i % 3);
                    let (ra, rb, rc) = (&buf[a * w..][..w], &buf[b * w..][..w], &buf[c * w..][..w]);
                    for (j, o) in d[(i - 1) * w..i * w].iter_mut().enumerate() {
                        *o = mode3(ra[j], rb[j], rc[j]);
                    }
                }
            }
        },
    )
}

/// `calculate_c_values`: per masked pixel, the strongest weighted contrast
/// to a value d + 1 steps above or below (d < num_diffs) among the masked
/// pixels of the `window`-square around it, gated by the TVI threshold of
/// that step and the visibility floor.
#[allow(clippy::too_many_arguments)]
pub fn c_values(
    img: &[u16],
    mask: &[u8],
    w: usize,
    h: usize,
    window: usize,
    s: &CambiSetup,
    hist: &mut Vec<u16>,
    out: &mut Vec<f32>,
) {
    let pad = window >> 1;
    let num_diffs = s.tvi_for_diff.len();
    let base = usize::from(s.band_base);
    let size = usize::from(s.band_size);
    hist.clear();
    hist.resize(size * w, 0);
    // Every output is written in the pass (0 where a pixel has no c-value).
    crate::extractors::common::grow(out, w * h);
    // The whole pass in the dispatched copy, the histogram update included
    // (defined inside, so that it is compiled with the copy's AVX2 /
    // AVX-512 adds rather than called as a baseline function).
    crate::core::isa::dispatch(
        #[inline(always)]
        || c_values_rows(img, mask, w, h, pad, s, size, base, num_diffs, hist, out),
    );
}

/// One row's entry into (`add`) or exit from the histogram of [`c_values`]:
/// each masked sample whose value lies in the band counts ±1 in its
/// value's row, over the window's columns. Inlined into the dispatched
/// copy, so that the adds are its vector width.
#[inline(always)]
fn hist_update(
    hist: &mut [u16],
    img_row: &[u16],
    mask_row: &[u8],
    pad: usize,
    base: usize,
    size: usize,
    add: bool,
) {
    let w = img_row.len();
    for j in 0..w {
        if mask_row[j] == 0 {
            continue;
        }
        let v = usize::from(img_row[j]);
        if v < base || v - base >= size {
            continue;
        }
        let lo = j.saturating_sub(pad);
        let hi = (j + pad + 1).min(w);
        let cells = &mut hist[(v - base) * w + lo..(v - base) * w + hi];
        // ±1 as a wrapping add (counts never pass 0 or 2^16), sixteen
        // counts per vector add.
        let delta = if add { 1 } else { u16::MAX };
        let mut chunks = cells.chunks_exact_mut(16);
        for chunk in &mut chunks {
            for c in chunk {
                *c = c.wrapping_add(delta);
            }
        }
        for c in chunks.into_remainder() {
            *c = c.wrapping_add(delta);
        }
    }
}

/// The row loop of [`c_values`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn c_values_rows(
    img: &[u16],
    mask: &[u8],
    w: usize,
    h: usize,
    pad: usize,
    s: &CambiSetup,
    size: usize,
    base: usize,
    num_diffs: usize,
    hist: &mut [u16],
    out: &mut [f32],
) {
    // A function, not a closure: closures are compiled on their own,
    // without the copy's instruction set, when not inlined.
    let row = |r: usize| (&img[r * w..][..w], &mask[r * w..][..w]);
    for r in 0..pad.min(h) {
        let (ir, mr) = row(r);
        hist_update(hist, ir, mr, pad, base, size, true);
    }
    let count = |hist: &[u16], v: isize, j: usize| -> u16 {
        if v < 0 || v as usize >= size {
            0
        } else {
            hist[v as usize * w + j]
        }
    };
    for i in 0..h {
        if i + pad < h {
            let (ir, mr) = row(i + pad);
            hist_update(hist, ir, mr, pad, base, size, true);
        }
        if i > pad {
            let (ir, mr) = row(i - pad - 1);
            hist_update(hist, ir, mr, pad, base, size, false);
        }
        for j in 0..w {
            out[i * w + j] = 0.0;
            if mask[i * w + j] == 0 {
                continue;
            }
            let raw = img[i * w + j] as isize;
            let compact = raw - base as isize;
            if compact < 0 || compact as usize >= size {
                continue;
            }
            let value = img[i * w + j] as i32 + num_diffs as i32;
            let p0 = count(hist, compact, j);
            let mut c = 0.0f32;
            for (d, (&tvi, &weight)) in s.tvi_for_diff.iter().zip(&CONTRAST_WEIGHTS).enumerate() {
                let step = d as i32 + 1;
                if value <= i32::from(tvi) && value + step > i32::from(s.vlt_luma) {
                    let p1 = count(hist, compact + step as isize, j);
                    let p2 = count(hist, compact - step as isize, j);
                    let p = if p1 > p2 { p1 } else { p2 };
                    let val = (weight * u32::from(p0) * u32::from(p)) as f32
                        * s.reciprocal[usize::from(p) + usize::from(p0)];
                    if val > c {
                        c = val;
                    }
                }
            }
            out[i * w + j] = c;
        }
    }
}

/// libvmaf's `quick_select`: partitions `a` in place so that its first `k`
/// entries are the `k` largest, leaving them in exactly libvmaf's order.
pub fn quick_select(a: &mut [f32], k: usize) {
    let n = a.len();
    if n == k {
        return;
    }
    let (mut left, mut right) = (0isize, n as isize - 1);
    let k = k as isize;
    while left < right {
        let pivot = a[k as usize];
        let (mut i, mut j) = (left, right);
        loop {
            while a[i as usize] > pivot {
                i += 1;
            }
            while a[j as usize] < pivot {
                j -= 1;
            }
            if i <= j {
                a.swap(i as usize, j as usize);
                i += 1;
                j -= 1;
            }
            if i > j {
                break;
            }
        }
        if j < k {
            left = i;
        }
        if k < i {
            right = j;
        }
    }
}

/// Mean of the top `topk` share of the c-values, summed in double in the
/// order quick-select leaves them.
pub fn spatial_pooling(c: &mut [f32], topk: f64) -> f64 {
    let k = topk_count(c.len(), topk);
    quick_select(c, k);
    let mut sum = 0.0f64;
    for &v in &c[..k] {
        sum += f64::from(v);
    }
    sum / k as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    // libvmaf's literals, digits as printed there.
    #[allow(clippy::excessive_precision)]
    #[test]
    fn reciprocal_table_is_libvmafs() {
        let t = reciprocal_lut();
        assert_eq!(t[1], 1.0);
        assert_eq!(t[3], 0.333333333f32);
        // One of the entries where 9 printed digits are not 1.0f / i.
        assert_eq!(t[82], 0.012195122f32);
        assert_ne!(t[82], 1.0f32 / 82.0);
    }

    #[test]
    fn window_and_mask_index_follow_the_frame_size() {
        assert_eq!(adjust_window(65, 3840, 2160, false), 65);
        assert_eq!(adjust_window(65, 1920, 1080, true), 17);
        assert_eq!(adjust_window(65, 576, 324, false), 9);
        assert_eq!(mask_index(576, 324), 16);
        assert_eq!(mask_index(1920, 1080), 21);
    }

    #[test]
    fn quick_select_puts_the_largest_first() {
        let mut v: Vec<f32> = (0..200).map(|i| ((i * 37) % 101) as f32).collect();
        let mut sorted = v.clone();
        sorted.sort_by(|a, b| b.total_cmp(a));
        quick_select(&mut v, 50);
        let mut top = v[..50].to_vec();
        top.sort_by(|a, b| b.total_cmp(a));
        assert_eq!(top, sorted[..50]);
    }

    /// The sliding box sums of the mask against a direct 7x7 count.
    #[test]
    fn spatial_mask_matches_direct_count() {
        let (w, h) = (37, 23);
        let img: Vec<u16> = (0..w * h)
            .map(|i| {
                if (i * 7919) % 13 < 9 {
                    100
                } else {
                    (i % 5) as u16
                }
            })
            .collect();
        let (mut mask, mut deriv, mut cs) = (Vec::new(), Vec::new(), Vec::new());
        spatial_mask(&img, w, h, &mut mask, &mut deriv, &mut cs);
        let mut deriv = vec![0u8; w * h];
        for (i, row) in deriv.chunks_mut(w).enumerate() {
            derivative_row(&img, w, h, i, row);
        }
        let t = mask_index(w, h);
        for i in 0..h {
            for j in 0..w {
                let mut n = 0;
                for r in i.saturating_sub(3)..(i + 4).min(h) {
                    for c in j.saturating_sub(3)..(j + 4).min(w) {
                        n += u32::from(deriv[r * w + c]);
                    }
                }
                assert_eq!(mask[i * w + j], u8::from(n > t), "({i},{j})");
            }
        }
    }

    /// Test image: values 0..=3, so that modes and ties occur.
    fn small_values(n: usize, seed: u64) -> Vec<u16> {
        crate::extractors::common::test_samples(n, 0, 3, seed)
            .into_iter()
            .map(|v| v as u16)
            .collect()
    }

    #[test]
    fn decimation_takes_every_other_sample_of_every_other_row() {
        for old_w in 1..=9 {
            for old_h in 1..=7 {
                let img = small_values(old_w * old_h, (old_w * 10 + old_h) as u64);
                let (w, h) = (old_w.div_ceil(2), old_h.div_ceil(2));
                let expect: Vec<u16> = (0..h)
                    .flat_map(|i| (0..w).map(move |j| (i, j)))
                    .map(|(i, j)| img[2 * i * old_w + 2 * j])
                    .collect();
                let mut d = img.clone();
                decimate(&mut d, old_w, w, h);
                assert_eq!(d[..w * h], expect[..], "{old_w}x{old_h}");
                let mut b: Vec<u8> = img.iter().map(|&v| v as u8).collect();
                decimate(&mut b, old_w, w, h);
                let expect8: Vec<u8> = expect.iter().map(|&v| v as u8).collect();
                assert_eq!(b[..w * h], expect8[..], "{old_w}x{old_h} bytes");
            }
        }
    }

    #[test]
    fn mode_filter_equals_the_direct_filter() {
        for (w, h) in [(1, 1), (2, 3), (3, 3), (5, 4), (17, 9), (64, 5)] {
            let img = small_values(w * h, (w * 100 + h) as u64);
            // Across (first and last columns unfiltered), then down (first
            // and last rows unchanged), from the whole horizontal pass.
            let across: Vec<u16> = (0..h * w)
                .map(|at| {
                    let j = at % w;
                    if j == 0 || j + 1 >= w {
                        img[at]
                    } else {
                        mode3(img[at - 1], img[at], img[at + 1])
                    }
                })
                .collect();
            let mut expect = img.clone();
            for i in 1..h.saturating_sub(1) {
                for j in 0..w {
                    let at = i * w + j;
                    expect[at] = mode3(across[at - w], across[at], across[at + w]);
                }
            }
            let mut d = img.clone();
            filter_mode(&mut d, w, h, &mut Vec::new());
            assert_eq!(d, expect, "{w}x{h}");
        }
    }

    #[test]
    fn mode_filter_keeps_edges() {
        let (w, h) = (5, 4);
        let mut d: Vec<u16> = vec![1, 2, 3, 4, 5, 5, 5, 1, 1, 9, 7, 5, 5, 1, 2, 0, 0, 0, 0, 0];
        let orig = d.clone();
        filter_mode(&mut d, w, h, &mut Vec::new());
        assert_eq!(d[..5], orig[..5]);
        assert_eq!(d[15..], orig[15..]);
        // Row 1, column 0: vertical mode of the unfiltered column 0 values 1, 5, 7.
        assert_eq!(d[5], 1);
    }
}
