//! Engine benchmark (no GStreamer): frames preloaded in host memory (pinned
//! for the HIP backend, so uploads run at DMA speed), upload included, all
//! VMAF features of the default model, scores read back; wall clock, median
//! of several runs.
//!
//! ```text
//! cargo run --release --no-default-features --example bench -- \
//!     --backend hip --width 1920 --height 1080 --frames 600 --runs 5
//! ```
//! Options: `--backend hip|cpu`, `--threads N` (cpu), `--bpc 8|10`,
//! `--distinct N` (distinct frame pairs, cycled), `--ring N` (hip slots; 0, the default, lets the backend choose),
//! `--psnr`, `--feature NAME` (repeated), `--model NAME[:FEATURE.OPTION=VALUE]...`, `--no-profile`,
//! `--staged` (push without a keep-alive: the backend copies each frame into
//! its own pinned staging buffer first, as for buffers that do not come from
//! pinned memory), `--yuv REF.yuv,DIST.yuv` (raw 4:2:0 frames of `--width` x
//! `--height` at `--bpc`, little-endian when deeper than 8 bits; all of
//! their frames are preloaded and cycled), `--streams N` (hip: N engines
//! at once on one GPU, one thread each, every engine pushing `--frames`
//! frames; prints the total fps and the device memory each engine holds).

use gstvmafhip::gpu::{HipBackend, HipOptions};
use gstvmafhip::hip::{Device, DeviceBuffer, Event, PinnedHostMem, Runtime, Stream, Vendor};
use gstvmafhip::vmaf::{
    Engine, EngineConfig, FeatureBackend, KeepAlive, ModelSet, Picture, PixelFormat, Plane, Scorer,
};
use std::sync::Arc;
use std::time::Instant;

struct Args {
    backend: String,
    threads: usize,
    w: usize,
    h: usize,
    bpc: u8,
    frames: usize,
    distinct: usize,
    runs: usize,
    ring: usize,
    psnr: bool,
    /// Extractors beside the model's (`--feature NAME`, repeated).
    features: Vec<String>,
    model: String,
    profile: bool,
    /// Push without a keep-alive, so the backend copies through its staging buffer.
    staged: bool,
    /// Frames from raw 4:2:0 files (reference, distorted) instead of synthetic ones.
    yuv: Option<(String, String)>,
    /// Engines at once on the GPU (0: the single-engine benchmark).
    streams: usize,
}

