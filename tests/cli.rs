//! The `vmafhip` command: libvmaf's numbers from raw, Y4M and re-muxed
//! inputs, scaling, frame rates matched by time, progress, and an exit
//! status and message naming the file for each kind of bad input.

mod command_line;
mod common;

use command_line::*;
use common::*;
use gst::prelude::*;
use gstvmafhip::vmaf::{Engine, EngineConfig, Picture, PixelFormat, Plane, Scorer};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The CLI's arguments that reproduce a golden run's libvmaf command.
fn run_args(run: &GoldenRun) -> Vec<String> {
    let mut a = vec!["--model".to_string(), run.model.clone()];
    for (on, f) in [
        (run.psnr, "psnr"),
        (run.ssim, "float_ssim"),
        (run.ms_ssim, "float_ms_ssim"),
    ] {
        if on {
            a.extend(["--feature".into(), f.into()]);
        }
    }
    for f in &run.features {
        a.extend(["--feature".into(), f.clone()]);
    }
    a.extend(["--subsample".into(), run.subsample.to_string()]);
    a
}

fn raw_args(run: &GoldenRun) -> Vec<String> {
    ["-w", &run.width.to_string(), "-h", &run.height.to_string()]
        .into_iter()
        .chain(["-p", run.p_arg(), "-b", &run.bpc.to_string()])
        .map(String::from)
        .collect()
}

/// Runs the CLI on two inputs with JSON output; returns (output, JSON).
fn score(r: &Path, d: &Path, extra: &[String], tag: &str) -> (Output, Option<Value>) {
    let out = scratch().join(format!("{tag}.json"));
    let _ = std::fs::remove_file(&out);
    let o = vmafhip()
        .args([s(r), s(d), "--json", "-o", s(&out)])
        .args(extra)
        .output()
        .unwrap();
    let json = o.status.success().then(|| json_of(&out));
    (o, json)
}

