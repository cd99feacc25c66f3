//! Rolling scores on stderr and the `--on-alert` hook: the element posts a
//! `window` message per window and a warning (an info) with the window as
//! details when `alert-below` is crossed down (up); this prints the windows
//! and runs the user's command at each crossing.

use gstvmafhip::VmafWindowMessage;
use std::process::Command;
use std::sync::Mutex;
use std::sync::mpsc::{Sender, channel};
use std::thread::JoinHandle;

/// The `--on-alert` runner: one thread running each crossing's command in
/// turn, in the order of the crossings, so that a recovery never runs
/// before its alert.
struct Runner {
    queue: Sender<Command>,
    thread: JoinHandle<()>,
}

static RUNNER: Mutex<Option<(String, Runner)>> = Mutex::new(None);

/// The command `--on-alert` gave, run for the rest of the process.
pub fn set_hook(cmd: String) {
    let (queue, jobs) = channel::<Command>();
    let thread = std::thread::spawn(move || {
        for mut c in jobs {
            if let Err(e) = c.status() {
                eprintln!("warning: --on-alert: cannot run it: {e}");
            }
        }
    });
    *RUNNER.lock().unwrap() = Some((cmd, Runner { queue, thread }));
}

/// A window's line: where it is, its rolling scores.
pub fn window_line(m: &VmafWindowMessage) -> String {
    let secs = |ns: u64| ns as f64 / 1e9;
    let who = m.label.as_deref().unwrap_or(&m.rendition);
    let w = &m.summary;
    let who = if who == "dist_sink" || who == "dist_sink_0" {
        String::new()
    } else {
        format!("{who} ")
    };
    let mut line = format!(
        "window {who}{:.2}-{:.2} s: VMAF {:.2} (harmonic mean {:.2}, min {:.2}, 1% low {:.2}), {} frames",
        secs(w.start),
        secs(w.start + w.length),
        w.mean,
        w.harmonic_mean,
        w.min,
        w.low_1,
        w.frames
    );
    if w.repeated + w.unscored > 0 {
        line += &format!(", {} repeated, {} unscored", w.repeated, w.unscored);
    }
    if w.partial {
        line += " (cut short by the end)";
    }
    if w.alert {
        line += " [alert]";
    }
    line
}

/// A warning or info about a crossing of `alert-below`: queues the hook
/// (if any) with the window in its environment; the scoring does not wait
/// for it, the command's exit does ([`wait_for_hooks`]).
pub fn crossed(details: Option<&gst::StructureRef>, text: &str) {
    let guard = RUNNER.lock().unwrap();
    let (Some((cmd, runner)), Some(m)) = (
        guard.as_ref(),
        details.and_then(|d| VmafWindowMessage::try_from(d).ok()),
    ) else {
        return;
    };
    let w = &m.summary;
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(cmd)
        .env("VMAFHIP_ALERT", if w.alert { "raised" } else { "cleared" })
        .env("VMAFHIP_VMAF", format!("{:.6}", w.mean))
        .env(
            "VMAFHIP_WINDOW_START",
            format!("{:.3}", w.start as f64 / 1e9),
        )
        .env(
            "VMAFHIP_RENDITION",
            m.label.as_deref().unwrap_or(&m.rendition),
        )
        .env("VMAFHIP_MESSAGE", text);
    let _ = runner.queue.send(c);
}

/// Waits for every hook queued to have run (at the command's end).
pub fn wait_for_hooks() {
    if let Some((_, runner)) = RUNNER.lock().unwrap().take() {
        drop(runner.queue);
        let _ = runner.thread.join();
    }
}
