//! `--align auto`: the frame offset between REF and DIST, found before
//! scoring from the first seconds of both. Each frame's luma is reduced
//! to a 64x36 thumbnail of block means, less its own mean (an encode's
//! brightness drift does not move it); every offset within the search
//! window is scored by the mean absolute difference of the thumbnails it
//! pairs, and the lowest wins. The confidence says how clearly:
//! 1 − best / the lower of the median cost and the lowest other local
//! minimum (0 when another offset fits about as well, as for a still
//! picture; near 1 for one clear valley, as for a pan).

use crate::input::{Input, Kind};
use crate::{Fail, usage};
use gst::prelude::*;
use gst_video::prelude::*;
use gstvmafhip::vmaf::y4m::Y4mReader;
use gstvmafhip::vmaf::yuv::frame_bytes;
use std::io::Read;

/// Thumbnail size: enough for motion to tell frames apart, small enough to
/// compare thousands of pairs at once.
const TW: usize = 64;
const TH: usize = 36;
/// The reference span compared at each offset.
const SPAN_SECONDS: f64 = 2.0;
/// Below this the offset is not trusted: a warning, and no shift.
pub const MIN_CONFIDENCE: f64 = 0.2;

/// What `--align` asked for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Align {
    Off,
    Auto,
    Frames(i32),
}

impl Align {
    pub fn parse(v: &str) -> Result<Align, Fail> {
        match v {
            "off" => Ok(Align::Off),
            "auto" => Ok(Align::Auto),
            n => n.parse().map(Align::Frames).map_err(|_| {
                usage(format!(
                    "--align {n}: auto, off, or the frames DIST lags REF (negative: leads)"
                ))
            }),
        }
    }
}

/// The offset found, and how clearly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Found {
    /// Frames DIST lags REF (its frame k + offset shows REF's frame k).
    pub offset: i32,
    pub confidence: f64,
}

/// One frame's thumbnail, its mean taken out.
type Thumb = Vec<f32>;

/// The frames DIST lags REF (`--align`): 0 with `off`; with `auto`, found
/// from the first seconds (a note says it, a warning when it is too
/// unclear to use, and then 0).
pub fn resolve(
    align: Align,
    reference: &Input,
    distorted: &Input,
    say: &dyn Fn(String),
) -> Result<(i32, Option<f64>), Fail> {
    match align {
        Align::Off => Ok((0, None)),
        Align::Frames(n) => Ok((n, None)),
        Align::Auto => {
            let f = find(reference, distorted, 2.0)?;
            if f.confidence < MIN_CONFIDENCE {
                say(format!(
                    "warning: --align auto: no clear offset between {} and {} in ±2 s (best {} frames, confidence {:.2}): scoring them unshifted",
                    reference.path, distorted.path, f.offset, f.confidence
                ));
                return Ok((0, Some(f.confidence)));
            }
            say(format!(
                "note: --align auto: {} {} (confidence {:.2})",
                distorted.path,
                match f.offset {
                    0 => "is aligned with the reference".to_string(),
                    n if n > 0 =>
                        format!("lags the reference by {n} frames: its first {n} are not scored"),
                    n => format!(
                        "leads the reference by {} frames: the reference's first {} are not scored",
                        -n, -n
                    ),
                },
                f.confidence
            ));
            Ok((f.offset, Some(f.confidence)))
        }
    }
}

/// The offset between `reference` and `distorted` within ±`window_s`.
pub fn find(reference: &Input, distorted: &Input, window_s: f64) -> Result<Found, Fail> {
    let fps = reference.video.fps;
    let rate = if fps.0 > 0 && fps.1 > 0 {
        fps.0 as f64 / fps.1 as f64
    } else {
        25.0
    };
    let reach = (window_s * rate).round() as usize;
    let span = (SPAN_SECONDS * rate).round().max(8.0) as usize;
    let r = thumbnails(reference, span + reach)?;
    let d = thumbnails(distorted, span + reach)?;
    best_offset(&r, &d, reach as i32, span).ok_or_else(|| {
        Fail::input(format!(
            "--align auto: {} and {} have too few frames to compare ({} and {})",
            reference.path,
            distorted.path,
            r.len(),
            d.len()
        ))
    })
}

