//! The metrics endpoint (`metrics-address`): what a QA station's
//! monitoring scrapes, in OpenMetrics text, per rendition: the engine, the
//! frames scored, repeated, unscored, dropped and duplicated, the
//! alignment's offset, the last frame's VMAF, the last
//! window's scores and alert state (`window`), and the scoring rate.
//! Served by `tiny_http` on a thread of its own; loopback unless an
//! address says otherwise.

use super::WindowSummary;
use super::live::Pairing;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// One rendition's series.
#[derive(Debug, Default)]
struct Series {
    backend: String,
    scored: u64,
    repeated: u64,
    unscored: u64,
    dropped: u64,
    duplicated: u64,
    late: u64,
    /// Gaps in either input, and their seconds summed.
    gaps: u64,
    gap_seconds: f64,
    /// The pairing counts last seen (they start again after a flush): the
    /// counters above only grow.
    seen: Pairing,
    /// `align`: frames the distorted input lags the reference by.
    offset: Option<i32>,
    vmaf: Option<f64>,
    window: Option<WindowSummary>,
    first_frame: Option<Instant>,
}

/// The element's metrics, shared by its renditions and the server.
#[derive(Clone, Debug, Default)]
pub struct Metrics(Arc<Mutex<BTreeMap<String, Series>>>);

impl Metrics {
    /// A final frame of rendition `who`, scored by `backend`, with the
    /// rendition's pairing counts so far and the frames its input lags
    /// the reference by, when aligned.
    pub fn frame(
        &self,
        who: &str,
        backend: &str,
        vmaf: f64,
        counts: &Pairing,
        offset: Option<i32>,
    ) {
        let mut all = self.0.lock().unwrap();
        let s = all.entry(who.to_string()).or_default();
        s.backend = backend.to_string();
        s.scored += 1;
        s.vmaf = Some(vmaf);
        s.first_frame.get_or_insert_with(Instant::now);
        let grown = |total: &mut u64, seen: u64, now: u64| {
            *total += if now >= seen { now - seen } else { now };
        };
        let seen = s.seen;
        grown(&mut s.repeated, seen.repeated, counts.repeated);
        grown(&mut s.unscored, seen.unscored, counts.unscored);
        grown(&mut s.dropped, seen.dropped, counts.dropped);
        grown(&mut s.duplicated, seen.duplicated, counts.duplicated);
        grown(&mut s.late, seen.late, counts.late);
        s.seen = *counts;
        s.offset = offset.or(s.offset);
    }

    /// A gap of `seconds` in an input of rendition `who`.
    pub fn gap(&self, who: &str, seconds: f64) {
        let mut all = self.0.lock().unwrap();
        let s = all.entry(who.to_string()).or_default();
        s.gaps += 1;
        s.gap_seconds += seconds;
    }

    /// A window of rendition `who` closed.
    pub fn window(&self, who: &str, w: &WindowSummary) {
        let mut all = self.0.lock().unwrap();
        all.entry(who.to_string()).or_default().window = Some(w.clone());
    }

    /// The OpenMetrics exposition of every rendition.
    pub fn render(&self) -> String {
        let all = self.0.lock().unwrap();
        let mut out = String::new();
        for f in FAMILIES {
            let sample = match f.kind {
                "counter" => format!("{}_total", f.name),
                "info" => format!("{}_info", f.name),
                _ => f.name.to_string(),
            };
            let _ = writeln!(
                out,
                "# TYPE {0} {1}\n# HELP {0} {2}",
                f.name, f.kind, f.help
            );
            for (who, s) in all.iter() {
                for (labels, value) in (f.samples)(s) {
                    let _ = writeln!(
                        out,
                        "{sample}{{rendition=\"{}\"{labels}}} {value}",
                        escape(who)
                    );
                }
            }
        }
        out.push_str("# EOF\n");
        out
    }
}

/// One metric family: its name, type and help, and a rendition's samples
/// (the labels after `rendition`, and the value).
struct Family {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    samples: fn(&Series) -> Vec<(String, String)>,
}

