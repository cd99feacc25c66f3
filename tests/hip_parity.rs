//! CPU ↔ GPU parity: the HIP backend must give the CPU engine's numbers,
//! bit for bit, for every frame and every metric.
//!
//! Without a usable GPU these tests print "skipped: no HIP device (why)" and
//! pass, unless `VMAFHIP_REQUIRE_GPU=1`, which makes them fail.

mod common;

use common::parity::{
    FLOAT_OPTION_MODELS, LadderCase, Seq, config, diff, each_feature_alone_bit_exact,
    failover_scorer, golden_runs_bit_exact, hip_scorer, ladder_after_reset_bit_exact,
    ladder_bit_exact, ladder_failover_bit_exact, push_seq, push_seq_kept,
    shared_reference_bit_exact, sizes_bit_exact, where_it_ran, with_picture,
};
use common::{golden_runs, golden_runs_features, golden_runs_v1};
use gstvmafhip::gpu::{HipBackend, HipOptions};
use gstvmafhip::vmaf::{
    DevicePlane, Engine, FailoverNote, FramePair, FrameScores, Picture, PixelFormat, Plan, Plane,
    ScaleMethod, Scorer,
};
use std::sync::Arc;

#[test]
fn golden_pairs_bit_exact_with_cpu() {
    let runs = golden_runs()
        .into_iter()
        .chain(golden_runs_features())
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
    forced.backend_mut().set_host_pooling(true);
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
    sizes_bit_exact(
        &cases,
        &["vmaf_v0.6.1", "vmaf_v0.6.1neg", "vmaf_float_v0.6.1"],
        true,
    );
}

/// The failover engine on the GPU, at 1080p with PSNR, SSIM and every
/// extra extractor: without a fault it stays on the GPU; with
/// `VMAFHIP_FAULT` set (docs/testing.md; run once per fault) it moves to
/// the CPU, and either way every frame's values equal the CPU engine's.
#[test]
fn failover_equals_the_cpu_engine() {
    let Some(moves) = failover_run(false, 24) else {
        return;
    };
    let faults = std::env::var("VMAFHIP_FAULT").iter().len();
    assert_eq!(moves.len(), faults, "one move to the CPU per fault");
}

/// `on-gpu-error=retry` on the GPU: after each fault `VMAFHIP_FAULT` injects
/// (several, comma-separated; docs/testing.md) the stream moves to the CPU
/// and comes back to a GPU opened again at the next frame, and every
/// frame's values equal the CPU engine's.
#[test]
fn retry_returns_to_the_gpu_with_the_same_numbers() {
    let Some(moves) = failover_run(true, 40) else {
        return;
    };
    let fault = std::env::var("VMAFHIP_FAULT").unwrap_or_default();
    let faults = fault.split(',').filter(|f| !f.is_empty()).count();
    let away = moves.iter().filter(|m| m.error.is_some()).count();
    assert_eq!(away, faults, "one move to the CPU per fault");
    assert!(
        moves.last().is_none_or(|m| m.error.is_none()),
        "ends on the GPU"
    );
}

/// `n` 1080p frames (v0.6.1 with PSNR, SSIM and every extra extractor)
/// through the failover engine (with `retry` or not), every value equal to
/// the CPU engine's; the moves it made (None without a GPU).
fn failover_run(retry: bool, n: u32) -> Option<Vec<FailoverNote>> {
    let seq = Seq {
        w: 1920,
        h: 1080,
        format: PixelFormat::Yuv420,
        bpc: 8,
        pad: 0,
    };
    let c = config(true, "vmaf_v0.6.1");
    let Some(mut gpu) = failover_scorer(&c, retry) else {
        assert!(std::env::var("VMAFHIP_REQUIRE_GPU").as_deref() != Ok("1"));
        return None;
    };
    let mut cpu = Scorer::cpu(&c).unwrap();
    let (a, b) = (
        push_seq(&mut cpu, &seq, n, None),
        push_seq(&mut gpu, &seq, n, None),
    );
    assert_eq!((a.len(), b.len()), (n as usize, n as usize));
    let bad = diff(&a, &b);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let fault = std::env::var("VMAFHIP_FAULT").ok();
    eprintln!(
        "VMAFHIP_FAULT={}: {n} frames identical, {}",
        fault.as_deref().unwrap_or("none"),
        where_it_ran(gpu.failover())
    );
    Some(gpu.failover().to_vec())
}

