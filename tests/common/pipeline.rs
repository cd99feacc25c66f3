//! What the element said on a pipeline's bus: shared by the element and GPU
//! memory tests.

use gstvmafhip::{VmafFrameMessage, VmafPooledMessage};

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
