//! A live QA station on loopback: one GStreamer pipeline sends a reference
//! (a pan across the coffee cup, with grain) as MPEG-TS over UDP, and an
//! x264 transcode of it that starts 5 frames late and drops 2 frames; the
//! command scores the two URIs live with `--align auto` for 20 s. The test
//! checks the offset found, the drops counted, every distorted frame
//! scored, the windows, the status line, and the metrics endpoint scraped
//! mid-run and read by a real OpenMetrics parser. The same station runs
//! over RTP, over SRT, from an RTSP server (gst-rtsp-server, one stream
//! over TCP, one over UDP) and from HLS live playlists (`hlssink2`, served
//! over HTTP).

mod command_line;
mod common;
mod station;

use command_line::*;
use gst::prelude::*;
use station::*;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Frames of the reference (12 s at 30 fps), the frames the transcode
/// skips at its start, and the reference frames it drops.
const FRAMES: usize = 360;
const LATE: usize = 5;
const DROPPED: [usize; 2] = [150, 260];

/// The RTP jitter buffer's latency (rtpsrc's `latency`, 200 ms by
/// default), in milliseconds: a second, as a station on a busy machine is
/// configured. With the default, a receiver that this machine's load keeps
/// off the CPU for longer loses packets, the decoder conceals them, and the
/// concealed frame shows the one before: a duplicate the transcoder never
/// made (seen with two busy processes beside the test). Telling such
/// delivery losses apart from the transcoder's own repeats is the station's
/// job still to do (issue 59).
const TRANSPORT_MS: u32 = 1000;

/// The sending pipeline: both streams, paced in real time, each H.264
/// stream put in packets by `packets` (MPEG-TS, or RTP) for UDP.
fn senders(dir: &std::path::Path, ports: (u16, u16), packets: &str) -> gst::Pipeline {
    let branch = |file: &str, enc: &str, port: u16| {
        format!(
            "filesrc location={} ! rawvideoparse width=320 height=180 format=i420 framerate=30/1 \
             ! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=30 {enc} \
             ! {packets} ! udpsink host=127.0.0.1 port={port} sync=true",
            dir.join(file).display()
        )
    };
    common::pipeline::launch(&format!(
        "{} {}",
        branch("ref.yuv", "pass=quant quantizer=10", ports.0),
        branch("dist.yuv", "bitrate=250", ports.1)
    ))
}

/// The reference (`ref.yuv`) and its transcode's frames (`dist.yuv`: from
/// frame LATE on, without the DROPPED ones) in `dir`, both going on for
/// `tail` frames past the checked ones (so that no sender ends during
/// them); how many of the checked frames the transcode shows.
fn write_pair_with_tail(dir: &std::path::Path, tail: usize) -> usize {
    let (reference, _) = common::pan(FRAMES + tail);
    let shown: Vec<&Vec<u8>> = (LATE..FRAMES)
        .filter(|i| !DROPPED.contains(i))
        .map(|i| &reference[i])
        .collect();
    std::fs::write(dir.join("ref.yuv"), reference.concat()).unwrap();
    let dist: Vec<u8> = shown
        .iter()
        .copied()
        .chain(&reference[FRAMES..])
        .flat_map(|f| f.iter().copied())
        .collect();
    std::fs::write(dir.join("dist.yuv"), dist).unwrap();
    shown.len()
}

