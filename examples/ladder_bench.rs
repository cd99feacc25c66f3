//! Engine benchmark of a ladder (no GStreamer): one 8-bit 4:2:0 reference
//! and renditions of several sizes, each scored against it by its own HIP
//! engine (which scales it to the reference's size), all pushed from one
//! thread as the element pushes them. Frames are preloaded in pinned
//! memory. Each run is timed twice, in turn: with the engines sharing the
//! reference (`SharedReference`: uploaded, and its own work done, once per
//! frame) and with every engine doing it itself. Wall clock, median of the
//! runs, in reference frames per second (every rendition scored).
//!
//! ```text
//! cargo run --release --no-default-features --example ladder_bench -- \
//!     --size 1920x1080 --renditions 1920x1080,1280x720,960x540,640x360,426x240 \
//!     --frames 1500 --runs 5
//! ```
//! Also `--model NAME` and `--ring N` (slots of every engine, 3 by default:
//! what each engine gets beside others on one device).

use gstvmafhip::gpu::{HipBackend, HipOptions, SharedReference};
use gstvmafhip::hip::PinnedHostMem;
use gstvmafhip::vmaf::{
    Engine, EngineConfig, FeatureBackend, KeepAlive, ModelSet, Picture, PixelFormat, Plane,
    ScaleMethod, Scorer,
};
use std::sync::Arc;
use std::time::Instant;

/// Distinct frames preloaded, cycled.
const DISTINCT: usize = 32;

#[derive(Clone)]
struct Args {
    size: (usize, usize),
    renditions: Vec<(usize, usize)>,
    frames: usize,
    runs: usize,
    model: String,
    /// Ring slots of every engine (the same for both ways).
    ring: usize,
}

fn size(s: &str) -> (usize, usize) {
    let (w, h) = s.split_once('x').expect("WIDTHxHEIGHT");
    (w.parse().expect("width"), h.parse().expect("height"))
}

fn parse() -> Args {
    let mut a = Args {
        size: (1920, 1080),
        renditions: ["1920x1080", "1280x720", "960x540", "640x360", "426x240"]
            .map(size)
            .to_vec(),
        frames: 1500,
        runs: 5,
        model: "vmaf_v0.6.1".into(),
        ring: 3,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let v = pair
            .get(1)
            .unwrap_or_else(|| panic!("{} needs a value", pair[0]));
        match pair[0].as_str() {
            "--size" => a.size = size(v),
            "--renditions" => a.renditions = v.split(',').map(size).collect(),
            "--frames" => a.frames = v.parse().expect("--frames N"),
            "--runs" => a.runs = v.parse().expect("--runs N"),
            "--model" => a.model = v.clone(),
            "--ring" => a.ring = v.parse().expect("--ring N"),
            other => panic!("unknown argument {other}"),
        }
    }
    a
}

/// Frame `k`'s luma at `(w, h)`: a moving pattern with noise, coarsely
/// quantised for a rendition (`dist`), sampled at the reference's grid.
fn luma(k: usize, (w, h): (usize, usize), (rw, rh): (usize, usize), dist: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(w * h);
    let mut s = 0x9e37_79b9u32 ^ (k as u32).wrapping_mul(2654435761);
    for y in 0..h {
        for x in 0..w {
            s = s.wrapping_mul(1664525).wrapping_add(1013904223);
            let (xf, yf) = ((x * rw / w + 3 * k) as f32, (y * rh / h) as f32);
            let base = 128.0 + 70.0 * (xf * 0.013 + yf * 0.021).sin() + 25.0 * (xf * 0.21).cos();
            let v = if dist {
                (base / 12.0).round() * 12.0
            } else {
                base
            };
            out.push((v + (s >> 29) as f32).clamp(0.0, 255.0) as u8);
        }
    }
    out
}

/// Frame `k` of `size` in pinned memory: luma, then flat chroma.
fn frame(
    dev: &Arc<gstvmafhip::hip::Device>,
    k: usize,
    size: (usize, usize),
    reference: (usize, usize),
    dist: bool,
) -> PinnedHostMem {
    let y = luma(k, size, reference, dist);
    let c = size.0.div_ceil(2) * size.1.div_ceil(2);
    let mut m = PinnedHostMem::new(dev, y.len() + 2 * c).unwrap();
    m.as_mut()[..y.len()].copy_from_slice(&y);
    m.as_mut()[y.len()..].fill(128);
    m
}

/// A picture over a frame made by [`frame`].
fn picture(m: &PinnedHostMem, (w, h): (usize, usize)) -> Picture<'_> {
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    let b = m.as_ref();
    let (y, c) = b.split_at(w * h);
    let (u, v) = c.split_at(cw * ch);
    let planes = [
        Plane::new(y, w, h, w).unwrap(),
        Plane::new(u, cw, ch, cw).unwrap(),
        Plane::new(v, cw, ch, cw).unwrap(),
    ];
    Picture::new_u8(PixelFormat::Yuv420, &planes).unwrap()
}

