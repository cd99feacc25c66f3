//! Shared test helpers: the golden data in `tests/data/golden`, synthetic frames.
#![allow(dead_code)]

use gstvmafhip::vmaf::ModelSpec;
use gstvmafhip::vmaf::yuv::YuvFrame;
use gstvmafhip::vmaf::{Engine, EngineConfig, FrameScores, PixelFormat, PooledScores, Scorer};
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

#[cfg(feature = "plugin")]
pub mod gpu;
pub mod parity;
#[cfg(feature = "plugin")]
pub mod pipeline;
pub mod scrape;

/// The project's golden data, `tests/data/golden` (see its README), or
/// `$VMAFHIP_TESTDATA` (test binaries carried to another machine).
pub fn testdata_dir() -> PathBuf {
    if let Ok(p) = std::env::var("VMAFHIP_TESTDATA") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden")
}

fn read_manifest(name: &str) -> Value {
    let p = testdata_dir().join(name);
    let text = std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e} (golden data missing?)", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `manifest.json`: the VMAF v0 runs.
pub fn manifest() -> &'static Value {
    static M: OnceLock<Value> = OnceLock::new();
    M.get_or_init(|| read_manifest("manifest.json"))
}

/// `manifest-v1.json`: VMAF v1, bootstrap and 4K NEG runs.
pub fn manifest_v1() -> &'static Value {
    static M: OnceLock<Value> = OnceLock::new();
    M.get_or_init(|| read_manifest("manifest-v1.json"))
}

/// Where decompressed clips are cached: `target/tmp/golden-yuv`, or
/// `$VMAFHIP_GOLDEN_CACHE` (test binaries carried to another machine).
pub fn golden_cache() -> PathBuf {
    match std::env::var_os("VMAFHIP_GOLDEN_CACHE") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_TARGET_TMPDIR")).join("golden-yuv"),
    }
}

