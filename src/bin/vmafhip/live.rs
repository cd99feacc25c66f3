//! Live sources: `vmafhip REF_URI DIST_URI` where either is an `srt://`,
//! `udp://`, `rtsp://`, `rtp://` or `http(s)://` (HLS) URI. GStreamer's
//! own source elements receive them (`uridecodebin`), the element scores
//! as the frames come, until an interrupt or `--duration`. The results go
//! out as JSON Lines as they are scored (to `-o FILE`, else stdout), and
//! one status line on stderr says the rolling VMAF, the offset, the drops
//! and duplicates, and the rate. A source that stalls is reported (the
//! gap) and waited for.

use crate::cli::{Args, Exit, Fail};
use crate::media::video::Role;
use crate::pair::{Voice, error_named, role_of, scoring_properties, stop_inputs};
use crate::reconnect::{self, Reconnects};
use gst::prelude::*;
use gstvmafhip::{Gap, VmafFrameMessage, VmafPooledMessage, VmafWindowMessage};
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long the element waits for a late input frame past the sources'
/// latency (GstAggregator's `latency`), in live pipelines: a machine busy
/// with other work delays decoding by this much without losing frames.
const AGGREGATOR_SLACK: gst::ClockTime = gst::ClockTime::from_seconds(1);

/// How long an EOS sent into a source at `--duration` may take to come
/// through its demuxer and decoder before one goes into the branch.
const SOURCE_EOS_WAIT: Duration = Duration::from_secs(1);

/// No frame scored for this long: a gap, reported.
const GAP: Duration = Duration::from_secs(2);

/// The URI of an input: itself, or a file's `file://` URI.
fn uri_of(input: &str) -> Result<String, Fail> {
    if input.contains("://") {
        return Ok(input.to_string());
    }
    glib::filename_to_uri(
        std::path::absolute(input).map_err(|e| Fail::input(format!("{input}: {e}")))?,
        None,
    )
    .map(|u| u.to_string())
    .map_err(|e| Fail::input(format!("{input}: {e}")))
}

/// The pad the distorted stream goes to: `dist_sink_0` where the engine
/// scales a distorted stream of another size (`--scale`, the default: a
/// live rendition may change its size mid-stream, as an adaptive stream
/// does), else `dist_sink` (the same size only).
fn distorted_pad(a: &Args) -> &'static str {
    if a.scale { "dist_sink_0" } else { "dist_sink" }
}

/// The pipeline: each URI through `uridecodebin` (video only) to the
/// element, whose output is discarded.
fn build(
    reference: &str,
    distorted: &str,
    dist_pad: &str,
    host_memory: bool,
) -> Result<gst::Pipeline, Fail> {
    // Frames aligned in a live pipeline are held as copies: a GPU
    // decoder gives system memory then, where copies are cheap.
    let memory = if host_memory { " ! video/x-raw" } else { "" };
    let branch = |role: &str, pad: &str| {
        format!(
            "videoconvert name={role}-convert{memory} ! queue name={role}-queue max-size-buffers=0 max-size-bytes=0 max-size-time=2000000000 ! v.{pad}"
        )
    };
    let desc = format!(
        "{} {} vmafhip name=v ! fakesink name=sink sync=false async=false",
        branch("ref", "ref_sink"),
        branch("dist", dist_pad)
    );
    let pipeline = gst::parse::launch(&desc)
        .map_err(|e| Fail(Exit::Failed, format!("the live pipeline: {e}")))?
        .downcast::<gst::Pipeline>()
        .map_err(|_| Fail(Exit::Failed, "the live pipeline is not a pipeline".into()))?;
    for queue in ["ref-queue", "dist-queue"] {
        crate::heap::frames_in_own_memory(&pipeline.by_name(queue).expect("named above"));
    }
    reconnect::add_source(&pipeline, Role::Reference, reference)?;
    reconnect::add_source(&pipeline, Role::Distorted, distorted)?;
    Ok(pipeline)
}

