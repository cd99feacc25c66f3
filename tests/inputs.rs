//! What the command does with the inputs users bring: one input ending
//! before the other (exit 5, or the overlap with --allow-length-mismatch),
//! an interrupted run (SIGINT: whole results, exit 130), pairings that
//! cannot be compared, files with no video, and model names as the
//! element spells them.

mod command_line;
mod common;

use command_line::*;
use common::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A golden 4:2:0 8-bit pair (12 frames) and its frame size in bytes.
fn pair() -> (GoldenRun, PathBuf, PathBuf, usize) {
    let run = golden_run("astronaut_576x324_420p8_12f_crf35", "vmaf_v0.6.1");
    let (r, d) = run.yuv_paths();
    (run, r, d, 576 * 324 * 3 / 2)
}

const RAW: [&str; 4] = ["-w", "576", "-h", "324"];

#[test]
fn one_input_ending_first_exits_5_after_writing_its_results() {
    let (_, r, d, frame) = pair();
    let dir = scratch();
    let short = dir.join("short.yuv");
    std::fs::write(&short, &std::fs::read(&d).unwrap()[..6 * frame]).unwrap();
    let long_ref = dir.join("short_ref.yuv");
    std::fs::write(&long_ref, &std::fs::read(&r).unwrap()[..6 * frame]).unwrap();
    let out = dir.join("short.json");
    // The distorted file ends first.
    let o = vmafhip()
        .args(["-r", s(&r), "-d", s(&short), "--json", "-o", s(&out)])
        .args(RAW)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(5), "{err}");
    assert!(
        err.contains("short.yuv ended before") && err.contains("6 of 12 reference frames"),
        "{err}"
    );
    let j = json_of(&out);
    assert_eq!(j["frames"].as_array().unwrap().len(), 6);
    assert!(j["pooled_metrics"]["vmaf"]["mean"].is_number());
    assert!(j["fps"].is_number(), "fps: {}", j["fps"]);
    let inputs = &j["inputs"];
    assert_eq!(inputs["reference_frames"], 12);
    assert_eq!(inputs["distorted_frames"], 6);
    assert_eq!(inputs["scored_frames"], 6);
    assert_eq!(inputs["lengths_differ"], true);
    // ... scored as the overlap when the user means it.
    let o = vmafhip()
        .args([
            "-r",
            s(&r),
            "-d",
            s(&short),
            "--allow-length-mismatch",
            "-q",
        ])
        .args(RAW)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The reference ends first.
    let o = vmafhip()
        .args(["-r", s(&long_ref), "-d", s(&d), "-q"])
        .args(RAW)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(5), "{err}");
    assert!(err.contains("has frames past the reference's 6"), "{err}");
    // Equal lengths: 0, and the results say both had every frame.
    let out = dir.join("equal.json");
    let o = vmafhip()
        .args(["-r", s(&r), "-d", s(&d), "--json", "-o", s(&out)])
        .args(RAW)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let inputs = &json_of(&out)["inputs"];
    assert_eq!(
        (
            inputs["reference_frames"].as_u64(),
            inputs["distorted_frames"].as_u64()
        ),
        (Some(12), Some(12))
    );
    assert_eq!(inputs["lengths_differ"], false);
}

