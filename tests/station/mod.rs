//! What the live station tests share: one station at a time, free ports,
//! the command run on two URIs with its stderr read as it comes, an RTSP
//! server, and the pooled line of the results.
#![allow(dead_code)]

use crate::command_line::*;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Held by each station test: one station at a time on this machine (each
/// runs two real-time x264 encoders, two decoders and a CPU engine), so
/// that the tests do not load each other past what a station is sized for.
pub static ONE_STATION: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// This test's turn (a failed test's poisoned lock is taken all the same).
pub fn one_station() -> std::sync::MutexGuard<'static, ()> {
    ONE_STATION.lock().unwrap_or_else(|e| e.into_inner())
}

/// Two free UDP ports on loopback.
pub fn free_ports() -> (u16, u16) {
    let a = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let b = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    (
        a.local_addr().unwrap().port(),
        b.local_addr().unwrap().port(),
    )
}

/// The command's stderr as lines (split at `\n` and at the status line's
/// `\r`), sent as they come.
pub fn stderr_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let mut err = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while err.read(&mut byte).is_ok_and(|n| n == 1) {
            if byte[0] == b'\n' || byte[0] == b'\r' {
                // Without the status line's "erase the line" escapes.
                let text = String::from_utf8_lossy(&line).replace("\x1b[K", "");
                if !text.is_empty() {
                    let _ = tx.send(text);
                }
                line.clear();
            } else {
                line.push(byte[0]);
            }
        }
    });
    rx
}

/// The command's stderr lines up to its "scoring" note (its sockets are
/// bound then), at most a minute of them.
pub fn until_scoring(lines: &mpsc::Receiver<String>) -> Vec<String> {
    let mut said = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let Ok(l) = lines.recv_timeout(Duration::from_secs(1)) else {
            continue;
        };
        let started = l.starts_with("note: scoring");
        said.push(l);
        if started {
            break;
        }
    }
    said
}

/// The command running on two URIs (with `--align auto --backend cpu -o
/// OUT`), its stderr read as it comes.
pub struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    /// Its stderr lines so far.
    pub said: Vec<String>,
}

impl Running {
    /// Starts the command and waits until it says it is scoring (its
    /// sockets bound).
    pub fn start(uris: [&str; 2], out: &Path, args: &[&str]) -> Running {
        let mut child = vmafhip()
            .args(uris)
            .args(["--align", "auto", "--backend", "cpu", "-o", s(out)])
            .args(args)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = stderr_lines(&mut child);
        let said = until_scoring(&lines);
        Running { child, lines, said }
    }

    /// Reads its lines until one that `wanted` holds for (two minutes at
    /// most: then it fails, saying `what` and what was said); returns it.
    pub fn until(&mut self, what: &str, wanted: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            match self.lines.recv_timeout(Duration::from_secs(1)) {
                Ok(l) => {
                    self.said.push(l.clone());
                    if wanted(&l) {
                        return l;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let _ = self.child.kill();
        panic!("never said {what}:\n{}", self.said.join("\n"));
    }

    /// Reads it to its end; returns all it said, asserting it succeeded.
    pub fn finish(mut self) -> String {
        self.said.extend(self.lines.iter());
        let status = self.child.wait().unwrap();
        let text = self.said.join("\n");
        println!("{text}");
        assert!(status.success(), "{text}");
        text
    }
}

/// Runs the command on `uris` with `args`, `scoring` called once it says it
/// is scoring; returns its stderr, asserting that it succeeded.
pub fn station(uris: [&str; 2], out: &Path, args: &[&str], scoring: impl FnOnce()) -> String {
    let run = Running::start(uris, out, args);
    scoring();
    run.finish()
}

/// The first line a server started with piped stdout says (its port).
pub fn first_line(server: &mut Child) -> String {
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    first
}

/// A server process of a test, ended when it is dropped: a test that
/// fails leaves none running (nor holding its output pipes open).
pub struct Server(pub Child);

impl Server {
    /// Ends it now.
    pub fn stop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Debian's Python with GStreamer's bindings, which the RTSP server needs.
pub const SYSTEM_PYTHON: &str = "/usr/bin/python3";

/// `tests/servers/rtsp.py` serving `dir`'s pair (`mounts`: other files
/// at other mounts, `NAME=FILE`) on `port` (0: a free one), and its port.
pub fn rtsp_server(dir: &Path, port: u16, mounts: &[&str]) -> (Server, u16) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/rtsp.py");
    let mut server = std::process::Command::new(SYSTEM_PYTHON)
        .arg(script)
        .arg(dir)
        .arg(port.to_string())
        .args(mounts)
        .stdout(Stdio::piped())
        .spawn()
        .expect("/usr/bin/python3 (with python3-gi and gir1.2-gst-rtsp-server-1.0)");
    let first = first_line(&mut server);
    let port = first
        .trim()
        .strip_prefix("port ")
        .and_then(|p| p.parse().ok());
    let Some(port) = port else {
        let _ = server.kill();
        panic!(
            "the RTSP server did not start (said {first:?}): is gir1.2-gst-rtsp-server-1.0 installed?"
        );
    };
    (Server(server), port)
}

/// The pooled line's `inputs` of a station's JSON Lines results.
pub fn pooled_inputs(out: &Path) -> serde_json::Value {
    std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|l| l.get("inputs").cloned())
        .expect("an inputs line")
}