/// What the status line says, from the element's messages.
#[derive(Default)]
struct Status {
    frames: u64,
    last: f64,
    window: Option<f64>,
    offset: Option<(i32, Option<f64>)>,
    dropped: u64,
    duplicated: u64,
    /// Reference frames not scored for coming too late (or not at all),
    /// and the inputs' gaps.
    late: u64,
    gaps: u64,
    first: Option<Instant>,
    last_frame: Option<Instant>,
    gap_said: bool,
}

impl Status {
    /// Says once that no frame was scored for [`GAP`].
    fn note_stall(&mut self, status_line: bool) {
        if !self.gap_said && self.last_frame.is_some_and(|t| t.elapsed() >= GAP) {
            self.gap_said = true;
            say(
                format!(
                    "warning: no frame scored for {:.0} s: a source stalled; waiting for it",
                    GAP.as_secs_f64()
                ),
                status_line,
            );
        }
    }

    fn line(&self, since: Instant) -> String {
        let fps = match self.first {
            Some(f) if self.frames > 1 => {
                (self.frames - 1) as f64 / f.elapsed().as_secs_f64().max(1e-9)
            }
            _ => 0.0,
        };
        let window = self
            .window
            .map_or(String::new(), |w| format!(" (window {w:.2})"));
        let offset = match self.offset {
            Some((o, Some(c))) => format!("offset {o} ({c:.2})"),
            Some((o, None)) => format!("offset {o}"),
            None => "offset -".to_string(),
        };
        format!(
            "live {:.0} s: VMAF {:.2}{window} | {offset} | {} dropped, {} duplicated, {} late, {} gaps | {} frames, {fps:.1} fps",
            since.elapsed().as_secs_f64(),
            self.last,
            self.dropped,
            self.duplicated,
            self.late,
            self.gaps,
            self.frames
        )
    }
}

/// Scores two live sources until interrupted or for `--duration`.
pub fn run(a: &Args, voice: Voice) -> Result<(), Fail> {
    let reference = uri_of(a.reference.as_deref().expect("checked"))?;
    let distorted = uri_of(a.distorted.as_deref().expect("checked"))?;
    let dist_pad = distorted_pad(a);
    let pipeline = build(
        &reference,
        &distorted,
        dist_pad,
        a.align != crate::cli::Align::Off,
    )?;
    let v = pipeline.by_name("v").expect("named in the description");
    scoring_properties(&v, a, a.device_ids[0], true)?;
    v.set_property("align", a.align.to_string());
    // The aggregator's slack past the inputs' own latency before it goes on
    // without a frame: a reference frame decoded later than that on a busy
    // machine would be left out, and every later one numbered one short.
    v.set_property("latency", AGGREGATOR_SLACK.nseconds());
    let results = a.output.clone().unwrap_or_else(|| "/dev/stdout".into());
    v.set_property("results-filename", &results);
    v.set_property_from_str("results-format", "jsonl");
    if let Some(r) = &a.report {
        v.set_property("report-filename", r);
        v.set_property("report-title", format!("{reference} vs {distorted} (live)"));
    }
    if dist_pad != "dist_sink" {
        crate::pair::hand_files_to(&v, dist_pad);
    }
    let status_line = voice.progress || (voice.notes && std::io::stderr().is_terminal());
    pipeline
        .set_state(gst::State::Playing)
        .map_err(|_| Fail(Exit::Failed, "the live pipeline failed to start".into()))?;
    if voice.notes {
        if let Some(url) = v.property::<Option<String>>("metrics-url") {
            eprintln!("note: metrics at {url}");
        }
        eprintln!("note: scoring {distorted} against {reference} live; interrupt (Ctrl-C) to stop");
    }
    let outcome = follow(&pipeline, a, voice, status_line);
    let _ = pipeline.set_state(gst::State::Null);
    crate::alert::wait_for_hooks();
    let pooled = outcome?;
    if voice.notes {
        if status_line {
            eprintln!();
        }
        match &pooled {
            Some(p) => {
                eprintln!(
                    "VMAF {:.6} (mean of {} frames; harmonic mean {:.6}, min {:.6}), {}",
                    p.mean, p.frames, p.harmonic_mean, p.min, p.backend
                );
                if let Some(line) = crate::align::summary(p) {
                    eprintln!("{line}");
                }
            }
            None => eprintln!("no frame was scored"),
        }
    }
    if crate::interrupt::requested() {
        return Err(Fail(Exit::Interrupted, "interrupted".into()));
    }
    Ok(())
}

