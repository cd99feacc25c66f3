//! Memory stays flat however long the stream: the element keeps pooled
//! statistics as running sums and streams per-frame results to the file, so
//! the process's resident memory must not grow with the frame count. Alone
//! in its own test binary (one test, one process) so that no other test's
//! allocations move the measurement.

use gst::prelude::*;
use gstvmafhip::{VmafFrameMessage, VmafPooledMessage};

/// Resident set size of this process, in KiB (Linux).
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status")
}

#[test]
fn resident_memory_is_flat_over_a_long_stream() {
    gst::init().unwrap();
    gstvmafhip::plugin_register_static().unwrap();
    let dir = std::env::temp_dir().join(format!("vmafhip-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("long.json");
    let total = 30_000u64;
    // The unfixed element grew by about 300 bytes a frame (9 MB here).
    let desc = format!(
        "videotestsrc num-buffers={total} pattern=ball ! video/x-raw,format=I420,width=64,height=48,framerate=1000/1 \
         ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! videoflip method=horizontal-flip ! v.dist_sink \
         vmafhip name=v backend=cpu threads=1 frame-message=true results-filename={} ! fakesink",
        file.display()
    );
    let pipeline = gst::parse::launch(&desc)
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap();
    let bus = pipeline.bus().unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let (mut frames, mut pooled) = (0u64, None);
    let mut samples = Vec::new();
    while let Some(msg) = bus.timed_pop(gst::ClockTime::from_seconds(120)) {
        match msg.view() {
            gst::MessageView::Element(e) => {
                let s = e.structure().unwrap();
                if VmafFrameMessage::try_from(s).is_ok() {
                    frames += 1;
                    if frames % 5_000 == 0 {
                        samples.push((frames, rss_kib()));
                    }
                } else if let Ok(p) = VmafPooledMessage::try_from(s) {
                    pooled = Some(p);
                }
            }
            gst::MessageView::Error(e) => panic!("{} ({:?})", e.error(), e.debug()),
            gst::MessageView::Eos(_) => break,
            _ => {}
        }
    }
    pipeline.set_state(gst::State::Null).unwrap();
    eprintln!("frames, RSS KiB: {samples:?}");
    assert_eq!(frames, total);
    let p = pooled.expect("a pooled message at EOS");
    assert_eq!(p.frames, total);
    // After warm-up (the first 5,000 frames) the resident set stays within 1 MiB.
    let warm = samples[0].1;
    let peak = samples.iter().map(|s| s.1).max().unwrap();
    assert!(
        peak <= warm + 1024,
        "RSS grew from {warm} KiB to {peak} KiB over {total} frames: {samples:?}"
    );
    // The results file is complete: one record per frame and the pooled block.
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.matches("\"frameNum\"").count() as u64, total);
    assert!(text.contains("\"pooled_metrics\""), "no pooled block");
    assert!(text.trim_end().ends_with('}'), "file not closed");
    std::fs::remove_dir_all(&dir).unwrap();
}