/// SIGINT mid-run: the reference comes through a named pipe that stays
/// open, so the run cannot end by itself; once frames are in the results
/// file the command is interrupted, and the file is whole JSON with the
/// pooled metrics of the frames scored, marked interrupted; exit 130.
#[test]
fn sigint_writes_whole_results_and_exits_130() {
    let (_, r, d, frame) = pair();
    let dir = scratch();
    let fifo = dir.join("live_ref.yuv");
    let _ = std::fs::remove_file(&fifo);
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    // A distorted file longer than the reference frames written below
    // can be: the golden's twelve frames, five times over.
    let long = dir.join("long_dist.yuv");
    std::fs::write(&long, std::fs::read(&d).unwrap().repeat(5)).unwrap();
    let out = dir.join("interrupted.json");
    let _ = std::fs::remove_file(&out);
    let mut child = vmafhip()
        .args([
            "-r",
            s(&fifo),
            "-d",
            s(&long),
            "--json",
            "-o",
            s(&out),
            "-q",
        ])
        .args(RAW)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Opening the pipe's write end waits for the command to open it.
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    // Frames reach the results file as they become final, which the
    // frames after them bring about: reference frames are written, one at
    // a time (each write waits for the command to read), until frame 3 is
    // in the file. No timing is assumed.
    let reference = std::fs::read(&r).unwrap();
    let mut written = 0;
    while !std::fs::read_to_string(&out)
        .unwrap_or_default()
        .contains("\"frameNum\": 3")
    {
        assert!(
            written < 60,
            "no frame 3 in the results after {written} frames"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the command ended before it was interrupted"
        );
        let k = written % 12;
        writer
            .write_all(&reference[k * frame..(k + 1) * frame])
            .unwrap();
        writer.flush().unwrap();
        written += 1;
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    drop(writer);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let j = json_of(&out);
    let frames = j["frames"].as_array().unwrap().len();
    assert!(
        (4..=written).contains(&frames),
        "{frames} frames of {written} written"
    );
    assert!(j["pooled_metrics"]["vmaf"]["mean"].is_number());
    assert_eq!(j["inputs"]["interrupted"], true);
    assert_eq!(j["inputs"]["scored_frames"], frames);
    eprintln!("interrupted after {frames} frames of {written}: whole JSON, exit 130");
}

/// Pairings that cannot be compared are refused at start, in one line
/// naming both files and what differs; a file with no video says so.
#[test]
fn pairings_that_cannot_be_compared_fail_at_start() {
    let (_, r, _, frame) = pair();
    let dir = scratch();
    // The same pictures at 10 bits, as a Y4M file.
    let bytes = std::fs::read(&r).unwrap();
    let mut y4m = b"YUV4MPEG2 W576 H324 F25:1 Ip A1:1 C420p10\n".to_vec();
    for f in bytes.chunks_exact(frame) {
        y4m.extend_from_slice(b"FRAME\n");
        for &v in f {
            y4m.extend_from_slice(&(u16::from(v) << 2).to_le_bytes());
        }
    }
    let ten = dir.join("ten.y4m");
    std::fs::write(&ten, y4m).unwrap();
    let o = vmafhip()
        .args(["-r", s(&r), "-d", s(&ten)])
        .args(RAW)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.lines().count() == 1
            && err.contains("is 8-bit 4:2:0")
            && err.contains("ten.y4m is 10-bit 4:2:0"),
        "{err}"
    );
    // An audio-only file: a clear error at once, from the parse.
    let wav = dir.join("audio.wav");
    let made = Command::new("gst-launch-1.0")
        .args([
            "-q",
            "audiotestsrc",
            "num-buffers=20",
            "!",
            "wavenc",
            "!",
            "filesink",
        ])
        .arg(format!("location={}", s(&wav)))
        .status()
        .unwrap();
    assert!(made.success());
    let t0 = std::time::Instant::now();
    let o = vmafhip().args([s(&wav), s(&wav)]).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("audio.wav has no video stream"), "{err}");
    eprintln!(
        "audio-only: {err:?} after {:.2} s",
        t0.elapsed().as_secs_f64()
    );
}

/// `--model vmaf_v0.6.1neg` (the element's spelling) is libvmaf's
/// `version=vmaf_v0.6.1neg`; an unknown bare name lists the built-in ones.
#[test]
fn bare_model_names_work_as_the_element_spells_them() {
    let (_, r, d, _) = pair();
    let dir = scratch();
    let (a, b) = (dir.join("bare.json"), dir.join("version.json"));
    for (model, out) in [("vmaf_v0.6.1neg", &a), ("version=vmaf_v0.6.1neg", &b)] {
        let o = vmafhip()
            .args([
                "-r",
                s(&r),
                "-d",
                s(&d),
                "--model",
                model,
                "--json",
                "-o",
                s(out),
                "-q",
            ])
            .args(RAW)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{model}: {}", stderr(&o));
    }
    assert_eq!(json_of(&a)["frames"], json_of(&b)["frames"]);
    let o = vmafhip()
        .args(["-r", s(&r), "-d", s(&d), "--model", "vmaf_v9"])
        .args(RAW)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("vmaf_v9: not a built-in model") && err.contains("vmaf_v1.0.16_3d0h"),
        "{err}"
    );
}

/// Encodes the golden reference's first `frames` frames through `chain`
/// (gst-launch-1.0 words, from the raw I420 frames to the muxer) into `out`.
fn encode(r: &Path, frames: usize, chain: &[&str], out: &Path) {
    let made = Command::new("gst-launch-1.0")
        .args(["-q", "filesrc"])
        .arg(format!("location={}", s(r)))
        .arg("num-buffers=1")
        .arg(format!("blocksize={}", frames * 576 * 324 * 3 / 2))
        .args([
            "!",
            "rawvideoparse",
            "width=576",
            "height=324",
            "format=i420",
        ])
        .args(["framerate=25/1", "!"])
        .args(chain)
        .args(["!", "filesink"])
        .arg(format!("location={}", s(out)))
        .status()
        .unwrap();
    assert!(made.success(), "{chain:?}");
}

