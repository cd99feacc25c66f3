//! The extractors that run on the CPU beside the GPU work, by their CPU
//! twins: whatever `extractors_for` left to it, the extractors without a
//! GPU twin or whose twin declined the stream (its kernels do not take it),
//! where the CPU twin gives libvmaf's error or its numbers.
//! They read the host pictures, or, for pictures in GPU memory, the
//! uploaded planes read back.

#![forbid(unsafe_code)]

use crate::core::picture::{Frame as HostFrame, OwnedPlane};
use crate::core::{FrameJob, RawFeatures};
use crate::cpu::CpuExtractor;
use crate::extractors::History;
use crate::extractors::plan::Configured;
use crate::hip::twin::{Frame, Geometry, GpuExtractor, Retired};
use crate::hip::{HipError, PinnedHostMem};
use std::sync::Arc;

pub(super) struct Host {
    twins: CpuExtractor,
    reads_chroma: bool,
    every_frame: bool,
    history: History,
    /// Per slot: the frame's values, until it retires.
    results: Vec<RawFeatures>,
    /// Host copies of the uploaded planes, for pictures in GPU memory.
    planes: Option<PinnedHostMem>,
    /// The pictures of the frames before: reference one and two back,
    /// distorted one back.
    prev: [Option<Arc<HostFrame>>; 3],
}

impl Host {
    /// The CPU twins of `extractors`, for frames of `slots` slots. The
    /// engine's one submitting thread runs this twin: a twin may share a
    /// frame's work over the machine's cores.
    pub(super) fn new(slots: usize, extractors: Vec<&Configured>) -> Self {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let history = extractors
            .iter()
            .fold(History::default(), |h, c| h.max(c.config.history()));
        Host {
            reads_chroma: extractors.iter().any(|c| c.config.reads_chroma()),
            every_frame: extractors
                .iter()
                .any(|c| c.config.every_frame() || c.config.history() != History::default()),
            history,
            twins: CpuExtractor::of(slots, extractors.into_iter(), threads),
            results: Vec::new(),
            planes: None,
            prev: [None, None, None],
        }
    }

    /// The uploaded planes (luma, and chroma when it reads chroma) of the
    /// reference and the distorted picture, read back (pictures in GPU
    /// memory have no host copy). Waits for the frame's work so far.
    fn frames_from_device(&mut self, f: &Frame<'_>) -> Result<[HostFrame; 2], HipError> {
        let g = f.geo;
        // Chroma only for the extractors that read it.
        let n = if self.reads_chroma { g.planes.len() } else { 1 };
        let sizes: Vec<usize> = g.planes[..n].iter().map(|&(w, h)| w * h * g.bps).collect();
        let total: usize = 2 * sizes.iter().sum::<usize>();
        if self
            .planes
            .as_ref()
            .is_none_or(|m| m.shared().len() < total)
        {
            self.planes = Some(PinnedHostMem::new(f.stream.device(), total)?);
        }
        let host = self.planes.as_ref().expect("just made");
        let mut at = 0;
        let mut spans = Vec::new();
        for (p, &bytes) in sizes.iter().enumerate() {
            for side in 0..2 {
                f.stream
                    .download(host.shared(), at, f.plane(side, p), 0, bytes)?;
                spans.push((p, side, at, bytes));
                at += bytes;
            }
        }
        f.stream.synchronize()?;
        let data = host.as_ref();
        let mut frames = [0, 1].map(|_| HostFrame {
            format: g.format,
            bpc: g.bpc,
            planes: Vec::new(),
        });
        for (p, side, at, bytes) in spans {
            let (w, h) = g.planes[p];
            frames[side].planes.push(OwnedPlane {
                data: widen(&data[at..at + bytes], g),
                width: w,
                height: h,
            });
        }
        Ok(frames)
    }
}

/// Read-back samples as 16-bit values.
fn widen(b: &[u8], g: &Geometry) -> Vec<u16> {
    if g.bps == 1 {
        b.iter().map(|&v| u16::from(v)).collect()
    } else {
        b.chunks_exact(2)
            .map(|c| u16::from_ne_bytes([c[0], c[1]]))
            .collect()
    }
}

impl GpuExtractor for Host {
    fn stage(&self) -> &'static str {
        "host"
    }

    /// Extractors that score the frames `subsample` skips too, or read the
    /// frames before each scored one.
    fn every_frame(&self) -> bool {
        self.every_frame
    }

    fn add_slot(&mut self, _dev: &std::sync::Arc<crate::hip::Device>) -> Result<(), HipError> {
        self.results.push(RawFeatures::default());
        Ok(())
    }

    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let input = f.input;
        let [rf, df] = if input.reference.on_device() || input.distorted.on_device() {
            self.frames_from_device(f)?
        } else {
            [
                HostFrame::from_picture(input.reference, self.reads_chroma),
                HostFrame::from_picture(input.distorted, self.reads_chroma),
            ]
        };
        // No earlier frame: the stream's start, or after a flush.
        if f.earlier[0].is_none() {
            self.prev = [None, None, None];
        }
        let [prev_ref, prev_prev_ref, prev_dis] = self.prev.clone();
        let job = FrameJob {
            index: input.index,
            reference: Arc::new(rf),
            distorted: Arc::new(df),
            prev_reference: prev_ref,
            prev_prev_reference: prev_prev_ref,
            prev_distorted: prev_dis,
            scored: input.scored,
        };
        self.results[f.slot] = self.twins.extract(&job);
        self.keep_history(job);
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        // Only what this twin computed: the GPU twins fill the rest.
        out.merge(std::mem::take(&mut self.results[r.slot]));
        Ok(())
    }
}

impl Host {
    /// Keeps the pictures the next frames read.
    fn keep_history(&mut self, job: FrameJob) {
        let h = self.history;
        if h.reference >= 2 {
            self.prev[1] = self.prev[0].take();
        }
        if h.reference >= 1 {
            self.prev[0] = Some(job.reference);
        }
        if h.distorted {
            self.prev[2] = Some(job.distorted);
        }
    }
}
