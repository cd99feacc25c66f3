//! Rolling scores for live QA: the final frames of a rendition cut into
//! windows of `window` nanoseconds of their timestamps, each summarised
//! when the first frame past it arrives (or at the end), and the alert
//! state `alert-below` keeps: it fires once when a window's mean falls
//! below the threshold and clears once a window's mean is back at or above.

use super::live::Pairing;

/// One window's summary: what the `window` message carries.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowSummary {
    /// Its first and last frame (stream-wide indices).
    pub first: u64,
    pub last: u64,
    /// Its span of timestamps, `[start, start + length)`, in nanoseconds.
    pub start: u64,
    pub length: u64,
    pub frames: u64,
    pub mean: f64,
    pub harmonic_mean: f64,
    pub min: f64,
    /// The k-th smallest score, k = ⌈0.01·frames⌉ (the report's 1% low,
    /// exact here).
    pub low_1: f64,
    /// Reference frames scored against a repeated distorted picture, and
    /// reference frames not scored, while the window was open.
    pub repeated: u64,
    pub unscored: u64,
    /// `align`: distorted frames dropped and duplicated while the window
    /// was open.
    pub dropped: u64,
    pub duplicated: u64,
    /// Of the unscored reference frames, those lost to late delivery on
    /// this machine ([`super::live::Pairing::late`]).
    pub late: u64,
    /// Whether the rendition is in alert after this window.
    pub alert: bool,
    /// Whether the end of stream cut it short.
    pub partial: bool,
}

/// A change of the alert state, posted beside the window that caused it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AlertChange {
    /// The window's mean fell below `alert-below`.
    Raised,
    /// The window's mean is back at or above it.
    Cleared,
}

/// The windows of one rendition.
#[derive(Debug)]
pub struct Windows {
    length: u64,
    alert_below: f64,
    /// The start of the open window (the first timestamp seen, then whole
    /// windows after it).
    start: Option<u64>,
    scores: Vec<f64>,
    first: u64,
    last: u64,
    /// The pairing counts when the open window started.
    counts_at_start: Pairing,
    alert: bool,
}

impl Windows {
    /// Windows of `length` ns (0: none), alerting below `alert_below` (0:
    /// never, as VMAF is never below 0).
    pub fn new(length: u64, alert_below: f64) -> Self {
        Windows {
            length,
            alert_below,
            start: None,
            scores: Vec::new(),
            first: 0,
            last: 0,
            counts_at_start: Pairing::default(),
            alert: false,
        }
    }

    pub fn enabled(&self) -> bool {
        self.length > 0
    }

    /// One final frame: its index, timestamp (ns) and VMAF, with the
    /// pairing counts so far. A frame without a timestamp belongs to the
    /// open window. Returns the windows it closed.
    pub fn push(
        &mut self,
        index: u64,
        time: Option<u64>,
        vmaf: f64,
        counts: &Pairing,
    ) -> Vec<(WindowSummary, Option<AlertChange>)> {
        if !self.enabled() {
            return Vec::new();
        }
        let mut closed = Vec::new();
        if let Some(t) = time {
            let start = *self.start.get_or_insert(t);
            if t >= start + self.length {
                closed.extend(self.close(counts, false));
                // The window that holds `t`, whole windows after the first.
                self.start = Some(start + (t - start) / self.length * self.length);
            }
        }
        if self.scores.is_empty() {
            self.first = index;
            self.counts_at_start = *counts;
        }
        self.scores.push(vmaf);
        self.last = index;
        closed
    }

    /// The end of the stream (or segment): the open window, cut short.
    pub fn finish(&mut self, counts: &Pairing) -> Option<(WindowSummary, Option<AlertChange>)> {
        let w = self.close(counts, true);
        self.start = None;
        w
    }

    /// Summarises the open window, if it has frames, and updates the alert.
    fn close(
        &mut self,
        counts: &Pairing,
        partial: bool,
    ) -> Option<(WindowSummary, Option<AlertChange>)> {
        if self.scores.is_empty() {
            return None;
        }
        let scores = std::mem::take(&mut self.scores);
        let n = scores.len() as f64;
        let mean = scores.iter().sum::<f64>() / n;
        let harmonic_mean = n / scores.iter().map(|s| 1.0 / (s + 1.0)).sum::<f64>() - 1.0;
        let mut sorted = scores.clone();
        sorted.sort_by(f64::total_cmp);
        let k = (0.01 * n).ceil().max(1.0) as usize;
        let change = self.update_alert(mean);
        let summary = WindowSummary {
            first: self.first,
            last: self.last,
            start: self.start.unwrap_or_default(),
            length: self.length,
            frames: scores.len() as u64,
            mean,
            harmonic_mean,
            min: sorted[0],
            low_1: sorted[k - 1],
            repeated: counts.repeated - self.counts_at_start.repeated,
            unscored: counts.unscored - self.counts_at_start.unscored,
            dropped: counts.dropped - self.counts_at_start.dropped,
            duplicated: counts.duplicated - self.counts_at_start.duplicated,
            late: counts.late - self.counts_at_start.late,
            alert: self.alert,
            partial,
        };
        Some((summary, change))
    }

