//! Live sources: each input's `uridecodebin`, made at start and made
//! again when it fails.
//!
//! `--reconnect S`: a live source that fails (a server gone, a connection
//! refused or timed out, a playlist no longer served) is started again,
//! after 1 s, then 2, 4 and every 8 s, until it delivers frames again or
//! has failed for S seconds (then the command stops with its error). The
//! element reports the gap when the source is back, and realigns.
//!
//! Sources that reconnect by themselves (SRT's `auto-reconnect`, UDP and
//! RTP sockets that wait for a new sender) never fail, and need none of it.

use crate::media::video::Role;
use gst::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The waits between tries: 1 s, doubled up to this.
const FIRST_RETRY: Duration = Duration::from_secs(1);
const LONGEST_RETRY: Duration = Duration::from_secs(8);

/// One input's failure, while it lasts.
#[derive(Clone, Copy, Debug)]
struct Failing {
    since: Instant,
    /// The next try, and the wait before it.
    retry_at: Option<Instant>,
    wait: Duration,
    /// The pipeline's running time at the last try: a frame scored past
    /// it came through the new source.
    tried_at: Option<gst::ClockTime>,
}

/// The live inputs' failures and their tries.
#[derive(Debug)]
pub struct Reconnects {
    give_up: Duration,
    failing: [Option<Failing>; 2],
}

fn slot(role: Role) -> usize {
    usize::from(role != Role::Reference)
}

fn role_of(slot: usize) -> Role {
    if slot == 0 {
        Role::Reference
    } else {
        Role::Distorted
    }
}

impl Reconnects {
    /// Tries for `give_up_s` seconds (0: no reconnects).
    pub fn new(give_up_s: f64) -> Self {
        Reconnects {
            give_up: Duration::from_secs_f64(give_up_s.max(0.0)),
            failing: [None, None],
        }
    }

    /// Input `role` failed: the wait before its next try, or None once it
    /// has failed for longer than `--reconnect` (or reconnects are off).
    pub fn failed(&mut self, role: Role) -> Option<Duration> {
        if self.give_up.is_zero() {
            return None;
        }
        let now = Instant::now();
        let f = self.failing[slot(role)].get_or_insert(Failing {
            since: now,
            retry_at: None,
            wait: FIRST_RETRY / 2,
            tried_at: None,
        });
        if f.retry_at.is_some() {
            // Its elements' later errors of the same failure.
            return Some(f.wait);
        }
        if now.duration_since(f.since) >= self.give_up {
            return None;
        }
        f.wait = (f.wait * 2).min(LONGEST_RETRY);
        f.retry_at = Some(now + f.wait);
        Some(f.wait)
    }

    /// The inputs whose next try is due, marked tried at the pipeline's
    /// running time `now`.
    pub fn due(&mut self, now: Option<gst::ClockTime>) -> Vec<Role> {
        let mut roles = Vec::new();
        for (k, f) in self.failing.iter_mut().enumerate() {
            if let Some(f) = f
                && f.retry_at.is_some_and(|t| Instant::now() >= t)
            {
                f.retry_at = None;
                f.tried_at = now;
                roles.push(role_of(k));
            }
        }
        roles
    }

    /// A frame at running time `at` was scored: the inputs tried before it
    /// are back, their failures over. Returns them.
    pub fn scored(&mut self, at: Option<gst::ClockTime>) -> Vec<Role> {
        let mut back = Vec::new();
        for (k, f) in self.failing.iter_mut().enumerate() {
            let came = f.is_some_and(|f| {
                f.retry_at.is_none() && f.tried_at.zip(at).is_some_and(|(t, a)| a > t)
            });
            if came {
                *f = None;
                back.push(role_of(k));
            }
        }
        back
    }
}

/// The application message a branch posts when its source ended while
/// reconnects are on (its EOS held back from the element).
const SOURCE_ENDED: &str = "vmafhip-source-ended";