#[test]
fn cli_reproduces_libvmaf_on_every_golden_run() {
    let mut failures = Vec::new();
    let mut compared = 0;
    let runs = golden_runs()
        .into_iter()
        .chain(golden_runs_v1())
        .chain(golden_runs_features())
        .chain(common::golden_runs_options());
    for run in runs {
        let (r, d) = run.yuv_paths();
        let mut extra = raw_args(&run);
        extra.extend(run_args(&run));
        extra.push("--quiet".into());
        let (o, json) = score(&r, &d, &extra, &format!("{}-{}", run.pair, run.run));
        let Some(json) = json else {
            failures.push(format!("{} {}: failed: {}", run.pair, run.run, stderr(&o)));
            continue;
        };
        for bad in compare_json(&json, &run.expected()) {
            failures.push(format!("{} {}: {bad}", run.pair, run.run));
        }
        compared += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("{compared} golden runs compared through the command");
    assert!(compared >= 47, "only {compared} runs compared");
}

/// A Y4M file of a raw one: its header, then `FRAME` and each frame.
fn write_y4m(raw: &Path, run: &GoldenRun, fps: &str, repeat: usize, out: &Path) {
    let bytes = std::fs::read(raw).unwrap();
    let (w, h) = (run.width, run.height);
    let c = match (run.p_arg(), run.bpc) {
        ("420", 8) => "420jpeg".to_string(),
        (p, 8) => p.to_string(),
        (p, b) => format!("{p}p{b}"),
    };
    let frame = (w * h + 2 * w.div_ceil(2) * h.div_ceil(2)) * if run.bpc > 8 { 2 } else { 1 };
    assert_eq!(run.p_arg(), "420");
    let mut y4m = format!("YUV4MPEG2 W{w} H{h} F{fps} Ip A1:1 C{c}\n").into_bytes();
    for f in bytes.chunks_exact(frame) {
        for _ in 0..repeat {
            y4m.extend_from_slice(b"FRAME\n");
            y4m.extend_from_slice(f);
        }
    }
    std::fs::write(out, y4m).unwrap();
}

/// Re-muxes a raw file with GStreamer: lossless FFV1 in Matroska, or the
/// raw frames themselves in Matroska; `scale` resizes on the way.
fn remux(raw: &Path, run: &GoldenRun, codec: &str, scale: Option<(u32, u32)>, out: &Path) {
    remux_late(raw, run, codec, scale, 0, out)
}

/// As [`remux`], every timestamp `late_ns` later (the file's first frame
/// is presented at `late_ns`).
fn remux_late(
    raw: &Path,
    run: &GoldenRun,
    codec: &str,
    scale: Option<(u32, u32)>,
    late_ns: u64,
    out: &Path,
) {
    let format = if run.bpc > 8 { "i420-10le" } else { "i420" };
    let resize = scale.map_or(String::new(), |(w, h)| {
        format!("! videoscale ! video/x-raw,width={w},height={h} ")
    });
    let desc = format!(
        "filesrc location=\"{}\" ! rawvideoparse width={} height={} format={format} framerate=25/1 \
         {resize}! identity name=late ! {codec} ! matroskamux ! filesink location=\"{}\"",
        s(raw),
        run.width,
        run.height,
        s(out)
    );
    run_gst_with(&desc, |p| {
        // The muxer stamps frames with their running time: an offset there
        // presents the first frame late.
        let late = p.by_name("late").unwrap().static_pad("src").unwrap();
        late.set_offset(late_ns as i64);
    });
}

#[test]
fn cli_reads_y4m_and_remuxed_files_exactly() {
    let dir = scratch();
    let mut failures = Vec::new();
    for (pair, name) in [
        ("astronaut_576x324_420p8_12f_crf23", "vmaf_v0.6.1"),
        ("rocket_576x324_420p10_6f_crf30", "vmaf_v1.0.16_3d0h"),
    ] {
        let run = golden_run(pair, name);
        let (r, d) = run.yuv_paths();
        let want = run.expected();
        let file = |ext: &str, which: &str| dir.join(format!("{pair}-{which}.{ext}"));
        for (which, raw) in [("ref", &r), ("dis", &d)] {
            write_y4m(raw, &run, "25:1", 1, &file("y4m", which));
            remux(raw, &run, "avenc_ffv1", None, &file("ffv1.mkv", which));
            if run.bpc == 8 {
                remux(raw, &run, "identity", None, &file("raw.mkv", which));
            }
        }
        // A distorted file whose first frame is presented two frames late
        // (as MP4s with B-frames and no edit list are): the demuxer starts
        // its time at that frame, so frames still pair one to one.
        remux_late(
            &d,
            &run,
            "avenc_ffv1",
            None,
            80_000_000,
            &file("late.mkv", "dis"),
        );
        let mut cases = vec![
            ("y4m", file("y4m", "ref"), file("y4m", "dis")),
            ("ffv1.mkv", file("ffv1.mkv", "ref"), file("ffv1.mkv", "dis")),
            ("raw ref, ffv1.mkv dist", r.clone(), file("ffv1.mkv", "dis")),
            (
                "ffv1.mkv, dist 80 ms late",
                file("ffv1.mkv", "ref"),
                file("late.mkv", "dis"),
            ),
        ];
        if run.bpc == 8 {
            cases.push(("raw.mkv", file("raw.mkv", "ref"), file("raw.mkv", "dis")));
        }
        for (what, a, b) in cases {
            let mut extra = raw_args(&run);
            extra.extend(run_args(&run));
            extra.push("--quiet".into());
            let (o, json) = score(
                &a,
                &b,
                &extra,
                &format!("{pair}-{}", what.replace([' ', ','], "_")),
            );
            match json {
                None => failures.push(format!("{pair} {what}: {}", stderr(&o))),
                Some(j) => failures.extend(
                    compare_json(&j, &want)
                        .into_iter()
                        .map(|b| format!("{pair} {what}: {b}")),
                ),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn cli_scales_a_smaller_distorted_video_and_says_so() {
    let run = golden_run("astronaut_576x324_420p8_12f_crf23", "vmaf_v0.6.1");
    let (r, d) = run.yuv_paths();
    let small = scratch().join("astronaut-dis-288x162.mkv");
    remux(&d, &run, "avenc_ffv1", Some((288, 162)), &small);
    let mut extra = raw_args(&run);
    extra.extend(run_args(&run));
    let (o, json) = score(&r, &small, &extra, "scaled");
    let err = stderr(&o);
    let json = json.unwrap_or_else(|| panic!("{err}"));
    assert!(
        err.contains("note: scaling")
            && err.contains("from 288x162 to the reference's 576x324 in the engine (bicubic)"),
        "{err}"
    );
    assert_eq!(json["frames"].as_array().unwrap().len(), 12);
    // Halving and upscaling loses detail: lower than the unscaled encode.
    let scaled = json["pooled_metrics"]["vmaf"]["mean"].as_f64().unwrap();
    let full = run.expected()["pooled_metrics"]["vmaf"]["mean"]
        .as_f64()
        .unwrap();
    assert!(scaled < full - 5.0, "scaled {scaled}, full {full}");
    // --no-scale refuses, naming both sizes.
    let o = vmafhip()
        .args([s(&r), s(&small), "--no-scale", "--quiet"])
        .args(raw_args(&run))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("astronaut-dis-288x162.mkv is 288x162")
            && stderr(&o).contains("sizes differ"),
        "{}",
        stderr(&o)
    );
}

/// A 50 fps distorted file that shows each 25 fps frame twice: each
/// reference frame meets the distorted frame shown at its time, so the
/// scores are libvmaf's for the 25 fps pair.
#[test]
fn cli_pairs_frames_by_time_when_rates_differ() {
    let run = golden_run("astronaut_576x324_420p8_12f_crf23", "vmaf_v0.6.1");
    let (r, d) = run.yuv_paths();
    let dir = scratch();
    let (r25, d50) = (dir.join("rate-ref25.y4m"), dir.join("rate-dis50.y4m"));
    write_y4m(&r, &run, "25:1", 1, &r25);
    write_y4m(&d, &run, "50:1", 2, &d50);
    let (o, json) = score(&r25, &d50, &run_args(&run), "rates");
    let err = stderr(&o);
    let json = json.unwrap_or_else(|| panic!("{err}"));
    assert!(err.contains("note: frame rates differ"), "{err}");
    let bad = compare_json(&json, &run.expected());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A raw master against its 30 fps encode: the raw side takes the
/// encode's rate, so every frame meets its own encoded frame, as with
/// `--fps 30` (at the raw default of 25 fps they would drift apart).
#[test]
fn cli_raw_master_takes_the_encodes_frame_rate() {
    if gst::init().is_ok() && gst::ElementFactory::find("h264parse").is_none() {
        panic!("h264parse missing: .ci/setup installs gstreamer1.0-plugins-bad");
    }
    let run = golden_run("coffee_576x324_420p8_12f_crf35", "vmaf_v0.6.1");
    let (r, _) = run.yuv_paths();
    let enc = scratch().join("master-30fps.mp4");
    run_gst(&format!(
        "filesrc location=\"{}\" ! rawvideoparse width=576 height=324 format=i420 framerate=30/1 \
         ! x264enc bitrate=300 speed-preset=veryfast ! video/x-h264,profile=high ! h264parse \
         ! mp4mux ! filesink location=\"{}\"",
        s(&r),
        s(&enc)
    ));
    let raw = ["-w", "576", "-h", "324"].map(String::from);
    let (o, taken) = score(&r, &enc, &raw, "raw-takes-rate");
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("takes") && err.contains("frame rate, 30/1"),
        "{err}"
    );
    let mut given = raw.to_vec();
    given.extend(["--fps".into(), "30".into()]);
    let (o, at_30) = score(&r, &enc, &given, "raw-given-rate");
    assert!(o.status.success(), "{}", stderr(&o));
    let (taken, at_30) = (taken.unwrap(), at_30.unwrap());
    assert_eq!(taken["frames"].as_array().unwrap().len(), 12);
    assert_eq!(taken["frames"], at_30["frames"]);
    assert_eq!(taken["pooled_metrics"], at_30["pooled_metrics"]);
}

/// A media file cut short fails fast, naming what is missing: an MP4
/// whose index (at its end) is gone is refused at start; a Matroska file
/// cut in half ends early, and the command says after how many frames.
#[test]
fn cli_a_truncated_file_fails_naming_what_is_missing() {
    let run = golden_run("coffee_576x324_420p8_12f_crf35", "vmaf_v0.6.1");
    let (r, _) = run.yuv_paths();
    let dir = scratch();
    let mut cut = Vec::new();
    for mux in ["mp4mux", "matroskamux"] {
        let whole = dir.join(format!("whole-{mux}"));
        run_gst(&format!(
            "filesrc location=\"{}\" ! rawvideoparse width=576 height=324 format=i420 framerate=25/1 \
             ! x264enc speed-preset=veryfast key-int-max=4 ! h264parse ! {mux} ! filesink location=\"{}\"",
            s(&r),
            s(&whole)
        ));
        let bytes = std::fs::read(&whole).unwrap();
        let half = dir.join(format!("half-{mux}"));
        std::fs::write(&half, &bytes[..bytes.len() / 2]).unwrap();
        cut.push(half);
    }
    let raw = ["-w", "576", "-h", "324"];
    let o = vmafhip().arg(&r).arg(&cut[0]).args(raw).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("damaged or incomplete"), "{err}");
    let o = vmafhip().arg(&r).arg(&cut[1]).args(raw).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(5), "{err}");
    assert!(
        err.contains("ended before") && err.contains("of 12 reference frames were scored"),
        "{err}"
    );
}

#[test]
fn cli_version_names_the_libvmaf_it_matches() {
    let o = vmafhip().arg("--version").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.starts_with(&format!("vmafhip {}", env!("CARGO_PKG_VERSION")))
            && text.contains("libvmaf f85a8536 (3.2.0)")
            && text.contains("GPU runtime: "),
        "{text}"
    );
}

/// The engine's options in `--help` are `vmaf::settings`' own (name,
/// help, default), as the element's properties are; `--vendor` takes
/// the property's values and names them when given another.
#[test]
fn cli_engine_options_come_from_the_settings() {
    use gstvmafhip::vmaf::settings::*;
    let o = vmafhip().arg("--help").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let help = String::from_utf8(o.stdout).unwrap();
    // The help as one line of words: wrapping aside, each setting's text.
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let shown = [
        (
            SUBSAMPLE.flag(),
            SUBSAMPLE.help,
            SUBSAMPLE.default.to_string(),
        ),
        (THREADS.flag(), THREADS.help, THREADS.default.to_string()),
        (BACKEND.flag(), BACKEND.help, BACKEND.default.to_string()),
        (VENDOR.flag(), VENDOR.help, VENDOR.default.to_string()),
        (
            ON_GPU_ERROR.flag(),
            ON_GPU_ERROR.help,
            ON_GPU_ERROR.default.to_string(),
        ),
        (
            GPU_RETRY_DELAY.flag(),
            GPU_RETRY_DELAY.help,
            GPU_RETRY_DELAY.default.to_string(),
        ),
        (
            DEVICE_ID.flag(),
            DEVICE_ID.help,
            DEVICE_ID.default.to_string(),
        ),
    ];
    for (flag, text, default) in shown {
        let tail = &words(text)[1..];
        assert!(
            flat.contains(&format!("{flag} "))
                && flat.contains(&format!("{tail} (default {default})")),
            "{flag}: {help}"
        );
    }
    let run = golden_run("astronaut_576x324_420p8_12f_crf23", "vmaf_v0.6.1");
    let (r, d) = run.yuv_paths();
    let o = vmafhip()
        .args([s(&r), s(&d), "--vendor", "intel"])
        .args(raw_args(&run))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--vendor intel: use auto, amd, nvidia"),
        "{}",
        stderr(&o)
    );
    let o = vmafhip()
        .args([
            s(&r),
            s(&d),
            "--vendor",
            "amd",
            "--backend",
            "auto",
            "--quiet",
            "--json",
        ])
        .args(raw_args(&run))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// `vmafhip … --json | head -1`: the reader goes first, and the command
/// ends quietly (no panic, status 0), as `cat` does.
#[test]
fn cli_a_closed_output_pipe_ends_it_quietly() {
    let run = golden_run("astronaut_576x324_420p8_12f_crf23", "vmaf_v0.6.1");
    let (r, d) = run.yuv_paths();
    let mut child = vmafhip()
        .args([s(&r), s(&d), "--json", "--quiet"])
        .args(raw_args(&run))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The reader closes before anything is written.
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(
        o.status.success() && !err.contains("panicked"),
        "{:?}: {err}",
        o.status
    );
}

#[test]
fn cli_shows_progress_and_prints_results_on_stdout() {
    let run = golden_run("astronaut_576x324_420p8_12f_crf23", "vmaf_v0.6.1");
    let (r, d) = run.yuv_paths();
    let o = vmafhip()
        .args([s(&r), s(&d), "--progress", "--csv"])
        .args(raw_args(&run))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("frame 12/12 (100%)") && err.contains("ETA") && err.contains(" fps  VMAF "),
        "{err}"
    );
    assert!(err.contains("VMAF 99.46"), "{err}");
    let csv = String::from_utf8(o.stdout).unwrap();
    assert!(csv.starts_with("Frame,"), "{csv}");
    assert_eq!(csv.lines().count(), 13, "{csv}");
    // --quiet: nothing on stderr.
    let o = vmafhip()
        .args([s(&r), s(&d), "--quiet", "--json"])
        .args(raw_args(&run))
        .output()
        .unwrap();
    assert!(o.status.success() && o.stderr.is_empty(), "{}", stderr(&o));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["frames"].as_array().unwrap().len(), 12);
}

