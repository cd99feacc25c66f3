//! CPU ↔ GPU parity helpers shared by tests/hip_parity.rs (a real GPU) and
//! tests/hip_wave64.rs (the AMD path on the CPU emulator): the HIP scorer,
//! exact frame comparison, golden runs and synthetic sequences.

use gstvmafhip::gpu::{
    Failover, HipBackend, HipOptions, OpenedDevice, Retry, SharedReference, SharingCounts,
};
use gstvmafhip::hip::{PinnedHostMem, pinned_owner};
use gstvmafhip::vmaf::{
    Engine, EngineConfig, FailoverNote, FramePair, FrameScores, KeepAlive, ModelSet, Picture,
    PixelFormat, Plane, ScaleMethod, Scorer, VmafError,
};

pub fn hip_scorer(config: &EngineConfig) -> Option<Scorer<HipBackend>> {
    let plan = config.plan().unwrap();
    match HipBackend::new(plan, &HipOptions::default()) {
        Ok(b) => {
            eprintln!(
                "HIP backend: {}",
                gstvmafhip::vmaf::FeatureBackend::describe(&b)
            );
            Some(Scorer::with_backend(config, b).unwrap())
        }
        Err(e) => skip_without_gpu(e.to_string()),
    }
}

/// The HIP scorer with the CPU engine behind it (`Failover`), as the
/// element and the command run it by default; with `retry`, going back to
/// a GPU opened again at the next frame after an error.
pub fn failover_scorer(config: &EngineConfig, retry: bool) -> Option<Scorer<Failover<HipBackend>>> {
    let plan = config.plan().unwrap();
    let gpu = HipBackend::new(plan.clone(), &HipOptions::default()).ok()?;
    let mut failover = Failover::new(gpu, plan.clone(), 2);
    if retry {
        let reopen = move || {
            HipBackend::new(plan.clone(), &HipOptions::default())
                .map_err(|e| VmafError::Backend(e.to_string()))
        };
        failover = failover.with_retry(Retry::new(reopen, std::time::Duration::ZERO));
    }
    Some(Scorer::with_backend(config, failover).unwrap())
}

/// Where a stream ran, as the test logs say it: "on the GPU", or each move.
pub fn where_it_ran(moves: &[FailoverNote]) -> String {
    if moves.is_empty() {
        return "all on the GPU".into();
    }
    let each: Vec<String> = moves
        .iter()
        .map(|m| match &m.error {
            Some(e) => format!("on the CPU from frame {} ({e})", m.frame),
            None => format!("back on the GPU from frame {}", m.frame),
        })
        .collect();
    each.join(", ")
}

/// Metrics whose GPU values come through the device's libm (its `pow`,
/// `atan2`, `sin`, ... round differently from glibc's), and how far they
/// may be from the CPU's; everything else must be equal.
const DEVICE_LIBM: &[(&str, f64)] = &[("ciede2000", 1e-6)];

/// Every value of every frame, compared exactly (NaN equals NaN), but for
/// [`DEVICE_LIBM`]'s.
pub fn diff(cpu: &[FrameScores], gpu: &[FrameScores]) -> Vec<String> {
    let mut bad = Vec::new();
    if cpu.len() != gpu.len() {
        bad.push(format!(
            "{} CPU frames, {} GPU frames",
            cpu.len(),
            gpu.len()
        ));
    }
    for (c, g) in cpu.iter().zip(gpu) {
        assert_eq!(c.names, g.names);
        for (i, name) in c.names.iter().enumerate() {
            let (a, b) = (c.values[i], g.values[i]);
            let same = match (a, b) {
                (Some(x), Some(y)) => {
                    let bound = DEVICE_LIBM
                        .iter()
                        .find(|(n, _)| n == name)
                        .map_or(0.0, |m| m.1);
                    x.to_bits() == y.to_bits()
                        || (x.is_nan() && y.is_nan())
                        || (x - y).abs() <= bound
                }
                (None, None) => true,
                _ => false,
            };
            if !same {
                bad.push(format!("frame {} {name}: cpu {a:?} gpu {b:?}", c.index));
            }
        }
    }
    bad
}

