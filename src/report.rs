//! The visual per-frame report: one self-contained HTML page (inline SVG and
//! CSS, no script, nothing fetched) with the VMAF curve over time, the
//! pooled value, minimum and 1%/5% lows marked, every other metric as a small
//! multiple, the worst frames and the run's facts.
//!
//! [`Report`] takes frames one at a time in constant memory, so a live
//! pipeline can keep one for days: the curve is kept as at most
//! [`MAX_BUCKETS`] buckets of consecutive frames, each with the min, max and
//! mean of every metric (a bucket's width doubles whenever they fill up),
//! the VMAF distribution as a histogram of 0.01-wide bins (for the
//! percentiles), and the [`WORST`] lowest frames. The page therefore has a
//! bounded number of SVG nodes whether it covers 100 or 10 million frames.

#![forbid(unsafe_code)]

use std::fmt::Write as _;

/// Most buckets the curve keeps; when full, neighbours merge pairwise.
pub const MAX_BUCKETS: usize = 1024;
/// How many of the lowest-scoring frames the report lists.
pub const WORST: usize = 10;
/// Histogram bins per VMAF point: percentiles are exact to 1 / BINS_PER_POINT.
const BINS_PER_POINT: f64 = 100.0;
const HIST_BINS: usize = 100 * 100 + 1;

#[derive(Clone, Debug)]
struct Bucket {
    /// First and last frame time (seconds, or frame index when no time).
    t0: f64,
    t1: f64,
    frames: u64,
    /// Per metric: min, max, sum and count of frames that had it.
    min: Vec<f64>,
    max: Vec<f64>,
    sum: Vec<f64>,
    count: Vec<u64>,
}

impl Bucket {
    fn new(t: f64, metrics: usize) -> Self {
        Bucket {
            t0: t,
            t1: t,
            frames: 0,
            min: vec![f64::INFINITY; metrics],
            max: vec![f64::NEG_INFINITY; metrics],
            sum: vec![0.0; metrics],
            count: vec![0; metrics],
        }
    }

    fn add(&mut self, t: f64, values: &[Option<f64>]) {
        self.t1 = t;
        self.frames += 1;
        for (i, v) in values.iter().enumerate() {
            if let Some(v) = v.filter(|v| v.is_finite()) {
                self.min[i] = self.min[i].min(v);
                self.max[i] = self.max[i].max(v);
                self.sum[i] += v;
                self.count[i] += 1;
            }
        }
    }

    fn merge(mut self, other: &Bucket) -> Bucket {
        self.t1 = other.t1;
        self.frames += other.frames;
        for i in 0..self.min.len() {
            self.min[i] = self.min[i].min(other.min[i]);
            self.max[i] = self.max[i].max(other.max[i]);
            self.sum[i] += other.sum[i];
            self.count[i] += other.count[i];
        }
        self
    }

    fn grow(&mut self, metrics: usize) {
        self.min.resize(metrics, f64::INFINITY);
        self.max.resize(metrics, f64::NEG_INFINITY);
        self.sum.resize(metrics, 0.0);
        self.count.resize(metrics, 0);
    }
}

/// One of the lowest-scoring frames.
#[derive(Clone, Debug, PartialEq)]
pub struct WorstFrame {
    pub index: u64,
    /// Presentation time in seconds, when the frame had one.
    pub time: Option<f64>,
    pub vmaf: f64,
}

/// Summary statistics of the VMAF scores seen.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub frames: u64,
    pub mean: f64,
    pub harmonic_mean: f64,
    pub min: f64,
    pub max: f64,
    /// The 1% and 5% lows: the k-th smallest score, k = ⌈p·frames⌉, rounded
    /// up to the next 0.01 (exact for scores in 0..=100).
    pub low_1: f64,
    pub low_5: f64,
}

/// Accumulates frames for a report, in constant memory.
#[derive(Clone, Debug)]
pub struct Report {
    /// Metric names, the main score (`vmaf`) first.
    names: Vec<String>,
    buckets: Vec<Bucket>,
    /// Frames per bucket (a power of two).
    span: u64,
    frames: u64,
    timed: bool,
    hist: Vec<u64>,
    sum: f64,
    sum_inv: f64,
    min: f64,
    max: f64,
    worst: Vec<WorstFrame>,
}

