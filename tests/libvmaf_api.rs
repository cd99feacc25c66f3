//! libvmaf's C API served by vmafhip (`libvmaf/`): C programs drive
//! `libvmaf.so.3` as ffmpeg's libvmaf filter (`tests/c/ffmpeg_filter.c`)
//! and libvmaf's `vmaf` tool with a model collection (`tests/c/vmaf_tool.c`)
//! do, on the CPU, and their results equal libvmaf's JSON of every golden
//! run (v0, v1 and features) to the last printed digit.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The folder holding `libvmaf.so.3`, built once per test run.
fn library_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let target = root().join("target").join("libvmaf-api");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args([
                "build",
                "--release",
                "-p",
                "vmafhip-libvmaf",
                "--target-dir",
            ])
            .arg(&target)
            .current_dir(root())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building libvmaf.so");
        let dir = target.join("release");
        let soname = dir.join("libvmaf.so.3");
        let _ = std::fs::remove_file(&soname);
        std::os::unix::fs::symlink("libvmaf.so", &soname).unwrap();
        dir
    })
}

/// C program `tests/c/NAME.c`, compiled against our headers and library.
fn program(name: &str) -> PathBuf {
    let lib = library_dir();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let status = Command::new("cc")
        .args(["-O1", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&out)
        .arg(root().join("tests/c").join(format!("{name}.c")))
        .arg(format!("-I{}", root().join("libvmaf/include").display()))
        .arg(format!("-L{}", lib.display()))
        .arg("-lvmaf")
        .status()
        .expect("cc runs (gcc and libc6-dev: .ci/setup)");
    assert!(status.success(), "compiling tests/c/{name}.c");
    out
}

/// Runs `prog` with `args` and the library on its path, which must
/// succeed: what it printed on stdout and on stderr.
fn run_said(prog: &Path, args: &[String]) -> (String, String) {
    let o = Command::new(prog)
        .args(args)
        .env("LD_LIBRARY_PATH", library_dir())
        .output()
        .unwrap();
    let (said, err) = (
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    );
    assert!(
        o.status.success(),
        "{} {args:?}: {said}{err}",
        prog.display()
    );
    (said, err)
}

/// Runs `prog` with `args` and the library on its path; its stdout.
fn run(prog: &Path, args: &[String]) -> String {
    run_said(prog, args).0
}

/// A scratch folder `name` of the test target's.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Run `r` with its model alone (as the GPU-state programs score it).
fn model_alone(r: &common::GoldenRun) -> common::GoldenRun {
    let mut plain = r.clone();
    (plain.features, plain.psnr, plain.ssim, plain.ms_ssim) = (Vec::new(), false, false, false);
    plain
}

/// Every metric of every frame and every pooled statistic of libvmaf's
/// JSON, as printed (six decimals): those that differ.
fn differences(got: &Value, want: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    let (gf, wf) = (
        got["frames"].as_array().unwrap(),
        want["frames"].as_array().unwrap(),
    );
    if gf.len() != wf.len() {
        return vec![format!("{} frames, libvmaf {}", gf.len(), wf.len())];
    }
    for (g, w) in gf.iter().zip(wf) {
        if g["frameNum"] != w["frameNum"] || g["metrics"] != w["metrics"] {
            bad.push(format!(
                "frame {}: {} vs libvmaf {}",
                w["frameNum"], g["metrics"], w["metrics"]
            ));
        }
    }
    if got["pooled_metrics"] != want["pooled_metrics"] {
        bad.push(format!(
            "pooled {} vs libvmaf {}",
            got["pooled_metrics"], want["pooled_metrics"]
        ));
    }
    bad
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The engine's own results of run `r` (the CPU engine through the Rust
/// API), as the library should write them.
fn engine_json(r: &common::GoldenRun) -> Value {
    let (frames, pooled) = r.run_cpu();
    let text = gstvmafhip::vmaf::output::Results {
        frames: &frames,
        pooled: &pooled,
        width: r.width,
        height: r.height,
        fps: None,
        version: "3.2.0",
    }
    .json();
    serde_json::from_str(&text).unwrap()
}

/// Checks the library's results `out` of run `r`: the engine's digit for
/// digit, libvmaf's within the golden tests' tolerance; returns whether
/// they are libvmaf's digit for digit too.
fn check(r: &common::GoldenRun, out: &Path) -> Result<bool, String> {
    let got = json(out);
    let engine = differences(&got, &engine_json(r));
    if !engine.is_empty() {
        return Err(format!("not the engine's results: {}", engine.join("\n")));
    }
    let want = r.expected();
    let libvmaf = common::compare_json(&got, &want);
    if !libvmaf.is_empty() {
        return Err(format!("not libvmaf's results: {}", libvmaf.join("\n")));
    }
    Ok(differences(&got, &want).is_empty())
}

/// Every golden run: v0, v1 and features.
fn all_runs() -> Vec<common::GoldenRun> {
    common::golden_runs()
        .into_iter()
        .chain(common::golden_runs_v1())
        .chain(common::golden_runs_features())
        .chain(common::golden_runs_options())
        .collect()
}

/// The programs' first arguments for run `r`: the decompressed reference
/// and distorted files, the size, the chroma layout and the depth.
fn input_args(r: &common::GoldenRun) -> Vec<String> {
    let (rp, dp) = r.yuv_paths();
    vec![
        rp.display().to_string(),
        dp.display().to_string(),
        r.width.to_string(),
        r.height.to_string(),
        r.p_arg().into(),
        r.bpc.to_string(),
    ]
}

/// The run's extra features for the filter's program (`-`: none).
fn features_arg(r: &common::GoldenRun) -> String {
    let mut features = r.features.clone();
    for (on, name) in [
        (r.psnr, "psnr"),
        (r.ssim, "float_ssim"),
        (r.ms_ssim, "float_ms_ssim"),
    ] {
        if on {
            features.push(name.into());
        }
    }
    if features.is_empty() {
        "-".into()
    } else {
        features.join(",")
    }
}

/// Runs whose results libvmaf prints the same whatever the last bits of
/// a float sum: integer models and features only.
fn integer_only(r: &common::GoldenRun) -> bool {
    !r.model.contains("float")
        && !r.ssim
        && !r.ms_ssim
        && r.features.iter().all(|f| !f.starts_with("float_"))
}

#[test]
fn ffmpegs_filter_reproduces_every_golden_run() {
    let filter = program("ffmpeg_filter");
    let dir = scratch("libvmaf_api");
    // ffmpeg's filter loads models, not collections (the next test).
    let runs: Vec<_> = all_runs()
        .into_iter()
        .filter(|r| !r.model_name().contains("_b_"))
        .collect();
    let mut failed = Vec::new();
    for r in &runs {
        let out = dir.join(format!("{}.{}.json", r.pair, r.run));
        let mut args = input_args(r);
        args.extend([
            r.model.clone(),
            features_arg(r),
            r.subsample.to_string(),
            r.threads.to_string(),
            out.display().to_string(),
        ]);
        let said = run(&filter, &args);
        let verdict = check(r, &out);
        println!(
            "{} {}: {}; {}",
            r.pair,
            r.run,
            match &verdict {
                Ok(true) => "libvmaf's digits".to_string(),
                Ok(false) => "the engine's digits, libvmaf's within tolerance".to_string(),
                Err(e) => e.clone(),
            },
            said.trim()
        );
        match verdict {
            Ok(false) if integer_only(r) => failed.push(format!(
                "{} {}: digits differ from libvmaf's",
                r.pair, r.run
            )),
            Err(e) => failed.push(format!("{} {}: {e}", r.pair, r.run)),
            _ => {}
        }
    }
    assert!(runs.len() >= 30, "{} golden runs", runs.len());
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

#[test]
fn the_vmaf_tool_scores_a_model_collection() {
    let tool = program("vmaf_tool");
    let dir = scratch("libvmaf_api_tool");
    let collections: Vec<_> = all_runs()
        .into_iter()
        .filter(|r| {
            r.model_name().contains("_b_")
                && r.features.is_empty()
                && !r.psnr
                && !r.ssim
                && !r.ms_ssim
                && r.subsample == 1
        })
        .collect();
    assert!(!collections.is_empty(), "no bootstrap golden run");
    for r in &collections {
        let out = dir.join(format!("{}.{}.json", r.pair, r.run));
        let mut args = input_args(r);
        args.extend([r.model_name().into(), out.display().to_string()]);
        let said = run(&tool, &args);
        println!("{} {}: {}", r.pair, r.run, said.trim());
        let exact = check(r, &out).unwrap_or_else(|e| panic!("{} {}: {e}", r.pair, r.run));
        assert!(
            exact || !integer_only(r),
            "{} {}: digits differ from libvmaf's",
            r.pair,
            r.run
        );
        // The pooled statistics it printed are the file's.
        let bagging = json(&out)["pooled_metrics"]["vmaf_bagging"]["mean"]
            .as_f64()
            .unwrap();
        assert!(said.contains(&format!("bagging {bagging:.6}")), "{said}");
    }
}

/// The public structs' sizes and field offsets under our headers, against
/// those measured once from libvmaf f85a8536's own headers
/// (`libvmaf/include/libvmaf/*.h` of that commit, x86_64 Linux, gcc 12):
/// `tests/c/abi.c` compiled with `-I` to them printed this list.
const LIBVMAF_F85A8536_ABI: &str = "\
VmafConfiguration 32
VmafConfiguration.log_level 0
VmafConfiguration.n_threads 4
VmafConfiguration.n_subsample 8
VmafConfiguration.cpumask 16
VmafConfiguration.gpumask 24
VmafPicture 96
VmafPicture.pix_fmt 0
VmafPicture.bpc 4
VmafPicture.w 8
VmafPicture.h 20
VmafPicture.stride 32
VmafPicture.data 56
VmafPicture.ref 80
VmafPicture.priv 88
VmafModelConfig 16
VmafModelConfig.name 0
VmafModelConfig.flags 8
VmafModelCollectionScore 40
VmafModelCollectionScore.type 0
VmafModelCollectionScore.bootstrap.bagging_score 8
VmafModelCollectionScore.bootstrap.stddev 16
VmafModelCollectionScore.bootstrap.ci.p95.lo 24
VmafModelCollectionScore.bootstrap.ci.p95.hi 32
VmafPictureConfiguration 20
VmafPictureConfiguration.pic_params.w 0
VmafPictureConfiguration.pic_params.h 4
VmafPictureConfiguration.pic_params.bpc 8
VmafPictureConfiguration.pic_params.pix_fmt 12
VmafPictureConfiguration.pic_cnt 16
enum VmafPixelFormat 4
VmafCudaConfiguration 8
VmafCudaConfiguration.cu_ctx 0
VmafCudaPictureConfiguration 20
VmafCudaPictureConfiguration.pic_params.w 0
VmafCudaPictureConfiguration.pic_params.h 4
VmafCudaPictureConfiguration.pic_params.bpc 8
VmafCudaPictureConfiguration.pic_params.pix_fmt 12
VmafCudaPictureConfiguration.pic_prealloc_method 16
enum VmafCudaPicturePreallocationMethod 4
";

#[cfg(target_arch = "x86_64")]
#[test]
fn the_headers_lay_out_libvmafs_structs() {
    let abi = program("abi");
    assert_eq!(run(&abi, &[]), LIBVMAF_F85A8536_ABI);
}

/// `VMAFHIP_BACKEND`: a bad value fails `vmaf_init` naming the choices;
/// `hip` scores on the GPU with the CPU's numbers, or fails `vmaf_init`
/// saying there is no usable GPU; unset, the GPU where one is usable, else
/// the CPU with no warning, the engine said at INFO level.
#[test]
fn the_backend_variable_is_checked() {
    let filter = program("ffmpeg_filter");
    let r = common::golden_run("astronaut_576x324_420p8_12f_crf35", "vmaf_v0.6.1");
    let dir = scratch("libvmaf_api_backend");
    let score = |backend: &str| {
        let out = dir.join(format!("{backend}.json"));
        let mut cmd = Command::new(&filter);
        cmd.args(input_args(&r))
            .args(["version=vmaf_v0.6.1", &features_arg(&r), "1", "1"])
            .arg(&out)
            .env("LD_LIBRARY_PATH", library_dir());
        match backend {
            "unset" => cmd.env_remove("VMAFHIP_BACKEND"),
            b => cmd.env("VMAFHIP_BACKEND", b),
        };
        let o = cmd.output().unwrap();
        let said = String::from_utf8_lossy(&o.stderr).to_string();
        println!("VMAFHIP_BACKEND={backend}: {}", said.trim());
        (o.status.success(), said, out)
    };
    let (ok, said, _) = score("sideways");
    assert!(
        !ok && said.contains("VMAFHIP_BACKEND=sideways: use auto, cpu, hip"),
        "{said}"
    );
    let (ok, said, out) = score("hip");
    if ok {
        assert!(said.contains("the GPU engine"), "{said}");
        assert!(check(&r, &out).unwrap(), "the GPU's results");
    } else {
        assert!(
            said.contains("VMAFHIP_BACKEND=hip: no usable GPU"),
            "{said}"
        );
        assert!(said.contains("vmaf_init"), "{said}");
    }
    let gpu_here = ok;
    let (ok, said, out) = score("auto");
    assert!(ok, "{said}");
    assert!(check(&r, &out).unwrap());
    let (ok, said, out) = score("unset");
    assert!(ok, "{said}");
    assert!(check(&r, &out).unwrap());
    let engine = if gpu_here {
        "the GPU engine"
    } else {
        "the CPU engine"
    };
    assert!(said.contains(engine) && !said.contains("WARNING"), "{said}");
}

/// Two models in one context, as ffmpeg's `model='…|…'` registers them
/// (VMAF and VMAF NEG in one pass): each scored under its own name, the
/// extractors they share computed once, the NEG model's own `adm` and
/// `vif` instances named with libvmaf's suffix; libvmaf's JSON for its
/// `vmaf` tool with two `--model` flags (`manifest-options.json`,
/// `two_model_runs`).
#[test]
fn two_models_in_one_context_score_as_libvmaf() {
    let filter = program("ffmpeg_filter");
    let manifest = json(&common::testdata_dir().join("manifest-options.json"));
    let run_ = &manifest["two_model_runs"][0];
    let r = common::golden_run(run_["pair"].as_str().unwrap(), "vmaf_v0.6.1");
    let models: Vec<&str> = run_["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let out = scratch("libvmaf_api_two_models").join("two.json");
    let mut args = input_args(&r);
    args.extend([models.join("|"), "-".into(), "1".into(), "1".into()]);
    args.push(out.display().to_string());
    run(&filter, &args);
    let got = json(&out);
    let want = json(&common::testdata_dir().join(run_["json"].as_str().unwrap()));
    let diffs = common::compare_json(&got, &want);
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    let frame = &got["frames"][0]["metrics"];
    assert!(frame["vmaf_neg"].is_number() && frame["integer_adm2_egl_1"].is_number());
}

/// Each mistake a program can make with the API gets libvmaf's -EINVAL
/// and a message naming it, and no crash (`tests/c/misuse.c`).
#[test]
fn mistakes_get_an_error_that_names_them() {
    let misuse = program("misuse");
    let o = Command::new(&misuse)
        .env("LD_LIBRARY_PATH", library_dir())
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    println!("{out}{err}");
    assert!(o.status.success(), "{out}{err}");
    let codes: Vec<&str> = out
        .lines()
        .map(|l| l.rsplit(": ").next().unwrap())
        .collect();
    let fine = [
        "init",
        "a model",
        "a second model",
        "the model's features",
        "frame 0",
        "close",
    ];
    // libvmaf too checks an override's options only when the model's
    // extractors are made.
    let lazy = ["an override of an unknown option"];
    for (line, code) in out.lines().zip(&codes) {
        let what = line.rsplit_once(": ").unwrap().0;
        let want = if fine.contains(&what) || lazy.contains(&what) {
            "0"
        } else {
            "-22"
        };
        assert_eq!(*code, want, "{line}");
    }
    assert_eq!(codes.len(), 34, "{out}");
    for said in [
        "model vmaf_v9: ",
        "no feature \"sharpness\"",
        "cambi: unknown option \"no_such\"",
        "no feature \"cambi=full_ref=true\": a feature's options go in its dictionary",
        "no model: vmafhip scores a model",
        "two models named \"vmaf\" (\"vmaf_v0.6.1\" and \"vmaf_v0.6.1neg\")",
        "7 bits per sample",
        "reference is 64x64 Yuv420 8-bit but distorted is 48x64",
        "a reference and a distorted picture, or neither",
        "frame 3 where frame 0 comes next",
        "a frame after the flush",
        "frames 3 to 4: frame 3 has no score",
        "frames 0 to 9: frame 1 has no score \"vmaf\" (1 frame(s) read)",
        "a NULL out-pointer for the score",
        "frame 0 has no score \"psnr_y\"",
        "pooling method 9",
        "output format 9",
        "/nonexistent/dir/out.json: No such file or directory",
        "fetching a preallocated picture: none were preallocated",
        "vmaf_cuda_preallocate_pictures: device pictures need a GPU state imported first",
        "vmaf_cuda_preallocate_pictures: preallocation method 7",
    ] {
        assert!(err.contains(said), "{said}: {err}");
    }
}

/// The HIP fork's state calls (`tests/c/hip_state.c`): with a usable GPU,
/// a state imported into a context scores a pair on it with the CPU
/// engine's digits; without one, `vmaf_hip_state_init` gives -ENODEV and
/// says why.
#[test]
fn the_hip_forks_state_calls_choose_the_gpu() {
    let prog = program("hip_state");
    let r = common::golden_run("astronaut_576x324_420p8_12f_crf35", "vmaf_v0.6.1");
    let dir = scratch("libvmaf_api_hip");
    let out = dir.join("gpu.json");
    let mut args = input_args(&r);
    args.extend(["vmaf_v0.6.1".into(), out.display().to_string()]);
    let (said, err) = run_said(&prog, &args);
    println!("{said}{err}");
    assert!(said.starts_with("available: 1\n"), "{said}");
    if said.contains("state: 0") {
        assert!(err.contains("the GPU engine on device 0"), "{err}");
        assert!(said.contains("freed: yes"), "{said}");
        let bad = differences(&json(&out), &engine_json(&model_alone(&r)));
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    } else {
        assert!(said.contains("devices: 0\nstate: -19"), "{said}");
        assert!(err.contains("vmaf_hip_state_init: no usable GPU"), "{err}");
    }
}

/// `libvmaf_cuda.h` as ffmpeg's `libvmaf_cuda` filter drives it
/// (`tests/c/cuda_pictures.c`). Host pictures from
/// `vmaf_cuda_fetch_preallocated_picture` score a golden pair with the
/// engine's digits, with or without a GPU. Device pictures, copied into
/// with `cuMemcpy2D` from the program's own context (and the HIP twins'
/// from the primary context), do too where a GPU is usable; without one,
/// `vmaf_cuda_state_init` gives -EINVAL (`vmaf_hip_state_init` -ENODEV)
/// and says why.
#[test]
fn the_cuda_calls_take_pictures_in_gpu_memory() {
    let prog = program("cuda_pictures");
    let r = common::golden_run("astronaut_576x324_420p8_12f_crf35", "vmaf_v0.6.1");
    let plain = model_alone(&r);
    let dir = scratch("libvmaf_api_cuda");
    for method in ["host", "device", "hip"] {
        let out = dir.join(format!("{method}.json"));
        let mut args = input_args(&r);
        args.extend(["vmaf_v0.6.1", "all", method].map(String::from));
        args.push(out.display().to_string());
        println!("{method}:");
        let (said, err) = run_said(&prog, &args);
        println!("{said}{err}");
        if said.starts_with("state: 0\n") {
            let engine = if method == "hip" {
                "the GPU engine on device 0"
            } else {
                "in the program's CUDA context"
            };
            assert!(err.contains(engine), "{err}");
        } else if method == "hip" {
            assert!(said.starts_with("state: -19\n"), "{said}");
            assert!(err.contains("vmaf_hip_state_init: "), "{err}");
            continue;
        } else {
            assert!(said.starts_with("state: -22\n"), "{said}");
            assert!(err.contains("vmaf_cuda_state_init: "), "{err}");
            if method == "device" {
                continue;
            }
        }
        let bad = differences(&json(&out), &engine_json(&plain));
        assert!(bad.is_empty(), "{method}: {}", bad.join("\n"));
    }
}
