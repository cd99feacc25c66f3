//! A live station whose sources go away and come back, scored by the
//! command with `--align auto`:
//! - the transcoder is killed and started again on the live reference (a
//!   new MPEG-TS stream on the same UDP port: new timestamps, a new
//!   encoder at another size and bitrate, as an adaptive stream's next
//!   rendition): the gap is reported (the warning line, a `gap` line of
//!   the JSON Lines results), the offset found again, and the frames after
//!   it scaled and scored;
//! - the transcoder sending RTP is started again with a new SSRC: the
//!   new stream is taken, the gap reported, the offset found again;
//! - the RTSP server of both streams is killed and started again after a
//!   try to reach it failed: the command starts its sources again
//!   (`--reconnect`) until they are back, reports each input's gap, and
//!   scores on without a restart.
//!
//! Each test says what it found. The waits are for what the command says
//! (its notes), never for a time.

mod command_line;
mod common;
mod station;

use command_line::*;
use gst::prelude::*;
use station::*;
use std::path::Path;

/// Frames of the reference (20 s at 30 fps), and the frames the transcode
/// skips at its start.
const FRAMES: usize = 600;
const LATE: usize = 5;

/// The reference (`ref.yuv`) and its transcode's frames (`dist.yuv`, from
/// frame LATE on) in `dir`; returns the reference's frames.
fn write_pair(dir: &Path) -> Vec<Vec<u8>> {
    let (reference, _) = common::pan(FRAMES);
    std::fs::write(dir.join("ref.yuv"), reference.concat()).unwrap();
    std::fs::write(dir.join("dist.yuv"), reference[LATE..].concat()).unwrap();
    reference
}

/// One stream of `file` in `dir`, paced in real time, scaled to `size`,
/// encoded with `enc`, put in packets by `packets` (a muxer or an RTP
/// payloader) and sent on UDP to `port`.
fn sender(
    dir: &Path,
    (file, size): (&str, (u32, u32)),
    enc: &str,
    packets: &str,
    port: u16,
) -> gst::Pipeline {
    common::pipeline::launch(&format!(
        "filesrc location={} ! rawvideoparse width=320 height=180 format=i420 framerate=30/1 \
         ! videoscale ! video/x-raw,width={},height={} \
         ! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=30 {enc} \
         ! {packets} ! udpsink host=127.0.0.1 port={port} sync=true",
        dir.join(file).display(),
        size.0,
        size.1
    ))
}

/// The streams of a station whose transcoder is started again.
#[derive(Clone, Copy)]
enum Stream {
    Reference,
    Transcode,
    /// The transcoder started again.
    Again,
}

/// What a station whose transcoder was started again said: the reference
/// frame the new transcoder started at, its stderr, its results file.
struct Restarted {
    at: usize,
    text: String,
    out: std::path::PathBuf,
}

/// A station on `uri(port)` of each stream, scored live: the transcoder
/// dies once the offset is found, and starts again on the live reference
/// from where it is now, at `again` (its size and encoder settings); the
/// station runs until it says the gap and the offset found again. Each
/// stream is put in packets by `packets(stream)`.
fn restart_the_transcoder(
    name: &str,
    uri: impl Fn(u16) -> String,
    packets: impl Fn(Stream) -> String,
    again: ((u32, u32), &str),
) -> Restarted {
    let dir = scratch_dir(name);
    let reference = write_pair(&dir);
    let ports = free_ports();
    let out = dir.join("live.jsonl");
    let mut run = Running::start([&uri(ports.0), &uri(ports.1)], &out, &["--duration", "28"]);
    let full = (320, 180);
    let send =
        |stream, (file, size), enc, port| sender(&dir, (file, size), enc, &packets(stream), port);
    let ref_sender = send(
        Stream::Reference,
        ("ref.yuv", full),
        "pass=quant quantizer=10",
        ports.0,
    );
    let mut dist_sender = send(
        Stream::Transcode,
        ("dist.yuv", full),
        "bitrate=250",
        ports.1,
    );
    ref_sender.set_state(gst::State::Playing).unwrap();
    dist_sender.set_state(gst::State::Playing).unwrap();
    run.until("the offset", |l| l.contains("align=auto:"));
    // The transcoder dies.
    dist_sender.set_state(gst::State::Null).unwrap();
    run.until("the stall", |l| l.starts_with("warning: no frame scored"));
    // ... and starts again on the live reference, from where it is now.
    let now = ref_sender
        .query_position::<gst::ClockTime>()
        .expect("the reference sender's position");
    let at = ((now.nseconds() as u128 * 30 / 1_000_000_000) as usize).min(FRAMES - 1);
    std::fs::write(dir.join("again.yuv"), reference[at..].concat()).unwrap();
    dist_sender = send(Stream::Again, ("again.yuv", again.0), again.1, ports.1);
    dist_sender.set_state(gst::State::Playing).unwrap();
    run.until("the gap", |l| l.contains("DIST had a gap"));
    run.until("the new offset", |l| l.contains("align=auto:"));
    let text = run.finish();
    ref_sender.set_state(gst::State::Null).unwrap();
    dist_sender.set_state(gst::State::Null).unwrap();
    Restarted { at, text, out }
}

