//! Scoring a pair and what follows: the engines' results as messages,
//! notices and windows, and the drain at the end of a segment.

use super::{CAT, FrameTiming, ReferenceFrame, VmafHip, running_time};
use crate::element::VmafFrameMessage;
use crate::element::picture::*;
use crate::element::rendition::{Pending, SegmentEnd};
use crate::element::window::AlertChange;
use crate::vmaf::{self, FramePair, KeepAlive};
use gst::prelude::*;
use gst::subclass::prelude::*;
use gst_base::prelude::*;
use gst_video::prelude::*;
use std::sync::Arc;

impl VmafHip {
    /// Scores this output frame's reference against one distorted input's
    /// frame; returns the messages of the frames that became final.
    pub(super) fn score_input(
        &self,
        token: &gst_video::subclass::AggregateFramesToken,
        (ref_frame, reference): ReferenceFrame<'_>,
        pad: &gst_video::VideoAggregatorPad,
        outbuf: &gst::BufferRef,
    ) -> Result<Vec<VmafFrameMessage>, gst::FlowError> {
        let name = pad.name();
        let Some(dist_frame) = pad.prepared_frame(token) else {
            self.warn_once_no_distorted(&name, outbuf.pts())?;
            return Ok(Vec::new());
        };
        self.check_frames(ref_frame.info(), dist_frame.info(), &name)?;
        // The input buffers stay referenced until a GPU backend has
        // uploaded from them (in place, when they are pinned memory).
        // They also let a failover to the CPU remake the pictures (no copy).
        let distorted = pad.current_buffer(token);
        self.note_pairing(&name, running_time(pad, distorted.as_ref()))?;
        let (keep, replay): (Option<KeepAlive>, _) = match (reference, distorted) {
            (Some(r), Some(d)) => {
                let replay = BufferReplay::of(ref_frame, &dist_frame, (r, &d));
                (Some(Box::new((r.clone(), d))), replay)
            }
            _ => (None, None),
        };
        self.score(
            &name,
            ref_frame,
            &dist_frame,
            (keep, replay),
            FrameTiming::of(outbuf),
        )?
        .map_err(|err| {
            gst::element_imp_error!(
                self,
                gst::StreamError::Failed,
                ("VMAF failed on {name}: {err}"),
                ["while scoring a frame"]
            );
            gst::FlowError::Error
        })
    }

    /// Gives the pair to input `name`'s engine (which scales its frame to
    /// the reference's size, where it differs) with this output frame's
    /// timing (kept for the frame messages and the report); returns the
    /// messages of the frames that became final, or the engine's error
    /// (inside), or `NotNegotiated` when the element has no state
    /// (outside).
    pub(super) fn score(
        &self,
        name: &str,
        ref_frame: &gst_video::VideoFrameRef<&gst::BufferRef>,
        dist_frame: &gst_video::VideoFrameRef<&gst::BufferRef>,
        (keep, replay): (Option<KeepAlive>, Option<Arc<dyn vmaf::Replay>>),
        at: FrameTiming,
    ) -> Result<Result<Vec<VmafFrameMessage>, String>, gst::FlowError> {
        let segment = self
            .obj()
            .src_pad()
            .segment()
            .downcast::<gst::ClockTime>()
            .ok();
        let pts = at.pts;
        let timing = |index| Pending {
            index,
            pts,
            running_time: segment.as_ref().and_then(|s| s.to_running_time(pts)),
            stream_time: segment.as_ref().and_then(|s| s.to_stream_time(pts)),
            duration: at.duration,
        };
        let mut guard = self.state.lock().unwrap();
        let state = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
        if state.rendition(name).is_none() {
            // Released meanwhile.
            return Ok(Ok(Vec::new()));
        }
        // A lone rendition does its reference's work itself, as 1.28's
        // `vmaf` would; the renditions of a ladder share it.
        let reference_id = (state.renditions.len() > 1 && state.share_reference)
            .then_some(at.reference.unwrap_or(state.references));
        let Some(r) = state.rendition(name) else {
            return Ok(Ok(Vec::new()));
        };
        r.start_frame(timing);
        let engine = &mut r.engine;
        let pushed = with_picture(ref_frame, |rp| {
            with_picture(dist_frame, |dp| {
                let pair = FramePair {
                    reference: rp,
                    distorted: dp,
                    keep,
                    replay,
                    reference_id,
                };
                engine.push(pair).map_err(|e| e.to_string())
            })
        })
        .flatten()
        .flatten();
        r.note_failover();
        Ok(pushed.and_then(|ready| r.finalize(ready).map_err(|e| e.to_string())))
    }

