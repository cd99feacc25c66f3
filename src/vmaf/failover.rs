//! GPU failover: a [`FeatureBackend`] that runs a GPU backend and, when it
//! fails mid-stream, moves the stream to the CPU backend without losing or
//! repeating a frame.
//!
//! Every frame given to the GPU is kept until its features are collected:
//! as the caller's [`Replay`] where it gives one (the element: its buffers,
//! mapped again only if the CPU takes over), else as a host copy made as
//! it came (8- or 16-bit samples, rows packed; the luma only unless the
//! plan reads chroma; buffers recycled),
//! with the two frames before the oldest one kept (the previous pictures
//! motion, float_motion and speed_temporal read). On a GPU error — from
//! `submit`, `collect` or `flush` — the CPU backend takes over: it is given
//! those previous pictures, then every frame not collected yet, in order,
//! and every later frame. The two engines are bit-exact twins, so the
//! scores are the GPU's (ciede2000 within the device libm's 1e-6).
//!
//! Pictures in GPU memory cannot be copied in on the host: a stream of them
//! keeps no history, and a GPU error there ends it as before.

#![forbid(unsafe_code)]

use super::picture::Planes;
use super::{
    CpuBackend, FeatureBackend, Frame, FrameInput, InputCounts, Picture, PixelFormat, Plan, Plane,
    RawFeatures, Replay, VmafError,
};
use std::collections::VecDeque;
use std::sync::Arc;

/// Where a stream moved to the CPU: the first frame the CPU computed and
/// the GPU's error.
#[derive(Clone, Debug, PartialEq)]
pub struct FailoverNote {
    pub frame: u64,
    pub error: String,
}

/// Samples as they came: 8-bit, or 9..16-bit in `u16`.
enum Samples {
    U8(Vec<u8>),
    U16(Vec<u16>),
}

/// A host picture's planes copied as they came, rows packed: the cheapest
/// copy that can become a [`Frame`] when the CPU needs it.
struct PictureCopy {
    format: PixelFormat,
    bpc: u8,
    samples: Samples,
    /// Each plane's width and height, in order, back to back in `samples`.
    sizes: Vec<(usize, usize)>,
}

