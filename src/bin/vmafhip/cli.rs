//! The command's options and what they mean: the usage text, the parsed
//! arguments, the exit statuses and the errors for the user. The bottom of
//! the command: it imports none of its other modules.

pub use gstvmafhip::Align;
use gstvmafhip::vmaf::{
    BackendChoice, EngineConfig, ModelSet, ModelSpec, OnGpuError, PixelFormat, settings,
};

/// The command's debug category (`GST_DEBUG=vmafhip-command:5`).
pub static CAT: std::sync::LazyLock<gst::DebugCategory> = std::sync::LazyLock::new(|| {
    gst::DebugCategory::new(
        "vmafhip-command",
        gst::DebugColorFlags::empty(),
        Some("the vmafhip command"),
    )
});

/// `--reconnect`'s default: ten minutes of tries.
pub const RECONNECT_DEFAULT_S: f64 = 600.0;

/// The libvmaf revision whose numbers the engines give.
pub const LIBVMAF_REVISION: &str = "f85a8536 (3.2.0)";

/// `--version`: the command's version, the libvmaf it matches, and the
/// GPU runtime this machine gives it.
pub fn version_text() -> String {
    format!(
        "vmafhip {}\nmatches libvmaf {LIBVMAF_REVISION}\nGPU runtime: {}",
        env!("CARGO_PKG_VERSION"),
        gstvmafhip::vmaf::gpu_runtime()
    )
}

/// Writes to stdout; a reader that has gone (`vmafhip … | head`) ends
/// the command quietly, as it ends `cat`.
pub fn write_stdout(text: std::fmt::Arguments) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_fmt(text).and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            eprintln!("vmafhip: writing the results to stdout: {e}");
            std::process::exit(Exit::Failed as i32);
        }
    }
}

/// `println!` through [`write_stdout`].
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::cli::write_stdout(format_args!("{}\n", format_args!($($t)*)))
    };
}
pub(crate) use outln;

/// Exit statuses (documented in USAGE and README).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Failed = 1,
    Usage = 2,
    BadInput = 3,
    NoGpu = 4,
    Decode = 5,
    /// SIGINT or SIGTERM: the results of the frames scored are written.
    Interrupted = 130,
}

/// An error for the user: what went wrong, and the exit status it gives.
#[derive(Debug)]
pub struct Fail(pub Exit, pub String);

impl Fail {
    pub fn input(msg: impl Into<String>) -> Self {
        Fail(Exit::BadInput, msg.into())
    }
}