/// Every run on the GPU: each frame's values equal the CPU engine's bit for
/// bit and agree with libvmaf's JSON. Frames compared, or None without a GPU.
pub fn golden_runs_bit_exact(runs: Vec<super::GoldenRun>) -> Option<usize> {
    let mut total = 0;
    for run in runs {
        let config = run.config();
        let mut gpu = hip_scorer(&config)?;
        let (cpu_frames, _) = run.run_cpu();
        let (gpu_frames, gpu_pooled) = run.run_engine(&mut gpu);
        let bad = diff(&cpu_frames, &gpu_frames);
        assert!(
            bad.is_empty(),
            "{} / {}: {}",
            run.pair,
            run.run,
            bad.join("\n")
        );
        let vs_libvmaf = super::compare_with_golden(&gpu_frames, &gpu_pooled, &run.expected());
        assert!(
            vs_libvmaf.is_empty(),
            "{} / {} vs libvmaf: {vs_libvmaf:?}",
            run.pair,
            run.run
        );
        total += gpu_frames.len();
        eprintln!(
            "{} / {}: {} frames identical",
            run.pair,
            run.run,
            gpu_frames.len()
        );
    }
    Some(total)
}

/// A synthetic sequence: a moving textured reference and a distorted copy
/// (quantised, with a blockiness and a little noise), at any depth.
pub struct Seq {
    pub w: usize,
    pub h: usize,
    pub format: PixelFormat,
    pub bpc: u8,
    /// Row padding in samples (stride = width + pad).
    pub pad: usize,
}

impl Seq {
    pub fn planes(&self) -> Vec<(usize, usize)> {
        let mut v = vec![(self.w, self.h)];
        if let Some((cw, ch)) = self.format.stored_chroma_size(self.w, self.h) {
            v.push((cw, ch));
            v.push((cw, ch));
        }
        v
    }

    /// Samples of frame `i`, reference (`dist` false) or distorted, per plane, strided.
    pub fn samples(&self, i: u32, dist: bool) -> Vec<Vec<u16>> {
        let max = (1u32 << self.bpc) - 1;
        let mut s = 12345u32 ^ i.wrapping_mul(2654435761) ^ (dist as u32 * 77);
        self.planes()
            .iter()
            .enumerate()
            .map(|(p, &(pw, ph))| {
                let stride = pw + self.pad;
                let mut v = vec![0u16; stride * ph];
                for y in 0..ph {
                    for x in 0..pw {
                        s = s.wrapping_mul(1664525).wrapping_add(1013904223);
                        let xf = x as f64 + 1.7 * f64::from(i);
                        let base = 0.5
                            + 0.3 * (xf * 0.11 + y as f64 * 0.07 + p as f64).sin()
                            + 0.15 * ((xf * 0.37).cos() * (y as f64 * 0.23).sin());
                        let mut val = base * f64::from(max);
                        if dist {
                            let q = f64::from(max) / 24.0;
                            val = (val / q).round() * q
                                + if (x / 8 + y / 8) % 2 == 0 {
                                    q * 0.3
                                } else {
                                    0.0
                                };
                            val += f64::from(s >> 28) - 8.0;
                        } else {
                            val += f64::from(s >> 30);
                        }
                        if p == 0 && y >= ph / 2 {
                            // A slow luma ramp: smooth in the reference,
                            // in steps of one 8-bit level in the distorted
                            // picture (banding for CAMBI).
                            let g = 0.3 + 0.08 * (xf / pw as f64);
                            val = g * f64::from(max);
                            if dist {
                                let q = f64::from(max + 1) / 256.0;
                                val = (val / q).floor() * q;
                            }
                        }
                        v[y * stride + x] = val.clamp(0.0, f64::from(max)) as u16;
                    }
                }
                v
            })
            .collect()
    }
}

