//! libvmaf's result files (`output.c`): JSON, XML and CSV, with libvmaf's
//! number formatting, so existing parsers keep working; and JSON Lines,
//! vmafhip's own, which stays machine-readable however it is cut short.

#![forbid(unsafe_code)]

use super::scores::{FrameScores, PooledScores};
use std::fmt::Write;

/// libvmaf's `count_leading_zeros_d`: how many ×10 steps the fractional part
/// needs to reach 1 (0 for no fraction).
fn leading_zeros(v: f64) -> u32 {
    let mut frac = v.abs() - v.abs().trunc();
    if frac == 0.0 {
        return 0;
    }
    let mut n = 0;
    while frac < 1.0 {
        frac *= 10.0;
        n += 1;
    }
    n
}

/// "%.6f", or "%.16f" for tiny fractions that would print as zeros.
pub fn fmt_num(v: f64) -> String {
    if leading_zeros(v) > 6 {
        format!("{v:.16}")
    } else {
        format!("{v:.6}")
    }
}

fn json_num(v: f64) -> String {
    if v.is_finite() {
        fmt_num(v)
    } else {
        "null".into()
    }
}

/// Result file layouts (the element's `results-format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Xml,
    Csv,
    /// JSON Lines: one object per line, a header (`version`, `fps`,
    /// `width`, `height`), then one per frame as libvmaf's JSON writes a
    /// frame (`frameNum`, `metrics`), then `pooled_metrics` and
    /// `aggregate_metrics` at the end. Every line written is whole JSON.
    Jsonl,
    /// libvmaf's subtitle layout (MicroDVD): a line per frame,
    /// `{N}{N+1}frame: N|name: value|...`, nothing pooled.
    Sub,
}

impl Format {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "json" => Some(Self::Json),
            "xml" => Some(Self::Xml),
            "csv" => Some(Self::Csv),
            "sub" => Some(Self::Sub),
            "jsonl" => Some(Self::Jsonl),
            _ => None,
        }
    }
}

/// What a result file holds.
pub struct Results<'a> {
    pub frames: &'a [FrameScores],
    pub pooled: &'a PooledScores,
    pub width: usize,
    pub height: usize,
    pub fps: Option<f64>,
    pub version: &'a str,
}

impl Results<'_> {
    /// The whole file at once (through [`ResultsWriter`]).
    pub fn write(&self, f: Format) -> String {
        let mut w = ResultsWriter::begin(
            Vec::new(),
            f,
            self.width,
            self.height,
            self.fps,
            self.version,
        )
        .expect("writing to memory");
        for fr in self.frames {
            w.frame(fr).expect("writing to memory");
        }
        let bytes = w.finish(self.pooled, None).expect("writing to memory");
        String::from_utf8(bytes).expect("the writer emits UTF-8")
    }

    pub fn json(&self) -> String {
        self.write(Format::Json)
    }
    pub fn xml(&self) -> String {
        self.write(Format::Xml)
    }
    pub fn csv(&self) -> String {
        self.write(Format::Csv)
    }
    pub fn jsonl(&self) -> String {
        self.write(Format::Jsonl)
    }
}

/// A result file written as frames become final: the header at once, each
/// frame when it comes, the pooled part at the end. A reader of a file cut
/// short (a crash) finds every frame written so far: JSON and XML lack only
/// their closing part (`frames` array / `<frames>` element unterminated),
/// CSV is complete up to its last row.
pub struct ResultsWriter<W: std::io::Write> {
    out: W,
    format: Format,
    frames: u64,
    /// Where the header left room for the speed when it was not known
    /// yet: its byte offset in the output (see [`ResultsWriter::fps_patch`]).
    fps_slot: Option<usize>,
    /// When the header was written (the first frame): the speed's clock.
    started: std::time::Instant,
}

/// Bytes the header keeps for a speed it does not know yet: `null` (JSON)
/// or `"0.00"` (XML) padded with spaces, room for `"1234567.89"`.
const FPS_SLOT: usize = 12;

