//! The element in real pipelines and under gst_check::Harness.

mod common;

use common::pipeline::{Outcome, collect, init, launch};
use common::*;
use gst::prelude::*;
use gstvmafhip::{VmafFrameMessage, VmafPooledMessage};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Run a pipeline to EOS or error, collecting the element's messages.
fn run(desc: &str) -> Outcome {
    let pipeline = launch(desc);
    let bus = pipeline.bus().unwrap();
    // A refused start still posts its error on the bus, which `collect` reads.
    let _ = pipeline.set_state(gst::State::Playing);
    let out = collect(&bus);
    pipeline.set_state(gst::State::Null).unwrap();
    out
}

fn raw_src(path: &str, run: &GoldenRun, fmt: &str) -> String {
    format!(
        "filesrc location={path} ! rawvideoparse width={} height={} format={fmt} framerate=25/1",
        run.width, run.height
    )
}

/// Golden pairs through filesrc ! rawvideoparse: per-frame messages and the
/// results file match libvmaf.
#[test]
fn golden_pairs_through_pipelines() {
    let cache = golden_cache();
    let cases = [
        (
            "astronaut_576x324_420p8_12f_crf35",
            "vmaf_v0.6.1",
            "i420",
            "json",
        ),
        (
            "rocket_576x324_420p10_6f_crf30",
            "vmaf_v0.6.1",
            "i420-10le",
            "xml",
        ),
        (
            "coffee_576x324_420p8_12f_crf35",
            "vmaf_v0.6.1neg",
            "i420",
            "csv",
        ),
        // VMAF v1: a five-frame-window HFR model, and a CAMBI encode-side override.
        (
            "astronaut_576x324_420p8_12f_crf23",
            "vmaf_v1.0.16_hfr_3d0h",
            "i420",
            "json",
        ),
        (
            "coffee_576x324_420p8_12f_downup2",
            "vmaf_v1.0.16_3d0h.cambi.enc_width-288.cambi.enc_height-162.cambi.enc_bitdepth-8",
            "i420",
            "json",
        ),
        (
            "rocket_576x324_420p10_6f_crf30",
            "vmaf_v1.0.16_3d0h",
            "i420-10le",
            "xml",
        ),
    ];
    for (pair, runname, fmt, results) in cases {
        let run = golden_run(pair, runname);
        yuv_bytes(&run.ref_zst);
        yuv_bytes(&run.dis_zst);
        let rp = cache.join(run.ref_zst.trim_end_matches(".zst"));
        let dp = cache.join(run.dis_zst.trim_end_matches(".zst"));
        let out_file = std::env::temp_dir().join(format!("vmafhip-{pair}-{runname}.{results}"));
        // VMAFHIP_ELEMENT_BACKEND=hip runs the same pipelines on a GPU (device runs).
        let backend = std::env::var("VMAFHIP_ELEMENT_BACKEND").unwrap_or_else(|_| "cpu".into());
        let desc = format!(
            "{} ! v.ref_sink {} ! v.dist_sink vmafhip name=v frame-message=true backend={backend} model-filename=\"{}\" psnr={} ssim={} ms-ssim={} \
             results-filename={} results-format={results} ! fakesink",
            raw_src(rp.to_str().unwrap(), &run, fmt),
            raw_src(dp.to_str().unwrap(), &run, fmt),
            run.model.trim_start_matches("version="),
            run.psnr,
            run.ssim,
            run.ms_ssim,
            out_file.display()
        );
        let out = run_pipeline_checked(&desc);
        let golden = run.expected();
        let gf = golden["frames"].as_array().unwrap();
        assert_eq!(out.frames.len(), gf.len(), "{pair}");
        assert_eq!(
            out.frames.iter().map(|f| f.index).collect::<Vec<_>>(),
            (0..gf.len() as u64).collect::<Vec<_>>()
        );
        for (m, g) in out.frames.iter().zip(gf) {
            for (k, v) in g["metrics"].as_object().unwrap() {
                let got = match k.as_str() {
                    "vmaf" => Some(m.score),
                    "psnr_y" => m.psnr_y,
                    "float_ssim" => m.ssim,
                    "float_ms_ssim" => m.ms_ssim,
                    _ => m.feature(k),
                };
                let got = got.unwrap_or_else(|| panic!("{pair} frame {}: {k} missing", m.index));
                assert!(
                    (got - v.as_f64().unwrap()).abs() <= tolerance(k),
                    "{pair} frame {} {k}: {got} vs {v}",
                    m.index
                );
            }
        }
        assert_eq!(out.pooled.len(), 1);
        let want = golden["pooled_metrics"]["vmaf"]["mean"].as_f64().unwrap();
        assert!((out.pooled[0].mean - want).abs() < 1e-4);
        // The results file in the asked layout.
        let text = std::fs::read_to_string(&out_file).unwrap();
        match results {
            "json" => {
                let j: serde_json::Value = serde_json::from_str(&text).unwrap();
                let bad = j["frames"].as_array().unwrap().len();
                assert_eq!(bad, gf.len());
                assert!(
                    (j["pooled_metrics"]["vmaf"]["mean"].as_f64().unwrap() - want).abs() < 1e-4
                );
            }
            "xml" => {
                assert!(text.starts_with("<VMAF version=\"3.2.0\">"));
                assert_eq!(text.matches("<frame frameNum=").count(), gf.len());
                assert!(
                    text.contains(&format!(
                        "vmaf=\"{:.6}\"",
                        gf[0]["metrics"]["vmaf"].as_f64().unwrap()
                    )),
                    "{text}"
                );
            }
            _ => {
                let lines: Vec<_> = text.lines().collect();
                assert!(
                    lines[0].starts_with("Frame,integer_adm2_egl_1,"),
                    "{}",
                    lines[0]
                );
                assert_eq!(lines.len(), gf.len() + 1);
            }
        }
    }
}

