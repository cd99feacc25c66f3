//! Engine properties and every malformed-model error path.

mod common;

use gstvmafhip::vmaf::{
    Engine, EngineConfig, ModelSet, Picture, PixelFormat, Plane, Scorer, VmafError,
};
use proptest::prelude::*;

fn config() -> EngineConfig {
    EngineConfig::new(ModelSet::load("vmaf_v0.6.1").unwrap())
}

fn gray_u8<'a>(data: &'a [u8], w: usize, h: usize, stride: usize) -> Picture<'a> {
    Picture::new_u8(
        PixelFormat::Gray,
        &[Plane::new(data, w, h, stride).unwrap()],
    )
    .unwrap()
}

fn run_u8(
    frames: &[(Vec<u8>, Vec<u8>)],
    w: usize,
    h: usize,
    stride: usize,
) -> Vec<gstvmafhip::vmaf::FrameScores> {
    let mut e = Scorer::cpu(&config()).unwrap();
    let mut out = Vec::new();
    for (r, d) in frames {
        out.extend(
            e.push(gstvmafhip::vmaf::FramePair::new(
                &gray_u8(r, w, h, stride),
                &gray_u8(d, w, h, stride),
            ))
            .unwrap(),
        );
    }
    out.extend(e.flush().unwrap());
    out
}

fn pad_rows(img: &[u8], w: usize, h: usize, stride: usize, fill: u8) -> Vec<u8> {
    let mut v = vec![fill; stride * h];
    for y in 0..h {
        v[y * stride..y * stride + w].copy_from_slice(&img[y * w..(y + 1) * w]);
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn identical_frames_score_near_one(w in 40usize..90, h in 40usize..70, seed in 0u32..1000) {
        let img = common::textured_luma(0, w, h, seed);
        let s = run_u8(&[(img.clone(), img)], w, h, w);
        prop_assert!((s[0].get("integer_adm2").unwrap() - 1.0).abs() < 1e-3);
        for k in 0..4 {
            let name = format!("integer_vif_scale{}", k);
            prop_assert!((s[0].get(&name).unwrap() - 1.0).abs() < 1e-3);
        }
    }

    #[test]
    fn stride_padding_changes_nothing(w in 40usize..80, h in 40usize..60, pad in 1usize..40, seed in 0u32..1000) {
        let frames: Vec<_> = (0..3).map(|i| (common::textured_luma(i, w, h, seed), common::textured_luma(i, w, h, seed + 1))).collect();
        let packed = run_u8(&frames, w, h, w);
        let padded: Vec<_> = frames.iter().map(|(r, d)| (pad_rows(r, w, h, w + pad, 255), pad_rows(d, w, h, w + pad, 0))).collect();
        prop_assert_eq!(packed, run_u8(&padded, w, h, w + pad));
    }

    #[test]
    fn pooled_order_and_clip_range(seed in 0u32..1000) {
        let (w, h) = (64, 48);
        let frames: Vec<_> = (0..5).map(|i| (common::textured_luma(i, w, h, seed), common::textured_luma(i, w, h, seed ^ 77))).collect();
        let mut e = Scorer::cpu(&config()).unwrap();
        for (r, d) in &frames {
            e.push(gstvmafhip::vmaf::FramePair::new(&gray_u8(r, w, h, w), &gray_u8(d, w, h, w))).unwrap();
        }
        let s = e.flush().unwrap();
        prop_assert!(s.iter().all(|f| (0.0..=100.0).contains(&f.vmaf())));
        let p = *e.pooled().get("vmaf").unwrap();
        prop_assert!(p.min <= p.harmonic_mean() + 1e-12 && p.harmonic_mean() <= p.mean() + 1e-12 && p.mean() <= p.max);
    }
}

#[test]
fn static_sequence_has_zero_motion() {
    let (w, h) = (64, 48);
    let img = common::textured_luma(3, w, h, 9);
    let s = run_u8(&vec![(img.clone(), img); 4], w, h, w);
    assert!(s.iter().all(|f| f.get("integer_motion2") == Some(0.0)));
}

/// Any number of worker threads gives the single thread's numbers, frame by
/// frame (from 8 threads on, the two pictures of a pair are copied in on
/// two threads). PSNR reads chroma, so every plane is copied.
#[test]
fn worker_counts_score_alike() {
    let (w, h) = (96, 64);
    let (cw, ch) = (w / 2, h / 2);
    let frame = |i: u32, seed: u32| {
        let mut f = common::textured_luma(i, w, h, seed);
        f.extend(common::textured_luma(i, cw, ch, seed + 1));
        f.extend(common::textured_luma(i, cw, ch, seed + 2));
        f
    };
    let frames: Vec<(Vec<u8>, Vec<u8>)> = (0..20)
        .map(|i| (frame(i, 5), frame(i, 6 + i % 3)))
        .collect();
    fn pic(f: &[u8], w: usize, h: usize) -> Picture<'_> {
        let (cw, ch) = (w / 2, h / 2);
        Picture::new_u8(
            PixelFormat::Yuv420,
            &[
                Plane::new(&f[..w * h], w, h, w).unwrap(),
                Plane::new(&f[w * h..w * h + cw * ch], cw, ch, cw).unwrap(),
                Plane::new(&f[w * h + cw * ch..], cw, ch, cw).unwrap(),
            ],
        )
        .unwrap()
    }
    let run = |threads: usize| -> Vec<Vec<Option<f64>>> {
        let mut config = config();
        config.threads = threads;
        config.features.push("psnr".into());
        let mut e = Scorer::cpu(&config).unwrap();
        let mut out = Vec::new();
        for (r, d) in &frames {
            out.extend(
                e.push(gstvmafhip::vmaf::FramePair::new(
                    &pic(r, w, h),
                    &pic(d, w, h),
                ))
                .unwrap(),
            );
        }
        out.extend(e.flush().unwrap());
        out.into_iter().map(|f| f.values).collect()
    };
    let one = run(1);
    assert_eq!(one.len(), frames.len());
    assert!(one.iter().all(|v| v.iter().all(Option::is_some)));
    for threads in [2, 8, 16] {
        assert_eq!(run(threads), one, "{threads} threads");
    }
}