/// One engine per rendition, sharing `share` when given.
fn engines(
    config: &EngineConfig,
    a: &Args,
    share: Option<&SharedReference>,
) -> Vec<Scorer<HipBackend>> {
    let opts = HipOptions {
        shared_reference: share.cloned(),
        ring: a.ring,
        ..Default::default()
    };
    (0..a.renditions.len())
        .map(|_| {
            let b = HipBackend::new(config.plan().unwrap(), &opts)
                .unwrap_or_else(|e| panic!("HIP backend: {e}"));
            Scorer::with_backend(config, b).unwrap()
        })
        .collect()
}

/// Pushes `frames` reference frames to every engine; returns the seconds
/// taken and the last pooled VMAF of each rendition.
fn run(
    a: &Args,
    engines: &mut [Scorer<HipBackend>],
    refs: &[PinnedHostMem],
    dists: &[Vec<PinnedHostMem>],
    shared: bool,
) -> (f64, Vec<f64>) {
    let t = Instant::now();
    for i in 0..a.frames {
        let k = i % DISTINCT;
        let rp = picture(&refs[k], a.size);
        for (e, (d, &size)) in engines.iter_mut().zip(dists.iter().zip(&a.renditions)) {
            let keep: KeepAlive = Box::new([refs[k].shared().clone(), d[k].shared().clone()]);
            let id = shared.then_some(i as u64);
            e.push(gstvmafhip::vmaf::FramePair {
                keep: Some(keep),
                reference_id: id,
                ..gstvmafhip::vmaf::FramePair::new(&rp, &picture(&d[k], size))
            })
            .unwrap();
        }
    }
    for e in engines.iter_mut() {
        e.flush().unwrap();
    }
    let secs = t.elapsed().as_secs_f64();
    let pooled = engines
        .iter_mut()
        .map(|e| {
            let v = e.pooled().get("vmaf").map_or(f64::NAN, |p| p.mean());
            e.reset().unwrap();
            v
        })
        .collect();
    (secs, pooled)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let a = parse();
    let mut config = EngineConfig::new(ModelSet::load(&a.model).expect("model"));
    config.scale = Some(ScaleMethod::Bicubic);
    let share = SharedReference::new();
    let mut sharing = engines(&config, &a, Some(&share));
    let mut alone = engines(&config, &a, None);
    let dev = sharing[0].backend_mut().device().clone();
    eprintln!("{}", sharing[0].backend_mut().describe());
    let refs: Vec<PinnedHostMem> = (0..DISTINCT)
        .map(|k| frame(&dev, k, a.size, a.size, false))
        .collect();
    let dists: Vec<Vec<PinnedHostMem>> = a
        .renditions
        .iter()
        .map(|&s| {
            (0..DISTINCT)
                .map(|k| frame(&dev, k, s, a.size, true))
                .collect()
        })
        .collect();
    let sizes: Vec<String> = a
        .renditions
        .iter()
        .map(|(w, h)| format!("{w}x{h}"))
        .collect();
    eprintln!(
        "reference {}x{}, renditions {}, {} frames ({DISTINCT} distinct), model {}",
        a.size.0,
        a.size.1,
        sizes.join(","),
        a.frames,
        a.model
    );
    // Warm-up: geometry set-up and scalers.
    let warm = Args {
        frames: DISTINCT,
        ..a.clone()
    };
    run(&warm, &mut sharing, &refs, &dists, true);
    run(&warm, &mut alone, &refs, &dists, false);
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for r in 0..a.runs {
        let (s_on, v_on) = run(&a, &mut sharing, &refs, &dists, true);
        let (s_off, v_off) = run(&a, &mut alone, &refs, &dists, false);
        assert_eq!(v_on, v_off, "sharing the reference changed a score");
        on.push(a.frames as f64 / s_on);
        off.push(a.frames as f64 / s_off);
        eprintln!(
            "run {r}: shared {:.1} fps, not shared {:.1} fps (pooled VMAF {v_on:.4?})",
            on[r], off[r]
        );
    }
    let (m_on, m_off) = (median(&mut on), median(&mut off));
    println!(
        "ladder engines, {} renditions of {}x{}: reference shared {m_on:.1} fps, not shared {m_off:.1} fps (median of {}); {:.2}x",
        a.renditions.len(),
        a.size.0,
        a.size.1,
        a.runs,
        m_on / m_off
    );
    let c = share.counts();
    println!(
        "shared reference: {} frames uploaded and worked on once, found done {} times",
        c.done, c.shared
    );
}