impl Default for Report {
    fn default() -> Self {
        Self::new()
    }
}

impl Report {
    pub fn new() -> Self {
        Report {
            names: vec!["vmaf".to_string()],
            buckets: Vec::new(),
            span: 1,
            frames: 0,
            timed: true,
            hist: vec![0; HIST_BINS],
            sum: 0.0,
            sum_inv: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            worst: Vec::new(),
        }
    }

    /// Adds one frame: its index, presentation time in seconds (None when
    /// the stream has none: the curve's x axis then counts frames) and its
    /// metrics by libvmaf name (`vmaf` is the main score; a frame without
    /// it is skipped).
    pub fn push<'a>(
        &mut self,
        index: u64,
        time: Option<f64>,
        metrics: impl IntoIterator<Item = (&'a str, f64)>,
    ) {
        let mut values = vec![None; self.names.len()];
        for (name, v) in metrics {
            let i = match self.names.iter().position(|n| n == name) {
                Some(i) => i,
                None => {
                    self.names.push(name.to_string());
                    values.push(None);
                    for b in &mut self.buckets {
                        b.grow(self.names.len());
                    }
                    self.names.len() - 1
                }
            };
            values[i] = Some(v);
        }
        let Some(vmaf) = values[0].filter(|v| v.is_finite()) else {
            return;
        };
        self.timed &= time.is_some();
        let t = time.unwrap_or(index as f64);
        if self.buckets.last().is_none_or(|b| b.frames >= self.span) {
            if self.buckets.len() == MAX_BUCKETS {
                let merged = self
                    .buckets
                    .chunks(2)
                    .map(|c| match c {
                        [a, b] => a.clone().merge(b),
                        [a] => a.clone(),
                        _ => unreachable!("chunks(2)"),
                    })
                    .collect();
                self.buckets = merged;
                self.span *= 2;
            }
            if self.buckets.last().is_none_or(|b| b.frames >= self.span) {
                self.buckets.push(Bucket::new(t, self.names.len()));
            }
        }
        self.buckets
            .last_mut()
            .expect("a bucket was just ensured")
            .add(t, &values);
        self.frames += 1;
        self.sum += vmaf;
        self.sum_inv += 1.0 / (vmaf + 1.0);
        self.min = self.min.min(vmaf);
        self.max = self.max.max(vmaf);
        let bin = (vmaf * BINS_PER_POINT)
            .ceil()
            .clamp(0.0, (HIST_BINS - 1) as f64) as usize;
        self.hist[bin] += 1;
        if self.worst.len() < WORST || vmaf < self.worst[WORST - 1].vmaf {
            let at = self.worst.partition_point(|w| w.vmaf <= vmaf);
            self.worst.insert(at, WorstFrame { index, time, vmaf });
            self.worst.truncate(WORST);
        }
    }

    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Metric names in first-seen order, `vmaf` first.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Number of curve buckets held now (≤ [`MAX_BUCKETS`]).
    pub fn buckets(&self) -> usize {
        self.buckets.len()
    }

    /// The lowest frames, lowest first (ties keep arrival order).
    pub fn worst(&self) -> &[WorstFrame] {
        &self.worst
    }

    /// None before the first frame.
    pub fn summary(&self) -> Option<Summary> {
        if self.frames == 0 {
            return None;
        }
        let n = self.frames as f64;
        Some(Summary {
            frames: self.frames,
            mean: self.sum / n,
            // libvmaf's harmonic mean: n / Σ 1/(x+1) − 1.
            harmonic_mean: n / self.sum_inv - 1.0,
            min: self.min,
            max: self.max,
            low_1: self.low(0.01),
            low_5: self.low(0.05),
        })
    }