/// Decompressed bytes of a `.yuv.zst`, cached under `golden_cache()`.
pub fn yuv_bytes(zst_name: &str) -> Vec<u8> {
    let cache = golden_cache();
    std::fs::create_dir_all(&cache).unwrap();
    let out = cache.join(zst_name.trim_end_matches(".zst"));
    if let Ok(b) = std::fs::read(&out) {
        return b;
    }
    let f = std::fs::File::open(testdata_dir().join(zst_name)).unwrap();
    let mut dec = ruzstd::decoding::StreamingDecoder::new(f).unwrap();
    let mut bytes = Vec::new();
    dec.read_to_end(&mut bytes).unwrap();
    // Tests of one binary run on parallel threads of one process and may
    // decompress the same clip at once: each writes its own temporary file
    // (process and thread), and the rename makes one of them the cache.
    let tmp = out.with_extension(format!(
        "tmp{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&tmp, &bytes).unwrap();
    std::fs::rename(&tmp, &out).unwrap();
    bytes
}

/// One run of one golden pair, as the manifest describes it.
#[derive(Clone, Debug)]
pub struct GoldenRun {
    pub pair: String,
    pub run: String,
    pub ref_zst: String,
    pub dis_zst: String,
    pub width: usize,
    pub height: usize,
    pub format: PixelFormat,
    pub bpc: u8,
    pub model: String,
    pub psnr: bool,
    pub ssim: bool,
    pub ms_ssim: bool,
    /// The other `--feature`s (extractors added beside the model's).
    pub features: Vec<String>,
    pub subsample: u32,
    pub threads: usize,
    pub json: String,
    /// libvmaf's command line for the run.
    pub command: String,
}

/// Every run of `manifest.json`.
pub fn golden_runs() -> Vec<GoldenRun> {
    runs_of(manifest())
}

/// Every run of `manifest-v1.json`.
pub fn golden_runs_v1() -> Vec<GoldenRun> {
    runs_of(manifest_v1())
}

/// Every run of `manifest-features.json`.
pub fn golden_runs_features() -> Vec<GoldenRun> {
    static M: OnceLock<Value> = OnceLock::new();
    runs_of(M.get_or_init(|| {
        serde_json::from_str(
            &std::fs::read_to_string(testdata_dir().join("manifest-features.json")).unwrap(),
        )
        .unwrap()
    }))
}

/// Every run of `manifest-options.json`: every extractor by name, and
/// extractors with non-default options.
pub fn golden_runs_options() -> Vec<GoldenRun> {
    static M: OnceLock<Value> = OnceLock::new();
    runs_of(M.get_or_init(|| read_manifest("manifest-options.json")))
}

/// The golden run `run` of `pair`, from either manifest (`manifest.json`
/// first).
pub fn golden_run(pair: &str, run: &str) -> GoldenRun {
    golden_runs()
        .into_iter()
        .chain(golden_runs_v1())
        .find(|r| r.pair == pair && r.run == run)
        .unwrap_or_else(|| panic!("no golden run {pair} {run} in the manifests"))
}

fn runs_of(manifest: &Value) -> Vec<GoldenRun> {
    let mut out = Vec::new();
    for p in manifest["pairs"].as_array().unwrap() {
        for r in p["runs"].as_array().unwrap() {
            let cmd: Vec<&str> = r["command"].as_str().unwrap().split_whitespace().collect();
            let arg = |flag: &str| cmd.iter().position(|&c| c == flag).map(|i| cmd[i + 1]);
            let has_feature = |f: &str| cmd.windows(2).any(|w| w[0] == "--feature" && w[1] == f);
            out.push(GoldenRun {
                pair: p["id"].as_str().unwrap().into(),
                run: r["name"].as_str().unwrap().into(),
                ref_zst: p["ref"].as_str().unwrap().into(),
                dis_zst: p["dis"].as_str().unwrap().into(),
                width: p["width"].as_u64().unwrap() as usize,
                height: p["height"].as_u64().unwrap() as usize,
                format: PixelFormat::parse(p["vmaf_p"].as_str().unwrap()).unwrap(),
                bpc: p["bitdepth"].as_u64().unwrap() as u8,
                model: arg("--model").unwrap().into(),
                psnr: has_feature("psnr"),
                ssim: has_feature("float_ssim"),
                ms_ssim: has_feature("float_ms_ssim"),
                features: cmd
                    .windows(2)
                    .filter(|w| {
                        w[0] == "--feature"
                            && !["psnr", "float_ssim", "float_ms_ssim"].contains(&w[1])
                    })
                    .map(|w| w[1].to_string())
                    .collect(),
                subsample: arg("--subsample").map_or(1, |s| s.parse().unwrap()),
                threads: arg("--threads").map_or(1, |s| s.parse().unwrap()),
                json: r["json"].as_str().unwrap().into(),
                command: r["command"].as_str().unwrap().into(),
            });
        }
    }
    out
}

impl GoldenRun {
    /// The model name without `version=` and overrides.
    pub fn model_name(&self) -> &str {
        let m = self.model.trim_start_matches("version=");
        m.split(':').next().unwrap_or(m)
    }

    pub fn config(&self) -> EngineConfig {
        let spec = ModelSpec::parse(&self.model).unwrap();
        let mut c = EngineConfig::new(spec.models);
        c.flags = spec.flags;
        c.features = self.features.clone();
        for (on, name) in [
            (self.psnr, "psnr"),
            (self.ssim, "float_ssim"),
            (self.ms_ssim, "float_ms_ssim"),
        ] {
            if on {
                c.features.push(name.into());
            }
        }
        c.subsample = self.subsample;
        c.threads = self.threads;
        c
    }

    pub fn expected(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(testdata_dir().join(&self.json)).unwrap())
            .unwrap()
    }

    /// Feed both files through any engine.
    pub fn run_engine(&self, engine: &mut dyn Engine) -> (Vec<FrameScores>, PooledScores) {
        let (rb, db) = (yuv_bytes(&self.ref_zst), yuv_bytes(&self.dis_zst));
        let mut rf = YuvFrame::new(self.width, self.height, self.format, self.bpc).unwrap();
        let mut df = YuvFrame::new(self.width, self.height, self.format, self.bpc).unwrap();
        let fb = rf.frame_bytes();
        assert_eq!(
            rb.len() % fb,
            0,
            "{}: size is not a whole number of frames",
            self.ref_zst
        );
        let mut frames = Vec::new();
        for i in 0..rb.len() / fb {
            rf.load(&rb[i * fb..(i + 1) * fb]).unwrap();
            df.load(&db[i * fb..(i + 1) * fb]).unwrap();
            frames.extend(
                engine
                    .push(gstvmafhip::vmaf::FramePair::new(
                        &rf.picture().unwrap(),
                        &df.picture().unwrap(),
                    ))
                    .unwrap(),
            );
        }
        frames.extend(engine.flush().unwrap());
        (frames, engine.pooled())
    }

    pub fn run_cpu(&self) -> (Vec<FrameScores>, PooledScores) {
        let mut e = Scorer::cpu(&self.config()).unwrap();
        self.run_engine(&mut e)
    }
}

/// Tolerance of one metric against libvmaf's 6-decimal JSON (tests/README in
/// docs/testing.md): integer features are exact, so only print rounding
/// (5e-7) separates them; model scores and float metrics get 1e-4.
pub fn tolerance(name: &str) -> f64 {
    if name.starts_with("integer_") || name.starts_with("VMAF_integer") {
        1e-6
    } else {
        1e-4
    }
}

/// Compare engine output with a libvmaf JSON; returns a list of mismatches.
pub fn compare_with_golden(
    frames: &[FrameScores],
    pooled: &PooledScores,
    golden: &Value,
) -> Vec<String> {
    let mut bad = Vec::new();
    // libvmaf's stream-wide values (APSNR), from summed integer errors.
    let aggregates = golden["aggregate_metrics"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for (k, v) in &aggregates {
        let got = pooled
            .aggregates
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, x)| *x);
        if !got.is_some_and(|g| v.as_f64().is_some_and(|w| (g - w).abs() <= 1e-6)) {
            bad.push(format!("aggregate {k}: {got:?}, libvmaf {v}"));
        }
    }
    if pooled.aggregates.len() != aggregates.len() {
        bad.push(format!(
            "aggregates {:?}, libvmaf {aggregates:?}",
            pooled.aggregates
        ));
    }
    let gf = golden["frames"].as_array().unwrap();
    if gf.len() != frames.len() {
        bad.push(format!(
            "{} frames, libvmaf lists {}",
            frames.len(),
            gf.len()
        ));
    }
    for (f, g) in frames.iter().zip(gf) {
        if g["frameNum"].as_u64().unwrap() != f.index {
            bad.push(format!(
                "frame {} where libvmaf lists {}",
                f.index, g["frameNum"]
            ));
        }
        for (k, v) in g["metrics"].as_object().unwrap() {
            let Some(want) = v.as_f64() else {
                // libvmaf's null: an infinite value (identical pictures).
                if !f.get(k).is_some_and(|g| g.is_infinite()) {
                    bad.push(format!(
                        "frame {}: {k} = {:?}, libvmaf null",
                        f.index,
                        f.get(k)
                    ));
                }
                continue;
            };
            match f.get(k) {
                None => bad.push(format!("frame {}: {k} missing", f.index)),
                Some(got) if (got - want).abs() > tolerance(k) => bad.push(format!(
                    "frame {}: {k} = {got:.9}, libvmaf {want:.6}",
                    f.index
                )),
                _ => {}
            }
        }
    }
    for (k, v) in golden["pooled_metrics"].as_object().unwrap() {
        let Some(p) = pooled.get(k) else {
            bad.push(format!("pooled {k} missing"));
            continue;
        };
        for (m, got) in [
            ("min", p.min),
            ("max", p.max),
            ("mean", p.mean()),
            ("harmonic_mean", p.harmonic_mean()),
        ] {
            let Some(want) = v[m].as_f64() else {
                if got.is_finite() {
                    bad.push(format!("pooled {k}.{m} = {got:.9}, libvmaf null"));
                }
                continue;
            };
            if (got - want).abs() > tolerance(k) {
                bad.push(format!("pooled {k}.{m} = {got:.9}, libvmaf {want:.6}"));
            }
        }
    }
    bad
}

