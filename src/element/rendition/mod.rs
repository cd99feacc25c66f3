//! One distorted input of the element, a rendition of a ladder: `dist_sink`
//! or a requested `dist_sink_%u`, with its own engine (which scales it to
//! the reference's size), frame timings, results file, report and pooled
//! statistics. The reference's
//! side (its frames, the latency) is the element's (`imp`).

use super::align::Aligner;
use super::late::{Arrived, LateQueue, WaitingRef};
use super::live;
use super::metrics::Metrics;
use super::settings::Settings;
use super::window::{AlertChange, WindowSummary, Windows};
use super::{PoolMethod, ResultsFormat, VmafFrameMessage, VmafPooledMessage, VmafWindowMessage};
use crate::core::output::{Coverage, Format, ResultsWriter};
use crate::report;
use crate::vmaf::{self, Engine, FrameScores, PooledScores};
use std::collections::VecDeque;
use std::sync::Arc;

mod results;
use results::*;

/// Timing of a frame handed to the engine, until its scores are final.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pending {
    pub(super) index: u64,
    pub(super) pts: Option<gst::ClockTime>,
    pub(super) running_time: Option<gst::ClockTime>,
    pub(super) stream_time: Option<gst::ClockTime>,
    pub(super) duration: Option<gst::ClockTime>,
}

/// Why an offset is told: found at start, found again after a gap, or
/// moved by the tracker's drift check.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Told {
    Start,
    AfterGap,
    Shifted,
}

pub(super) struct Rendition {
    /// The pad's name (`dist_sink`, `dist_sink_1`, ...): the messages'
    /// `rendition` field, and the pad's `label`, when set.
    pub(super) name: String,
    pub(super) label: Option<String>,
    pub(super) engine: Box<dyn Engine>,
    /// The engine and device, with the frames the CPU took over (messages).
    pub(super) backend: String,
    /// The element's settings, with this rendition's results file and
    /// report names.
    pub(super) settings: Settings,
    pending: VecDeque<Pending>,
    pub(super) next_index: u64,
    /// The results file: opened at start (so an unwritable path fails
    /// then), its header written with the first final frame, each frame
    /// appended as it becomes final, closed with the pooled part.
    results: ResultsFile,
    /// The reference's and this input's video, last scored.
    pub(super) checked: Option<(gst_video::VideoInfo, gst_video::VideoInfo)>,
    pub(super) no_frame_warned: bool,
    /// Live pipelines: the reference frames waiting for their distorted
    /// frames (`late`), and whether one not scored in time was warned of.
    pub(super) late: LateQueue<WaitingRef, Arrived>,
    pub(super) late_warned: bool,
    /// The engine's moves between the GPU and the CPU already noted.
    moves_seen: usize,
    /// The engine's first backend (the GPU), which `backend` names with
    /// the moves after it.
    first_backend: String,
    /// Messages about the moves, until they are posted: warnings (a GPU
    /// error) and infos (the GPU back).
    pub(super) engine_notices: Vec<(bool, String)>,
    /// The last scored frame's timing and the frames' summed duration (None
    /// once a frame had none), for the pooled message.
    last_timing: Option<Pending>,
    total_duration: Option<gst::ClockTime>,
    /// Frames of earlier caps segments: added to the engine's indices so
    /// that they keep counting across a caps change.
    pub(super) index_offset: u64,
    /// Every final frame since the start (or the last flushing seek), pooled
    /// as libvmaf pools a whole stream: the EOS message covers all segments.
    stream_pool: StreamPool,
    /// The HTML report of the same frames (with `report-filename`), and
    /// when its first frame arrived (for the speed it states).
    report: Option<report::Report>,
    report_started: Option<std::time::Instant>,
    /// What upstream says the reference and this input are (URI query),
    /// asked once.
    pub(super) inputs: Option<[String; 2]>,
    /// How the reference frames since the start (or the last flushing
    /// seek) were paired with this input's frames.
    pub(super) pairings: live::Pairings,
    /// The application stopped the inputs before they ended (the
    /// `vmafhip-interrupted` event): the results say so.
    pub(super) interrupted: bool,
    /// The rolling scores (`window`, `alert-below`), and the windows
    /// closed but not posted yet, with the alert changes they caused.
    windows: Windows,
    pub(super) windows_ready: Vec<(VmafWindowMessage, Option<AlertChange>)>,
    /// The element's metrics endpoint, when it has one.
    pub(super) metrics: Option<Metrics>,
    /// `align`: the tracker that pairs this input's frames by content
    /// (made with the first frame), and the offset the inputs were aligned
    /// by with how clearly it was found (None: given).
    pub(super) aligner: Option<Aligner>,
    pub(super) alignment: Option<(i32, Option<f64>)>,
    /// The running time of the distorted frame the tracker took last: a
    /// frame handed over again (an earlier running time) is not taken
    /// twice.
    pub(super) last_distorted: Option<gst::ClockTime>,
    /// The tracker searches the offset again after a gap: the reference
    /// frames it then finds before the distorted input's are late.
    pub(super) realigned: bool,
    /// The offset found again after a gap, or moved by the tracker's drift
    /// check, told at the first pair after it in frames of the reference's
    /// timeline (the search counts the frames it held, which begin before
    /// the gap's end).
    pub(super) found_again: Option<(crate::core::align::Found, Told)>,
    /// How far the distorted input's frames run behind the reference
    /// frames they show (running time, nanoseconds; the transcoder's and
    /// the transports' latency), at the last pair.
    pub(super) lag: Option<i64>,
    /// After a gap of one input, the other input's frames before these
    /// running times are let go as they come (the gap passed them by).
    pub(super) passed_by: PassedBy,
}