#[test]
fn cli_names_the_file_and_the_problem_with_its_own_exit_status() {
    let run = golden_run("astronaut_576x324_420p8_12f_crf23", "vmaf_v0.6.1");
    let (r, d) = run.yuv_paths();
    let dir = scratch();
    let text = dir.join("notes.mp4");
    std::fs::write(&text, "these are not video frames\n".repeat(100)).unwrap();
    let odd = dir.join("odd.yuv");
    std::fs::write(&odd, vec![0u8; 576 * 324 * 3 / 2 + 7]).unwrap();
    let cut = dir.join("cut.y4m");
    write_y4m(&d, &run, "25:1", 1, &cut);
    let bytes = std::fs::read(&cut).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 1000]).unwrap();
    let missing = dir.join("missing.mp4");
    let raw = raw_args(&run);
    let cases: Vec<(Vec<&str>, i32, Vec<&str>)> = vec![
        (
            vec![s(&r), s(&missing)],
            3,
            vec!["missing.mp4", "No such file"],
        ),
        (
            vec![s(&text), s(&d)],
            3,
            vec!["notes.mp4", "not a media file"],
        ),
        (
            vec![s(&r), s(&odd)],
            3,
            vec!["odd.yuv", "not a whole number of 576x324"],
        ),
        (
            vec![s(&r), s(&cut)],
            5,
            vec!["cut.y4m", "frame 11: truncated"],
        ),
        (vec![s(&r)], 2, vec!["two inputs"]),
    ];
    for (args, code, needles) in cases {
        let o = vmafhip()
            .args(&args)
            .args(&raw)
            .arg("--quiet")
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: {err}");
        }
    }
    // Raw input without its size is a usage error naming the file.
    let o = vmafhip().args([s(&r), s(&d)]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("needs -w WIDTH and -h HEIGHT"),
        "{}",
        stderr(&o)
    );
    // --backend hip: exit 4 where no GPU is usable, a GPU score where one is.
    let o = vmafhip()
        .args([s(&r), s(&d), "--backend", "hip"])
        .args(&raw)
        .output()
        .unwrap();
    let err = stderr(&o);
    match o.status.code() {
        Some(0) => assert!(err.contains("VMAF 99.46") && err.contains("hip:"), "{err}"),
        Some(4) => assert!(err.contains("backend=hip: no usable GPU"), "{err}"),
        other => panic!("--backend hip: exit {other:?}: {err}"),
    }
}

