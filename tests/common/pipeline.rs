//! Pipelines with the element, and what it said on their bus: shared by
//! the element, live and GPU memory tests.

use gst::prelude::*;
use gstvmafhip::{VmafFrameMessage, VmafPooledMessage};
use std::sync::Once;

/// GStreamer initialised, with the plugin registered (once per process).
pub fn init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        gst::init().unwrap();
        gstvmafhip::plugin_register_static().unwrap();
    });
}

/// The pipeline a gst-launch description describes, the plugin registered.
pub fn launch(desc: &str) -> gst::Pipeline {
    init();
    gst::parse::launch(desc)
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap()
}

#[derive(Debug, Default)]
pub struct Outcome {
    pub frames: Vec<VmafFrameMessage>,
    pub pooled: Vec<VmafPooledMessage>,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
}

/// Reads `bus` until EOS or an error (two minutes at most between
/// messages), keeping the element's messages, errors and warnings.
pub fn collect(bus: &gst::Bus) -> Outcome {
    let mut out = Outcome::default();
    while let Some(msg) = bus.timed_pop(gst::ClockTime::from_seconds(120)) {
        match msg.view() {
            gst::MessageView::Element(e) => {
                if let Some(s) = e.structure() {
                    if let Ok(f) = VmafFrameMessage::try_from(s) {
                        out.frames.push(f);
                    } else if let Ok(p) = VmafPooledMessage::try_from(s) {
                        out.pooled.push(p);
                    }
                }
            }
            gst::MessageView::Error(e) => {
                out.errors.push(format!("{} ({:?})", e.error(), e.debug()));
                break;
            }
            gst::MessageView::Warning(w) => out.warnings.push(w.error().to_string()),
            gst::MessageView::Eos(_) => break,
            _ => {}
        }
    }
    out
}