/// The offset in `-reach..=reach` whose pairs of the first `span`
/// reference frames differ least, and its confidence.
pub fn best_offset(r: &[Thumb], d: &[Thumb], reach: i32, span: usize) -> Option<Found> {
    let costs: Vec<(i32, f64)> = (-reach..=reach)
        .filter_map(|k| cost(r, d, k, span).map(|c| (k, c)))
        .collect();
    let at = (0..costs.len()).min_by(|&a, &b| costs[a].1.total_cmp(&costs[b].1))?;
    let (offset, best) = costs[at];
    let mut sorted: Vec<f64> = costs.iter().map(|c| c.1).collect();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    // Another valley: a local minimum other than the best one.
    let rival = (0..costs.len())
        .filter(|&i| i != at)
        .filter(|&i| {
            let c = costs[i].1;
            (i == 0 || c <= costs[i - 1].1) && (i + 1 == costs.len() || c <= costs[i + 1].1)
        })
        .map(|i| costs[i].1)
        .fold(median, f64::min);
    let confidence = if rival > 0.0 {
        (1.0 - best / rival).clamp(0.0, 1.0)
    } else {
        0.0
    };
    Some(Found { offset, confidence })
}

/// Mean absolute difference of reference frame i against distorted frame
/// i + k, over the first `span` reference frames that have one; None when
/// fewer than half of them do.
fn cost(r: &[Thumb], d: &[Thumb], k: i32, span: usize) -> Option<f64> {
    let pairs: Vec<(&Thumb, &Thumb)> = (0..span.min(r.len()))
        .filter_map(|i| {
            let j = usize::try_from(i as i64 + k as i64).ok()?;
            Some((&r[i], d.get(j)?))
        })
        .collect();
    if pairs.len() < (span.min(r.len()) / 2).max(4) {
        return None;
    }
    let total: f64 = pairs
        .iter()
        .map(|(a, b)| {
            a.iter()
                .zip(b.iter())
                .map(|(x, y)| (x - y).abs() as f64)
                .sum::<f64>()
        })
        .sum();
    Some(total / (pairs.len() * TW * TH) as f64)
}

/// The first `n` frames' thumbnails (fewer if the input is shorter).
fn thumbnails(input: &Input, n: usize) -> Result<Vec<Thumb>, Fail> {
    let v = &input.video;
    let bps = if v.bpc > 8 { 2 } else { 1 };
    let luma = |plane: &[u8]| thumbnail(plane, v.width, v.height, (bps, v.bpc));
    match input.kind {
        Kind::Raw => {
            let size = frame_bytes(v.width, v.height, v.format, v.bpc);
            let mut f = open(&input.path)?;
            let mut buf = vec![0u8; size];
            let mut out = Vec::new();
            while out.len() < n && f.read_exact(&mut buf).is_ok() {
                out.push(luma(&buf));
            }
            Ok(out)
        }
        Kind::Y4m => {
            let mut y4m = Y4mReader::new(std::io::BufReader::new(open(&input.path)?))
                .map_err(|e| Fail::input(format!("{}: {e}", input.path)))?;
            let mut buf = vec![0u8; y4m.header.frame_bytes()];
            let mut out = Vec::new();
            while out.len() < n
                && y4m
                    .read_frame(&mut buf)
                    .map_err(|e| Fail::input(format!("{}: {e}", input.path)))?
            {
                out.push(luma(&buf));
            }
            Ok(out)
        }
        Kind::Media => media_thumbnails(input, n),
    }
}

fn open(path: &str) -> Result<std::fs::File, Fail> {
    std::fs::File::open(path).map_err(|e| Fail::input(format!("{path}: {e}")))
}

