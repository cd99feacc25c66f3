//! CPU ↔ GPU parity: the HIP backend must give the CPU engine's numbers,
//! bit for bit, for every frame and every metric.
//!
//! Without a usable GPU these tests print "skipped: no HIP device (why)" and
//! pass, unless `VMAFHIP_REQUIRE_GPU=1`, which makes them fail.

mod common;

use common::{golden_runs, golden_runs_v1};
use gstvmafhip::hip::{HipBackend, HipOptions, PinnedHostMem, pinned_owner};
use gstvmafhip::vmaf::{
    Engine, EngineConfig, FrameScores, KeepAlive, ModelSet, Picture, PixelFormat, Plan, Plane,
    Scorer,
};
use std::sync::Arc;

fn hip_scorer(config: &EngineConfig) -> Option<Scorer<HipBackend>> {
    let plan = config.plan().unwrap();
    match HipBackend::new(plan, &HipOptions::default()) {
        Ok(b) => {
            eprintln!(
                "HIP backend: {}",
                gstvmafhip::vmaf::FeatureBackend::describe(&b)
            );
            Some(Scorer::with_backend(config, b).unwrap())
        }
        Err(e) => {
            if std::env::var("VMAFHIP_REQUIRE_GPU").as_deref() == Ok("1") {
                panic!("VMAFHIP_REQUIRE_GPU=1 but no HIP device: {e}");
            }
            eprintln!("skipped: no HIP device ({e})");
            None
        }
    }
}

