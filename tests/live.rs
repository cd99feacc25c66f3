//! Live pipelines: every reference frame is scored once, against the
//! distorted frame with its timestamp where it comes within the wait
//! (`late-frame-wait`), and the pooled message says how each was paired.

mod common;

use common::pipeline::{Outcome, collect, launch};
use gst::prelude::*;
use gstvmafhip::{Pairing, VmafFrameMessage, VmafPooledMessage};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Plays `pipeline` to EOS, collecting the element's messages.
fn play(pipeline: &gst::Pipeline) -> Outcome {
    let bus = pipeline.bus().unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let out = collect(&bus);
    pipeline.set_state(gst::State::Null).unwrap();
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    out
}

/// How the one pooled message says the frames were paired.
fn pairing(out: &Outcome) -> Pairing {
    assert_eq!(out.pooled.len(), 1, "one pooled message");
    let p = &out.pooled[0];
    assert_eq!(p.frames, out.frames.len() as u64);
    p.pairing
}

/// Makes the element named `name` hold its `n`-th buffer (from 0) back
/// for `delay(n)` before passing it on: a slow encoder.
fn slow_down(pipeline: &gst::Pipeline, name: &str, delay: fn(u64) -> Duration) {
    let pad = pipeline.by_name(name).unwrap().static_pad("src").unwrap();
    let n = Arc::new(AtomicU64::new(0));
    pad.add_probe(gst::PadProbeType::BUFFER, move |_, _| {
        std::thread::sleep(delay(n.fetch_add(1, Ordering::Relaxed)));
        gst::PadProbeReturn::Ok
    });
}

/// README's live example as it stands: 300 reference frames, 300 scores,
/// none of them against a missing distorted frame.
#[test]
fn readmes_live_example_scores_every_frame() {
    let desc = "videotestsrc is-live=true num-buffers=300 ! video/x-raw,width=1280,height=720,framerate=30/1 \
        ! tee name=t t. ! queue ! v.ref_sink \
        t. ! queue ! x264enc bitrate=1500 tune=zerolatency speed-preset=ultrafast ! avdec_h264 ! v.dist_sink \
        vmafhip name=v frame-message=true ! fakesink";
    let out = play(&launch(desc));
    let p = pairing(&out);
    println!("README's live example: {} scores, {p:?}", out.frames.len());
    assert_eq!(out.frames.len(), 300, "one score per reference frame");
    assert_eq!(p.fresh + p.repeated, 300);
    assert_eq!(p.unscored, 0);
}

/// A distorted branch whose first frame takes 400 ms and whose 31st is
/// 90 ms late: by default the element waits for both, so every reference
/// frame is scored against its own distorted frame; with
/// `late-frame-wait=0` (no wait) the first ones pass through unscored and
/// the late one's predecessor is scored again.
#[test]
fn a_slow_distorted_branch_is_waited_for() {
    let desc = |wait: &str| {
        format!(
            "videotestsrc is-live=true num-buffers=60 pattern=ball ! video/x-raw,format=I420,width=96,height=64,framerate=30/1 \
             ! tee name=t t. ! queue ! v.ref_sink \
             t. ! queue ! videobalance contrast=0.9 ! identity name=slow ! v.dist_sink \
             vmafhip name=v backend=cpu frame-message=true {wait} ! fakesink"
        )
    };
    let slow = |n| match n {
        0 => Duration::from_millis(400),
        30 => Duration::from_millis(90),
        _ => Duration::ZERO,
    };
    let pipeline = launch(&desc(""));
    slow_down(&pipeline, "slow", slow);
    let out = play(&pipeline);
    let p = pairing(&out);
    println!(
        "late-frame-wait by default: {} scores, {p:?}",
        out.frames.len()
    );
    assert_eq!(out.frames.len(), 60);
    assert_eq!(
        p,
        Pairing {
            fresh: 60,
            repeated: 0,
            unscored: 0,
            distorted: 60,
            distorted_past_end: false,
        }
    );
    // The distorted frames are the reference's own, each scored once.
    let scores: Vec<f64> = out.frames.iter().map(|f| f.score).collect();
    let first = scores[0];
    assert!(scores.iter().all(|s| (s - first).abs() < 5.0), "{scores:?}");

    let pipeline = launch(&desc("late-frame-wait=0"));
    slow_down(&pipeline, "slow", slow);
    let out = play(&pipeline);
    let p = pairing(&out);
    println!("late-frame-wait=0: {} scores, {p:?}", out.frames.len());
    assert!(p.unscored >= 10 && p.repeated + p.unscored >= 11, "{p:?}");
    assert_eq!(p.fresh + p.repeated + p.unscored, 60);
}