/// A pairs list of three golden pairs (each line `REF,DIST,OUTPUT`).
fn three_pairs(dir: &Path, tag: &str) -> (Vec<GoldenRun>, PathBuf) {
    let runs: Vec<GoldenRun> = ["crf23", "crf35", "blur"]
        .iter()
        .map(|d| golden_run(&format!("astronaut_576x324_420p8_12f_{d}"), "vmaf_v0.6.1"))
        .collect();
    let mut list = String::from("ref,dist,output\n# three renditions of one source\n");
    for (k, run) in runs.iter().enumerate() {
        let (r, d) = run.yuv_paths();
        let out = dir.join(format!("{tag}-pair{k}.json"));
        let _ = std::fs::remove_file(&out);
        list.push_str(&format!("{},{},{}\n", s(&r), s(&d), s(&out)));
    }
    let path = dir.join(format!("{tag}.csv"));
    std::fs::write(&path, list).unwrap();
    (runs, path)
}

/// Raw 576x324 inputs, with every metric the golden JSON holds (so that
/// chroma is read too).
const RAW_576: [&str; 10] = [
    "-w",
    "576",
    "-h",
    "324",
    "--feature",
    "psnr",
    "--feature",
    "float_ssim",
    "--feature",
    "float_ms_ssim",
];