/// Pushes `n` frames of `seq` through `engine`. With `pinned`, the frames are
/// first copied into pinned memory and pushed with a keep-alive, so the GPU
/// uploads them in place; otherwise from ordinary memory (staging copy).
pub fn push_seq(
    engine: &mut dyn Engine,
    seq: &Seq,
    n: u32,
    pinned: Option<&HipBackend>,
) -> Vec<FrameScores> {
    let mut out = Vec::new();
    for i in 0..n {
        let r = seq.samples(i, false);
        let d = seq.samples(i, true);
        let frames: Vec<FrameScores> = match pinned.filter(|_| seq.bpc == 8) {
            Some(b) => {
                let dims = seq.planes();
                let mk8 = |v: &Vec<Vec<u16>>| -> Vec<(Vec<u8>, usize, usize)> {
                    v.iter()
                        .zip(&dims)
                        .map(|(p, &(w, h))| (p.iter().map(|&x| x as u8).collect(), w, h))
                        .collect()
                };
                let (r8, d8) = (mk8(&r), mk8(&d));
                // One pinned buffer per side, planes back to back.
                let mut bufs = Vec::new();
                for side in [&r8, &d8] {
                    let len: usize = side.iter().map(|(p, _, _)| p.len()).sum();
                    let mut m = PinnedHostMem::new(b.device(), len).unwrap();
                    let mut off = 0;
                    for (p, _, _) in side {
                        m.as_mut()[off..off + p.len()].copy_from_slice(p);
                        off += p.len();
                    }
                    bufs.push(m);
                }
                let views: Vec<Vec<Plane<'_, u8>>> = bufs
                    .iter()
                    .zip([&r8, &d8])
                    .map(|(m, side)| {
                        let mut off = 0;
                        side.iter()
                            .map(|(p, w, h)| {
                                let pl = Plane::new(
                                    &m.as_ref()[off..off + p.len()],
                                    *w,
                                    *h,
                                    w + seq.pad,
                                )
                                .unwrap();
                                off += p.len();
                                pl
                            })
                            .collect()
                    })
                    .collect();
                assert!(pinned_owner(views[0][0].data).is_some());
                let rp = Picture::new_u8(seq.format, &views[0]).unwrap();
                let dp = Picture::new_u8(seq.format, &views[1]).unwrap();
                let keep: KeepAlive =
                    Box::new(bufs.iter().map(|m| m.shared().clone()).collect::<Vec<_>>());
                engine
                    .push(FramePair::new(&rp, &dp).kept(Some(keep)))
                    .unwrap()
            }
            None => with_picture(seq, &r, |rp| {
                with_picture(seq, &d, |dp| engine.push(FramePair::new(rp, dp)).unwrap())
            }),
        };
        out.extend(frames);
    }
    out.extend(engine.flush().unwrap());
    out
}

/// As `push_seq` (8-bit only) from ordinary host memory that the engine is
/// told to keep (a keep-alive owns it): the HIP backend may page-lock it in
/// place instead of staging it.
pub fn push_seq_kept(engine: &mut dyn Engine, seq: &Seq, n: u32) -> Vec<FrameScores> {
    assert_eq!(seq.bpc, 8);
    let mut out = Vec::new();
    let dims = seq.planes();
    for i in 0..n {
        let side = |dist: bool| -> Vec<std::sync::Arc<Vec<u8>>> {
            seq.samples(i, dist)
                .iter()
                .map(|p| std::sync::Arc::new(p.iter().map(|&x| x as u8).collect()))
                .collect()
        };
        let (r, d) = (side(false), side(true));
        fn planes<'a>(
            v: &'a [std::sync::Arc<Vec<u8>>],
            dims: &[(usize, usize)],
            pad: usize,
        ) -> Vec<Plane<'a, u8>> {
            v.iter()
                .zip(dims)
                .map(|(p, &(w, h))| Plane::new(p.as_slice(), w, h, w + pad).unwrap())
                .collect()
        }
        let rp = Picture::new_u8(seq.format, &planes(&r, &dims, seq.pad)).unwrap();
        let dp = Picture::new_u8(seq.format, &planes(&d, &dims, seq.pad)).unwrap();
        let keep: KeepAlive = Box::new((r.clone(), d.clone()));
        out.extend(
            engine
                .push(FramePair::new(&rp, &dp).kept(Some(keep)))
                .unwrap(),
        );
    }
    out.extend(engine.flush().unwrap());
    out
}