/// The JSON Lines results: the gap lines, and the VMAF of each frame.
fn gaps_and_scores(out: &Path) -> (Vec<serde_json::Value>, Vec<f64>) {
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let gaps = lines.iter().filter_map(|l| l.get("gap").cloned()).collect();
    let scores = lines
        .iter()
        .filter_map(|l| l.pointer("/metrics/vmaf")?.as_f64())
        .collect();
    (gaps, scores)
}

/// The notes that say an offset was found: `align=auto: ...`.
fn alignments(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.contains("align=auto:")).collect()
}

/// How many frames an offset note says the inputs are apart: 0 when
/// aligned, N for "leads" or "lags the reference by N frames".
fn frames_off(note: &str) -> Option<u32> {
    if note.contains("is aligned with the reference") {
        return Some(0);
    }
    let (_, rest) = note.split_once("the reference by ")?;
    rest.split(' ').next()?.parse().ok()
}

#[test]
fn a_restarted_transcoder_is_a_gap_then_found_again() {
    let _turn = one_station();
    common::pipeline::init();
    let Restarted { at, text, out } = restart_the_transcoder(
        "live_reconnect_udp",
        |port| format!("udp://127.0.0.1:{port}"),
        |_| "mpegtsmux".into(),
        ((256, 144), "bitrate=400"),
    );

    let inputs = pooled_inputs(&out);
    let (gaps, scores) = gaps_and_scores(&out);
    println!("restarted at reference frame {at}; gaps {gaps:?}; inputs {inputs}");
    assert_eq!(gaps.len(), 1, "{text}");
    assert_eq!(gaps[0]["input"], "distorted");
    assert!(gaps[0]["frames"].as_u64().unwrap() >= 30, "{gaps:?}");
    let found = alignments(&text);
    assert_eq!(found.len(), 2, "{text}");
    assert!(
        found[0].contains("leads the reference by 5 frames"),
        "{text}"
    );
    assert!(!found[1].contains("no clear offset"), "{text}");
    // The new transcoder shows the reference's present frame: the offset
    // after the gap is the one in time, not where the search began.
    let again = frames_off(found[1]);
    assert!(again.is_some_and(|n| n <= 10), "{again:?}: {text}");
    assert_eq!(inputs["duplicated_frames"], 0, "{text}");
    assert_eq!(inputs["dropped_frames"], 0, "{text}");
    assert!(inputs["late_frames"].as_u64().unwrap() > 0, "{text}");
    // Every reference frame sent is counted once: scored, or not (late,
    // or before the transcode's first frame). The last one, which the
    // receiver's MPEG-TS demuxer holds until the end of stream at
    // `--duration`, is late.
    assert_eq!(inputs["reference_frames"], FRAMES, "{text}");
    // The frames after the gap, at 256x144 and scaled, score well.
    let after = &scores[scores.len() - 100..];
    let mean = after.iter().sum::<f64>() / after.len() as f64;
    assert!(mean > 60.0, "after the gap: {mean} ({text})");
}