/// `--pairs` with three pairs, three at once, gives each pair the results
/// of its own run, file for file, and a summary with one row each.
#[test]
fn cli_pairs_list_equals_single_runs() {
    let dir = scratch();
    let (runs, list) = three_pairs(&dir, "pairs3");
    let summary = dir.join("pairs3-summary.csv");
    let o = vmafhip()
        .args([
            "--pairs",
            s(&list),
            "--jobs",
            "3",
            "--backend",
            "cpu",
            "--json",
        ])
        .args(["--summary", s(&summary)])
        .args(RAW_576)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        stderr(&o).contains("3 of 3 pairs scored, 36 frames"),
        "{}",
        stderr(&o)
    );
    let csv = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(csv.lines().count(), 4, "{csv}");
    for (k, run) in runs.iter().enumerate() {
        let (r, d) = run.yuv_paths();
        let (single, json) = score(
            &r,
            &d,
            &[
                RAW_576.map(String::from).to_vec(),
                vec!["--backend".into(), "cpu".into()],
            ]
            .concat(),
            &format!("single{k}"),
        );
        assert!(single.status.success(), "{}", stderr(&single));
        let from_list = json_of(&dir.join(format!("pairs3-pair{k}.json")));
        let single = json.unwrap();
        assert_eq!(from_list["frames"], single["frames"], "pair {k}");
        assert_eq!(
            from_list["pooled_metrics"], single["pooled_metrics"],
            "pair {k}"
        );
        assert!(
            compare_json(&from_list, &run.expected()).is_empty(),
            "pair {k}"
        );
        let mean = format!(
            "{:.6}",
            single["pooled_metrics"]["vmaf"]["mean"].as_f64().unwrap()
        );
        assert!(table.contains(&mean), "{table} lacks {mean}");
        assert!(csv.lines().nth(k + 1).unwrap().contains(&mean), "{csv}");
    }
}

/// `--shard I/N` over one list: the shards together score every pair once.
#[test]
fn cli_shards_split_a_list_with_nothing_lost_or_twice() {
    let dir = scratch();
    let (_, list) = three_pairs(&dir, "shards");
    let mut scored = Vec::new();
    for i in 0..2 {
        let summary = dir.join(format!("shards-{i}.csv"));
        let o = vmafhip()
            .args([
                "--pairs",
                s(&list),
                "--shard",
                &format!("{i}/2"),
                "--backend",
                "cpu",
            ])
            .args(["--summary", s(&summary), "-q"])
            .args(RAW_576)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let csv = std::fs::read_to_string(&summary).unwrap();
        scored.extend(csv.lines().skip(1).map(|l| {
            l.split(',')
                .find(|f| f.ends_with(".json"))
                .unwrap()
                .to_string()
        }));
    }
    scored.sort();
    let mut want: Vec<String> = (0..3)
        .map(|k| s(&dir.join(format!("shards-pair{k}.json"))).to_string())
        .collect();
    want.sort();
    assert_eq!(scored, want);
    for w in &want {
        assert!(Path::new(w).exists(), "{w} not written");
    }
}