    /// The k-th smallest score (k = ⌈p·frames⌉, at least 1), rounded up to
    /// the histogram's bin edge.
    fn low(&self, p: f64) -> f64 {
        let k = ((p * self.frames as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (bin, &c) in self.hist.iter().enumerate() {
            seen += c;
            if seen >= k {
                return bin as f64 / BINS_PER_POINT;
            }
        }
        self.max
    }

    /// The page: `title` heads it, `facts` (label, value) are listed as the
    /// run's facts, in order.
    pub fn render(&self, title: &str, facts: &[(String, String)]) -> String {
        let mut h = page_head("VMAF report", title);
        let Some(s) = self.summary() else {
            h.push_str("<p class=\"empty\">No frame was scored.</p>\n");
            facts_table(&mut h, facts);
            h.push_str("</body>\n</html>\n");
            return h;
        };
        h.push_str("<div class=\"cards\">\n");
        for (label, v, class) in [
            ("pooled VMAF (mean)", s.mean, "pooled"),
            ("harmonic mean", s.harmonic_mean, ""),
            ("minimum", s.min, "min"),
            ("1% low", s.low_1, "low1"),
            ("5% low", s.low_5, "low5"),
            ("maximum", s.max, ""),
        ] {
            let _ = writeln!(
                h,
                "<div class=\"card {class}\"><div class=\"v\">{v:.3}</div><div class=\"l\">{label}</div></div>"
            );
        }
        let _ = writeln!(
            h,
            "<div class=\"card\"><div class=\"v\">{}</div><div class=\"l\">frames</div></div>\n</div>",
            s.frames
        );
        h.push_str("<h2>VMAF over time</h2>\n");
        if self.span > 1 {
            let _ = writeln!(
                h,
                "<p class=\"note\">{} frames drawn as {} points of {} frames each: the band spans each point's minimum to maximum, the line is its mean.</p>",
                s.frames,
                self.buckets.len(),
                self.span
            );
        }
        self.main_plot(&mut h, &s);
        if self.names.len() > 1 {
            h.push_str("<h2>Metrics per frame</h2>\n<div class=\"multiples\">\n");
            for i in 1..self.names.len() {
                self.small_plot(&mut h, i);
            }
            h.push_str("</div>\n");
        }
        h.push_str("<h2>Worst frames</h2>\n<table class=\"worst\">\n<tr><th>#</th><th>frame</th><th>time</th><th>VMAF</th></tr>\n");
        for (rank, w) in self.worst.iter().enumerate() {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td></tr>",
                rank + 1,
                w.index,
                w.time.map_or("–".to_string(), clock),
                w.vmaf
            );
        }
        h.push_str("</table>\n");
        facts_table(&mut h, facts);
        h.push_str("</body>\n</html>\n");
        h
    }

    /// One page for an encoding ladder: a table of each rendition's pooled
    /// values and every rendition's VMAF curve (its mean per point) in one
    /// plot, each in its own colour with a legend; then `facts`.
    pub fn render_ladder(
        title: &str,
        renditions: &[(String, &Report)],
        facts: &[(String, String)],
    ) -> String {
        let mut h = page_head("VMAF ladder report", title);
        h.push_str("<table class=\"ladder\">\n<tr><th>rendition</th><th>VMAF (mean)</th><th>harmonic mean</th><th>1% low</th><th>5% low</th><th>minimum</th><th>frames</th></tr>\n");
        let summaries: Vec<Option<Summary>> = renditions.iter().map(|(_, r)| r.summary()).collect();
        for (k, ((name, _), s)) in renditions.iter().zip(&summaries).enumerate() {
            let _ = match s {
                Some(s) => writeln!(
                    h,
                    "<tr><td><span class=\"key r{}\"></span>{}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{}</td></tr>",
                    k % PALETTE,
                    esc(name),
                    s.mean,
                    s.harmonic_mean,
                    s.low_1,
                    s.low_5,
                    s.min,
                    s.frames
                ),
                None => writeln!(
                    h,
                    "<tr><td>{}</td><td colspan=\"6\">no frame scored</td></tr>",
                    esc(name)
                ),
            };
        }
        h.push_str("</table>\n<h2>VMAF over time</h2>\n");
        Self::ladder_plot(&mut h, renditions, &summaries);
        facts_table(&mut h, facts);
        h.push_str("</body>\n</html>\n");
        h
    }

    /// Every rendition's mean curve on shared axes.
    fn ladder_plot(
        h: &mut String,
        renditions: &[(String, &Report)],
        summaries: &[Option<Summary>],
    ) {
        let scored: Vec<&Summary> = summaries.iter().flatten().collect();
        let Some(first) = renditions.iter().map(|(_, r)| r).find(|r| r.frames > 0) else {
            h.push_str("<p class=\"empty\">No frame was scored.</p>\n");
            return;
        };
        let min = scored.iter().map(|s| s.min).fold(f64::INFINITY, f64::min);
        let max = scored
            .iter()
            .map(|s| s.max)
            .fold(f64::NEG_INFINITY, f64::max);
        let x = renditions
            .iter()
            .filter(|(_, r)| r.frames > 0)
            .map(|(_, r)| r.x_range())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |a, b| {
                (a.0.min(b.0), a.1.max(b.1))
            });
        let (w, ht) = (960.0, 340.0);
        let lo = ((min - 5.0) / 10.0).floor() * 10.0;
        let area = Area {
            left: 56.0,
            right: w - 200.0,
            top: 14.0,
            bottom: ht - 44.0,
            x,
            y: (if min >= 0.0 { lo.max(0.0) } else { lo }, max.max(100.0)),
        };
        let _ = writeln!(
            h,
            "<svg id=\"ladder-plot\" class=\"plot\" width=\"{w}\" height=\"{ht}\" viewBox=\"0 0 {w} {ht}\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"VMAF per frame of every rendition\">"
        );
        area.axes(h, first.x_label(), "VMAF", 6);
        for (k, (name, r)) in renditions.iter().enumerate() {
            area.line(h, &r.series(0), name, &format!("curve r{}", k % PALETTE));
            let y = area.top + 14.0 + 18.0 * k as f64;
            let _ = writeln!(
                h,
                "<line class=\"curve r{0}\" x1=\"{1:.1}\" x2=\"{2:.1}\" y1=\"{3:.1}\" y2=\"{3:.1}\"/><text class=\"legend\" x=\"{4:.1}\" y=\"{5:.1}\">{6}</text>",
                k % PALETTE,
                area.right + 8.0,
                area.right + 26.0,
                y,
                area.right + 30.0,
                y + 4.0,
                esc(name)
            );
        }
        h.push_str("</svg>\n");
    }