    /// Posts what scoring just made final, in order: the engines' moves,
    /// the frames' messages, then the windows they closed.
    pub(super) fn post_scored(&self, frames: &[VmafFrameMessage]) {
        self.post_engine_notices();
        for m in frames {
            self.post(gst::Structure::from(m));
        }
        self.post_windows();
    }

    /// Posts the messages about the engines' moves, outside the state lock
    /// (a requested input's name first).
    pub(super) fn post_engine_notices(&self) {
        let notices: Vec<(bool, String)> = self
            .state
            .lock()
            .unwrap()
            .as_mut()
            .map(|st| {
                st.renditions
                    .iter_mut()
                    .flat_map(|r| {
                        let prefix = if r.name == "dist_sink" {
                            String::new()
                        } else {
                            format!("{}: ", r.name)
                        };
                        std::mem::take(&mut r.engine_notices)
                            .into_iter()
                            .map(move |(w, t)| (w, format!("{prefix}{t}")))
                    })
                    .collect()
            })
            .unwrap_or_default();
        for (warning, text) in notices {
            if warning {
                gst::element_imp_warning!(
                    self,
                    gst::StreamError::Failed,
                    ("{text}"),
                    ["on-gpu-error"]
                );
            } else {
                gst::element_imp_info!(
                    self,
                    gst::StreamError::Failed,
                    ("{text}"),
                    ["on-gpu-error=retry"]
                );
            }
        }
    }

    /// Posts the windows the renditions closed (`window`), after their
    /// frames' messages, and the alerts they raise or clear
    /// (`alert-below`): a warning, then an info, each with the window
    /// message and the threshold as details.
    pub(super) fn post_windows(&self) {
        let ready: Vec<_> = self
            .state
            .lock()
            .unwrap()
            .as_mut()
            .map(|st| {
                st.renditions
                    .iter_mut()
                    .flat_map(|r| std::mem::take(&mut r.windows_ready))
                    .collect()
            })
            .unwrap_or_default();
        let threshold = self.settings.lock().unwrap().alert_below;
        for (m, change) in ready {
            let s = gst::Structure::from(&m);
            self.post(s.clone());
            let Some(change) = change else {
                continue;
            };
            let who = m.label.as_deref().unwrap_or(&m.rendition);
            let w = &m.summary;
            let secs = |ns: u64| ns as f64 / 1e9;
            let what = format!(
                "{who}: VMAF {:.2} over the {} s window from {} s (frames {}-{})",
                w.mean,
                secs(w.length),
                secs(w.start),
                w.first,
                w.last
            );
            let mut details = s;
            details.set("alert-below", threshold);
            match change {
                AlertChange::Raised => gst::element_imp_warning!(
                    self,
                    gst::StreamError::Failed,
                    ("{what} is below alert-below ({threshold})"),
                    ["alert-below"],
                    details: details
                ),
                AlertChange::Cleared => gst::element_imp_info!(
                    self,
                    gst::StreamError::Failed,
                    ("{what} is back at or above alert-below ({threshold})"),
                    ["alert-below"],
                    details: details
                ),
            }
        }
    }

    pub(super) fn post(&self, s: gst::Structure) {
        let _ = self
            .obj()
            .post_message(gst::message::Element::builder(s).src(&*self.obj()).build());
    }

    /// Ends a segment of every input (`drain_inputs`).
    pub(super) fn drain(&self, why: SegmentEnd) -> Result<(), gst::ErrorMessage> {
        self.drain_inputs(why, |_| true)
    }