/// See [`Rendition::passed_by`].
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PassedBy {
    pub(super) reference: Option<gst::ClockTime>,
    pub(super) distorted: Option<gst::ClockTime>,
}

/// A requested pad's own `results-filename` and `report-filename`, which
/// take the place of the names made from the element's.
#[derive(Default)]
pub(super) struct Files {
    pub(super) results: Option<String>,
    pub(super) report: Option<String>,
}

/// Where rendition `name`'s file goes when the element's is `path`: the
/// same for `dist_sink`, else [`super::rendition_file`].
pub(super) fn rendition_path(path: &str, name: &str, first: bool) -> String {
    if first {
        path.to_string()
    } else {
        super::rendition_file(path, name)
    }
}

impl Rendition {
    /// Its name, label and, when scaled, from what size and how (reports).
    fn describe(&self) -> String {
        let mut s = self.name.clone();
        if let Some(l) = &self.label {
            s.push_str(&format!(" ({l})"));
        }
        if let Some((r, d)) = &self.checked
            && (r.width(), r.height()) != (d.width(), d.height())
        {
            s.push_str(&format!(
                ", {}x{} scaled to {}x{} ({})",
                d.width(),
                d.height(),
                r.width(),
                r.height(),
                self.settings.scaler.method().name()
            ));
        }
        s
    }

    /// A rendition of pad `name` (its `label`; `first` for `dist_sink`,
    /// whose files keep the element's names, as do the pad's own `files`)
    /// scored by `engine` (described as `backend`). Opens its results file
    /// and report now, so that an unwritable path fails at once.
    pub(super) fn new(
        (name, label, first): (String, Option<String>, bool),
        files: Files,
        (engine, backend): (Box<dyn Engine>, String),
        settings: &Settings,
    ) -> Result<Rendition, gst::ErrorMessage> {
        let mut settings = settings.clone();
        let file_name = label.clone().unwrap_or_else(|| name.clone());
        settings.results_filename = files.results.or_else(|| {
            settings
                .results_filename
                .map(|p| rendition_path(&p, &file_name, first))
        });
        settings.report_filename = files.report.or_else(|| {
            settings
                .report_filename
                .map(|p| rendition_path(&p, &file_name, first))
        });
        let results = match &settings.results_filename {
            Some(path) => ResultsFile::Opened(open_results(path)?),
            None => ResultsFile::None,
        };
        if let Some(path) = &settings.report_filename {
            std::fs::File::create(path).map_err(|e| report_io_error(path, e))?;
        }
        let windows = Windows::new(settings.window, settings.alert_below);
        Ok(Rendition {
            name,
            label,
            engine,
            first_backend: backend.clone(),
            backend,
            report: settings
                .report_filename
                .as_ref()
                .map(|_| report::Report::new()),
            settings,
            pending: VecDeque::new(),
            next_index: 0,
            results,
            checked: None,
            no_frame_warned: false,
            late: LateQueue::default(),
            late_warned: false,
            moves_seen: 0,
            engine_notices: Vec::new(),
            last_timing: None,
            total_duration: None,
            index_offset: 0,
            stream_pool: StreamPool::default(),
            report_started: None,
            inputs: None,
            pairings: live::Pairings::default(),
            interrupted: false,
            windows,
            windows_ready: Vec::new(),
            metrics: None,
            aligner: None,
            alignment: None,
            last_distorted: None,
            realigned: false,
            found_again: None,
            lag: None,
            passed_by: PassedBy::default(),
        })
    }