/// A media file's first `n` frames' luma, decoded by GStreamer on the
/// CPU: a GPU decoder's start (its plugin probing every GPU) would cost
/// more than the few frames it decodes, and a thumbnail needs no exact
/// decoder. The decoder's own YUV layout is taken as it comes
/// (`videoconvert` passes it through), and its luma brought to 8 bits here.
fn media_thumbnails(input: &Input, n: usize) -> Result<Vec<Thumb>, Fail> {
    let fail = |what: String| Fail::input(format!("{}: --align auto: {what}", input.path));
    let desc = format!(
        "filesrc location=\"{}\" ! decodebin name=decode ! videoconvert \
         ! video/x-raw,format={{I420,YV12,NV12,NV21,Y42B,Y444,GRAY8,I420_10LE,I422_10LE,Y444_10LE,P010_10LE,I420_12LE,I422_12LE,Y444_12LE,GRAY16_LE}} \
         ! appsink name=luma sync=false",
        input.path.replace('"', "\\\"")
    );
    let pipeline = gst::parse::launch(&desc)
        .map_err(|e| fail(e.to_string()))?
        .downcast::<gst::Pipeline>()
        .map_err(|_| fail("not a pipeline".into()))?;
    if let Some(decode) = pipeline.by_name("decode") {
        skip_gpu_decoders(&decode);
    }
    let sink = pipeline
        .by_name("luma")
        .and_then(|s| s.downcast::<gst_app::AppSink>().ok())
        .ok_or_else(|| fail("no appsink".into()))?;
    pipeline
        .set_state(gst::State::Playing)
        .map_err(|e| fail(e.to_string()))?;
    let mut out = Vec::new();
    let mut problem = None;
    while out.len() < n {
        let Ok(sample) = sink.pull_sample() else {
            break;
        };
        match luma_of(&sample) {
            Ok((plane, w, h)) => out.push(thumbnail(&plane, w, h, (1, 8))),
            Err(p) => {
                problem = Some(p);
                break;
            }
        }
    }
    let _ = pipeline.set_state(gst::State::Null);
    match problem {
        Some(p) => Err(fail(p)),
        None => Ok(out),
    }
}

/// Makes `decodebin` pass over the GPU decoders (`autoplug-select`: skip).
fn skip_gpu_decoders(decodebin: &gst::Element) {
    let Some(class) =
        glib::Type::from_name("GstAutoplugSelectResult").and_then(glib::EnumClass::with_type)
    else {
        return;
    };
    decodebin.connect("autoplug-select", false, move |args| {
        let gpu = args
            .get(3)
            .and_then(|a| a.get::<gst::ElementFactory>().ok())
            .is_some_and(|f| crate::decode::is_gpu_decoder(&f.name()));
        // GST_AUTOPLUG_SELECT_TRY (0) or _SKIP (2).
        class.to_value(if gpu { 2 } else { 0 })
    });
}

/// A decoded frame's luma plane as packed 8-bit rows, with its size.
fn luma_of(sample: &gst::Sample) -> Result<(Vec<u8>, usize, usize), String> {
    let (Some(buf), Some(info)) = (
        sample.buffer(),
        sample
            .caps()
            .and_then(|c| gst_video::VideoInfo::from_caps(c).ok()),
    ) else {
        return Err("a frame without caps".into());
    };
    let frame = gst_video::VideoFrameRef::from_buffer_ref_readable(buf, &info)
        .map_err(|_| "a frame that cannot be read".to_string())?;
    let f = info.format_info();
    let (w, h) = (info.width() as usize, info.height() as usize);
    let (pstride, depth, shift) = (f.pixel_stride()[0] as usize, f.depth()[0], f.shift()[0]);
    let stride = frame.plane_stride()[0] as usize;
    let data = frame
        .plane_data(0)
        .map_err(|_| "a frame without a luma plane".to_string())?;
    let mut plane = Vec::with_capacity(w * h);
    for y in 0..h {
        let row = &data[y * stride..y * stride + w * pstride];
        if pstride == 1 {
            plane.extend_from_slice(row);
        } else {
            plane.extend(row.chunks_exact(2).map(|b| {
                ((u16::from_le_bytes([b[0], b[1]]) >> shift) >> depth.saturating_sub(8)) as u8
            }));
        }
    }
    Ok((plane, w, h))
}

