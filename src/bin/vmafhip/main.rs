//! `vmafhip REF DIST [options]`: VMAF between two files, through the
//! `vmafhip` element, on the GPU when one is usable. Any file GStreamer
//! decodes works (decodebin); raw `.yuv` takes `-w -h -p -b` like libvmaf's
//! `vmaf`; `.y4m` is read directly. Results use libvmaf's layouts.

mod alert;
mod align;
mod cli;
mod heap;
mod interrupt;
mod ladder;
mod live;
mod media;
mod pair;
mod pairs;
mod reconnect;
mod usage;

use cli::{Args, Exit, Fail};
use media::decode;
use pair::{Pair, Voice};
use std::io::IsTerminal;

/// Opens the GPU while GStreamer is set up and the inputs are probed,
/// ranks the decoders, and scores one pair or the list.
fn run(mut a: Args) -> Result<(), Fail> {
    let live_inputs = cli::live_wanted(&a);
    if live_inputs {
        heap::for_a_station();
    }
    let warm_up = decode::GpuWarmUp::start(&a.backend, a.vendor, &a.device_ids);
    gst::init().map_err(|e| Fail(Exit::Failed, format!("GStreamer: {e}")))?;
    gstvmafhip::plugin_register_static()
        .map_err(|e| Fail(Exit::Failed, format!("registering vmafhip: {e}")))?;
    a.needs_chroma = cli::metrics_read_chroma(&a)?;
    if let Some(list) = a.pairs.clone() {
        return pairs::run(&a, &list, warm_up);
    }
    let gpu = warm_up.wait();
    gst::debug!(
        cli::CAT,
        "GPU open: {}",
        gpu.as_ref().is_some_and(|g| g.is_ok())
    );
    let decoding = decode::rank_decoders(a.decoder, &a.backend, gpu.as_ref())?;
    let voice = Voice {
        notes: !a.quiet,
        progress: !a.quiet && (a.progress || std::io::stderr().is_terminal()),
    };
    if live_inputs {
        return live::run(&a, voice);
    }
    if !a.more.is_empty() {
        let mut paths = vec![a.reference.clone().expect("checked")];
        paths.push(a.distorted.clone().expect("checked"));
        paths.extend(a.more.iter().cloned());
        return ladder::run(&a, &paths, &decoding, voice);
    }
    let pair = Pair {
        reference: a.reference.clone().expect("checked"),
        distorted: a.distorted.clone().expect("checked"),
        output: a.output.clone(),
        report: a.report.clone(),
        device_id: a.device_ids[0],
    };
    let scored = pair::score_pair(&a, &pair, &decoding, voice)?;
    gst::debug!(cli::CAT, "scored");
    let p = &scored.pooled;
    if !a.quiet {
        eprintln!(
            "VMAF {:.6} (mean of {} frames{}; harmonic mean {:.6}, min {:.6}), {:.1} fps, {}{}",
            p.mean,
            p.frames,
            coverage_note(p),
            p.harmonic_mean,
            p.min,
            p.frames as f64 / scored.secs.max(1e-9),
            p.backend,
            decoded_with(&scored.decoders)
        );
        if let Some(line) = align::summary(p) {
            eprintln!("{line}");
        }
        for (what, path) in [("results", &a.output), ("report", &a.report)] {
            if let Some(path) = path {
                eprintln!("{what}: {path}");
            }
        }
    }
    if p.interrupted {
        return Err(Fail(Exit::Interrupted, "interrupted".into()));
    }
    match pair::length_mismatch(&a, p, &pair.reference, &pair.distorted) {
        Some(fail) => Err(fail),
        None => Ok(()),
    }
}

/// `, of N reference frames` (and the distorted count) where not every
/// reference frame was scored; `, interrupted` for a run stopped early.
fn coverage_note(p: &gstvmafhip::VmafPooledMessage) -> String {
    let c = &p.pairing;
    let mut note = String::new();
    if c.reference() != p.frames || c.distorted_past_end {
        note = format!(
            " of {} reference frames, {} distorted{}",
            c.reference(),
            c.distorted,
            if c.distorted_past_end { "+" } else { "" }
        );
    }
    if p.interrupted {
        note.push_str(", interrupted");
    }
    note
}

/// `, decoded with A / B` for media inputs; nothing for raw and Y4M.
fn decoded_with(decoders: &[String; 2]) -> String {
    if decoders.iter().all(|d| d == "raw" || d == "y4m") {
        String::new()
    } else {
        format!(", decoded with {} / {}", decoders[0], decoders[1])
    }
}

fn main() {
    interrupt::watch();
    let result = cli::parse(std::env::args().skip(1))
        .inspect(|a| {
            if let Some(cmd) = &a.on_alert {
                alert::set_hook(cmd.clone());
            }
        })
        .and_then(run);
    alert::wait_for_hooks();
    if let Err(Fail(code, msg)) = result {
        eprintln!("vmafhip: {msg}");
        std::process::exit(code as i32);
    }
}
