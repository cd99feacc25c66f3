//! `--align auto|off|N`: how DIST's frames are paired with REF's, passed
//! to the element's `align`. With `auto` the element finds the offset
//! from the first seconds and then follows dropped and duplicated frames
//! (`gstvmafhip::core::align`); the command prints what it found.

use gstvmafhip::VmafPooledMessage;

/// The line that says how the inputs were aligned, where they were.
pub fn summary(p: &VmafPooledMessage) -> Option<String> {
    let c = &p.pairing;
    if p.offset == 0 && p.offset_confidence.is_none() && c.dropped + c.duplicated + c.late == 0 {
        return None;
    }
    let confidence = p
        .offset_confidence
        .map_or(String::new(), |c| format!(" (confidence {c:.2})"));
    let how = match p.offset {
        0 => "DIST is aligned with REF".to_string(),
        n if n > 0 => format!("DIST lags REF by {n} frames"),
        n => format!("DIST leads REF by {} frames", -n),
    };
    Some(format!(
        "aligned: {how}{confidence}; {} dropped, {} duplicated, {} late",
        c.dropped, c.duplicated, c.late
    ))
}

/// An `align-event` message as a line: which frame, and what happened.
pub fn event_line(s: &gst::StructureRef) -> Option<String> {
    let what: String = s.get("event").ok()?;
    let frame: u64 = s.get("reference-frame").ok()?;
    let at = s
        .get::<Option<gst::ClockTime>>("timestamp")
        .ok()
        .flatten()
        .map_or(String::new(), |t| {
            format!(" ({:.3} s)", t.nseconds() as f64 / 1e9)
        });
    Some(match what.as_str() {
        "dropped" => format!("DIST dropped REF's frame {frame}{at}: not scored"),
        _ => format!("DIST repeats REF's frame {frame}{at}: scored again"),
    })
}
