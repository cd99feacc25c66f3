//! The command's usage text: the fixed part, and the engine's options
//! rendered from `vmaf::settings` (each setting's flag, value, help and
//! default), wrapped to the terminal's usual width. The bottom of the
//! command with `cli`: it imports none of its other modules.

use gstvmafhip::vmaf::settings;

const USAGE: &str = "\
usage: vmafhip REF DIST [options]
       vmafhip -r REF -d DIST [options]
       vmafhip REF DIST1 DIST2 … [options]
       vmafhip --pairs LIST.csv [--shard I/N] [options]

Inputs: any media file GStreamer decodes; raw .yuv (with -w -h [-p] [-b]);
.y4m. DIST is scaled to REF's size when they differ; frames are paired by
time, each file's starting at its first frame: each reference frame is
scored against the distorted frame shown at that time. Live sources:
srt://, udp://, rtsp://, rtp:// and HLS http(s):// URIs (either input),
scored as they come until interrupted or --duration; results as JSON
Lines (to -o FILE or stdout) and a status line on stderr.

  -w, --width N          raw .yuv width
  -h, --height N         raw .yuv height
  -p, --pixel_format F   raw .yuv chroma: 420 (default), 422, 444, 400
  -b, --bitdepth N       raw .yuv bit depth: 8 (default), 10, 12
      --fps N[/D]        raw .yuv frame rate (default: the other input's;
                         25 when both are raw)
      --allow-length-mismatch
                         inputs of different lengths: score the frames both
                         have and exit 0 (default: exit 5 after writing)
      --read-threads N   threads reading each raw/.y4m file (default: three
                         eighths of the cores over the pairs at once, 1-6)
  -m, --model STR        libvmaf model string: version=NAME or path=FILE,
                         with :FEATURE.OPTION=VALUE overrides, :disable_clip,
                         :enable_transform (default version=vmaf_v0.6.1)
      --feature NAME     also compute one of {FEATURES}
                         (repeatable)
{ENGINE}
      --decoder D        media files: auto (default: the GPU's decoders when
                         the engine runs on a GPU, else the CPU's), gpu, cpu
      --scale / --no-scale
                         scale DIST to REF's size when they differ (default on),
                         in the engine: the same samples on the GPU and CPU
      --scaler K         its kernel: bicubic (default; ffmpeg's, B=0 C=0.6),
                         bilinear or lanczos
      --json | --xml | --csv
                         results in libvmaf's layout, to -o FILE or stdout
      --jsonl            results as JSON Lines (a header line, a line per
                         frame, the pooled line): whole up to the last frame
                         written, even if the run is killed
  -o, --output FILE      results file
      --report FILE      self-contained HTML report (curve, metrics, worst frames)
      --window S         print a rolling score every S seconds of the
                         inputs: mean, harmonic mean, minimum, 1% low
      --alert-below V    with --window: warn once when a window's mean VMAF
                         falls below V, note once when it is back
      --on-alert CMD     run `sh -c CMD` at each alert and recovery, with
                         VMAFHIP_ALERT (raised or cleared), VMAFHIP_VMAF
                         (the window's mean), VMAFHIP_WINDOW_START (s),
                         VMAFHIP_RENDITION and VMAFHIP_MESSAGE set
      --align A          how DIST's frames are paired with REF's: off
                         (default: by time), auto (by content: the offset
                         found from the first seconds, within 2 s, then
                         dropped and repeated frames followed), or N frames
                         DIST lags REF (negative: leads), then followed
      --duration S       live sources: stop after S seconds (default: run
                         until interrupted)
      --reconnect S      live sources: a source that fails is started
                         again (after 1, 2, 4, then every 8 s) until it is
                         back or has failed for S seconds (default 600;
                         0: stop at its first error)
      --metrics ADDR     serve OpenMetrics at http://ADDR/metrics while it
                         runs (PORT or :PORT: loopback; 0 picks a port)
      --progress         show progress even when stderr is not a terminal
      --version          the version, the libvmaf it matches, the GPU found
  -q, --quiet            no progress, no summary

An encoding ladder: REF DIST1 DIST2 … scores every rendition against REF
in one pipeline (one element; each rendition of another size scaled to
REF's by the engine, bicubic, on the GPU when it runs there) and prints a
table: rendition, size, VMAF (mean), harmonic mean, 1% low (the k-th lowest
frame, k = frames/100 rounded up), frames. With -o out.json each rendition
gets out.NAME.json, NAME its file name without the extension; --report
draws every rendition's curve in one plot.

Many pairs in one run (a catalogue):
      --pairs FILE       CSV lines REF,DIST[,OUTPUT] (# comments; a header
                         line ref,dist,output is skipped); every other option
                         applies to each pair. Results go to OUTPUT, else to
                         DIST's name with the format's extension in
                         --output-dir (JSON unless --xml, --csv or --jsonl)
      --output-dir DIR   where results without an OUTPUT go (default .)
      --summary FILE     the summary table as CSV too
      --shard I/N        score only the pairs I, I+N, I+2N, … (from 0), for
                         array jobs across machines
      --jobs N           pairs scored at once (default: one per core, at most
                         16 per GPU; 1 with --backend cpu)

Exit status: 0 done; 2 bad arguments; 3 bad input (unreadable, not a video,
wrong raw size, sizes differ with --no-scale); 4 --backend hip with no usable
GPU; 5 a decode or read error while running, or one input ending before
the other (the results are written); 130 interrupted (SIGINT or SIGTERM:
the frames scored so far are written, marked interrupted); 1 anything else.";

/// Where the help's descriptions start, and how wide they run.
const HELP_COLUMN: usize = 25;
const HELP_WIDTH: usize = 77;

/// USAGE with the extractors `--feature` takes (from the registry) and
/// the engine's options (from `vmaf::settings`, as every front end shows
/// them), wrapped to the help's column.
pub fn usage_text() -> String {
    let names = gstvmafhip::extractors::feature_names();
    let list = wrapped(&names.join(", "), HELP_COLUMN, "also compute one of ".len());
    USAGE
        .replace("{FEATURES}", &list)
        .replace("{ENGINE}", &engine_usage())
}

/// The engine settings' usage lines.
fn engine_usage() -> String {
    let id = &settings::DEVICE_ID;
    [
        setting_line(&settings::SUBSAMPLE),
        setting_line(&settings::THREADS),
        setting_line(&settings::BACKEND),
        setting_line(&settings::VENDOR),
        setting_line(&settings::ON_GPU_ERROR),
        setting_line(&settings::GPU_RETRY_DELAY),
        usage_line(
            id.flag(),
            &format!("{}[,M…]", id.value),
            format!(
                "{}; with --pairs, a list spreads the pairs over those GPUs",
                id.described()
            ),
        ),
    ]
    .join("\n")
}

/// A setting's usage line, from its declaration.
fn setting_line<T: std::fmt::Display>(s: &settings::Setting<T>) -> String {
    usage_line(s.flag(), s.value, s.described())
}

/// One option's usage: `--FLAG VALUE` and its description wrapped to the
/// help's column (on the next line when the option is wider).
fn usage_line(flag: String, value: &str, text: String) -> String {
    let head = format!("      {flag} {value}");
    // The settings' help is a property's blurb: a capital first.
    let mut text = text;
    if let Some(first) = text.get(..1) {
        text = first.to_lowercase() + &text[1..];
    }
    let body = wrapped(&text, HELP_COLUMN, 0);
    if head.len() < HELP_COLUMN {
        format!("{head:<HELP_COLUMN$}{body}")
    } else {
        format!("{head}\n{}{body}", " ".repeat(HELP_COLUMN))
    }
}

/// `text` wrapped to the help's width, continuation lines indented to
/// `column`; the first line starts at `column + used`.
fn wrapped(text: &str, column: usize, used: usize) -> String {
    let room = HELP_WIDTH - column;
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let taken = if lines.is_empty() { used } else { 0 };
        if !line.is_empty() && taken + line.chars().count() + 1 + word.chars().count() > room {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines.join(&format!("\n{}", " ".repeat(column)))
}
