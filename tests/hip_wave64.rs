//! The AMD path at wavefront 64, with no AMD GPU.
//!
//! `tests/hipemu` is a HIP runtime and hiprtc for the host CPU, declared by
//! ROCm 5.2's own headers: one emulated gfx90a device with 64-wide
//! wavefronts, whose "compiler" builds each `kernels/*.hip` source unchanged
//! with the host C++ compiler and runs every block's threads as fibers in a
//! shuffled order at each barrier (tests/hipemu/device.h says what that
//! catches and what it cannot). Each test here runs again in a child process
//! with `VMAFHIP_HIP_LIBRARY` pointing at the emulator and
//! `VMAFHIP_VENDOR=amd`, so the engine goes through its AMD tables
//! (`hipGetDeviceProperties` at the ROCm 5 offset, hiprtc from the runtime
//! library, `hipModuleLaunchKernel`, ...) and its results are compared, bit
//! for bit, with the CPU engine and libvmaf's JSON.
//!
//! Needs a C++ compiler and ROCm's headers (`libamdhip64-dev`) on x86-64;
//! without them the tests say so and pass, unless `VMAFHIP_REQUIRE_HIPRTC=1`
//! (CI), which makes them fail.

mod common;

use common::parity::{
    FLOAT_OPTION_MODELS, Seq, config, diff, each_feature_alone_bit_exact, failover_scorer,
    golden_runs_bit_exact, hip_scorer, ladder_after_reset_bit_exact, ladder_bit_exact,
    ladder_failover_bit_exact, push_seq, shared_reference_bit_exact, sizes_bit_exact, where_it_ran,
};
use common::{golden_runs, golden_runs_features, golden_runs_v1};
use gst::prelude::*;
use gstvmafhip::gpu::{HipBackend, HipOptions};
use gstvmafhip::vmaf::{
    Engine, FailoverNote, FeatureBackend, Picture, PixelFormat, Plane, ScaleMethod, Scorer,
};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const CHILD: &str = "VMAFHIP_HIPEMU_CHILD";

fn hipemu_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hipemu")
}

fn skip_or_fail(why: String) -> Option<PathBuf> {
    if std::env::var("VMAFHIP_REQUIRE_HIPRTC").as_deref() == Ok("1") {
        panic!("VMAFHIP_REQUIRE_HIPRTC=1 but the HIP emulator cannot be built: {why}");
    }
    eprintln!("skipped: {why}");
    None
}

