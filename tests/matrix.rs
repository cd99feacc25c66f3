//! The input matrix: a natural clip (the golden astronaut pan) encoded at
//! test time with Debian's encoders (x264, x265, libvpx VP9, libaom AV1)
//! into MP4, Matroska, WebM and MPEG-TS, 8-, 10- and 12-bit, 4:2:0, 4:2:2
//! and 4:4:4, and another size (odd sizes: the golden 351x287 pair in
//! tests/cli.rs; GStreamer's raw files pad odd rows); each encode scored against the master as raw
//! .yuv and as .y4m, both ways round, and against another encode, with
//! `--decoder auto` and `cpu`, in the two-file and ladder forms. Every case
//! must score exactly as the command scores the same frames decoded by
//! ffmpeg (libavcodec) to raw .yuv, or fail at start with the error the
//! case expects. Prints how many cases scored and how many were refused,
//! and why.

mod command_line;
mod common;

use command_line::*;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn gst(desc: &str) {
    let o = Command::new("gst-launch-1.0")
        .arg("-q")
        .args(desc.split_whitespace())
        .output()
        .unwrap();
    assert!(o.status.success(), "gst-launch-1.0 {desc}: {}", stderr(&o));
}

/// A picture format of the matrix.
#[derive(Clone, Copy)]
struct Format {
    gst: &'static str,
    parse: &'static str,
    ffmpeg: &'static str,
    p: &'static str,
    bits: u8,
    y4m: &'static str,
}

const I420: Format = Format {
    gst: "I420",
    parse: "i420",
    ffmpeg: "yuv420p",
    p: "420",
    bits: 8,
    y4m: "420jpeg",
};
const Y42B: Format = Format {
    gst: "Y42B",
    parse: "y42b",
    ffmpeg: "yuv422p",
    p: "422",
    bits: 8,
    y4m: "422",
};
const Y444: Format = Format {
    gst: "Y444",
    parse: "y444",
    ffmpeg: "yuv444p",
    p: "444",
    bits: 8,
    y4m: "444",
};
const I420_10: Format = Format {
    gst: "I420_10LE",
    parse: "i420-10le",
    ffmpeg: "yuv420p10le",
    p: "420",
    bits: 10,
    y4m: "420p10",
};
const I420_12: Format = Format {
    gst: "I420_12LE",
    parse: "i420-12le",
    ffmpeg: "yuv420p12le",
    p: "420",
    bits: 12,
    y4m: "420p12",
};
const Y444_10: Format = Format {
    gst: "Y444_10LE",
    parse: "y444-10le",
    ffmpeg: "yuv444p10le",
    p: "444",
    bits: 10,
    y4m: "444p10",
};

/// A master in `f` at `w`x`h`: the golden reference's six first frames,
/// converted (and cropped to an odd size when asked); raw and Y4M.
fn master(f: Format, (w, h): (usize, usize)) -> (PathBuf, PathBuf) {
    let run = golden_run("astronaut_576x324_420p8_12f_crf35", "vmaf_v0.6.1");
    let (r, _) = run.yuv_paths();
    let d = dir();
    let six = d.join("astronaut_6f.yuv");
    std::fs::write(&six, &std::fs::read(&r).unwrap()[..6 * 576 * 324 * 3 / 2]).unwrap();
    let raw = d.join(format!("master_{}_{w}x{h}.yuv", f.gst));
    let crop = format!("videocrop right={} bottom={} !", 576 - w, 324 - h);
    gst(&format!(
        "filesrc location={} ! rawvideoparse width=576 height=324 format=i420 framerate=25/1 ! {crop} videoconvert dither=none ! video/x-raw,format={} ! filesink location={}",
        s(&six),
        f.gst,
        s(&raw)
    ));
    let bytes = std::fs::read(&raw).unwrap();
    let frame = bytes.len() / 6;
    let mut y4m = format!("YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 C{}\n", f.y4m).into_bytes();
    for fr in bytes.chunks_exact(frame) {
        y4m.extend_from_slice(b"FRAME\n");
        y4m.extend_from_slice(fr);
    }
    let y4m_path = raw.with_extension("y4m");
    std::fs::write(&y4m_path, y4m).unwrap();
    (raw, y4m_path)
}

/// One encode of the matrix.
struct Encode {
    name: &'static str,
    format: Format,
    size: (usize, usize),
    encoder: &'static str,
    mux: &'static str,
    ext: &'static str,
}

