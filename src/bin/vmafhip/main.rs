//! `vmafhip REF DIST [options]`: VMAF between two files, through the
//! `vmafhip` element, on the GPU when one is usable. Any file GStreamer
//! decodes works (decodebin); raw `.yuv` takes `-w -h -p -b` like libvmaf's
//! `vmaf`; `.y4m` is read directly. Results use libvmaf's layouts.

mod feed;
mod input;

use gst::prelude::*;
use gstvmafhip::vmaf::model::ModelSpec;
use gstvmafhip::{VmafFrameMessage, VmafPooledMessage};
use input::{Input, Kind, Role};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

const USAGE: &str = "\
usage: vmafhip REF DIST [options]
       vmafhip -r REF -d DIST [options]

Inputs: any media file GStreamer decodes; raw .yuv (with -w -h [-p] [-b]);
.y4m. DIST is scaled to REF's size when they differ; frames are paired by
time, each file's starting at its first frame: each reference frame is
scored against the distorted frame shown at that time.

  -w, --width N          raw .yuv width
  -h, --height N         raw .yuv height
  -p, --pixel_format F   raw .yuv chroma: 420 (default), 422, 444, 400
  -b, --bitdepth N       raw .yuv bit depth: 8 (default), 10, 12
      --fps N[/D]        raw .yuv frame rate for timestamps (default 25)
  -m, --model STR        libvmaf model string: version=NAME or path=FILE,
                         with :FEATURE.OPTION=VALUE overrides, :disable_clip,
                         :enable_transform (default version=vmaf_v0.6.1)
      --feature NAME     also compute psnr, float_ssim, float_ms_ssim, cambi
                         or speed_chroma (repeatable)
      --subsample N      score every Nth frame
      --threads N        CPU threads (0 = one per core)
      --backend B        auto (default: GPU if usable, else CPU), cpu, hip
      --device-id N      GPU index
      --scale / --no-scale
                         scale DIST to REF's size when they differ (default on)
      --json | --xml | --csv
                         results in libvmaf's layout, to -o FILE or stdout
  -o, --output FILE      results file
      --report FILE      self-contained HTML report (curve, metrics, worst frames)
      --progress         show progress even when stderr is not a terminal
  -q, --quiet            no progress, no summary

Exit status: 0 done; 2 bad arguments; 3 bad input (unreadable, not a video,
wrong raw size, sizes differ with --no-scale); 4 --backend hip with no usable
GPU; 5 a decode or read error while running; 1 anything else.";

/// Exit statuses (documented in USAGE and README).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Failed = 1,
    Usage = 2,
    BadInput = 3,
    NoGpu = 4,
    Decode = 5,
}

/// An error for the user: what went wrong, and the exit status it gives.
#[derive(Debug)]
pub struct Fail(pub Exit, pub String);

impl Fail {
    pub fn input(msg: impl Into<String>) -> Self {
        Fail(Exit::BadInput, msg.into())
    }
}

