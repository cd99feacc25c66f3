//! GPU failover: a [`FeatureBackend`] that runs a GPU backend and, when it
//! fails mid-stream, moves the stream to the CPU backend without losing or
//! repeating a frame.
//!
//! Every frame given to the GPU is also copied in on the host (as the CPU
//! backend copies its frames) and kept until its features are collected,
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

use super::{
    CpuBackend, FeatureBackend, Frame, FrameInput, InputCounts, Plan, RawFeatures, VmafError,
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

/// One frame's copies, kept until the frames after it no longer need them.
struct Kept {
    index: u64,
    scored: bool,
    reference: Arc<Frame>,
    distorted: Arc<Frame>,
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
            note: None,
        }
    }

    /// Where the stream moved to the CPU, once it has.
    pub fn note(&self) -> Option<&FailoverNote> {
        self.note.as_ref()
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
        let chroma = self.plan.reads_chroma();
        self.kept.push_back(Kept {
            index: input.index,
            scored: input.scored,
            reference: Arc::new(Frame::from_picture(input.reference, chroma)),
            distorted: Arc::new(Frame::from_picture(input.distorted, chroma)),
        });
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
            self.kept.pop_front();
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
        let done: Vec<&Kept> = self.kept.iter().take(self.collected).collect();
        let back = |k: usize| done.len().checked_sub(k).map(|i| &done[i]);
        cpu.resume_after(
            back(2).map(|k| k.reference.clone()),
            back(1).map(|k| k.reference.clone()),
            back(1).map(|k| k.distorted.clone()),
        );
        let pending: Vec<&Kept> = self.kept.iter().skip(self.collected).collect();
        self.note = Some(FailoverNote {
            frame: pending.first().map_or(0, |k| k.index),
            error: err.to_string(),
        });
        for k in pending {
            cpu.submit_frames(
                (k.index, k.scored),
                k.reference.clone(),
                k.distorted.clone(),
            )?;
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
