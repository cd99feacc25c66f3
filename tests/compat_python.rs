//! Embedding check: `tests/compat/vmaf_messages.py`, a PyGObject
//! application, scores golden pairs through `vmafhip` and checks the
//! per-frame and pooled `VMAF` messages it reads from the bus against
//! libvmaf's JSON (Debian: `python3-gi`, `gir1.2-gstreamer-1.0`).

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The plugin cargo built for this test run (`target/<profile>/deps`).
fn plugin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let so = exe.parent().unwrap().join("libgstvmafhip.so");
    assert!(so.exists(), "{} missing", so.display());
    so
}

/// Debian's Python, the one `python3-gi` installs into (a `python3` first
/// on PATH may be another interpreter without it).
fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// Runs the Python program on one golden run; returns its stdout.
fn run_python(pair: &str, run_name: &str, format: &str) -> String {
    let run = golden_run(pair, run_name);
    let (rp, dp) = run.yuv_paths();
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compat_python");
    let plugins = tmp.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(plugin(), plugins.join("libgstvmafhip.so")).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat/vmaf_messages.py");
    let properties = format!(
        "model-filename={} psnr={} ssim={} ms-ssim={} backend=cpu",
        run.model_name(),
        run.psnr,
        run.ssim,
        run.ms_ssim
    );
    let out = Command::new(python())
        .arg(&script)
        .args([rp.to_str().unwrap(), dp.to_str().unwrap()])
        .args([run.width.to_string(), run.height.to_string()])
        .arg(format)
        .arg(testdata_dir().join(&run.json))
        .args(properties.split_whitespace())
        .env("GST_PLUGIN_PATH", &plugins)
        .env("GST_REGISTRY", tmp.join("registry.bin"))
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{pair} {run_name}: {stdout}{stderr}");
    assert!(
        out.status.success(),
        "the Python application failed on {pair} {run_name}:\n{stdout}{stderr}"
    );
    stdout
}

#[test]
fn a_python_application_reads_every_message_as_libvmaf_scores_it() {
    let out = run_python("astronaut_576x324_420p8_12f_crf35", "vmaf_v0.6.1", "i420");
    assert!(
        out.contains("vmafhip: 12 frame messages, 1 pooled"),
        "{out}"
    );
    assert!(out.contains(", 0 failed"), "{out}");
    let out = run_python("rocket_576x324_420p10_6f_crf30", "vmaf_v0.6.1", "i420-10le");
    assert!(out.contains("vmafhip: 6 frame messages, 1 pooled"), "{out}");
    assert!(out.contains(", 0 failed"), "{out}");
}