fn run_pipeline_checked(desc: &str) -> Outcome {
    let out = run(desc);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    out
}

fn testsrc(n: u32, w: u32, h: u32, fmt: &str, pattern: &str) -> String {
    format!(
        "videotestsrc num-buffers={n} pattern={pattern} ! video/x-raw,width={w},height={h},format={fmt},framerate=30/1"
    )
}

#[test]
fn n_frames_give_n_messages_and_one_pooled() {
    let desc = format!(
        "{} ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! videobalance brightness=0.05 ! v.dist_sink \
         vmafhip name=v frame-message=true backend=cpu ! fakesink",
        testsrc(7, 160, 120, "I420", "ball")
    );
    let out = run_pipeline_checked(&desc);
    assert_eq!(
        out.frames.iter().map(|f| f.index).collect::<Vec<_>>(),
        (0..7).collect::<Vec<_>>()
    );
    assert_eq!(out.pooled.len(), 1);
    assert_eq!(out.pooled[0].frames, 7);
    let mean = out.frames.iter().map(|f| f.score).sum::<f64>() / 7.0;
    assert!((out.pooled[0].mean - mean).abs() < 1e-9);
    // Timestamps follow the stream (30 fps).
    assert_eq!(
        out.frames[3].timestamp,
        Some(gst::ClockTime::from_nseconds(100_000_000))
    );
}

#[test]
fn identical_inputs_score_as_libvmaf_identical() {
    let desc = format!(
        "{} ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! v.dist_sink vmafhip name=v frame-message=true backend=cpu psnr=true ! fakesink",
        testsrc(3, 128, 96, "I420", "snow")
    );
    let out = run_pipeline_checked(&desc);
    assert_eq!(out.frames.len(), 3);
    for f in &out.frames {
        assert!(
            (f.feature("integer_adm2").unwrap() - 1.0).abs() < 1e-3,
            "{f:?}"
        );
        assert!((f.feature("integer_vif_scale0").unwrap() - 1.0).abs() < 1e-3);
        assert_eq!(f.psnr_y, Some(60.0));
    }
}

#[test]
fn mismatched_caps_is_an_error_naming_both() {
    let desc = format!(
        "{} ! v.ref_sink {} ! v.dist_sink vmafhip name=v backend=cpu ! fakesink",
        testsrc(3, 160, 120, "I420", "ball"),
        testsrc(3, 176, 144, "I420", "ball")
    );
    let out = run(&desc);
    assert_eq!(out.errors.len(), 1, "{out:?}");
    let e = &out.errors[0];
    assert!(
        e.contains("width=(int)160") && e.contains("width=(int)176") && e.contains("videoscale"),
        "{e}"
    );

    let desc = format!(
        "{} ! v.ref_sink {} ! v.dist_sink vmafhip name=v backend=cpu ! fakesink",
        testsrc(3, 160, 120, "I420", "ball"),
        testsrc(3, 160, 120, "Y444", "ball")
    );
    let out = run(&desc);
    assert!(
        out.errors
            .first()
            .is_some_and(|e| e.contains("videoconvert") && e.contains("Y444")),
        "{out:?}"
    );
}

/// A reference and a distorted input in different memory layouts of the
/// same picture type (I420 beside NV12 or YV12, as a lossless master read
/// as I420 beside a decoder's NV12) score exactly as both in I420, chroma
/// metrics included; so do P010 and P012 beside I420_10LE and I420_12LE;
/// 8 bits beside 10 is
/// the mismatch error.
#[test]
fn comparable_formats_score_as_one_format() {
    // The reference in `ref_fmt`; the distorted, a changed copy, in `dist_fmt`.
    let pair = |ref_fmt: &str, dist_fmt: &str| {
        format!(
            "{} ! tee name=t t. ! queue ! v.ref_sink \
             t. ! queue ! videoconvert ! videobalance saturation=0.8 brightness=0.04 ! videoconvert dither=none ! video/x-raw,format={dist_fmt} ! v.dist_sink \
             vmafhip name=v frame-message=true backend=cpu psnr=true features=ciede ! fakesink",
            testsrc(4, 160, 120, ref_fmt, "ball")
        )
    };
    // NV12 and YV12 beside I420; 10- and 12-bit decoders' P010 and P012
    // beside I420_10LE and I420_12LE.
    for (planar, others) in [
        ("I420", &["NV12", "YV12"][..]),
        ("I420_10LE", &["P010_10LE"][..]),
        ("I420_12LE", &["P012_LE"][..]),
    ] {
        let want = run_pipeline_checked(&pair(planar, planar));
        for fmt in others {
            let mixed = run_pipeline_checked(&pair(planar, fmt));
            assert_eq!(mixed.frames.len(), 4, "{fmt}");
            for (a, b) in want.frames.iter().zip(&mixed.frames) {
                assert_eq!(a.psnr_y, b.psnr_y, "{fmt}");
                for name in ["integer_adm2", "psnr_cb", "psnr_cr", "ciede2000"] {
                    assert_eq!(a.feature(name), b.feature(name), "{fmt} {name}");
                    assert!(a.feature(name).is_some(), "{name}");
                }
                assert_eq!(a.score, b.score, "{fmt}");
            }
        }
    }
    let desc = format!(
        "{} ! v.ref_sink {} ! v.dist_sink vmafhip name=v backend=cpu ! fakesink",
        testsrc(3, 160, 120, "I420", "ball"),
        testsrc(3, 160, 120, "I420_10LE", "ball")
    );
    let out = run(&desc);
    assert!(
        out.errors
            .first()
            .is_some_and(|e| e.contains("bit depth") && e.contains("I420_10LE")),
        "{out:?}"
    );
}

