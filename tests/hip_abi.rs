//! The AMD ABI facts `src/hip/ffi.rs` relies on, re-measured against the HIP
//! headers installed here: `tests/abi/hip_abi.c` is compiled with the system
//! compiler against `/usr/include/hip` and its output must equal the fixture
//! kept for that ROCm version (`tests/abi/rocm-MAJOR.MINOR.txt`), to which
//! ffi.rs's own tests hold its constants.
//!
//! Skips (saying why) without the headers, unless `VMAFHIP_REQUIRE_HIPRTC=1`
//! (set by `.ci/run`, whose machine has Debian's ROCm 5.2).

use std::path::Path;
use std::process::Command;

fn facts(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn installed_hip_headers_match_their_fixture() {
    let headers = Path::new("/usr/include/hip/hip_runtime_api.h");
    if !headers.exists() {
        if std::env::var("VMAFHIP_REQUIRE_HIPRTC").as_deref() == Ok("1") {
            panic!(
                "VMAFHIP_REQUIRE_HIPRTC=1 but {} is missing",
                headers.display()
            );
        }
        eprintln!("skipped: no HIP headers at {}", headers.display());
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/abi");
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hip_abi");
    let cc = Command::new("cc")
        .args(["-D__HIP_PLATFORM_AMD__", "-I/usr/include", "-o"])
        .arg(&exe)
        .arg(dir.join("hip_abi.c"))
        .output()
        .expect("cc runs");
    assert!(
        cc.status.success(),
        "compiling hip_abi.c failed:\n{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let run = Command::new(&exe).output().expect("hip_abi runs");
    assert!(run.status.success());
    let measured = facts(&String::from_utf8(run.stdout).unwrap());
    let get = |k: &str| {
        measured
            .iter()
            .find_map(|l| l.strip_prefix(&format!("{k} ")).map(str::to_string))
            .unwrap_or_else(|| panic!("no {k} in the output"))
    };
    let version = format!("{}.{}", get("HIP_VERSION_MAJOR"), get("HIP_VERSION_MINOR"));
    let fixture = dir.join(format!("rocm-{version}.txt"));
    let kept = std::fs::read_to_string(&fixture).unwrap_or_else(|_| {
        panic!(
            "installed HIP headers are ROCm {version}, which has no fixture: \
             add {} with hip_abi.c's output and hold ffi.rs to it",
            fixture.display()
        )
    });
    assert_eq!(
        measured,
        facts(&kept),
        "ROCm {version}: the headers differ from {}",
        fixture.display()
    );
    eprintln!(
        "ROCm {version}: {} facts equal to the fixture",
        measured.len()
    );
}