/// `model`, with PSNR and, with it, SSIM, MS-SSIM and the extractors
/// without options (`float_psnr`, `float_ansnr`, `float_moment`, `ciede`,
/// `psnr_hvs`, and `speed_temporal`).
pub fn config(psnr: bool, model: &str) -> EngineConfig {
    let mut c = EngineConfig::new(ModelSet::load(model).unwrap());
    if psnr {
        c.features = [
            "float_psnr",
            "float_ansnr",
            "float_moment",
            "ciede",
            "psnr_hvs",
            "speed_temporal",
            "psnr",
            "float_ssim",
            "float_ms_ssim",
        ]
        .map(String::from)
        .to_vec();
    }
    c
}

/// Each extractor `--feature` adds, alone beside `vmaf_v0.6.1` (whose
/// integer extractors share none of its kernels), on the GPU against the
/// CPU engine, bit for bit, on `frames` frames of `seq`. A backend loads
/// only the kernel sets of its plan's extractors, and each feature here
/// gets a device with none loaded yet: a twin that runs another
/// extractor's kernels and does not say so (`Extractor::kernels`) fails
/// here. Returns the features checked (none without a GPU).
pub fn each_feature_alone_bit_exact(seq: &Seq, frames: u32) -> usize {
    let dev = match gstvmafhip::gpu::shared_device(gstvmafhip::hip::Vendor::Auto, 0) {
        Ok(dev) => dev,
        Err(e) => return skip_without_gpu(e.to_string()).unwrap_or(0),
    };
    let mut checked = 0;
    for name in gstvmafhip::extractors::feature_names() {
        let mut c = config(false, "vmaf_v0.6.1");
        c.features = vec![name.to_string()];
        let options = HipOptions {
            device: Some(OpenedDevice::with_kernels(dev.clone())),
            ..HipOptions::default()
        };
        let backend = HipBackend::new(c.plan().unwrap(), &options).unwrap();
        let mut gpu = Scorer::with_backend(&c, backend).unwrap();
        let mut cpu = Scorer::cpu(&c).unwrap();
        let (a, b) = (
            push_seq(&mut cpu, seq, frames, None),
            push_seq(&mut gpu, seq, frames, None),
        );
        let bad = diff(&a, &b);
        assert!(bad.is_empty(), "{name} alone: {}", bad.join("\n"));
        eprintln!("  {name} alone: {} frames identical", b.len());
        checked += 1;
    }
    checked
}

/// The float extractors' scaling options (float_vif's prescale with each
/// method, float_motion's halves and chroma), as model overrides.
pub const FLOAT_OPTION_MODELS: [&str; 5] = [
    "vmaf_float_v0.6.1:float_vif.vif_prescale=0.5:float_vif.vif_prescale_method=bicubic",
    "vmaf_float_v0.6.1:float_vif.vif_prescale=1.5:float_vif.vif_prescale_method=bilinear",
    "vmaf_float_v0.6.1:float_vif.vif_prescale=1.25:float_vif.vif_prescale_method=lanczos4",
    "vmaf_float_v0.6.1:float_motion.motion_add_scale1=true",
    "vmaf_float_v0.6.1:float_motion.motion_add_uv=true:float_motion.motion_filter_size=3",
];

/// Every model on every synthetic case: GPU equal to CPU, bit for bit.
pub fn sizes_bit_exact(
    cases: &[(usize, usize, PixelFormat, u8, usize)],
    models: &[&str],
    psnr: bool,
) {
    for &(w, h, format, bpc, pad) in cases {
        let seq = Seq {
            w,
            h,
            format,
            bpc,
            pad,
        };
        for model in models {
            let mut c = config(psnr, model);
            if format == PixelFormat::Gray || bpc > 12 {
                // ciede and psnr_hvs read chroma and take at most 12 bits.
                c.features
                    .retain(|f| !matches!(f.as_str(), "ciede" | "psnr_hvs"));
            }
            if w < 80 || h < 80 {
                // SpEED's 16:1 decimation needs 5x5 blocks.
                c.features.retain(|f| f != "speed_temporal");
            }
            // MS-SSIM's five scales need 176x176 (smaller is an error).
            if w < 176 || h < 176 {
                c.features.retain(|f| f != "float_ms_ssim");
            }
            let Some(mut gpu) = hip_scorer(&c) else {
                return;
            };
            let mut cpu = Scorer::cpu(&c).unwrap();
            let n = if w >= 1920 { 3 } else { 5 };
            let a = push_seq(&mut cpu, &seq, n, None);
            let b = push_seq(&mut gpu, &seq, n, None);
            let bad = diff(&a, &b);
            assert!(
                bad.is_empty(),
                "{w}x{h} {format:?} {bpc}-bit {model}: {}",
                bad.join("\n")
            );
            eprintln!(
                "{w}x{h} {format:?} {bpc}-bit pad {pad} {model}: {} frames identical (vmaf {:.4})",
                b.len(),
                b[0].vmaf()
            );
        }
    }
}