#[test]
fn broken_model_file_is_a_clear_error_at_start() {
    let path = std::env::temp_dir().join("vmafhip-broken-model.json");
    let good = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/vmaf_v0.6.1.json"
    ))
    .unwrap();
    std::fs::write(&path, &good[..good.len() / 2]).unwrap();
    let desc = format!(
        "{} ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! v.dist_sink vmafhip name=v backend=cpu model-filename={} ! fakesink",
        testsrc(3, 64, 48, "I420", "ball"),
        path.display()
    );
    let pipeline = launch(&desc);
    assert!(pipeline.set_state(gst::State::Playing).is_err());
    let out = collect(&pipeline.bus().unwrap());
    pipeline.set_state(gst::State::Null).unwrap();
    assert!(
        out.errors
            .first()
            .is_some_and(|e| e.contains("invalid JSON") && e.contains("vmafhip-broken-model.json")),
        "{out:?}"
    );
}

#[test]
fn dist_ending_first_scores_what_both_had() {
    let desc = format!(
        "{} ! v.ref_sink {} ! v.dist_sink vmafhip name=v frame-message=true backend=cpu ! fakesink",
        testsrc(8, 96, 64, "I420", "ball"),
        testsrc(5, 96, 64, "I420", "ball")
    );
    let out = run_pipeline_checked(&desc);
    assert_eq!(out.frames.len(), 5, "{out:?}");
    assert_eq!(out.pooled.first().map(|p| p.frames), Some(5));
    assert!(
        out.warnings
            .iter()
            .any(|w| w.contains("dist_sink has no frame")),
        "{:?}",
        out.warnings
    );
}

#[test]
fn ten_and_twelve_bit_and_odd_sizes_and_subsample_and_threads() {
    for (fmt, w, h) in [
        ("I420_10LE", 96, 64),
        ("I422_12LE", 80, 72),
        ("Y444", 67, 45),
        ("I420", 75, 53),
        ("GRAY8", 64, 40),
    ] {
        // The distorted side is the same scene with another ball colour.
        let caps = format!("video/x-raw,width={w},height={h},format={fmt},framerate=30/1");
        let base = format!(
            "videotestsrc num-buffers=4 pattern=ball ! {caps} ! v.ref_sink \
             videotestsrc num-buffers=4 pattern=ball foreground-color=0xffc0c0c0 ! {caps} ! v.dist_sink \
             vmafhip name=v frame-message=true backend=cpu"
        );
        let out = run_pipeline_checked(&format!("{base} ! fakesink"));
        assert_eq!(out.frames.len(), 4, "{fmt} {w}x{h}: {out:?}");
        assert!(
            out.frames
                .iter()
                .all(|f| f.score.is_finite() && (0.0..=100.0).contains(&f.score))
        );
        let threaded = run_pipeline_checked(&format!("{base} threads=3 ! fakesink"));
        assert_eq!(
            out.frames.iter().map(|f| f.score).collect::<Vec<_>>(),
            threaded.frames.iter().map(|f| f.score).collect::<Vec<_>>()
        );
        let sub = run_pipeline_checked(&format!("{base} subsample=2 ! fakesink"));
        assert_eq!(
            sub.frames.iter().map(|f| f.index).collect::<Vec<_>>(),
            [0, 2]
        );
        assert_eq!(sub.frames[1].score, out.frames[2].score);
    }
}

#[test]
fn seek_reports_the_segment_and_restarts() {
    init();
    let desc = format!(
        "{} ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! v.dist_sink vmafhip name=v frame-message=true backend=cpu ! fakesink sync=false",
        testsrc(1000, 96, 64, "I420", "ball")
    );
    let pipeline = launch(&desc);
    let bus = pipeline.bus().unwrap();
    pipeline.set_state(gst::State::Paused).unwrap();
    pipeline.state(gst::ClockTime::from_seconds(10)).0.unwrap();
    pipeline
        .seek(
            1.0,
            gst::SeekFlags::FLUSH | gst::SeekFlags::ACCURATE,
            gst::SeekType::Set,
            gst::ClockTime::from_mseconds(500),
            gst::SeekType::Set,
            gst::ClockTime::from_mseconds(1000),
        )
        .unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let out = collect(&bus);
    pipeline.set_state(gst::State::Null).unwrap();
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    // After the seek the stream restarts at frame index 0 and ends with a pooled message.
    let last = out.pooled.last().expect("pooled at EOS");
    assert_eq!(last.frames, 15, "{last:?}");
    let after: Vec<_> = out
        .frames
        .iter()
        .filter(|f| f.timestamp >= Some(gst::ClockTime::from_mseconds(500)))
        .collect();
    assert!(
        after.first().is_some_and(|f| f.index == 0),
        "{:?}",
        out.frames
            .iter()
            .map(|f| (f.index, f.timestamp))
            .collect::<Vec<_>>()
    );
}

#[test]
fn state_changes_restart_cleanly() {
    init();
    let desc = format!(
        "{} ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! v.dist_sink vmafhip name=v frame-message=true backend=cpu ! fakesink",
        testsrc(5, 64, 48, "I420", "ball")
    );
    let pipeline = launch(&desc);
    for _ in 0..3 {
        pipeline.set_state(gst::State::Playing).unwrap();
        let out = collect(&pipeline.bus().unwrap());
        assert_eq!(out.frames.len(), 5);
        assert_eq!(out.pooled.len(), 1);
        pipeline.set_state(gst::State::Null).unwrap();
    }
}

