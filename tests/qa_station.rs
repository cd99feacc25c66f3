//! What a live QA station reads: rolling scores (`window` cuts each
//! rendition's frames into windows of stream time, each posted as a
//! `window` message), alerts (`alert-below` raises a warning once when a
//! window's mean falls below it and an info once when a later window is
//! back), and the metrics endpoint (`metrics-address`), scraped and parsed
//! by the Prometheus project's own Python parser.

mod common;

use common::pipeline::launch;
use gst::prelude::*;
use gstvmafhip::{VmafFrameMessage, VmafWindowMessage};

const SECOND: u64 = 1_000_000_000;

/// What the bus said: frames, windows, and the alerts' warnings and infos
/// with the window message each carries as details.
#[derive(Default, Debug)]
struct Heard {
    frames: Vec<VmafFrameMessage>,
    windows: Vec<VmafWindowMessage>,
    warnings: Vec<(String, Option<VmafWindowMessage>)>,
    infos: Vec<(String, Option<VmafWindowMessage>)>,
}

fn details(d: Option<&gst::StructureRef>) -> Option<VmafWindowMessage> {
    d.and_then(|s| VmafWindowMessage::try_from(s).ok())
}

fn play(pipeline: &gst::Pipeline) -> Heard {
    play_then(pipeline, |_| ())
}

/// Plays `pipeline` to its EOS, then calls `at_eos` before stopping it.
fn play_then(pipeline: &gst::Pipeline, at_eos: impl FnOnce(&gst::Pipeline)) -> Heard {
    let bus = pipeline.bus().unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let mut heard = Heard::default();
    while let Some(msg) = bus.timed_pop(gst::ClockTime::from_seconds(120)) {
        match msg.view() {
            gst::MessageView::Element(e) => {
                let s = e.structure().unwrap();
                if let Ok(f) = VmafFrameMessage::try_from(s) {
                    heard.frames.push(f);
                } else if let Ok(w) = VmafWindowMessage::try_from(s) {
                    heard.windows.push(w);
                }
            }
            gst::MessageView::Warning(w) => heard
                .warnings
                .push((w.error().to_string(), details(w.details()))),
            gst::MessageView::Info(i) => heard
                .infos
                .push((i.error().to_string(), details(i.details()))),
            gst::MessageView::Error(e) => panic!("{} ({:?})", e.error(), e.debug()),
            gst::MessageView::Eos(_) => break,
            _ => {}
        }
    }
    at_eos(pipeline);
    pipeline.set_state(gst::State::Null).unwrap();
    heard
}

/// 90 frames at 30 fps of a moving picture against a slightly brighter
/// copy, whose luma is blanked for frames 30 to 59: the second second's
/// VMAF collapses.
fn collapsing_second(props: &str) -> gst::Pipeline {
    let pipeline = launch(&format!(
        "videotestsrc num-buffers=90 pattern=ball ! video/x-raw,width=176,height=144,format=I420,framerate=30/1 \
         ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! videobalance brightness=0.02 ! identity name=blank ! v.dist_sink \
         vmafhip name=v frame-message=true backend=cpu {props} ! fakesink"
    ));
    let blank = pipeline.by_name("blank").unwrap();
    blank
        .static_pad("src")
        .unwrap()
        .add_probe(gst::PadProbeType::BUFFER, |_, info| {
            if let Some(gst::PadProbeData::Buffer(buf)) = &mut info.data {
                let pts = buf.pts().map_or(0, |t| t.nseconds());
                if (SECOND..2 * SECOND).contains(&pts) {
                    let b = buf.make_mut();
                    let mut map = b.map_writable().unwrap();
                    map[..176 * 144].fill(16);
                }
            }
            gst::PadProbeReturn::Ok
        });
    pipeline
}