/// The golden reference's first six frames, x264 at `profile`, in an MP4.
fn h264_mp4(r: &Path, profile: &str, out: &Path) {
    let caps = format!("video/x-h264,profile={profile}");
    let x264 = ["x264enc", "pass=quant", "quantizer=30", "threads=1", "!"];
    encode(
        r,
        6,
        &[&x264[..], &[caps.as_str(), "!", "mp4mux"]].concat(),
        out,
    );
}

/// Only decoders that decode exactly: without gst-libav, a High-profile
/// H.264 file is refused, naming the package, rather than decoded by
/// OpenH264 (whose frames differ); a Constrained Baseline one, which
/// OpenH264 decodes exactly, scores as libavcodec's frames do.
#[test]
fn only_decoders_that_decode_exactly() {
    let (_, r, _, _) = pair();
    let dir = scratch();
    let (high, cbp) = (dir.join("high.mp4"), dir.join("cbp.mp4"));
    h264_mp4(&r, "high", &high);
    h264_mp4(&r, "constrained-baseline", &cbp);
    let score = |dist: &Path, no_libav: bool| {
        let mut c = vmafhip();
        c.args([
            "-r",
            s(&r),
            "-d",
            s(dist),
            "--backend",
            "cpu",
            "--allow-length-mismatch",
        ])
        .args(RAW);
        if no_libav {
            c.env("GST_PLUGIN_FEATURE_RANK", "avdec_h264:NONE");
        }
        c.output().unwrap()
    };
    let o = score(&high, true);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("high.mp4: no decoder that decodes video/x-h264 exactly")
            && err.contains("install gstreamer1.0-libav"),
        "{err}"
    );
    let summary = |o: &Output| {
        let err = stderr(o);
        assert_eq!(o.status.code(), Some(0), "{err}");
        err.lines()
            .find(|l| l.starts_with("VMAF "))
            .map(|l| (l.split(',').next().unwrap().to_string(), l.to_string()))
            .unwrap()
    };
    let (with_libav, line) = summary(&score(&cbp, false));
    assert!(line.ends_with("decoded with raw / avdec_h264"), "{line}");
    let (openh264, line) = summary(&score(&cbp, true));
    assert!(line.ends_with("decoded with raw / openh264dec"), "{line}");
    assert_eq!(with_libav, openh264);
}

/// A decoder that conforms but cannot output the stream's format is not
/// used: without gst-libav, a 10-bit HEVC file is refused rather than
/// decoded by GStreamer 1.22's libde265dec (8-bit 4:2:0 only: it would hand
/// over truncated samples).
#[test]
fn a_decoder_that_cannot_output_the_streams_depth_is_not_used() {
    let (_, r, _, _) = pair();
    let hevc = scratch().join("hevc10.mp4");
    let to_10_bits = ["videoconvert", "!", "video/x-raw,format=I420_10LE", "!"];
    let x265 = ["x265enc", "!", "h265parse", "!", "mp4mux"];
    encode(&r, 1, &[&to_10_bits[..], &x265[..]].concat(), &hevc);
    let o = vmafhip()
        .args([s(&hevc), s(&hevc), "--backend", "cpu", "--decoder", "cpu"])
        .env("GST_PLUGIN_FEATURE_RANK", "avdec_h265:NONE")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("hevc10.mp4: no decoder that decodes video/x-h265 exactly")
            && err.contains("install gstreamer1.0-libav (avdec_h265)"),
        "{err}"
    );
    // libde265dec takes Main 10 streams it cannot output before GStreamer
    // 1.28; from 1.28 its caps say it takes Main alone, and it is not
    // offered for this stream at all.
    gst::init().unwrap();
    let main10: gst::Caps = "video/x-h265,profile=main-10,stream-format=hvc1,alignment=au"
        .parse()
        .unwrap();
    let libde265 =
        gst::ElementFactory::find("libde265dec").is_some_and(|f| f.can_sink_any_caps(&main10));
    if libde265 {
        assert!(
            err.contains("libde265dec is installed, but it cannot output 10-bit 4:2:0"),
            "{err}"
        );
    }
}

fn scratch() -> PathBuf {
    scratch_dir("inputs")
}
