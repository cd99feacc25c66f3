//! The CPU engine against libvmaf f85a8536's own JSON output, for every
//! pair and run in `tests/data/golden/manifest.json`, `manifest-v1.json` and
//! `manifest-features.json`: every key of every frame (libvmaf's `null`s
//! included) and every pooled value.

mod common;

use common::*;
use gstvmafhip::vmaf::{Engine, Scorer};

/// Runs every run through the CPU engine and compares it with libvmaf's
/// JSON; returns how many were compared.
fn check_runs(runs: Vec<GoldenRun>) -> usize {
    let mut checked = 0;
    let mut failures = Vec::new();
    for run in runs {
        let (frames, pooled) = run.run_cpu();
        let bad = compare_with_golden(&frames, &pooled, &run.expected());
        eprintln!(
            "{} {}: {} frames, {} mismatches",
            run.pair,
            run.run,
            frames.len(),
            bad.len()
        );
        if !bad.is_empty() {
            failures.push(format!("{} {}:\n  {}", run.pair, run.run, bad.join("\n  ")));
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    checked
}

#[test]
fn every_golden_run_matches_libvmaf() {
    let checked = check_runs(golden_runs());
    assert!(checked >= 20, "only {checked} golden runs found");
}

/// VMAF v1 (all eight model families' runs, a CAMBI encode-side override,
/// 10-bit, identical frames), the bootstrap collection and the 4K NEG model
/// of `manifest-v1.json`, with the same tolerances.
#[test]
fn every_v1_golden_run_matches_libvmaf() {
    assert_eq!(
        check_runs(golden_runs_v1()),
        15,
        "manifest-v1.json lists 15 runs"
    );
}

/// The float models (`vmaf_float_v0.6.1`, its NEG, bootstrap and 4K
/// variants) and `float_psnr`, `float_ansnr`, `float_moment`, `ciede`,
/// `psnr_hvs` and `speed_temporal` of `manifest-features.json`: 8- and
/// 10-bit, 1080p, identical pictures (infinite values as libvmaf's nulls);
/// and every extractor that reads chroma (CIEDE, PSNR, SSIM, MS-SSIM,
/// speed_chroma, psnr_hvs) at 4:2:2 and 4:4:4, 8- and 10-bit.
#[test]
fn every_feature_golden_run_matches_libvmaf() {
    assert_eq!(
        check_runs(golden_runs_features()),
        13,
        "manifest-features.json lists 13 runs"
    );
}

/// Every libvmaf extractor asked for by name beside `vmaf_v0.6.1`; one
/// non-default option for each extractor that declares options (a second
/// instance of the model's `vif`, `adm` and `motion` named with libvmaf's
/// option suffix); PSNR's `enable_mse`, `min_sse`, `reduced_hbd_peak`
/// (10-bit), `enable_chroma=false` and `enable_apsnr` (the stream's APSNR
/// in `aggregate_metrics`, 8- and 10-bit), the SSIMs' `enable_db`,
/// `clip_db` and `enable_lcs`, float_ssim's `scale`
/// (`manifest-options.json`).
#[test]
fn every_extractor_by_name_and_with_options_matches_libvmaf() {
    assert_eq!(
        check_runs(common::golden_runs_options()),
        9,
        "manifest-options.json lists 9 runs"
    );
}

/// REFERENCE.md's full-precision anchors (libvmaf through its C API, %.17g).
#[test]
// The anchors are REFERENCE.md's 17 significant digits, as libvmaf prints them.
#[allow(clippy::excessive_precision)]
fn full_precision_anchors_astronaut_crf35() {
    let run = golden_run("astronaut_576x324_420p8_12f_crf35", "vmaf_v0.6.1");
    let (frames, pooled) = run.run_cpu();
    let f0 = &frames[0];
    assert_eq!(f0.get("integer_adm2"), Some(0.93989380977736259));
    assert_eq!(f0.get("integer_adm_scale0"), Some(0.92983381780453811));
    assert_eq!(f0.get("integer_vif_scale0"), Some(0.49196279048919678));
    assert!(
        (f0.vmaf() - 75.144144605493764).abs() < 1e-12,
        "{}",
        f0.vmaf()
    );
    assert_eq!(
        frames[1].get("VMAF_integer_feature_motion_sad_score"),
        Some(7.8755644496085715)
    );
    assert_eq!(frames[1].get("integer_motion2"), Some(7.8453266787430875));
    assert!((pooled.get("vmaf").unwrap().mean() - 80.537136493758751).abs() < 1e-12);
}

#[test]
fn threads_and_subsample_give_identical_numbers() {
    let run = golden_run("coffee_576x324_420p8_12f_crf35", "vmaf_v0.6.1");
    let (single, _) = run.run_cpu();
    for threads in [2, 3, 0] {
        let mut c = run.config();
        c.threads = threads;
        let (multi, _) = run.run_engine(&mut Scorer::cpu(&c).unwrap());
        assert_eq!(single, multi, "threads={threads}");
    }
    let mut c = run.config();
    c.subsample = 3;
    let mut e = Scorer::cpu(&c).unwrap();
    let (sub, pooled) = run.run_engine(&mut e);
    assert_eq!(
        sub.iter().map(|f| f.index).collect::<Vec<_>>(),
        [0, 3, 6, 9]
    );
    for f in &sub {
        assert_eq!(Some(f), single.iter().find(|s| s.index == f.index));
    }
    assert_eq!(pooled.frames, 4);
    let mean = sub.iter().map(|f| f.vmaf()).sum::<f64>() / 4.0;
    assert_eq!(pooled.get("vmaf").unwrap().mean(), mean);
    e.reset().unwrap();
}

/// The built-in float models are made from the integer ones by renaming
/// their features; for `vmaf_float_v0.6.1` that gives Netflix's own file
/// (`tests/data/models`), every number and option equal.
#[test]
fn derived_float_model_is_netflixs_file() {
    use gstvmafhip::vmaf::model::ModelSet;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/models/vmaf_float_v0.6.1.json");
    let file = ModelSet::parse("file", &std::fs::read_to_string(path).unwrap()).unwrap();
    let built_in = ModelSet::load("vmaf_float_v0.6.1").unwrap();
    assert_eq!(built_in, file);
    assert!(
        built_in
            .main
            .features
            .iter()
            .all(|f| f.name.starts_with("VMAF_feature_")),
        "{:?}",
        built_in.main.features
    );
}