    fn update_alert(&mut self, mean: f64) -> Option<AlertChange> {
        let below = mean < self.alert_below;
        if below == self.alert {
            return None;
        }
        self.alert = below;
        Some(if below {
            AlertChange::Raised
        } else {
            AlertChange::Cleared
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    /// Frames at 10 fps with these scores; the windows they close, then the
    /// last one.
    fn run(windows: &mut Windows, scores: &[f64]) -> Vec<(WindowSummary, Option<AlertChange>)> {
        let counts = Pairing::default();
        let mut out = Vec::new();
        for (i, &v) in scores.iter().enumerate() {
            out.extend(windows.push(i as u64, Some(i as u64 * S / 10), v, &counts));
        }
        out.extend(windows.finish(&counts));
        out
    }

    #[test]
    fn windows_cover_their_span_and_the_last_is_partial() {
        let mut w = Windows::new(S, 0.0);
        let scores: Vec<f64> = (0..25).map(|i| 50.0 + i as f64).collect();
        let out = run(&mut w, &scores);
        assert_eq!(out.len(), 3);
        let (a, b, c) = (&out[0].0, &out[1].0, &out[2].0);
        assert_eq!((a.first, a.last, a.frames, a.start), (0, 9, 10, 0));
        assert_eq!((b.first, b.last, b.frames, b.start), (10, 19, 10, S));
        assert_eq!((c.first, c.last, c.frames, c.partial), (20, 24, 5, true));
        assert!(!a.partial && !b.partial);
        assert_eq!(a.mean, 54.5);
        assert_eq!((a.min, a.low_1), (50.0, 50.0));
        let hm = 10.0 / (0..10).map(|i| 1.0 / (51.0 + i as f64)).sum::<f64>() - 1.0;
        assert_eq!(a.harmonic_mean, hm);
    }

    #[test]
    fn one_percent_low_is_the_kth_smallest() {
        let mut w = Windows::new(1000 * S, 0.0);
        // 250 frames: k = 3, the third smallest.
        let mut scores: Vec<f64> = vec![90.0; 250];
        scores[7] = 10.0;
        scores[100] = 20.0;
        scores[200] = 30.0;
        scores[201] = 40.0;
        let out = run(&mut w, &scores);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].0.min, out[0].0.low_1), (10.0, 30.0));
    }

    #[test]
    fn the_alert_fires_once_and_clears_once() {
        let mut w = Windows::new(S, 70.0);
        let mut scores = vec![90.0; 10];
        scores.extend([50.0; 20]);
        scores.extend([95.0; 10]);
        let out = run(&mut w, &scores);
        let changes: Vec<_> = out.iter().map(|(s, c)| (s.alert, *c)).collect();
        assert_eq!(
            changes,
            [
                (false, None),
                (true, Some(AlertChange::Raised)),
                (true, None),
                (false, Some(AlertChange::Cleared)),
            ]
        );
    }

    #[test]
    fn a_gap_skips_the_empty_windows_and_counts_come_from_the_pairing() {
        let mut w = Windows::new(S, 0.0);
        let mut counts = Pairing::default();
        assert!(w.push(0, Some(0), 80.0, &counts).is_empty());
        counts.repeated = 2;
        counts.unscored = 1;
        assert!(w.push(1, Some(S / 2), 80.0, &counts).is_empty());
        // 3.5 s later: the first window closes, the next opens at 3 s.
        let out = w.push(2, Some(3 * S + S / 2), 60.0, &counts);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].0.repeated, out[0].0.unscored), (2, 1));
        let last = w.finish(&counts).unwrap().0;
        assert_eq!((last.start, last.first, last.repeated), (3 * S, 2, 0));
    }

    #[test]
    fn no_window_no_summary() {
        let mut w = Windows::new(0, 70.0);
        assert!(run(&mut w, &[10.0; 30]).is_empty());
    }
}