/// How the two inputs were covered, written after libvmaf's parts
/// (`inputs`; not in CSV, which has no place for it).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Coverage {
    /// Frames each input delivered, and the frames scored.
    pub reference_frames: u64,
    pub distorted_frames: u64,
    pub scored_frames: u64,
    /// One input ended before the other: only the overlap was scored.
    pub lengths_differ: bool,
    /// The run was stopped before its inputs ended (SIGINT, SIGTERM).
    pub interrupted: bool,
    /// Frames the distorted input lags the reference (its first frames, or
    /// the reference's when negative, not scored), and how clearly it was
    /// found (None: given, not found).
    pub offset: i32,
    pub offset_confidence: Option<f64>,
    /// Reference frames the distorted input dropped (not scored), and
    /// distorted frames that repeat the one before (scored).
    pub dropped: u64,
    pub duplicated: u64,
    /// Live inputs: reference frames not scored because they, or their
    /// distorted frames, came too late or not at all (delivery, not the
    /// distorted input's content).
    pub late: u64,
}

impl Coverage {
    fn json(&self) -> String {
        format!(
            "{{\"reference_frames\": {}, \"distorted_frames\": {}, \"scored_frames\": {}, \"lengths_differ\": {}, \"interrupted\": {}, \"offset\": {}, \"offset_confidence\": {}, \"dropped_frames\": {}, \"duplicated_frames\": {}, \"late_frames\": {}}}",
            self.reference_frames,
            self.distorted_frames,
            self.scored_frames,
            self.lengths_differ,
            self.interrupted,
            self.offset,
            self.offset_confidence
                .map_or("null".to_string(), |c| format!("{c:.3}")),
            self.dropped,
            self.duplicated,
            self.late
        )
    }

    fn xml(&self) -> String {
        format!(
            "  <inputs reference_frames=\"{}\" distorted_frames=\"{}\" scored_frames=\"{}\" lengths_differ=\"{}\" interrupted=\"{}\" offset=\"{}\"{} dropped_frames=\"{}\" duplicated_frames=\"{}\" late_frames=\"{}\" />\n",
            self.reference_frames,
            self.distorted_frames,
            self.scored_frames,
            self.lengths_differ,
            self.interrupted,
            self.offset,
            self.offset_confidence
                .map_or(String::new(), |c| format!(" offset_confidence=\"{c:.3}\"")),
            self.dropped,
            self.duplicated,
            self.late
        )
    }
}

impl<W: std::io::Write> ResultsWriter<W> {
    /// Writes the header. `fps` is libvmaf's speed field (`null` / `0.00`
    /// when unknown, as for a live element).
    pub fn begin(
        mut out: W,
        format: Format,
        width: usize,
        height: usize,
        fps: Option<f64>,
        version: &str,
    ) -> std::io::Result<Self> {
        let mut s = String::new();
        let mut fps_slot = None;
        // The speed, or room for it (written in place at the end).
        let mut speed = |s: &mut String, unknown: &str| match fps {
            Some(f) if unknown.starts_with('"') => s.push_str(&format!("\"{f:.2}\"")),
            Some(f) => s.push_str(&format!("{f:.2}")),
            None => {
                fps_slot = Some(s.len());
                s.push_str(&format!("{unknown:<FPS_SLOT$}"));
            }
        };
        match format {
            Format::Json => {
                s.push_str("{\n");
                let _ = writeln!(s, "  \"version\": \"{version}\",");
                s.push_str("  \"fps\": ");
                speed(&mut s, "null");
                s.push_str(",\n  \"frames\": [");
            }
            Format::Xml => {
                let _ = writeln!(s, "<VMAF version=\"{version}\">");
                let _ = writeln!(
                    s,
                    "  <params qualityWidth=\"{width}\" qualityHeight=\"{height}\" />"
                );
                s.push_str("  <fyi fps=");
                speed(&mut s, "\"0.00\"");
                s.push_str(" />\n  <frames>\n");
            }
            // The header needs the metric names: written with the first
            // frame; the subtitles have none.
            Format::Csv | Format::Sub => {}
            Format::Jsonl => {
                let _ = write!(s, "{{\"version\": \"{version}\", \"fps\": ");
                speed(&mut s, "null");
                let _ = writeln!(s, ", \"width\": {width}, \"height\": {height}}}");
            }
        }
        out.write_all(s.as_bytes())?;
        Ok(Self {
            out,
            format,
            frames: 0,
            fps_slot,
            started: std::time::Instant::now(),
        })
    }

    /// The speed since the header (frames written per second), as the
    /// bytes to write over the header's room for it at their offset; none
    /// where the header had the speed already, or with no frames.
    pub fn fps_patch(&self) -> Option<(u64, Vec<u8>)> {
        let at = self.fps_slot?;
        let secs = self.started.elapsed().as_secs_f64();
        if self.frames == 0 || secs <= 0.0 {
            return None;
        }
        let fps = self.frames as f64 / secs;
        let value = match self.format {
            Format::Xml => format!("\"{fps:.2}\""),
            _ => format!("{fps:.2}"),
        };
        (value.len() <= FPS_SLOT).then(|| (at as u64, format!("{value:<FPS_SLOT$}").into_bytes()))
    }

