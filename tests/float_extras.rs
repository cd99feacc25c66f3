//! libvmaf's extractors without options (`float_psnr`, `float_ansnr` with
//! `float_anpsnr`, `float_moment`, `ciede`, `psnr_hvs`) against libvmaf's
//! JSON, on every run of `tests/data/golden/manifest-features.json` that
//! asks for them (8- and 10-bit, 1080p, identical pictures). Those runs score the float models, which
//! this engine does not have yet: the engine scores each pair with
//! vmaf_v0.6.1 plus the same `--feature`s, and every value of these
//! extractors' keys, in every frame, is compared.

mod common;

use common::*;
use gstvmafhip::vmaf::Scorer;

const EXTRAS: [&str; 5] = [
    "float_psnr",
    "float_ansnr",
    "float_moment",
    "ciede",
    "psnr_hvs",
];

/// The keys each extractor writes.
fn keys(feature: &str) -> &'static [&'static str] {
    match feature {
        "float_psnr" => &["float_psnr"],
        "float_ansnr" => &["float_ansnr", "float_anpsnr"],
        "ciede" => &["ciede2000"],
        "psnr_hvs" => &["psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr", "psnr_hvs"],
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
    let mut compared = 0;
    for mut run in golden_runs_features() {
        let cmd: Vec<&str> = run.command.split_whitespace().collect();
        let asked: Vec<String> = cmd
            .windows(2)
            .filter(|w| w[0] == "--feature" && EXTRAS.contains(&w[1]))
            .map(|w| w[1].to_string())
            .collect();
        if asked.is_empty() {
            continue;
        }
        // The float models are not in this engine yet: the integer one.
        run.model = "version=vmaf_v0.6.1".into();
        let mut config = run.config();
        config.features = asked.clone();
        let mut engine = Scorer::cpu(&config).unwrap();
        let (frames, _) = run.run_engine(&mut engine);
        let want = run.expected();
        let want = want["frames"].as_array().unwrap();
        assert_eq!(frames.len(), want.len(), "{} {}", run.pair, run.run);
        for (got, w) in frames.iter().zip(want) {
            for k in asked.iter().flat_map(|f| keys(f)) {
                let g = got.get(k).unwrap();
                let Some(e) = w["metrics"][k].as_f64() else {
                    // libvmaf's null: infinite (identical pictures).
                    assert!(w["metrics"][k].is_null() && g.is_infinite(), "{k}: {g}");
                    compared += 1;
                    continue;
                };
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
    // astronaut crf35 (the three float ones, 7 keys); astronaut blur, coffee
    // crf35 and eveningglow 1080p (ciede and psnr_hvs, 5 keys); rocket
    // 10-bit (all five, 12 keys); identical (float_psnr, ciede and
    // psnr_hvs, their infinities libvmaf's nulls: 6 keys).
    assert_eq!(compared, 12 * 7 + (12 + 12 + 3) * 5 + 6 * 12 + 6 * 6);
}
