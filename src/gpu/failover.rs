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
//! the temporal extractors read, `Plan::history`). On a GPU error — from
//! `submit`, `collect` or `flush` — the CPU backend takes over: it is given
//! those previous pictures, then every frame not collected yet, in order,
//! and every later frame. The two engines are bit-exact twins, so the
//! scores are the GPU's (ciede2000 within the device libm's 1e-6).
//!
//! With a [`Retry`], the GPU is opened again after a back-off (doubling
//! after each failed return, up to a minute), and the stream goes back to
//! it at a frame boundary: the CPU's frames are all collected first, and the
//! new GPU backend is given the two frames before (their features computed
//! again and dropped), so that it holds the previous pictures the next
//! frame reads. While on the CPU, those two frames are kept for this.
//!
//! Pictures in GPU memory cannot be copied in on the host: a stream of them
//! keeps no history, and a GPU error there ends it as before.

#![forbid(unsafe_code)]

use crate::core::picture::Planes;
use crate::core::{
    FailoverNote, FeatureBackend, Frame, FrameInput, InputCounts, Picture, PixelFormat, Plane,
    RawFeatures, Replay, VmafError,
};
use crate::cpu::CpuBackend;
use crate::extractors::plan::Plan;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The longest back-off between attempts to reopen the GPU.
const MAX_RETRY_DELAY: Duration = Duration::from_secs(60);

/// How a failed GPU is opened again, and when.
pub struct Retry<G> {
    reopen: Box<dyn FnMut() -> Result<G, VmafError> + Send>,
    /// The back-off after a GPU that worked fails.
    first: Duration,
    /// The back-off after the next failure.
    delay: Duration,
    /// When the next attempt is due, while on the CPU.
    due: Option<Instant>,
}

impl<G> Retry<G> {
    /// Reopens with `reopen`, `delay` after a GPU error (doubling while
    /// the GPU keeps failing, up to a minute).
    pub fn new(
        reopen: impl FnMut() -> Result<G, VmafError> + Send + 'static,
        delay: Duration,
    ) -> Self {
        Self {
            reopen: Box::new(reopen),
            first: delay,
            delay,
            due: None,
        }
    }

    /// The GPU failed: the next attempt after the back-off, which doubles.
    fn failed(&mut self) {
        self.due = Some(Instant::now() + self.delay);
        self.delay = (self.delay * 2).clamp(Duration::from_millis(1), MAX_RETRY_DELAY);
    }

    /// The GPU came back and computed a frame: the back-off starts over.
    fn worked(&mut self) {
        self.delay = self.first;
    }

