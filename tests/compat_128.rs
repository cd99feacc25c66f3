//! Drop-in check: `tests/compat/vmaf128_app.c`, a C application written only
//! against GStreamer 1.28's `vmaf` element (properties with enum integer
//! values, `VMAF` messages read with 1.28's GTypes, the results file), is
//! built with the system compiler and `pkg-config gstreamer-1.0`, and runs
//! unchanged but for the element name against `vmafhip`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The plugin cargo built for this test run (`target/<profile>/deps`).
fn plugin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let so = exe.parent().unwrap().join("libgstvmafhip.so");
    assert!(so.exists(), "{} missing", so.display());
    so
}

#[test]
fn a_gstreamer_128_vmaf_application_runs_unchanged() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compat128");
    let plugins = tmp.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    let link = plugins.join("libgstvmafhip.so");
    let _ = std::fs::remove_file(&link);
    std::fs::copy(plugin(), &link).unwrap();
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs", "gstreamer-1.0"])
        .output()
        .expect("pkg-config runs");
    assert!(flags.status.success(), "pkg-config gstreamer-1.0 failed");
    let flags = String::from_utf8(flags.stdout).unwrap();
    let app = tmp.join("vmaf128_app");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat/vmaf128_app.c");
    let cc = Command::new("cc")
        .arg("-O1")
        .arg("-Wall")
        .arg("-Werror")
        .arg(&src)
        .arg("-o")
        .arg(&app)
        .args(flags.split_whitespace())
        .output()
        .expect("cc runs");
    assert!(
        cc.status.success(),
        "cc failed:\n{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let results = tmp.join("results.json");
    let out = Command::new(&app)
        .args(["vmafhip", results.to_str().unwrap()])
        .env("GST_PLUGIN_PATH", &plugins)
        .env("GST_REGISTRY", tmp.join("registry.bin"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}{stderr}");
    assert!(
        out.status.success(),
        "the 1.28 application failed:\n{stdout}{stderr}"
    );
    assert!(stdout.contains(", 0 failed"), "{stdout}");
    assert!(stdout.contains("vmafhip: 12 frame messages"), "{stdout}");
}
