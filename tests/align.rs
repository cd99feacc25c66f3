//! `--align` and the element's `align`: the frame offset between REF and
//! DIST found from their first seconds, then dropped and duplicated frames
//! followed; the numbers equal scoring the pair cut to match by hand.
//! Natural content: the golden clips (a coffee cup, an astronaut) against
//! their encodes, and a pan across the coffee cup with grain.

mod command_line;
mod common;

use command_line::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const W: usize = 576;
const H: usize = 324;
const FRAME: usize = W * H * 3 / 2;

fn frames(zst: &str) -> Vec<Vec<u8>> {
    common::yuv_bytes(zst)
        .chunks(FRAME)
        .map(<[u8]>::to_vec)
        .collect()
}

fn write(dir: &Path, name: &str, frames: &[Vec<u8>]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, frames.concat()).unwrap();
    p
}

/// The command's JSON and stderr for REF and DIST with `extra` options.
fn score(dir: &Path, r: &Path, d: &Path, extra: &[&str], tag: &str) -> (Value, String) {
    score_sized(dir, (r, d), (W, H), extra, tag)
}

/// The same for raw inputs of `w`x`h`.
fn score_sized(
    dir: &Path,
    (r, d): (&Path, &Path),
    (w, h): (usize, usize),
    extra: &[&str],
    tag: &str,
) -> (Value, String) {
    let out = dir.join(format!("{tag}.json"));
    let (w, h) = (w.to_string(), h.to_string());
    let o = vmafhip()
        .args([
            s(r),
            s(d),
            "-w",
            &w,
            "-h",
            &h,
            "--backend",
            "cpu",
            "--json",
            "-o",
            s(&out),
        ])
        .args(extra)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{tag}: {err}");
    (json_of(&out), err)
}

/// The results' `inputs`, said: the offset, its confidence, the drops,
/// duplicates and frames scored.
fn found(j: &Value) -> &Value {
    let inputs = &j["inputs"];
    println!(
        "offset {} (confidence {}), dropped {}, duplicated {}, scored {}",
        inputs["offset"],
        inputs["offset_confidence"],
        inputs["dropped_frames"],
        inputs["duplicated_frames"],
        vmaf(j).len()
    );
    inputs
}

