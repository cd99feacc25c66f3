//! Gaps in a live input: a stretch of its timeline with no frame (a
//! source that stalled, or stopped and came back: an encoder restart, a
//! network cut, a reconnect). Each is reported once, when the input comes
//! back: as a `gap` element message, a line of the JSON Lines results, and
//! the metrics; with `align=auto` the offset is then searched again.
//!
//! Shorter losses (a frame or a few lost in delivery, or let go by the
//! aggregator because they came after their deadline) are not gaps: they
//! are counted as late ([`super::live::Pairing::late`]).

/// The name of the element messages that report a gap.
pub const GAP_EVENT: &str = "gap";

/// The name of the element messages that report reference frames not
/// scored because they, or their distorted frames, came too late (or were
/// lost in delivery): `frames`, `rendition`.
pub const LATE_EVENT: &str = "late-frames";

/// The shortest stretch with no frame that is reported as a gap.
pub(crate) const GAP_MIN: gst::ClockTime = gst::ClockTime::from_mseconds(500);

/// Frames missing from an input's timeline: from `start` (running time)
/// for `length`, `frames` of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Missed {
    pub frames: u64,
    pub start: gst::ClockTime,
    pub length: gst::ClockTime,
}

impl Missed {
    /// The frames missing between a frame at `last` lasting `d` and the
    /// next one at `at`: none unless more than one and a half frames' time
    /// lies between them.
    pub fn between(last: (gst::ClockTime, gst::ClockTime), at: gst::ClockTime) -> Missed {
        let (last, d) = last;
        if d == gst::ClockTime::ZERO || at <= last + d + d / 2 {
            return Missed::default();
        }
        let gap = (at - last).nseconds() as f64 / d.nseconds() as f64;
        Missed {
            frames: (gap.round() as u64).saturating_sub(1).max(1),
            start: last + d,
            length: at - (last + d),
        }
    }

    /// Whether it is long enough to be reported as a gap.
    pub fn is_gap(&self) -> bool {
        self.length >= GAP_MIN
    }
}

/// A gap of one input, as reported.
#[derive(Clone, Debug, PartialEq)]
pub struct Gap {
    /// `reference`, or `distorted`.
    pub input: String,
    pub missed: Missed,
    /// The rendition it was seen by (`dist_sink`, ...), and its label.
    pub rendition: String,
    pub label: Option<String>,
}

impl Gap {
    /// Its line in the JSON Lines results.
    pub fn json(&self) -> String {
        let secs = |t: gst::ClockTime| t.nseconds() as f64 / 1e9;
        format!(
            "{{\"gap\": {{\"input\": \"{}\", \"start\": {:.3}, \"length\": {:.3}, \"frames\": {}}}}}\n",
            self.input,
            secs(self.missed.start),
            secs(self.missed.length),
            self.missed.frames
        )
    }
}

impl From<&Gap> for gst::Structure {
    fn from(g: &Gap) -> gst::Structure {
        let b = gst::Structure::builder(GAP_EVENT)
            .field("input", g.input.as_str())
            .field("start", g.missed.start)
            .field("length", g.missed.length)
            .field("frames", g.missed.frames)
            .field("rendition", g.rendition.as_str());
        match &g.label {
            Some(l) => b.field("label", l.as_str()).build(),
            None => b.build(),
        }
    }
}

impl TryFrom<&gst::StructureRef> for Gap {
    type Error = String;
    fn try_from(s: &gst::StructureRef) -> Result<Self, String> {
        if s.name() != GAP_EVENT {
            return Err(format!("not a {GAP_EVENT} message: {}", s.name()));
        }
        let time = |n: &str| s.get::<gst::ClockTime>(n).map_err(|e| format!("{n}: {e}"));
        Ok(Gap {
            input: s.get("input").map_err(|e| format!("input: {e}"))?,
            missed: Missed {
                frames: s.get("frames").map_err(|e| format!("frames: {e}"))?,
                start: time("start")?,
                length: time("length")?,
            },
            rendition: s.get("rendition").unwrap_or_default(),
            label: s.get("label").ok(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> gst::ClockTime = gst::ClockTime::from_mseconds;

    #[test]
    fn frames_missing_are_counted_from_the_timeline() {
        let frame = MS(40);
        assert_eq!(Missed::between((MS(0), frame), MS(40)).frames, 0);
        assert_eq!(Missed::between((MS(0), frame), MS(59)).frames, 0);
        let one = Missed::between((MS(0), frame), MS(80));
        assert_eq!((one.frames, one.start, one.length), (1, MS(40), MS(40)));
        assert!(!one.is_gap());
        let stall = Missed::between((MS(1000), frame), MS(3040));
        assert_eq!(
            (stall.frames, stall.start, stall.length),
            (50, MS(1040), MS(2000))
        );
        assert!(stall.is_gap());
    }

    #[test]
    fn a_gap_is_a_message_and_a_results_line() {
        gst::init().unwrap();
        let g = Gap {
            input: "reference".into(),
            missed: Missed {
                frames: 150,
                start: MS(12_000),
                length: MS(5_000),
            },
            rendition: "dist_sink".into(),
            label: Some("720p".into()),
        };
        let s = gst::Structure::from(&g);
        assert_eq!(Gap::try_from(s.as_ref()).unwrap(), g);
        assert_eq!(
            g.json(),
            "{\"gap\": {\"input\": \"reference\", \"start\": 12.000, \"length\": 5.000, \"frames\": 150}}\n"
        );
    }
}