fn usage(msg: impl Into<String>) -> Fail {
    Fail(
        Exit::Usage,
        format!("{} (vmafhip --help lists the options)", msg.into()),
    )
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OutFormat {
    Json,
    Xml,
    Csv,
}

pub struct Args {
    reference: Option<String>,
    distorted: Option<String>,
    pub raw: input::RawArgs,
    model: String,
    features: Vec<String>,
    subsample: u32,
    threads: u32,
    backend: String,
    device_id: i32,
    scale: bool,
    format: Option<OutFormat>,
    output: Option<String>,
    report: Option<String>,
    progress: bool,
    quiet: bool,
}

fn parse(argv: impl Iterator<Item = String>) -> Result<Args, Fail> {
    let mut a = Args {
        reference: None,
        distorted: None,
        raw: input::RawArgs::default(),
        model: "version=vmaf_v0.6.1".into(),
        features: Vec::new(),
        subsample: 1,
        threads: 0,
        backend: "auto".into(),
        device_id: 0,
        scale: true,
        format: None,
        output: None,
        report: None,
        progress: false,
        quiet: false,
    };
    let mut it = argv.peekable();
    let mut positional = Vec::new();
    while let Some(arg) = it.next() {
        let mut val = |name: &str| {
            it.next()
                .ok_or_else(|| usage(format!("{name} needs a value")))
        };
        fn num<T: std::str::FromStr>(flag: &str, v: String) -> Result<T, Fail> {
            v.parse()
                .map_err(|_| usage(format!("{flag}: \"{v}\" is not a valid number")))
        }
        match arg.as_str() {
            "-r" | "--reference" => a.reference = Some(val(&arg)?),
            "-d" | "--distorted" => a.distorted = Some(val(&arg)?),
            "-w" | "--width" => a.raw.width = Some(num(&arg, val(&arg)?)?),
            "-h" | "--height" => a.raw.height = Some(num(&arg, val(&arg)?)?),
            "-p" | "--pixel_format" => {
                let v = val(&arg)?;
                a.raw.format = gstvmafhip::vmaf::PixelFormat::parse(&v)
                    .ok_or_else(|| usage(format!("{arg}: \"{v}\": use 420, 422, 444 or 400")))?;
            }
            "-b" | "--bitdepth" => a.raw.bpc = num(&arg, val(&arg)?)?,
            "--fps" => {
                let v = val(&arg)?;
                let (n, d) = v.split_once('/').unwrap_or((&v, "1"));
                let fps = (num::<u32>(&arg, n.into())?, num::<u32>(&arg, d.into())?);
                if fps.0 == 0 || fps.1 == 0 {
                    return Err(usage(format!("--fps: \"{v}\" must be positive")));
                }
                a.raw.fps = fps;
            }
            "-m" | "--model" => a.model = val(&arg)?,
            "--feature" => {
                let f = val(&arg)?;
                if !matches!(
                    f.as_str(),
                    "psnr" | "float_ssim" | "float_ms_ssim" | "cambi" | "speed_chroma"
                ) {
                    return Err(usage(format!(
                        "--feature {f}: supported are psnr, float_ssim, float_ms_ssim, cambi, speed_chroma"
                    )));
                }
                a.features.push(f);
            }
            "--subsample" => {
                a.subsample = num(&arg, val(&arg)?)?;
                if a.subsample == 0 {
                    return Err(usage("--subsample must be at least 1"));
                }
            }
            "--threads" => a.threads = num(&arg, val(&arg)?)?,
            "--backend" => {
                a.backend = val(&arg)?;
                if !matches!(a.backend.as_str(), "auto" | "cpu" | "hip") {
                    return Err(usage(format!(
                        "--backend {}: use auto, cpu or hip",
                        a.backend
                    )));
                }
            }
            "--device-id" => a.device_id = num(&arg, val(&arg)?)?,
            "--scale" => a.scale = true,
            "--no-scale" => a.scale = false,
            "--json" => a.format = Some(OutFormat::Json),
            "--xml" => a.format = Some(OutFormat::Xml),
            "--csv" => a.format = Some(OutFormat::Csv),
            "-o" | "--output" => a.output = Some(val(&arg)?),
            "--report" => a.report = Some(val(&arg)?),
            "--progress" => a.progress = true,
            "-q" | "--quiet" => a.quiet = true,
            "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            s if s.starts_with('-') && s.len() > 1 => {
                return Err(usage(format!("unknown option {s}")));
            }
            _ => positional.push(arg),
        }
    }
    let mut positional = positional.into_iter();
    if a.reference.is_none() {
        a.reference = positional.next();
    }
    if a.distorted.is_none() {
        a.distorted = positional.next();
    }
    if let Some(extra) = positional.next() {
        return Err(usage(format!("unexpected argument \"{extra}\"")));
    }
    if a.reference.is_none() || a.distorted.is_none() {
        return Err(usage("two inputs are needed: REF and DIST"));
    }
    if a.output.is_some() && a.format.is_none() {
        // libvmaf's default output layout is XML; a file name says more.
        a.format = Some(
            match a.output.as_deref().and_then(|o| o.rsplit('.').next()) {
                Some("json") => OutFormat::Json,
                Some("csv") => OutFormat::Csv,
                _ => OutFormat::Xml,
            },
        );
    }
    Ok(a)
}