    /// A line of the caller's own between the frames (JSON Lines: an
    /// event such as a live input's gap), written as it is.
    pub fn line(&mut self, text: &str) -> std::io::Result<()> {
        self.out.write_all(text.as_bytes())
    }

    /// One final frame.
    pub fn frame(&mut self, fr: &FrameScores) -> std::io::Result<()> {
        let mut s = String::new();
        match self.format {
            Format::Json => {
                s.push_str(if self.frames == 0 { "\n" } else { ",\n" });
                let _ = writeln!(
                    s,
                    "    {{\n      \"frameNum\": {},\n      \"metrics\": {{",
                    fr.index
                );
                let items: Vec<_> = fr.iter().collect();
                for (k, (n, v)) in items.iter().enumerate() {
                    let _ = write!(s, "        \"{n}\": {}", json_num(*v));
                    s.push_str(if k + 1 < items.len() { ",\n" } else { "\n" });
                }
                s.push_str("      }\n    }");
            }
            Format::Jsonl => {
                let _ = write!(s, "{{\"frameNum\": {}, \"metrics\": {{", fr.index);
                for (k, (n, v)) in fr.iter().enumerate() {
                    let sep = if k == 0 { "" } else { ", " };
                    let _ = write!(s, "{sep}\"{n}\": {}", json_num(v));
                }
                s.push_str("}}\n");
            }
            Format::Xml => {
                let _ = write!(s, "    <frame frameNum=\"{}\" ", fr.index);
                for (n, v) in fr.iter() {
                    let _ = write!(s, "{n}=\"{}\" ", fmt_num(v));
                }
                s.push_str("/>\n");
            }
            Format::Csv => {
                if self.frames == 0 {
                    s.push_str("Frame,");
                    for n in fr.names.iter() {
                        let _ = write!(s, "{n},");
                    }
                    s.push('\n');
                }
                let _ = write!(s, "{},", fr.index);
                for (_, v) in fr.iter() {
                    let _ = write!(s, "{},", fmt_num(v));
                }
                s.push('\n');
            }
            Format::Sub => {
                let i = fr.index;
                let _ = write!(s, "{{{i}}}{{{}}}frame: {i}|", i + 1);
                for (n, v) in fr.iter() {
                    let _ = write!(s, "{n}: {}|", fmt_num(v));
                }
                s.push('\n');
            }
        }
        self.frames += 1;
        self.out.write_all(s.as_bytes())
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Push buffered bytes to the file (the element does after every frame).
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    /// The pooled part, how the inputs were covered (where known) and the
    /// closing lines; returns the writer.
    pub fn finish(
        mut self,
        pooled: &PooledScores,
        inputs: Option<&Coverage>,
    ) -> std::io::Result<W> {
        let mut s = String::new();
        match self.format {
            Format::Json => {
                s.push_str("\n  ],\n  \"pooled_metrics\": {");
                for (i, (n, p)) in pooled.iter().enumerate() {
                    s.push_str(if i == 0 { "\n" } else { ",\n" });
                    let _ = write!(
                        s,
                        "    \"{n}\": {{\n      \"min\": {},\n      \"max\": {},\n      \"mean\": {},\n      \"harmonic_mean\": {}\n    }}",
                        json_num(p.min),
                        json_num(p.max),
                        json_num(p.mean()),
                        json_num(p.harmonic_mean())
                    );
                }
                s.push_str("\n  },\n  \"aggregate_metrics\": {");
                for (i, (n, v)) in pooled.aggregates.iter().enumerate() {
                    let _ = write!(
                        s,
                        "{}\n    \"{n}\": {}",
                        if i == 0 { "" } else { "," },
                        json_num(*v)
                    );
                }
                s.push_str("\n  }");
                if let Some(c) = inputs {
                    let _ = write!(s, ",\n  \"inputs\": {}", c.json());
                }
                s.push_str("\n}\n");
            }
            Format::Xml => {
                s.push_str("  </frames>\n  <pooled_metrics>\n");
                for (n, p) in pooled.iter() {
                    let _ = writeln!(
                        s,
                        "    <metric name=\"{n}\" min=\"{}\" max=\"{}\" mean=\"{}\" harmonic_mean=\"{}\" />",
                        fmt_num(p.min),
                        fmt_num(p.max),
                        fmt_num(p.mean()),
                        fmt_num(p.harmonic_mean())
                    );
                }
                s.push_str("  </pooled_metrics>\n  <aggregate_metrics ");
                for (n, v) in &pooled.aggregates {
                    let _ = write!(s, "{n}=\"{}\" ", fmt_num(*v));
                }
                s.push_str("/>\n");
                if let Some(c) = inputs {
                    s.push_str(&c.xml());
                }
                s.push_str("</VMAF>\n");
            }
            Format::Csv => {
                if self.frames == 0 {
                    s.push_str("Frame,\n");
                }
            }
            Format::Sub => {}
            Format::Jsonl => {
                s.push_str("{\"pooled_metrics\": {");
                for (i, (n, p)) in pooled.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    let _ = write!(
                        s,
                        "{sep}\"{n}\": {{\"min\": {}, \"max\": {}, \"mean\": {}, \"harmonic_mean\": {}}}",
                        json_num(p.min),
                        json_num(p.max),
                        json_num(p.mean()),
                        json_num(p.harmonic_mean())
                    );
                }
                s.push_str("}, \"aggregate_metrics\": {");
                for (i, (n, v)) in pooled.aggregates.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    let _ = write!(s, "{sep}\"{n}\": {}", json_num(*v));
                }
                s.push('}');
                if let Some(c) = inputs {
                    let _ = write!(s, ", \"inputs\": {}", c.json());
                }
                s.push_str("}\n");
            }
        }
        self.out.write_all(s.as_bytes())?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file cut after k frames (a crash) is a prefix of the finished file
    /// and holds those k frames.
    #[test]
    fn streamed_file_is_a_prefix_of_the_finished_one() {
        use crate::core::pool::Pooled;
        use std::sync::Arc;
        let names: Arc<[String]> = Arc::from(vec!["integer_adm2".to_string(), "vmaf".to_string()]);
        let frames: Vec<FrameScores> = (0..5)
            .map(|i| FrameScores {
                index: i,
                names: names.clone(),
                values: vec![Some(0.9 + i as f64 / 100.0), Some(80.0 + i as f64)],
            })
            .collect();
        let mut stats = vec![Pooled::default(); 2];
        for f in &frames {
            for (p, v) in stats.iter_mut().zip(&f.values) {
                p.push(v.unwrap());
            }
        }
        let pooled = PooledScores {
            names: names.clone(),
            stats,
            frames: 5,
            aggregates: Vec::new(),
        };
        for fmt in [
            Format::Json,
            Format::Xml,
            Format::Csv,
            Format::Jsonl,
            Format::Sub,
        ] {
            let full = Results {
                frames: &frames,
                pooled: &pooled,
                width: 64,
                height: 48,
                fps: None,
                version: "3.2.0",
            }
            .write(fmt);
            let mut w = ResultsWriter::begin(Vec::new(), fmt, 64, 48, None, "3.2.0").unwrap();
            for f in &frames[..3] {
                w.frame(f).unwrap();
            }
            let cut = String::from_utf8(w.out.clone()).unwrap();
            assert!(full.starts_with(&cut), "{fmt:?}");
            assert!(
                cut.contains("82.000000"),
                "{fmt:?}: frame 2 in the cut file"
            );
            assert!(!cut.contains("83.000000"), "{fmt:?}");
        }
    }

    /// libvmaf's subtitle layout: a MicroDVD line per frame.
    #[test]
    fn subtitles_give_a_line_per_frame() {
        let names: std::sync::Arc<[String]> =
            std::sync::Arc::from(vec!["integer_adm2".to_string(), "vmaf".to_string()]);
        let f = FrameScores {
            index: 7,
            names: names.clone(),
            values: vec![Some(0.95), Some(1e-9)],
        };
        let mut w = ResultsWriter::begin(Vec::new(), Format::Sub, 64, 48, None, "3.2.0").unwrap();
        w.frame(&f).unwrap();
        assert_eq!(
            String::from_utf8(w.out).unwrap(),
            "{7}{8}frame: 7|integer_adm2: 0.950000|vmaf: 0.0000000010000000|\n"
        );
    }

    #[test]
    fn tiny_fractions_get_sixteen_decimals() {
        assert_eq!(fmt_num(0.939894), "0.939894");
        assert_eq!(fmt_num(1.0000005096878528), "1.0000005096878528");
        assert_eq!(fmt_num(2.0), "2.000000");
        assert_eq!(fmt_num(75.1441446), "75.144145");
    }
}
