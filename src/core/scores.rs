//! What the engine gives back: a frame's scores, the pooled scores, and
//! the moves of a stream between the GPU and the CPU.

#![forbid(unsafe_code)]

use super::pool::Pooled;
use std::sync::Arc;

/// Scores of one frame. `names` is shared by every frame of a stream and
/// lists libvmaf's output keys in libvmaf's order; `values[i]` is `None`
/// where libvmaf writes nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameScores {
    pub index: u64,
    pub names: Arc<[String]>,
    pub values: Vec<Option<f64>>,
}

impl FrameScores {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.names
            .iter()
            .position(|n| n == name)
            .and_then(|i| self.values[i])
    }
    /// The main model's score (`vmaf`).
    pub fn vmaf(&self) -> f64 {
        self.get("vmaf").unwrap_or(f64::NAN)
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.names
            .iter()
            .zip(&self.values)
            .filter_map(|(n, v)| v.map(|v| (n.as_str(), v)))
    }
}

/// Pooled statistics per metric over the frames finalised so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PooledScores {
    pub names: Arc<[String]>,
    pub stats: Vec<Pooled>,
    pub frames: u64,
    /// Values computed once over the whole stream (libvmaf's
    /// `aggregate_metrics`, e.g. `apsnr_y`), in libvmaf's order.
    pub aggregates: Vec<(String, f64)>,
}

impl PooledScores {
    pub fn get(&self, name: &str) -> Option<&Pooled> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| &self.stats[i])
            .filter(|p| p.count > 0)
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Pooled)> {
        self.names
            .iter()
            .zip(&self.stats)
            .filter(|(_, p)| p.count > 0)
            .map(|(n, p)| (n.as_str(), p))
    }
}

/// Where a stream moved between the engines: the first frame the other
/// engine computed, that engine, and, for a move to the CPU, the GPU's
/// error (None: the GPU came back).
#[derive(Clone, Debug, PartialEq)]
pub struct FailoverNote {
    pub frame: u64,
    pub engine: String,
    pub error: Option<String>,
}

/// Which engine computed which frames: `first` (the GPU's description)
/// and the `moves` after it, with frame numbers `offset` later.
pub fn engines_line(first: &str, moves: &[FailoverNote], offset: u64) -> String {
    let Some(last_error) = moves.iter().rev().find_map(|m| m.error.as_deref()) else {
        return first.to_string();
    };
    if let [m] = moves {
        let f = m.frame + offset;
        return if f == 0 {
            format!(
                "{} for every frame: {first} failed before delivering one (GPU error: {last_error})",
                m.engine
            )
        } else {
            format!(
                "{first} before frame {f}, then {} from frame {f} on (GPU error: {last_error})",
                m.engine
            )
        };
    }
    let cpu = moves
        .iter()
        .find(|m| m.error.is_some())
        .map_or("cpu", |m| m.engine.as_str());
    // The CPU's spans: each move to it, to the GPU's return after it.
    let mut spans = Vec::new();
    for (i, m) in moves.iter().enumerate().filter(|(_, m)| m.error.is_some()) {
        let from = m.frame + offset;
        spans.push(match moves.get(i + 1) {
            Some(back) if back.frame + offset > from => {
                format!("{from}-{}", back.frame + offset - 1)
            }
            Some(_) => continue,
            None => format!("from {from} on"),
        });
    }
    format!(
        "{first}, and {cpu} for frames {} after GPU errors (the last: {last_error})",
        spans.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engines_line_says_which_frames_ran_where() {
        let to_cpu = |frame| FailoverNote {
            frame,
            engine: "cpu (2 threads)".into(),
            error: Some(format!("failed at {frame}")),
        };
        let back = |frame| FailoverNote {
            frame,
            engine: "hip: GPU".into(),
            error: None,
        };
        assert_eq!(engines_line("hip: GPU", &[], 0), "hip: GPU");
        assert_eq!(
            engines_line("hip: GPU", &[to_cpu(8)], 0),
            "hip: GPU before frame 8, then cpu (2 threads) from frame 8 on (GPU error: failed at 8)"
        );
        assert_eq!(
            engines_line("hip: GPU", &[to_cpu(0)], 0),
            "cpu (2 threads) for every frame: hip: GPU failed before delivering one (GPU error: failed at 0)"
        );
        assert_eq!(
            engines_line("hip: GPU", &[to_cpu(8), back(10), to_cpu(20)], 100),
            "hip: GPU, and cpu (2 threads) for frames 108-109, from 120 on after GPU errors (the last: failed at 20)"
        );
    }
}