    /// Drops a rendition that never scored a frame, with the results file
    /// and report it created at start.
    pub(super) fn discard(self) {
        if matches!(self.results, ResultsFile::Opened(_))
            && let Some(path) = &self.settings.results_filename
        {
            let _ = std::fs::remove_file(path);
        }
        if let Some(path) = &self.settings.report_filename {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Whether its report still needs the inputs' names.
    pub(super) fn wants_inputs(&self) -> bool {
        self.report.is_some() && self.inputs.is_none()
    }

    /// Keeps this output frame's timing for the frame's messages and report.
    pub(super) fn start_frame(&mut self, timing: impl Fn(u64) -> Pending) {
        let index = self.next_index;
        self.next_index += 1;
        // Timings are consumed by frame messages, the report and windows.
        if self.settings.frame_message || self.report.is_some() || self.windows.enabled() {
            self.pending.push_back(timing(index));
        }
        if self.report.is_some() && self.report_started.is_none() {
            self.report_started = Some(std::time::Instant::now());
        }
        let t = timing(index);
        self.total_duration = if index == 0 {
            t.duration
        } else {
            self.total_duration.zip(t.duration).map(|(a, b)| a + b)
        };
        self.last_timing = Some(t);
    }

    /// Ends a segment: the engine's last frames, the pooled message, and
    /// then, unless the caps changed, the results file's end, the report
    /// and a fresh start (at a caps change the indices, results file and
    /// whole-stream pool go on).
    pub(super) fn end_segment(
        &mut self,
        why: SegmentEnd,
    ) -> Result<(Vec<VmafFrameMessage>, Option<VmafPooledMessage>), gst::ErrorMessage> {
        let rest = self
            .engine
            .flush()
            .map_err(|e| gst::error_msg!(gst::StreamError::Failed, ["VMAF failed: {e}"]));
        self.note_failover();
        let msgs = self.finalize(rest?)?;
        let pooled = if why == SegmentEnd::CapsChanged {
            self.engine.pooled()
        } else {
            // The stream-wide values (APSNR) are the engine's, since its
            // last reset.
            PooledScores {
                aggregates: self.engine.pooled().aggregates,
                ..self.stream_pool.scores()
            }
        };
        let mut pooled_msg = self.pooled_message(&pooled);
        if let Some(p) = &mut pooled_msg {
            p.reason = why.name().to_string();
            p.interrupted = self.interrupted;
        }
        if why == SegmentEnd::CapsChanged {
            self.index_offset += self.next_index;
        } else {
            let last = self.windows.finish(&self.pairings.counts);
            self.note_windows(last);
            self.finish_results(&pooled)?;
            self.write_report(why)?;
            self.index_offset = 0;
            self.stream_pool = StreamPool::default();
            self.pairings = live::Pairings::default();
            self.interrupted = false;
            self.last_timing = None;
            self.total_duration = None;
        }
        self.pending.clear();
        self.next_index = 0;
        self.engine
            .reset()
            .map_err(|e| gst::error_msg!(gst::StreamError::Failed, ["VMAF reset failed: {e}"]))?;
        Ok((msgs, pooled_msg))
    }
}

/// Why a segment's pooled message is posted (its `reason` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SegmentEnd {
    Eos,
    Flush,
    CapsChanged,
    /// The rendition's pad was released.
    Released,
}

impl SegmentEnd {
    pub(super) fn name(self) -> &'static str {
        match self {
            SegmentEnd::Eos => "eos",
            SegmentEnd::Flush => "flush",
            SegmentEnd::CapsChanged => "caps-changed",
            SegmentEnd::Released => "released",
        }
    }
}