#[test]
fn flat_frames_and_bit_depth_extremes() {
    for bpc in [10u8, 12, 16] {
        let (w, h) = (48, 40);
        let max = ((1u32 << bpc) - 1) as u16;
        let white = vec![max; w * h];
        let black = vec![0u16; w * h];
        let mut e = Scorer::cpu(&config()).unwrap();
        let mut s = Vec::new();
        for (r, d) in [(&white, &white), (&white, &black), (&black, &white)] {
            let rp = Picture::new_u16(PixelFormat::Gray, bpc, &[Plane::new(r, w, h, w).unwrap()])
                .unwrap();
            let dp = Picture::new_u16(PixelFormat::Gray, bpc, &[Plane::new(d, w, h, w).unwrap()])
                .unwrap();
            s.extend(e.push(gstvmafhip::vmaf::FramePair::new(&rp, &dp)).unwrap());
        }
        s.extend(e.flush().unwrap());
        assert_eq!(s.len(), 3);
        assert!(s.iter().all(|f| f.vmaf().is_finite()), "{bpc}-bit: {s:?}");
        // Flat identical frames: every VIF pixel takes the non-log branch, num = den.
        assert_eq!(s[0].get("integer_vif_scale0"), Some(1.0));
    }
}

#[test]
fn mismatches_and_tiny_frames_are_errors() {
    let a = vec![0u8; 64 * 48];
    let b = vec![0u8; 60 * 48];
    let mut e = Scorer::cpu(&config()).unwrap();
    let err = e
        .push(gstvmafhip::vmaf::FramePair::new(
            &gray_u8(&a, 64, 48, 64),
            &gray_u8(&b, 60, 48, 60),
        ))
        .unwrap_err();
    assert!(
        matches!(err, VmafError::Mismatch(ref s) if s.contains("64x48") && s.contains("60x48")),
        "{err}"
    );
    let t = vec![0u8; 20 * 20];
    let err = e
        .push(gstvmafhip::vmaf::FramePair::new(
            &gray_u8(&t, 20, 20, 20),
            &gray_u8(&t, 20, 20, 20),
        ))
        .unwrap_err();
    assert!(matches!(err, VmafError::TooSmall(_)), "{err}");
    // Every size from 1x1 up to 33x33 with a side under 33 is refused,
    // naming the size and the minimum; 33x33 itself is measured.
    for w in 1..=33 {
        for h in 1..=33 {
            let img = vec![128u8; w * h];
            let mut e = Scorer::cpu(&config()).unwrap();
            let got = e.push(gstvmafhip::vmaf::FramePair::new(
                &gray_u8(&img, w, h, w),
                &gray_u8(&img, w, h, w),
            ));
            if w == 33 && h == 33 {
                got.unwrap();
                assert_eq!(e.flush().unwrap().len(), 1);
            } else {
                let err = got.unwrap_err().to_string();
                assert!(
                    err.contains(&format!("{w}x{h}")) && err.contains("needs at least 33x33"),
                    "{w}x{h}: {err}"
                );
            }
        }
    }
    assert!(Plane::new(&t, 20, 20, 19).is_err());
    assert!(Plane::new(&t[..100], 20, 20, 20).is_err());
}