    fn x_label(&self) -> &'static str {
        if self.timed { "time (s)" } else { "frame" }
    }

    /// x range of the curve (first to last frame time).
    fn x_range(&self) -> (f64, f64) {
        let t0 = self.buckets.first().map_or(0.0, |b| b.t0);
        let t1 = self.buckets.last().map_or(1.0, |b| b.t1);
        if t1 > t0 { (t0, t1) } else { (t0, t0 + 1.0) }
    }

    /// min/mean/max polylines of metric `i`: (x, min, mean, max) per bucket.
    fn series(&self, i: usize) -> Vec<(f64, f64, f64, f64)> {
        self.buckets
            .iter()
            .filter(|b| b.count[i] > 0)
            .map(|b| {
                (
                    (b.t0 + b.t1) / 2.0,
                    b.min[i],
                    b.sum[i] / b.count[i] as f64,
                    b.max[i],
                )
            })
            .collect()
    }

    fn main_plot(&self, h: &mut String, s: &Summary) {
        let (w, ht) = (960.0, 340.0);
        let area = Area {
            left: 56.0,
            right: w - 110.0,
            top: 14.0,
            bottom: ht - 44.0,
            x: self.x_range(),
            // 0–100 unless the scores leave it (disable-clip); the bottom
            // comes up to the decade below the minimum, so a good encode's
            // curve is not squashed against the top.
            y: (
                {
                    let lo = ((s.min - 5.0) / 10.0).floor() * 10.0;
                    if s.min >= 0.0 { lo.max(0.0) } else { lo }
                },
                s.max.max(100.0),
            ),
        };
        let _ = writeln!(
            h,
            "<svg id=\"vmaf-plot\" class=\"plot\" width=\"{w}\" height=\"{ht}\" viewBox=\"0 0 {w} {ht}\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"VMAF per frame over time\">"
        );
        area.axes(h, self.x_label(), "VMAF", 6);
        let series = self.series(0);
        area.band(h, &series, "vmaf", "band");
        area.line(h, &series, "vmaf", "curve");
        let marks = [
            ("pooled", s.mean, format!("mean {:.2}", s.mean)),
            ("low5", s.low_5, format!("5% {:.2}", s.low_5)),
            ("low1", s.low_1, format!("1% {:.2}", s.low_1)),
            ("min", s.min, format!("min {:.2}", s.min)),
        ];
        // Labels are pushed apart so that close values stay readable.
        let mut last_y = f64::NEG_INFINITY;
        for (class, v, label) in marks {
            let y = area.py(v);
            let ly = y.max(last_y + 13.0);
            last_y = ly;
            let _ = writeln!(
                h,
                "<line class=\"mark {class}\" data-mark=\"{class}\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/><text class=\"mark-label {class}\" x=\"{:.1}\" y=\"{:.1}\">{label}</text>",
                area.left,
                area.right,
                area.right + 6.0,
                ly + 4.0
            );
        }
        for wf in &self.worst {
            let t = wf.time.unwrap_or(wf.index as f64);
            let _ = writeln!(
                h,
                "<circle class=\"worst\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\"><title>frame {}: {:.3}</title></circle>",
                area.px(t),
                area.py(wf.vmaf),
                wf.index,
                wf.vmaf
            );
        }
        h.push_str("</svg>\n");
    }

    fn small_plot(&self, h: &mut String, i: usize) {
        let name = &self.names[i];
        let series = self.series(i);
        if series.is_empty() {
            return;
        }
        let lo = series.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let hi = series.iter().map(|p| p.3).fold(f64::NEG_INFINITY, f64::max);
        let (sum, n) = self
            .buckets
            .iter()
            .fold((0.0, 0u64), |(s, n), b| (s + b.sum[i], n + b.count[i]));
        let pad = if hi > lo {
            (hi - lo) * 0.05
        } else {
            lo.abs().max(1.0) * 0.05
        };
        let (w, ht) = (300.0, 150.0);
        let area = Area {
            left: 52.0,
            right: w - 8.0,
            top: 24.0,
            bottom: ht - 30.0,
            x: self.x_range(),
            y: (lo - pad, hi + pad),
        };
        let _ = writeln!(
            h,
            "<svg class=\"small\" data-metric=\"{0}\" width=\"{w}\" height=\"{ht}\" viewBox=\"0 0 {w} {ht}\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"{0} per frame\"><text class=\"small-title\" x=\"{1}\" y=\"15\"><title>{0}</title>{3} <tspan class=\"mean\">mean {2}</tspan></text>",
            esc(name),
            area.left,
            short(sum / n.max(1) as f64),
            // Long names (VMAF_integer_feature_motion_sad_score) are cut to
            // fit the panel; the full name is the tooltip.
            esc(&if name.chars().count() > 26 {
                format!("{}…", name.chars().take(25).collect::<String>())
            } else {
                name.clone()
            })
        );
        area.axes(h, self.x_label(), "", 3);
        area.band(h, &series, name, "band");
        area.line(h, &series, name, "curve");
        h.push_str("</svg>\n");
    }
}