const ENCODES: &[Encode] = &[
    Encode {
        name: "h264_mp4",
        format: I420,
        size: (576, 324),
        encoder: "x264enc pass=quant quantizer=30 threads=1",
        mux: "mp4mux",
        ext: "mp4",
    },
    Encode {
        name: "h264_422_mkv",
        format: Y42B,
        size: (576, 324),
        encoder: "x264enc pass=quant quantizer=30 threads=1",
        mux: "matroskamux",
        ext: "mkv",
    },
    Encode {
        name: "h264_10bit_ts",
        format: I420_10,
        size: (576, 324),
        encoder: "x264enc pass=quant quantizer=30 threads=1 ! h264parse",
        mux: "mpegtsmux",
        ext: "ts",
    },
    Encode {
        name: "hevc_10bit_mp4",
        format: I420_10,
        size: (576, 324),
        encoder: "x265enc bitrate=600 ! h265parse",
        mux: "mp4mux",
        ext: "mp4",
    },
    Encode {
        name: "hevc_12bit_mp4",
        format: I420_12,
        size: (576, 324),
        encoder: "x265enc bitrate=600 ! video/x-h265,profile=main-12 ! h265parse",
        mux: "mp4mux",
        ext: "mp4",
    },
    Encode {
        name: "hevc_444_10bit_mkv",
        format: Y444_10,
        size: (576, 324),
        encoder: "x265enc bitrate=600 ! video/x-h265,profile=main-444-10 ! h265parse",
        mux: "matroskamux",
        ext: "mkv",
    },
    Encode {
        name: "hevc_444_mkv",
        format: Y444,
        size: (576, 324),
        encoder: "x265enc bitrate=600 ! h265parse",
        mux: "matroskamux",
        ext: "mkv",
    },
    Encode {
        name: "vp9_webm",
        format: I420,
        size: (576, 324),
        encoder: "vp9enc deadline=1 cpu-used=8 target-bitrate=600000",
        mux: "webmmux",
        ext: "webm",
    },
    Encode {
        name: "av1_mkv",
        format: I420,
        size: (576, 324),
        encoder: "av1enc cpu-used=8 target-bitrate=600 ! av1parse",
        mux: "matroskamux",
        ext: "mkv",
    },
    Encode {
        name: "vp9_small_mkv",
        format: I420,
        size: (448, 256),
        encoder: "vp9enc deadline=1 cpu-used=8 target-bitrate=300000",
        mux: "matroskamux",
        ext: "mkv",
    },
];

fn encode(e: &Encode, master_raw: &Path) -> PathBuf {
    let out = dir().join(format!("{}.{}", e.name, e.ext));
    let (w, h) = e.size;
    gst(&format!(
        "filesrc location={} ! rawvideoparse width={w} height={h} format={} framerate=25/1 ! {} ! {} ! filesink location={}",
        s(master_raw),
        e.format.parse,
        e.encoder,
        e.mux,
        s(&out)
    ));
    out
}

/// The encode's frames as ffmpeg (libavcodec) decodes them, raw.
fn ffmpeg_decoded(enc: &Path, f: Format) -> PathBuf {
    let out = enc.with_extension(format!(
        "{}.ffmpeg.yuv",
        enc.extension().unwrap().to_str().unwrap()
    ));
    let o = Command::new("ffmpeg")
        .args([
            "-v",
            "error",
            "-y",
            "-i",
            s(enc),
            "-f",
            "rawvideo",
            "-pix_fmt",
            f.ffmpeg,
            s(&out),
        ])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "ffmpeg {}: {}",
        enc.display(),
        stderr(&o)
    );
    out
}