/// A live pipeline whose distorted branch stalls (no buffers, no EOS): the
/// aggregator's live timeout keeps the output going, the stalled pad's last
/// frame stands in for the missing ones (what a viewer would see: a frozen
/// picture, scored as such), nothing hangs, and the stream ends with the
/// reference.
#[test]
fn a_stalled_live_pad_does_not_hang() {
    let desc = "videotestsrc is-live=true num-buffers=40 pattern=ball ! video/x-raw,format=I420,width=96,height=64,framerate=50/1 \
        ! tee name=t t. ! queue ! v.ref_sink \
        t. ! queue ! valve name=gate ! v.dist_sink \
        vmafhip name=v backend=cpu frame-message=true latency=20000000 ! fakesink";
    let pipeline = launch(desc);
    let gate = pipeline.by_name("gate").unwrap();
    let bus = pipeline.bus().unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let (mut frames, mut eos) = (0, false);
    let mut scores = Vec::new();
    let mut pooled = None;
    let start = std::time::Instant::now();
    while let Some(msg) = bus.timed_pop(gst::ClockTime::from_seconds(20)) {
        match msg.view() {
            gst::MessageView::Element(e) => {
                if let Some(f) = e
                    .structure()
                    .and_then(|s| VmafFrameMessage::try_from(s).ok())
                {
                    frames += 1;
                    scores.push(f.score);
                    if frames == 10 {
                        gate.set_property("drop", true);
                    }
                    if frames == 30 {
                        gate.set_property("drop", false);
                    }
                } else if let Some(p) = e
                    .structure()
                    .and_then(|s| VmafPooledMessage::try_from(s).ok())
                {
                    pooled = Some(p);
                }
            }
            gst::MessageView::Error(e) => panic!("{}", e.error()),
            gst::MessageView::Eos(_) => {
                eos = true;
                break;
            }
            _ => {}
        }
    }
    pipeline.set_state(gst::State::Null).unwrap();
    assert!(eos, "no EOS within 20 s: the element hung");
    assert!(start.elapsed().as_secs() < 15);
    // Every reference frame is scored once (a live timeout that hands the
    // aggregator the last reference frame again adds no score).
    assert_eq!(frames, 40, "one score per reference frame");
    // The frames of the stall are counted as scored against a repeated picture.
    let p = pooled.expect("a pooled message").pairing;
    assert!(p.repeated >= 15 && p.fresh + p.repeated == 40, "{p:?}");
    // The frozen distorted picture drags the score down as the ball moves on.
    let before = scores[5];
    let late = scores[25];
    assert!(
        late < before - 5.0,
        "frozen input not reflected: {before} then {late}"
    );
    // Once the pad flows again its frames are used again.
    let resumed = scores[frames - 2];
    assert!(
        resumed > 90.0 && resumed > late + 50.0,
        "resumed input not used: {before}, frozen {late}, then {resumed}"
    );
}

/// With live sources the element answers the latency query as live: the
/// upstream latency, its `latency` property, and its wait for late
/// distorted frames (`late-frame-wait`: three frames' time by default).
#[test]
fn live_latency_query() {
    // videotestsrc at 30 fps reports one frame (33.3 ms), `latency` adds
    // 10 ms, and fakesink its processing deadline (20 ms).
    for (wait, want_ms) in [
        ("", 163),
        ("late-frame-wait=0", 63),
        ("late-frame-wait=50000000", 113),
    ] {
        // A sink reports a live latency only when it synchronises to the clock (sync=true).
        let desc = format!(
            "videotestsrc is-live=true num-buffers=30 ! video/x-raw,format=I420,width=96,height=64,framerate=30/1 \
             ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! v.dist_sink \
             vmafhip name=v backend=cpu latency=10000000 {wait} ! fakesink sync=true"
        );
        let pipeline = launch(&desc);
        pipeline.set_state(gst::State::Playing).unwrap();
        let _ = pipeline.state(gst::ClockTime::from_seconds(5));
        let mut q = gst::query::Latency::new();
        assert!(pipeline.query(&mut q), "latency query unanswered");
        let (live, min, _max) = q.result();
        pipeline.set_state(gst::State::Null).unwrap();
        assert!(live, "not reported live");
        let want = gst::ClockTime::from_mseconds(want_ms);
        assert!(
            min >= want && min < want + gst::ClockTime::from_mseconds(5),
            "{wait}: min latency {min}, want {want}"
        );
    }
}