/// A list refused before any pair runs ends with its usage error, every
/// time: the run waits for the GPU being opened on another thread before
/// exiting (exiting under the GPU runtime's initialisation aborted about
/// one run in fifty here, with ROCm's libamdhip64 present and no GPU).
#[test]
fn cli_an_early_error_never_aborts_while_the_gpu_opens() {
    let dir = scratch();
    let clash = dir.join("clash-again.csv");
    std::fs::write(&clash, "a/x.yuv,b/d.yuv\nc/y.yuv,e/d.yuv\n").unwrap();
    for run in 0..50 {
        let o = vmafhip()
            .args(["--pairs", s(&clash)])
            .args(RAW_576)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "run {run}: {}", stderr(&o));
    }
}

/// Bad lists and option mixes are usage errors naming the problem.
#[test]
fn cli_pairs_errors_name_the_problem() {
    let dir = scratch();
    let (_, list) = three_pairs(&dir, "pairs-bad");
    let clash = dir.join("clash.csv");
    std::fs::write(&clash, "a/x.yuv,b/d.yuv\nc/y.yuv,e/d.yuv\n").unwrap();
    let bad = dir.join("bad-fields.csv");
    std::fs::write(&bad, "only-one-field.yuv\n").unwrap();
    for (args, needle) in [
        (vec!["--pairs", s(&clash)], "lines 1 and 2 would both write"),
        (vec!["--pairs", s(&bad)], "line 1: 1 fields"),
        (vec!["--pairs", s(&list), "--shard", "2/2"], "0 <= I < N"),
        (
            vec!["--pairs", s(&list), "-o", "x.json"],
            "-o and --report are for one pair",
        ),
        (
            vec!["r.yuv", "d.yuv", "--shard", "0/2"],
            "--shard goes with --pairs",
        ),
    ] {
        let o = vmafhip().args(&args).args(RAW_576).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
    // --backend hip without a usable GPU: one error for the run (exit 4),
    // not one per pair; with a GPU, the pairs are scored.
    let o = vmafhip()
        .args(["--pairs", s(&list), "--backend", "hip", "-q"])
        .args(RAW_576)
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = stderr(&o);
    match o.status.code() {
        Some(0) => {}
        Some(4) => assert!(
            err.lines().count() == 1 && err.contains("--backend hip: no usable GPU"),
            "one error line, no pair scored: {err}"
        ),
        other => panic!("--pairs --backend hip: exit {other:?}: {err}"),
    }
}

/// Without a GPU: `--decoder gpu` is a clear error (FFV1, VP9 and AV1
/// files alike), `auto` decodes on the CPU and says why, and the summary
/// names the decoders used.
#[test]
fn cli_decoder_choice_without_a_gpu() {
    if std::env::var_os("VMAFHIP_REQUIRE_GPU").is_some() {
        return; // the device machine has a GPU: tests/gpu_memory.rs covers it
    }
    let dir = scratch();
    let run = golden_run("astronaut_576x324_420p8_12f_crf35", "vmaf_v0.6.1");
    let (r, d) = run.yuv_paths();
    // FFV1, and VP9 and AV1, which NVDEC decodes too.
    for (codec, tag) in [
        ("avenc_ffv1", "dec"),
        ("vp9enc deadline=1 cpu-used=8", "vp9"),
        ("av1enc cpu-used=8 ! av1parse", "av1"),
    ] {
        let (rc, dc) = (
            dir.join(format!("{tag}-ref.mkv")),
            dir.join(format!("{tag}-dis.mkv")),
        );
        remux(&r, &run, codec, None, &rc);
        remux(&d, &run, codec, None, &dc);
        let o = vmafhip()
            .args([s(&rc), s(&dc), "--decoder", "gpu"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(4), "{tag}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("--decoder gpu: no usable GPU"),
            "{tag}: {}",
            stderr(&o)
        );
    }
    let (rm, dm) = (dir.join("dec-ref.mkv"), dir.join("dec-dis.mkv"));
    let o = vmafhip()
        .args([s(&rm), s(&dm), "--decoder", "gpu", "--backend", "cpu"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("needs a GPU engine"), "{}", stderr(&o));
    let (o, json) = score(&rm, &dm, &run_args(&run), "decoder-auto");
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "note: {}: decoding on the CPU with avdec_ffv1: no usable GPU",
            s(&rm)
        )),
        "{err}"
    );
    assert!(
        err.contains("decoded with avdec_ffv1 / avdec_ffv1"),
        "{err}"
    );
    assert!(compare_json(&json.unwrap(), &run.expected()).is_empty());
    let (o, _) = score(&rm, &dm, &["--decoder".into(), "cpu".into()], "decoder-cpu");
    assert!(
        o.status.success() && !stderr(&o).contains("note:"),
        "{}",
        stderr(&o)
    );
}