/// Running pooled statistics by metric name, fed frame by frame in order
/// (the same sums as the engine's own pooling, across engine resets).
#[derive(Default)]
struct StreamPool {
    names: Vec<String>,
    stats: Vec<crate::core::Pooled>,
    frames: u64,
}

impl StreamPool {
    fn push(&mut self, f: &FrameScores) {
        for (n, v) in f.iter() {
            let i = match self.names.iter().position(|m| m == n) {
                Some(i) => i,
                None => {
                    self.names.push(n.to_string());
                    self.stats.push(Default::default());
                    self.names.len() - 1
                }
            };
            self.stats[i].push(v);
        }
        self.frames += 1;
    }

    fn scores(&self) -> PooledScores {
        PooledScores {
            names: Arc::from(self.names.clone()),
            stats: self.stats.clone(),
            frames: self.frames,
            aggregates: Vec::new(),
        }
    }
}

impl Rendition {
    /// After each move of the engine between the GPU and the CPU: the
    /// backend that messages and the report carry says which frames ran
    /// where, and a warning (to the CPU) or an info (back on the GPU) waits
    /// to be posted.
    pub(super) fn note_failover(&mut self) {
        let moves = self.engine.failover();
        if moves.len() == self.moves_seen {
            return;
        }
        let policy = self.settings.on_gpu_error.policy();
        let retry = policy.resolve(self.settings.backend.choice()) == vmaf::OnGpuError::Retry;
        for m in &moves[self.moves_seen..] {
            let f = m.frame + self.index_offset;
            self.engine_notices.push(match &m.error {
                Some(e) => (
                    true,
                    format!(
                        "GPU error at frame {f} ({e}): the CPU engine computes frame {f} and every later frame{}, with the same numbers",
                        if retry { " until the GPU is back" } else { "" }
                    ),
                ),
                None => (
                    false,
                    format!("the GPU is back: it computes frame {f} and every later frame"),
                ),
            });
        }
        self.moves_seen = moves.len();
        self.backend =
            crate::core::scores::engines_line(&self.first_backend, moves, self.index_offset);
    }

    /// The timing of a frame whose scores became final (frames finalise in
    /// index order; a frame without a pending entry has none).
    fn take_timing(&mut self, index: u64) -> Option<Pending> {
        while self.pending.front().is_some_and(|p| p.index < index) {
            self.pending.pop_front();
        }
        match self.pending.front() {
            Some(p) if p.index == index => self.pending.pop_front(),
            _ => None,
        }
    }

    fn frame_message(&self, scores: &FrameScores, timing: Option<Pending>) -> VmafFrameMessage {
        let mut features = Vec::new();
        let (mut psnr_y, mut ssim, mut ms_ssim, mut score) = (None, None, None, f64::NAN);
        for (n, v) in scores.iter() {
            match (n, switch_field(n)) {
                ("vmaf", _) => score = v,
                (_, Some("psnr-y")) => psnr_y = Some(v),
                (_, Some("ssim")) => ssim = Some(v),
                (_, Some("ms-ssim")) => ms_ssim = Some(v),
                _ => features.push((n.to_string(), v)),
            }
        }
        VmafFrameMessage {
            index: scores.index + self.index_offset,
            timestamp: timing.and_then(|t| t.pts),
            stream_time: timing.and_then(|t| t.stream_time),
            running_time: timing.and_then(|t| t.running_time),
            duration: timing.and_then(|t| t.duration),
            score,
            psnr_y,
            ssim,
            ms_ssim,
            features,
            backend: self.backend.clone(),
            rendition: self.name.clone(),
            label: self.label.clone(),
            alignment: self
                .alignment
                .filter(|_| scores.index + self.index_offset == 0),
        }
    }

    /// Frames whose scores became final: their messages (when asked), the
    /// whole-stream pool, and the results file, all with stream-wide indices.
    pub(super) fn finalize(
        &mut self,
        frames: Vec<FrameScores>,
    ) -> Result<Vec<VmafFrameMessage>, gst::ErrorMessage> {
        let mut msgs = Vec::new();
        let mut frames = frames;
        for f in &mut frames {
            let timing = self.take_timing(f.index);
            if self.settings.frame_message {
                msgs.push(self.frame_message(f, timing));
            }
            f.index += self.index_offset;
            self.stream_pool.push(f);
            if let Some(m) = &self.metrics {
                let who = self.label.as_deref().unwrap_or(&self.name);
                m.frame(
                    who,
                    &self.backend,
                    f.vmaf(),
                    &self.pairings.counts,
                    self.alignment.map(|a| a.0),
                );
            }
            let time = timing.and_then(|t| t.pts).map(|t| t.nseconds());
            let closed = self
                .windows
                .push(f.index, time, f.vmaf(), &self.pairings.counts);
            self.note_windows(closed);
            if let Some(r) = &mut self.report {
                let time = timing
                    .and_then(|t| t.pts)
                    .map(|t| t.nseconds() as f64 * 1e-9);
                r.push(f.index, time, f.iter());
            }
        }
        self.write_frames(&frames)?;
        Ok(msgs)
    }