#[test]
fn windows_summarise_their_frames_and_alert_once_each_way() {
    let heard = play(&collapsing_second("window=1000000000 alert-below=50"));
    assert_eq!(heard.frames.len(), 90);
    let spans: Vec<_> = heard
        .windows
        .iter()
        .map(|m| &m.summary)
        .map(|w| (w.first, w.last, w.frames, w.alert, w.partial))
        .collect();
    println!("windows (first, last, frames, alert, partial): {spans:?}");
    for w in heard.windows.iter().map(|m| &m.summary) {
        println!(
            "  from {} ns: mean {:.3}, harmonic mean {:.3}, min {:.3}, 1% low {:.3}",
            w.start, w.mean, w.harmonic_mean, w.min, w.low_1
        );
    }
    assert_eq!(
        spans,
        [
            (0, 29, 30, false, false),
            (30, 59, 30, true, false),
            (60, 89, 30, false, true),
        ]
    );
    for m in &heard.windows {
        let w = &m.summary;
        let scores: Vec<f64> = heard.frames[w.first as usize..=w.last as usize]
            .iter()
            .map(|f| f.score)
            .collect();
        let mean = scores.iter().sum::<f64>() / scores.len() as f64;
        let min = scores.iter().copied().fold(f64::INFINITY, f64::min);
        assert_eq!((w.mean, w.min, w.low_1), (mean, min, min), "{w:?}");
        assert_eq!(w.start, w.first / 30 * SECOND);
        assert_eq!(w.length, SECOND);
        assert_eq!((w.repeated, w.unscored), (0, 0));
        assert_eq!(m.rendition, "dist_sink");
    }
    assert!(heard.windows[0].summary.mean > 80.0 && heard.windows[1].summary.mean < 20.0);

    println!(
        "warnings: {:?}",
        heard.warnings.iter().map(|w| &w.0).collect::<Vec<_>>()
    );
    println!(
        "infos: {:?}",
        heard.infos.iter().map(|i| &i.0).collect::<Vec<_>>()
    );
    let alerts: Vec<_> = heard
        .warnings
        .iter()
        .filter(|(t, _)| t.contains("alert-below"))
        .collect();
    assert_eq!(alerts.len(), 1, "{:?}", heard.warnings);
    assert!(
        alerts[0].0.contains("below alert-below (50)"),
        "{}",
        alerts[0].0
    );
    assert_eq!(alerts[0].1.as_ref(), Some(&heard.windows[1]));
    let back: Vec<_> = heard
        .infos
        .iter()
        .filter(|(t, _)| t.contains("alert-below"))
        .collect();
    assert_eq!(back.len(), 1, "{:?}", heard.infos);
    assert!(back[0].0.contains("back at or above"), "{}", back[0].0);
    assert_eq!(back[0].1.as_ref(), Some(&heard.windows[2]));
}

#[test]
fn the_metrics_endpoint_serves_what_the_messages_say() {
    let pipeline = collapsing_second("window=1000000000 alert-below=50 metrics-address=:0");
    let mut scraped = None;
    let heard = play_then(&pipeline, |p| {
        let url: String = p
            .by_name("v")
            .unwrap()
            .property::<Option<String>>("metrics-url")
            .unwrap();
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        scraped = Some((
            common::scrape::http_get(&url),
            common::scrape::http_get(&url.replace("/metrics", "/other")),
        ));
    });
    let ((status, headers, body), (missing, _, _)) = scraped.unwrap();
    println!("{status}\n{body}");
    assert!(status.contains(" 200"), "{status}");
    assert!(missing.contains(" 404"), "{missing}");
    assert!(
        headers.contains("content-type: application/openmetrics-text; version=1.0.0"),
        "{headers}"
    );
    let samples = common::scrape::parse_openmetrics(&body);
    println!("parsed:\n{}", samples.join("\n"));
    let last = &heard.windows[2].summary;
    let expect = [
        "counter vmafhip_frames_scored_total{rendition=dist_sink} 90".to_string(),
        "counter vmafhip_frames_repeated_total{rendition=dist_sink} 0".into(),
        "counter vmafhip_frames_unscored_total{rendition=dist_sink} 0".into(),
        format!(
            "gauge vmafhip_vmaf{{rendition=dist_sink}} {:?}",
            heard.frames[89].score
        ),
        format!(
            "gauge vmafhip_window_vmaf{{rendition=dist_sink,stat=mean}} {:?}",
            last.mean
        ),
        format!(
            "gauge vmafhip_window_vmaf{{rendition=dist_sink,stat=low_1}} {:?}",
            last.low_1
        ),
        "gauge vmafhip_window_frames{rendition=dist_sink} 30".into(),
        "gauge vmafhip_alert{rendition=dist_sink} 0".into(),
        format!(
            "info vmafhip_backend_info{{backend={},rendition=dist_sink}} 1",
            heard.frames[0].backend
        ),
    ];
    for e in &expect {
        assert!(samples.contains(e), "missing {e:?} in {samples:#?}");
    }
    assert!(
        samples
            .iter()
            .any(|s| s.starts_with("gauge vmafhip_fps{rendition=dist_sink} "))
    );
}