/// A deterministic textured 8-bit frame (moving pattern plus noise).
pub fn textured_luma(i: u32, w: usize, h: usize, seed: u32) -> Vec<u8> {
    let mut s = seed.wrapping_add(i.wrapping_mul(7919));
    (0..w * h)
        .map(|p| {
            let (x, y) = ((p % w) as u32, (p / w) as u32);
            s = s.wrapping_mul(1664525).wrapping_add(1013904223);
            let v = ((x + 2 * i) * 5 + y * 3) % 160 + 40 + (s >> 29);
            v as u8
        })
        .collect()
}

/// Compares a results JSON (libvmaf's layout) with libvmaf's own: every
/// frame's every metric and every pooled mean, within [`tolerance`].
pub fn compare_json(got: &Value, want: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    let (gf, wf) = (
        got["frames"].as_array().map_or(&[][..], |v| v),
        want["frames"].as_array().unwrap(),
    );
    if gf.len() != wf.len() {
        bad.push(format!("{} frames, libvmaf lists {}", gf.len(), wf.len()));
        return bad;
    }
    for (g, w) in gf.iter().zip(wf) {
        for (k, v) in w["metrics"].as_object().unwrap() {
            if v.is_null() && g["metrics"][k].is_null() {
                continue; // libvmaf's null for an infinite value
            }
            match g["metrics"][k].as_f64() {
                Some(x) if v.as_f64().is_some_and(|v| (x - v).abs() <= tolerance(k)) => {}
                other => bad.push(format!(
                    "frame {}: {k} = {other:?}, libvmaf {v}",
                    w["frameNum"]
                )),
            }
        }
    }
    // The stream-wide values (APSNR), each to libvmaf's printed digits.
    let aggregates = want["aggregate_metrics"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for (k, v) in &aggregates {
        let g = got["aggregate_metrics"][k].as_f64();
        if !g.is_some_and(|g| v.as_f64().is_some_and(|v| (g - v).abs() <= 1e-6)) {
            bad.push(format!("aggregate {k} = {g:?}, libvmaf {v}"));
        }
    }
    for (k, v) in want["pooled_metrics"].as_object().unwrap() {
        if v["mean"].is_null() && got["pooled_metrics"][k]["mean"].is_null() {
            continue;
        }
        let g = got["pooled_metrics"][k]["mean"].as_f64();
        if !g.is_some_and(|g| {
            v["mean"]
                .as_f64()
                .is_some_and(|v| (g - v).abs() <= tolerance(k))
        }) {
            bad.push(format!("pooled {k} {g:?} vs {}", v["mean"]));
        }
    }
    bad
}

impl GoldenRun {
    /// The decompressed reference and distorted files (cached).
    pub fn yuv_paths(&self) -> (PathBuf, PathBuf) {
        yuv_bytes(&self.ref_zst);
        yuv_bytes(&self.dis_zst);
        let cache = golden_cache();
        (
            cache.join(self.ref_zst.trim_end_matches(".zst")),
            cache.join(self.dis_zst.trim_end_matches(".zst")),
        )
    }

    /// libvmaf's `-p` value of the run.
    pub fn p_arg(&self) -> &'static str {
        match self.format {
            PixelFormat::Yuv420 => "420",
            PixelFormat::Yuv422 => "422",
            PixelFormat::Yuv444 => "444",
            PixelFormat::Gray => "400",
        }
    }
}

