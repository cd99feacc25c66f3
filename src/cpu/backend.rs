//! The CPU feature backend: frame-parallel worker threads, each with its own
//! extractor scratch. Results are reordered by frame index, so they are
//! identical to a single-threaded run. One thread means one worker: the
//! caller's thread copies the next frame in while it computes (as libvmaf's
//! thread pool of one does).
//!
//! Frames are recycled: once the last job holding a frame is done, its
//! planes go back to a spare list and the next picture is copied into them,
//! so a long run allocates (and page-faults in) frame memory only at start.

use super::CpuExtractor;
use crate::core::scale::{self, Scaler};
use crate::core::{FeatureBackend, Frame, FrameInput, FrameJob, Picture, RawFeatures, VmafError};
use crate::extractors::plan::Plan;
use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

pub struct CpuBackend {
    threads: usize,
    workers: Vec<JoinHandle<()>>,
    jobs: Option<Sender<FrameJob>>,
    results: Option<Receiver<RawFeatures>>,
    plan: Plan,
    in_flight: usize,
    /// Results that arrived out of order, by index.
    pending: BTreeMap<u64, RawFeatures>,
    /// Submission order of in-flight frames.
    order: std::collections::VecDeque<u64>,
    ready: Vec<RawFeatures>,
    /// Reference of the previous frame (`Plan::history`).
    prev_ref: Option<Arc<Frame>>,
    /// Reference two frames back.
    prev_prev_ref: Option<Arc<Frame>>,
    /// Distorted picture of the previous frame.
    prev_dis: Option<Arc<Frame>>,
    spare: Spare,
    /// Scales distorted pictures of another size to the reference's
    /// (`Plan::scale`), made for the size last seen.
    scaler: Option<Scaler>,
}

/// From this many worker threads on, the two pictures of a frame pair are
/// copied in on two threads.
const PARALLEL_COPY_THREADS: usize = 8;

/// Frames no job holds any more, ready to be refilled.
#[derive(Clone, Default)]
struct Spare(Arc<Mutex<Vec<Frame>>>);

impl Spare {
    /// Most frames kept: two per job in flight, plus the earlier ones.
    const LIMIT: usize = 64;

    /// A frame holding a copy of `pic`, in recycled memory when there is some.
    fn frame_from(&self, pic: &Picture<'_>, chroma: bool) -> Frame {
        let recycled = self.0.lock().unwrap().pop();
        match recycled {
            Some(mut f) => {
                f.fill_from(pic, chroma);
                f
            }
            None => Frame::from_picture(pic, chroma),
        }
    }

    /// Take back the frames of a finished job that nothing else holds.
    fn recycle(&self, job: FrameJob) {
        let frames = [
            Some(job.reference),
            Some(job.distorted),
            job.prev_reference,
            job.prev_prev_reference,
            job.prev_distorted,
        ];
        let mut spare = self.0.lock().unwrap();
        for f in frames.into_iter().flatten() {
            if let Ok(f) = Arc::try_unwrap(f)
                && spare.len() < Self::LIMIT
            {
                spare.push(f);
            }
        }
    }
}