#[test]
fn an_address_it_cannot_listen_on_fails_the_start() {
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let pipeline = collapsing_second(&format!("metrics-address=127.0.0.1:{port}"));
    let bus = pipeline.bus().unwrap();
    let _ = pipeline.set_state(gst::State::Playing);
    let error = bus
        .timed_pop_filtered(gst::ClockTime::from_seconds(60), &[gst::MessageType::Error])
        .expect("an error");
    let gst::MessageView::Error(e) = error.view() else {
        unreachable!()
    };
    pipeline.set_state(gst::State::Null).unwrap();
    let text = e.error().to_string();
    assert!(
        text.contains(&format!("metrics-address 127.0.0.1:{port}: cannot listen")),
        "{text}"
    );
}

#[test]
fn no_window_no_window_messages_and_no_alert() {
    let heard = play(&collapsing_second("alert-below=50"));
    assert_eq!(heard.frames.len(), 90);
    assert!(heard.windows.is_empty());
    assert!(heard.warnings.is_empty(), "{:?}", heard.warnings);
}

mod command_line;

/// The command on raw files at 25 fps, windows of 4 frames: the coffee
/// clip against its CRF 23 encode with frames 4 to 7 blanked. Each window
/// prints its line; the alert and the recovery each run the hook once,
/// with the window in its environment, before the command exits.
#[test]
fn the_command_prints_windows_and_runs_the_hook_at_each_crossing() {
    use command_line::*;
    let (w, h) = (576usize, 324usize);
    let frame = w * h * 3 / 2;
    let dir = scratch_dir("windows");
    let reference = common::yuv_bytes("coffee_576x324_420p8_12f_ref.yuv.zst");
    let mut distorted = common::yuv_bytes("coffee_576x324_420p8_12f_crf23.yuv.zst");
    for f in 4..8 {
        distorted[f * frame..f * frame + w * h].fill(16);
    }
    let (r, d) = (dir.join("ref.yuv"), dir.join("dist.yuv"));
    std::fs::write(&r, &reference).unwrap();
    std::fs::write(&d, &distorted).unwrap();
    let log = dir.join("alerts.log");
    let _ = std::fs::remove_file(&log);
    let hook = format!(
        "echo \"$VMAFHIP_ALERT $VMAFHIP_WINDOW_START $VMAFHIP_RENDITION\" >> {}",
        log.display()
    );
    let o = vmafhip()
        .args([s(&r), s(&d), "-w", "576", "-h", "324", "--backend", "cpu"])
        .args([
            "--window",
            "0.16",
            "--alert-below",
            "50",
            "--on-alert",
            &hook,
        ])
        .output()
        .unwrap();
    let err = stderr(&o);
    println!("{err}");
    assert!(o.status.success(), "{err}");
    let windows: Vec<&str> = err.lines().filter(|l| l.starts_with("window ")).collect();
    assert_eq!(windows.len(), 3, "{err}");
    assert!(
        windows[0].starts_with("window 0.00-0.16 s: VMAF "),
        "{}",
        windows[0]
    );
    assert!(windows[1].ends_with("4 frames [alert]"), "{}", windows[1]);
    assert!(
        windows[2].ends_with("(cut short by the end)"),
        "{}",
        windows[2]
    );
    assert!(err.contains("is below alert-below (50)"), "{err}");
    assert!(
        err.contains("is back at or above alert-below (50)"),
        "{err}"
    );
    let hooks = std::fs::read_to_string(&log).unwrap();
    println!("hook log:\n{hooks}");
    assert_eq!(hooks, "raised 0.160 dist_sink\ncleared 0.320 dist_sink\n");
}

#[test]
fn alerts_need_a_window() {
    let o = command_line::vmafhip()
        .args(["a.yuv", "b.yuv", "--alert-below", "50"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(command_line::stderr(&o).contains("give --window S"));
}
