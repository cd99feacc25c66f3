//! An encoding ladder in one element: `dist_sink` and requested
//! `dist_sink_%u` pads, each rendition scaled to the reference's size and
//! scored on its own, with exactly the numbers of scaling it first
//! (`core::scale`) and scoring the pair alone.

mod common;

use common::pipeline::{Outcome, collect, init};
use gst::prelude::*;
use gstvmafhip::vmaf::{
    Engine, EngineConfig, FrameScores, ModelSet, Picture, PixelFormat, Plane, ScaleMethod, Scaler,
    Scorer,
};
use gstvmafhip::{VmafFrameMessage, VmafPooledMessage};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

const REF: (usize, usize) = (176, 144);
const FRAMES: u32 = 8;

/// An I420 frame's three planes (stored sizes: ceil halving).
#[derive(Clone)]
struct Yuv {
    size: (usize, usize),
    planes: [Vec<u8>; 3],
}

impl Yuv {
    fn chroma(size: (usize, usize)) -> (usize, usize) {
        (size.0.div_ceil(2), size.1.div_ceil(2))
    }

    fn picture(&self) -> Picture<'_> {
        let (w, h) = self.size;
        let (cw, ch) = Self::chroma(self.size);
        let p = |i: usize, w, h| Plane::new(&self.planes[i], w, h, w).unwrap();
        Picture::new_u8(
            PixelFormat::Yuv420,
            &[p(0, w, h), p(1, cw, ch), p(2, cw, ch)],
        )
        .unwrap()
    }

    /// The frame in a buffer laid out as GStreamer lays I420 out (padded
    /// strides), with its timestamp.
    fn buffer(&self, i: u32) -> gst::Buffer {
        let info = video_info(self.size);
        let mut buf = gst::Buffer::with_size(info.size()).unwrap();
        {
            let b = buf.get_mut().unwrap();
            b.set_pts(gst::ClockTime::from_mseconds(40 * u64::from(i)));
            b.set_duration(gst::ClockTime::from_mseconds(40));
            let mut f = gst_video::VideoFrameRef::from_buffer_ref_writable(b, &info).unwrap();
            for p in 0..3 {
                let (w, h) = if p == 0 {
                    self.size
                } else {
                    Self::chroma(self.size)
                };
                let stride = info.stride()[p] as usize;
                let data = f.plane_data_mut(p as u32).unwrap();
                for y in 0..h {
                    data[y * stride..y * stride + w]
                        .copy_from_slice(&self.planes[p][y * w..(y + 1) * w]);
                }
            }
        }
        buf
    }
}

fn video_info(size: (usize, usize)) -> gst_video::VideoInfo {
    gst_video::VideoInfo::builder(gst_video::VideoFormat::I420, size.0 as u32, size.1 as u32)
        .fps(gst::Fraction::new(25, 1))
        .build()
        .unwrap()
}

/// Reference frame `i`: a moving texture, chroma a gradient.
fn reference(i: u32) -> Yuv {
    let (cw, ch) = Yuv::chroma(REF);
    let chroma = |k: u32| -> Vec<u8> {
        (0..cw * ch)
            .map(|p| ((p % cw) as u32 * 3 + (p / cw) as u32 * 2 + i * k) as u8 % 200 + 20)
            .collect()
    };
    Yuv {
        size: REF,
        planes: [
            common::textured_luma(i, REF.0, REF.1, 11),
            chroma(1),
            chroma(3),
        ],
    }
}

/// A rendition of reference frame `i` at `size`: each sample the mean of
/// the reference's samples it covers, with some coding noise.
fn rendition(i: u32, size: (usize, usize)) -> Yuv {
    let r = reference(i);
    let plane = |p: usize| -> Vec<u8> {
        let (from, to) = if p == 0 {
            (REF, size)
        } else {
            (Yuv::chroma(REF), Yuv::chroma(size))
        };
        let mut out = common::box_average(&r.planes[p], from, to);
        for (k, v) in out.iter_mut().enumerate() {
            let (x, y) = ((k % to.0) as u32, (k / to.0) as u32);
            *v = (u32::from(*v) + (x * 7 + y * 13 + i * 5) % 9).min(255) as u8;
        }
        out
    };
    Yuv {
        size,
        planes: [plane(0), plane(1), plane(2)],
    }
}

fn config() -> EngineConfig {
    let mut c = EngineConfig::new(ModelSet::load("vmaf_v0.6.1").unwrap());
    c.features.push("psnr".into());
    c
}

/// What the rendition at `size` scores alone: scaled to the reference's
/// size with the bicubic scaler first, then each pair to a lone engine.
fn scored_alone(size: (usize, usize), frames: u32) -> Vec<FrameScores> {
    scored_alone_from(size, 0..frames)
}

