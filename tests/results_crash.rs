//! Results files after `kill -9`. This test runs itself again as a child
//! process that scores an endless stream into a results file and prints the
//! index of every frame message the element posts; the parent kills it
//! (SIGKILL) mid-stream, then reads the file: every frame whose message was
//! posted is there, and, for JSON Lines and CSV, every line is whole.

use gst::prelude::*;
use gstvmafhip::VmafFrameMessage;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// Set in the child: the results file to write, and its format.
const CHILD: &str = "VMAFHIP_CRASH_CHILD";

/// The child: an endless pair (a moving ball against a blurred copy) into
/// `vmafhip`, frame messages printed as they come.
fn run_child(path: &str, format: &str) {
    gst::init().unwrap();
    gstvmafhip::plugin_register_static().unwrap();
    let desc = format!(
        "videotestsrc pattern=ball ! video/x-raw,format=I420,width=64,height=48,framerate=30/1 \
         ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! videobalance contrast=0.8 ! v.dist_sink \
         vmafhip name=v frame-message=true results-filename=\"{path}\" results-format={format} \
         ! fakesink sync=false"
    );
    let pipeline = gst::parse::launch(&desc).unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let bus = pipeline.bus().unwrap();
    for msg in bus.iter_timed(gst::ClockTime::NONE) {
        match msg.view() {
            gst::MessageView::Element(e) => {
                if let Some(f) = e
                    .structure()
                    .and_then(|s| VmafFrameMessage::try_from(s).ok())
                {
                    println!("posted {}", f.index);
                }
            }
            gst::MessageView::Error(e) => panic!("child: {}", e.error()),
            _ => {}
        }
    }
}

/// Runs the child on `format` into a new file, kills it once `frames`
/// messages were posted, and returns the file's text and the last index
/// posted.
fn killed_after(format: &str, frames: u64) -> (String, u64) {
    let path =
        std::env::temp_dir().join(format!("vmafhip-crash-{}-{format}.out", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &format!("killed_mid_stream_{format}"),
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD, format!("{}|{format}", path.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut last = None;
    for line in stdout.lines() {
        let line = line.unwrap();
        if let Some(i) = line.strip_prefix("posted ") {
            let i: u64 = i.trim().parse().unwrap();
            last = Some(i);
            if i + 1 >= frames {
                break;
            }
        }
    }
    child.kill().unwrap(); // SIGKILL on Unix
    let _ = child.wait();
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    (text, last.expect("the child posted frame messages"))
}

/// In the child, scores until killed; in the parent, true when the test
/// body should run.
fn parent(format: &str) -> bool {
    match std::env::var(CHILD) {
        Ok(v) => {
            let (path, f) = v.rsplit_once('|').unwrap();
            assert_eq!(f, format);
            run_child(path, format);
            false
        }
        Err(_) => true,
    }
}

#[test]
fn killed_mid_stream_jsonl() {
    if !parent("jsonl") {
        return;
    }
    let (text, last) = killed_after("jsonl", 40);
    let lines: Vec<&str> = text.lines().collect();
    let header: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(header["width"], 64);
    let mut indices = Vec::new();
    for l in &lines[1..] {
        // Every line, the last one written included, is whole JSON.
        let v: serde_json::Value =
            serde_json::from_str(l).unwrap_or_else(|e| panic!("line {l:?}: {e}"));
        assert!(v.get("pooled_metrics").is_none(), "killed before the end");
        assert!(v["metrics"]["vmaf"].as_f64().is_some(), "{l}");
        indices.push(v["frameNum"].as_u64().unwrap());
    }
    // Frames in order from 0, at least up to the last message posted.
    assert!(indices.iter().enumerate().all(|(i, &f)| f == i as u64));
    assert!(
        indices.len() as u64 > last,
        "{} frames, message {last} posted",
        indices.len()
    );
}

#[test]
fn killed_mid_stream_csv() {
    if !parent("csv") {
        return;
    }
    let (text, last) = killed_after("csv", 40);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "Frame");
    let rows: Vec<&str> = lines.collect();
    for (i, r) in rows.iter().enumerate() {
        let cells: Vec<&str> = r.split(',').collect();
        assert_eq!(cells.len(), header.len(), "row {i} whole: {r:?}");
        assert_eq!(cells[0], i.to_string());
    }
    assert!(
        rows.len() as u64 > last,
        "{} rows, message {last} posted",
        rows.len()
    );
}

#[test]
fn killed_mid_stream_json() {
    if !parent("json") {
        return;
    }
    let (text, last) = killed_after("json", 40);
    // libvmaf's JSON cut short lacks its closing part; every frame whose
    // message was posted is complete before the cut.
    let complete = text.matches("\n    }").count() as u64;
    assert!(
        complete > last,
        "{complete} whole frames, message {last} posted"
    );
    assert!(serde_json::from_str::<serde_json::Value>(&text).is_err());
}