/// Appends the rows of planes `planes` (the first `n`) to `v`, noting
/// their sizes.
fn pack<T: Copy>(
    planes: &[Option<Plane<'_, T>>; 3],
    n: usize,
    v: &mut Vec<T>,
    sizes: &mut Vec<(usize, usize)>,
) {
    v.clear();
    for p in planes.iter().take(n).flatten() {
        if p.stride == p.width {
            // Packed already: one copy.
            v.extend_from_slice(&p.data[..p.width * p.height]);
        } else {
            (0..p.height).for_each(|y| v.extend_from_slice(p.row(y)));
        }
        sizes.push((p.width, p.height));
    }
}

impl PictureCopy {
    fn new() -> Self {
        Self {
            format: PixelFormat::Gray,
            bpc: 8,
            samples: Samples::U8(Vec::new()),
            sizes: Vec::new(),
        }
    }

    /// Copies host picture `pic` in (its luma only unless `chroma`),
    /// reusing this copy's memory.
    fn fill(&mut self, pic: &Picture<'_>, chroma: bool) {
        let n = if chroma { 3 } else { 1 };
        self.format = pic.format;
        self.bpc = pic.bpc;
        self.sizes.clear();
        let old = std::mem::replace(&mut self.samples, Samples::U8(Vec::new()));
        self.samples = match (&pic.planes, old) {
            (Planes::U8(planes), old) => {
                let mut v = if let Samples::U8(v) = old {
                    v
                } else {
                    Vec::new()
                };
                pack(planes, n, &mut v, &mut self.sizes);
                Samples::U8(v)
            }
            (Planes::U16(planes), old) => {
                let mut v = if let Samples::U16(v) = old {
                    v
                } else {
                    Vec::new()
                };
                pack(planes, n, &mut v, &mut self.sizes);
                Samples::U16(v)
            }
            (Planes::Device(_), _) => unreachable!("pictures in GPU memory are not copied"),
        };
    }

    /// The copy as the CPU backend's frame (of its format, with only the
    /// luma where only the luma was copied).
    fn frame(&self) -> Result<Frame, VmafError> {
        let chroma = self.sizes.len() > 1;
        // A luma-only copy is a valid picture as GRAY; the frame keeps the
        // stream's format.
        let format = if chroma {
            self.format
        } else {
            PixelFormat::Gray
        };
        let mut at = 0;
        let mut spans = Vec::new();
        for &(w, h) in &self.sizes {
            spans.push((at, w, h));
            at += w * h;
        }
        let pic = match &self.samples {
            Samples::U8(v) => {
                let planes: Result<Vec<_>, _> = spans
                    .iter()
                    .map(|&(at, w, h)| Plane::new(&v[at..at + w * h], w, h, w))
                    .collect();
                Picture::new_u8(format, &planes?)?
            }
            Samples::U16(v) => {
                let planes: Result<Vec<_>, _> = spans
                    .iter()
                    .map(|&(at, w, h)| Plane::new(&v[at..at + w * h], w, h, w))
                    .collect();
                Picture::new_u16(format, self.bpc, &planes?)?
            }
        };
        let mut frame = Frame::from_picture(&pic, chroma);
        frame.format = self.format;
        Ok(frame)
    }
}

/// How a kept frame's pictures can be had again.
enum Pictures {
    Copied([PictureCopy; 2]),
    Replay(Arc<dyn Replay>),
}

impl Pictures {
    /// The pair as the CPU backend's frames.
    fn frames(&self, chroma: bool) -> Result<[Arc<Frame>; 2], VmafError> {
        match self {
            Pictures::Copied([r, d]) => Ok([Arc::new(r.frame()?), Arc::new(d.frame()?)]),
            Pictures::Replay(replay) => {
                let mut out = None;
                replay.pictures(&mut |r, d| {
                    out = Some([r, d].map(|p| Arc::new(Frame::from_picture(p, chroma))));
                    Ok(())
                })?;
                out.ok_or_else(|| VmafError::Backend("a kept frame could not be remade".into()))
            }
        }
    }
}

/// One frame's pictures, kept until the frames after it no longer need them.
struct Kept {
    index: u64,
    scored: bool,
    pictures: Pictures,
}

/// A GPU backend with the CPU backend behind it.
pub struct Failover<G: FeatureBackend> {
    gpu: Option<G>,
    cpu: Option<CpuBackend>,
    plan: Plan,
    threads: usize,
    /// Frames since the last flush not collected yet, and up to two
    /// collected ones before them.
    kept: VecDeque<Kept>,
    /// Collected frames at the front of `kept`.
    collected: usize,
    /// False once a picture in GPU memory came (no copies of the stream).
    copies: bool,
    /// Copies no frame holds any more, for the next frames.
    spare: Vec<PictureCopy>,
    note: Option<FailoverNote>,
}

impl<G: FeatureBackend> Failover<G> {
    /// `gpu` for `plan`, with the CPU backend (`threads`, 0: every core)
    /// behind it.
    pub fn new(gpu: G, plan: Plan, threads: usize) -> Self {
        Self {
            gpu: Some(gpu),
            cpu: None,
            plan,
            threads,
            kept: VecDeque::new(),
            collected: 0,
            copies: true,
            spare: Vec::new(),
            note: None,
        }
    }

    /// Keeps a host copy of the frame (nothing for pictures in GPU memory).
    fn keep(&mut self, input: &FrameInput<'_>) {
        if input.reference.on_device() || input.distorted.on_device() {
            self.copies = false;
            self.kept.clear();
            self.collected = 0;
        }
        if !self.copies {
            return;
        }
        let pictures = match &input.replay {
            Some(replay) => Pictures::Replay(replay.clone()),
            None => {
                let chroma = self.plan.reads_chroma();
                let mut copy = |pic: &Picture<'_>| {
                    let mut c = self.spare.pop().unwrap_or_else(PictureCopy::new);
                    c.fill(pic, chroma);
                    c
                };
                Pictures::Copied([copy(input.reference), copy(input.distorted)])
            }
        };
        self.kept.push_back(Kept {
            index: input.index,
            scored: input.scored,
            pictures,
        });
    }

    /// Drops the oldest kept frame, its copies kept for reuse.
    fn drop_oldest(&mut self) {
        if let Some(Kept {
            pictures: Pictures::Copied(copies),
            ..
        }) = self.kept.pop_front()
            && self.spare.len() < 8
        {
            self.spare.extend(copies);
        }
    }

    /// Frames collected from the GPU: the copies before them no longer
    /// needed are dropped.
    fn collected_up_to(&mut self, raws: &[RawFeatures]) {
        if let Some(last) = raws.last() {
            let n = self
                .kept
                .iter()
                .take_while(|k| k.index <= last.index)
                .count();
            self.collected = n;
        }
        while self.collected > 2 {
            self.drop_oldest();
            self.collected -= 1;
        }
    }

    /// Moves the stream to the CPU after `err`: the previous pictures, then
    /// every frame not collected. Fails with `err` where the stream kept no
    /// copies (pictures in GPU memory).
    fn fail_over(&mut self, err: VmafError) -> Result<(), VmafError> {
        // Only the GPU's own failures: bad input stays an error.
        if !self.copies || !matches!(err, VmafError::Backend(_)) {
            return Err(err);
        }
        self.gpu = None;
        let mut cpu = CpuBackend::new(self.plan.clone(), self.threads);
        let chroma = self.plan.reads_chroma();
        let done: Vec<&Kept> = self.kept.iter().take(self.collected).collect();
        let back = |k: usize| {
            done.len()
                .checked_sub(k)
                .map(|i| done[i].pictures.frames(chroma))
        };
        let (two, one) = (back(2).transpose()?, back(1).transpose()?);
        cpu.resume_after(
            two.map(|[r, _]| r),
            one.as_ref().map(|[r, _]| r.clone()),
            one.map(|[_, d]| d),
        );
        let pending: Vec<&Kept> = self.kept.iter().skip(self.collected).collect();
        self.note = Some(FailoverNote {
            frame: pending.first().map_or(0, |k| k.index),
            error: err.to_string(),
        });
        for k in pending {
            let [r, d] = k.pictures.frames(chroma)?;
            cpu.submit_frames((k.index, k.scored), r, d)?;
        }
        self.kept.clear();
        self.collected = 0;
        self.cpu = Some(cpu);
        Ok(())
    }

    fn cpu(&mut self) -> Result<&mut CpuBackend, VmafError> {
        self.cpu
            .as_mut()
            .ok_or_else(|| VmafError::Backend("no backend after a GPU failure".into()))
    }
}