/// As [`scored_alone`], for reference frames `frames` only (a stream that
/// starts there; indices from 0).
fn scored_alone_from(size: (usize, usize), frames: std::ops::Range<u32>) -> Vec<FrameScores> {
    let mut engine = Scorer::cpu(&config()).unwrap();
    let mut scaler = Scaler::new(ScaleMethod::Bicubic, PixelFormat::Yuv420, 8, size, REF).unwrap();
    let mut out = Vec::new();
    for i in frames {
        let (r, d) = (reference(i), rendition(i, size));
        let pushed = scaler
            .scale(&d.picture(), |scaled| {
                engine.push(gstvmafhip::vmaf::FramePair::new(&r.picture(), scaled))
            })
            .unwrap();
        out.extend(pushed.unwrap());
    }
    out.extend(engine.flush().unwrap());
    out
}

/// Every value of `want` equals the message's, bit for bit.
fn assert_same(got: &[&VmafFrameMessage], want: &[FrameScores], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: frame count");
    for (m, f) in got.iter().zip(want) {
        assert_eq!(m.index, f.index, "{what}");
        for (name, v) in f.iter() {
            let g = match name {
                "vmaf" => Some(m.score),
                "psnr_y" => m.psnr_y,
                n => m.feature(n),
            };
            assert_eq!(
                g.map(f64::to_bits),
                Some(v.to_bits()),
                "{what}: frame {} {name}: {g:?} against {v} alone",
                f.index
            );
        }
    }
}

/// An element with `ref_sink` and `dist_sink` fed by appsrcs `r` and `d0`.
fn ladder(props: &str) -> (gst::Pipeline, gst::Element) {
    init();
    let desc = format!(
        "appsrc name=r format=time ! v.ref_sink appsrc name=d0 format=time ! v.dist_sink \
         vmafhip name=v on-gpu-error=fail psnr=true frame-message=true {props} ! fakesink sync=false"
    );
    let p = gst::parse::launch(&desc)
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap();
    let v = p.by_name("v").unwrap();
    (p, v)
}

/// A new appsrc in `pipeline` linked to a requested `dist_sink_%u`.
fn add_rendition(
    pipeline: &gst::Pipeline,
    v: &gst::Element,
    label: Option<&str>,
) -> (gst_app::AppSrc, gst::Pad) {
    let src = gst_app::AppSrc::builder().format(gst::Format::Time).build();
    pipeline.add(&src).unwrap();
    let pad = v.request_pad_simple("dist_sink_%u").unwrap();
    if let Some(l) = label {
        pad.set_property("label", l);
    }
    src.static_pad("src").unwrap().link(&pad).unwrap();
    src.sync_state_with_parent().unwrap();
    (src, pad)
}

fn appsrc(pipeline: &gst::Pipeline, name: &str) -> gst_app::AppSrc {
    pipeline.by_name(name).unwrap().downcast().unwrap()
}

/// Pushes frames `0..frames` of `make` into `src` (caps first), then EOS.
fn feed(src: &gst_app::AppSrc, size: (usize, usize), frames: u32, make: impl Fn(u32) -> Yuv) {
    src.set_caps(Some(&video_info(size).to_caps().unwrap()));
    for i in 0..frames {
        src.push_buffer(make(i).buffer(i)).unwrap();
    }
    src.end_of_stream().unwrap();
}

/// `rendition`'s frame messages equal the first `frames` of a rendition of
/// `size` scored alone ([`scored_alone`]), bit for bit.
fn assert_scored_alone(out: &Outcome, rendition: &str, size: (usize, usize), frames: u32) {
    assert_same(&of(out, rendition), &scored_alone(size, frames), rendition);
}

fn of<'a>(out: &'a Outcome, rendition: &str) -> Vec<&'a VmafFrameMessage> {
    out.frames
        .iter()
        .filter(|m| m.rendition == rendition)
        .collect()
}

fn pooled<'a>(out: &'a Outcome, rendition: &str) -> Vec<&'a VmafPooledMessage> {
    out.pooled
        .iter()
        .filter(|m| m.rendition == rendition)
        .collect()
}

/// Plays the pipeline while the feeders push, to EOS.
fn run(pipeline: &gst::Pipeline, feeders: Vec<Box<dyn FnOnce() + Send>>) -> Outcome {
    let bus = pipeline.bus().unwrap();
    if pipeline.set_state(gst::State::Playing).is_err() {
        // The element did not start: its error is on the bus.
        let out = collect(&bus);
        pipeline.set_state(gst::State::Null).unwrap();
        return out;
    }
    let threads: Vec<_> = feeders.into_iter().map(std::thread::spawn).collect();
    let out = collect(&bus);
    for t in threads {
        t.join().unwrap();
    }
    pipeline.set_state(gst::State::Null).unwrap();
    out
}