/// The 64x36 block means of a luma plane (`bps` bytes per sample, little
/// endian, of `bpc` bits, brought to 8), less their mean.
fn thumbnail(plane: &[u8], w: usize, h: usize, (bps, bpc): (usize, u8)) -> Thumb {
    let mut sums = vec![0u64; TW * TH];
    let mut counts = vec![0u32; TW * TH];
    let depth_shift = bpc.saturating_sub(8);
    // Each block's columns: [edge[c], edge[c + 1]).
    let edge: Vec<usize> = (0..=TW).map(|c| (c * w).div_ceil(TW)).collect();
    for y in 0..h {
        let ty = y * TH / h;
        let row = &plane[y * w * bps..(y + 1) * w * bps];
        for c in 0..TW {
            let cols = edge[c]..edge[c + 1];
            let n = cols.len() as u32;
            let sum: u64 = if bps == 2 {
                row[cols.start * 2..cols.end * 2]
                    .chunks_exact(2)
                    .map(|b| u64::from(u16::from_le_bytes([b[0], b[1]]) >> depth_shift))
                    .sum()
            } else {
                row[cols].iter().map(|&v| u64::from(v)).sum()
            };
            sums[ty * TW + c] += sum;
            counts[ty * TW + c] += n;
        }
    }
    let means: Vec<f32> = sums
        .iter()
        .zip(&counts)
        .map(|(&s, &c)| {
            if c > 0 {
                (s as f64 / f64::from(c)) as f32
            } else {
                0.0
            }
        })
        .collect();
    let mean = means.iter().sum::<f32>() / means.len() as f32;
    means.iter().map(|m| m - mean).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A moving gradient: frame t's thumbnail.
    fn moving(t: usize) -> Thumb {
        let plane: Vec<u8> = (0..TH * 4)
            .flat_map(|y| (0..TW * 4).map(move |x| ((x * 3 + y + t * 7) % 256) as u8))
            .collect();
        thumbnail(&plane, TW * 4, TH * 4, (1, 8))
    }

    #[test]
    fn the_offset_of_a_shifted_copy_is_found_clearly() {
        let r: Vec<Thumb> = (5..80).map(moving).collect();
        for lag in [-5i32, 0, 3, 5] {
            let d: Vec<Thumb> = ((5 + lag) as usize..90).map(moving).collect();
            let f = best_offset(&r, &d, 10, 30).unwrap();
            assert_eq!(f.offset, -lag, "{lag}: {f:?}");
            assert!(f.confidence > 0.5, "{lag}: {f:?}");
        }
    }

    #[test]
    fn a_slow_pan_is_one_clear_valley() {
        // A gradient moving a pixel a frame at 4x the thumbnail's width:
        // neighbouring offsets differ little, but there is one valley.
        let slow = |t: usize| {
            let plane: Vec<u8> = (0..TH * 4)
                .flat_map(|y| (0..TW * 4).map(move |x| ((x + t + y / 3) % 200) as u8))
                .collect();
            thumbnail(&plane, TW * 4, TH * 4, (1, 8))
        };
        let r: Vec<Thumb> = (5..60).map(slow).collect();
        let d: Vec<Thumb> = (0..60).map(slow).collect();
        let f = best_offset(&r, &d, 10, 30).unwrap();
        assert_eq!(f.offset, 5, "{f:?}");
        assert!(f.confidence > 0.5, "{f:?}");
    }

    #[test]
    fn a_still_picture_has_no_confidence() {
        let r: Vec<Thumb> = (0..60).map(|_| moving(0)).collect();
        let f = best_offset(&r, &r.clone(), 10, 30).unwrap();
        assert!(f.confidence < MIN_CONFIDENCE, "{f:?}");
    }

    #[test]
    fn ten_bit_samples_are_brought_to_eight() {
        // Left half 4 (1 in 8 bits), right half 1020 (255).
        let p: Vec<u8> = (0..TH)
            .flat_map(|_| (0..TW).flat_map(|x| if x < TW / 2 { [4u8, 0] } else { [0xfc, 3] }))
            .collect();
        let t = thumbnail(&p, TW, TH, (2, 10));
        assert_eq!((t[0], t[TW - 1]), (-127.0, 127.0));
    }
}