/// float_vif's prescale (each method) and float_motion's halves and
/// chroma: GPU equal to the CPU at odd sizes, 4:2:0/4:2:2/4:4:4, 8 to 12
/// bits, and 1080p.
#[test]
fn float_scaling_options_bit_exact() {
    sizes_bit_exact(
        &[
            (75, 53, PixelFormat::Yuv422, 10, 5),
            (131, 97, PixelFormat::Yuv420, 8, 0),
            (96, 64, PixelFormat::Yuv444, 12, 0),
            (1920, 1080, PixelFormat::Yuv420, 8, 0),
        ],
        &FLOAT_OPTION_MODELS,
        false,
    );
}

/// The float 4K model with every extractor beside it at 2160p, 10 and 8
/// bits: GPU equal to the CPU.
#[test]
fn float_extractors_at_4k_bit_exact() {
    sizes_bit_exact(
        &[
            (3840, 2160, PixelFormat::Yuv420, 10, 0),
            (3840, 2160, PixelFormat::Yuv444, 8, 0),
        ],
        &["vmaf_float_4k_v0.6.1"],
        true,
    );
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
        let plan = Plan::with_features(&c.models, &["psnr".into()]).unwrap();
        let probe = HipBackend::new(plan, &HipOptions::default()).unwrap();
        push_seq(&mut gpu2, &seq, 6, Some(&probe))
    };
    assert!(diff(&staged, &pinned).is_empty());
    let mut cpu = Scorer::cpu(&c).unwrap();
    assert!(diff(&push_seq(&mut cpu, &seq, 6, None), &pinned).is_empty());
}

/// Kept host memory of whole 1080p planes (not the element's pinned pool)
/// is page-locked where it lies and read by DMA, with no staging copy
/// (NVIDIA): the numbers equal staged uploads bit for bit.
#[test]
fn registered_in_place_upload_equals_staged_upload() {
    let c = config(true, "vmaf_v0.6.1");
    let seq = Seq {
        w: 1920,
        h: 1080,
        format: PixelFormat::Yuv420,
        bpc: 8,
        pad: 64,
    };
    // One backend at a time: page-locking is used only by a backend alone
    // on its device (run with --test-threads 1 for that to hold).
    let a = {
        let Some(mut staged) = hip_scorer(&c) else {
            return;
        };
        push_seq(&mut staged, &seq, 5, None)
    };
    let Some(mut kept) = hip_scorer(&c) else {
        return;
    };
    let b = push_seq_kept(&mut kept, &seq, 5);
    assert!(diff(&a, &b).is_empty());
    let counts = kept.input_counts();
    let alone = kept.backend_mut().live_on_device() == 1;
    eprintln!("kept host memory: {counts:?} (alone on the device: {alone})");
    if kept.backend_mut().device().runtime().vendor() == gstvmafhip::hip::Vendor::Nvidia && alone {
        assert!(counts.registered >= 5, "{counts:?}");
    }
    assert_eq!(counts.registered + counts.staged, 5 * 2 * 3, "{counts:?}");
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
    // About 33 device bytes per pixel per frame in flight, and at least
    // three frames in flight (a backend opened after others in the same
    // process gets a ring of three, as when the tests run in parallel):
    // size the picture so that even three need well over the whole device.
    let total = {
        let plan = c.plan().unwrap();
        let b = HipBackend::new(plan, &HipOptions::default()).unwrap();
        b.device().info.total_memory
    };
    let w = 32768usize;
    let h = (total / (w * 80)).next_multiple_of(2);
    let luma = vec![128u8; w * h];
    let plane = [Plane::new(&luma, w, h, w).unwrap()];
    let pic = Picture::new_u8(PixelFormat::Gray, &plane).unwrap();
    let err = gpu
        .push(gstvmafhip::vmaf::FramePair::new(&pic, &pic))
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

/// float_adm's GPU reciprocals are the host CPU's estimates from a table,
/// which holds where the estimate depends on 12 mantissa bits only.
#[test]
fn reciprocal_estimates_of_this_cpu_are_a_table() {
    let (_, holds) = gstvmafhip::extractors::float_adm::recip::recip_estimate_table();
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(String::from)
        })
        .unwrap_or_default();
    eprintln!("{cpu}: reciprocal estimates from 12 mantissa bits: {holds}");
    assert!(holds, "{cpu}");
}