/// With reconnects on, an input's end (a server that closed the stream, a
/// playlist that ended) is a failure like another: its EOS is held back
/// from the element, and a `vmafhip-source-ended` message posted, unless
/// `stopping` (the command's own EOS at `--duration`).
pub fn hold_source_ends(pipeline: &gst::Pipeline, stopping: Arc<AtomicBool>) {
    for role in [Role::Reference, Role::Distorted] {
        let Some(pad) = branch_sink(pipeline, role) else {
            continue;
        };
        let stopping = stopping.clone();
        let bus = pipeline.bus();
        pad.add_probe(gst::PadProbeType::EVENT_DOWNSTREAM, move |_, info| {
            let is_eos = matches!(&info.data, Some(gst::PadProbeData::Event(e)) if e.type_() == gst::EventType::Eos);
            if !is_eos || stopping.load(Ordering::Relaxed) {
                return gst::PadProbeReturn::Ok;
            }
            if let Some(bus) = &bus {
                let s = gst::Structure::builder(SOURCE_ENDED)
                    .field("input", role.prefix())
                    .build();
                let _ = bus.post(gst::message::Application::new(s));
            }
            // Taken here (dropping it as `Drop` would unref it twice).
            info.data = None;
            gst::PadProbeReturn::Handled
        });
    }
}

/// The input whose source ended, from a `vmafhip-source-ended` message.
pub fn ended_source(msg: &gst::Message) -> Option<Role> {
    let gst::MessageView::Application(a) = msg.view() else {
        return None;
    };
    let s = a.structure().filter(|s| s.name() == SOURCE_ENDED)?;
    match s.get::<String>("input").ok()?.as_str() {
        "ref" => Some(Role::Reference),
        _ => Some(Role::Distorted),
    }
}

/// Ends input `role` for the element (its source ended, its EOS held
/// back): an EOS sent into its branch.
pub fn end_input(pipeline: &gst::Pipeline, role: Role) {
    if let Some(pad) = branch_sink(pipeline, role) {
        let _ = pad.send_event(gst::event::Eos::new());
    }
}

/// The pad input `role`'s branch starts at: its converter's sink pad,
/// where the source's decoded pad links.
fn branch_sink(pipeline: &gst::Pipeline, role: Role) -> Option<gst::Pad> {
    pipeline
        .by_name(&format!("{}-convert", role.prefix()))
        .and_then(|c| c.static_pad("sink"))
}

/// Ends input `role` at the command's own stop: an EOS into its source
/// first, so that what its demuxer holds comes out (an MPEG-TS demuxer
/// keeps a stream's last frame until the next one begins), then, where
/// that EOS has not reached the branch within `wait` (a source being
/// started again may not pass it on), one into the branch.
pub fn end_input_flushed(pipeline: &gst::Pipeline, role: Role, wait: std::time::Duration) {
    let source = pipeline
        .by_name(&format!("{}-decode", role.prefix()))
        .and_then(|d| d.property::<Option<gst::Element>>("source"));
    if let Some(source) = source {
        let _ = source.send_event(gst::event::Eos::new());
    }
    let Some(pad) = branch_sink(pipeline, role) else {
        return;
    };
    let until = std::time::Instant::now() + wait;
    while !pad.pad_flags().contains(gst::PadFlags::EOS) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    if !pad.pad_flags().contains(gst::PadFlags::EOS) {
        end_input(pipeline, role);
    }
}

/// Input `role`'s source: `uri` through a `uridecodebin` (`ROLE-decode`,
/// video only), its pad linked to the branch's converter as it comes.
pub fn add_source(pipeline: &gst::Pipeline, role: Role, uri: &str) -> Result<(), crate::cli::Fail> {
    let prefix = role.prefix();
    let decode = gst::ElementFactory::make("uridecodebin")
        .name(format!("{prefix}-decode"))
        .property("uri", uri)
        // Decoded video, in any memory.
        .property(
            "caps",
            gst::Caps::builder_full()
                .structure_with_any_features(gst::Structure::new_empty("video/x-raw"))
                .build(),
        )
        .property("expose-all-streams", false)
        .build()
        .map_err(|e| crate::cli::Fail(crate::cli::Exit::Failed, format!("uridecodebin: {e}")))?;
    decode.connect("source-setup", false, |args| {
        if let Some(src) = args.get(1).and_then(|a| a.get::<gst::Element>().ok()) {
            roomy_socket(&src);
        }
        None
    });
    let convert = pipeline
        .by_name(&format!("{prefix}-convert"))
        .expect("named in the description");
    let sink = convert.static_pad("sink").expect("a converter's sink pad");
    let first = sink.clone();
    decode.connect_pad_added(move |_, pad| {
        // Another stream's pad (audio) does not link to the converter.
        if !first.is_linked() && pad.link(&first).is_err() {
            gst::debug!(crate::cli::CAT, "{}: not the video", pad.name());
        }
    });
    decode.connect_pad_removed(move |decode, gone| link_next_stream(decode, gone, &sink));
    pipeline.add(&decode).map_err(|e| {
        crate::cli::Fail(crate::cli::Exit::Failed, format!("the live pipeline: {e}"))
    })?;
    Ok(())
}