#[test]
fn the_command_scores_two_live_udp_streams_aligned() {
    let _turn = one_station();
    common::pipeline::init();
    let dir = scratch_dir("live_qa");
    let shown = write_pair_with_tail(&dir, TAIL);
    let ports = free_ports();
    let out = dir.join("live.jsonl");
    let mut child = vmafhip()
        .args([
            &format!("udp://127.0.0.1:{}", ports.0),
            &format!("udp://127.0.0.1:{}", ports.1),
            "--align",
            "auto",
            "--duration",
            "15",
            "--window",
            "4",
            "--metrics",
            "0",
            "--backend",
            "cpu",
            "--progress",
            "-o",
            s(&out),
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = stderr_lines(&mut child);
    // The sockets are bound once the command says it is scoring.
    let mut said = until_scoring(&lines);
    let metrics_url = said
        .iter()
        .find_map(|l| l.strip_prefix("note: metrics at ").map(str::to_string));
    let sending = senders(&dir, ports, "mpegtsmux");
    sending.set_state(gst::State::Playing).unwrap();
    // Scraped once the first window is out: mid-run.
    let mut scraped = None;
    for l in lines.iter() {
        if scraped.is_none()
            && l.starts_with("window ")
            && let Some(url) = &metrics_url
        {
            scraped = Some(common::scrape::http_get(url).2);
        }
        said.push(l);
    }
    let status = child.wait().unwrap();
    let bus = sending.bus().unwrap();
    let _ = bus.timed_pop_filtered(gst::ClockTime::from_seconds(30), &[gst::MessageType::Eos]);
    sending.set_state(gst::State::Null).unwrap();
    let text = said.join("\n");
    println!("{text}");
    assert!(status.success(), "{text}");

    let frames = check_alignment(&out, &text, "udp");
    assert!(
        frames >= shown,
        "every checked distorted frame scored, or late ({shown} checked): {text}"
    );
    assert!(text.lines().filter(|l| l.starts_with("window ")).count() >= 2);
    assert!(
        text.contains("live ") && text.contains(" fps"),
        "no status line"
    );

    // The endpoint, scraped mid-run, read by prometheus_client's parser.
    let body = scraped.expect("the metrics scraped during the run");
    let samples = common::scrape::parse_openmetrics(&body);
    println!("{}", samples.join("\n"));
    let value = |name: &str| {
        samples
            .iter()
            .find(|s| s.contains(&format!(" {name}{{")))
            .and_then(|s| s.rsplit(' ').next())
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("{name} in {samples:?}"))
    };
    assert!(value("vmafhip_frames_scored_total") > 0.0);
    assert_eq!(value("vmafhip_align_offset"), -(LATE as f64));
    assert!(value("vmafhip_frames_dropped_total") <= DROPPED.len() as f64);
    assert!(value("vmafhip_window_frames") > 0.0);
}

/// The same station over RTP: H.264 in RTP packets on UDP
/// (`rtph264pay`), received from `rtp://HOST:PORT?encoding-name=H264`
/// URIs (GStreamer's `rtpsrc`, with its jitter buffer): the offset, the two
/// drops where they are, and every distorted frame scored.
#[test]
fn the_command_scores_two_live_rtp_streams_aligned() {
    let _turn = one_station();
    common::pipeline::init();
    assert!(
        gst::ElementFactory::find("rtpsrc").is_some(),
        "GStreamer's rtpsrc (gstreamer1.0-plugins-bad) is needed"
    );
    let dir = scratch_dir("live_qa_rtp");
    let shown = write_pair_with_tail(&dir, TAIL);
    let ports = free_ports();
    let out = dir.join("live.jsonl");
    // A second of jitter buffer (rtpsrc's `latency`): see TRANSPORT_MS.
    let uri =
        |port: u16| format!("rtp://127.0.0.1:{port}?encoding-name=H264&latency={TRANSPORT_MS}");
    let mut child = vmafhip()
        .args([
            &uri(ports.0),
            &uri(ports.1),
            "--align",
            "auto",
            "--duration",
            "15",
            "--backend",
            "cpu",
            "-o",
            s(&out),
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = stderr_lines(&mut child);
    let mut said = until_scoring(&lines);
    let sending = senders(&dir, ports, "rtph264pay config-interval=1 pt=96");
    sending.set_state(gst::State::Playing).unwrap();
    said.extend(lines.iter());
    let status = child.wait().unwrap();
    let bus = sending.bus().unwrap();
    let _ = bus.timed_pop_filtered(gst::ClockTime::from_seconds(30), &[gst::MessageType::Eos]);
    sending.set_state(gst::State::Null).unwrap();
    let text = said.join("\n");
    println!("{text}");
    assert!(status.success(), "{text}");
    let frames = check_alignment(&out, &text, "rtp");
    assert!(
        frames >= shown,
        "every checked distorted frame scored, or late ({shown} checked): {text}"
    );
}

/// Frames of the pan past the checked ones, sent on both streams (5 s):
/// the command stops (`--duration 15`) while they still flow, so that no
/// sender closes during the checked frames (a stream's end over UDP or
/// SRT is not told to the receiver: its last frames may stay in transit).
const TAIL: usize = 150;

/// The same station over SRT, the transcoder's side listening (as an
/// encoder's SRT output does) and the command calling: the offset, the two
/// drops where they are, and every checked distorted frame scored.
#[test]
fn the_command_scores_two_live_srt_streams_aligned() {
    let _turn = one_station();
    common::pipeline::init();
    assert!(
        gst::ElementFactory::find("srtsrc").is_some(),
        "GStreamer's srt plugin (gstreamer1.0-plugins-bad) is needed"
    );
    let dir = scratch_dir("live_qa_srt");
    let shown = write_pair_with_tail(&dir, TAIL);
    let ports = free_ports();
    let branch = |file: &str, enc: &str, port: u16| {
        format!(
            "filesrc location={} ! rawvideoparse width=320 height=180 format=i420 framerate=30/1 \
             ! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=30 {enc} \
             ! mpegtsmux ! srtsink uri=srt://127.0.0.1:{port}?mode=listener sync=true",
            dir.join(file).display()
        )
    };
    // Each sender waits for the command to connect before its first frame.
    let sending = common::pipeline::launch(&format!(
        "{} {}",
        branch("ref.yuv", "pass=quant quantizer=10", ports.0),
        branch("dist.yuv", "bitrate=250", ports.1)
    ));
    sending.set_state(gst::State::Playing).unwrap();
    let out = dir.join("live.jsonl");
    let mut child = vmafhip()
        .args([
            &format!("srt://127.0.0.1:{}?mode=caller", ports.0),
            &format!("srt://127.0.0.1:{}?mode=caller", ports.1),
            "--align",
            "auto",
            "--duration",
            "15",
            "--backend",
            "cpu",
            "-o",
            s(&out),
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let said: Vec<String> = stderr_lines(&mut child).iter().collect();
    let status = child.wait().unwrap();
    sending.set_state(gst::State::Null).unwrap();
    let text = said.join("\n");
    println!("{text}");
    assert!(status.success(), "{text}");
    let frames = check_alignment(&out, &text, "srt");
    assert!(
        frames >= shown,
        "every checked frame scored, or late ({shown} checked): {text}"
    );
}

/// Frames past the checked ones on the RTSP server's streams (10 s): the
/// run stops (`--duration 18`) while they flow (the end of a stream over
/// RTP on UDP may lose its last frame).
const RTSP_TAIL: usize = 300;

/// The station on an RTSP server's two mounts: the reference over TCP
/// (`rtspt://`), the transcode over UDP (`rtsp://`, rtspsrc's first
/// choice): the offset, the two drops where they are, and every distorted
/// frame scored.
#[test]
fn the_command_scores_two_live_rtsp_streams_aligned() {
    let _turn = one_station();
    common::pipeline::init();
    let dir = scratch_dir("live_qa_rtsp");
    let shown = write_pair_with_tail(&dir, RTSP_TAIL);
    let (mut server, port) = rtsp_server(&dir, 0, &[]);
    let out = dir.join("live.jsonl");
    let text = station(
        [
            &format!("rtspt://127.0.0.1:{port}/ref"),
            &format!("rtsp://127.0.0.1:{port}/dist"),
        ],
        &out,
        // The run stops while the server's streams go on.
        &["--duration", "18"],
        || {},
    );
    server.stop();
    let frames = check_alignment(&out, &text, "rtsp");
    assert!(
        frames >= shown,
        "every checked distorted frame scored, or late ({shown} checked): {text}"
    );
}

/// The sending pipeline of HLS: both streams paced in real time, cut into
/// one-second segments of live playlists (`hlssink2`) in `dir/ref` and
/// `dir/dist`.
fn hls_senders(dir: &std::path::Path) -> gst::Pipeline {
    let branch = |file: &str, enc: &str| {
        let out = dir.join(file.trim_end_matches(".yuv"));
        std::fs::create_dir_all(&out).unwrap();
        format!(
            "filesrc location={} ! rawvideoparse width=320 height=180 format=i420 framerate=30/1 \
             ! identity sync=true ! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=30 {enc} \
             ! h264parse ! hlssink2 target-duration=1 playlist-length=0 max-files=0 \
             location={}/seg%05d.ts playlist-location={}/live.m3u8",
            dir.join(file).display(),
            out.display(),
            out.display()
        )
    };
    common::pipeline::launch(&format!(
        "{} {}",
        branch("ref.yuv", "pass=quant quantizer=10"),
        branch("dist.yuv", "bitrate=250")
    ))
}

/// A loopback HTTP server of `dir` (Python's own), and its port.
fn http_server(dir: &std::path::Path) -> (Server, u16) {
    let mut server = std::process::Command::new(SYSTEM_PYTHON)
        .args([
            "-u",
            "-m",
            "http.server",
            "0",
            "--bind",
            "127.0.0.1",
            "--directory",
        ])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let first = first_line(&mut server);
    // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
    let port = first
        .split_whitespace()
        .skip_while(|w| *w != "port")
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("the HTTP server said {first:?}"));
    (Server(server), port)
}

/// The station on two HLS live playlists served over HTTP. A player joins
/// a live playlist some segments back from its end, at a segment's start:
/// the reference frames are numbered from the one it joined at, so the
/// drops are found a whole number of segments (30 frames) before 150 and
/// 260, both by the same number; the offset is -5 give or take whole
/// segments (the two playlists may be joined a segment apart). The
/// playlists go on past the checked frames ([`HLS_TAIL`]) and the run
/// stops first (`--duration`): a live playlist that ends is another case
/// (the run then ends, `--reconnect 0`, or the source starts again).
#[test]
fn the_command_scores_two_hls_live_playlists_aligned() {
    let _turn = one_station();
    common::pipeline::init();
    let dir = scratch_dir("live_qa_hls");
    write_pair_with_tail(&dir, HLS_TAIL);
    let (mut server, port) = http_server(&dir);
    let sending = hls_senders(&dir);
    sending.set_state(gst::State::Playing).unwrap();
    // The playlists exist once each has its first segment.
    let playlists = [dir.join("ref/live.m3u8"), dir.join("dist/live.m3u8")];
    let deadline = Instant::now() + Duration::from_secs(60);
    while !playlists
        .iter()
        .all(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains(".ts")))
    {
        assert!(
            Instant::now() < deadline,
            "no HLS segment written in a minute"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = dir.join("live.jsonl");
    let uri = |side: &str| format!("http://127.0.0.1:{port}/{side}/live.m3u8");
    let text = station(
        [&uri("ref"), &uri("dist")],
        &out,
        &["--duration", "16"],
        || {},
    );
    sending.set_state(gst::State::Null).unwrap();
    server.stop();
    let inputs = pooled_inputs(&out);
    println!("hls: {inputs}");
    let offset = first_offset(&text);
    assert_eq!((offset + LATE as i64).rem_euclid(30), 0, "{text}");
    assert_eq!(inputs["dropped_frames"], DROPPED.len(), "{text}");
    assert_eq!(inputs["duplicated_frames"], 0, "{text}");
    let at: Vec<usize> = text
        .lines()
        .filter_map(|l| l.split("dropped REF's frame ").nth(1))
        .filter_map(|r| r.split(' ').next()?.parse().ok())
        .collect();
    let joined = DROPPED[0] - at[0];
    assert_eq!(joined % 30, 0, "{text}");
    assert_eq!(at, DROPPED.map(|d| d - joined), "{text}");
    assert!(inputs["scored_frames"].as_u64().unwrap() > 200, "{text}");
}

/// Frames of the pan past the checked ones in the HLS playlists (10 s).
const HLS_TAIL: usize = 300;

/// The offset the first `align=auto` note of `text` says.
fn first_offset(text: &str) -> i64 {
    let note = text
        .lines()
        .find(|l| l.contains("align=auto:"))
        .unwrap_or_else(|| panic!("no offset found: {text}"));
    let frames = |after: &str| -> i64 {
        let n = note.split(after).nth(1).and_then(|r| r.split(' ').next());
        n.and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{note}"))
    };
    if note.contains("leads the reference by ") {
        -frames("leads the reference by ")
    } else if note.contains("lags the reference by ") {
        frames("lags the reference by ")
    } else {
        assert!(note.contains("is aligned"), "{note}");
        0
    }
}

/// The results (JSON Lines: frames, then the pooled line) of a station run
/// whose stderr is `text`: the offset, the drops where they are and no
/// duplicate checked; returns how many distorted frames were scored, or
/// showed a reference frame this machine got too late to score (late: a
/// busy machine's doing, counted apart from the transcoder's drops).
fn check_alignment(out: &std::path::Path, text: &str, scheme: &str) -> usize {
    let results = std::fs::read_to_string(out).unwrap();
    let lines: Vec<serde_json::Value> = results
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let frames = lines.iter().filter(|l| l.get("frameNum").is_some()).count();
    let inputs = lines
        .iter()
        .find_map(|l| l.get("inputs"))
        .expect("an inputs line");
    println!(
        "{scheme}: offset {} (confidence {}), dropped {}, duplicated {}, late {}, {frames} frames scored",
        inputs["offset"],
        inputs["offset_confidence"],
        inputs["dropped_frames"],
        inputs["duplicated_frames"],
        inputs["late_frames"],
    );
    assert_eq!(inputs["offset"], -(LATE as i64), "{text}");
    assert_eq!(inputs["dropped_frames"], DROPPED.len(), "{text}");
    assert_eq!(inputs["duplicated_frames"], 0, "{text}");
    for r in DROPPED {
        assert!(
            text.contains(&format!("dropped REF's frame {r} ")),
            "{r}: {text}"
        );
    }
    frames + inputs["late_frames"].as_u64().unwrap() as usize
}