impl<G: FeatureBackend> FeatureBackend for Failover<G> {
    fn describe(&self) -> String {
        match (&self.gpu, &self.cpu) {
            (Some(g), _) => g.describe(),
            (None, Some(c)) => c.describe(),
            (None, None) => "no backend".into(),
        }
    }

    fn submit(&mut self, input: FrameInput<'_>) -> Result<(), VmafError> {
        if let Some(cpu) = &mut self.cpu {
            return cpu.submit(input);
        }
        self.keep(&input);
        let gpu = self.gpu.as_mut().expect("a backend");
        let index = input.index;
        match gpu.submit(input) {
            Ok(()) => Ok(()),
            Err(e) if self.kept.back().is_some_and(|k| k.index == index) => self.fail_over(e),
            Err(e) => Err(e),
        }
    }

    fn collect(&mut self, wait: bool) -> Result<Vec<RawFeatures>, VmafError> {
        if let Some(gpu) = &mut self.gpu {
            match gpu.collect(wait) {
                Ok(raws) => {
                    self.collected_up_to(&raws);
                    return Ok(raws);
                }
                Err(e) => self.fail_over(e)?,
            }
        }
        self.cpu()?.collect(wait)
    }

    fn flush(&mut self) -> Result<Vec<RawFeatures>, VmafError> {
        if let Some(gpu) = &mut self.gpu {
            match gpu.flush() {
                Ok(raws) => {
                    // The next frame starts a new sequence: nothing before it.
                    self.kept.clear();
                    self.collected = 0;
                    return Ok(raws);
                }
                Err(e) => self.fail_over(e)?,
            }
        }
        self.cpu()?.flush()
    }

    fn reset(&mut self) -> Result<(), VmafError> {
        self.kept.clear();
        self.collected = 0;
        self.copies = true;
        match (&mut self.gpu, &mut self.cpu) {
            (Some(g), _) => g.reset(),
            (None, Some(c)) => c.reset(),
            (None, None) => Ok(()),
        }
    }