/// Every value of every frame, compared exactly (NaN equals NaN).
fn diff(cpu: &[FrameScores], gpu: &[FrameScores]) -> Vec<String> {
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
                (Some(x), Some(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
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
fn golden_runs_bit_exact(runs: Vec<common::GoldenRun>) -> Option<usize> {
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
        let vs_libvmaf = common::compare_with_golden(&gpu_frames, &gpu_pooled, &run.expected());
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

#[test]
fn golden_pairs_bit_exact_with_cpu() {
    let runs = golden_runs()
        .into_iter()
        .filter(|r| !r.model_name().contains("float"))
        .collect();
    if let Some(total) = golden_runs_bit_exact(runs) {
        eprintln!("{total} frames, every metric bit-exact");
    }
}

/// VMAF v1 (CAMBI, speed_chroma, v1 ADM and motion), the bootstrap
/// collection and 4K NEG: every golden run of manifest-v1.json.
#[test]
fn v1_golden_runs_bit_exact_with_cpu() {
    if let Some(total) = golden_runs_bit_exact(golden_runs_v1()) {
        eprintln!("v1: {total} frames, every metric bit-exact");
    }
}

/// v1 models and option variants on synthetic odd sizes, 8 to 16 bits,
/// 4:2:0, 4:2:2 and 4:4:4: every value equal to the CPU engine's.
#[test]
fn v1_sizes_formats_and_depths_bit_exact() {
    let cases = [
        (353, 331, PixelFormat::Yuv420, 10, 7),
        (331, 217, PixelFormat::Yuv422, 12, 0),
        (256, 216, PixelFormat::Yuv444, 8, 3),
        (333, 250, PixelFormat::Yuv444, 16, 0),
        (640, 360, PixelFormat::Yuv422, 8, 16),
        (1920, 1080, PixelFormat::Yuv420, 10, 0),
    ];
    let models = [
        "vmaf_v1.0.16_3d0h",
        "vmaf_v1.0.16_hfr_5d0h",
        "vmaf_v1.0.16_3d0h_2160:cambi.full_ref=true:cambi.eotf=pq:cambi.max_log_contrast=3",
        "vmaf_v1.0.16_3d0h:speed_chroma.speed_prescale=0.7:speed_chroma.speed_prescale_method=bicubic:cambi.enc_bitdepth=8",
        "vmaf_v1.0.16_1d5h_2160:speed_chroma.speed_prescale=1.3:speed_chroma.speed_prescale_method=lanczos4:cambi.window_size=31",
        "vmaf_v1.0.16_hfr_3d0h:speed_chroma.speed_prescale=0.8:speed_chroma.speed_prescale_method=nearest:cambi.topk=0.2:cambi.cambi_max_val=1000",
    ];
    sizes_bit_exact(&cases, &models, false);
}

/// CAMBI's two GPU poolings agree: the exact integer top-k sum (the usual
/// path) and the host's quick-select over read-back c-values (taken when a
/// sum reaches 2^29, forced here).
#[test]
fn cambi_host_pooling_equals_device_sum() {
    let c = config(false, "vmaf_v1.0.16_3d0h");
    let Some(mut gpu) = hip_scorer(&c) else {
        return;
    };
    let Some(mut forced) = hip_scorer(&c) else {
        return;
    };
    forced.backend_mut().set_cambi_host_pooling(true);
    let seq = Seq {
        w: 640,
        h: 360,
        format: PixelFormat::Yuv420,
        bpc: 10,
        pad: 0,
    };
    let a = push_seq(&mut gpu, &seq, 4, None);
    let b = push_seq(&mut forced, &seq, 4, None);
    let bad = diff(&a, &b);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let cpu = push_seq(&mut Scorer::cpu(&c).unwrap(), &seq, 4, None);
    assert!(diff(&cpu, &b).is_empty());
    eprintln!(
        "CAMBI pooled on the device and on the host: identical ({:?})",
        b[1].iter().next()
    );
}

/// A synthetic sequence: a moving textured reference and a distorted copy
/// (quantised, with a blockiness and a little noise), at any depth.
struct Seq {
    w: usize,
    h: usize,
    format: PixelFormat,
    bpc: u8,
    /// Row padding in samples (stride = width + pad).
    pad: usize,
}

impl Seq {
    fn planes(&self) -> Vec<(usize, usize)> {
        let mut v = vec![(self.w, self.h)];
        if let Some((cw, ch)) = self.format.stored_chroma_size(self.w, self.h) {
            v.push((cw, ch));
            v.push((cw, ch));
        }
        v
    }

    /// Samples of frame `i`, reference (`dist` false) or distorted, per plane, strided.
    fn samples(&self, i: u32, dist: bool) -> Vec<Vec<u16>> {
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
fn push_seq(
    engine: &mut dyn Engine,
    seq: &Seq,
    n: u32,
    pinned: Option<&HipBackend>,
) -> Vec<FrameScores> {
    let mut out = Vec::new();
    for i in 0..n {
        let r = seq.samples(i, false);
        let d = seq.samples(i, true);
        let dims = seq.planes();
        let mk8 = |v: &Vec<Vec<u8>>| -> Vec<(Vec<u8>, usize, usize)> {
            v.iter()
                .zip(&dims)
                .map(|(p, &(w, h))| (p.clone(), w, h))
                .collect()
        };
        let frames: Vec<FrameScores> = if seq.bpc == 8 {
            let r8: Vec<Vec<u8>> = r
                .iter()
                .map(|p| p.iter().map(|&x| x as u8).collect())
                .collect();
            let d8: Vec<Vec<u8>> = d
                .iter()
                .map(|p| p.iter().map(|&x| x as u8).collect())
                .collect();
            let (r8, d8) = (mk8(&r8), mk8(&d8));
            match pinned {
                Some(b) => {
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
                    engine.push_kept(&rp, &dp, Some(keep)).unwrap()
                }
                None => {
                    let rpl: Vec<Plane<'_, u8>> = r8
                        .iter()
                        .map(|(p, w, h)| Plane::new(p, *w, *h, w + seq.pad).unwrap())
                        .collect();
                    let dpl: Vec<Plane<'_, u8>> = d8
                        .iter()
                        .map(|(p, w, h)| Plane::new(p, *w, *h, w + seq.pad).unwrap())
                        .collect();
                    let rp = Picture::new_u8(seq.format, &rpl).unwrap();
                    let dp = Picture::new_u8(seq.format, &dpl).unwrap();
                    engine.push(&rp, &dp).unwrap()
                }
            }
        } else {
            let rpl: Vec<Plane<'_, u16>> = r
                .iter()
                .zip(&dims)
                .map(|(p, &(w, h))| Plane::new(p, w, h, w + seq.pad).unwrap())
                .collect();
            let dpl: Vec<Plane<'_, u16>> = d
                .iter()
                .zip(&dims)
                .map(|(p, &(w, h))| Plane::new(p, w, h, w + seq.pad).unwrap())
                .collect();
            let rp = Picture::new_u16(seq.format, seq.bpc, &rpl).unwrap();
            let dp = Picture::new_u16(seq.format, seq.bpc, &dpl).unwrap();
            engine.push(&rp, &dp).unwrap()
        };
        out.extend(frames);
    }
    out.extend(engine.flush().unwrap());
    out
}

fn config(psnr: bool, model: &str) -> EngineConfig {
    let mut c = EngineConfig::new(ModelSet::load(model).unwrap());
    c.psnr = psnr;
    c
}

#[test]
fn sizes_formats_and_depths_bit_exact() {
    let cases = [
        (53, 37, PixelFormat::Yuv420, 8, 0),
        (67, 45, PixelFormat::Yuv420, 8, 3),
        (75, 53, PixelFormat::Yuv422, 10, 5),
        (96, 64, PixelFormat::Yuv444, 12, 0),
        (351, 287, PixelFormat::Yuv420, 10, 7),
        (200, 120, PixelFormat::Gray, 16, 0),
        (640, 360, PixelFormat::Yuv422, 8, 16),
        (1920, 1080, PixelFormat::Yuv420, 8, 0),
    ];
    sizes_bit_exact(&cases, &["vmaf_v0.6.1", "vmaf_v0.6.1neg"], true);
}

/// Every model on every synthetic case: GPU equal to CPU, bit for bit.
fn sizes_bit_exact(cases: &[(usize, usize, PixelFormat, u8, usize)], models: &[&str], psnr: bool) {
    for &(w, h, format, bpc, pad) in cases {
        let seq = Seq {
            w,
            h,
            format,
            bpc,
            pad,
        };
        for model in models {
            let c = config(psnr, model);
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

#[test]
fn pinned_in_place_upload_equals_staged_upload() {
    let c = config(true, "vmaf_v0.6.1");
    let Some(mut gpu) = hip_scorer(&c) else {
        return;
    };
    let Some(mut gpu2) = hip_scorer(&c) else {
        return;
    };
    let seq = Seq {
        w: 320,
        h: 240,
        format: PixelFormat::Yuv420,
        bpc: 8,
        pad: 4,
    };
    let staged = push_seq(&mut gpu, &seq, 6, None);
    let pinned = {
        let plan = Plan::new(&c.models, true, false, false).unwrap();
        let probe = HipBackend::new(plan, &HipOptions::default()).unwrap();
        push_seq(&mut gpu2, &seq, 6, Some(&probe))
    };
    assert!(diff(&staged, &pinned).is_empty());
    let mut cpu = Scorer::cpu(&c).unwrap();
    assert!(diff(&push_seq(&mut cpu, &seq, 6, None), &pinned).is_empty());
}

#[test]
fn eight_engines_at_once_in_one_process() {
    let c = config(false, "vmaf_v0.6.1");
    if hip_scorer(&c).is_none() {
        return;
    }
    let seqs: Vec<Seq> = (0..8)
        .map(|k| Seq {
            w: 320 + 16 * k,
            h: 180 + 8 * k,
            format: PixelFormat::Yuv420,
            bpc: if k % 2 == 0 { 8 } else { 10 },
            pad: k,
        })
        .collect();
    let want: Vec<Vec<FrameScores>> = seqs
        .iter()
        .map(|s| push_seq(&mut Scorer::cpu(&c).unwrap(), s, 8, None))
        .collect();
    let seqs = Arc::new(seqs);
    let handles: Vec<_> = (0..8)
        .map(|k| {
            let seqs = seqs.clone();
            let c = c.clone();
            std::thread::spawn(move || {
                let mut gpu = hip_scorer(&c).unwrap();
                push_seq(&mut gpu, &seqs[k], 8, None)
            })
        })
        .collect();
    for (k, h) in handles.into_iter().enumerate() {
        let got = h.join().unwrap();
        let bad = diff(&want[k], &got);
        assert!(bad.is_empty(), "engine {k}: {}", bad.join("\n"));
    }
    eprintln!("8 engines on one GPU, 8 frames each: identical to the CPU engine");
}

/// 8K is measured exactly; a picture whose frames in flight cannot fit the
/// device is refused with an error naming the size and the memory it needs.
#[test]
fn eight_k_is_exact_and_oversized_frames_are_a_clear_oom_error() {
    sizes_bit_exact(
        &[(7680, 4320, PixelFormat::Yuv420, 8, 0)],
        &["vmaf_v0.6.1"],
        false,
    );
    let c = config(false, "vmaf_v0.6.1");
    let Some(mut gpu) = hip_scorer(&c) else {
        return;
    };
    // About 33 device bytes per pixel per frame in flight, six in flight:
    // size the picture so that it needs well over the whole device.
    let total = {
        let plan = c.plan().unwrap();
        let b = HipBackend::new(plan, &HipOptions::default()).unwrap();
        b.device().info.total_memory
    };
    let w = 32768usize;
    let h = (total / (w * 150)).next_multiple_of(2);
    let luma = vec![128u8; w * h];
    let plane = [Plane::new(&luma, w, h, w).unwrap()];
    let pic = Picture::new_u8(PixelFormat::Gray, &plane).unwrap();
    let err = gpu
        .push(&pic, &pic)
        .expect_err("a picture larger than the device must be refused")
        .to_string();
    eprintln!("{err}");
    assert!(err.contains("GPU out of memory"), "{err}");
    assert!(err.contains(&format!("{w}x{h} 8-bit")), "{err}");
    assert!(err.contains("frames in flight need"), "{err}");
    assert!(
        err.contains(&format!("of {} MiB", total.div_ceil(1 << 20))),
        "{err}"
    );
}

/// A device-id past the last GPU is an error naming it and the count.
#[test]
fn device_id_out_of_range_is_a_clear_error() {
    let c = config(false, "vmaf_v0.6.1");
    if hip_scorer(&c).is_none() {
        return;
    }
    let options = HipOptions {
        device_id: 99,
        ..HipOptions::default()
    };
    let err = match HipBackend::new(c.plan().unwrap(), &options) {
        Ok(_) => panic!("device-id 99 opened"),
        Err(e) => e.to_string(),
    };
    eprintln!("{err}");
    assert!(err.contains("device-id 99 asked for"), "{err}");
    assert!(err.contains("reports"), "{err}");
}