/// Ladder renditions (smaller, odd, larger sizes, every depth), scaled by
/// the HIP backend on the device and by the CPU engine on the host: every
/// value of every frame identical, for each scaler.
#[test]
fn ladder_renditions_scaled_on_the_gpu_equal_the_cpu() {
    for method in [
        ScaleMethod::Bicubic,
        ScaleMethod::Bilinear,
        ScaleMethod::Lanczos,
    ] {
        if ladder_bit_exact(&LADDER_CASES, method).is_none() {
            return;
        }
    }
    // The same sizes at another depth after a caps change.
    ladder_after_reset_bit_exact(
        &((176, 144), (88, 72), PixelFormat::Yuv420, 8),
        &((176, 144), (88, 72), PixelFormat::Yuv420, 10),
    );
}

/// A scaled rendition through the failover engine, under the faults
/// `VMAFHIP_FAULT` injects (the device runs set it; a comma-separated list
/// runs with retry): every frame equal to the CPU engine's.
#[test]
fn a_scaled_rendition_through_failover_equals_the_cpu() {
    let fault = std::env::var("VMAFHIP_FAULT").ok();
    let retry = fault.as_deref().is_some_and(|f| f.contains(','));
    let case = ((640, 360), (320, 180), PixelFormat::Yuv420, 8);
    let Some(moves) = ladder_failover_bit_exact(&case, retry) else {
        return;
    };
    if fault.is_some() {
        assert!(moves.iter().any(|m| m.error.is_some()), "{moves:?}");
    }
}

const LADDER_CASES: [LadderCase; 5] = [
    ((176, 144), (88, 72), PixelFormat::Yuv420, 8),
    ((176, 144), (121, 99), PixelFormat::Yuv420, 10),
    ((96, 64), (200, 120), PixelFormat::Yuv444, 12),
    ((160, 90), (64, 36), PixelFormat::Gray, 16),
    ((1920, 1080), (426, 240), PixelFormat::Yuv420, 8),
];

/// A ladder sharing one reference on the GPU (`shared_reference.rs`): a
/// 1080p reference with the usual 1080p, 720p, 540p, 360p and 240p
/// renditions (v0 with every extractor the sizes take), and a 2160p one at
/// 10 bits with 2160p, 1080p and odd-size renditions (v1's model alone:
/// the CPU engine's every extractor at 2160p takes minutes): each
/// rendition equal to the CPU engine scoring it alone, also when it joins
/// late or ends early, and the reference's work done once per frame.
#[test]
fn a_ladder_shares_its_reference_on_the_gpu() {
    let hd = [
        (1920, 1080),
        (1280, 720),
        (960, 540),
        (640, 360),
        (426, 240),
    ];
    let v0 = ("vmaf_v0.6.1", true);
    if shared_reference_bit_exact((1920, 1080), &hd, (PixelFormat::Yuv420, 8), v0, 8).is_none() {
        return;
    }
    let uhd = [(3840, 2160), (1920, 1080), (1279, 717)];
    let v1 = ("vmaf_v1.0.16_3d0h_2160", false);
    shared_reference_bit_exact((3840, 2160), &uhd, (PixelFormat::Yuv420, 10), v1, 6);
}

/// Every extractor alone beside `vmaf_v0.6.1`, on the GPU against the CPU
/// engine: each backend loads only its plan's kernel sets.
#[test]
fn each_feature_alone_on_the_gpu() {
    let seq = Seq {
        w: 352,
        h: 288,
        format: PixelFormat::Yuv420,
        bpc: 8,
        pad: 0,
    };
    each_feature_alone_bit_exact(&seq, 4);
}