/// Calls `f` with a picture of `seq`'s samples `s` (8-bit pictures for
/// 8-bit sequences).
pub fn with_picture<R>(seq: &Seq, s: &[Vec<u16>], f: impl FnOnce(&Picture<'_>) -> R) -> R {
    let dims = seq.planes();
    if seq.bpc == 8 {
        let b: Vec<Vec<u8>> = s
            .iter()
            .map(|p| p.iter().map(|&x| x as u8).collect())
            .collect();
        let planes: Vec<Plane<'_, u8>> = b
            .iter()
            .zip(&dims)
            .map(|(p, &(w, h))| Plane::new(p, w, h, w + seq.pad).unwrap())
            .collect();
        f(&Picture::new_u8(seq.format, &planes).unwrap())
    } else {
        let planes: Vec<Plane<'_, u16>> = s
            .iter()
            .zip(&dims)
            .map(|(p, &(w, h))| Plane::new(p, w, h, w + seq.pad).unwrap())
            .collect();
        f(&Picture::new_u16(seq.format, seq.bpc, &planes).unwrap())
    }
}

/// Distorted frame `i` of `from` at `to`'s size (nearest sample): a
/// rendition that looks like the reference.
fn resampled(from: &Seq, to: &Seq, i: u32) -> Vec<Vec<u16>> {
    let src = from.samples(i, true);
    src.iter()
        .zip(from.planes().iter().zip(to.planes()))
        .map(|(plane, (&(sw, sh), (dw, dh)))| {
            let mut out = vec![0u16; (dw + to.pad) * dh];
            for y in 0..dh {
                for x in 0..dw {
                    out[y * (dw + to.pad) + x] =
                        plane[(y * sh / dh) * (sw + from.pad) + x * sw / dw];
                }
            }
            out
        })
        .collect()
}

/// A ladder case: reference size, rendition size, format, depth.
pub type LadderCase = ((usize, usize), (usize, usize), PixelFormat, u8);

/// The engine configuration of a ladder case: the default model with
/// PSNR and every extra extractor the size and depth take, scaling with
/// `method`.
fn ladder_config(&(r, _, format, bpc): &LadderCase, method: ScaleMethod) -> EngineConfig {
    let mut c = config(format != PixelFormat::Gray, "vmaf_v0.6.1");
    c.scale = Some(method);
    // As `sizes_bit_exact`: what each extractor takes.
    if format == PixelFormat::Gray || bpc > 12 {
        c.features
            .retain(|f| !matches!(f.as_str(), "ciede" | "psnr_hvs"));
    }
    if r.0 < 80 || r.1 < 80 {
        c.features.retain(|f| f != "speed_temporal");
    }
    if r.0 < 176 || r.1 < 176 {
        c.features.retain(|f| f != "float_ms_ssim");
    }
    c
}

/// `n` frames of a ladder case through `engine`: the reference at its
/// size, the rendition at its own.
fn ladder_frames(
    engine: &mut dyn Engine,
    &(r, d, format, bpc): &LadderCase,
    frames: impl IntoIterator<Item = u32>,
) -> Vec<FrameScores> {
    let (rs, ds) = (seq_of(r, (format, bpc), 3), seq_of(d, (format, bpc), 1));
    let mut out = Vec::new();
    for i in frames {
        let (a, b) = (rs.samples(i, false), resampled(&rs, &ds, i));
        let pushed = with_picture(&rs, &a, |rp| {
            with_picture(&ds, &b, |dp| engine.push(FramePair::new(rp, dp)).unwrap())
        });
        out.extend(pushed);
    }
    out.extend(engine.flush().unwrap());
    out
}

/// Renditions of other sizes than the reference, scaled by the engine with
/// `method`: every value of every frame from the HIP backend equals the
/// CPU engine's.
pub fn ladder_bit_exact(cases: &[LadderCase], method: ScaleMethod) -> Option<usize> {
    let mut checked = 0;
    for case in cases {
        let c = ladder_config(case, method);
        let mut gpu = hip_scorer(&c)?;
        let mut cpu = Scorer::cpu(&c).unwrap();
        let (a, b) = (
            ladder_frames(&mut cpu, case, 0..4),
            ladder_frames(&mut gpu, case, 0..4),
        );
        let bad = diff(&a, &b);
        let ((rw, rh), (dw, dh), format, bpc) = *case;
        assert!(
            bad.is_empty(),
            "{dw}x{dh} scaled to {rw}x{rh} {format:?} {bpc}-bit {method:?}: {}",
            bad.join("\n")
        );
        eprintln!(
            "  {dw}x{dh} scaled to {rw}x{rh} {format:?} {bpc}-bit ({}): {} frames identical (last vmaf {:.4})",
            method.name(),
            a.len(),
            a[a.len() - 1].get("vmaf").unwrap_or(f64::NAN)
        );
        checked += a.len();
    }
    Some(checked)
}

/// `first` then, after a reset (as the element's at a caps change), `then`
/// through one HIP engine: `then`'s frames equal the CPU engine's scoring
/// it alone (a scaler made for the first renditions' size or depth must
/// not serve the next ones).
pub fn ladder_after_reset_bit_exact(first: &LadderCase, then: &LadderCase) -> Option<()> {
    let c = ladder_config(then, ScaleMethod::Bicubic);
    let mut gpu = hip_scorer(&c)?;
    ladder_frames(&mut gpu, first, 0..3);
    gpu.reset().unwrap();
    let b = ladder_frames(&mut gpu, then, 0..4);
    let a = ladder_frames(&mut Scorer::cpu(&c).unwrap(), then, 0..4);
    let bad = diff(&a, &b);
    assert!(
        bad.is_empty(),
        "{first:?} then {then:?}: {}",
        bad.join("\n")
    );
    eprintln!("  {first:?} then {then:?}: {} frames identical", a.len());
    Some(())
}

/// A ladder case through the failover engine (with `retry` or not) under
/// whatever `VMAFHIP_FAULT` injects: every frame equal to the CPU engine's;
/// the moves it made.
pub fn ladder_failover_bit_exact(case: &LadderCase, retry: bool) -> Option<Vec<FailoverNote>> {
    let c = ladder_config(case, ScaleMethod::Bicubic);
    let mut gpu = failover_scorer(&c, retry)?;
    let mut cpu = Scorer::cpu(&c).unwrap();
    let (a, b) = (
        ladder_frames(&mut cpu, case, 0..8),
        ladder_frames(&mut gpu, case, 0..8),
    );
    let bad = diff(&a, &b);
    assert!(bad.is_empty(), "{case:?}: {}", bad.join("\n"));
    let moves = gpu.failover().to_vec();
    eprintln!(
        "  {case:?}: {} frames identical, {}",
        a.len(),
        where_it_ran(&moves)
    );
    Some(moves)
}

/// A ladder sharing one reference: renditions of `sizes` scored against a
/// `reference`-sized sequence of `n` frames (`model`, and every extractor
/// the sizes take or none) by HIP backends that share a
/// [`SharedReference`] (the second rendition joins at frame 1; the last
/// misses frame 2, as a rendition with a gap, and ends two frames early:
/// its motion then reads other earlier frames than the others'). Every value of every rendition equals the CPU
/// engine's scoring that rendition alone, over the same frames, and the
/// reference's work was done once per frame (the counts).
pub fn shared_reference_bit_exact(
    reference: (usize, usize),
    sizes: &[(usize, usize)],
    (format, bpc): (PixelFormat, u8),
    (model, every_extractor): (&str, bool),
    n: u32,
) -> Option<SharingCounts> {
    let mut c = match every_extractor {
        true => ladder_config(&(reference, sizes[0], format, bpc), ScaleMethod::Bicubic),
        false => config(false, model),
    };
    c.models = ModelSet::load(model).unwrap();
    c.scale = Some(ScaleMethod::Bicubic);
    let share = SharedReference::new();
    let options = HipOptions {
        shared_reference: Some(share.clone()),
        ..Default::default()
    };
    let mut gpus = Vec::new();
    for _ in sizes {
        match HipBackend::new(c.plan().unwrap(), &options) {
            Ok(b) => gpus.push(Scorer::with_backend(&c, b).unwrap()),
            Err(e) => return skip_without_gpu(e.to_string()),
        }
    }
    let last = sizes.len() - 1;
    // The frames rendition k is given.
    let span = |k: usize| -> Vec<u32> {
        match k {
            1 => (1..n).collect(),
            k if k == last && k > 0 => (0..n - 2).filter(|&i| i != 2).collect(),
            _ => (0..n).collect(),
        }
    };
    let rs = seq_of(reference, (format, bpc), 3);
    let mut gpu_out = vec![Vec::new(); sizes.len()];
    for i in 0..n {
        let a = rs.samples(i, false);
        for (k, (&size, gpu)) in sizes.iter().zip(&mut gpus).enumerate() {
            let ds = seq_of(size, (format, bpc), 1);
            if !span(k).contains(&i) {
                continue;
            }
            let b = resampled(&rs, &ds, i);
            let pushed = with_picture(&rs, &a, |rp| {
                with_picture(&ds, &b, |dp| {
                    gpu.push(FramePair {
                        reference_id: Some(u64::from(i)),
                        ..FramePair::new(rp, dp)
                    })
                    .unwrap()
                })
            });
            gpu_out[k].extend(pushed);
            if span(k).last() == Some(&i) {
                gpu_out[k].extend(gpu.flush().unwrap());
            }
        }
    }
    for (k, &size) in sizes.iter().enumerate() {
        let case = (reference, size, format, bpc);
        let alone = ladder_frames(&mut Scorer::cpu(&c).unwrap(), &case, span(k));
        let bad = diff(&alone, &gpu_out[k]);
        assert!(
            bad.is_empty(),
            "rendition {k} ({size:?} of {reference:?} {format:?} {bpc}-bit, {model}): {}",
            bad.join("\n")
        );
        eprintln!(
            "  rendition {}x{} of {}x{} {format:?} {bpc}-bit ({model}), frames {:?}: {} frames identical to it scored alone",
            size.0,
            size.1,
            reference.0,
            reference.1,
            span(k),
            alone.len()
        );
    }
    // Rendition 0 has every frame: each was worked on once, and found
    // done by every other rendition given it.
    let given: u64 = (0..sizes.len()).map(|k| span(k).len() as u64).sum();
    let counts = share.counts();
    assert_eq!(
        (counts.done, counts.shared),
        (u64::from(n), given - u64::from(n)),
        "the reference's work once per frame"
    );
    eprintln!(
        "  {n} reference frames worked on once, found done {} times",
        counts.shared
    );
    Some(counts)
}

/// A sequence of `size` with rows padded by `pad` samples.
fn seq_of((w, h): (usize, usize), (format, bpc): (PixelFormat, u8), pad: usize) -> Seq {
    Seq {
        w,
        h,
        format,
        bpc,
        pad,
    }
}

/// None for a test without a GPU, unless `VMAFHIP_REQUIRE_GPU=1`.
fn skip_without_gpu<T>(why: String) -> Option<T> {
    if std::env::var("VMAFHIP_REQUIRE_GPU").as_deref() == Ok("1") {
        panic!("VMAFHIP_REQUIRE_GPU=1 but no HIP device: {why}");
    }
    eprintln!("skipped: no HIP device ({why})");
    None
}