/// Builds the emulated runtime once per process, as a file named like ROCm
/// 5's runtime library; its kernel cache directory is keyed by the
/// emulator's own sources, so an edit there recompiles every kernel.
fn emulator() -> Option<(PathBuf, PathBuf)> {
    static LIB: OnceLock<Result<(PathBuf, PathBuf), String>> = OnceLock::new();
    let built = LIB.get_or_init(|| {
        if !cfg!(target_arch = "x86_64") {
            return Err("the emulator's fiber switch is x86-64 only".into());
        }
        if !Path::new("/usr/include/hip/hip_runtime_api.h").exists() {
            return Err("no ROCm headers (/usr/include/hip; Debian: libamdhip64-dev)".into());
        }
        let dir = hipemu_dir();
        let mut key: u64 = 0xcbf2_9ce4_8422_2325;
        for f in ["runtime.cpp", "device.h", "launch.h"] {
            for b in std::fs::read(dir.join(f)).map_err(|e| format!("{f}: {e}"))? {
                key = (key ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("hipemu-{key:016x}"));
        std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
        let lib = out.join("libamdhip64.so.5");
        let tmp = out.join(format!("libamdhip64.so.5.{}", std::process::id()));
        let cxx = std::env::var("HIPEMU_CXX").unwrap_or_else(|_| "c++".into());
        let status = Command::new(&cxx)
            .args(["-std=c++17", "-O2", "-fPIC", "-shared", "-pthread", "-Wall"])
            .arg("-D__HIP_PLATFORM_AMD__")
            .arg(format!("-DHIPEMU_DIR=\"{}\"", dir.display()))
            .arg(dir.join("runtime.cpp"))
            .arg("-o")
            .arg(&tmp)
            .arg("-ldl")
            .status()
            .map_err(|e| format!("{cxx}: {e}"))?;
        if !status.success() {
            return Err(format!(
                "{cxx} could not build tests/hipemu/runtime.cpp ({status})"
            ));
        }
        std::fs::rename(&tmp, &lib).map_err(|e| e.to_string())?;
        Ok((lib, out.join("kernel-cache")))
    });
    match built {
        Ok(p) => Some(p.clone()),
        Err(why) => skip_or_fail(why.clone()).map(|_| unreachable!()),
    }
}

/// In the parent: runs test `name` again in a child process that loads the
/// emulator (with `env` added) and fails if it fails; returns false. In
/// that child: returns true, and the test body runs.
fn in_emulator(name: &str, env: &[(&str, &str)]) -> bool {
    if std::env::var_os(CHILD).is_some() {
        return true;
    }
    let Some((lib, cache)) = emulator() else {
        return false;
    };
    let out = Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("VMAFHIP_HIP_LIBRARY", &lib)
        .env("VMAFHIP_VENDOR", "amd")
        .env("VMAFHIP_REQUIRE_GPU", "1")
        .env("VMAFHIP_CACHE_DIR", &cache)
        .env("HIPEMU_DIR", hipemu_dir())
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains("1 passed"),
        "{name} {env:?} in the emulator: {}\n{text}",
        out.status
    );
    for line in text.lines().filter(|l| l.starts_with("  ")) {
        eprintln!("{name} {env:?}:{line}");
    }
    false
}

/// The engine found the emulated device through its AMD tables: the name,
/// the gfx name read from `hipDeviceProp_t` at ROCm 5.2's offset, and the
/// wavefront width from `hipDeviceAttributeWarpSize`.
#[test]
fn amd_tables_reach_the_emulated_wave64_device() {
    if !in_emulator("amd_tables_reach_the_emulated_wave64_device", &[]) {
        return;
    }
    let plan = config(true, "vmaf_v0.6.1").plan().unwrap();
    let b = HipBackend::new(plan, &HipOptions::default()).unwrap();
    let d = b.describe();
    for want in [
        "hipemu",
        "gfx90a:sramecc+:xnack-",
        "warp 64",
        "amd via",
        "libamdhip64.so.5",
    ] {
        assert!(d.contains(want), "{want:?} missing from {d:?}");
    }
    eprintln!("  {d}");
    // The memory breakdown names what the ring holds: 8-bit gray 64x48
    // without PSNR uploads one plane per picture.
    let mut gpu = hip_scorer(&config(false, "vmaf_v0.6.1")).unwrap();
    assert!(gpu.backend_mut().memory_breakdown().0.is_empty());
    let seq = Seq {
        w: 64,
        h: 48,
        format: PixelFormat::Gray,
        bpc: 8,
        pad: 0,
    };
    push_seq(&mut gpu, &seq, 2, None);
    let (parts, ring) = gpu.backend_mut().memory_breakdown();
    assert_eq!(ring, 3, "a second backend on the device gets half the ring");
    assert_eq!(
        parts[0],
        ("uploaded planes (reference and distorted)", 3 * 2 * 64 * 48)
    );
    assert!(
        parts
            .iter()
            .all(|p| p.1 > 0 || p.0 == "CAMBI" || p.0 == "speed_chroma"),
        "{parts:?}"
    );
    eprintln!("  memory of a 64x48 ring: {parts:?}");
}

/// Every integer golden run of both manifests (v0, NEG, 4K, bootstrap,
/// VMAF v1 with CAMBI and speed_chroma) at wavefront 64: each frame equal to
/// the CPU engine bit for bit, and to libvmaf's JSON.
#[test]
fn golden_runs_at_wave64_are_bit_exact() {
    if !in_emulator("golden_runs_at_wave64_are_bit_exact", &[]) {
        return;
    }
    let v0: Vec<_> = golden_runs()
        .into_iter()
        .chain(golden_runs_features())
        .collect();
    let n = golden_runs_bit_exact(v0).unwrap() + golden_runs_bit_exact(golden_runs_v1()).unwrap();
    eprintln!("  {n} golden frames at wave64, every metric bit-exact");
}

/// Odd sizes, 4:2:0 / 4:2:2 / 4:4:4 / gray, 8 to 16 bits, padded rows, with
/// PSNR and with the v1 extractors.
#[test]
fn odd_sizes_and_depths_at_wave64_are_bit_exact() {
    if !in_emulator("odd_sizes_and_depths_at_wave64_are_bit_exact", &[]) {
        return;
    }
    sizes_bit_exact(
        &[
            (53, 37, PixelFormat::Yuv420, 8, 3),
            (75, 53, PixelFormat::Yuv422, 10, 5),
            (96, 64, PixelFormat::Yuv444, 12, 0),
            (200, 120, PixelFormat::Gray, 16, 0),
        ],
        &["vmaf_v0.6.1", "vmaf_v0.6.1neg", "vmaf_float_v0.6.1"],
        true,
    );
    sizes_bit_exact(
        &[
            (331, 217, PixelFormat::Yuv422, 12, 0),
            (256, 216, PixelFormat::Yuv444, 8, 3),
        ],
        &["vmaf_v1.0.16_3d0h"],
        false,
    );
    sizes_bit_exact(
        &[
            (75, 53, PixelFormat::Yuv422, 10, 5),
            (131, 97, PixelFormat::Yuv420, 8, 0),
        ],
        &FLOAT_OPTION_MODELS,
        false,
    );
    // SSIM's box downscale (factor 2 from 384 on) and MS-SSIM at an odd size.
    sizes_bit_exact(
        &[(391, 389, PixelFormat::Yuv420, 10, 3)],
        &["vmaf_v0.6.1"],
        true,
    );
    eprintln!("  odd sizes at wave64: every metric bit-exact");
}

/// Every extractor alone beside `vmaf_v0.6.1`: each backend loads only
/// its plan's kernel sets, so a twin that borrows another's kernels
/// without declaring them would fail here.
#[test]
fn each_feature_alone_at_wave64() {
    if !in_emulator("each_feature_alone_at_wave64", &[]) {
        return;
    }
    // CAMBI takes pictures from 216 samples on a side.
    let seq = Seq {
        w: 256,
        h: 224,
        format: PixelFormat::Yuv420,
        bpc: 8,
        pad: 0,
    };
    let checked = each_feature_alone_bit_exact(&seq, 3);
    assert_eq!(checked, gstvmafhip::extractors::feature_names().len());
}

/// Temporal extractors under `subsample`: speed_temporal reads the frame
/// just before each scored one, float_motion runs on every frame.
#[test]
fn temporal_extractors_under_subsample_at_wave64() {
    if !in_emulator("temporal_extractors_under_subsample_at_wave64", &[]) {
        return;
    }
    let seq = Seq {
        w: 320,
        h: 240,
        format: PixelFormat::Yuv420,
        bpc: 8,
        pad: 0,
    };
    let mut c = config(false, "vmaf_float_v0.6.1");
    c.features = vec!["speed_temporal".into()];
    c.subsample = 3;
    let mut gpu = hip_scorer(&c).expect("emulated device");
    let mut cpu = Scorer::cpu(&c).unwrap();
    let (a, b) = (
        push_seq(&mut cpu, &seq, 8, None),
        push_seq(&mut gpu, &seq, 8, None),
    );
    assert_eq!(a.len(), 3);
    assert!(
        a[1].get("speed_temporal").is_some_and(|v| v > 0.0),
        "{:?}",
        a[1].get("speed_temporal")
    );
    let bad = diff(&a, &b);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    eprintln!(
        "  subsample 3, speed_temporal and float_motion: {} frames identical",
        b.len()
    );
}

/// Every injected GPU fault (`VMAFHIP_FAULT`: a failed launch, a failed
/// read-back, a failed set-up, a lost device), at the first frame,
/// mid-stream and in the drain at the end: the stream moves to the CPU
/// engine and every frame's scores equal the CPU engine's, each frame once.
/// For v0.6.1 with every extractor beside it, and v1 (CAMBI, speed_chroma,
/// motion's five-frame window); a fault strikes once per process, so each
/// (fault, model) runs in a child of its own.
#[test]
fn gpu_faults_fail_over_to_the_cpu_at_wave64() {
    const NAME: &str = "gpu_faults_fail_over_to_the_cpu_at_wave64";
    if std::env::var_os(CHILD).is_none() {
        for spec in [
            "launch:frame=0",
            "launch:frame=6",
            "sync:frame=0",
            "sync:frame=6",
            "sync:frame=11",
            "alloc:frame=0",
            "device-lost:frame=0",
            "device-lost:frame=6",
            "device-lost:frame=11",
        ] {
            for model in ["vmaf_v0.6.1", "vmaf_v1.0.16_3d0h"] {
                in_emulator(NAME, &[("VMAFHIP_FAULT", spec), (MODEL, model)]);
            }
        }
        return;
    }
    let moves = faulty_run(false);
    assert_eq!(moves.len(), 1, "one move to the CPU: {moves:?}");
}

/// `on-gpu-error=retry`: after each of several faults the stream moves to
/// the CPU and comes back to a GPU opened again at the next frame (primed
/// with the two frames before it), ending on the GPU, every frame's scores
/// equal to the CPU engine's.
#[test]
fn gpu_faults_and_returns_at_wave64() {
    const NAME: &str = "gpu_faults_and_returns_at_wave64";
    if std::env::var_os(CHILD).is_none() {
        for spec in [
            "launch:frame=0,sync:frame=4,device-lost:frame=8",
            "alloc:frame=0,launch:frame=3,sync:frame=7",
        ] {
            for model in ["vmaf_v0.6.1", "vmaf_v1.0.16_3d0h"] {
                in_emulator(NAME, &[("VMAFHIP_FAULT", spec), (MODEL, model)]);
            }
        }
        return;
    }
    let moves = faulty_run(true);
    assert_eq!(
        moves.iter().filter(|m| m.error.is_some()).count(),
        3,
        "{moves:?}"
    );
    assert!(
        moves.last().is_some_and(|m| m.error.is_none()),
        "ends on the GPU: {moves:?}"
    );
}

/// The model a fault child runs.
const MODEL: &str = "VMAFHIP_TEST_MODEL";

/// In a fault child: 12 frames of its model through the failover engine
/// (with `retry` or not), compared with the CPU engine; the moves it made.
fn faulty_run(retry: bool) -> Vec<FailoverNote> {
    let seq = Seq {
        w: 320,
        h: 240,
        format: PixelFormat::Yuv420,
        bpc: 10,
        pad: 2,
    };
    let model = std::env::var(MODEL).unwrap();
    let c = config(model == "vmaf_v0.6.1", &model);
    let mut gpu = failover_scorer(&c, retry).expect("emulated device");
    let mut cpu = Scorer::cpu(&c).unwrap();
    let (a, b) = (
        push_seq(&mut cpu, &seq, 12, None),
        push_seq(&mut gpu, &seq, 12, None),
    );
    assert_eq!((a.len(), b.len()), (12, 12), "{model}: every frame once");
    let bad = diff(&a, &b);
    assert!(bad.is_empty(), "{model}: {}", bad.join("\n"));
    eprintln!(
        "  {model}: {} frames identical, {}",
        b.len(),
        where_it_ran(gpu.failover())
    );
    gpu.failover().to_vec()
}

/// The element, a read-back fault at frame 8 (each setting in a child of
/// its own: a fault strikes once per process):
/// - by default (`backend=auto`, so `on-gpu-error=retry`; here with
///   `gpu-retry-delay=0`), a warning names the frame, the CPU engine takes
///   over and the GPU comes back at the next frame;
/// - with `on-gpu-error=cpu` the stream stays on the CPU;
/// - either way every frame's score equals a CPU-only run, and the pooled
///   message's backend says which frames ran where;
/// - with `backend=hip` the fault ends the stream (`on-gpu-error=auto`
///   means `fail` there).
#[test]
fn the_element_fails_over_at_wave64() {
    const NAME: &str = "the_element_fails_over_at_wave64";
    const PROPS: &str = "VMAFHIP_TEST_PROPS";
    if std::env::var_os(CHILD).is_none() {
        for props in ["gpu-retry-delay=0", "on-gpu-error=cpu", "backend=hip"] {
            in_emulator(NAME, &[("VMAFHIP_FAULT", "sync:frame=8"), (PROPS, props)]);
        }
        return;
    }
    gst::init().unwrap();
    gstvmafhip::plugin_register_static().unwrap();
    let run = |props: &str| {
        let desc = format!(
            "videotestsrc num-buffers=24 pattern=ball ! video/x-raw,format=I420,width=320,height=240,framerate=25/1 \
             ! tee name=t t. ! queue ! v.ref_sink t. ! queue ! videobalance brightness=0.06 ! v.dist_sink \
             vmafhip name=v frame-message=true psnr=true {props} ! fakesink"
        );
        let pipeline = gst::parse::launch(&desc)
            .unwrap()
            .downcast::<gst::Pipeline>()
            .unwrap();
        let bus = pipeline.bus().unwrap();
        let _ = pipeline.set_state(gst::State::Playing);
        let out = common::pipeline::collect(&bus);
        pipeline.set_state(gst::State::Null).unwrap();
        out
    };
    let props = std::env::var(PROPS).unwrap();
    let cpu = run("backend=cpu");
    let gpu = run(&props);
    if props == "backend=hip" {
        assert!(
            gpu.errors.iter().any(|e| e.contains("injected fault")),
            "{:?}",
            gpu.errors
        );
        eprintln!("  backend=hip: {}", gpu.errors[0]);
        return;
    }
    assert!(gpu.errors.is_empty(), "{:?}", gpu.errors);
    assert_eq!(gpu.frames.len(), 24);
    for (a, b) in cpu.frames.iter().zip(&gpu.frames) {
        assert_eq!((a.index, a.score, a.psnr_y), (b.index, b.score, b.psnr_y));
    }
    let warned = gpu
        .warnings
        .iter()
        .find(|w| w.contains("GPU error at frame"));
    assert!(warned.is_some(), "{:?}", gpu.warnings);
    let pooled = &gpu.pooled.last().expect("pooled").backend;
    let moved = if props == "on-gpu-error=cpu" {
        "then cpu"
    } else {
        "after GPU errors"
    };
    assert!(pooled.contains(moved), "{pooled}");
    assert_eq!(
        gpu.pooled.last().unwrap().score,
        cpu.pooled.last().unwrap().score
    );
    eprintln!("  {props}: {}; pooled backend: {pooled}", warned.unwrap());
}

/// The same frames with the threads of every block run in index order and
/// in reverse order at each barrier: both equal to the CPU engine, so no
/// kernel reads shared memory another thread writes in the same phase.
#[test]
fn thread_order_within_blocks_does_not_matter() {
    for order in ["forward", "reverse"] {
        if !in_emulator(
            "thread_order_within_blocks_does_not_matter",
            &[("HIPEMU_ORDER", order)],
        ) {
            continue;
        }
        let seq = Seq {
            w: 256,
            h: 216,
            format: PixelFormat::Yuv420,
            bpc: 10,
            pad: 2,
        };
        let c = config(true, "vmaf_v1.0.16_3d0h");
        let mut gpu = hip_scorer(&c).unwrap();
        let a = push_seq(&mut Scorer::cpu(&c).unwrap(), &seq, 3, None);
        let b = push_seq(&mut gpu, &seq, 3, None);
        let bad = diff(&a, &b);
        assert!(bad.is_empty(), "{}", bad.join("\n"));
        eprintln!(
            "  order {}: 3 frames bit-exact",
            std::env::var("HIPEMU_ORDER").unwrap_or_default()
        );
        return;
    }
}

/// Device memory runs out through the AMD path as it would on a small GPU:
/// hipMalloc's hipErrorOutOfMemory becomes the engine's error naming the
/// size, not a crash.
#[test]
fn amd_out_of_memory_is_a_clear_error() {
    if !in_emulator(
        "amd_out_of_memory_is_a_clear_error",
        &[("HIPEMU_MEMORY_MB", "24")],
    ) {
        return;
    }
    let mut gpu = hip_scorer(&config(false, "vmaf_v0.6.1")).unwrap();
    let (w, h) = (1920, 1080);
    let luma = vec![128u8; w * h];
    let plane = [Plane::new(&luma, w, h, w).unwrap()];
    let pic = Picture::new_u8(PixelFormat::Gray, &plane).unwrap();
    let err = gpu
        .push(gstvmafhip::vmaf::FramePair::new(&pic, &pic))
        .expect_err("a 1080p engine fit in 24 MiB")
        .to_string();
    assert!(err.contains("GPU out of memory"), "{err}");
    assert!(err.contains("of 24 MiB"), "{err}");
    eprintln!("  {err}");
}

/// Ladder renditions scaled on the emulated device (`kernels/scale.hip`)
/// equal the CPU engine's scaling, every value of every frame.
#[test]
fn ladder_renditions_at_wave64_are_bit_exact() {
    if !in_emulator("ladder_renditions_at_wave64_are_bit_exact", &[]) {
        return;
    }
    for method in [ScaleMethod::Bicubic, ScaleMethod::Lanczos] {
        ladder_bit_exact(
            &[
                ((176, 144), (88, 72), PixelFormat::Yuv420, 8),
                ((96, 64), (200, 120), PixelFormat::Yuv444, 12),
                ((80, 48), (45, 33), PixelFormat::Gray, 16),
            ],
            method,
        )
        .expect("the emulated device");
    }
    // The same sizes at another depth after a caps change.
    ladder_after_reset_bit_exact(
        &((176, 144), (88, 72), PixelFormat::Yuv420, 8),
        &((176, 144), (88, 72), PixelFormat::Yuv420, 10),
    )
    .expect("the emulated device");
    eprintln!("  ladder renditions at wave64: every metric bit-exact");
}

/// A ladder's renditions sharing one reference on the emulated device
/// (its upload, VIF's decimations and ADM's DWT once per frame, as
/// `shared_reference.rs` says): each rendition's every value equals the
/// CPU engine's scoring it alone, also for renditions that join late or
/// end early; the reference's work was done once per frame.
#[test]
fn a_ladder_shares_its_reference_at_wave64() {
    if !in_emulator("a_ladder_shares_its_reference_at_wave64", &[]) {
        return;
    }
    let cases = [
        (
            (176, 144),
            vec![(176, 144), (88, 72), (61, 45)],
            (PixelFormat::Yuv420, 8),
            ("vmaf_v0.6.1", true),
            6,
        ),
        (
            (256, 216),
            vec![(256, 216), (131, 109)],
            (PixelFormat::Yuv422, 10),
            ("vmaf_v1.0.16_3d0h", true),
            5,
        ),
    ];
    for (reference, sizes, format, model, n) in cases {
        shared_reference_bit_exact(reference, &sizes, format, model, n)
            .expect("the emulated device");
    }
}

/// A ladder rendition through a GPU fault: the CPU engine takes the
/// rendition over (and, with retry, gives it back), scaling it the same
/// way, every frame equal to the CPU engine's.
#[test]
fn a_scaled_rendition_fails_over_at_wave64() {
    const NAME: &str = "a_scaled_rendition_fails_over_at_wave64";
    if std::env::var_os(CHILD).is_none() {
        for spec in [
            "launch:frame=3",
            "device-lost:frame=0",
            "sync:frame=2,launch:frame=5",
        ] {
            in_emulator(NAME, &[("VMAFHIP_FAULT", spec)]);
        }
        return;
    }
    let retry = std::env::var("VMAFHIP_FAULT").is_ok_and(|f| f.contains(','));
    let moves = ladder_failover_bit_exact(&((96, 80), (61, 45), PixelFormat::Yuv420, 8), retry)
        .expect("the emulated device");
    assert!(
        moves.iter().any(|m| m.error.is_some()),
        "the fault moved the stream: {moves:?}"
    );
}