/// One frame of `seq` as NVDEC lays it out in GPU memory: luma, then the
/// chroma interleaved (NV12 at 8 bits; P010 and P012 at 10 and 12, each
/// sample in the high bits of its 16), in one device buffer; the buffer,
/// and its planes.
fn interleaved_on_device(
    dev: &Arc<gstvmafhip::hip::Device>,
    seq: &Seq,
    planes: &[Vec<u16>],
) -> (gstvmafhip::hip::DeviceBuffer, Vec<DevicePlane>) {
    let (bps, shift) = if seq.bpc > 8 {
        (2, 16 - seq.bpc)
    } else {
        (1, 0u8)
    };
    let (cw, ch) = seq.planes()[1];
    let pitch = (2 * cw).max(seq.w) * bps;
    let mut bytes = vec![0u8; pitch * (seq.h + ch)];
    let mut put = |at: usize, v: u16| {
        let v = v << shift;
        bytes[at..at + bps].copy_from_slice(&v.to_le_bytes()[..bps]);
    };
    for y in 0..seq.h {
        for x in 0..seq.w {
            put(y * pitch + x * bps, planes[0][y * seq.w + x]);
        }
    }
    for y in 0..ch {
        for x in 0..cw {
            let row = (seq.h + y) * pitch;
            put(row + 2 * x * bps, planes[1][y * cw + x]);
            put(row + (2 * x + 1) * bps, planes[2][y * cw + x]);
        }
    }
    let buf = gstvmafhip::hip::DeviceBuffer::new(dev, bytes.len(), "a test frame").unwrap();
    let st = gstvmafhip::hip::Stream::new(dev).unwrap();
    st.upload_blocking(&buf, 0, &bytes).unwrap();
    let base = buf.addr();
    let chroma = (pitch * seq.h) as u64;
    let plane = |ptr: u64, w, h, interleaved| DevicePlane {
        ptr,
        bytes: bytes.len() - (ptr - base) as usize,
        width: w,
        height: h,
        pitch,
        interleaved,
        msb_shift: shift,
    };
    let planes = vec![
        plane(base, seq.w, seq.h, false),
        plane(base + chroma, cw, ch, true),
        plane(base + chroma + bps as u64, cw, ch, true),
    ];
    (buf, planes)
}

/// NV12, P010 and P012 frames in GPU memory (what NVDEC gives) read in
/// place, the chroma split and the deep samples shifted on the device,
/// equal the same
/// frames as planar host pictures on the CPU engine, bit for bit, for VMAF
/// v1 (`speed_chroma`) and every extractor that reads chroma (PSNR, CIEDE,
/// PSNR-HVS, the float ones).
#[test]
fn nv12_and_p010_in_gpu_memory_equal_planar_frames() {
    for bpc in [8u8, 10, 12] {
        let c = config(true, "vmaf_v1.0.16_3d0h");
        let Some(mut gpu) = hip_scorer(&c) else {
            return;
        };
        let dev = gstvmafhip::gpu::shared_device(gstvmafhip::hip::Vendor::Auto, 0).unwrap();
        let mut cpu = Scorer::cpu(&c).unwrap();
        let seq = Seq {
            w: 352,
            h: 288,
            format: PixelFormat::Yuv420,
            bpc,
            pad: 0,
        };
        let (mut on_cpu, mut on_gpu, mut kept) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..6 {
            let (r, d) = (seq.samples(i, false), seq.samples(i, true));
            let (rb, rp) = interleaved_on_device(&dev, &seq, &r);
            let (db, dp) = interleaved_on_device(&dev, &seq, &d);
            let (rpic, dpic) = (
                Picture::new_device(seq.format, bpc, &rp).unwrap(),
                Picture::new_device(seq.format, bpc, &dp).unwrap(),
            );
            on_gpu.extend(gpu.push(FramePair::new(&rpic, &dpic)).unwrap());
            kept.extend([rb, db]);
            with_picture(&seq, &r, |rh| {
                with_picture(&seq, &d, |dh| {
                    on_cpu.extend(cpu.push(FramePair::new(rh, dh)).unwrap());
                })
            });
        }
        on_gpu.extend(gpu.flush().unwrap());
        on_cpu.extend(cpu.flush().unwrap());
        drop(kept);
        let bad = diff(&on_cpu, &on_gpu);
        assert!(bad.is_empty(), "{bpc}-bit: {}", bad.join("\n"));
        eprintln!(
            "{bpc}-bit: {} frames, {} values each, equal",
            on_gpu.len(),
            on_gpu[0].names.len()
        );
    }
}