/// A plot's drawing area in SVG units and the data ranges it maps.
struct Area {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    x: (f64, f64),
    y: (f64, f64),
}

impl Area {
    fn px(&self, x: f64) -> f64 {
        self.left + (x - self.x.0) / (self.x.1 - self.x.0) * (self.right - self.left)
    }

    fn py(&self, y: f64) -> f64 {
        let span = (self.y.1 - self.y.0).max(f64::MIN_POSITIVE);
        self.bottom - (y - self.y.0) / span * (self.bottom - self.top)
    }

    /// Frame, grid, ticks and axis labels.
    fn axes(&self, h: &mut String, x_label: &str, y_label: &str, y_ticks: usize) {
        let _ = writeln!(
            h,
            "<rect class=\"frame\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
            self.left,
            self.top,
            self.right - self.left,
            self.bottom - self.top
        );
        for v in ticks(self.y.0, self.y.1, y_ticks) {
            let y = self.py(v);
            let _ = writeln!(
                h,
                "<line class=\"grid\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/><text class=\"tick y\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                self.left,
                self.right,
                self.left - 5.0,
                y + 4.0,
                short(v)
            );
        }
        for v in ticks(self.x.0, self.x.1, if y_ticks > 3 { 10 } else { 4 }) {
            let x = self.px(v);
            let _ = writeln!(
                h,
                "<line class=\"grid\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/><text class=\"tick x\" x=\"{x:.1}\" y=\"{:.1}\">{}</text>",
                self.top,
                self.bottom,
                self.bottom + 14.0,
                short(v)
            );
        }
        let _ = writeln!(
            h,
            "<text class=\"axis-label x\" x=\"{:.1}\" y=\"{:.1}\">{x_label}</text>",
            (self.left + self.right) / 2.0,
            self.bottom + 28.0
        );
        if !y_label.is_empty() {
            let (cx, cy) = (14.0, (self.top + self.bottom) / 2.0);
            let _ = writeln!(
                h,
                "<text class=\"axis-label y\" x=\"{cx}\" y=\"{cy:.1}\" transform=\"rotate(-90 {cx} {cy:.1})\">{y_label}</text>"
            );
        }
    }