    fn reads_device_memory(&self) -> bool {
        self.gpu.as_ref().is_some_and(|g| g.reads_device_memory())
    }

    fn input_counts(&self) -> InputCounts {
        self.gpu
            .as_ref()
            .map(|g| g.input_counts())
            .unwrap_or_default()
    }

    fn failover(&self) -> Option<FailoverNote> {
        self.note.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vmaf::{Engine, EngineConfig, FrameScores, ModelSet, Scorer};

    /// A "GPU" that is the CPU backend failing at one frame's submit or
    /// at the collect after it.
    struct Faulty {
        inner: CpuBackend,
        fail_at: u64,
        in_collect: bool,
        failed: bool,
    }

    impl FeatureBackend for Faulty {
        fn describe(&self) -> String {
            "faulty".into()
        }
        fn submit(&mut self, input: FrameInput<'_>) -> Result<(), VmafError> {
            if !self.in_collect && input.index == self.fail_at {
                return Err(VmafError::Backend("injected".into()));
            }
            self.inner.submit(input)
        }
        fn collect(&mut self, wait: bool) -> Result<Vec<RawFeatures>, VmafError> {
            let raws = self.inner.collect(wait)?;
            if self.in_collect && !self.failed && raws.iter().any(|r| r.index >= self.fail_at) {
                self.failed = true;
                return Err(VmafError::Backend("injected".into()));
            }
            Ok(raws)
        }
        fn flush(&mut self) -> Result<Vec<RawFeatures>, VmafError> {
            self.collect(true)
        }
        fn reset(&mut self) -> Result<(), VmafError> {
            self.inner.reset()
        }
    }

    fn run(engine: &mut dyn Engine, n: u8) -> Vec<FrameScores> {
        let (w, h) = (64, 48);
        let mut out = Vec::new();
        for i in 0..n {
            let luma = |shift: u8| -> Vec<u8> {
                (0..w * h)
                    .map(|k| ((k % w) as u8).wrapping_mul(3).wrapping_add(i * 5 + shift))
                    .collect()
            };
            let chroma = vec![128u8; (w / 2) * (h / 2)];
            let (r, d) = (luma(0), luma(i % 3));
            let planes = |y| {
                [
                    Plane::new(y, w, h, w).unwrap(),
                    Plane::new(&chroma[..], w / 2, h / 2, w / 2).unwrap(),
                    Plane::new(&chroma[..], w / 2, h / 2, w / 2).unwrap(),
                ]
            };
            let (rp, dp) = (planes(&r[..]), planes(&d[..]));
            let rpic = Picture::new_u8(PixelFormat::Yuv420, &rp).unwrap();
            let dpic = Picture::new_u8(PixelFormat::Yuv420, &dp).unwrap();
            out.extend(engine.push(&rpic, &dpic).unwrap());
        }
        out.extend(engine.flush().unwrap());
        out
    }

    /// Luma-only copies (the model alone) and copies with chroma (PSNR).
    #[test]
    fn a_failing_backend_hands_every_frame_to_the_cpu_once() {
        for psnr in [false, true] {
            let mut config = EngineConfig::new(ModelSet::load("vmaf_v0.6.1").unwrap());
            config.psnr = psnr;
            fail_at_each_place(&config);
        }
    }

    fn fail_at_each_place(config: &EngineConfig) {
        let want = run(&mut Scorer::cpu(config).unwrap(), 10);
        for (fail_at, in_collect) in [(0, false), (4, false), (4, true), (9, true)] {
            let plan = config.plan().unwrap();
            let faulty = Faulty {
                inner: CpuBackend::new(plan.clone(), 1),
                fail_at,
                in_collect,
                failed: false,
            };
            let mut e = Scorer::with_backend(config, Failover::new(faulty, plan, 1)).unwrap();
            let got = run(&mut e, 10);
            assert_eq!(got, want, "fault at {fail_at} (collect: {in_collect})");
            let note = e.failover().expect("moved to the CPU");
            assert!(
                note.frame <= fail_at && note.error.contains("injected"),
                "{note:?}"
            );
        }
    }
}