impl CpuBackend {
    /// `threads` = 0 uses every core.
    pub fn new(plan: Plan, threads: usize) -> Self {
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            threads
        };
        let mut b = CpuBackend {
            threads,
            workers: Vec::new(),
            jobs: None,
            results: None,
            plan,
            in_flight: 0,
            pending: BTreeMap::new(),
            order: Default::default(),
            ready: Vec::new(),
            prev_ref: None,
            prev_prev_ref: None,
            prev_dis: None,
            spare: Spare::default(),
            scaler: None,
        };
        b.start();
        b
    }

    fn start(&mut self) {
        let (job_tx, job_rx) = mpsc::channel::<FrameJob>();
        let (res_tx, res_rx) = mpsc::channel::<RawFeatures>();
        let job_rx = std::sync::Arc::new(std::sync::Mutex::new(job_rx));
        for i in 0..self.threads {
            let rx = job_rx.clone();
            let tx = res_tx.clone();
            let plan = self.plan.clone();
            let spare = self.spare.clone();
            let handle = std::thread::Builder::new()
                .name(format!("vmaf-cpu-{i}"))
                .spawn(move || {
                    let mut ex = CpuExtractor::new(&plan, 1);
                    loop {
                        let job = { rx.lock().unwrap().recv() };
                        let Ok(job) = job else { break };
                        let features = ex.extract(&job);
                        spare.recycle(job);
                        if tx.send(features).is_err() {
                            break;
                        }
                    }
                })
                .expect("spawning a VMAF worker thread");
            self.workers.push(handle);
        }
        self.jobs = Some(job_tx);
        self.results = Some(res_rx);
    }

    fn stop(&mut self) {
        self.jobs = None;
        for h in self.workers.drain(..) {
            let _ = h.join();
        }
        self.results = None;
        self.in_flight = 0;
        self.pending.clear();
        self.order.clear();
        self.ready.clear();
    }

    fn receive(&mut self, block: bool) -> Result<(), VmafError> {
        let Some(rx) = &self.results else {
            return Ok(());
        };
        loop {
            let r = if block {
                rx.recv()
                    .map_err(|_| VmafError::Backend("a CPU worker thread died".into()))?
            } else {
                match rx.try_recv() {
                    Ok(r) => r,
                    Err(mpsc::TryRecvError::Empty) => return Ok(()),
                    Err(mpsc::TryRecvError::Disconnected) => {
                        return Err(VmafError::Backend("a CPU worker thread died".into()));
                    }
                }
            };
            self.in_flight -= 1;
            self.pending.insert(r.index, r);
            while let Some(&next) = self.order.front() {
                match self.pending.remove(&next) {
                    Some(r) => {
                        self.order.pop_front();
                        self.ready.push(r);
                    }
                    None => break,
                }
            }
            if block {
                return Ok(());
            }
        }
    }
}

impl FeatureBackend for CpuBackend {
    fn describe(&self) -> String {
        format!(
            "cpu ({} thread{}, {})",
            self.threads,
            if self.threads == 1 { "" } else { "s" },
            crate::core::isa::active().name()
        )
    }

    fn submit(&mut self, input: FrameInput<'_>) -> Result<(), VmafError> {
        // Bound the queue: one frame per worker and one waiting. Each frame
        // pair in flight is two whole pictures, so a deeper queue costs
        // memory without keeping the workers
        // any busier. Waiting before copying the picture in lets it reuse the
        // frames of the job that just finished (the worker meanwhile computes
        // the job that waited), so two fewer frames are ever allocated.
        while self.in_flight > self.threads {
            self.receive(true)?;
        }
        if input.scaled() {
            let (reference, distorted) = self.frames_of(input.reference, input.distorted)?;
            drop(input.keep);
            return self.submit_frames(
                (input.index, input.scored),
                Arc::new(reference),
                Arc::new(distorted),
            );
        }
        let chroma = self.plan.reads_chroma();
        // The caller's thread copies both pictures in; with many workers
        // that copy is what bounds them (VMAF v1 at 16 threads: the workers
        // finish frames faster than one thread copies two pictures in;
        // docs/history/performance-notebook.md), so there the distorted
        // picture is copied on a second thread beside the reference.
        let copy = |pic| self.spare.frame_from(pic, chroma);
        let (reference, distorted) = if self.threads >= PARALLEL_COPY_THREADS {
            std::thread::scope(|s| {
                let distorted = s.spawn(|| copy(input.distorted));
                (copy(input.reference), distorted.join())
            })
        } else {
            (copy(input.reference), Ok(copy(input.distorted)))
        };
        let distorted = distorted
            .map_err(|_| VmafError::Backend("copying a distorted picture in failed".into()))?;
        drop(input.keep);
        self.submit_frames(
            (input.index, input.scored),
            Arc::new(reference),
            Arc::new(distorted),
        )
    }

