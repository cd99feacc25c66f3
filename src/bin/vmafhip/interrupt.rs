//! SIGINT and SIGTERM: the first stops the inputs, so that the frames
//! already read are scored and every results file is written whole, marked
//! interrupted (exit 130); a second exits at once.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Watches for the signals on a thread of its own. Without it (the
/// handlers could not be installed) a signal ends the process as usual.
pub fn watch() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for _ in signals.forever() {
                if REQUESTED.swap(true, Ordering::SeqCst) {
                    eprintln!("\nvmafhip: interrupted again: exiting at once");
                    std::process::exit(crate::cli::Exit::Interrupted as i32);
                }
                eprintln!(
                    "\nvmafhip: interrupted: scoring the frames read so far (interrupt again to exit at once)"
                );
            }
        });
}

/// Whether a signal asked the run to stop.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}