/// The stream linked to the branch went (`gone`, unlinked already): the
/// source's next stream takes its place. An RTP sender started again with
/// a new SSRC is a new stream, whose pad may come before the old one goes.
fn link_next_stream(decode: &gst::Element, gone: &gst::Pad, sink: &gst::Pad) {
    // A source being started again (`restart`) was taken out of the
    // pipeline first: its streams going are not for the branch.
    if sink.is_linked() || decode.parent().is_none() {
        return;
    }
    let next = decode
        .src_pads()
        .into_iter()
        .find(|p| p != gone && !p.is_linked());
    if let Some(next) = next {
        match next.link(sink) {
            Ok(_) => gst::info!(crate::cli::CAT, "{}: the source's next stream", next.name()),
            Err(e) => gst::debug!(crate::cli::CAT, "{}: not linked: {e:?}", next.name()),
        }
    }
}

/// A UDP source's socket buffer, raised from the system's default (a
/// fraction of a second of a 1080p stream) to [`UDP_BUFFER`], so that a
/// busy moment loses no packets.
fn roomy_socket(src: &gst::Element) {
    if src.find_property("buffer-size").is_some() && src.type_().name() == "GstUDPSrc" {
        src.set_property("buffer-size", UDP_BUFFER);
    }
}

/// Bytes of a UDP source's socket buffer: a few seconds of a 1080p stream.
const UDP_BUFFER: i32 = 8 << 20;

/// Starts input `role`'s source again: a new `uridecodebin` of the same
/// URI in the old one's place. The old one is stopped on a thread of its
/// own: a source that failed may take its time, or never, to stop, and the
/// station goes on meanwhile.
///
/// The new one settles its state changes itself (`async-handling`): one
/// that went asynchronous in the playing pipeline and then failed (a
/// server not back yet) would leave the pipeline paused, waiting for it,
/// and every later try stuck in PAUSED, never asking the server to play.
pub fn restart(pipeline: &gst::Pipeline, role: Role) {
    let Some(old) = pipeline.by_name(&format!("{}-decode", role.prefix())) else {
        return;
    };
    let uri: String = old.property("uri");
    if pipeline.remove(&old).is_err() {
        return;
    }
    std::thread::spawn(move || {
        let _ = old.set_state(gst::State::Null);
    });
    match add_source(pipeline, role, &uri) {
        Ok(()) => {
            if let Some(new) = pipeline.by_name(&format!("{}-decode", role.prefix())) {
                new.set_property("async-handling", true);
                let _ = new.sync_state_with_parent();
            }
        }
        Err(e) => gst::warning!(
            crate::cli::CAT,
            "{}: not started again: {}",
            role.prefix(),
            e.1
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tries_wait_longer_each_time_and_stop_when_the_source_is_back() {
        let mut r = Reconnects::new(60.0);
        assert_eq!(r.failed(Role::Distorted), Some(Duration::from_secs(1)));
        // The same failure's other errors change nothing.
        assert_eq!(r.failed(Role::Distorted), Some(Duration::from_secs(1)));
        assert!(r.due(None).is_empty(), "not before its time");
        r.failing[1].as_mut().unwrap().retry_at = Some(Instant::now());
        let t = gst::ClockTime::from_seconds(5);
        assert_eq!(r.due(Some(t)), [Role::Distorted]);
        assert_eq!(r.failed(Role::Distorted), Some(Duration::from_secs(2)));
        r.failing[1].as_mut().unwrap().retry_at = Some(Instant::now());
        assert_eq!(r.due(Some(t)), [Role::Distorted]);
        // A frame from before the try is not the source back.
        assert!(r.scored(Some(gst::ClockTime::from_seconds(4))).is_empty());
        assert_eq!(
            r.scored(Some(gst::ClockTime::from_seconds(6))),
            [Role::Distorted]
        );
        assert_eq!(r.failed(Role::Distorted), Some(Duration::from_secs(1)));
    }

    #[test]
    fn no_reconnect_or_too_long_gives_up() {
        assert_eq!(Reconnects::new(0.0).failed(Role::Reference), None);
        let mut r = Reconnects::new(60.0);
        assert!(r.failed(Role::Reference).is_some());
        let f = r.failing[0].as_mut().unwrap();
        f.since -= Duration::from_secs(61);
        f.retry_at = None;
        assert_eq!(r.failed(Role::Reference), None);
    }
}