/// Three renditions, same size, half size and an odd size: each scores
/// exactly what it scores scaled first and scored alone, its messages and
/// results file named after it.
#[test]
fn a_ladder_scores_each_rendition_as_it_scores_alone() {
    three_renditions("backend=cpu");
}

/// The same ladder on the GPU (`backend=hip`): every value equal to the
/// CPU engine's scoring of each rendition scaled first. Skipped without a
/// GPU unless `VMAFHIP_REQUIRE_GPU=1`.
#[test]
fn a_ladder_on_the_gpu_scores_each_rendition_as_the_cpu_alone() {
    three_renditions("backend=hip");
}

fn three_renditions(backend: &str) {
    let dir = std::env::temp_dir().join(format!(
        "vmafhip-ladder-{}-{}",
        std::process::id(),
        &backend[8..]
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("out.json");
    let (p, v) = ladder(&format!(
        "{backend} results-filename={} results-format=json",
        json.display()
    ));
    let (half, odd) = ((88, 72), (121, 99));
    let (s1, _) = add_rendition(&p, &v, Some("half"));
    let (s2, _) = add_rendition(&p, &v, None);
    let (r, d0) = (appsrc(&p, "r"), appsrc(&p, "d0"));
    let out = run(
        &p,
        vec![
            Box::new(move || feed(&r, REF, FRAMES, reference)),
            Box::new(move || feed(&d0, REF, FRAMES, |i| rendition(i, REF))),
            Box::new(move || feed(&s1, half, FRAMES, |i| rendition(i, half))),
            Box::new(move || feed(&s2, odd, FRAMES, |i| rendition(i, odd))),
        ],
    );
    if backend == "backend=hip"
        && out.errors.iter().any(|e| e.contains("no usable GPU"))
        && std::env::var_os("VMAFHIP_REQUIRE_GPU").is_none()
    {
        println!("skipped: no usable GPU ({:?})", out.errors);
        return;
    }
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    if backend == "backend=hip" {
        assert!(
            out.frames.iter().all(|m| m.backend.starts_with("hip")),
            "{:?}",
            out.frames
                .iter()
                .map(|m| (&m.rendition, &m.backend))
                .collect::<Vec<_>>()
        );
    }
    for (name, label, size) in [
        ("dist_sink", None, REF),
        ("dist_sink_0", Some("half"), half),
        ("dist_sink_1", None, odd),
    ] {
        let got = of(&out, name);
        assert!(
            got.iter().all(|m| m.label.as_deref() == label),
            "{name}'s label"
        );
        assert_same(&got, &scored_alone(size, FRAMES), name);
        let pooled = pooled(&out, name);
        assert_eq!(pooled.len(), 1, "{name}: one pooled message");
        assert_eq!(
            (pooled[0].frames, pooled[0].reason.as_str()),
            (u64::from(FRAMES), "eos")
        );
        println!(
            "{name} ({label:?}, {}x{}): pooled VMAF {:.6}",
            size.0, size.1, pooled[0].score
        );
    }
    // One results file per rendition: dist_sink's has the element's name.
    for file in ["out.json", "out.half.json", "out.dist_sink_1.json"] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["frames"].as_array().unwrap().len(),
            FRAMES as usize,
            "{file}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Pads requested and released while PAUSED: the released one posts
/// nothing (no frame scored) and leaves no trace; the kept one is scored
/// from the first frame.
#[test]
fn renditions_can_be_requested_and_released_while_paused() {
    let (p, v) = ladder("backend=cpu");
    p.set_state(gst::State::Paused).unwrap();
    let (s1, _) = add_rendition(&p, &v, None);
    let (gone, gone_pad) = add_rendition(&p, &v, None);
    gone.static_pad("src").unwrap().unlink(&gone_pad).unwrap();
    v.release_request_pad(&gone_pad);
    gone.set_state(gst::State::Null).unwrap();
    p.remove(&gone).unwrap();
    // A third, requested after the release, gets a new name.
    let (s3, pad3) = add_rendition(&p, &v, None);
    assert_eq!(pad3.name(), "dist_sink_2");
    let (r, d0) = (appsrc(&p, "r"), appsrc(&p, "d0"));
    let quarter = (44, 36);
    let out = run(
        &p,
        vec![
            Box::new(move || feed(&r, REF, FRAMES, reference)),
            Box::new(move || feed(&d0, REF, FRAMES, |i| rendition(i, REF))),
            Box::new(move || feed(&s1, quarter, FRAMES, |i| rendition(i, quarter))),
            Box::new(move || feed(&s3, REF, FRAMES, |i| rendition(i, REF))),
        ],
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert!(of(&out, "dist_sink_1").is_empty() && pooled(&out, "dist_sink_1").is_empty());
    assert_scored_alone(&out, "dist_sink_0", quarter, FRAMES);
    assert_scored_alone(&out, "dist_sink_2", REF, FRAMES);
    assert_scored_alone(&out, "dist_sink", REF, FRAMES);
}

/// A pad released mid-stream ends its rendition there: its last frames and
/// a pooled message with `reason` "released"; the others go on to EOS.
#[test]
fn a_rendition_released_mid_stream_reports_what_it_scored() {
    let (p, v) = ladder("backend=cpu");
    let (s1, pad1) = add_rendition(&p, &v, Some("mid"));
    let (r, d0) = (appsrc(&p, "r"), appsrc(&p, "d0"));
    let half = (88, 72);
    let passed = Arc::new(AtomicU32::new(0));
    let counter = passed.clone();
    v.static_pad("src")
        .unwrap()
        .add_probe(gst::PadProbeType::BUFFER, move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            gst::PadProbeReturn::Ok
        });
    let bus = p.bus().unwrap();
    p.set_state(gst::State::Playing).unwrap();
    feed_some(&s1, half, 0..3, |i| rendition(i, half));
    feed_some(&r, REF, 0..3, reference);
    feed_some(&d0, REF, 0..3, |i| rendition(i, REF));
    // Three frames in, the rendition goes: once the element has passed the
    // third reference frame on (each after scoring it), and with no fourth
    // there yet, it has scored exactly three frames of each input.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while passed.load(Ordering::SeqCst) < 3 {
        assert!(std::time::Instant::now() < deadline, "three frames through");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    s1.static_pad("src").unwrap().unlink(&pad1).unwrap();
    v.release_request_pad(&pad1);
    feed_some(&r, REF, 3..FRAMES, reference);
    feed_some(&d0, REF, 3..FRAMES, |i| rendition(i, REF));
    r.end_of_stream().unwrap();
    d0.end_of_stream().unwrap();
    let out = collect(&bus);
    p.set_state(gst::State::Null).unwrap();
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let released = pooled(&out, "dist_sink_0");
    assert_eq!(released.len(), 1);
    assert_eq!(
        (
            released[0].reason.as_str(),
            released[0].frames,
            released[0].label.as_deref()
        ),
        ("released", 3, Some("mid"))
    );
    assert_scored_alone(&out, "dist_sink_0", half, 3);
    assert_scored_alone(&out, "dist_sink", REF, FRAMES);
}

fn feed_some(
    src: &gst_app::AppSrc,
    size: (usize, usize),
    frames: std::ops::Range<u32>,
    make: impl Fn(u32) -> Yuv,
) {
    if frames.start == 0 {
        src.set_caps(Some(&video_info(size).to_caps().unwrap()));
    }
    for i in frames {
        src.push_buffer(make(i).buffer(i)).unwrap();
    }
}

/// A rendition that ends early leaves the others going: it has its frames
/// scored (the rest counted as unscored), the others all of theirs.
#[test]
fn a_rendition_that_ends_early_leaves_the_others_going() {
    let (p, v) = ladder("backend=cpu");
    let (s1, _) = add_rendition(&p, &v, None);
    let (r, d0) = (appsrc(&p, "r"), appsrc(&p, "d0"));
    let odd = (99, 55);
    let out = run(
        &p,
        vec![
            Box::new(move || feed(&r, REF, FRAMES, reference)),
            Box::new(move || feed(&d0, REF, FRAMES, |i| rendition(i, REF))),
            Box::new(move || feed(&s1, odd, 4, |i| rendition(i, odd))),
        ],
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_scored_alone(&out, "dist_sink_0", odd, 4);
    assert_scored_alone(&out, "dist_sink", REF, FRAMES);
    let p0 = pooled(&out, "dist_sink_0");
    assert_eq!(
        (p0[0].frames, p0[0].pairing.unscored),
        (4, u64::from(FRAMES) - 4)
    );
    assert!(
        out.warnings
            .iter()
            .any(|w| w.contains("dist_sink_0 has no frame")),
        "{:?}",
        out.warnings
    );
}

/// `dist_sink` keeps GStreamer 1.28's rule (same size as the reference);
/// a requested pad must still carry the reference's format.
#[test]
fn dist_sink_still_needs_the_size_and_renditions_the_format() {
    let (p, v) = ladder("backend=cpu");
    let (s1, _) = add_rendition(&p, &v, None);
    let (r, d0) = (appsrc(&p, "r"), appsrc(&p, "d0"));
    let out = run(
        &p,
        vec![
            Box::new(move || feed(&r, REF, 2, reference)),
            Box::new(move || feed(&d0, REF, 2, |i| rendition(i, REF))),
            Box::new(move || {
                let info = gst_video::VideoInfo::builder(gst_video::VideoFormat::Y444, 88, 72)
                    .fps(gst::Fraction::new(25, 1))
                    .build()
                    .unwrap();
                s1.set_caps(Some(&info.to_caps().unwrap()));
                let mut b = gst::Buffer::with_size(info.size()).unwrap();
                b.get_mut().unwrap().set_pts(gst::ClockTime::ZERO);
                let _ = s1.push_buffer(b);
                let _ = s1.end_of_stream();
            }),
        ],
    );
    let e = out.errors.join("\n");
    assert!(
        e.contains("dist_sink_0") && e.contains("videoconvert"),
        "{e}"
    );
}

/// A ladder of requested pads only: `dist_sink` left unlinked is ended at
/// start, scored nothing and leaves no results file, and each rendition
/// scores as alone.
#[test]
fn a_ladder_without_dist_sink() {
    init();
    let dir = std::env::temp_dir().join(format!("vmafhip-ladder-{}-only", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("out.json");
    let desc = format!(
        "appsrc name=r format=time ! v.ref_sink vmafhip name=v backend=cpu psnr=true \
         frame-message=true results-filename={} ! fakesink sync=false",
        json.display()
    );
    let p = gst::parse::launch(&desc)
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap();
    let v = p.by_name("v").unwrap();
    let (half, odd) = ((88, 72), (121, 99));
    let (s0, _) = add_rendition(&p, &v, None);
    let (s1, _) = add_rendition(&p, &v, Some("odd"));
    let r = appsrc(&p, "r");
    let out = run(
        &p,
        vec![
            Box::new(move || feed(&r, REF, FRAMES, reference)),
            Box::new(move || feed(&s0, half, FRAMES, |i| rendition(i, half))),
            Box::new(move || feed(&s1, odd, FRAMES, |i| rendition(i, odd))),
        ],
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert!(of(&out, "dist_sink").is_empty() && pooled(&out, "dist_sink").is_empty());
    assert_scored_alone(&out, "dist_sink_0", half, FRAMES);
    assert_scored_alone(&out, "dist_sink_1", odd, FRAMES);
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["out.dist_sink_0.json", "out.odd.json"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A rendition whose size changes mid-stream (an ABR switch): the frames
/// before end with a `caps-changed` pooled message, the engine starts again
/// at the new size (motion too), and every frame still equals the
/// rendition scored alone at its size; `dist_sink` goes on untouched.
#[test]
fn a_rendition_that_changes_size_goes_on() {
    let (p, v) = ladder("backend=cpu");
    let (s0, _) = add_rendition(&p, &v, None);
    let (r, d0) = (appsrc(&p, "r"), appsrc(&p, "d0"));
    let (before, after) = ((88, 72), (121, 99));
    let out = run(
        &p,
        vec![
            Box::new(move || feed(&r, REF, FRAMES, reference)),
            Box::new(move || feed(&d0, REF, FRAMES, |i| rendition(i, REF))),
            Box::new(move || {
                s0.set_caps(Some(&video_info(before).to_caps().unwrap()));
                for i in 0..FRAMES {
                    if i == 4 {
                        s0.set_caps(Some(&video_info(after).to_caps().unwrap()));
                    }
                    let size = if i < 4 { before } else { after };
                    s0.push_buffer(rendition(i, size).buffer(i)).unwrap();
                }
                s0.end_of_stream().unwrap();
            }),
        ],
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let got = of(&out, "dist_sink_0");
    let mut want = scored_alone(before, 4);
    let mut later = scored_alone_from(after, 4..FRAMES);
    later.iter_mut().for_each(|f| f.index += 4);
    want.extend(later);
    assert_same(&got, &want, "dist_sink_0 across the size change");
    let reasons: Vec<(&str, u64)> = pooled(&out, "dist_sink_0")
        .iter()
        .map(|p| (p.reason.as_str(), p.frames))
        .collect();
    assert_eq!(reasons, [("caps-changed", 4), ("eos", u64::from(FRAMES))]);
    assert_scored_alone(&out, "dist_sink", REF, FRAMES);
}