    /// Ends a segment of the inputs `which` names: their last frame
    /// messages and pooled messages, their results files (`Rendition::end_segment`).
    pub(super) fn drain_inputs(
        &self,
        why: SegmentEnd,
        which: impl Fn(&str) -> bool,
    ) -> Result<(), gst::ErrorMessage> {
        let mut frames = Vec::new();
        let mut pooled = Vec::new();
        let mut failed = None;
        {
            let mut guard = self.state.lock().unwrap();
            let Some(state) = guard.as_mut() else {
                return Ok(());
            };
            let c = state.shared_reference.counts();
            if c.done > 0 {
                gst::info!(
                    CAT,
                    imp = self,
                    "shared reference: {} frames uploaded and worked on once, found done by another rendition {} times",
                    c.done,
                    c.shared
                );
            }
            for r in state.renditions.iter_mut().filter(|r| which(&r.name)) {
                if let Some(pad) = self.obj().static_pad(&r.name)
                    && let Some(pad) = pad.downcast_ref::<crate::element::pad::VmafHipPad>()
                {
                    r.pairings.counts.distorted += pad.imp().take_received();
                }
                match r.end_segment(why) {
                    Ok((msgs, p)) => {
                        frames.extend(msgs);
                        pooled.extend(p.map(|p| (p, r.engine.input_counts())));
                    }
                    Err(e) => failed = failed.or(Some(e)),
                }
            }
        }
        self.post_scored(&frames);
        for (p, counts) in &pooled {
            gst::info!(
                CAT,
                imp = self,
                "{}: pooled VMAF {:.6} over {} frames ({}); input planes so far: {} staged, {} from pinned memory ({} of them copied there on arrival), {} page-locked in place, {} on the device",
                p.rendition,
                p.score,
                p.frames,
                why.name(),
                counts.staged,
                counts.pinned,
                self.copied_on_arrival(),
                counts.registered,
                counts.device
            );
            self.post(gst::Structure::from(p));
        }
        failed.map_or(Ok(()), Err)
    }

    /// A distorted input must carry the reference's format; `dist_sink`
    /// also its size (GStreamer 1.28's `vmaf`), while a requested input of
    /// another size is scaled to it. Checked on the frames about to be
    /// scored (a pad's caps change before the frames queued under the old
    /// caps are through). When the two change to new caps that fit, the
    /// input's segment scored so far ends ("caps-changed") and its engine
    /// starts again for the new caps.
    pub(super) fn check_frames(
        &self,
        ri: &gst_video::VideoInfo,
        di: &gst_video::VideoInfo,
        name: &str,
    ) -> Result<(), gst::FlowError> {
        let same = |a: &gst_video::VideoInfo, b: &gst_video::VideoInfo| {
            a.width() == b.width() && a.height() == b.height() && a.format() == b.format()
        };
        let same_size = ri.width() == di.width() && ri.height() == di.height();
        let scales = name != "dist_sink";
        let comparable = comparable_formats(ri.format(), di.format());
        if !comparable || !(same_size || scales) {
            let mut advice = Vec::new();
            if !same_size {
                advice.push("videoscale");
            }
            if !comparable {
                advice.push("videoconvert");
            }
            let caps = |i: &gst_video::VideoInfo| {
                i.to_caps()
                    .map_or_else(|_| "?".to_string(), |c| c.to_string())
            };
            let what = if scales {
                "chroma layout and bit depth (a dist_sink_%u pad scales other sizes)"
            } else {
                "width, height, chroma layout and bit depth (a dist_sink_%u pad scales other sizes)"
            };
            gst::element_imp_error!(
                self,
                gst::StreamError::Format,
                (
                    "ref_sink and {name} must carry the same {what}: ref_sink caps {}; {name} caps {}; insert {} before {name}",
                    caps(ri),
                    caps(di),
                    advice.join(" and ")
                ),
                ["caps mismatch between two sink pads"]
            );
            return Err(gst::FlowError::NotNegotiated);
        }
        let changed = {
            let mut guard = self.state.lock().unwrap();
            let Some(r) = guard.as_mut().and_then(|st| st.rendition(name)) else {
                return Ok(()); // released meanwhile
            };
            match &r.checked {
                Some((old_r, old_d)) if same(old_r, ri) && same(old_d, di) => return Ok(()),
                Some(_) => r.next_index > 0,
                None => false,
            }
        };
        if changed {
            gst::info!(
                CAT,
                imp = self,
                "caps changed: ref_sink {}x{}, {name} {}x{} {:?}",
                ri.width(),
                ri.height(),
                di.width(),
                di.height(),
                ri.format()
            );
            if let Err(e) = self.drain_inputs(SegmentEnd::CapsChanged, |n| n == name) {
                self.post_error_message(e);
                return Err(gst::FlowError::Error);
            }
        }
        let mut guard = self.state.lock().unwrap();
        if let Some(r) = guard.as_mut().and_then(|st| st.rendition(name)) {
            r.checked = Some((ri.clone(), di.clone()));
        }
        Ok(())
    }
}