/// Runs a gst-launch description to EOS (panics on error).
fn run_gst(desc: &str) {
    run_gst_with(desc, |_| {});
}

/// As [`run_gst`], with `prepare` called on the pipeline before it plays.
fn run_gst_with(desc: &str, prepare: impl FnOnce(&gst::Pipeline)) {
    gst::init().unwrap();
    let p = gst::parse::launch(desc)
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap();
    prepare(&p);
    p.set_state(gst::State::Playing).unwrap();
    let msg = p
        .bus()
        .unwrap()
        .timed_pop_filtered(
            gst::ClockTime::from_seconds(60),
            &[gst::MessageType::Eos, gst::MessageType::Error],
        )
        .expect("pipeline finished");
    p.set_state(gst::State::Null).unwrap();
    if let gst::MessageView::Error(e) = msg.view() {
        panic!("{desc}: {}", e.error());
    }
}

/// H.264 in MP4 is probed by parsing alone (no decoder set up twice) and
/// scores exactly as the same frames decoded to raw; the summary names the
/// decoder used.
#[test]
fn cli_h264_files_score_as_their_decoded_frames() {
    if gst::init().is_ok() && gst::ElementFactory::find("h264parse").is_none() {
        panic!("h264parse missing: .ci/setup installs gstreamer1.0-plugins-bad");
    }
    let dir = scratch();
    let run = golden_run("coffee_576x324_420p8_12f_crf35", "vmaf_v0.6.1");
    let (r, d) = run.yuv_paths();
    let mut files = Vec::new();
    for (raw, name, kbps) in [(&r, "ref", 4000), (&d, "dis", 300)] {
        let mp4 = dir.join(format!("h264-{name}.mp4"));
        let decoded = dir.join(format!("h264-{name}.yuv"));
        run_gst(&format!(
            "filesrc location=\"{}\" ! rawvideoparse width=576 height=324 format=i420 framerate=25/1 \
             ! x264enc bitrate={kbps} speed-preset=veryfast ! video/x-h264,profile=high ! h264parse \
             ! mp4mux ! filesink location=\"{}\"",
            s(raw),
            s(&mp4)
        ));
        run_gst(&format!(
            "filesrc location=\"{}\" ! qtdemux ! h264parse ! avdec_h264 ! video/x-raw,format=I420 \
             ! filesink location=\"{}\"",
            s(&mp4),
            s(&decoded)
        ));
        files.push((mp4, decoded));
    }
    let (o, from_mp4) = score(&files[0].0, &files[1].0, &[], "h264-mp4");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("decoded with avdec_h264 / avdec_h264"),
        "{}",
        stderr(&o)
    );
    let raw = ["-w", "576", "-h", "324"].map(String::from);
    let (o, from_raw) = score(&files[0].1, &files[1].1, &raw, "h264-raw");
    assert!(o.status.success(), "{}", stderr(&o));
    let (from_mp4, from_raw) = (from_mp4.unwrap(), from_raw.unwrap());
    assert_eq!(from_mp4["frames"].as_array().unwrap().len(), 12);
    assert_eq!(from_mp4["frames"], from_raw["frames"]);
    assert_eq!(from_mp4["pooled_metrics"], from_raw["pooled_metrics"]);
}

/// An I420 8-bit frame's planes at `(w, h)` (stored chroma: ceil halving).
fn i420_planes(frame: &[u8], (w, h): (usize, usize)) -> [&[u8]; 3] {
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    let (y, rest) = frame.split_at(w * h);
    let (u, v) = rest.split_at(cw * ch);
    [y, u, &v[..cw * ch]]
}

/// An I420 frame at `from` made again at `to` (`box_average`, per plane).
fn box_scaled(frame: &[u8], from: (usize, usize), to: (usize, usize)) -> Vec<u8> {
    let chroma = |(w, h): (usize, usize)| (w.div_ceil(2), h.div_ceil(2));
    i420_planes(frame, from)
        .iter()
        .enumerate()
        .flat_map(|(p, plane)| {
            let (f, t) = if p == 0 {
                (from, to)
            } else {
                (chroma(from), chroma(to))
            };
            box_average(plane, f, t)
        })
        .collect()
}

/// An I420 8-bit frame at `(w, h)` as an engine picture.
fn i420_picture(frame: &[u8], (w, h): (usize, usize)) -> Picture<'_> {
    let [y, u, v] = i420_planes(frame, (w, h));
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    Picture::new_u8(
        PixelFormat::Yuv420,
        &[
            Plane::new(y, w, h, w).unwrap(),
            Plane::new(u, cw, ch, cw).unwrap(),
            Plane::new(v, cw, ch, cw).unwrap(),
        ],
    )
    .unwrap()
}