/// An 8-bit plane of `from` samples at `to`: each sample the mean of the
/// samples it covers (a rendition made for the ladder tests).
pub fn box_average(plane: &[u8], (sw, sh): (usize, usize), (dw, dh): (usize, usize)) -> Vec<u8> {
    let span = |i: usize, s: usize, d: usize| (i * s / d, ((i + 1) * s / d).max(i * s / d + 1));
    let mut out = Vec::with_capacity(dw * dh);
    for y in 0..dh {
        let (y0, y1) = span(y, sh, dh);
        for x in 0..dw {
            let (x0, x1) = span(x, sw, dw);
            let sum: u32 = (y0..y1)
                .flat_map(|yy| plane[yy * sw + x0..yy * sw + x1].iter())
                .map(|&v| u32::from(v))
                .sum();
            out.push((sum / ((x1 - x0) * (y1 - y0)) as u32) as u8);
        }
    }
    out
}

/// A pan across the coffee cup with grain, 320x180 I420 at 3 pixels a
/// frame, to and fro: `n` frames of the reference, and of its encode
/// (the golden CRF 23 clip) cut the same way. Natural content for
/// alignment, any length.
pub fn pan(n: usize) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    const W: usize = 576;
    const H: usize = 324;
    let split = |zst: &str| -> Vec<Vec<u8>> {
        yuv_bytes(zst)
            .chunks(W * H * 3 / 2)
            .map(<[u8]>::to_vec)
            .collect()
    };
    let reference = split("coffee_576x324_420p8_12f_ref.yuv.zst");
    let encode = split("coffee_576x324_420p8_12f_crf23.yuv.zst");
    let crop = |src: &[u8], x0: usize, seed: usize| {
        let (w, h) = (320, 180);
        let mut out = Vec::with_capacity(w * h * 3 / 2);
        for y in 0..h {
            for x in 0..w {
                let v = src[(y + 40) * W + x0 + x] as i32;
                let grain = ((x * 7919 + y * 104_729 + seed * 31) % 7) as i32 - 3;
                out.push((v + grain).clamp(0, 255) as u8);
            }
        }
        for plane in 0..2 {
            let base = W * H + plane * (W / 2) * (H / 2);
            for y in 0..h / 2 {
                let row = base + (y + 20) * (W / 2) + x0 / 2;
                out.extend_from_slice(&src[row..row + w / 2]);
            }
        }
        out
    };
    // To and fro across the 256 columns the crop can move.
    let x = |t: usize| {
        let p = (t * 3) % 512;
        if p < 256 { p } else { 511 - p }
    };
    (0..n)
        .map(|t| {
            (
                crop(&reference[t % 12], x(t), t),
                crop(&encode[t % 12], x(t), t),
            )
        })
        .unzip()
}