/// One sample without labels of its own.
fn plain(value: String) -> Vec<(String, String)> {
    vec![(String::new(), value)]
}

const FAMILIES: &[Family] = &[
    Family {
        name: "vmafhip_backend",
        kind: "info",
        help: "The engine and device scoring the rendition.",
        samples: |s| vec![(format!(",backend=\"{}\"", escape(&s.backend)), "1".into())],
    },
    Family {
        name: "vmafhip_frames_scored",
        kind: "counter",
        help: "Frames scored.",
        samples: |s| plain(s.scored.to_string()),
    },
    Family {
        name: "vmafhip_frames_repeated",
        kind: "counter",
        help: "Reference frames scored against a repeated distorted picture (the distorted branch missed a frame).",
        samples: |s| plain(s.repeated.to_string()),
    },
    Family {
        name: "vmafhip_frames_unscored",
        kind: "counter",
        help: "Reference frames not scored (no distorted frame in time).",
        samples: |s| plain(s.unscored.to_string()),
    },
    Family {
        name: "vmafhip_frames_late",
        kind: "counter",
        help: "Of the unscored reference frames, those lost to late delivery on this machine (the reference frame, or its distorted frame, came too late to score).",
        samples: |s| plain(s.late.to_string()),
    },
    Family {
        name: "vmafhip_gaps",
        kind: "counter",
        help: "Gaps in either input: stretches of half a second or more with no frame (a stall, a reconnect).",
        samples: |s| plain(s.gaps.to_string()),
    },
    Family {
        name: "vmafhip_gap_seconds",
        kind: "counter",
        help: "Seconds of the inputs' timelines lost in gaps.",
        samples: |s| plain(number(s.gap_seconds)),
    },
    Family {
        name: "vmafhip_frames_dropped",
        kind: "counter",
        help: "Reference frames the distorted input dropped (align: found by content, not scored).",
        samples: |s| plain(s.dropped.to_string()),
    },
    Family {
        name: "vmafhip_frames_duplicated",
        kind: "counter",
        help: "Distorted frames that repeat the one before (align: scored against the same reference frame).",
        samples: |s| plain(s.duplicated.to_string()),
    },
    Family {
        name: "vmafhip_align_offset",
        kind: "gauge",
        help: "Frames the distorted input lags the reference by (align).",
        samples: |s| {
            s.offset
                .map(|o| (String::new(), o.to_string()))
                .into_iter()
                .collect()
        },
    },
    Family {
        name: "vmafhip_vmaf",
        kind: "gauge",
        help: "VMAF of the last frame scored.",
        samples: |s| {
            s.vmaf
                .map(|v| (String::new(), number(v)))
                .into_iter()
                .collect()
        },
    },
    Family {
        name: "vmafhip_window_vmaf",
        kind: "gauge",
        help: "VMAF over the last window (the element's window property), by statistic.",
        samples: |s| {
            s.window
                .iter()
                .flat_map(|w| {
                    [
                        ("mean", w.mean),
                        ("harmonic_mean", w.harmonic_mean),
                        ("min", w.min),
                        ("low_1", w.low_1),
                    ]
                    .map(|(stat, v)| (format!(",stat=\"{stat}\""), number(v)))
                })
                .collect()
        },
    },
    Family {
        name: "vmafhip_window_frames",
        kind: "gauge",
        help: "Frames in the last window.",
        samples: |s| {
            s.window
                .iter()
                .flat_map(|w| plain(w.frames.to_string()))
                .collect()
        },
    },
    Family {
        name: "vmafhip_alert",
        kind: "gauge",
        help: "1 while the last window's mean VMAF is below alert-below.",
        samples: |s| plain(u8::from(s.window.as_ref().is_some_and(|w| w.alert)).to_string()),
    },
    Family {
        name: "vmafhip_fps",
        kind: "gauge",
        help: "Frames scored per second of wall clock since the rendition's first frame.",
        samples: |s| {
            let secs = s.first_frame.map_or(0.0, |t| t.elapsed().as_secs_f64());
            plain(number(if secs > 0.0 {
                s.scored as f64 / secs
            } else {
                0.0
            }))
        },
    },
];