    fn collect(&mut self, wait: bool) -> Result<Vec<RawFeatures>, VmafError> {
        if wait {
            while self.in_flight > 0 {
                self.receive(true)?;
            }
        } else {
            self.receive(false)?;
        }
        Ok(std::mem::take(&mut self.ready))
    }

    fn flush(&mut self) -> Result<Vec<RawFeatures>, VmafError> {
        self.prev_ref = None;
        self.prev_prev_ref = None;
        self.prev_dis = None;
        self.collect(true)
    }

    fn reset(&mut self) -> Result<(), VmafError> {
        self.prev_ref = None;
        self.prev_prev_ref = None;
        self.prev_dis = None;
        self.stop();
        self.start();
        Ok(())
    }
}

impl CpuBackend {
    /// A pair as this backend's frames (the luma, and the chroma where the
    /// plan reads it), the distorted picture scaled to the reference's size
    /// first where it differs (`Plan::scale`, `core::scale`, on this
    /// backend's threads).
    pub fn frames_of(
        &mut self,
        r: &Picture<'_>,
        d: &Picture<'_>,
    ) -> Result<(Frame, Frame), VmafError> {
        let chroma = self.plan.reads_chroma();
        let Some(method) = scale::method_for(self.plan.scale, r, d)? else {
            return Ok((
                self.spare.frame_from(r, chroma),
                self.spare.frame_from(d, chroma),
            ));
        };
        let to = (r.width, r.height);
        if !self.scaler.as_ref().is_some_and(|s| s.fits(method, d, to)) {
            let mut s = Scaler::new(method, d.format, d.bpc, (d.width, d.height), to)?;
            s.threads = self.threads;
            self.scaler = Some(s);
        }
        let scaler = self.scaler.as_mut().expect("made above");
        let distorted = scaler.scale(d, |scaled| self.spare.frame_from(scaled, chroma))?;
        Ok((self.spare.frame_from(r, chroma), distorted))
    }

    /// Queues one frame pair already copied in (the frames `submit` copies,
    /// or another backend's copies when it takes over a stream).
    pub fn submit_frames(
        &mut self,
        (index, scored): (u64, bool),
        reference: Arc<Frame>,
        distorted: Arc<Frame>,
    ) -> Result<(), VmafError> {
        while self.in_flight > self.threads {
            self.receive(true)?;
        }
        let history = self.plan.history();
        let (prev_reference, prev_prev_reference) = if history.reference > 0 {
            let prev = self.prev_ref.replace(reference.clone());
            let prev_prev = if history.reference > 1 {
                std::mem::replace(&mut self.prev_prev_ref, prev.clone())
            } else {
                None
            };
            (prev, prev_prev)
        } else {
            (None, None)
        };
        let prev_distorted = if history.distorted {
            self.prev_dis.replace(distorted.clone())
        } else {
            None
        };
        let job = FrameJob {
            index,
            reference,
            distorted,
            prev_reference,
            prev_prev_reference,
            prev_distorted,
            scored,
        };
        self.order.push_back(job.index);
        self.jobs
            .as_ref()
            .ok_or_else(|| VmafError::Backend("CPU workers are stopped".into()))?
            .send(job)
            .map_err(|_| VmafError::Backend("CPU worker threads are gone".into()))?;
        self.in_flight += 1;
        Ok(())
    }

    /// Continues a stream another backend began: the pictures of the frames
    /// before the next one (reference two and one back, distorted one back;
    /// none at a stream's start), as `submit` would have kept them.
    pub fn resume_after(
        &mut self,
        prev_prev_reference: Option<Arc<Frame>>,
        prev_reference: Option<Arc<Frame>>,
        prev_distorted: Option<Arc<Frame>>,
    ) {
        self.prev_prev_ref = prev_prev_reference;
        self.prev_ref = prev_reference;
        self.prev_dis = prev_distorted;
    }
}

impl Drop for CpuBackend {
    fn drop(&mut self) {
        self.stop();
    }
}