    /// Appends the data points `pts` to an SVG path: the first with
    /// command `first` (`M` starts a path, `L` continues one), the rest `L`.
    fn path_points(&self, d: &mut String, pts: impl Iterator<Item = (f64, f64)>, first: char) {
        for (k, (x, y)) in pts.enumerate() {
            let cmd = if k == 0 { first } else { 'L' };
            let _ = write!(d, "{cmd}{:.1},{:.1}", self.px(x), self.py(y));
        }
    }

    /// The min–max envelope as one closed path.
    fn band(&self, h: &mut String, s: &[(f64, f64, f64, f64)], series: &str, class: &str) {
        if s.is_empty() {
            return;
        }
        let mut d = String::with_capacity(s.len() * 24);
        self.path_points(&mut d, s.iter().map(|p| (p.0, p.3)), 'M');
        self.path_points(&mut d, s.iter().rev().map(|p| (p.0, p.1)), 'L');
        let _ = writeln!(
            h,
            "<path class=\"{class}\" data-series=\"{}\" d=\"{d}Z\"/>",
            esc(series)
        );
    }

    /// The mean as one polyline.
    fn line(&self, h: &mut String, s: &[(f64, f64, f64, f64)], series: &str, class: &str) {
        if s.is_empty() {
            return;
        }
        let mut d = String::with_capacity(s.len() * 12);
        self.path_points(&mut d, s.iter().map(|p| (p.0, p.2)), 'M');
        // A single point still shows: a short horizontal stroke.
        if s.len() == 1 {
            let _ = write!(d, "h1");
        }
        let _ = writeln!(
            h,
            "<path class=\"{class}\" data-series=\"{}\" d=\"{d}\"/>",
            esc(series)
        );
    }
}

/// A page's start: its head (title, style) and its heading over `title`.
fn page_head(heading: &str, title: &str) -> String {
    let mut h = String::with_capacity(64 * 1024);
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(h, "<title>{heading}: {}</title>", esc(title));
    h.push_str(STYLE);
    h.push_str("</head>\n<body>\n");
    let _ = writeln!(
        h,
        "<h1>{heading}</h1>\n<p class=\"subtitle\">{}</p>",
        esc(title)
    );
    h
}

/// About `n` round tick values inside [lo, hi].
fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater)
        || !lo.is_finite()
        || !hi.is_finite()
    {
        return vec![lo];
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut v = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while v <= hi + step * 1e-9 && out.len() < 50 {
        out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        v += step;
    }
    out
}