#[test]
fn backend_auto_falls_back_and_hip_errors_without_a_gpu() {
    let base = format!(
        "{} ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! v.dist_sink vmafhip name=v frame-message=true",
        testsrc(2, 64, 48, "I420", "ball")
    );
    let gpu = gstvmafhip::hip::Runtime::load(gstvmafhip::hip::Vendor::Auto)
        .and_then(|rt| gstvmafhip::hip::Device::open(&rt, 0))
        .is_ok();
    let out = run(&format!("{base} backend=auto ! fakesink"));
    assert!(out.errors.is_empty());
    if gpu {
        // With a GPU, auto uses it and the messages say so.
        assert!(
            out.frames.iter().all(|f| f.backend.starts_with("hip:")),
            "{out:?}"
        );
        return;
    }
    assert!(
        out.frames.iter().all(|f| f.backend.starts_with("cpu")),
        "{out:?}"
    );
    assert!(
        out.warnings.iter().any(|w| w.contains("on the CPU")),
        "{:?}",
        out.warnings
    );
    let p = launch(&format!("{base} backend=hip ! fakesink"));
    assert!(p.set_state(gst::State::Playing).is_err());
    let out = collect(&p.bus().unwrap());
    p.set_state(gst::State::Null).unwrap();
    // The error names what was looked for.
    assert!(
        out.errors.first().is_some_and(|e| e.contains("backend=hip")
            && e.contains("libamdhip64")
            && e.contains("libcuda")),
        "{out:?}"
    );
}

