//! `examples/vmaf_yuv` with libvmaf's command line reproduces libvmaf's JSON
//! for every run of `manifest-v1.json` (model strings with overrides).

mod common;

use common::*;
use std::path::PathBuf;
use std::process::Command;

/// The example binary cargo built beside this test (`target/<profile>/examples`).
fn vmaf_yuv() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let bin = dir.join("examples").join("vmaf_yuv");
    assert!(
        bin.exists(),
        "{} missing (cargo test builds examples)",
        bin.display()
    );
    bin
}

#[test]
fn vmaf_yuv_reproduces_every_v1_run() {
    let mut failures = Vec::new();
    let runs = golden_runs_v1();
    assert_eq!(runs.len(), 15);
    for run in runs {
        let (r, d) = run.yuv_paths();
        let out = std::env::temp_dir().join(format!("vmafhip-cli-{}-{}.json", run.pair, run.run));
        let status = Command::new(vmaf_yuv())
            .args(["-r", r.to_str().unwrap(), "-d", d.to_str().unwrap()])
            .args(["-w", &run.width.to_string(), "-h", &run.height.to_string()])
            .args(["-p", run.p_arg(), "-b", &run.bpc.to_string()])
            .args([
                "--model",
                &run.model,
                "--json",
                "-o",
                out.to_str().unwrap(),
                "--quiet",
            ])
            .status()
            .unwrap();
        assert!(status.success(), "{} {}", run.pair, run.run);
        let got: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        for bad in compare_json(&got, &run.expected()) {
            failures.push(format!("{} {}: {bad}", run.pair, run.run));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An unknown feature or option in a model string is an error naming it.
#[test]
fn vmaf_yuv_names_a_bad_override() {
    let cache = golden_cache();
    let run = golden_runs_v1().into_iter().next().unwrap();
    yuv_bytes(&run.ref_zst);
    let r = cache.join(run.ref_zst.trim_end_matches(".zst"));
    for (model, needle) in [
        (
            "version=vmaf_v1.0.16_3d0h:cambi.enc_wdth=288",
            "unknown option \"enc_wdth\"",
        ),
        (
            "version=vmaf_v1.0.16_3d0h:psnr.enc_width=288",
            "no feature \"psnr\"",
        ),
        ("version=vmaf_v9", "not a built-in model"),
    ] {
        let out = Command::new(vmaf_yuv())
            .args(["-r", r.to_str().unwrap(), "-d", r.to_str().unwrap()])
            .args([
                "-w",
                &run.width.to_string(),
                "-h",
                &run.height.to_string(),
                "-p",
                "420",
                "-b",
                "8",
            ])
            .args(["--model", model, "--frame_cnt", "2", "--quiet"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{model}");
        assert!(err.contains(needle), "{model}: {err}");
    }
}

/// Raw inputs that are not whole frames, a shorter reference, empty files:
/// each a clear error naming the file, never a silent partial score.
#[test]
fn vmaf_yuv_refuses_partial_short_and_empty_files() {
    let cache = golden_cache();
    let run = golden_runs_v1().into_iter().next().unwrap();
    yuv_bytes(&run.ref_zst);
    let full = std::fs::read(cache.join(run.ref_zst.trim_end_matches(".zst"))).unwrap();
    let frame = run.width * run.height * 3 / 2;
    let dir = std::env::temp_dir().join("vmafhip-raw-inputs");
    std::fs::create_dir_all(&dir).unwrap();
    let put = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_str().unwrap().to_string()
    };
    let whole = put("whole.yuv", &full);
    let partial = put("partial.yuv", &full[..2 * frame + 1000]);
    let short = put("short.yuv", &full[..2 * frame]);
    let empty = put("empty.yuv", &[]);
    for (r, d, needle) in [
        (&partial, &whole, "partial.yuv: I/O: truncated frame"),
        (
            &short,
            &whole,
            "short.yuv ends after 2 frames but the other file goes on",
        ),
        (&empty, &empty, "no whole 576x324 frame"),
    ] {
        let out = Command::new(vmaf_yuv())
            .args([
                "-r", r, "-d", d, "-w", "576", "-h", "324", "-p", "420", "-b", "8", "--quiet",
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{r}: accepted");
        assert!(err.contains(needle), "{r}: {err}");
    }
}