/// A compact number for labels.
fn short(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(0.01..1e6).contains(&a) {
        format!("{v:.2e}")
    } else if a >= 100.0 || v == v.round() {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Seconds as h:mm:ss.mmm (or m:ss.mmm).
fn clock(t: f64) -> String {
    let ms = (t * 1000.0).round().max(0.0) as u64;
    let (h, m, s, f) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}.{f:03}")
    } else {
        format!("{m}:{s:02}.{f:03}")
    }
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn facts_table(h: &mut String, facts: &[(String, String)]) {
    if facts.is_empty() {
        return;
    }
    h.push_str("<h2>Run</h2>\n<table class=\"facts\">\n");
    for (k, v) in facts {
        let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    h.push_str("</table>\n");
}

/// A UTC timestamp (`2026-11-22 20:43:03 UTC`) for the report's facts.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Distinct curve colours in a ladder report (`.r0` … `.r7`).
const PALETTE: usize = 8;

const STYLE: &str = "<style>
body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1d2330;background:#fff;margin:24px auto;max-width:1000px;padding:0 16px}
h1{font-size:24px;margin:0}h2{font-size:17px;margin:28px 0 8px}
.subtitle{color:#4a5468;margin:4px 0 16px;word-break:break-all}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{border:1px solid #d5dae3;border-radius:6px;padding:8px 14px;min-width:96px}
.card .v{font-size:20px;font-weight:600}.card .l{color:#5a6478;font-size:12px}
.card.pooled .v{color:#1f5fbf}.card.min .v{color:#c0392b}.card.low1 .v{color:#d35400}.card.low5 .v{color:#b7950b}
.note{color:#5a6478;font-size:12px}
svg{display:block;overflow:visible}
.frame{fill:#fbfcfe;stroke:#9aa3b5;stroke-width:1}
.grid{stroke:#e3e7ee;stroke-width:1}
.tick{font-size:11px;fill:#4a5468}.tick.y{text-anchor:end}.tick.x{text-anchor:middle}
.axis-label{font-size:12px;fill:#1d2330;text-anchor:middle}
.band{fill:#1f77b4;fill-opacity:.22;stroke:none}
.curve{fill:none;stroke:#1f77b4;stroke-width:1.5;stroke-linejoin:round}
.curve.r1{stroke:#ff7f0e}.curve.r2{stroke:#2ca02c}.curve.r3{stroke:#d62728}.curve.r4{stroke:#9467bd}.curve.r5{stroke:#8c564b}.curve.r6{stroke:#e377c2}.curve.r7{stroke:#7f7f7f}
.key{display:inline-block;width:14px;height:3px;margin:0 6px 3px 0;background:#1f77b4}.key.r1{background:#ff7f0e}.key.r2{background:#2ca02c}.key.r3{background:#d62728}.key.r4{background:#9467bd}.key.r5{background:#8c564b}.key.r6{background:#e377c2}.key.r7{background:#7f7f7f}
.legend{font-size:12px;fill:#1d2330}
table.ladder{border-collapse:collapse}table.ladder td,table.ladder th{padding:3px 10px;border-bottom:1px solid #e3e7ee;text-align:right}table.ladder td:first-child,table.ladder th:first-child{text-align:left}
.mark{stroke-width:1.2}.mark.pooled{stroke:#1f5fbf;stroke-dasharray:6 3}
.mark.low5{stroke:#b7950b;stroke-dasharray:2 3}.mark.low1{stroke:#d35400;stroke-dasharray:2 3}.mark.min{stroke:#c0392b}
.mark-label{font-size:11px}.mark-label.pooled{fill:#1f5fbf}.mark-label.low5{fill:#b7950b}.mark-label.low1{fill:#d35400}.mark-label.min{fill:#c0392b}
circle.worst{fill:#c0392b;stroke:#fff;stroke-width:1}
.multiples{display:flex;flex-wrap:wrap;gap:8px 18px}
.small-title{font-size:12px;font-weight:600;fill:#1d2330}.small-title .mean{font-weight:400;fill:#5a6478}
table{border-collapse:collapse;font-size:13px}th,td{border-bottom:1px solid #e3e7ee;padding:4px 10px;text-align:left}
.worst td:last-child{font-variant-numeric:tabular-nums}
.facts th{color:#4a5468;font-weight:500;white-space:nowrap}.facts td{word-break:break-all}
</style>
";

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(r: &mut Report, i: u64, v: f64) {
        r.push(
            i,
            Some(i as f64 / 25.0),
            [("vmaf", v), ("integer_adm2", v / 100.0)],
        );
    }

    #[test]
    fn summary_percentiles_and_worst_frames() {
        let mut r = Report::new();
        // 200 frames: scores 0.5, 1.0, ..., 100.0 in a shuffled order.
        let mut scores: Vec<f64> = (1..=200).map(|k| k as f64 * 0.5).collect();
        scores.reverse();
        scores.swap(3, 150);
        for (i, &v) in scores.iter().enumerate() {
            frame(&mut r, i as u64, v);
        }
        let s = r.summary().unwrap();
        assert_eq!(s.frames, 200);
        assert_eq!(s.min, 0.5);
        assert_eq!(s.max, 100.0);
        assert!((s.mean - 50.25).abs() < 1e-9);
        // k = 2 and 10: the 2nd and 10th smallest are 1.0 and 5.0.
        assert_eq!(s.low_1, 1.0);
        assert_eq!(s.low_5, 5.0);
        let worst: Vec<f64> = r.worst().iter().map(|w| w.vmaf).collect();
        assert_eq!(worst, [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0]);
        assert_eq!(r.worst()[0].index, 199);
        assert_eq!(r.worst()[0].time, Some(199.0 / 25.0));
    }

    #[test]
    fn percentiles_round_up_to_the_bin_edge() {
        let mut r = Report::new();
        for (i, v) in [93.4567, 97.0, 98.0].into_iter().enumerate() {
            frame(&mut r, i as u64, v);
        }
        assert_eq!(r.summary().unwrap().low_1, 93.46);
    }

    #[test]
    fn memory_and_nodes_stay_bounded_over_a_long_stream() {
        let mut r = Report::new();
        for i in 0..1_000_000u64 {
            frame(&mut r, i, 80.0 + 15.0 * ((i as f64) / 5000.0).sin());
        }
        assert!(r.buckets() <= MAX_BUCKETS && r.buckets() >= MAX_BUCKETS / 2);
        let html = r.render("long", &[]);
        // Two plots of two paths each, a few marks and ticks: never a node per frame.
        let nodes = html.matches('<').count();
        assert!(nodes < 400, "{nodes} tags");
        assert!(html.len() < 200_000, "{} bytes", html.len());
        // The envelope keeps the extremes of merged buckets.
        let s = r.summary().unwrap();
        assert!((s.min - 65.0).abs() < 1e-3 && (s.max - 95.0).abs() < 1e-3);
    }

    #[test]
    fn page_has_series_marks_axes_and_escaped_facts() {
        let mut r = Report::new();
        for i in 0..50 {
            frame(&mut r, i, 90.0 - (i % 7) as f64);
        }
        let html = r.render(
            "a<b> vs c",
            &[("reference".into(), "file:///x/\"r\".mp4".into())],
        );
        assert!(html.contains("VMAF report: a&lt;b&gt; vs c"));
        assert!(html.contains("data-series=\"vmaf\""));
        assert!(html.contains("data-metric=\"integer_adm2\""));
        for mark in ["pooled", "low1", "low5", "min"] {
            assert!(html.contains(&format!("data-mark=\"{mark}\"")), "{mark}");
        }
        assert!(html.contains(">time (s)</text>") && html.contains(">VMAF</text>"));
        assert!(html.contains("file:///x/&quot;r&quot;.mp4"));
        assert!(!html.contains("<script"));
        assert!(
            !html.contains("http://")
                || !html
                    .replace("http://www.w3.org/2000/svg", "")
                    .contains("http://")
        );
    }

    #[test]
    fn frames_without_times_are_plotted_by_index() {
        let mut r = Report::new();
        r.push(0, None, [("vmaf", 50.0)]);
        r.push(1, None, [("vmaf", 60.0)]);
        assert!(r.render("t", &[]).contains(">frame</text>"));
        assert!(
            Report::new()
                .render("t", &[])
                .contains("No frame was scored")
        );
    }

    #[test]
    fn a_ladder_page_has_one_curve_and_row_per_rendition() {
        let mut a = Report::new();
        let mut b = Report::new();
        for i in 0..50 {
            frame(&mut a, i, 90.0 - (i % 7) as f64);
            frame(&mut b, i, 60.0 + (i % 5) as f64);
        }
        let page = Report::render_ladder(
            "ref.y4m: 2 renditions",
            &[("r720 <a>".to_string(), &a), ("r360".to_string(), &b)],
            &[("model".into(), "vmaf_v0.6.1".into())],
        );
        assert_eq!(page.matches("<path class=\"curve r").count(), 2, "{page}");
        assert!(
            page.contains("data-series=\"r720 &lt;a&gt;\"")
                && page.contains("data-series=\"r360\"")
        );
        let mean = |r: &Report| format!("{:.3}", r.summary().unwrap().mean);
        assert!(page.contains(&mean(&a)) && page.contains(&mean(&b)));
        assert!(page.contains("id=\"ladder-plot\"") && page.contains("vmaf_v0.6.1"));
        let empty = Report::render_ladder("x", &[("r".to_string(), &Report::new())], &[]);
        assert!(empty.contains("no frame scored") && empty.contains("No frame was scored."));
    }

    #[test]
    fn clock_and_date() {
        assert_eq!(clock(3725.5), "1:02:05.500");
        assert_eq!(clock(0.04), "0:00.040");
        assert!(utc_now().ends_with(" UTC") && utc_now().starts_with("20"));
        assert_eq!(ticks(0.0, 100.0, 5), [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
    }
}
