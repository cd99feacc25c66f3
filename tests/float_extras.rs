//! libvmaf's float extractors without options (`float_psnr`, `float_ansnr`
//! with `float_anpsnr`, `float_moment`) against libvmaf's JSON, on every run
//! of `tests/data/golden/manifest-features.json` that asks for them (8- and
//! 10-bit, identical pictures). Those runs score the float models, which
//! this engine does not have yet: the engine scores each pair with
//! vmaf_v0.6.1 plus the same `--feature`s, and every value of these
//! extractors' keys, in every frame, is compared.

mod common;

use common::*;
use gstvmafhip::vmaf::Scorer;
use gstvmafhip::vmaf::model::ModelSpec;
use gstvmafhip::vmaf::{EngineConfig, PixelFormat};
use serde_json::Value;

const EXTRAS: [&str; 3] = ["float_psnr", "float_ansnr", "float_moment"];

/// The keys each extractor writes.
fn keys(feature: &str) -> &'static [&'static str] {
    match feature {
        "float_psnr" => &["float_psnr"],
        "float_ansnr" => &["float_ansnr", "float_anpsnr"],
        _ => &[
            "float_moment_ref1st",
            "float_moment_dis1st",
            "float_moment_ref2nd",
            "float_moment_dis2nd",
        ],
    }
}

#[test]
fn float_extras_match_libvmaf_on_every_feature_golden_run() {
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(testdata_dir().join("manifest-features.json")).unwrap(),
    )
    .unwrap();
    let mut compared = 0;
    for p in manifest["pairs"].as_array().unwrap() {
        for r in p["runs"].as_array().unwrap() {
            let cmd: Vec<&str> = r["command"].as_str().unwrap().split_whitespace().collect();
            let asked: Vec<String> = cmd
                .windows(2)
                .filter(|w| w[0] == "--feature" && EXTRAS.contains(&w[1]))
                .map(|w| w[1].to_string())
                .collect();
            if asked.is_empty() {
                continue;
            }
            let run = GoldenRun {
                pair: p["id"].as_str().unwrap().into(),
                run: r["name"].as_str().unwrap().into(),
                ref_zst: p["ref"].as_str().unwrap().into(),
                dis_zst: p["dis"].as_str().unwrap().into(),
                width: p["width"].as_u64().unwrap() as usize,
                height: p["height"].as_u64().unwrap() as usize,
                format: PixelFormat::parse(p["vmaf_p"].as_str().unwrap()).unwrap(),
                bpc: p["bitdepth"].as_u64().unwrap() as u8,
                model: "version=vmaf_v0.6.1".into(),
                psnr: false,
                ssim: false,
                ms_ssim: false,
                subsample: 1,
                threads: 1,
                json: r["json"].as_str().unwrap().into(),
            };
            let mut config: EngineConfig = run.config();
            config.models = ModelSpec::parse(&run.model).unwrap().models;
            config.features = asked.clone();
            let mut engine = Scorer::cpu(&config).unwrap();
            let (frames, _) = run.run_engine(&mut engine);
            let want = run.expected();
            let want = want["frames"].as_array().unwrap();
            assert_eq!(frames.len(), want.len(), "{} {}", run.pair, run.run);
            for (got, w) in frames.iter().zip(want) {
                for k in asked.iter().flat_map(|f| keys(f)) {
                    let (g, e) = (got.get(k).unwrap(), w["metrics"][k].as_f64().unwrap());
                    assert!(
                        (g - e).abs() <= 1e-6,
                        "{} {} frame {}: {k} {g} vs libvmaf {e}",
                        run.pair,
                        run.run,
                        got.index
                    );
                    compared += 1;
                }
            }
            eprintln!("{} {}: {} compared", run.pair, run.run, asked.join(", "));
        }
    }
    // astronaut crf35 (three extractors), rocket 10-bit (three), identical
    // (float_psnr): 12×7 + 6×7 + 6×1 values.
    assert_eq!(compared, 12 * 7 + 6 * 7 + 6);
}