pub fn usage(msg: impl Into<String>) -> Fail {
    Fail(
        Exit::Usage,
        format!("{} (vmafhip --help lists the options)", msg.into()),
    )
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutFormat {
    Json,
    Xml,
    Csv,
    Jsonl,
}

#[derive(Clone)]
pub struct Args {
    pub reference: Option<String>,
    pub distorted: Option<String>,
    /// More distorted files: a ladder's renditions (`REF DIST1 DIST2 …`).
    pub more: Vec<String>,
    pub raw: RawArgs,
    pub model: String,
    pub features: Vec<String>,
    pub subsample: u32,
    pub threads: u32,
    pub backend: String,
    pub on_gpu_error: String,
    pub gpu_retry_delay: u32,
    pub device_ids: Vec<i32>,
    /// `--vendor`: which GPU stack the HIP backend loads.
    pub vendor: gstvmafhip::hip::Vendor,
    pub decoder: DecoderChoice,
    pub scale: bool,
    /// The engine's kernel for a DIST of another size (`--scaler`).
    pub scaler: String,
    pub format: Option<OutFormat>,
    pub output: Option<String>,
    pub report: Option<String>,
    pub progress: bool,
    pub quiet: bool,
    pub pairs: Option<String>,
    pub output_dir: Option<String>,
    pub summary: Option<String>,
    pub shard: Option<(usize, usize)>,
    pub jobs: Option<usize>,
    /// Whether the metrics read chroma (set from the model and features
    /// once parsed): raw inputs read only what they need.
    pub needs_chroma: bool,
    /// Reader threads per raw or Y4M file (`--read-threads`; else by the
    /// cores and `pairs_at_once`).
    pub read_threads: Option<usize>,
    /// Pairs scored at the same time (1, or --pairs' jobs).
    pub pairs_at_once: usize,
    /// Inputs of different lengths score their overlap and exit 0
    /// (`--allow-length-mismatch`); else exit 5.
    pub allow_length_mismatch: bool,
    /// Rolling scores: the window in nanoseconds (0: none), the alert
    /// threshold and the hook (`--window`, `--alert-below`, `--on-alert`).
    pub window: u64,
    pub alert_below: f64,
    pub on_alert: Option<String>,
    /// Where the metrics endpoint listens (`--metrics`).
    pub metrics: Option<String>,
    /// The frame offset between REF and DIST (`--align`).
    pub align: Align,
    /// Live sources: stop after this many seconds (`--duration`).
    pub duration: Option<f64>,
    /// Live sources: seconds a failed source is tried again for
    /// (`--reconnect`; 0: not at all).
    pub reconnect: f64,
}

impl Args {
    fn defaults() -> Args {
        Args {
            reference: None,
            distorted: None,
            more: Vec::new(),
            raw: RawArgs::default(),
            model: "version=vmaf_v0.6.1".into(),
            features: Vec::new(),
            subsample: settings::SUBSAMPLE.default,
            threads: settings::THREADS.default,
            backend: settings::BACKEND.default.into(),
            on_gpu_error: settings::ON_GPU_ERROR.default.into(),
            gpu_retry_delay: settings::GPU_RETRY_DELAY.default,
            device_ids: vec![settings::DEVICE_ID.default],
            vendor: gstvmafhip::hip::Vendor::Auto,
            decoder: DecoderChoice::Auto,
            scale: true,
            scaler: "bicubic".into(),
            format: None,
            output: None,
            report: None,
            progress: false,
            quiet: false,
            pairs: None,
            output_dir: None,
            summary: None,
            shard: None,
            jobs: None,
            needs_chroma: true,
            read_threads: None,
            pairs_at_once: 1,
            allow_length_mismatch: false,
            window: 0,
            alert_below: 0.0,
            on_alert: None,
            metrics: None,
            align: Align::Off,
            duration: None,
            reconnect: RECONNECT_DEFAULT_S,
        }
    }
}

pub fn parse(argv: impl Iterator<Item = String>) -> Result<Args, Fail> {
    let mut a = Args::defaults();
    let mut it = argv.peekable();
    let mut positional = Vec::new();
    while let Some(arg) = it.next() {
        let mut val = || {
            it.next()
                .ok_or_else(|| usage(format!("{arg} needs a value")))
        };
        if input_option(&mut a, &arg, &mut val)?
            || engine_option(&mut a, &arg, &mut val)?
            || live_option(&mut a, &arg, &mut val)?
            || output_option(&mut a, &arg, &mut val)?
        {
            continue;
        }
        match arg.as_str() {
            "--help" => {
                outln!("{}", crate::usage::usage_text());
                std::process::exit(0);
            }
            "--version" | "-V" => {
                outln!("{}", version_text());
                std::process::exit(0);
            }
            s if s.starts_with('-') && s.len() > 1 => {
                return Err(usage(format!("unknown option {s}")));
            }
            _ => positional.push(arg),
        }
    }
    // -r and -d name one pair; REF DIST1 DIST2 … a ladder.
    let flagged = a.reference.is_some() || a.distorted.is_some();
    let mut positional = positional.into_iter();
    if a.reference.is_none() {
        a.reference = positional.next();
    }
    if a.distorted.is_none() {
        a.distorted = positional.next();
    }
    a.more = positional.collect();
    if let (true, Some(extra)) = (flagged, a.more.first()) {
        return Err(usage(format!(
            "unexpected argument \"{extra}\" (a ladder is REF DIST1 DIST2 …, without -r and -d)"
        )));
    }
    check_mode(&a)?;
    if a.pairs.is_some() && a.format.is_none() {
        // Every pair gets a results file: libvmaf's JSON unless asked.
        a.format = Some(OutFormat::Json);
    }
    if a.output.is_some() && a.format.is_none() {
        // libvmaf's default output layout is XML; a file name says more.
        a.format = Some(
            match a.output.as_deref().and_then(|o| o.rsplit('.').next()) {
                Some("json") => OutFormat::Json,
                Some("csv") => OutFormat::Csv,
                Some("jsonl") => OutFormat::Jsonl,
                _ => OutFormat::Xml,
            },
        );
    }
    Ok(a)
}

/// A model named as the element names it (`vmaf_v0.6.1`, or a file)
/// as libvmaf's `version=` or `path=` string; anything else as it is.
fn bare_model(m: String) -> String {
    let name = m.split(':').next().unwrap_or_default();
    if name.contains('=') {
        m
    } else if gstvmafhip::vmaf::model::built_in_names().contains(&name) {
        format!("version={m}")
    } else if std::path::Path::new(name).is_file() {
        format!("path={m}")
    } else {
        m
    }
}

/// A number option's value.
fn num<T: std::str::FromStr>(flag: &str, v: String) -> Result<T, Fail> {
    v.parse()
        .map_err(|_| usage(format!("{flag}: \"{v}\" is not a valid number")))
}

/// The inputs' options (files, raw geometry, readers); false if `arg` is none.
fn input_option(
    a: &mut Args,
    arg: &str,
    val: &mut dyn FnMut() -> Result<String, Fail>,
) -> Result<bool, Fail> {
    match arg {
        "-r" | "--reference" => a.reference = Some(val()?),
        "-d" | "--distorted" => a.distorted = Some(val()?),
        "-w" | "--width" => a.raw.width = Some(num(arg, val()?)?),
        "-h" | "--height" => a.raw.height = Some(num(arg, val()?)?),
        "-p" | "--pixel_format" => {
            let v = val()?;
            a.raw.format = gstvmafhip::vmaf::PixelFormat::parse(&v)
                .ok_or_else(|| usage(format!("{arg}: \"{v}\": use 420, 422, 444 or 400")))?;
        }
        "-b" | "--bitdepth" => a.raw.bpc = num(arg, val()?)?,
        "--fps" => {
            let v = val()?;
            let (n, d) = v.split_once('/').unwrap_or((&v, "1"));
            let fps = (num::<u32>(arg, n.into())?, num::<u32>(arg, d.into())?);
            if fps.0 == 0 || fps.1 == 0 {
                return Err(usage(format!("--fps: \"{v}\" must be positive")));
            }
            a.raw.fps = Some(fps);
        }
        "--allow-length-mismatch" => a.allow_length_mismatch = true,
        "--read-threads" => {
            let n: usize = num(arg, val()?)?;
            if n == 0 {
                return Err(usage("--read-threads must be at least 1"));
            }
            a.read_threads = Some(n);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// What is computed, and where; false if `arg` is none.
fn engine_option(
    a: &mut Args,
    arg: &str,
    val: &mut dyn FnMut() -> Result<String, Fail>,
) -> Result<bool, Fail> {
    match arg {
        "-m" | "--model" => a.model = bare_model(val()?),
        "--feature" => {
            let f = val()?;
            gstvmafhip::extractors::check_feature(&f)
                .map_err(|e| usage(format!("--feature {f}: {e}")))?;
            a.features.push(f);
        }
        f if f == settings::SUBSAMPLE.flag() => {
            a.subsample = num(arg, val()?)?;
            if a.subsample == 0 {
                return Err(usage("--subsample must be at least 1"));
            }
        }
        f if f == settings::THREADS.flag() => a.threads = num(arg, val()?)?,
        f if f == settings::BACKEND.flag() => {
            a.backend = val()?;
            if BackendChoice::parse(&a.backend).is_none() {
                return Err(usage(format!(
                    "--backend {}: use {}",
                    a.backend,
                    BackendChoice::NAMES.join(", ")
                )));
            }
        }
        f if f == settings::ON_GPU_ERROR.flag() => {
            a.on_gpu_error = val()?;
            if OnGpuError::parse(&a.on_gpu_error).is_none() {
                return Err(usage(format!(
                    "--on-gpu-error {}: use {}",
                    a.on_gpu_error,
                    OnGpuError::NAMES.join(", ")
                )));
            }
        }
        f if f == settings::GPU_RETRY_DELAY.flag() => a.gpu_retry_delay = num(arg, val()?)?,
        f if f == settings::VENDOR.flag() => {
            let v = val()?;
            a.vendor = gstvmafhip::hip::Vendor::parse(&v).ok_or_else(|| {
                usage(format!(
                    "--vendor {v}: use {}",
                    gstvmafhip::hip::Vendor::NAMES.join(", ")
                ))
            })?;
        }
        "--window" => {
            let secs: f64 = num(arg, val()?)?;
            if !(secs > 0.0 && secs < 1e6) {
                return Err(usage("--window: seconds above 0"));
            }
            a.window = (secs * 1e9).round() as u64;
        }
        "--alert-below" => {
            a.alert_below = num(arg, val()?)?;
            if !(0.0..=100.0).contains(&a.alert_below) {
                return Err(usage("--alert-below: a VMAF from 0 to 100"));
            }
        }
        f if f == settings::DEVICE_ID.flag() => {
            let v = val()?;
            a.device_ids = v
                .split(',')
                .map(|d| num(arg, d.trim().to_string()))
                .collect::<Result<_, _>>()?;
        }
        "--decoder" => {
            let v = val()?;
            a.decoder = DecoderChoice::parse(&v)
                .ok_or_else(|| usage(format!("--decoder {v}: use auto, gpu or cpu")))?;
        }
        "--scale" => a.scale = true,
        "--no-scale" => a.scale = false,
        "--scaler" => {
            a.scaler = val()?;
            if gstvmafhip::vmaf::ScaleMethod::parse(&a.scaler).is_none() {
                return Err(usage(format!(
                    "--scaler {}: use bicubic, bilinear or lanczos",
                    a.scaler
                )));
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Results, reports, messages and many pairs; false if `arg` is none.
/// The options of live sources, alerts and metrics; true when `arg` was one.
fn live_option(
    a: &mut Args,
    arg: &str,
    val: &mut dyn FnMut() -> Result<String, Fail>,
) -> Result<bool, Fail> {
    match arg {
        "--on-alert" => a.on_alert = Some(val()?),
        "--metrics" => a.metrics = Some(val()?),
        "--align" => a.align = parse_align(&val()?)?,
        "--reconnect" => {
            let secs: f64 = num(arg, val()?)?;
            if !(0.0..1e9).contains(&secs) {
                return Err(usage("--reconnect: seconds, 0 or more"));
            }
            a.reconnect = secs;
        }
        "--duration" => {
            let secs: f64 = num(arg, val()?)?;
            if !(secs > 0.0 && secs < 1e9) {
                return Err(usage("--duration: seconds above 0"));
            }
            a.duration = Some(secs);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn output_option(
    a: &mut Args,
    arg: &str,
    val: &mut dyn FnMut() -> Result<String, Fail>,
) -> Result<bool, Fail> {
    match arg {
        "--pairs" => a.pairs = Some(val()?),
        "--output-dir" => a.output_dir = Some(val()?),
        "--summary" => a.summary = Some(val()?),
        "--shard" => a.shard = Some(parse_shard(&val()?).map_err(usage)?),
        "--jobs" => {
            let n: usize = num(arg, val()?)?;
            if n == 0 {
                return Err(usage("--jobs must be at least 1"));
            }
            a.jobs = Some(n);
        }
        "--json" => a.format = Some(OutFormat::Json),
        "--xml" => a.format = Some(OutFormat::Xml),
        "--csv" => a.format = Some(OutFormat::Csv),
        "--jsonl" => a.format = Some(OutFormat::Jsonl),
        "-o" | "--output" => a.output = Some(val()?),
        "--report" => a.report = Some(val()?),
        "--progress" => a.progress = true,
        "-q" | "--quiet" => a.quiet = true,
        _ => return Ok(false),
    }
    Ok(true)
}

/// One pair, or a list of them: the options that go with each.
fn check_mode(a: &Args) -> Result<(), Fail> {
    if a.window == 0 && (a.alert_below > 0.0 || a.on_alert.is_some()) {
        return Err(usage(
            "--alert-below and --on-alert judge windows: give --window S",
        ));
    }
    let has_inputs = a.reference.is_some() || a.distorted.is_some();
    if a.pairs.is_some() {
        if has_inputs {
            return Err(usage(
                "--pairs takes the pairs from its list, not REF and DIST",
            ));
        }
        if a.output.is_some() || a.report.is_some() {
            return Err(usage(
                "with --pairs, each pair's results go to its OUTPUT or to --output-dir (-o and --report are for one pair)",
            ));
        }
        if a.metrics.is_some() {
            return Err(usage(
                "--metrics serves one run's metrics: not with --pairs",
            ));
        }
        return Ok(());
    }
    for (set, flag) in [
        (a.shard.is_some(), "--shard"),
        (a.summary.is_some(), "--summary"),
        (a.output_dir.is_some(), "--output-dir"),
        (a.jobs.is_some(), "--jobs"),
        (a.device_ids.len() > 1, "--device-id with several GPUs"),
    ] {
        if set {
            return Err(usage(format!("{flag} goes with --pairs")));
        }
    }
    if a.reference.is_none() || a.distorted.is_none() {
        return Err(usage("two inputs are needed: REF and DIST"));
    }
    if live_wanted(a) && !a.more.is_empty() {
        return Err(usage(
            "live sources are scored one DIST at a time: run one command per rendition",
        ));
    }
    if a.duration.is_some() && !live_wanted(a) {
        return Err(usage(
            "--duration goes with live sources (srt://, udp://, rtsp://, rtp://, http(s)://)",
        ));
    }
    if !a.more.is_empty() && a.align != Align::Off {
        return Err(usage(
            "--align aligns one DIST with REF: score a ladder's renditions unaligned, or one at a time",
        ));
    }
    Ok(())
}

/// Whether the metrics asked for read the chroma planes.
pub fn metrics_read_chroma(a: &Args) -> Result<bool, Fail> {
    let (model, ..) = model_properties(&a.model)?;
    let models = ModelSet::load(&model).map_err(|e| usage(format!("--model: {e}")))?;
    let mut config = EngineConfig::new(models);
    config.features = a.features.clone();
    let plan = config.plan().map_err(|e| usage(format!("--model: {e}")))?;
    Ok(plan.reads_chroma())
}

/// The `--feature`s that are extractors of their own (the element's
/// `features` property); PSNR, SSIM and MS-SSIM have properties instead.
pub fn extra_extractors(features: &[String]) -> Vec<String> {
    features
        .iter()
        .filter(|f| !gstvmafhip::extractors::switched().any(|(name, _)| name == f.as_str()))
        .cloned()
        .collect()
}

/// libvmaf's `--model` string as the element's properties: `model-filename`
/// (the model with its overrides) and the two flags.
pub fn model_properties(model: &str) -> Result<(String, bool, bool), Fail> {
    let first = model.split(':').next().unwrap_or_default();
    if !first.contains('=') {
        return Err(usage(format!(
            "--model {first}: not a built-in model ({}) nor a file: write version=NAME or path=FILE",
            gstvmafhip::vmaf::model::built_in_names().join(", ")
        )));
    }
    // Parsed here first, so that a bad string is a usage error naming it.
    let spec = ModelSpec::parse(model).map_err(|e| usage(format!("--model: {e}")))?;
    let mut source = None;
    let mut overrides = Vec::new();
    for kv in model.split(':') {
        match kv.split_once('=') {
            Some(("version" | "path", v)) => source = Some(v.to_string()),
            Some(("name", _)) => {
                return Err(usage(
                    "--model: name= is not supported (the score is reported as \"vmaf\")",
                ));
            }
            Some((k, _)) if k.contains('.') => overrides.push(kv),
            _ => {}
        }
    }
    let mut filename = source.ok_or_else(|| usage("--model: no version= or path="))?;
    for o in overrides {
        filename.push(':');
        filename.push_str(o);
    }
    Ok((
        filename,
        spec.flags.disable_clip,
        spec.flags.enable_transform,
    ))
}

/// `-w -h -p -b --fps`: what a raw `.yuv` cannot say about itself.
#[derive(Clone, Debug)]
pub struct RawArgs {
    pub width: Option<usize>,
    pub height: Option<usize>,
    pub format: PixelFormat,
    pub bpc: u8,
    /// None: the other input's rate (`media::input::share_rate`).
    pub fps: Option<(u32, u32)>,
}

impl Default for RawArgs {
    fn default() -> Self {
        RawArgs {
            width: None,
            height: None,
            format: PixelFormat::Yuv420,
            bpc: 8,
            fps: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecoderChoice {
    Auto,
    Gpu,
    Cpu,
}

impl DecoderChoice {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "auto" => Self::Auto,
            "gpu" => Self::Gpu,
            "cpu" => Self::Cpu,
            _ => return None,
        })
    }
}

/// `--align`'s value: the element's `align`, or a usage error.
pub fn parse_align(v: &str) -> Result<Align, Fail> {
    Align::parse(v).ok_or_else(|| {
        usage(format!(
            "--align {v}: auto, off, or the frames DIST lags REF (negative: leads)"
        ))
    })
}

/// `--shard I/N`: shard I of N.
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard {s}: use I/N with 0 <= I < N (e.g. 0/4)");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// URI schemes received live: with RTSP's transport-forcing variants
/// (`rtspt://` TCP, `rtspu://` UDP, `rtsph://` HTTP tunnel), as rtspsrc
/// takes them.
const LIVE_SCHEMES: &[&str] = &[
    "srt", "udp", "rtp", "http", "https", "rtsp", "rtspt", "rtspu", "rtsph", "rtsps", "rtspst",
    "rtspsu", "rtspsh",
];

/// Whether `input` is a URI of a live source.
pub fn is_live_uri(input: &str) -> bool {
    input
        .split_once("://")
        .is_some_and(|(scheme, _)| LIVE_SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()))
}

/// Whether the command scores live sources: REF or DIST is a live URI.
pub fn live_wanted(a: &Args) -> bool {
    [&a.reference, &a.distorted]
        .into_iter()
        .flatten()
        .any(|i| is_live_uri(i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Result<Args, Fail> {
        parse(s.split_whitespace().map(String::from))
    }

    #[test]
    fn arguments() {
        let a = args("r.mp4 d.mp4 --backend hip --json").unwrap();
        assert_eq!(a.reference.as_deref(), Some("r.mp4"));
        assert_eq!(a.format, Some(OutFormat::Json));
        let a = args("-r r.yuv -d d.yuv -w 64 -h 48 -b 10 -o out.csv --fps 30000/1001").unwrap();
        assert_eq!(
            (a.raw.width, a.raw.height, a.raw.bpc),
            (Some(64), Some(48), 10)
        );
        assert_eq!(a.format, Some(OutFormat::Csv));
        assert_eq!(a.raw.fps, Some((30000, 1001)));
        let a = args("r d1 d2 d3").unwrap();
        assert_eq!(
            (a.distorted.as_deref(), &a.more[..]),
            (Some("d1"), &["d2".to_string(), "d3".to_string()][..])
        );
        for (bad, needle) in [
            ("r.mp4", "two inputs"),
            ("-r r -d d e", "unexpected argument"),
            ("r d --backend gpu", "use auto, cpu, hip"),
            ("r d --feature sharpness", "no feature \"sharpness\""),
            (
                "r d --feature cambi=no_such=1",
                "unknown option \"no_such\"",
            ),
            ("r d -w x", "not a valid number"),
            ("r d --bogus", "unknown option"),
            ("r d --subsample 0", "at least 1"),
        ] {
            let Err(Fail(code, msg)) = args(bad) else {
                panic!("{bad} parsed")
            };
            assert_eq!(code, Exit::Usage, "{bad}");
            assert!(msg.contains(needle), "{bad}: {msg}");
        }
    }

    #[test]
    fn model_strings() {
        assert_eq!(
            model_properties("version=vmaf_v1.0.16_3d0h:cambi.enc_width=288:disable_clip").unwrap(),
            (
                "vmaf_v1.0.16_3d0h:cambi.enc_width=288".to_string(),
                true,
                false
            )
        );
        assert!(model_properties("version=nope").is_err());
        assert!(model_properties("version=vmaf_v0.6.1:name=x").is_err());
    }

    #[test]
    fn live_uris_are_told_from_files() {
        for uri in [
            "srt://127.0.0.1:7001",
            "udp://127.0.0.1:5000",
            "rtsp://cam/stream",
            "rtspt://cam/stream",
            "RTSPU://cam/stream",
            "rtp://0.0.0.0:5004",
            "https://cdn/live.m3u8",
        ] {
            assert!(is_live_uri(uri), "{uri}");
        }
        for file in ["in.mp4", "file:///tmp/in.mp4", "dir/with://odd"] {
            assert!(!is_live_uri(file), "{file}");
        }
    }

    #[test]
    fn shards_parse() {
        assert_eq!(parse_shard("2/3"), Ok((2, 3)));
        for bad in ["3/3", "1/0", "x/2", "1", "-1/2"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }
}