fn vmaf(j: &Value) -> Vec<f64> {
    j["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["metrics"]["vmaf"].as_f64().unwrap())
        .collect()
}

#[test]
fn offsets_are_found_and_the_aligned_frames_scored_exactly() {
    let dir = scratch_dir("align");
    let reference = frames("coffee_576x324_420p8_12f_ref.yuv.zst");
    let encode = frames("coffee_576x324_420p8_12f_crf23.yuv.zst");
    let other = frames("astronaut_576x324_420p8_12f_crf23.yuv.zst");
    let r = write(&dir, "ref.yuv", &reference);
    let r_from2 = write(&dir, "ref_from2.yuv", &reference[2..]);
    let e = write(&dir, "enc.yuv", &encode);
    let e_from2 = write(&dir, "enc_from2.yuv", &encode[2..]);
    // An encoder's three leading frames of something else.
    let lagging: Vec<_> = other[..3].iter().chain(&encode).cloned().collect();
    let lag3 = write(&dir, "lag3.yuv", &lagging);

    let (plain, _) = score(&dir, &r, &e, &[], "plain");
    let (cut, _) = score(&dir, &r_from2, &e_from2, &[], "cut");
    // (REF, DIST, expected offset, the pair cut by hand)
    let cases = [
        (&r, &lag3, 3, &plain, "encoder delay"),
        (&r_from2, &e, 2, &cut, "reference trimmed"),
        (&r, &e_from2, -2, &cut, "encode trimmed"),
        (&r, &e, 0, &plain, "aligned"),
    ];
    for (i, (rf, df, offset, expected, what)) in cases.into_iter().enumerate() {
        let (got, err) = score(&dir, rf, df, &["--align", "auto"], &format!("auto{i}"));
        let inputs = &got["inputs"];
        let confidence = inputs["offset_confidence"].as_f64().unwrap();
        println!(
            "{what}: offset {} (confidence {confidence:.3})",
            inputs["offset"]
        );
        assert_eq!(inputs["offset"], offset, "{what}: {err}");
        assert!(confidence > 0.5, "{what}: {err}");
        assert!(err.contains("align=auto:"), "{err}");
        assert_eq!(vmaf(&got), vmaf(expected), "{what}");
        assert_eq!(got["pooled_metrics"], expected["pooled_metrics"], "{what}");
    }
    // Given instead of found: the same frames, no confidence.
    let (given, _) = score(&dir, &r, &lag3, &["--align", "3"], "given");
    assert_eq!(vmaf(&given), vmaf(&plain));
    assert_eq!(given["inputs"]["offset"], 3);
    assert!(given["inputs"]["offset_confidence"].is_null());
}

#[test]
fn a_still_picture_gives_a_warning_not_a_guess() {
    let dir = scratch_dir("align_still");
    let reference = frames("coffee_576x324_420p8_12f_ref.yuv.zst");
    let encode = frames("coffee_576x324_420p8_12f_crf23.yuv.zst");
    let r = write(&dir, "still_ref.yuv", &vec![reference[0].clone(); 12]);
    let d = write(&dir, "still_enc.yuv", &vec![encode[0].clone(); 12]);
    let (got, err) = score(&dir, &r, &d, &["--align", "auto"], "still");
    println!("{err}");
    assert!(err.contains("no clear offset"), "{err}");
    assert_eq!(got["inputs"]["offset"], 0);
    assert!(got["inputs"]["offset_confidence"].as_f64().unwrap() < 0.2);
}

#[test]
fn align_and_live_sources_take_one_dist() {
    for (args, says) in [
        (&["r.yuv", "d.yuv", "--align", "soon"][..], "--align soon"),
        (
            &["r.yuv", "d1.yuv", "d2.yuv", "--align", "auto"][..],
            "aligns one DIST",
        ),
        (
            &["r.yuv", "d.yuv", "--duration", "5"][..],
            "--duration goes with live sources",
        ),
        (
            &["udp://127.0.0.1:5600", "d1.yuv", "d2.yuv"][..],
            "one DIST at a time",
        ),
    ] {
        let o = vmafhip().args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
}

/// A live pipeline aligns too: a copy of the reference (offset 0) is
/// paired frame for frame, every frame scored as a file's would be.
#[test]
fn align_auto_in_a_live_pipeline_pairs_every_frame() {
    use gst::prelude::*;
    let run = |live: bool, align: &str| {
        let pipeline = common::pipeline::launch(&format!(
            "videotestsrc is-live={live} num-buffers=60 pattern=ball ! video/x-raw,width=160,height=120,framerate=30/1 \
             ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! v.dist_sink \
             vmafhip name=v backend=cpu frame-message=true align={align} ! fakesink"
        ));
        let bus = pipeline.bus().unwrap();
        pipeline.set_state(gst::State::Playing).unwrap();
        let out = common::pipeline::collect(&bus);
        pipeline.set_state(gst::State::Null).unwrap();
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        out
    };
    let out = run(true, "auto");
    let p = &out.pooled[0];
    println!(
        "live align=auto: offset {} ({:?}), {:?}",
        p.offset, p.offset_confidence, p.pairing
    );
    assert_eq!(p.offset, 0);
    assert_eq!((p.pairing.dropped, p.pairing.duplicated), (0, 0));
    let scores =
        |o: &common::pipeline::Outcome| o.frames.iter().map(|f| f.score).collect::<Vec<_>>();
    assert_eq!(scores(&out), scores(&run(false, "off")));
}

/// The offset is reported where the readers look first: the
/// stream's first frame message, and the pooled message.
#[test]
fn the_first_frame_message_and_the_pooled_message_carry_the_offset() {
    use gst::prelude::*;
    let pipeline = common::pipeline::launch(
        "videotestsrc num-buffers=12 pattern=ball ! video/x-raw,width=160,height=120,framerate=25/1 \
         ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! v.dist_sink \
         vmafhip name=v backend=cpu frame-message=true align=2 ! fakesink",
    );
    let bus = pipeline.bus().unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let out = common::pipeline::collect(&bus);
    pipeline.set_state(gst::State::Null).unwrap();
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    // The distorted copy's first two frames are not scored: 10 pairs.
    assert_eq!(out.frames.len(), 10);
    assert_eq!(out.frames[0].alignment, Some((2, None)));
    assert!(out.frames[1..].iter().all(|f| f.alignment.is_none()));
    let p = &out.pooled[0];
    assert_eq!((p.offset, p.offset_confidence), (2, None));
}

/// The command's JSON and stderr for a 320x180 pair.
fn score_pan(dir: &Path, r: &Path, d: &Path, extra: &[&str], tag: &str) -> (Value, String) {
    score_sized(dir, (r, d), (320, 180), extra, tag)
}

/// An encode that starts with 3 frames of its own, drops reference frames
/// 20, 37 and 38 and shows frame 50 twice: `--align auto` finds the offset
/// and the three events where they are, and scores exactly the pairs a
/// hand-made pre-aligned copy gives.
#[test]
fn drops_and_duplicates_are_found_and_the_shown_frames_scored() {
    let dir = scratch_dir("align_events");
    let (reference, encode) = common::pan(80);
    let (_, other) = common::pan(90);
    let shown: Vec<usize> = (0..20).chain(21..37).chain(39..51).chain(50..80).collect();
    let dist: Vec<Vec<u8>> = other[85..88]
        .iter()
        .cloned()
        .chain(shown.iter().map(|&i| encode[i].clone()))
        .collect();
    let prealigned: Vec<Vec<u8>> = shown.iter().map(|&i| reference[i].clone()).collect();
    let r = write(&dir, "pan_ref.yuv", &reference);
    let d = write(&dir, "pan_dist.yuv", &dist);
    let rp = write(&dir, "pan_ref_prealigned.yuv", &prealigned);
    let dp = write(&dir, "pan_dist_prealigned.yuv", &dist[3..]);
    let (expected, _) = score_pan(&dir, &rp, &dp, &[], "prealigned");
    let (got, err) = score_pan(&dir, &r, &d, &["--align", "auto"], "auto");
    println!("{err}");
    let inputs = found(&got);
    assert_eq!(inputs["offset"], 3, "{err}");
    assert_eq!(inputs["dropped_frames"], 3, "{err}");
    assert_eq!(inputs["duplicated_frames"], 1, "{err}");
    for event in [
        "dropped REF's frame 20",
        "dropped REF's frame 37",
        "dropped REF's frame 38",
        "repeats REF's frame 50",
    ] {
        assert!(err.contains(event), "{event}: {err}");
    }
    assert_eq!(vmaf(&got).len(), shown.len());
    assert_eq!(vmaf(&got), vmaf(&expected));
    assert_eq!(got["pooled_metrics"], expected["pooled_metrics"]);
}

/// An encode whose delay grows by 12 frames at its frame 100 with no gap
/// (its timestamps go on): more than a repeat or a drop, so every later
/// pair would be off. The tracker's check finds the pairs fit frames 12
/// earlier, warns, passes over the 12 distorted frames that show frames
/// already scored, and scores the rest exactly as a copy cut to match.
#[test]
fn a_delay_that_grows_mid_stream_is_followed() {
    let dir = scratch_dir("align_drift");
    let (reference, encode) = common::pan(400);
    let shown: Vec<usize> = (0..100).chain(88..400).collect();
    let dist: Vec<Vec<u8>> = shown.iter().map(|&i| encode[i].clone()).collect();
    let r = write(&dir, "drift_ref.yuv", &reference);
    let d = write(&dir, "drift_dist.yuv", &dist);
    let (got, err) = score_pan(&dir, &r, &d, &["--align", "auto"], "drift");
    println!("{err}");
    let inputs = found(&got);
    assert!(
        err.contains("stopped showing the reference frames they were paired with"),
        "{err}"
    );
    assert!(
        err.contains("it now lags the reference by 12 frames"),
        "{err}"
    );
    assert_eq!(inputs["offset"], 12, "{err}");
    // The pairs scored off before the check put them right: from the
    // distorted frame 100 on, fewer than two seconds' worth.
    let scores = vmaf(&got);
    assert_eq!(scores.len(), 400, "{err}");
    let off: Vec<usize> = (0..scores.len()).filter(|&i| scores[i] < 80.0).collect();
    println!("pairs off (VMAF below 80): {off:?}");
    assert!(off.len() < 50 && off.iter().all(|&i| i >= 100), "{off:?}");
    // The last 150 pairs: distorted frames 262.. against reference frames
    // 250..400, as a copy cut to match scores them (but its first frame,
    // which has no frame before it to measure motion from).
    let rp = write(&dir, "drift_ref_cut.yuv", &reference[250..]);
    let dp = write(&dir, "drift_dist_cut.yuv", &dist[262..]);
    let (expected, _) = score_pan(&dir, &rp, &dp, &[], "drift_cut");
    assert_eq!(scores[scores.len() - 149..], vmaf(&expected)[1..], "{err}");
}

/// The mark that lets the element hold a frame uncopied is its buffer's
/// own: a copy (what a transform or a copying element makes) is unmarked.
#[test]
fn the_holdable_mark_is_its_buffers_own() {
    use gst::meta::CustomMeta;
    common::pipeline::init();
    let mut marked = gst::Buffer::with_size(64).unwrap();
    gstvmafhip::mark_holdable(marked.get_mut().unwrap());
    assert!(CustomMeta::from_buffer(&marked, gstvmafhip::HOLDABLE_META).is_ok());
    let copy = marked.copy_deep().unwrap();
    assert!(CustomMeta::from_buffer(&copy, gstvmafhip::HOLDABLE_META).is_err());
    let unmarked = gst::Buffer::with_size(64).unwrap();
    assert!(CustomMeta::from_buffer(&unmarked, gstvmafhip::HOLDABLE_META).is_err());
}