/// A gap as a line: which input, where in its timeline, how long.
fn gap_line(g: &Gap) -> String {
    let secs = |t: gst::ClockTime| t.nseconds() as f64 / 1e9;
    let who = if g.input == "reference" {
        "REF"
    } else {
        "DIST"
    };
    format!(
        "warning: {who} had a gap of {:.1} s at {:.1} s ({} frames): scoring again, realigned where aligning",
        secs(g.missed.length),
        secs(g.missed.start),
        g.missed.frames
    )
}

/// A line for the user, under the status line where one is drawn.
fn say(line: String, status_line: bool) {
    if status_line {
        eprint!("\r\x1b[K");
    }
    eprintln!("{line}");
}

impl Status {
    /// What an element message tells: a frame, a window, an alignment
    /// event counted and said; the pooled message returned.
    fn hear(
        &mut self,
        s: &gst::StructureRef,
        voice: Voice,
        status_line: bool,
    ) -> Option<VmafPooledMessage> {
        if let Ok(f) = VmafFrameMessage::try_from(s) {
            if let Some(t) = self.last_frame
                && self.gap_said
                && voice.notes
            {
                say(
                    format!(
                        "note: scoring again after a gap of {:.1} s",
                        t.elapsed().as_secs_f64()
                    ),
                    status_line,
                );
            }
            self.gap_said = false;
            self.frames += 1;
            self.last = f.score;
            self.first.get_or_insert_with(Instant::now);
            self.last_frame = Some(Instant::now());
            if f.alignment.is_some() {
                self.offset = f.alignment;
            }
        } else if let Ok(p) = VmafPooledMessage::try_from(s) {
            return Some(p);
        } else if let Ok(w) = VmafWindowMessage::try_from(s) {
            self.window = Some(w.summary.mean);
            if voice.notes {
                say(crate::alert::window_line(&w), status_line);
            }
        } else if s.name() == gstvmafhip::LATE_EVENT {
            self.late += s.get::<u64>("frames").unwrap_or(0);
        } else if let Ok(g) = Gap::try_from(s) {
            self.gaps += 1;
            if g.input == "reference" {
                self.late += g.missed.frames;
            }
            if voice.notes {
                say(gap_line(&g), status_line);
            }
        } else if s.name() == gstvmafhip::ALIGN_EVENT {
            match s.get::<String>("event").as_deref() {
                Ok("dropped") => self.dropped += 1,
                Ok("duplicated") => self.duplicated += 1,
                _ => {}
            }
            if voice.notes
                && let Some(line) = crate::align::event_line(s)
            {
                say(format!("note: {line}"), status_line);
            }
        }
        None
    }
}