/// libvmaf's `--model` string as the element's properties: `model-filename`
/// (the model with its overrides) and the two flags.
fn model_properties(model: &str) -> Result<(String, bool, bool), Fail> {
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

/// Which input an element belongs to, from its name or an ancestor's
/// (`ref-…` / `dist-…`).
fn role_of(obj: Option<&gst::Object>) -> Option<Role> {
    let mut cur = obj.cloned();
    while let Some(o) = cur {
        let name = o.name();
        if name.starts_with("ref-") {
            return Some(Role::Reference);
        }
        if name.starts_with("dist-") {
            return Some(Role::Distorted);
        }
        cur = o.parent();
    }
    None
}

/// The exit status a pipeline error gives.
fn classify(err: &glib::Error, role: Option<Role>, from_vmaf: bool) -> Exit {
    if from_vmaf && err.matches(gst::LibraryError::Init) {
        return Exit::NoGpu;
    }
    if role.is_some() {
        if err.matches(gst::StreamError::Decode) || err.matches(gst::ResourceError::Read) {
            return Exit::Decode;
        }
        return Exit::BadInput;
    }
    Exit::Failed
}

struct Progress {
    enabled: bool,
    start: Instant,
    last: Instant,
    total: Option<u64>,
    frames: u64,
    sum: f64,
}

impl Progress {
    fn frame(&mut self, score: f64) {
        self.frames += 1;
        self.sum += score;
        if self.enabled && self.last.elapsed() >= Duration::from_millis(100) {
            self.last = Instant::now();
            self.draw();
        }
    }

    fn draw(&self) {
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        let fps = self.frames as f64 / secs;
        let done = match self.total {
            Some(t) if t > 0 => {
                let left = t.saturating_sub(self.frames) as f64 / fps.max(1e-9);
                format!(
                    "{}/{t} ({:.0}%)  ETA {}",
                    self.frames,
                    100.0 * self.frames as f64 / t as f64,
                    hms(left)
                )
            }
            _ => format!("{}", self.frames),
        };
        eprint!(
            "\r\x1b[Kframe {done}  {fps:.1} fps  VMAF {:.3}",
            self.sum / self.frames.max(1) as f64
        );
    }
}

fn hms(secs: f64) -> String {
    let s = secs.round().max(0.0) as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

fn run(a: Args) -> Result<(), Fail> {
    gst::init().map_err(|e| Fail(Exit::Failed, format!("GStreamer: {e}")))?;
    gstvmafhip::plugin_register_static()
        .map_err(|e| Fail(Exit::Failed, format!("registering vmafhip: {e}")))?;
    let (model, disable_clip, enable_transform) = model_properties(&a.model)?;
    let say = |s: String| {
        if !a.quiet {
            eprintln!("{s}");
        }
    };
    let reference = Input::open(Role::Reference, a.reference.as_deref().unwrap(), &a.raw)?;
    let distorted = Input::open(Role::Distorted, a.distorted.as_deref().unwrap(), &a.raw)?;
    let (rv, dv) = (&reference.video, &distorted.video);
    let (w, h) = (rv.width, rv.height);
    if (dv.width, dv.height) != (w, h) {
        if !a.scale {
            return Err(Fail::input(format!(
                "{} is {}x{} but {} is {w}x{h}: sizes differ (leave out --no-scale to scale the distorted video)",
                distorted.path, dv.width, dv.height, reference.path
            )));
        }
        say(format!(
            "note: scaling {} from {}x{} to the reference's {w}x{h}",
            distorted.path, dv.width, dv.height
        ));
    }
    if rv.fps != dv.fps && rv.fps.0 > 0 && dv.fps.0 > 0 {
        say(format!(
            "note: frame rates differ ({} {}/{}, {} {}/{}): each reference frame is scored against the distorted frame shown at its time",
            reference.path, rv.fps.0, rv.fps.1, distorted.path, dv.fps.0, dv.fps.1
        ));
    }
    let format = rv.scoring_format();
    let caps = |v: &input::Video| {
        format!(
            "video/x-raw,format={format},width={w},height={h},pixel-aspect-ratio={}/{}",
            v.par.0, v.par.1
        )
    };
    let ref_caps = caps(rv);
    let dist_caps = caps(rv);
    let progress_on = !a.quiet && (a.progress || std::io::stderr().is_terminal());
    let desc = format!(
        "{} {} vmafhip name=v ! fakesink name=out sync=false",
        reference.branch(&ref_caps),
        distorted.branch(&dist_caps),
    );
    let pipeline = gst::parse::launch(&desc)
        .map_err(|e| Fail(Exit::Failed, format!("building the pipeline: {e}")))?
        .downcast::<gst::Pipeline>()
        .map_err(|_| Fail(Exit::Failed, "not a pipeline".into()))?;
    let v = pipeline.by_name("v").expect("named in the description");
    v.set_property("model-filename", &model);
    v.set_property("disable-clip", disable_clip);
    v.set_property("enable-transform", enable_transform);
    let mut extra = Vec::new();
    for f in &a.features {
        match f.as_str() {
            "psnr" => v.set_property("psnr", true),
            "float_ssim" => v.set_property("ssim", true),
            "float_ms_ssim" => v.set_property("ms-ssim", true),
            other => extra.push(other.to_string()),
        }
    }
    if !extra.is_empty() {
        v.set_property("features", extra.join(","));
    }
    v.set_property("subsample", a.subsample);
    v.set_property("threads", a.threads);
    v.set_property_from_str("backend", &a.backend);
    v.set_property("device-id", a.device_id);
    v.set_property("frame-message", progress_on);
    // Results go through the element's writer: to -o, or to a temporary
    // file printed on stdout at the end.
    let temp_out = std::env::temp_dir().join(format!("vmafhip-{}.out", std::process::id()));
    let results_path = match (&a.format, &a.output) {
        (None, _) => None,
        (Some(_), Some(o)) => Some(o.clone()),
        (Some(_), None) => Some(temp_out.display().to_string()),
    };
    if let (Some(f), Some(path)) = (a.format, &results_path) {
        v.set_property("results-filename", path);
        v.set_property_from_str(
            "results-format",
            match f {
                OutFormat::Json => "json",
                OutFormat::Xml => "xml",
                OutFormat::Csv => "csv",
            },
        );
    }
    if let Some(r) = &a.report {
        v.set_property("report-filename", r);
        let mut title = format!("{} vs {}", reference.path, distorted.path);
        if (dv.width, dv.height) != (w, h) {
            title.push_str(&format!(
                " (distorted scaled from {}x{} to {w}x{h})",
                dv.width, dv.height
            ));
        }
        v.set_property("report-title", title);
    }
    let mut progress = Progress {
        enabled: progress_on,
        start: Instant::now(),
        last: Instant::now(),
        total: reference.frames,
        frames: 0,
        sum: 0.0,
    };
    let stop = |p: &gst::Pipeline| {
        let _ = p.set_state(gst::State::Null);
    };
    let prepared = [&reference, &distorted]
        .into_iter()
        .filter(|i| i.kind != Kind::Media)
        .map(|i| feed::prepare(&pipeline, i))
        .collect::<Result<Vec<_>, _>>()?;
    let bus = pipeline.bus().expect("a pipeline has a bus");
    // A failed start (e.g. backend=hip with no GPU) posts its error on the
    // bus: the loop below reads and classifies it.
    let started = pipeline.set_state(gst::State::Playing).is_ok();
    // Readers start once the pipeline runs: an appsrc that never started
    // would block them for good.
    let mut feeders = Vec::new();
    if started {
        for p in prepared {
            match feed::start(p) {
                Ok(f) => feeders.push(f),
                Err(e) => {
                    stop(&pipeline);
                    return Err(e);
                }
            }
        }
    }
    let mut pooled: Option<VmafPooledMessage> = None;
    let mut failure = None;
    loop {
        if !started && bus.peek().is_none() {
            failure = Some(Fail(Exit::Failed, "the pipeline failed to start".into()));
            break;
        }
        let Some(msg) = bus.timed_pop(gst::ClockTime::from_mseconds(200)) else {
            if progress.enabled && progress.frames > 0 {
                progress.draw();
            }
            continue;
        };
        match msg.view() {
            gst::MessageView::Element(e) => {
                let Some(s) = e.structure() else { continue };
                if let Ok(f) = VmafFrameMessage::try_from(s) {
                    progress.frame(f.score);
                } else if let Ok(p) = VmafPooledMessage::try_from(s) {
                    pooled = Some(p);
                }
            }
            gst::MessageView::Warning(wm) => {
                let role = role_of(msg.src());
                let what = match role {
                    Some(r) => format!("{}: ", [&reference, &distorted][r as usize].path),
                    None => String::new(),
                };
                if !a.quiet {
                    if progress.enabled {
                        eprint!("\r\x1b[K");
                    }
                    eprintln!("warning: {what}{}", wm.error());
                }
            }
            gst::MessageView::Error(em) => {
                let role = role_of(msg.src());
                let from_vmaf = msg.src().is_some_and(|s| s.name() == "v");
                let code = classify(&em.error(), role, from_vmaf);
                let mut text = match role {
                    Some(r) => format!(
                        "{}: {}",
                        [&reference, &distorted][r as usize].path,
                        em.error()
                    ),
                    None => em.error().to_string(),
                };
                // GStreamer's debug text starts with "file(line): function
                // (): /element/path:" on a line of its own; the rest says why.
                if let Some(d) = em.debug() {
                    let why = d.split_once(":\n").map_or(d.as_str(), |(_, w)| w).trim();
                    if !why.is_empty() {
                        text = if code == Exit::NoGpu {
                            why.to_string()
                        } else {
                            format!("{text} ({why})")
                        };
                    }
                }
                failure = Some(Fail(code, text));
                break;
            }
            gst::MessageView::Eos(_) => break,
            _ => {}
        }
    }
    stop(&pipeline);
    for f in feeders {
        if let Err(e) = f.join() {
            failure.get_or_insert(e);
        }
    }
    if progress.enabled {
        progress.draw();
        eprintln!();
    }
    if let Some(f) = failure {
        let _ = std::fs::remove_file(&temp_out);
        return Err(f);
    }
    let Some(p) = pooled else {
        return Err(Fail::input(format!(
            "no frame was scored: {} or {} has no video frames",
            reference.path, distorted.path
        )));
    };
    if a.format.is_some() && a.output.is_none() {
        let text = std::fs::read_to_string(&temp_out)
            .map_err(|e| Fail(Exit::Failed, format!("reading the results back: {e}")))?;
        let _ = std::fs::remove_file(&temp_out);
        print!("{text}");
    }
    let secs = progress.start.elapsed().as_secs_f64();
    say(format!(
        "VMAF {:.6} (mean of {} frames; harmonic mean {:.6}, min {:.6}), {:.1} fps, {}",
        p.mean,
        p.frames,
        p.harmonic_mean,
        p.min,
        p.frames as f64 / secs.max(1e-9),
        p.backend
    ));
    for (what, path) in [("results", &a.output), ("report", &a.report)] {
        if let Some(path) = path {
            say(format!("{what}: {path}"));
        }
    }
    Ok(())
}

fn main() {
    let result = parse(std::env::args().skip(1)).and_then(run);
    if let Err(Fail(code, msg)) = result {
        eprintln!("vmafhip: {msg}");
        std::process::exit(code as i32);
    }
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
        assert_eq!(a.raw.fps, (30000, 1001));
        for (bad, needle) in [
            ("r.mp4", "two inputs"),
            ("r d e", "unexpected argument"),
            ("r d --backend gpu", "use auto, cpu or hip"),
            ("r d --feature vif", "supported are"),
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
}