fn model_error(text: &str) -> String {
    match ModelSet::parse("test.json", text) {
        Err(VmafError::Model { source, what }) => {
            assert_eq!(source, "test.json");
            what
        }
        other => panic!("expected a model error, got {other:?}"),
    }
}

#[test]
fn every_malformed_model_error_path() {
    let good = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/vmaf_v0.6.1.json"
    ))
    .unwrap();
    let json: serde_json::Value = serde_json::from_str(&good).unwrap();
    let with = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut j = json.clone();
        f(&mut j);
        j.to_string()
    };
    assert!(model_error(&good[..good.len() / 2]).contains("invalid JSON at line"));
    assert!(model_error("[1,2]").contains("not a JSON object"));
    assert!(model_error("{}").contains("neither a model"));
    assert!(
        model_error(r#"{"model_dict": 3}"#).contains("\"model_dict\" missing or not an object")
    );
    assert!(
        model_error(&with(
            &|j| j["model_dict"]["model_type"] = "RANDOMFOREST".into()
        ))
        .contains("not a libsvm")
    );
    assert!(
        model_error(&with(
            &|j| j["model_dict"]["feature_names"] = serde_json::json!([])
        ))
        .contains("empty")
    );
    assert!(
        model_error(&with(&|j| j["model_dict"]["feature_names"][1] = 5.into()))
            .contains("feature_names[1]")
    );
    assert!(
        model_error(&with(&|j| j["model_dict"]["norm_type"] = "zscore".into()))
            .contains("norm_type")
    );
    assert!(
        model_error(&with(
            &|j| j["model_dict"]["slopes"] = serde_json::json!([1.0])
        ))
        .contains("slopes/intercepts")
    );
    assert!(
        model_error(&with(&|j| j["model_dict"]["intercepts"][2] = "x".into()))
            .contains("intercepts[2]")
    );
    assert!(
        model_error(&with(
            &|j| j["model_dict"]["score_clip"] = serde_json::json!([0.0])
        ))
        .contains("score_clip")
    );
    assert!(
        model_error(&with(
            &|j| j["model_dict"]["score_transform"]["p1"] = "a".into()
        ))
        .contains("score_transform.p1")
    );
    assert!(
        model_error(&with(
            &|j| j["model_dict"]["score_transform"]["knots"] = serde_json::json!([[1, 1], [0, 2]])
        ))
        .contains("do not increase")
    );
    assert!(
        model_error(&with(
            &|j| j["model_dict"]["feature_opts_dicts"] = serde_json::json!([{}])
        ))
        .contains("feature_opts_dicts")
    );
    let svm = json["model_dict"]["model"].as_str().unwrap().to_string();
    let svm_err = |s: String| model_error(&with(&|j| j["model_dict"]["model"] = s.clone().into()));
    assert!(svm_err(svm.replace("rbf", "linear")).contains("kernel_type"));
    assert!(svm_err(svm.replace("nu_svr", "c_svc")).contains("svm_type"));
    assert!(svm_err(svm.replace("gamma 0.04", "gamma x")).contains("gamma"));
    assert!(svm_err(svm.replace("rho ", "rhoo ")).contains("unknown key"));
    assert!(svm_err(svm[..svm.len() * 2 / 3].to_string()).contains("truncated"));
    assert!(svm_err(svm.replacen("1:0.65734273", "9:0.65734273", 1)).contains("outside 1..=6"));
    assert!(svm_err(svm.replacen("1:0.65734273", "1=0.65734273", 1)).contains("index:value"));
    assert!(
        model_error(&with(&|j| {
            j["model_dict"].as_object_mut().unwrap().remove("model");
        }))
        .contains("libsvm text")
    );
    // Unknown features or options are refused when the engine is built.
    let unknown =
        with(&|j| j["model_dict"]["feature_names"][0] = "VMAF_feature_blockiness_score".into());
    let m = ModelSet::parse("unknown.json", &unknown).unwrap();
    assert!(
        matches!(Scorer::cpu(&EngineConfig::new(m)), Err(VmafError::Unsupported(s)) if s.contains("VMAF_feature_blockiness_score"))
    );
    assert!(
        matches!(ModelSet::load("no_such_model"), Err(VmafError::Model { what, .. }) if what.contains("built-in"))
    );
}