/// A 4:2:0 8-bit Y4M file of `frames` at `(w, h)`.
fn y4m_of(frames: &[Vec<u8>], (w, h): (usize, usize), out: &Path) {
    let mut y4m = format!("YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 C420jpeg\n").into_bytes();
    for f in frames {
        y4m.extend_from_slice(b"FRAME\n");
        y4m.extend_from_slice(f);
    }
    std::fs::write(out, y4m).unwrap();
}

/// `vmafhip REF DIST1 DIST2 DIST3`: one run, one element, a results file
/// per rendition named after it, every value equal (to the file's six
/// decimals) to scoring each rendition alone with the engine's bicubic
/// scaling, and the table on stdout.
#[test]
fn cli_scores_a_ladder_in_one_run() {
    let run = golden_run("astronaut_576x324_420p8_12f_crf23", "vmaf_v0.6.1");
    let (r, d) = run.yuv_paths();
    let full = (576, 324);
    let frame_bytes = 576 * 324 * 3 / 2;
    let (rb, db) = (std::fs::read(&r).unwrap(), std::fs::read(&d).unwrap());
    let dir = scratch().join("ladder");
    std::fs::create_dir_all(&dir).unwrap();
    let sizes = [("full", full), ("half", (288, 162)), ("odd", (400, 226))];
    let mut renditions = Vec::new();
    for (name, size) in sizes {
        let frames: Vec<Vec<u8>> = db
            .chunks_exact(frame_bytes)
            .map(|f| {
                if size == full {
                    f.to_vec()
                } else {
                    box_scaled(f, full, size)
                }
            })
            .collect();
        let path = dir.join(format!("{name}.y4m"));
        y4m_of(&frames, size, &path);
        renditions.push((name, size, path, frames));
    }
    let out = dir.join("out.json");
    let o = vmafhip()
        .arg(s(&r))
        .args(renditions.iter().map(|(_, _, p, _)| s(p)))
        .args([
            "-w",
            "576",
            "-h",
            "324",
            "--backend",
            "cpu",
            "--json",
            "-o",
            s(&out),
        ])
        .args(["--report", s(&dir.join("ladder.html"))])
        .output()
        .unwrap();
    let (stdout, err) = (String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(o.status.success(), "{err}");
    println!("{stdout}{err}");
    assert!(
        err.contains("note: scaling")
            && err.contains(
                "half.y4m from 288x162 to the reference's 576x324 in the engine (bicubic)"
            ),
        "{err}"
    );
    let mut engine_config =
        EngineConfig::new(gstvmafhip::vmaf::ModelSet::load("vmaf_v0.6.1").unwrap());
    engine_config.scale = Some(gstvmafhip::vmaf::ScaleMethod::Bicubic);
    for (name, size, _, frames) in &renditions {
        let json = json_of(&dir.join(format!("out.{name}.json")));
        let mut engine = Scorer::cpu(&engine_config).unwrap();
        let mut want = Vec::new();
        for (rf, df) in rb.chunks_exact(frame_bytes).zip(frames) {
            let pic = i420_picture;
            want.extend(
                engine
                    .push(gstvmafhip::vmaf::FramePair::new(
                        &pic(rf, full),
                        &pic(df, *size),
                    ))
                    .unwrap(),
            );
        }
        want.extend(engine.flush().unwrap());
        let got = json["frames"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "{name}");
        for (g, w) in got.iter().zip(&want) {
            for (metric, v) in w.iter() {
                let file = g["metrics"][metric].as_f64().unwrap_or(f64::NAN);
                assert!(
                    (file - v).abs() <= 5e-7,
                    "{name} frame {} {metric}: file {file}, alone {v}",
                    w.index
                );
            }
        }
        let pooled = json["pooled_metrics"]["vmaf"]["mean"].as_f64().unwrap();
        let line = stdout
            .lines()
            .find(|l| l.contains(&format!("{name}.y4m")))
            .unwrap();
        assert!(
            line.contains(&format!("{}x{}", size.0, size.1))
                && line.contains(&format!("{pooled:.6}")),
            "{line} / {pooled}"
        );
    }
    assert!(
        !dir.join("out.json").exists(),
        "no file for an unlinked dist_sink"
    );
    // The two-file form scales the same way: the same numbers as the
    // ladder's rendition.
    let pair = dir.join("pair.json");
    let o = vmafhip()
        .args([s(&r), s(&renditions[1].2), "-w", "576", "-h", "324"])
        .args(["--backend", "cpu", "--json", "-o", s(&pair), "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        json_of(&pair)["frames"],
        json_of(&dir.join("out.half.json"))["frames"]
    );
    // One report: every rendition's curve in one plot.
    let page = std::fs::read_to_string(dir.join("ladder.html")).unwrap();
    assert_eq!(page.matches("<path class=\"curve r").count(), 3);
    for (name, ..) in &renditions {
        assert!(
            page.contains(&format!("data-series=\"{name}.y4m")),
            "{name}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn scratch() -> PathBuf {
    scratch_dir("cli")
}
