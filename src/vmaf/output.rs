//! libvmaf's result files (`output.c`): JSON, XML and CSV, with libvmaf's
//! number formatting, so existing parsers keep working.

use super::scorer::{FrameScores, PooledScores};
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
}

impl Format {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "json" => Some(Self::Json),
            "xml" => Some(Self::Xml),
            "csv" => Some(Self::Csv),
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
    pub fn write(&self, f: Format) -> String {
        match f {
            Format::Json => self.json(),
            Format::Xml => self.xml(),
            Format::Csv => self.csv(),
        }
    }

    pub fn json(&self) -> String {
        let mut s = String::new();
        s.push_str("{\n");
        let _ = writeln!(s, "  \"version\": \"{}\",", self.version);
        let _ = writeln!(
            s,
            "  \"fps\": {},",
            self.fps.map_or("null".into(), |f| format!("{f:.2}"))
        );
        s.push_str("  \"frames\": [");
        for (i, fr) in self.frames.iter().enumerate() {
            s.push_str(if i == 0 { "\n" } else { ",\n" });
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
        s.push_str("\n  ],\n  \"pooled_metrics\": {");
        let pooled: Vec<_> = self.pooled.iter().collect();
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
        s.push_str("\n  },\n  \"aggregate_metrics\": {\n  }\n}\n");
        s
    }

    pub fn xml(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "<VMAF version=\"{}\">", self.version);
        let _ = writeln!(
            s,
            "  <params qualityWidth=\"{}\" qualityHeight=\"{}\" />",
            self.width, self.height
        );
        let _ = writeln!(
            s,
            "  <fyi fps=\"{}\" />",
            self.fps.map_or("0.00".into(), |f| format!("{f:.2}"))
        );
        s.push_str("  <frames>\n");
        for fr in self.frames {
            let _ = write!(s, "    <frame frameNum=\"{}\" ", fr.index);
            for (n, v) in fr.iter() {
                let _ = write!(s, "{n}=\"{}\" ", fmt_num(v));
            }
            s.push_str("/>\n");
        }
        s.push_str("  </frames>\n  <pooled_metrics>\n");
        for (n, p) in self.pooled.iter() {
            let _ = writeln!(
                s,
                "    <metric name=\"{n}\" min=\"{}\" max=\"{}\" mean=\"{}\" harmonic_mean=\"{}\" />",
                fmt_num(p.min),
                fmt_num(p.max),
                fmt_num(p.mean()),
                fmt_num(p.harmonic_mean())
            );
        }
        s.push_str("  </pooled_metrics>\n  <aggregate_metrics />\n</VMAF>\n");
        s
    }

    pub fn csv(&self) -> String {
        let mut s = String::from("Frame,");
        if let Some(first) = self.frames.first() {
            for n in first.names.iter() {
                let _ = write!(s, "{n},");
            }
        }
        s.push('\n');
        for fr in self.frames {
            let _ = write!(s, "{},", fr.index);
            for (_, v) in fr.iter() {
                let _ = write!(s, "{},", fmt_num(v));
            }
            s.push('\n');
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_fractions_get_sixteen_decimals() {
        assert_eq!(fmt_num(0.939894), "0.939894");
        assert_eq!(fmt_num(1.0000005096878528), "1.0000005096878528");
        assert_eq!(fmt_num(2.0), "2.000000");
        assert_eq!(fmt_num(75.1441446), "75.144145");
    }
}