    fn is_due(&self) -> bool {
        self.due.is_some_and(|d| Instant::now() >= d)
    }
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

/// Copies the rows of planes `planes` (the first `n`) into `v`, packed,
/// noting their sizes: on several threads for a large frame
/// (`staging::copy_threads`, the cores shared among the failovers alive),
/// into `v`'s memory from the frame before (grown, never cleared: a
/// recycled copy costs no fill).
fn pack<T: Copy + Default + Send + Sync>(
    planes: &[Option<Plane<'_, T>>; 3],
    n: usize,
    v: &mut Vec<T>,
    sizes: &mut Vec<(usize, usize)>,
) {
    let kept: Vec<&Plane<'_, T>> = planes.iter().take(n).flatten().collect();
    let total: usize = kept.iter().map(|p| p.width * p.height).sum();
    v.resize(total, T::default());
    let mut rest = v.as_mut_slice();
    let mut jobs = Vec::with_capacity(kept.len());
    for p in kept {
        let (dst, tail) = std::mem::take(&mut rest).split_at_mut(p.width * p.height);
        rest = tail;
        jobs.push((dst, p.data, p.stride, p.width));
        sizes.push((p.width, p.height));
    }
    let bytes = total * std::mem::size_of::<T>();
    let threads = super::staging::copy_threads(bytes, LIVE.load(Ordering::Relaxed));
    super::staging::copy_bands(jobs, threads, |d, s| d.copy_from_slice(s));
}

/// Failovers alive in this process: they share the cores their copies run on.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Counts one failover alive while it lives.
struct Alive;

impl Alive {
    fn new() -> Self {
        LIVE.fetch_add(1, Ordering::Relaxed);
        Alive
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
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

    /// Calls `f` with the copy as a picture (of its format, or GRAY where
    /// only the luma was copied).
    fn picture<R>(&self, f: impl FnOnce(&Picture<'_>) -> R) -> Result<R, VmafError> {
        let chroma = self.sizes.len() > 1;
        // A luma-only copy is a valid picture as GRAY.
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
        Ok(f(&pic))
    }
}

/// How a kept frame's pictures can be had again.
enum Pictures {
    Copied([PictureCopy; 2]),
    Replay(Arc<dyn Replay>),
}

impl Pictures {
    /// The pair as `cpu`'s frames (a rendition scaled to the reference's
    /// size, as `cpu` scales what it is given).
    fn frames(&self, cpu: &mut CpuBackend) -> Result<[Arc<Frame>; 2], VmafError> {
        let pair = match self {
            Pictures::Copied([r, d]) => {
                let (mut rf, mut df) =
                    r.picture(|rp| d.picture(|dp| cpu.frames_of(rp, dp)))???;
                // A luma-only copy is a GRAY picture; the frames keep the stream's format.
                rf.format = r.format;
                df.format = d.format;
                (rf, df)
            }
            Pictures::Replay(replay) => {
                let mut out = None;
                replay.pictures(&mut |r, d| {
                    out = Some(cpu.frames_of(r, d)?);
                    Ok(())
                })?;
                out.ok_or_else(|| VmafError::Backend("a kept frame could not be remade".into()))?
            }
        };
        Ok([Arc::new(pair.0), Arc::new(pair.1)])
    }

    /// Gives the pair to `backend` again, as frame `index`.
    fn submit_to(
        &self,
        backend: &mut dyn FeatureBackend,
        (index, scored): (u64, bool),
    ) -> Result<(), VmafError> {
        let mut submit = |r: &Picture<'_>, d: &Picture<'_>, replay| {
            backend.submit(FrameInput {
                index,
                scored,
                reference: r,
                distorted: d,
                keep: None,
                replay,
                // A frame made again is not shared: this backend does its
                // reference's work itself.
                reference_id: None,
            })
        };
        match self {
            Pictures::Copied([r, d]) => r.picture(|r| d.picture(|d| submit(r, d, None)))??,
            Pictures::Replay(replay) => {
                replay.pictures(&mut |r, d| submit(r, d, Some(replay.clone())))
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
    /// On the GPU: frames since the last flush not collected yet, and up
    /// to two collected ones before them. On the CPU with a retry: the two
    /// frames submitted last.
    kept: VecDeque<Kept>,
    /// Collected frames at the front of `kept`.
    collected: usize,
    /// False once a picture in GPU memory came (no copies of the stream).
    copies: bool,
    /// Copies no frame holds any more, for the next frames.
    spare: Vec<PictureCopy>,
    /// Every move between the engines, in order.
    moves: Vec<FailoverNote>,
    retry: Option<Retry<G>>,
    /// The CPU's last features, collected before the GPU came back.
    ready: Vec<RawFeatures>,
    /// Features a reopened GPU gives first for the frames it was primed
    /// with (already delivered by the CPU): dropped.
    primed: usize,
    _alive: Alive,
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
            moves: Vec::new(),
            retry: None,
            ready: Vec::new(),
            primed: 0,
            _alive: Alive::new(),
        }
    }

    /// Goes back to a GPU that `retry` opens after an error.
    pub fn with_retry(mut self, retry: Retry<G>) -> Self {
        self.retry = Some(retry);
        self
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
                // A GPU primed again from the copies needs whole pictures.
                let chroma = self.plan.reads_chroma() || self.retry.is_some();
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

    /// Forgets the kept frames (a new sequence starts).
    fn forget(&mut self) {
        self.keep_last(0);
    }

    /// Keeps only the last `n` frames, all of them done (on the CPU, the
    /// frames a reopened GPU is primed with).
    fn keep_last(&mut self, n: usize) {
        while self.kept.len() > n {
            self.drop_oldest();
        }
        self.collected = self.kept.len();
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
        self.primed = 0;
        let mut cpu = CpuBackend::new(self.plan.clone(), self.threads);
        let done: Vec<&Kept> = self.kept.iter().take(self.collected).collect();
        let mut back = |k: usize| {
            done.len()
                .checked_sub(k)
                .map(|i| done[i].pictures.frames(&mut cpu))
                .transpose()
        };
        let (two, one) = (back(2)?, back(1)?);
        cpu.resume_after(
            two.map(|[r, _]| r),
            one.as_ref().map(|[r, _]| r.clone()),
            one.map(|[_, d]| d),
        );
        let pending: Vec<&Kept> = self.kept.iter().skip(self.collected).collect();
        let next = self.kept.back().map_or(0, |k| k.index + 1);
        self.moves.push(FailoverNote {
            frame: pending.first().map_or(next, |k| k.index),
            engine: cpu.describe(),
            error: Some(err.to_string()),
        });
        for k in pending {
            let [r, d] = k.pictures.frames(&mut cpu)?;
            cpu.submit_frames((k.index, k.scored), r, d)?;
        }
        self.cpu = Some(cpu);
        if let Some(r) = &mut self.retry {
            r.failed();
        }
        // On the CPU, only a retry needs frames: the last two submitted.
        self.keep_last(if self.retry.is_some() { 2 } else { 0 });
        Ok(())
    }

    /// On the CPU, when a retry is due: opens the GPU again and gives it
    /// the two frames before frame `next` (their features to be dropped),
    /// then collects every frame the CPU has and leaves it. A GPU that will
    /// not open, or fails while primed, leaves the stream on the CPU until
    /// the next attempt.
    fn go_back(&mut self, next: u64) -> Result<(), VmafError> {
        let Some(retry) = self.retry.as_mut().filter(|r| r.is_due()) else {
            return Ok(());
        };
        let primed = (retry.reopen)().and_then(|mut gpu| {
            for k in &self.kept {
                k.pictures.submit_to(&mut gpu, (k.index, k.scored))?;
            }
            Ok(gpu)
        });
        let Ok(gpu) = primed else {
            self.retry.as_mut().expect("a retry").failed();
            return Ok(());
        };
        let raws = self.cpu()?.collect(true)?;
        self.ready.extend(raws);
        self.cpu = None;
        self.moves.push(FailoverNote {
            frame: next,
            engine: gpu.describe(),
            error: None,
        });
        self.gpu = Some(gpu);
        self.primed = self.kept.len();
        self.collected = self.kept.len();
        Ok(())
    }

    /// The GPU's features less those of the frames it was primed with,
    /// after what the CPU delivered before.
    fn take_gpu_features(&mut self, mut raws: Vec<RawFeatures>) -> Vec<RawFeatures> {
        let drop = self.primed.min(raws.len());
        raws.drain(..drop);
        self.primed -= drop;
        if !raws.is_empty()
            && let Some(r) = &mut self.retry
        {
            r.worked();
        }
        self.collected_up_to(&raws);
        self.with_ready(raws)
    }

    /// `raws` after the CPU's features collected before the GPU came back.
    fn with_ready(&mut self, raws: Vec<RawFeatures>) -> Vec<RawFeatures> {
        if self.ready.is_empty() {
            return raws;
        }
        let mut out = std::mem::take(&mut self.ready);
        out.extend(raws);
        out
    }

    fn cpu(&mut self) -> Result<&mut CpuBackend, VmafError> {
        self.cpu
            .as_mut()
            .ok_or_else(|| VmafError::Backend("no backend after a GPU failure".into()))
    }

    /// On the CPU: keeps the frame for a retry (the last two), then submits it.
    fn submit_to_cpu(&mut self, input: FrameInput<'_>) -> Result<(), VmafError> {
        if self.retry.is_some() {
            self.keep(&input);
            self.keep_last(2);
        }
        self.cpu()?.submit(input)
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
        if self.cpu.is_some() {
            self.go_back(input.index)?;
        }
        if self.cpu.is_some() {
            return self.submit_to_cpu(input);
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
                Ok(raws) => return Ok(self.take_gpu_features(raws)),
                Err(e) => self.fail_over(e)?,
            }
        }
        let raws = self.cpu()?.collect(wait)?;
        Ok(self.with_ready(raws))
    }

    fn flush(&mut self) -> Result<Vec<RawFeatures>, VmafError> {
        if let Some(gpu) = &mut self.gpu {
            match gpu.flush() {
                Ok(raws) => {
                    let raws = self.take_gpu_features(raws);
                    // The next frame starts a new sequence: nothing before it.
                    self.forget();
                    return Ok(raws);
                }
                Err(e) => self.fail_over(e)?,
            }
        }
        let raws = self.cpu()?.flush()?;
        self.forget();
        Ok(self.with_ready(raws))
    }

    fn reset(&mut self) -> Result<(), VmafError> {
        self.forget();
        self.copies = true;
        self.ready.clear();
        self.primed = 0;
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

    fn failover(&self) -> &[FailoverNote] {
        &self.moves
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
            out.extend(
                engine
                    .push(crate::vmaf::FramePair::new(&rpic, &dpic))
                    .unwrap(),
            );
        }
        out.extend(engine.flush().unwrap());
        out
    }

    /// Luma-only copies (the model alone) and copies with chroma (PSNR).
    #[test]
    fn a_failing_backend_hands_every_frame_to_the_cpu_once() {
        for psnr in [false, true] {
            let mut config = EngineConfig::new(ModelSet::load("vmaf_v0.6.1").unwrap());
            if psnr {
                config.features.push("psnr".into());
            }
            fail_at_each_place(&config);
        }
    }

    fn faulty(plan: &Plan, fail_at: u64, in_collect: bool) -> Faulty {
        Faulty {
            inner: CpuBackend::new(plan.clone(), 1),
            fail_at,
            in_collect,
            failed: false,
        }
    }

    fn fail_at_each_place(config: &EngineConfig) {
        let want = run(&mut Scorer::cpu(config).unwrap(), 10);
        for (fail_at, in_collect) in [(0, false), (4, false), (4, true), (9, true)] {
            let plan = config.plan().unwrap();
            let failover = Failover::new(faulty(&plan, fail_at, in_collect), plan, 1);
            let mut e = Scorer::with_backend(config, failover).unwrap();
            let got = run(&mut e, 10);
            assert_eq!(got, want, "fault at {fail_at} (collect: {in_collect})");
            let [note] = e.failover() else {
                panic!("one move to the CPU: {:?}", e.failover())
            };
            assert!(
                note.frame <= fail_at
                    && note.error.as_ref().is_some_and(|e| e.contains("injected")),
                "{note:?}"
            );
        }
    }

    /// With a retry (no back-off), the stream goes back to a "GPU" opened
    /// again at the next frame, primed with the frames before it, and
    /// every frame's scores stay the CPU engine's.
    #[test]
    fn a_retry_goes_back_to_the_reopened_backend() {
        let mut config = EngineConfig::new(ModelSet::load("vmaf_v0.6.1").unwrap());
        config.features.push("psnr".into());
        let want = run(&mut Scorer::cpu(&config).unwrap(), 10);
        for (fail_at, in_collect) in [(0, false), (4, false), (4, true), (6, false)] {
            let plan = config.plan().unwrap();
            let reopen_plan = plan.clone();
            let retry = Retry::new(
                move || Ok(faulty(&reopen_plan, u64::MAX, false)),
                Duration::ZERO,
            );
            let failover =
                Failover::new(faulty(&plan, fail_at, in_collect), plan, 1).with_retry(retry);
            let mut e = Scorer::with_backend(&config, failover).unwrap();
            let got = run(&mut e, 10);
            assert_eq!(got, want, "fault at {fail_at} (collect: {in_collect})");
            let [away, back] = e.failover() else {
                panic!("away and back: {:?}", e.failover())
            };
            assert!(
                away.error.is_some() && back.error.is_none(),
                "{away:?} {back:?}"
            );
            assert!(
                away.frame <= fail_at && back.frame > away.frame,
                "{away:?} {back:?}"
            );
        }
    }
}