/// The command's JSON for `args` (which must succeed), frames only.
fn frames(args: &[&str], tag: &str) -> Vec<Value> {
    let out = dir().join(format!("{tag}.json"));
    let o = vmafhip()
        .args(args)
        .args(["--feature", "psnr", "--json", "-o", s(&out), "-q"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{tag}: vmafhip {args:?}: {}",
        stderr(&o)
    );
    let j: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    j["frames"].as_array().unwrap().clone()
}

/// The command's error for `args`, which must be refused at start (exit
/// 3) with `needle` in its one line.
fn refusal(args: &[&str], name: &str, needle: &str) -> String {
    let o = vmafhip().args(args).arg("-q").output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{name}: {err}");
    assert!(err.contains(needle), "{name}: {err}");
    err.trim().to_string()
}

#[test]
fn every_pairing_of_inputs_scores_as_the_decoded_frames() {
    if Command::new("ffmpeg").arg("-version").output().is_err() {
        panic!("ffmpeg is needed (.ci/setup installs it)");
    }
    let mut scored = 0;
    let mut refused = Vec::new();
    let mut previous: Option<(PathBuf, PathBuf)> = None;
    for e in ENCODES {
        let f = e.format;
        let (w, h) = e.size;
        let (raw, y4m) = master(f, e.size);
        let enc = encode(e, &raw);
        let dec = ffmpeg_decoded(&enc, f);
        let geometry = [
            "-w",
            &w.to_string(),
            "-h",
            &h.to_string(),
            "-p",
            f.p,
            "-b",
            &f.bits.to_string(),
        ]
        .map(String::from);
        let g: Vec<&str> = geometry.iter().map(String::as_str).collect();
        // What the command gives on the decoded frames, each way round.
        let want = frames(
            &[&["-r", s(&raw), "-d", s(&dec)], &g[..]].concat(),
            &format!("{}-want", e.name),
        );
        let want_rev = frames(
            &[&["-r", s(&dec), "-d", s(&raw)], &g[..]].concat(),
            &format!("{}-want-rev", e.name),
        );
        for decoder in ["auto", "cpu"] {
            let d = ["--decoder", decoder];
            let cases: [(&str, Vec<&str>, &Vec<Value>); 4] = [
                (
                    "raw ref",
                    [&["-r", s(&raw), "-d", s(&enc)], &g[..], &d[..]].concat(),
                    &want,
                ),
                ("y4m ref", vec![s(&y4m), s(&enc), d[0], d[1]], &want),
                ("y4m dist", vec![s(&enc), s(&y4m), d[0], d[1]], &want_rev),
                (
                    "raw dist",
                    [&["-r", s(&enc), "-d", s(&raw)], &g[..], &d[..]].concat(),
                    &want_rev,
                ),
            ];
            for (what, args, expected) in cases {
                let got = frames(
                    &args,
                    &format!("{}-{decoder}-{}", e.name, what.replace(' ', "_")),
                );
                assert_eq!(&got, expected, "{} ({what}, --decoder {decoder})", e.name);
                scored += 1;
            }
        }
        // Compressed against compressed: this encode against the last one
        // of the same format and size.
        if let Some((prev_enc, prev_dec)) = previous
            .take()
            .filter(|_| f.gst == "I420" && e.size == (576, 324))
        {
            let want = frames(
                &[&["-r", s(&prev_dec), "-d", s(&dec)], &g[..]].concat(),
                &format!("{}-cc-want", e.name),
            );
            let got = frames(&[s(&prev_enc), s(&enc)], &format!("{}-cc", e.name));
            assert_eq!(got, want, "{} against the previous encode", e.name);
            scored += 1;
        }
        if f.gst == "I420" && e.size == (576, 324) {
            previous = Some((enc.clone(), dec.clone()));
        }
        refused.extend(refused_at_start(e, &enc));
    }
    scored += ladder_renditions_score_as_alone();
    eprintln!(
        "input matrix: {scored} cases scored as the decoded frames, {} refused at start:",
        refused.len()
    );
    for r in &refused {
        eprintln!("  refused: {r}");
    }
}

/// The refusals at start for encode `e`: a master of another depth, and
/// (with PSNR, which reads chroma) one of another chroma layout.
fn refused_at_start(e: &Encode, enc: &Path) -> Vec<String> {
    let f = e.format;
    let mut refused = Vec::new();
    let other = if f.bits == 8 { I420_10 } else { I420 };
    let (_, other_y4m) = master(other, e.size);
    let why = refusal(&[s(&other_y4m), s(enc)], e.name, "bit depth");
    refused.push(format!(
        "{} against a {}-bit master: {why}",
        e.name, other.bits
    ));
    if f.p != "420" {
        let (_, y420) = master(if f.bits == 8 { I420 } else { I420_10 }, e.size);
        let why = refusal(
            &[s(&y420), s(enc), "--feature", "psnr"],
            e.name,
            "read chroma",
        );
        refused.push(format!(
            "{} against a 4:2:0 master with PSNR: {why}",
            e.name
        ));
    }
    refused
}

/// The ladder form: a Y4M master with the 8-bit 4:2:0 encodes as
/// renditions, each scored as in the two-file form; the cases scored.
fn ladder_renditions_score_as_alone() -> usize {
    let mut scored = 0;
    let (_, y4m) = master(I420, (576, 324));
    let rungs: Vec<PathBuf> = ["h264_mp4.mp4", "vp9_webm.webm", "av1_mkv.mkv"]
        .iter()
        .map(|n| dir().join(n))
        .collect();
    let out = dir().join("ladder.json");
    let mut args = vec![s(&y4m).to_string()];
    args.extend(rungs.iter().map(|p| s(p).to_string()));
    let o = vmafhip()
        .args(&args)
        .args(["--feature", "psnr", "--json", "-o", s(&out), "-q"])
        .output()
        .unwrap();
    assert!(o.status.success(), "ladder: {}", stderr(&o));
    for r in &rungs {
        let stem = r.file_stem().unwrap().to_str().unwrap();
        let file = dir().join(format!("ladder.{stem}.json"));
        let got: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let alone = frames(&[s(&y4m), s(r)], &format!("{stem}-alone"));
        assert_eq!(
            got["frames"].as_array().unwrap(),
            &alone,
            "ladder rendition {stem}"
        );
        scored += 1;
    }
    scored
}

fn dir() -> PathBuf {
    scratch_dir("matrix")
}
