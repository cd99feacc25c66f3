//! Live pipelines: every reference frame is scored once, against the
//! distorted frame with its timestamp. By default a reference frame waits
//! for a late distorted frame (`max-pending`) while the reference passes
//! on; with `max-pending=0` it is scored at its deadline against what the
//! distorted pad holds (`late-frame-wait`). The pooled message says how
//! each was paired. Inputs that stop and come back, in a new segment, are
//! reported as gaps.

mod common;

use common::pipeline::{Outcome, collect, launch};
use gst::prelude::*;
use gstvmafhip::Pairing;
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

/// Processes that keep every core busy while they live.
struct Load(Vec<std::process::Child>);

impl Load {
    fn every_core() -> Load {
        let n = std::thread::available_parallelism().map_or(2, |n| n.get());
        Load(
            (0..n)
                .map(|_| {
                    std::process::Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .expect("sh")
                })
                .collect(),
        )
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// README's live example as it stands, with every core kept busy by other
/// processes (a QA station shares its machine with the transcoder): 300
/// reference frames, 300 scores, each against its own distorted frame.
#[test]
fn readmes_live_example_scores_every_frame() {
    let desc = "videotestsrc is-live=true num-buffers=300 ! video/x-raw,width=1280,height=720,framerate=30/1 \
        ! tee name=t t. ! queue ! v.ref_sink \
        t. ! queue ! x264enc bitrate=1500 tune=zerolatency speed-preset=ultrafast ! avdec_h264 ! v.dist_sink \
        vmafhip name=v frame-message=true ! fakesink";
    let pipeline = launch(desc);
    let load = Load::every_core();
    let out = play(&pipeline);
    drop(load);
    let p = pairing(&out);
    println!(
        "README's live example under load: {} scores, {p:?}",
        out.frames.len()
    );
    assert_eq!(out.frames.len(), 300, "one score per reference frame");
    assert_eq!((p.fresh, p.repeated, p.unscored), (300, 0, 0));
}

/// A distorted branch whose first frame takes 400 ms and whose 31st is
/// 90 ms late: by default the reference frames wait for them, so every
/// one is scored against its own distorted frame; with `max-pending=0
/// late-frame-wait=0` (no wait) the first ones pass through unscored and
/// the late one's predecessor is scored again, as many as the machine's
/// load makes late.
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
    println!("by default: {} scores, {p:?}", out.frames.len());
    assert_eq!(out.frames.len(), 60);
    assert_eq!(
        p,
        Pairing {
            fresh: 60,
            repeated: 0,
            unscored: 0,
            distorted: 60,
            distorted_past_end: false,
            ..Pairing::default()
        }
    );
    // The distorted frames are the reference's own, each scored once.
    let scores: Vec<f64> = out.frames.iter().map(|f| f.score).collect();
    let first = scores[0];
    assert!(scores.iter().all(|s| (s - first).abs() < 5.0), "{scores:?}");

    let pipeline = launch(&desc("max-pending=0 late-frame-wait=0"));
    slow_down(&pipeline, "slow", slow);
    let out = play(&pipeline);
    let p = pairing(&out);
    // Without the wait, how many frames the stall costs depends on how
    // late the aggregator runs (the machine's load): what holds is the
    // accounting, each reference frame counted once and scored at most once.
    println!("no wait: {} scores, {p:?}", out.frames.len());
    assert_eq!(p.fresh + p.repeated + p.unscored, 60, "{p:?}");
    assert_eq!(out.frames.len() as u64, p.fresh + p.repeated, "{p:?}");
}

/// Makes the element named `name` drop its buffers numbered in `lost`
/// (from 0): a distorted branch that stalls.
fn stall(pipeline: &gst::Pipeline, name: &str, lost: std::ops::Range<u64>) {
    let pad = pipeline.by_name(name).unwrap().static_pad("src").unwrap();
    let n = AtomicU64::new(0);
    pad.add_probe(gst::PadProbeType::BUFFER, move |_, _| {
        if lost.contains(&n.fetch_add(1, Ordering::Relaxed)) {
            gst::PadProbeReturn::Drop
        } else {
            gst::PadProbeReturn::Ok
        }
    });
}

/// The stalled-branch pipeline: 40 frames of a moving ball at 50 fps.
fn stalled(props: &str, lost: std::ops::Range<u64>) -> Outcome {
    let desc = format!(
        "videotestsrc is-live=true num-buffers=40 pattern=ball ! video/x-raw,format=I420,width=96,height=64,framerate=50/1 \
         ! tee name=t t. ! queue ! v.ref_sink \
         t. ! queue ! identity name=gate ! v.dist_sink \
         vmafhip name=v backend=cpu frame-message=true {props} ! fakesink"
    );
    let pipeline = launch(&desc);
    stall(&pipeline, "gate", lost);
    // A hang ends in `collect`'s silence timeout without the pooled
    // message, which the callers' `pairing` requires.
    play(&pipeline)
}

/// A distorted branch that stalls for 20 frames (400 ms): the reference
/// frames of the stall wait, and once the branch flows again they are
/// scored against its last picture before the stall (what a viewer saw: a
/// frozen picture, scored as such), each once, in order.
#[test]
fn a_stalled_distorted_branch_is_scored_as_a_frozen_picture() {
    let out = stalled("", 10..30);
    let p = pairing(&out);
    println!("a 400 ms stall: {p:?}");
    assert_eq!(out.frames.len(), 40, "one score per reference frame");
    assert_eq!((p.fresh, p.repeated, p.unscored), (20, 20, 0));
    let scores: Vec<f64> = out.frames.iter().map(|f| f.score).collect();
    // The frozen distorted picture drags the score down as the ball moves on.
    let (before, late, resumed) = (scores[5], scores[25], scores[38]);
    assert!(
        late < before - 5.0,
        "frozen input not reflected: {scores:?}"
    );
    assert!(resumed > 90.0 && resumed > late + 50.0, "{scores:?}");
    // In order, one per frame.
    let indices: Vec<u64> = out.frames.iter().map(|f| f.index).collect();
    assert_eq!(indices, (0..40).collect::<Vec<_>>());
}

/// Past `max-pending` a reference frame is not scored: counted, with a
/// warning that names the bound; the frames within it are still scored,
/// and a branch that never comes back does not hang the element.
#[test]
fn past_max_pending_frames_are_counted_unscored() {
    let out = stalled("max-pending=100000000", 10..30);
    let p = pairing(&out);
    println!("a 400 ms stall, max-pending 100 ms: {p:?}");
    assert_eq!(p.fresh, 20);
    assert!(p.unscored >= 10 && p.repeated >= 1, "{p:?}");
    assert_eq!(p.reference(), 40);
    assert!(
        out.warnings
            .iter()
            .any(|w| w.contains("within max-pending")),
        "{:?}",
        out.warnings
    );
    let out = stalled("max-pending=200000000", 10..40);
    let p = pairing(&out);
    println!("a stall to the end, max-pending 200 ms: {p:?}");
    assert_eq!((p.fresh, p.repeated + p.unscored), (10, 30), "{p:?}");
}

/// With live sources the element answers the latency query as live: the
/// upstream latency, its `latency` property, and `late-frame-wait` (by
/// default none, as late frames are waited for without holding the
/// reference up; three frames' time with `max-pending=0`).
#[test]
fn live_latency_query() {
    // videotestsrc at 30 fps reports one frame (33.3 ms), `latency` adds
    // 10 ms, and fakesink its processing deadline (20 ms).
    for (wait, want_ms) in [
        ("", 63),
        ("max-pending=0", 163),
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

/// Frame `n` of a small moving picture (64x48 I420).
fn picture(n: u64) -> gst::Buffer {
    let mut data = vec![128u8; 64 * 48 * 3 / 2];
    for (i, y) in data[..64 * 48].iter_mut().enumerate() {
        *y = ((i as u64 % 64 + n * 3) % 256) as u8;
    }
    gst::Buffer::from_mut_slice(data)
}

/// Two live inputs that both stop for 1.5 s and come back, the reference
/// in a new segment that starts where its frames start again (as a source
/// started again opens its own). Until its next frame is due, the element
/// is handed the reference's last frame again, which the new segment
/// cannot place: that frame held, not new frames of no time. Each input's
/// gap is reported, with its length.
#[test]
fn inputs_back_in_a_new_segment_are_gaps_of_both() {
    let caps = "video/x-raw,format=I420,width=64,height=48,framerate=30/1";
    let desc = format!(
        "appsrc name=r is-live=true format=time handle-segment-change=true caps={caps} ! queue ! v.ref_sink \
         appsrc name=d is-live=true format=time caps={caps} ! queue ! v.dist_sink \
         vmafhip name=v backend=cpu align=auto latency=200000000 ! fakesink sync=false async=false"
    );
    let pipeline = launch(&desc);
    let src = |n: &str| {
        pipeline
            .by_name(n)
            .unwrap()
            .downcast::<gst_app::AppSrc>()
            .unwrap()
    };
    let (r, d) = (src("r"), src("d"));
    let bus = pipeline.bus().unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let clock = pipeline.clock().unwrap();
    let base = pipeline.base_time().unwrap();
    let frame = gst::ClockTime::from_nseconds(1_000_000_000 / 30);
    // Each frame timed by the clock as it is sent, as a live source does.
    let send = |n: u64, segment: Option<&gst::FormattedSegment<gst::ClockTime>>| {
        let now = clock.time() - base;
        for (s, to) in [(&r, segment), (&d, None)] {
            let mut b = picture(n);
            let m = b.get_mut().unwrap();
            m.set_pts(now);
            m.set_duration(frame);
            let sample = gst::Sample::builder().buffer(&b);
            let sample = match to {
                Some(seg) => sample.segment(seg).build(),
                None => sample.build(),
            };
            s.push_sample(&sample).unwrap();
        }
        std::thread::sleep(Duration::from_millis(33));
    };
    (0..30).for_each(|n| send(n, None));
    std::thread::sleep(Duration::from_millis(1500));
    let mut segment = gst::FormattedSegment::<gst::ClockTime>::new();
    let back = clock.time() - base;
    segment.set_start(back);
    segment.set_base(back);
    segment.set_position(back);
    segment.set_time(gst::ClockTime::ZERO);
    send(30, Some(&segment));
    (31..60).for_each(|n| send(n, Some(&segment)));
    r.end_of_stream().unwrap();
    d.end_of_stream().unwrap();

    let mut gaps = Vec::new();
    while let Some(msg) = bus.timed_pop(gst::ClockTime::from_seconds(60)) {
        match msg.view() {
            gst::MessageView::Element(e) => {
                if let Some(g) = e
                    .structure()
                    .and_then(|s| gstvmafhip::Gap::try_from(s).ok())
                {
                    gaps.push(g);
                }
            }
            gst::MessageView::Error(e) => panic!("{} ({:?})", e.error(), e.debug()),
            gst::MessageView::Eos(_) => break,
            _ => {}
        }
    }
    pipeline.set_state(gst::State::Null).unwrap();
    println!("gaps: {gaps:?}");
    for input in ["reference", "distorted"] {
        let g = gaps
            .iter()
            .find(|g| g.input == input && g.missed.length >= gst::ClockTime::from_mseconds(1200));
        assert!(g.is_some(), "no gap of the {input} input: {gaps:?}");
    }
}