/// Every score (as bits) of `frames` (reference, distorted), PSNR included.
fn run_u16(frames: &[(Vec<u16>, Vec<u16>)], w: usize, h: usize, bpc: u8) -> Vec<u64> {
    let mut cfg = config();
    cfg.features.push("psnr".into());
    let mut e = Scorer::cpu(&cfg).unwrap();
    let mut out = Vec::new();
    for (r, d) in frames {
        // 8-bit pictures come as bytes.
        let (r8, d8): (Vec<u8>, Vec<u8>) = (
            r.iter().map(|&v| v as u8).collect(),
            d.iter().map(|&v| v as u8).collect(),
        );
        let (rp, dp) = if bpc == 8 {
            (gray_u8(&r8, w, h, w), gray_u8(&d8, w, h, w))
        } else {
            let pic =
                |v| Picture::new_u16(PixelFormat::Gray, bpc, &[Plane::new(v, w, h, w).unwrap()]);
            (pic(r).unwrap(), pic(d).unwrap())
        };
        out.extend(e.push(gstvmafhip::vmaf::FramePair::new(&rp, &dp)).unwrap());
    }
    out.extend(e.flush().unwrap());
    out.iter()
        .flat_map(|f| f.values.iter().map(|v| v.map_or(u64::MAX, f64::to_bits)))
        .collect()
}

/// Every copy of the hot loops the CPU can run (AVX2, AVX-512; see
/// `src/core/isa.rs`) gives the baseline copy's bits, for 8, 10, 12 and 16 bits
/// and odd sizes; a copy the CPU lacks is named as not exercised.
#[test]
fn every_isa_copy_agrees_with_the_baseline() {
    use gstvmafhip::core::isa::{self, Isa};
    let clips: Vec<(usize, usize, u8)> = vec![
        (64, 48, 8),
        (53, 37, 8),
        (75, 53, 10),
        (96, 64, 12),
        (67, 45, 16),
    ];
    let frames = |w: usize, h: usize, bpc: u8| -> Vec<(Vec<u16>, Vec<u16>)> {
        let scale = |v: u8| (u32::from(v) << (bpc - 8)) as u16 | u16::from(v & 3);
        (0..4)
            .map(|i| {
                let r = common::textured_luma(i, w, h, 5)
                    .into_iter()
                    .map(scale)
                    .collect();
                let d = common::textured_luma(i, w, h, 6)
                    .into_iter()
                    .map(scale)
                    .collect();
                (r, d)
            })
            .collect()
    };
    let all = |copy: Isa| -> Vec<Vec<u64>> {
        assert!(isa::force(copy));
        assert_eq!(isa::active(), copy);
        clips
            .iter()
            .map(|&(w, h, bpc)| run_u16(&frames(w, h, bpc), w, h, bpc))
            .collect()
    };
    let baseline = all(Isa::Baseline);
    for copy in [Isa::Avx2, Isa::Avx512] {
        if copy > isa::detected() {
            eprintln!(
                "not exercised: the {} copy (this CPU's best is {})",
                copy.name(),
                isa::detected().name()
            );
            continue;
        }
        let got = all(copy);
        for ((w, h, bpc), (b, g)) in clips.iter().zip(baseline.iter().zip(&got)) {
            assert!(!b.is_empty());
            assert_eq!(
                b,
                g,
                "{w}x{h} {bpc}-bit: {} differs from baseline",
                copy.name()
            );
        }
        eprintln!("{} copy: bit-identical to baseline", copy.name());
    }
    assert!(isa::force(isa::detected()));
    assert!(!isa::force(Isa::Avx512) || isa::detected() == Isa::Avx512);
}