/// A free TCP port on loopback, for a server started twice on it.
fn free_tcp_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// RTSP: the server of both streams goes away, and comes back only after
/// the command's first try to reach it failed. rtspsrc ends each stream
/// when its connection closes; the command starts both sources again until
/// they are back, and scores on. The new sessions' frames are timed by the
/// station's clock: the time the server was away is a gap of each input,
/// reported with its start, length and frames.
#[test]
fn the_command_reconnects_to_a_restarted_rtsp_server() {
    let _turn = one_station();
    common::pipeline::init();
    let dir = scratch_dir("live_reconnect_rtsp");
    write_pair(&dir);
    let port = free_tcp_port();
    let (mut server, _) = rtsp_server(&dir, port, &[]);
    let out = dir.join("live.jsonl");
    let mut run = Running::start(
        [
            &format!("rtspt://127.0.0.1:{port}/ref"),
            &format!("rtspt://127.0.0.1:{port}/dist"),
        ],
        &out,
        &["--duration", "45", "--reconnect", "60"],
    );
    run.until("the offset", |l| l.contains("align=auto:"));
    server.stop();
    run.until("a try that failed", |l| {
        l.contains("starting it again in 2 s")
    });
    let (mut server, _) = rtsp_server(&dir, port, &[]);
    run.until("a source back", |l| l.ends_with(" is back"));
    let text = run.finish();
    server.stop();

    let inputs = pooled_inputs(&out);
    let (gaps, scores) = gaps_and_scores(&out);
    println!("inputs {inputs}");
    println!("gaps {gaps:?}");
    for said in [
        "starting REF again",
        "starting DIST again",
        "REF is back",
        "DIST is back",
    ] {
        assert!(text.contains(said), "{said}: {text}");
    }
    let first_gap = |input: &str| {
        gaps.iter()
            .find(|g| g["input"] == input)
            .unwrap_or_else(|| panic!("no {input} gap: {gaps:?}\n{text}"))
    };
    let (r, d) = (first_gap("reference"), first_gap("distorted"));
    for g in [r, d] {
        // Away across a failed try and the wait before the next (1 + 2 s).
        let length = g["length"].as_f64().unwrap();
        assert!(length >= 2.0, "{g}");
        let frames = g["frames"].as_f64().unwrap();
        assert!((frames - length * 30.0).abs() <= 2.0, "{g}");
    }
    let apart = r["start"].as_f64().unwrap() - d["start"].as_f64().unwrap();
    assert!(apart.abs() < 0.5, "{r} {d}");
    assert_eq!(inputs["duplicated_frames"], 0, "{text}");
    assert_eq!(inputs["dropped_frames"], 0, "{text}");
    assert!(!text.contains("no clear offset"), "{text}");
    let after = &scores[scores.len() - 60..];
    let mean = after.iter().sum::<f64>() / after.len() as f64;
    assert!(mean > 60.0, "after the reconnect: {mean} ({text})");
}

/// RTP: the transcoder is started again with a new SSRC. The receiver's
/// session makes a new stream for it, whose pad may come before the old
/// one's goes: the station takes it either way, reports the gap, finds
/// the offset again and scores on.
#[test]
fn an_rtp_sender_with_a_new_ssrc_is_taken() {
    let _turn = one_station();
    common::pipeline::init();
    assert!(
        gst::ElementFactory::find("rtpsrc").is_some(),
        "GStreamer's rtpsrc (gstreamer1.0-plugins-bad) is needed"
    );
    let ssrc = |stream| match stream {
        Stream::Reference => 1,
        Stream::Transcode => 1111,
        Stream::Again => 2222,
    };
    let Restarted { at, text, out } = restart_the_transcoder(
        "live_reconnect_rtp",
        |port| format!("rtp://127.0.0.1:{port}?encoding-name=H264"),
        |stream| format!("rtph264pay config-interval=1 pt=96 ssrc={}", ssrc(stream)),
        ((320, 180), "bitrate=250"),
    );

    let inputs = pooled_inputs(&out);
    let (gaps, scores) = gaps_and_scores(&out);
    println!("rtp: new SSRC at reference frame {at}; gaps {gaps:?}; inputs {inputs}");
    assert!(
        gaps.iter().any(|g| g["input"] == "distorted"),
        "{gaps:?} {text}"
    );
    let found = alignments(&text);
    assert!(found.len() >= 2, "{text}");
    assert!(
        !found[found.len() - 1].contains("no clear offset"),
        "{text}"
    );
    assert_eq!(inputs["duplicated_frames"], 0, "{text}");
    assert_eq!(inputs["dropped_frames"], 0, "{text}");
    // The new sender's frames are scored, and score well.
    let after = &scores[scores.len() - 100..];
    let mean = after.iter().sum::<f64>() / after.len() as f64;
    assert!(mean > 60.0, "after the new SSRC: {mean} ({text})");
}