    /// Windows closed: their messages wait to be posted after the frames'.
    fn note_windows(
        &mut self,
        closed: impl IntoIterator<Item = (WindowSummary, Option<AlertChange>)>,
    ) {
        for (summary, change) in closed {
            let m = VmafWindowMessage {
                summary,
                backend: self.backend.clone(),
                rendition: self.name.clone(),
                label: self.label.clone(),
            };
            if let Some(metrics) = &self.metrics {
                metrics.window(m.label.as_deref().unwrap_or(&m.rendition), &m.summary);
            }
            self.windows_ready.push((m, change));
        }
    }

    pub(super) fn pooled_message(&self, pooled: &PooledScores) -> Option<VmafPooledMessage> {
        let v = pooled.get("vmaf")?;
        let method = self.settings.pool_method;
        let pm = match method {
            PoolMethod::Min => vmaf::PoolMethod::Min,
            PoolMethod::Max => vmaf::PoolMethod::Max,
            PoolMethod::Mean => vmaf::PoolMethod::Mean,
            PoolMethod::HarmonicMean => vmaf::PoolMethod::HarmonicMean,
        };
        let mean = |n: &str| pooled.get(n).map(|p| p.mean());
        let last = self.last_timing;
        Some(VmafPooledMessage {
            reason: String::new(),
            timestamp: last.and_then(|t| t.pts),
            stream_time: last.and_then(|t| t.stream_time),
            running_time: last.and_then(|t| t.running_time),
            duration: self.total_duration,
            score: v.get(pm),
            pool_method: match method {
                PoolMethod::Min => "min",
                PoolMethod::Max => "max",
                PoolMethod::Mean => "mean",
                PoolMethod::HarmonicMean => "harmonic_mean",
            }
            .to_string(),
            min: v.min,
            max: v.max,
            mean: v.mean(),
            harmonic_mean: v.harmonic_mean(),
            frames: pooled.frames,
            psnr_y: mean(switch_value("psnr-y")),
            ssim: mean(switch_value("ssim")),
            ms_ssim: mean(switch_value("ms-ssim")),
            features: pooled
                .iter()
                .filter(|(n, _)| *n != "vmaf" && switch_field(n).is_none())
                .map(|(n, p)| (n.to_string(), p.mean()))
                .collect(),
            backend: self.backend.clone(),
            rendition: self.name.clone(),
            label: self.label.clone(),
            pairing: self.pairings.counts,
            interrupted: false,
            offset: self.alignment.map_or(0, |a| a.0),
            offset_confidence: self.alignment.and_then(|a| a.1),
        })
    }
}

/// The switches' values and the message fields (GStreamer 1.28's `vmaf`
/// names: `psnr-y`, `ssim`, `ms-ssim`) that carry them, read from the
/// registry once: every frame's message looks its values up here.
fn switch_fields() -> &'static [(&'static str, &'static str)] {
    static FIELDS: std::sync::OnceLock<Vec<(&'static str, &'static str)>> =
        std::sync::OnceLock::new();
    FIELDS.get_or_init(|| {
        crate::extractors::switched()
            .map(|(_, s)| (s.value, s.field))
            .collect()
    })
}

/// The message field that carries the value `name` of an extractor with a
/// switch.
fn switch_field(name: &str) -> Option<&'static str> {
    switch_fields()
        .iter()
        .find(|(value, _)| *value == name)
        .map(|&(_, field)| field)
}

/// The value that message field `field` carries.
fn switch_value(field: &str) -> &'static str {
    switch_fields()
        .iter()
        .find(|(_, f)| *f == field)
        .map_or("", |&(value, _)| value)
}