#[test]
fn harness_one_message_per_frame_including_the_last() {
    init();
    let element = gst::ElementFactory::make("vmafhip")
        .property_from_str("backend", "cpu")
        .property("frame-message", true)
        .build()
        .unwrap();
    let mut h = gst_check::Harness::with_element(&element, None, Some("src"));
    let bus = gst::Bus::new();
    element.set_bus(Some(&bus));
    let mut reference = gst_check::Harness::with_element(&element, Some("ref_sink"), None);
    let mut distorted = gst_check::Harness::with_element(&element, Some("dist_sink"), None);
    h.play();
    let caps = "video/x-raw,format=GRAY8,width=64,height=48,framerate=25/1";
    reference.set_src_caps_str(caps);
    distorted.set_src_caps_str(caps);
    for i in 0..3u64 {
        for side in [&mut reference, &mut distorted] {
            let mut buf = gst::Buffer::from_mut_slice(textured_luma(i as u32, 64, 48, 1));
            let b = buf.get_mut().unwrap();
            b.set_pts(gst::ClockTime::from_mseconds(40 * i));
            b.set_duration(gst::ClockTime::from_mseconds(40));
            side.push(buf).unwrap();
        }
    }
    reference.push_event(gst::event::Eos::new());
    distorted.push_event(gst::event::Eos::new());
    let mut frames = Vec::new();
    let mut pooled = None;
    while pooled.is_none() {
        let msg = bus
            .timed_pop_filtered(
                gst::ClockTime::from_seconds(30),
                &[gst::MessageType::Element],
            )
            .expect("messages");
        let s = msg.structure().unwrap();
        if let Ok(f) = VmafFrameMessage::try_from(s) {
            frames.push(f);
        } else {
            pooled = VmafPooledMessage::try_from(s).ok();
        }
    }
    assert_eq!(
        frames.iter().map(|f| f.index).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert!(
        frames
            .iter()
            .all(|f| (f.feature("integer_adm2").unwrap() - 1.0).abs() < 1e-3)
    );
    assert_eq!(pooled.unwrap().frames, 3);
    // The reference comes out unchanged.
    let out = h.pull().unwrap();
    assert_eq!(
        out.map_readable().unwrap().as_slice(),
        textured_luma(0, 64, 48, 1).as_slice()
    );
    let _ = Duration::from_secs(0);
}

/// A bootstrap collection (model "0" plus perturbed copies) gives interval fields.
#[test]
fn conf_interval_with_a_model_collection() {
    let good: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/models/vmaf_v0.6.1.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let mut coll = serde_json::Map::new();
    for i in 0..5 {
        let mut m = good.clone();
        let svm = m["model_dict"]["model"].as_str().unwrap().replace(
            "rho -1.33133",
            &format!("rho {}", -1.33133 + 0.05 * (i as f64 - 2.0)),
        );
        m["model_dict"]["model"] = svm.into();
        coll.insert(i.to_string(), m);
    }
    let path = std::env::temp_dir().join("vmafhip-collection.json");
    std::fs::write(&path, serde_json::Value::Object(coll).to_string()).unwrap();
    let desc = format!(
        "{} ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! videobalance brightness=0.04 ! v.dist_sink \
         vmafhip name=v frame-message=true backend=cpu conf-interval=true model-filename={} ! fakesink",
        testsrc(3, 96, 64, "I420", "ball"),
        path.display()
    );
    let out = run_pipeline_checked(&desc);
    assert_eq!(out.frames.len(), 3);
    for f in &out.frames {
        let (lo, hi, bag) = (
            f.feature("vmaf_ci_p95_lo").unwrap(),
            f.feature("vmaf_ci_p95_hi").unwrap(),
            f.feature("vmaf_bagging").unwrap(),
        );
        assert!(lo < bag && bag < hi, "{lo} {bag} {hi}");
        assert!(f.feature("vmaf_stddev").unwrap() > 0.0);
    }
    // The built-in collection needs no file.
    let builtin = desc.replace(&path.display().to_string(), "vmaf_b_v0.6.3");
    let out = run_pipeline_checked(&builtin);
    assert_eq!(out.frames.len(), 3);
    for f in &out.frames {
        let (lo, hi) = (
            f.feature("vmaf_ci_p95_lo").unwrap(),
            f.feature("vmaf_ci_p95_hi").unwrap(),
        );
        assert!(lo < hi, "{lo} {hi}");
        assert!(f.feature("vmaf_0020").is_some());
    }
    // A single model with conf-interval=true is refused at start.
    let single = desc.replace(&path.display().to_string(), "vmaf_v0.6.1");
    let out = run(&single);
    assert!(
        out.errors
            .first()
            .is_some_and(|e| e.contains("conf-interval needs a bootstrap model collection")),
        "{out:?}"
    );
}

/// What reached vmafhip's sink pads from two videotestsrcs.
#[derive(Debug, Default)]
struct Delivery {
    /// ALLOCATION queries answered, and the pinned pools offered in them.
    allocation_queries: usize,
    pinned_pools_offered: usize,
    pools: Vec<gstvmafhip::PinnedPool>,
    /// Buffers that arrived on the sink pads, and how many lay in pinned memory.
    buffers: usize,
    pinned_buffers: usize,
    out: Outcome,
}

/// videotestsrc into each sink pad (no tee, so each source asks vmafhip
/// for its allocation), watching the ALLOCATION answers and the buffers.
fn deliver(backend: &str, fmt: &str, w: u32, h: u32, frames: u32) -> Delivery {
    use std::sync::{Arc, Mutex};
    init();
    let desc = format!(
        "{} ! v.ref_sink \
         videotestsrc num-buffers={frames} pattern=ball foreground-color=0xffc0c0c0 ! video/x-raw,width={w},height={h},format={fmt},framerate=30/1 ! v.dist_sink \
         vmafhip name=v frame-message=true psnr=true backend={backend} ! fakesink",
        testsrc(frames, w, h, fmt, "ball")
    );
    let pipeline = launch(&desc);
    let seen = Arc::new(Mutex::new(Delivery::default()));
    let v = pipeline.by_name("v").unwrap();
    for name in ["ref_sink", "dist_sink"] {
        let sink = v.static_pad(name).unwrap();
        let src = sink.peer().unwrap();
        let s = seen.clone();
        // After the query is answered (PULL), see what vmafhip offered.
        src.add_probe(
            gst::PadProbeType::QUERY_DOWNSTREAM | gst::PadProbeType::PULL,
            move |_, info| {
                if let Some(gst::QueryView::Allocation(q)) = info.query().map(|q| q.view()) {
                    let pinned: Vec<gstvmafhip::PinnedPool> = q
                        .allocation_pools()
                        .filter_map(|(pool, ..)| pool?.downcast::<gstvmafhip::PinnedPool>().ok())
                        .collect();
                    let mut s = s.lock().unwrap();
                    s.allocation_queries += 1;
                    s.pinned_pools_offered += pinned.len();
                    s.pools.extend(pinned);
                }
                gst::PadProbeReturn::Ok
            },
        );
        let s = seen.clone();
        sink.add_probe(gst::PadProbeType::BUFFER, move |_, info| {
            if let Some(buffer) = info.buffer() {
                let map = buffer.map_readable().unwrap();
                let pinned = gstvmafhip::hip::pinned_owner(map.as_slice()).is_some();
                let mut s = s.lock().unwrap();
                s.buffers += 1;
                s.pinned_buffers += pinned as usize;
            }
            gst::PadProbeReturn::Ok
        });
    }
    let bus = pipeline.bus().unwrap();
    let _ = pipeline.set_state(gst::State::Playing);
    let out = collect(&bus);
    pipeline.set_state(gst::State::Null).unwrap();
    let mut d = std::mem::take(&mut *seen.lock().unwrap());
    d.out = out;
    d
}

#[test]
fn sink_pads_offer_pinned_buffers_on_a_gpu() {
    let gpu = gstvmafhip::hip::Runtime::load(gstvmafhip::hip::Vendor::Auto)
        .and_then(|rt| gstvmafhip::hip::Device::open(&rt, 0));
    if let Err(e) = &gpu {
        assert!(
            std::env::var_os("VMAFHIP_REQUIRE_GPU").is_none(),
            "VMAFHIP_REQUIRE_GPU=1 but no HIP device: {e}"
        );
    }
    const FRAMES: usize = 40;
    for (fmt, w, h) in [("I420", 320, 240), ("I420_10LE", 176, 144)] {
        let cpu = deliver("cpu", fmt, w, h, FRAMES as u32);
        assert!(cpu.out.errors.is_empty(), "{:?}", cpu.out.errors);
        assert_eq!(cpu.out.frames.len(), FRAMES, "{fmt}");
        // On the CPU the element leaves allocation to upstream.
        assert!(cpu.allocation_queries >= 2, "{fmt}: {cpu:?}");
        assert_eq!(cpu.pinned_pools_offered, 0, "{fmt}: {cpu:?}");
        assert_eq!(cpu.pinned_buffers, 0, "{fmt}: {cpu:?}");
        if gpu.is_err() {
            continue;
        }
        let hip = deliver("hip", fmt, w, h, FRAMES as u32);
        assert!(hip.out.errors.is_empty(), "{:?}", hip.out.errors);
        // Both sources took the pinned pool and every frame arrived in it.
        assert!(hip.allocation_queries >= 2, "{fmt}: {hip:?}");
        assert!(hip.pinned_pools_offered >= 2, "{fmt}: {hip:?}");
        assert_eq!(hip.buffers, 2 * FRAMES, "{fmt}");
        assert_eq!(hip.pinned_buffers, 2 * FRAMES, "{fmt}: {hip:?}");
        // The pools recycle their buffers (the passed-through reference goes
        // back intact) instead of pinning new memory for every frame.
        let allocated: Vec<usize> = hip.pools.iter().map(|p| p.allocated()).collect();
        assert!(
            allocated.iter().all(|&n| n > 0 && n < FRAMES / 2),
            "{fmt}: pinned buffers allocated per pool {allocated:?} for {FRAMES} frames"
        );
        // Uploaded in place, the scores are the CPU engine's, bit for bit.
        assert_eq!(hip.out.frames.len(), FRAMES, "{fmt}");
        for (g, c) in hip.out.frames.iter().zip(&cpu.out.frames) {
            assert!(g.backend.starts_with("hip:"), "{}", g.backend);
            assert_eq!(
                g.score.to_bits(),
                c.score.to_bits(),
                "{fmt} frame {}",
                g.index
            );
            assert_eq!(g.psnr_y.map(f64::to_bits), c.psnr_y.map(f64::to_bits));
            assert_eq!(g.features.len(), c.features.len());
            for ((gn, gv), (cn, cv)) in g.features.iter().zip(&c.features) {
                assert_eq!(
                    (gn, gv.to_bits()),
                    (cn, cv.to_bits()),
                    "{fmt} frame {}",
                    g.index
                );
            }
        }
        eprintln!(
            "{fmt} {w}x{h}: {} of {} input buffers pinned, pinned buffers allocated per pool {allocated:?}, hip == cpu on {} frames",
            hip.pinned_buffers,
            hip.buffers,
            hip.out.frames.len()
        );
    }
}

/// The results file is written as frames become final: while the stream
/// runs it already holds every frame whose message went out (a crash loses
/// none), and it is complete at EOS, in each of the four layouts. The file
/// is read in the bus's sync handler, in the thread posting frame 10's
/// message, so the element cannot have gone on to the end meanwhile, however
/// slowly the test runs.
#[test]
fn results_file_streams_frames_and_completes_at_eos() {
    init();
    for fmt in ["json", "xml", "csv", "jsonl"] {
        let path =
            std::env::temp_dir().join(format!("vmafhip-stream-{}.{fmt}", std::process::id()));
        let desc = format!(
            "{} ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! videobalance brightness=0.05 ! v.dist_sink \
             vmafhip name=v frame-message=true backend=cpu results-filename={} results-format={fmt} ! fakesink sync=false",
            testsrc(40, 96, 64, "I420", "ball"),
            path.display()
        );
        let pipeline = launch(&desc);
        let bus = pipeline.bus().unwrap();
        // The file as it stood when frame 10's message was posted.
        let midway: Arc<Mutex<Option<String>>> = Arc::default();
        let (at_10, file) = (midway.clone(), path.clone());
        bus.set_sync_handler(move |_, msg| {
            let tenth = msg
                .structure()
                .and_then(|s| VmafFrameMessage::try_from(s).ok())
                .is_some_and(|f| f.index == 10);
            if tenth {
                *at_10.lock().unwrap() = std::fs::read_to_string(&file).ok();
            }
            gst::BusSyncReply::Pass
        });
        pipeline.set_state(gst::State::Playing).unwrap();
        let mut seen = 0;
        while let Some(msg) = bus.timed_pop(gst::ClockTime::from_seconds(60)) {
            match msg.view() {
                gst::MessageView::Element(e)
                    if e.structure()
                        .and_then(|s| VmafFrameMessage::try_from(s).ok())
                        .is_some() =>
                {
                    seen += 1;
                }
                gst::MessageView::Error(e) => panic!("{}", e.error()),
                gst::MessageView::Eos(_) => break,
                _ => {}
            }
        }
        let text = midway.lock().unwrap().take().expect("frame 10's message");
        // Written before its message was posted, and not finished then.
        let marker = match fmt {
            "json" => "\"frameNum\": 10,".to_string(),
            "xml" => "<frame frameNum=\"10\" ".to_string(),
            "jsonl" => "\n{\"frameNum\": 10,".to_string(),
            _ => "\n10,".to_string(),
        };
        assert!(
            text.contains(&marker),
            "{fmt}: frame 10 not in the file yet"
        );
        assert!(
            !text.contains("pooled_metrics"),
            "{fmt}: finished too early"
        );
        pipeline.set_state(gst::State::Null).unwrap();
        assert_eq!(seen, 40, "{fmt}: {seen} frames");
        let text = std::fs::read_to_string(&path).unwrap();
        match fmt {
            "json" => {
                let j: serde_json::Value = serde_json::from_str(&text).unwrap();
                assert_eq!(j["frames"].as_array().unwrap().len(), 40);
                assert!(j["pooled_metrics"]["vmaf"]["mean"].is_number());
            }
            "xml" => {
                assert_eq!(text.matches("<frame frameNum=").count(), 40);
                assert!(text.trim_end().ends_with("</VMAF>"));
            }
            "jsonl" => {
                let lines: Vec<serde_json::Value> = text
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect();
                assert_eq!(lines.len(), 42, "header, 40 frames, pooled");
                assert_eq!(lines[0]["width"], 96);
                assert!(
                    lines[1..41]
                        .iter()
                        .all(|f| f["metrics"]["vmaf"].is_number())
                );
                assert!(lines[41]["pooled_metrics"]["vmaf"]["mean"].is_number());
            }
            _ => assert_eq!(text.lines().count(), 41, "{text}"),
        }
        let _ = std::fs::remove_file(&path);
    }
}

/// An unwritable results file is an error at start, before any frame.
#[test]
fn unwritable_results_file_fails_at_start() {
    let desc = format!(
        "{} ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! v.dist_sink \
         vmafhip name=v frame-message=true backend=cpu results-filename=/nonexistent-dir/vmaf.json ! fakesink",
        testsrc(5, 96, 64, "I420", "ball")
    );
    let out = run(&desc);
    assert!(out.frames.is_empty(), "{out:?}");
    assert!(
        out.errors
            .first()
            .is_some_and(|e| e
                .starts_with("results-filename \"/nonexistent-dir/vmaf.json\" cannot be written")),
        "{out:?}"
    );
}

/// A resolution change on both pads (an adaptive-bitrate switch) ends the
/// segment with a `caps-changed` pooled message and the stream goes on:
/// indices keep counting, and the EOS message covers every frame.
#[test]
fn caps_change_on_both_pads_keeps_going() {
    let desc = "concat name=c1 ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! v.dist_sink \
        videotestsrc num-buffers=5 ! video/x-raw,width=320,height=240,format=I420,framerate=25/1 ! c1. \
        videotestsrc num-buffers=5 ! video/x-raw,width=640,height=480,format=I420,framerate=25/1 ! c1. \
        vmafhip name=v backend=cpu frame-message=true ! fakesink";
    let out = run_pipeline_checked(desc);
    assert_eq!(
        out.frames.iter().map(|f| f.index).collect::<Vec<_>>(),
        (0..10).collect::<Vec<u64>>()
    );
    assert_eq!(out.pooled.len(), 2, "{:?}", out.pooled);
    assert_eq!(out.pooled[0].reason, "caps-changed");
    assert_eq!(out.pooled[0].frames, 5);
    assert_eq!(out.pooled[1].reason, "eos");
    assert_eq!(out.pooled[1].frames, 10);
    let mean = out.frames.iter().map(|f| f.score).sum::<f64>() / 10.0;
    assert!((out.pooled[1].mean - mean).abs() < 1e-9);
    // Motion restarts at the boundary, as at a stream's start.
    assert_eq!(out.frames[5].feature("integer_motion2"), Some(0.0));
}

/// A change on one pad only, which the other never follows, is the caps
/// mismatch error naming both caps.
#[test]
fn caps_change_on_one_pad_is_the_mismatch_error() {
    let desc = "concat name=c1 ! queue ! v.ref_sink \
        videotestsrc num-buffers=5 ! video/x-raw,width=320,height=240,format=I420,framerate=25/1 ! c1. \
        videotestsrc num-buffers=5 ! video/x-raw,width=640,height=480,format=I420,framerate=25/1 ! c1. \
        videotestsrc num-buffers=10 ! video/x-raw,width=320,height=240,format=I420,framerate=25/1 ! queue ! v.dist_sink \
        vmafhip name=v backend=cpu frame-message=true ! fakesink";
    let out = run(desc);
    assert!(
        out.errors
            .first()
            .is_some_and(|e| e.contains("ref_sink caps")
                && e.contains("640")
                && e.contains("dist_sink caps")
                && e.contains("videoscale")),
        "{out:?}"
    );
}

/// A property set while PLAYING is kept for the next start, with a warning
/// saying so; the running measurement is unchanged.
#[test]
fn property_change_while_playing_warns_and_waits_for_the_next_start() {
    init();
    let desc = format!(
        "{} ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! v.dist_sink \
         vmafhip name=v frame-message=true backend=cpu ! fakesink",
        testsrc(30, 96, 64, "I420", "ball")
    );
    let pipeline = launch(&desc);
    let v = pipeline.by_name("v").unwrap();
    let bus = pipeline.bus().unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let mut warned = false;
    let mut frames = 0;
    while let Some(msg) = bus.timed_pop(gst::ClockTime::from_seconds(60)) {
        match msg.view() {
            gst::MessageView::Element(e)
                if e.structure()
                    .and_then(|s| VmafFrameMessage::try_from(s).ok())
                    .is_some() =>
            {
                frames += 1;
                if frames == 3 {
                    v.set_property("psnr", true);
                }
            }
            gst::MessageView::Warning(w) => {
                warned |= w
                    .error()
                    .to_string()
                    .contains("property psnr changed while running");
            }
            gst::MessageView::Error(e) => panic!("{}", e.error()),
            gst::MessageView::Eos(_) => break,
            _ => {}
        }
    }
    pipeline.set_state(gst::State::Null).unwrap();
    assert!(warned, "no warning");
    assert_eq!(frames, 30);
    assert!(v.property::<bool>("psnr"), "kept for the next start");
}

/// Sixteen elements in one process (one pipeline) give every element the
/// numbers it gives alone. `VMAFHIP_ELEMENT_BACKEND=hip` runs the same on
/// one GPU (device runs).
#[test]
fn sixteen_elements_at_once_equal_one_at_a_time() {
    let backend = std::env::var("VMAFHIP_ELEMENT_BACKEND").unwrap_or_else(|_| "cpu".into());
    let branch = |k: u32| {
        let (w, h) = (96 + 8 * k, 64 + 4 * k);
        format!(
            "videotestsrc num-buffers=12 pattern=ball ! video/x-raw,format=I420,width={w},height={h},framerate=30/1 \
             ! tee name=t{k} t{k}. ! queue ! v{k}.ref_sink \
             t{k}. ! queue ! videoscale ! video/x-raw,width={},height={} ! videoscale ! video/x-raw,width={w},height={h} ! v{k}.dist_sink \
             vmafhip name=v{k} backend={backend} threads=1 ! fakesink",
            w / 2,
            h / 2
        )
    };
    let alone: Vec<f64> = (0..16)
        .map(|k| run_pipeline_checked(&branch(k)).pooled[0].mean)
        .collect();
    let all = (0..16).map(branch).collect::<Vec<_>>().join(" ");
    let out = run_pipeline_checked(&all);
    assert_eq!(out.pooled.len(), 16);
    let mut together: Vec<f64> = out.pooled.iter().map(|p| p.mean).collect();
    let mut want = alone.clone();
    together.sort_by(f64::total_cmp);
    want.sort_by(f64::total_cmp);
    assert_eq!(together, want, "16 at once differ from one at a time");
}

/// Frames with a side under 33 are refused with the size and the minimum.
#[test]
fn frames_under_33x33_are_a_clear_error() {
    for (w, h) in [(1, 1), (2, 2), (16, 16), (32, 32), (32, 64), (64, 32)] {
        let out = run(&format!(
            "{} ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! v.dist_sink vmafhip name=v backend=cpu ! fakesink",
            testsrc(3, w, h, "I420", "ball")
        ));
        assert_eq!(out.errors.len(), 1, "{w}x{h}: {out:?}");
        let e = &out.errors[0];
        assert!(
            e.contains(&format!("{w}x{h}")) && e.contains("needs at least 33x33"),
            "{w}x{h}: {e}"
        );
        assert!(
            out.pooled.is_empty(),
            "{w}x{h}: no score for refused frames"
        );
    }
}

/// `report-filename`: the HTML report is written at EOS with the frames'
/// curve, the extra features asked for, and the inputs' names from the URI
/// query; an unwritable path fails at start; a bad `features` entry is an
/// error naming it.
#[test]
fn report_file_at_eos_with_extra_features() {
    init();
    let golden = golden_runs()
        .into_iter()
        .find(|r| r.pair == "coffee_576x324_420p8_12f_crf35" && r.model_name() == "vmaf_v0.6.1")
        .unwrap();
    let (r, d) = golden.yuv_paths();
    let path = std::env::temp_dir().join("vmafhip-element-report.html");
    let _ = std::fs::remove_file(&path);
    let src = |p: &std::path::Path| {
        format!(
            "filesrc location={} ! rawvideoparse width=576 height=324 format=i420 framerate=25/1",
            p.display()
        )
    };
    let desc = format!(
        "{} ! v.ref_sink {} ! v.dist_sink vmafhip name=v backend=cpu features=cambi report-filename={} ! fakesink",
        src(&r),
        src(&d),
        path.display()
    );
    let out = run_pipeline_checked(&desc);
    assert_eq!(out.pooled.len(), 1);
    let page = std::fs::read_to_string(&path).unwrap();
    assert!(page.contains("data-series=\"vmaf\"") && page.contains("data-metric=\"cambi\""));
    assert!(
        page.contains(&format!("{}", r.display())),
        "reference path missing"
    );
    assert!(page.contains(&format!("{:.3}", out.pooled[0].mean)));
    assert!(page.contains("<td>12</td>") || page.contains(">12</div>"));
    // Unwritable: an error at start, naming the property and the path.
    let out = run(&desc.replace(path.to_str().unwrap(), "/nonexistent-dir/r.html"));
    assert!(
        out.errors.first().is_some_and(
            |e| e.starts_with("report-filename \"/nonexistent-dir/r.html\" cannot be written")
        ),
        "{out:?}"
    );
    // An unknown extractor, or an option its table lacks: an error at
    // start naming it.
    for (features, said) in [
        ("cambi,sharpness", "features: no feature \"sharpness\""),
        (
            "cambi=no_such=1",
            "features: cambi: unknown option \"no_such\"",
        ),
    ] {
        let out = run(&desc.replace("features=cambi", &format!("features={features}")));
        assert!(
            out.errors.first().is_some_and(|e| e.contains(said)),
            "{features}: {out:?}"
        );
    }
}

/// A byte-format segment (a file read without a parser) is an error naming
/// the pad, not an abort inside GstVideoAggregator.
#[test]
fn a_byte_segment_is_an_error_not_a_crash() {
    let desc = format!(
        "filesrc location={} ! v.ref_sink {} ! v.dist_sink vmafhip name=v backend=cpu ! fakesink",
        file!(),
        testsrc(3, 96, 64, "I420", "ball")
    );
    let out = run(&desc);
    assert!(
        out.errors
            .first()
            .is_some_and(|e| e.contains("ref_sink: a segment in Bytes format")),
        "{out:?}"
    );
}

/// Which memories the sink pads offer: GPU memory (CUDA, HIP) listed first
/// before start unless `backend=cpu` (so `cudaupload ! vmafhip` links), and
/// after a start on the CPU only system memory; GPU caps forced on a CPU
/// engine are refused with an error naming why.
#[test]
fn sink_caps_offer_gpu_memory_only_where_the_engine_can_take_it() {
    init();
    let features = |caps: &gst::Caps| -> Vec<String> {
        caps.iter_with_features()
            .map(|(_, f)| f.to_string())
            .collect()
    };
    let cuda = gst::Caps::builder("video/x-raw")
        .features(["memory:CUDAMemory"])
        .field("format", "I420")
        .field("width", 64i32)
        .field("height", 48i32)
        .field("framerate", gst::Fraction::new(25, 1))
        .build();
    // Before start: the backend decides.
    let auto = gst::ElementFactory::make("vmafhip").build().unwrap();
    let f = features(&auto.static_pad("ref_sink").unwrap().query_caps(None));
    assert_eq!(
        f.first().map(String::as_str),
        Some("memory:CUDAMemory"),
        "{f:?}"
    );
    assert!(f.iter().any(|x| x == "memory:HIPMemory"), "{f:?}");
    assert!(f.iter().any(|x| x == "memory:SystemMemory"), "{f:?}");
    let cpu = gst::ElementFactory::make("vmafhip")
        .property_from_str("backend", "cpu")
        .build()
        .unwrap();
    let pad = cpu.static_pad("dist_sink").unwrap();
    let f = features(&pad.query_caps(None));
    assert!(f.iter().all(|x| x == "memory:SystemMemory"), "{f:?}");
    assert!(!pad.query_accept_caps(&cuda));
    // Started on the CPU: system memory only, and forced CUDA caps are an error.
    let bin = gst::Pipeline::new();
    bin.add(&cpu).unwrap();
    let bus = bin.bus().unwrap();
    bin.set_state(gst::State::Paused).unwrap();
    let f = features(&pad.query_caps(None));
    assert!(f.iter().all(|x| x == "memory:SystemMemory"), "{f:?}");
    assert!(!pad.query_accept_caps(&cuda));
    let err = bus
        .timed_pop_filtered(gst::ClockTime::from_seconds(5), &[gst::MessageType::Error])
        .expect("an error message");
    let gst::MessageView::Error(e) = err.view() else {
        unreachable!()
    };
    let text = e.error().to_string();
    assert!(
        text.contains("memory:CUDAMemory cannot be taken") && text.contains("CPU"),
        "{text}"
    );
    bin.set_state(gst::State::Null).unwrap();
}