/// A label value as OpenMetrics writes it.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A sample value as OpenMetrics writes it.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// `ADDR:PORT`, `:PORT` or `PORT` (loopback then) as a socket address.
pub fn parse_address(a: &str) -> Result<SocketAddr, String> {
    let full = if a.parse::<u16>().is_ok() {
        format!("127.0.0.1:{a}")
    } else if let Some(port) = a.strip_prefix(':') {
        format!("127.0.0.1:{port}")
    } else {
        a.to_string()
    };
    full.parse().map_err(|_| {
        format!("metrics-address \"{a}\": write PORT, :PORT or ADDRESS:PORT (127.0.0.1:9464)")
    })
}

/// The HTTP server of one running element.
pub struct MetricsServer {
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
    /// Where it listens (the port chosen when 0 was asked).
    pub url: String,
}

impl MetricsServer {
    /// Serves `metrics` at `/metrics` on `address` until dropped.
    pub fn start(address: &str, metrics: Metrics) -> Result<MetricsServer, String> {
        let addr = parse_address(address)?;
        let server = tiny_http::Server::http(addr)
            .map_err(|e| format!("metrics-address {addr}: cannot listen: {e}"))?;
        let bound = server
            .server_addr()
            .to_ip()
            .map_or(addr.to_string(), |a| a.to_string());
        let server = Arc::new(server);
        let serving = server.clone();
        let thread = std::thread::Builder::new()
            .name("vmafhip-metrics".into())
            .spawn(move || {
                for request in serving.incoming_requests() {
                    let response = answer(request.url(), &metrics);
                    let _ = request.respond(response);
                }
            })
            .map_err(|e| format!("metrics: no thread: {e}"))?;
        Ok(MetricsServer {
            server,
            thread: Some(thread),
            url: format!("http://{bound}/metrics"),
        })
    }
}

/// The response to a request for `url`.
fn answer(url: &str, metrics: &Metrics) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let path = url.split('?').next().unwrap_or_default();
    if path != "/metrics" {
        return tiny_http::Response::from_string("not found: the metrics are at /metrics\n")
            .with_status_code(404);
    }
    let kind = tiny_http::Header::from_bytes(
        "Content-Type",
        "application/openmetrics-text; version=1.0.0; charset=utf-8",
    )
    .expect("a valid header");
    tiny_http::Response::from_string(metrics.render()).with_header(kind)
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_only_grow_across_a_flush() {
        let m = Metrics::default();
        let mut counts = Pairing {
            repeated: 2,
            unscored: 1,
            ..Pairing::default()
        };
        m.frame("dist_sink", "cpu", 90.0, &counts, None);
        counts.repeated = 3;
        m.frame("dist_sink", "cpu", 91.0, &counts, Some(5));
        // A flush starts the pairing counts again.
        counts = Pairing {
            repeated: 1,
            ..Pairing::default()
        };
        m.frame("dist_sink", "cpu", 92.0, &counts, None);
        let text = m.render();
        assert!(text.contains("vmafhip_frames_scored_total{rendition=\"dist_sink\"} 3\n"));
        assert!(text.contains("vmafhip_frames_repeated_total{rendition=\"dist_sink\"} 4\n"));
        assert!(text.contains("vmafhip_frames_unscored_total{rendition=\"dist_sink\"} 1\n"));
        assert!(text.contains("vmafhip_vmaf{rendition=\"dist_sink\"} 92\n"));
        assert!(text.contains("vmafhip_align_offset{rendition=\"dist_sink\"} 5\n"));
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn labels_and_numbers_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(f64::NEG_INFINITY), "-Inf");
        assert_eq!(number(97.5), "97.5");
    }

    #[test]
    fn addresses_default_to_loopback() {
        assert_eq!(parse_address("9464").unwrap().to_string(), "127.0.0.1:9464");
        assert_eq!(parse_address(":0").unwrap().to_string(), "127.0.0.1:0");
        assert_eq!(
            parse_address("0.0.0.0:80").unwrap().to_string(),
            "0.0.0.0:80"
        );
        assert!(parse_address("localhost").is_err());
    }
}