fn parse() -> Args {
    let mut a = Args {
        backend: "hip".into(),
        threads: 1,
        w: 1920,
        h: 1080,
        bpc: 8,
        frames: 600,
        distinct: 32,
        runs: 5,
        ring: 0,
        psnr: false,
        features: Vec::new(),
        model: "vmaf_v0.6.1".into(),
        profile: true,
        staged: false,
        yuv: None,
        streams: 0,
    };
    let v: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < v.len() {
        let next = |i: usize| v.get(i + 1).cloned().unwrap_or_default();
        match v[i].as_str() {
            "--backend" => a.backend = next(i),
            "--threads" => a.threads = next(i).parse().expect("--threads N"),
            "--width" => a.w = next(i).parse().expect("--width N"),
            "--height" => a.h = next(i).parse().expect("--height N"),
            "--bpc" => a.bpc = next(i).parse().expect("--bpc 8|10|12"),
            "--frames" => a.frames = next(i).parse().expect("--frames N"),
            "--distinct" => a.distinct = next(i).parse().expect("--distinct N"),
            "--runs" => a.runs = next(i).parse().expect("--runs N"),
            "--ring" => a.ring = next(i).parse().expect("--ring N"),
            "--model" => a.model = next(i),
            "--feature" => a.features.push(next(i)),
            "--streams" => a.streams = next(i).parse().expect("--streams N"),
            "--yuv" => {
                let v = next(i);
                let (r, d) = v.split_once(',').expect("--yuv REF.yuv,DIST.yuv");
                a.yuv = Some((r.to_string(), d.to_string()));
            }
            "--psnr" => {
                a.psnr = true;
                i -= 1;
            }
            "--staged" => {
                a.staged = true;
                i -= 1;
            }
            "--no-profile" => {
                a.profile = false;
                i -= 1;
            }
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    a
}

/// One frame pair's planes (Y, Cb, Cr of 4:2:0), as bytes.
fn synth(a: &Args, k: usize, dist: bool) -> Vec<Vec<u8>> {
    let bps = if a.bpc == 8 { 1 } else { 2 };
    let max = (1u32 << a.bpc) - 1;
    let dims = [
        (a.w, a.h),
        (a.w.div_ceil(2), a.h.div_ceil(2)),
        (a.w.div_ceil(2), a.h.div_ceil(2)),
    ];
    let mut s = 0x9e37_79b9u32 ^ (k as u32).wrapping_mul(2654435761) ^ u32::from(dist);
    dims.iter()
        .map(|&(w, h)| {
            let mut out = Vec::with_capacity(w * h * bps);
            for y in 0..h {
                for x in 0..w {
                    s = s.wrapping_mul(1664525).wrapping_add(1013904223);
                    let xf = (x + 3 * k) as f32;
                    let base = 0.5
                        + 0.3 * (xf * 0.013 + y as f32 * 0.021).sin()
                        + 0.12 * (xf * 0.21).cos() * (y as f32 * 0.17).sin();
                    let mut v = base * max as f32;
                    if dist {
                        let q = max as f32 / 20.0;
                        v = (v / q).round() * q;
                    }
                    v += (s >> 29) as f32;
                    let v = v.clamp(0.0, max as f32) as u16;
                    if bps == 1 {
                        out.push(v as u8);
                    } else {
                        out.extend(v.to_le_bytes());
                    }
                }
            }
            out
        })
        .collect()
}

/// The first `--distinct` frames of two raw 4:2:0 files, split into planes.
fn load_yuv(a: &Args, r: &str, d: &str) -> Vec<[Vec<Vec<u8>>; 2]> {
    let bps = if a.bpc == 8 { 1 } else { 2 };
    let (cw, ch) = (a.w.div_ceil(2), a.h.div_ceil(2));
    let sizes = [a.w * a.h * bps, cw * ch * bps, cw * ch * bps];
    let frame: usize = sizes.iter().sum();
    let read = |p: &str| std::fs::read(p).unwrap_or_else(|e| panic!("{p}: {e}"));
    let (rb, db) = (read(r), read(d));
    let n = (rb.len() / frame).min(db.len() / frame).min(a.distinct);
    assert!(n > 0, "{r}, {d}: no whole {}x{} frame", a.w, a.h);
    let split = |b: &[u8], k: usize| -> Vec<Vec<u8>> {
        let mut at = k * frame;
        sizes
            .iter()
            .map(|&s| {
                let p = b[at..at + s].to_vec();
                at += s;
                p
            })
            .collect()
    };
    (0..n).map(|k| [split(&rb, k), split(&db, k)]).collect()
}

/// Pictures over preloaded planes (8-bit or little-endian 16-bit).
fn picture<'a>(a: &Args, planes: [&'a [u8]; 3], scratch16: &'a [Vec<u16>]) -> Picture<'a> {
    let dims = [
        (a.w, a.h),
        (a.w.div_ceil(2), a.h.div_ceil(2)),
        (a.w.div_ceil(2), a.h.div_ceil(2)),
    ];
    if a.bpc == 8 {
        let pl: Vec<Plane<'a, u8>> = (0..3)
            .map(|p| Plane::new(planes[p], dims[p].0, dims[p].1, dims[p].0).unwrap())
            .collect();
        Picture::new_u8(PixelFormat::Yuv420, &pl).unwrap()
    } else {
        let pl: Vec<Plane<'a, u16>> = (0..3)
            .map(|p| Plane::new(&scratch16[p][..], dims[p].0, dims[p].1, dims[p].0).unwrap())
            .collect();
        Picture::new_u16(PixelFormat::Yuv420, a.bpc, &pl).unwrap()
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let a = parse();
    let mut config = EngineConfig::new(ModelSet::load(&a.model).expect("model"));
    config.features = a.features.clone();
    if a.psnr {
        config.features.push("psnr".into());
    }
    config.threads = a.threads;
    let distinct = a.distinct.min(a.frames).max(1);
    eprintln!(
        "{}x{} {}-bit 4:2:0, {} frames ({distinct} distinct), {} runs, backend {}",
        a.w, a.h, a.bpc, a.frames, a.runs, a.backend
    );
    let raw: Vec<[Vec<Vec<u8>>; 2]> = match &a.yuv {
        Some((r, d)) => load_yuv(&a, r, d),
        None => (0..distinct)
            .map(|k| [synth(&a, k, false), synth(&a, k, true)])
            .collect(),
    };
    let distinct = raw.len();

    if a.backend == "cpu" {
        let mut e = Scorer::cpu(&config).unwrap();
        let s16: Vec<[Vec<Vec<u16>>; 2]> = raw
            .iter()
            .map(|pair| {
                pair.clone().map(|planes| {
                    planes
                        .iter()
                        .map(|p| {
                            p.chunks_exact(2)
                                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                                .collect()
                        })
                        .collect()
                })
            })
            .collect();
        let mut fps = Vec::new();
        for run in 0..a.runs {
            let t = Instant::now();
            for i in 0..a.frames {
                let k = i % distinct;
                let rp = picture(
                    &a,
                    [&raw[k][0][0], &raw[k][0][1], &raw[k][0][2]],
                    if a.bpc == 8 { &[] } else { &s16[k][0] },
                );
                let dp = picture(
                    &a,
                    [&raw[k][1][0], &raw[k][1][1], &raw[k][1][2]],
                    if a.bpc == 8 { &[] } else { &s16[k][1] },
                );
                e.push(gstvmafhip::vmaf::FramePair::new(&rp, &dp)).unwrap();
            }
            let last = e.flush().unwrap();
            let dt = t.elapsed().as_secs_f64();
            fps.push(a.frames as f64 / dt);
            eprintln!(
                "run {run}: {:.1} fps (last vmaf {:.3})",
                fps[run],
                last.last().map_or(f64::NAN, |f| f.vmaf())
            );
            e.reset().unwrap();
        }
        println!(
            "cpu ({} threads) {}x{}: median {:.1} fps over {} runs",
            a.threads,
            a.w,
            a.h,
            median(&mut fps),
            a.runs
        );
        return;
    }

    // HIP: preload every distinct pair into pinned memory, planes back to back.
    let plan = config.plan().unwrap();
    let opts = HipOptions {
        ring: a.ring,
        ..Default::default()
    };
    let t = Instant::now();
    let backend = HipBackend::new(plan, &opts).unwrap_or_else(|e| panic!("HIP backend: {e}"));
    eprintln!(
        "{} — {} ({:.2} s)",
        backend.describe(),
        backend.compile_note(),
        t.elapsed().as_secs_f64()
    );
    let dev = backend.device().clone();
    let pinned: Vec<[PinnedHostMem; 2]> = raw
        .iter()
        .map(|pair| {
            pair.clone().map(|planes| {
                let len: usize = planes.iter().map(Vec::len).sum();
                let mut m = PinnedHostMem::new(&dev, len).unwrap();
                let mut off = 0;
                for p in &planes {
                    m.as_mut()[off..off + p.len()].copy_from_slice(p);
                    off += p.len();
                }
                m
            })
        })
        .collect();
    drop(raw);
    let bps = if a.bpc == 8 { 1 } else { 2 };
    let sizes = [a.w * a.h * bps, a.w.div_ceil(2) * a.h.div_ceil(2) * bps];
    let split = |_m: &PinnedHostMem| -> [std::ops::Range<usize>; 3] {
        [
            0..sizes[0],
            sizes[0]..sizes[0] + sizes[1],
            sizes[0] + sizes[1]..sizes[0] + 2 * sizes[1],
        ]
    };
    let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
    let free_after_open = dev.memory_info().map(|(f, _)| f).unwrap_or(0);
    let mut e = Scorer::with_backend(&config, backend).unwrap();
    let push_all = |e: &mut Scorer<HipBackend>, frames: usize, serial: bool| {
        let mut last = Vec::new();
        for i in 0..frames {
            let k = i % distinct;
            let pics: Vec<Picture<'_>> = pinned[k]
                .iter()
                .map(|m| {
                    let r = split(m);
                    let b = m.as_ref();
                    let dims = [
                        (a.w, a.h),
                        (a.w.div_ceil(2), a.h.div_ceil(2)),
                        (a.w.div_ceil(2), a.h.div_ceil(2)),
                    ];
                    if a.bpc == 8 {
                        let pl: Vec<Plane<'_, u8>> = (0..3)
                            .map(|p| {
                                Plane::new(&b[r[p].clone()], dims[p].0, dims[p].1, dims[p].0)
                                    .unwrap()
                            })
                            .collect();
                        Picture::new_u8(PixelFormat::Yuv420, &pl).unwrap()
                    } else {
                        // Pinned memory is page-aligned and every plane has an
                        // even size, so the samples are read in place.
                        let pl: Vec<Plane<'_, u16>> = (0..3)
                            .map(|p| {
                                let s = gstvmafhip::hip::u16_view(&b[r[p].clone()])
                                    .expect("aligned 16-bit plane");
                                Plane::new(s, dims[p].0, dims[p].1, dims[p].0).unwrap()
                            })
                            .collect();
                        Picture::new_u16(PixelFormat::Yuv420, a.bpc, &pl).unwrap()
                    }
                })
                .collect();
            let keep: Option<KeepAlive> = if a.staged {
                None
            } else {
                Some(Box::new([
                    pinned[k][0].shared().clone(),
                    pinned[k][1].shared().clone(),
                ]))
            };
            last = e
                .push(gstvmafhip::vmaf::FramePair::new(&pics[0], &pics[1]).kept(keep))
                .unwrap();
            if serial {
                e.backend_mut().collect(true).unwrap();
            }
        }
        let f = e.flush().unwrap();
        if !f.is_empty() {
            last = f;
        }
        last
    };
    // Warm-up: geometry set-up, first launches.
    push_all(&mut e, distinct.min(16), false);
    e.reset().unwrap();
    let free_one = dev.memory_info().map(|(f, _)| f).unwrap_or(0);
    eprintln!(
        "device memory of one engine's frame slots and scratch: {:.0} MiB",
        mib(free_after_open.saturating_sub(free_one))
    );
    // What that memory holds (allocation sizes; the driver rounds each up).
    let (parts, ring) = e.backend_mut().memory_breakdown();
    eprintln!(
        "| {}x{} {}-bit, ring of {ring} | MiB, whole ring | MiB per slot |",
        a.w, a.h, a.bpc
    );
    eprintln!("|---|---|---|");
    for (what, bytes) in parts.iter().filter(|p| p.1 > 0) {
        eprintln!(
            "| {what} | {:.1} | {:.2} |",
            mib(*bytes),
            mib(*bytes) / ring.max(1) as f64
        );
    }
    let total: usize = parts.iter().map(|p| p.1).sum();
    eprintln!("| total | {:.1} | |", mib(total));

    if a.streams > 0 {
        // N engines, one thread each, all on this device (the context and the
        // compiled kernels are shared per process).
        let mut engines = vec![e];
        for _ in 1..a.streams {
            let b = HipBackend::new(config.plan().unwrap(), &opts).unwrap();
            let mut en = Scorer::with_backend(&config, b).unwrap();
            push_all(&mut en, distinct.min(16), false);
            en.reset().unwrap();
            engines.push(en);
        }
        let (free_all, total) = dev.memory_info().unwrap_or((0, 0));
        let per_engine = mib(free_after_open.saturating_sub(free_all)) / a.streams as f64;
        let mut fps = Vec::new();
        for run in 0..a.runs {
            let t = Instant::now();
            std::thread::scope(|sc| {
                for en in engines.iter_mut() {
                    sc.spawn(|| {
                        push_all(en, a.frames, false);
                    });
                }
            });
            let dt = t.elapsed().as_secs_f64();
            fps.push((a.streams * a.frames) as f64 / dt);
            eprintln!("run {run}: {:.1} fps in total", fps[run]);
            for en in engines.iter_mut() {
                en.reset().unwrap();
            }
        }
        println!(
            "| {} engines, {}x{} {}-bit, {} | total {:.1} fps (median of {}; runs {}) | {:.0} MiB per engine; device {:.0} of {:.0} MiB in use |",
            a.streams,
            a.w,
            a.h,
            a.bpc,
            a.model,
            median(&mut fps.clone()),
            a.runs,
            fps.iter()
                .map(|f| format!("{f:.1}"))
                .collect::<Vec<_>>()
                .join(", "),
            per_engine,
            mib(total.saturating_sub(free_all)),
            mib(total)
        );
        return;
    }
    let mut fps = Vec::new();
    for run in 0..a.runs {
        let t = Instant::now();
        let last = push_all(&mut e, a.frames, false);
        let dt = t.elapsed().as_secs_f64();
        fps.push(a.frames as f64 / dt);
        eprintln!(
            "run {run}: {:.1} fps (last vmaf {:.3}, pooled mean {:.6})",
            fps[run],
            last.last().map_or(f64::NAN, |f| f.vmaf()),
            e.pooled().get("vmaf").map_or(f64::NAN, |p| p.mean())
        );
        e.reset().unwrap();
    }
    let med = median(&mut fps);

    // Per-stage device times, one frame in flight.
    let mut stages = Vec::new();
    if a.profile {
        e.backend_mut().set_profiling(true);
        push_all(&mut e, distinct.min(50), true);
        stages = e.backend_mut().stage_times();
        e.backend_mut().set_profiling(false);
        e.reset().unwrap();
    }

    // The H2D floor: the two luma planes of a frame, pinned → device, back to back.
    let floor = h2d_floor(&dev, 2 * sizes[0]);

    println!(
        "\n| {}x{} {}-bit 4:2:0, {} | value |\n|---|---|",
        a.w, a.h, a.bpc, a.model
    );
    println!(
        "| engine fps (median of {}){} | {med:.1} |",
        a.runs,
        if a.staged {
            ", staged copy"
        } else {
            ", in-place pinned upload"
        }
    );
    println!(
        "| runs | {} |",
        fps.iter()
            .map(|f| format!("{f:.1}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (s, ms) in &stages {
        println!("| stage {s} (ms/frame, serial) | {ms:.4} |");
    }
    if let Ok((gbs, ceiling)) = floor {
        println!("| H2D pinned, luma pair | {gbs:.1} GB/s → {ceiling:.0} fps ceiling |");
    }
}

fn h2d_floor(dev: &Arc<Device>, bytes: usize) -> Result<(f64, f64), gstvmafhip::hip::HipError> {
    let src = PinnedHostMem::new(dev, bytes)?;
    let dst = DeviceBuffer::new(dev, bytes, "bench")?;
    let st = Stream::new(dev)?;
    let (e0, e1) = (Event::new(dev)?, Event::new(dev)?);
    for _ in 0..5 {
        st.upload_2d(&dst, 0, bytes, src.shared(), 0, bytes, bytes, 1)?;
    }
    let n = 100;
    st.record(&e0)?;
    for _ in 0..n {
        st.upload_2d(&dst, 0, bytes, src.shared(), 0, bytes, bytes, 1)?;
    }
    st.record(&e1)?;
    e1.synchronize()?;
    let ms = f64::from(Event::elapsed_ms(&e0, &e1)?);
    let gbs = (bytes * n) as f64 / (ms * 1e-3) / 1e9;
    let _ = (Runtime::load, Vendor::Auto);
    Ok((gbs, n as f64 / (ms * 1e-3)))
}