/// Follows the bus: the status line, the windows, alignment events,
/// gaps and failed sources (started again, `--reconnect`); stops the
/// inputs at an interrupt or once `--duration` has passed. Returns the
/// pooled message at the end.
fn follow(
    pipeline: &gst::Pipeline,
    a: &Args,
    voice: Voice,
    status_line: bool,
) -> Result<Option<VmafPooledMessage>, Fail> {
    let bus = pipeline.bus().expect("a pipeline has a bus");
    let start = Instant::now();
    let mut status = Status::default();
    let mut reconnects = Reconnects::new(a.reconnect);
    let ending = Arc::new(AtomicBool::new(false));
    if a.reconnect > 0.0 {
        reconnect::hold_source_ends(pipeline, ending.clone());
    }
    let mut pooled = None;
    let mut stopping = false;
    let mut drawn = Instant::now();
    let mut trimmed = Instant::now();
    loop {
        if trimmed.elapsed() >= crate::heap::TRIM_EVERY {
            trimmed = Instant::now();
            crate::heap::give_back_free_pages();
        }
        let over = a
            .duration
            .is_some_and(|d| start.elapsed() >= Duration::from_secs_f64(d));
        if !stopping && (crate::interrupt::requested() || over) {
            stopping = true;
            ending.store(true, Ordering::Relaxed);
            stop(pipeline);
        }
        if voice.notes && !stopping {
            status.note_stall(status_line);
        }
        for role in reconnects.due(pipeline.current_running_time()) {
            say_if(
                voice,
                format!("note: starting {} again", who(role)),
                status_line,
            );
            reconnect::restart(pipeline, role);
        }
        if status_line && drawn.elapsed() >= Duration::from_millis(250) && status.frames > 0 {
            drawn = Instant::now();
            eprint!("\r\x1b[K{}", status.line(start));
        }
        let Some(msg) = bus.timed_pop(gst::ClockTime::from_mseconds(100)) else {
            continue;
        };
        match msg.view() {
            gst::MessageView::Element(e) => {
                let Some(s) = e.structure() else { continue };
                if let Ok(f) = VmafFrameMessage::try_from(s) {
                    for role in reconnects.scored(f.running_time) {
                        say_if(voice, format!("note: {} is back", who(role)), status_line);
                    }
                }
                if let Some(p) = status.hear(s, voice, status_line) {
                    pooled = Some(p);
                }
            }
            gst::MessageView::Warning(_) | gst::MessageView::Info(_) => {
                hear_notice(&msg, voice, status_line)
            }
            gst::MessageView::Error(e) => {
                let fail = error_named(&msg, e, |role| Some(who(role).into()));
                let role = role_of(msg.src());
                let retry = role
                    .and_then(|r| reconnects.failed(r))
                    .filter(|_| !stopping);
                match retry {
                    Some(wait) => say_retry(&fail.1, wait, voice, status_line),
                    None => return Err(fail),
                }
            }
            // A source started again brings its own latency.
            gst::MessageView::Latency(_) => {
                let _ = pipeline.recalculate_latency();
            }
            gst::MessageView::Application(_) => {
                let Some(role) = reconnect::ended_source(&msg) else {
                    continue;
                };
                if let Some(wait) = reconnects.failed(role) {
                    say_retry(&format!("{} ended", who(role)), wait, voice, status_line);
                    continue;
                }
                let line = format!("note: {} ended and did not come back: stopping", who(role));
                say_if(voice, line, status_line);
                stopping = true;
                ending.store(true, Ordering::Relaxed);
                reconnect::end_input(pipeline, role);
                pipeline.send_event(gst::event::Eos::new());
            }
            gst::MessageView::Eos(_) => return Ok(pooled),
            _ => {}
        }
    }
}

/// A warning or info on the bus: an alert crossed is acted on, and the
/// line said.
fn hear_notice(msg: &gst::Message, voice: Voice, status_line: bool) {
    match msg.view() {
        gst::MessageView::Warning(w) => {
            crate::alert::crossed(w.details(), &w.error().to_string());
            if voice.notes {
                say(format!("warning: {}", w.error()), status_line);
            }
        }
        gst::MessageView::Info(i) => {
            crate::alert::crossed(i.details(), &i.error().to_string());
            if voice.notes && msg.src().is_some_and(|s| s.name() == "v") {
                say(format!("note: {}", i.error()), status_line);
            }
        }
        _ => {}
    }
}

/// Ends the run at `--duration`: an EOS into each input's source, so that
/// every frame received is scored, and into its branch where that one does
/// not come through in time (a source being started again may not pass it
/// on).
fn stop(pipeline: &gst::Pipeline) {
    if crate::interrupt::requested() {
        stop_inputs(pipeline);
        return;
    }
    for role in [Role::Reference, Role::Distorted] {
        reconnect::end_input_flushed(pipeline, role, SOURCE_EOS_WAIT);
    }
}

/// Says `line` unless quiet.
fn say_if(voice: Voice, line: String, status_line: bool) {
    if voice.notes {
        say(line, status_line);
    }
}

/// Says that a source failed (`what`) and is tried again after `wait`.
fn say_retry(what: &str, wait: Duration, voice: Voice, status_line: bool) {
    if voice.notes {
        say(
            format!(
                "warning: {what}; starting it again in {:.0} s (--reconnect)",
                wait.as_secs_f64()
            ),
            status_line,
        );
    }
}

/// How the lines name an input.
fn who(role: Role) -> &'static str {
    match role {
        Role::Reference => "REF",
        _ => "DIST",
    }
}
