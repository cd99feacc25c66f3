//! One reference and one distorted file scored: the inputs opened, the
//! pipeline built around a `vmafhip` element, its bus watched to the end.

use crate::cli::{Args, CAT, Exit, Fail, OutFormat};
use crate::media::decode::{self, Decoding};
use crate::media::feed;
use crate::media::input::{self, Input};
use crate::media::nvdec;
use crate::media::video::{Kind, Role};
use gst::prelude::*;
use gstvmafhip::vmaf::settings;
use gstvmafhip::{VmafFrameMessage, VmafPooledMessage, VmafWindowMessage};
use std::time::{Duration, Instant};

/// One pair to score, and where its results go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    pub reference: String,
    pub distorted: String,
    /// Results file (the format from the command's options).
    pub output: Option<String>,
    pub report: Option<String>,
    pub device_id: i32,
}

/// How a pair's run talks to the user.
#[derive(Clone, Copy, Debug)]
pub struct Voice {
    /// Notes and warnings on stderr.
    pub notes: bool,
    /// The progress line (a terminal, or --progress).
    pub progress: bool,
}

/// A pair's outcome.
pub struct Scored {
    pub pooled: VmafPooledMessage,
    /// Wall clock from the first probe to the end.
    pub secs: f64,
    /// The decoder of each input (`raw`, `y4m`, or a decoder's name).
    pub decoders: [String; 2],
    /// Reference and distorted sizes as they arrived.
    pub sizes: [(usize, usize); 2],
}

/// Scores one pair with the command's options.
pub fn score_pair(
    a: &Args,
    pair: &Pair,
    decoding: &Decoding,
    voice: Voice,
) -> Result<Scored, Fail> {
    let start = Instant::now();
    let say = |s: String| {
        if voice.notes {
            eprintln!("{s}");
        }
    };
    let mut reference = Input::open(Role::Reference, &pair.reference, &a.raw)?;
    let mut distorted = Input::open(Role::Distorted, &pair.distorted, &a.raw)?;
    let rate_notes = input::share_rate(&mut [&mut reference, &mut distorted]);
    let (rv, dv) = (&reference.video, &distorted.video);
    if a.scale && (dv.width, dv.height) != (rv.width, rv.height) {
        // Scaled by the engine, as a ladder's rendition: the same samples
        // whatever decodes it, on the GPU and on the CPU.
        distorted.role = Role::Rendition(0);
    }
    let direct = decoding.direct_for(pair.device_id);
    check_comparable(&reference, &distorted, a.needs_chroma)?;
    decode_directly(direct.as_ref(), &mut [&mut reference, &mut distorted]);
    for i in [&reference, &distorted] {
        if let Some(note) = i.decoder_note(decoding)? {
            say(note);
        }
    }
    for note in rate_notes
        .into_iter()
        .chain(pairing_notes(a, &reference, &distorted)?)
    {
        say(note);
    }
    let pipeline = build_pipeline(&reference, &distorted)?;
    let v = pipeline.by_name("v").expect("named in the description");
    share_gpu_context(&pipeline, &v);
    configure_element(&v, a, pair, &reference, &distorted, voice.progress)?;
    v.set_property("align", a.align.to_string());
    let temp_out = results_target(a, pair, &v);
    if distorted.role != Role::Distorted {
        hand_files_to(&v, &distorted.role.sink());
    }
    let mut progress = Progress::new(voice.progress, reference.frames);
    let pooled = play(
        &pipeline,
        &[&reference, &distorted],
        direct.as_ref(),
        (&mut progress, voice),
        a.needs_chroma,
        a.read_threads
            .unwrap_or_else(|| feed::default_readers(a.pairs_at_once)),
    );
    if progress.enabled {
        progress.draw();
        eprintln!();
    }
    let (mut heard, decoders) = pooled.inspect_err(|_| {
        if let Some(t) = &temp_out {
            let _ = std::fs::remove_file(t);
        }
    })?;
    if let Some(t) = &temp_out {
        let text = std::fs::read_to_string(t)
            .map_err(|e| Fail(Exit::Failed, format!("reading the results back: {e}")))?;
        let _ = std::fs::remove_file(t);
        crate::cli::write_stdout(format_args!("{text}"));
    }
    let Some(pooled) = heard.pooled.pop() else {
        return Err(Fail::input(format!(
            "no frame was scored: {} or {} has no video frames",
            reference.path, distorted.path
        )));
    };
    Ok(Scored {
        pooled,
        secs: start.elapsed().as_secs_f64(),
        decoders: [decoders[0].clone(), decoders[1].clone()],
        sizes: [
            (reference.video.width, reference.video.height),
            (distorted.video.width, distorted.video.height),
        ],
    })
}

/// Marks the inputs that the command's own NVDEC path decodes (`direct`,
/// where the GPU has one): each as it is scored, the first being the
/// reference.
pub fn decode_directly(direct: Option<&crate::media::decode::Direct>, inputs: &mut [&mut Input]) {
    let (Some(d), Some(first)) = (direct, inputs.first()) else {
        return;
    };
    let reference = first.video.clone();
    for i in inputs.iter_mut() {
        let target = i.scored_as(&reference);
        let taken = d.takes((&i.video, i.kind, i.codec.as_deref()), &target);
        i.nvdec = taken.is_ok();
        i.nvdec_refused = taken.err();
    }
}

/// The truncated-input error where one input ended before the other
/// (reference frames with no distorted frame, or distorted frames past
/// the reference's end), unless `--allow-length-mismatch` or the run was
/// interrupted. The results are written by then and say the same.
pub fn length_mismatch(
    a: &Args,
    p: &VmafPooledMessage,
    reference: &str,
    distorted: &str,
) -> Option<Fail> {
    let c = &p.pairing;
    if !c.lengths_differ() || p.interrupted || a.allow_length_mismatch {
        return None;
    }
    let what = if c.unscored > 0 {
        format!(
            "{distorted} ended before {reference}: {} of {} reference frames were scored ({} distorted frames)",
            p.frames,
            c.reference(),
            c.distorted
        )
    } else {
        format!(
            "{reference} ended before {distorted}: {distorted} has frames past the reference's {} (not scored)",
            c.reference()
        )
    };
    Some(Fail(
        Exit::Decode,
        format!("{what}; --allow-length-mismatch scores the overlap and exits 0"),
    ))
}

/// An error, before anything is decoded, where the two inputs cannot be
/// compared: different bit depths (VMAF's features are defined at one
/// depth; converting either changes the numbers), or, where a metric reads
/// chroma, different chroma layouts. Luma-only metrics take any layouts
/// (the distorted input is converted to the reference's; luma is untouched).
pub fn check_comparable(reference: &Input, distorted: &Input, chroma: bool) -> Result<(), Fail> {
    let (rv, dv) = (&reference.video, &distorted.video);
    let depth = rv.bpc != dv.bpc;
    let layout = chroma && rv.format != dv.format;
    if !depth && !layout {
        return Ok(());
    }
    let what = if depth {
        "VMAF compares pictures of one bit depth: convert one of them to the other's depth first"
    } else {
        "the metrics asked for read chroma, which is compared in one layout: convert one of them first, or leave out the chroma metrics"
    };
    Err(Fail::input(format!(
        "{} is {} and {} is {}: {what}",
        reference.path,
        rv.describe(),
        distorted.path,
        dv.describe()
    )))
}

/// Notes on scaling and frame rates; an error where `--no-scale` forbids
/// scaling.
pub fn pairing_notes(a: &Args, reference: &Input, distorted: &Input) -> Result<Vec<String>, Fail> {
    let (rv, dv) = (&reference.video, &distorted.video);
    let (w, h) = (rv.width, rv.height);
    let mut notes = Vec::new();
    if (dv.width, dv.height) != (w, h) {
        if !a.scale {
            return Err(Fail::input(format!(
                "{} is {}x{} but {} is {w}x{h}: sizes differ (leave out --no-scale to scale the distorted video)",
                distorted.path, dv.width, dv.height, reference.path
            )));
        }
        notes.push(format!(
            "note: scaling {} from {}x{} to the reference's {w}x{h} in the engine ({})",
            distorted.path, dv.width, dv.height, a.scaler
        ));
    }
    if rv.fps != dv.fps && rv.fps.0 > 0 && dv.fps.0 > 0 {
        notes.push(format!(
            "note: frame rates differ ({} {}/{}, {} {}/{}): each reference frame is scored against the distorted frame shown at its time",
            reference.path, rv.fps.0, rv.fps.1, distorted.path, dv.fps.0, dv.fps.1
        ));
    }
    Ok(notes)
}

/// Both inputs' branches into a `vmafhip` named `v`, scored in the
/// reference's size, chroma layout and depth.
fn build_pipeline(reference: &Input, distorted: &Input) -> Result<gst::Pipeline, Fail> {
    let desc = format!(
        "{} {} vmafhip name=v ! fakesink name=out sync=false",
        reference.branch(&reference.video),
        distorted.branch(&distorted.scored_as(&reference.video)),
    );
    gst::info!(CAT, "pipeline: {desc}");
    gst::parse::launch(&desc)
        .map_err(|e| Fail(Exit::Failed, format!("building the pipeline: {e}")))?
        .downcast::<gst::Pipeline>()
        .map_err(|_| Fail(Exit::Failed, "not a pipeline".into()))
}

/// Hands the element's GPU context to whoever asks on the bus. A decoder
/// that `decodebin` plugs (NVDEC) looks for a CUDA context before its pad is
/// linked, so its query cannot reach the element; it then posts
/// `need-context`, and this answers it, synchronously, with what the element
/// gives its own upstream: frames are then allocated in the engine's context
/// and read in place instead of being downloaded.
pub fn share_gpu_context(pipeline: &gst::Pipeline, v: &gst::Element) {
    let Some(sink) = v.static_pad("ref_sink") else {
        return;
    };
    let bus = pipeline.bus().expect("a pipeline has a bus");
    bus.set_sync_handler(move |_, msg| {
        if let gst::MessageView::NeedContext(nc) = msg.view() {
            let kind = nc.context_type();
            let mut q = gst::query::Context::new(kind);
            if (kind.starts_with("gst.cuda") || kind.starts_with("gst.hip")) && sink.query(&mut q) {
                let asker = msg.src().and_then(|s| s.downcast_ref::<gst::Element>());
                if let (Some(ctx), Some(el)) = (q.context_owned(), asker) {
                    el.set_context(&ctx);
                }
            }
        }
        gst::BusSyncReply::Pass
    });
}

/// The element's properties from the command's options.
pub fn configure_element(
    v: &gst::Element,
    a: &Args,
    pair: &Pair,
    reference: &Input,
    distorted: &Input,
    frame_messages: bool,
) -> Result<(), Fail> {
    scoring_properties(v, a, pair.device_id, frame_messages)?;
    if let Some(r) = &pair.report {
        v.set_property("report-filename", r);
        v.set_property("report-title", report_title(reference, distorted));
    }
    Ok(())
}

/// The element's properties for what is scored and how, from the
/// command's options.
pub fn scoring_properties(
    v: &gst::Element,
    a: &Args,
    device_id: i32,
    frame_messages: bool,
) -> Result<(), Fail> {
    let (model, disable_clip, enable_transform) = crate::cli::model_properties(&a.model)?;
    v.set_property(settings::MODEL.name, &model);
    v.set_property("disable-clip", disable_clip);
    v.set_property("enable-transform", enable_transform);
    // The features with a switch of their own turn on the element's switch.
    for (feature, switch) in gstvmafhip::extractors::switched() {
        if a.features.iter().any(|f| f == feature) {
            v.set_property(switch.property, true);
        }
    }
    let extra = crate::cli::extra_extractors(&a.features);
    if !extra.is_empty() {
        v.set_property("features", extra.join(","));
    }
    v.set_property(settings::SUBSAMPLE.name, a.subsample);
    v.set_property(settings::THREADS.name, a.threads);
    v.set_property_from_str(settings::BACKEND.name, &a.backend);
    v.set_property_from_str(settings::VENDOR.name, a.vendor.name());
    v.set_property_from_str(settings::ON_GPU_ERROR.name, &a.on_gpu_error);
    v.set_property_from_str("scaler", &a.scaler);
    v.set_property(settings::GPU_RETRY_DELAY.name, a.gpu_retry_delay);
    v.set_property("window", a.window);
    v.set_property("alert-below", a.alert_below);
    v.set_property("metrics-address", a.metrics.as_deref());
    v.set_property(settings::DEVICE_ID.name, device_id);
    v.set_property("frame-message", frame_messages);
    Ok(())
}

/// The report's title: the two files, any scaling, and the decoders.
fn report_title(reference: &Input, distorted: &Input) -> String {
    let (rv, dv) = (&reference.video, &distorted.video);
    let mut title = format!("{} vs {}", reference.path, distorted.path);
    if (dv.width, dv.height) != (rv.width, rv.height) {
        title.push_str(&format!(
            " (distorted scaled from {}x{} to {}x{})",
            dv.width, dv.height, rv.width, rv.height
        ));
    }
    if reference.kind == Kind::Media || distorted.kind == Kind::Media {
        title.push_str(&format!(
            "; decoded with {} / {}",
            reference.decoder_name(),
            distorted.decoder_name()
        ));
    }
    title
}

/// Points the element's results writer at the pair's file; with a format
/// but no file, at a temporary file printed on stdout at the end (returned).
pub fn results_target(a: &Args, pair: &Pair, v: &gst::Element) -> Option<std::path::PathBuf> {
    let format = a.format?;
    let temp = std::env::temp_dir().join(format!(
        "vmafhip-{}-{:?}.out",
        std::process::id(),
        std::thread::current().id()
    ));
    let (path, temp) = match &pair.output {
        Some(o) => (o.clone(), None),
        None => (temp.display().to_string(), Some(temp)),
    };
    v.set_property("results-filename", path);
    v.set_property_from_str(
        "results-format",
        match format {
            OutFormat::Json => "json",
            OutFormat::Xml => "xml",
            OutFormat::Csv => "csv",
            OutFormat::Jsonl => "jsonl",
        },
    );
    temp
}

/// Moves the element's results file and report onto requested pad `pad`
/// (a pair whose distorted video the engine scales: `dist_sink` stays
/// unlinked and writes nothing).
pub fn hand_files_to(v: &gst::Element, pad: &str) {
    let Some(pad) = v.static_pad(pad) else { return };
    for property in ["results-filename", "report-filename"] {
        let file: Option<String> = v.property(property);
        pad.set_property(property, file);
        v.set_property(property, None::<String>);
    }
}

/// Plays the pipeline to its end: starts the readers of raw and Y4M inputs,
/// follows the bus, and returns the pooled message (none when no frame was
/// scored) with the decoders the inputs used, or the first error.
pub fn play(
    pipeline: &gst::Pipeline,
    inputs: &[&Input],
    direct: Option<&crate::media::decode::Direct>,
    (progress, voice): (&mut Progress, Voice),
    needs_chroma: bool,
    readers: usize,
) -> Result<(Heard, Vec<String>), Fail> {
    let prepared = inputs
        .iter()
        .filter(|i| i.kind != Kind::Media)
        .map(|i| feed::prepare(pipeline, i, needs_chroma, readers))
        .collect::<Result<Vec<_>, _>>()?;
    let decoding = match direct {
        Some(d) => inputs
            .iter()
            .filter(|i| i.nvdec)
            .map(|i| nvdec::prepare(pipeline, i, d))
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    // A failed start (e.g. backend=hip with no GPU) posts its error on the
    // bus: the loop below reads and classifies it.
    let started = pipeline.set_state(gst::State::Playing).is_ok();
    gst::debug!(CAT, "pipeline playing: {started}");
    if let Some(url) = pipeline
        .by_name("v")
        .and_then(|v| v.property::<Option<String>>("metrics-url"))
        .filter(|_| voice.notes)
    {
        eprintln!("note: metrics at {url}");
    }
    // Readers start once the pipeline runs: an appsrc that never started
    // would block them for good.
    let mut feeders = Vec::new();
    let mut nvdecs = Vec::new();
    if started {
        for p in prepared {
            feeders.push(feed::start(p)?);
        }
        for p in decoding {
            nvdecs.push(nvdec::start(p)?);
        }
    }
    let outcome = watch_bus(pipeline, started, inputs, progress, voice);
    gst::debug!(CAT, "the bus said the end");
    // Read before the pipeline stops: decodebin drops its children then.
    let decoders: Vec<String> = inputs.iter().map(|i| i.decoder_used(pipeline)).collect();
    let mut outcome = outcome.map(|p| (p, decoders));
    let _ = pipeline.set_state(gst::State::Null);
    gst::debug!(CAT, "pipeline stopped");
    if crate::interrupt::requested() {
        // A reader may be blocked on a pipe whose writer goes on: the
        // results are written, and the process ends without waiting.
        return outcome;
    }
    let joined = feeders
        .into_iter()
        .map(|f| f.join())
        .chain(nvdecs.into_iter().map(|d| d.join()));
    for r in joined {
        if let (Err(e), true) = (r, outcome.is_ok()) {
            outcome = Err(e);
        }
    }
    outcome
}

/// What the bus said by the end: every pooled message, and each ladder
/// rendition's per-frame VMAF (with frame messages on), by pad.
#[derive(Default)]
pub struct Heard {
    pub pooled: Vec<VmafPooledMessage>,
    pub frames: std::collections::HashMap<String, Vec<f64>>,
}

/// Follows the bus to EOS or the first error; on an interruption, stops
/// the inputs first ([`stop_inputs`]).
fn watch_bus(
    pipeline: &gst::Pipeline,
    started: bool,
    inputs: &[&Input],
    progress: &mut Progress,
    voice: Voice,
) -> Result<Heard, Fail> {
    let bus = pipeline.bus().expect("a pipeline has a bus");
    let mut heard = Heard::default();
    let mut stopping = false;
    loop {
        if started && !stopping && crate::interrupt::requested() {
            stopping = true;
            stop_inputs(pipeline);
        }
        if !started && bus.peek().is_none() {
            return Err(Fail(Exit::Failed, "the pipeline failed to start".into()));
        }
        let Some(msg) = bus.timed_pop(gst::ClockTime::from_mseconds(200)) else {
            if progress.enabled && progress.frames > 0 {
                progress.draw();
            }
            continue;
        };
        match msg.view() {
            gst::MessageView::Warning(m) => {
                crate::alert::crossed(m.details(), &m.error().to_string())
            }
            gst::MessageView::Info(m) => crate::alert::crossed(m.details(), &m.error().to_string()),
            _ => {}
        }
        match msg.view() {
            gst::MessageView::Element(e) => {
                let Some(s) = e.structure() else { continue };
                if let Ok(f) = VmafFrameMessage::try_from(s) {
                    // The progress follows the first distorted input.
                    if matches!(f.rendition.as_str(), "dist_sink" | "dist_sink_0") {
                        progress.frame(f.score);
                    }
                    // A ladder's renditions keep theirs (the table's 1% low).
                    if f.rendition.starts_with("dist_sink_") {
                        heard.frames.entry(f.rendition).or_default().push(f.score);
                    }
                } else if let Ok(p) = VmafPooledMessage::try_from(s) {
                    heard.pooled.push(p);
                } else if let Ok(w) = VmafWindowMessage::try_from(s)
                    && voice.notes
                {
                    if progress.enabled {
                        eprint!("\r\x1b[K");
                    }
                    eprintln!("{}", crate::alert::window_line(&w));
                } else if s.name() == gstvmafhip::ALIGN_EVENT
                    && voice.notes
                    && let Some(line) = crate::align::event_line(s)
                {
                    if progress.enabled {
                        eprint!("\r\x1b[K");
                    }
                    eprintln!("note: {line}");
                }
            }
            gst::MessageView::Warning(wm) if voice.notes => {
                let what = match role_of(msg.src()).and_then(|r| path_of(inputs, r)) {
                    Some(path) => format!("{path}: "),
                    None => String::new(),
                };
                if progress.enabled {
                    eprint!("\r\x1b[K");
                }
                eprintln!("warning: {what}{}", wm.error());
            }
            gst::MessageView::Info(im)
                if voice.notes && msg.src().is_some_and(|s| s.name() == "v") =>
            {
                if progress.enabled {
                    eprint!("\r\x1b[K");
                }
                eprintln!("note: {}", im.error());
            }
            gst::MessageView::Error(em) => return Err(error_of(&msg, em, inputs)),
            gst::MessageView::Eos(_) => return Ok(heard),
            _ => {}
        }
    }
}

/// Tells the element that the run is being interrupted (its pooled
/// messages and results files say so), then ends every input where it is:
/// the frames already read are scored and the results written whole.
pub fn stop_inputs(pipeline: &gst::Pipeline) {
    if let Some(pad) = pipeline.by_name("v").and_then(|v| v.static_pad("ref_sink")) {
        let mark = gst::Structure::new_empty(gstvmafhip::INTERRUPTED_EVENT);
        pad.send_event(gst::event::CustomDownstreamOob::new(mark));
    }
    pipeline.send_event(gst::event::Eos::new());
}

/// A pipeline error as the user's error, naming the input it came from.
fn error_of(msg: &gst::Message, em: &gst::message::Error, inputs: &[&Input]) -> Fail {
    error_named(msg, em, |r| path_of(inputs, r).map(str::to_string))
}

/// A pipeline error as the user's error, the input it came from named by
/// `name_of`.
pub fn error_named(
    msg: &gst::Message,
    em: &gst::message::Error,
    name_of: impl Fn(Role) -> Option<String>,
) -> Fail {
    let role = role_of(msg.src());
    let from_vmaf = msg.src().is_some_and(|s| s.name() == "v");
    let code = classify(&em.error(), role, from_vmaf);
    let mut text = match role.and_then(name_of) {
        Some(path) => format!("{path}: {}", em.error()),
        None => em.error().to_string(),
    };
    // GStreamer's debug text starts with "file(line): function (): /element/
    // path:" on a line of its own; the rest says why.
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
    Fail(code, text)
}

/// Which input an element belongs to, from its name or an ancestor's
/// (`ref-…`, `dist-…`, `rend0-…`).
pub fn role_of(obj: Option<&gst::Object>) -> Option<Role> {
    let mut cur = obj.cloned();
    while let Some(o) = cur {
        if let Some(role) = Role::of_element(&o.name()) {
            return Some(role);
        }
        cur = o.parent();
    }
    None
}

/// The input with `role`'s path.
fn path_of<'a>(inputs: &[&'a Input], role: Role) -> Option<&'a str> {
    inputs
        .iter()
        .find(|i| i.role == role)
        .map(|i| i.path.as_str())
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

/// The progress line on stderr: frames done, fps, ETA, running VMAF.
pub struct Progress {
    pub enabled: bool,
    start: Instant,
    last: Instant,
    total: Option<u64>,
    frames: u64,
    sum: f64,
}

impl Progress {
    pub fn new(enabled: bool, total: Option<u64>) -> Progress {
        Progress {
            enabled,
            start: Instant::now(),
            last: Instant::now(),
            total,
            frames: 0,
            sum: 0.0,
        }
    }

    fn frame(&mut self, score: f64) {
        self.frames += 1;
        self.sum += score;
        if self.enabled && self.last.elapsed() >= Duration::from_millis(100) {
            self.last = Instant::now();
            self.draw();
        }
    }

    pub fn draw(&self) {
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

/// Media inputs: the decoder the probe found, checked against `--decoder`.
impl Input {
    /// A note on the decoder, or the error where none decodes the file (a
    /// file that no GStreamer decoder takes is fine when the command's own
    /// NVDEC path decodes it).
    pub fn decoder_note(&self, decoding: &Decoding) -> Result<Option<String>, Fail> {
        if let (Some((exit, why)), false) = (&self.no_decoder, self.nvdec) {
            let why = match &self.nvdec_refused {
                Some(r) => format!("{why} (and the command's NVDEC path does not take it: {r})"),
                None => why.clone(),
            };
            return Err(Fail(*exit, why));
        }
        match (&self.decoder, self.kind) {
            (Some(d), Kind::Media) if !self.nvdec => decode::check_decoder(
                decoding,
                &self.path,
                self.codec.as_deref().unwrap_or("?"),
                d,
            ),
            _ => Ok(None),
        }
    }

    /// `raw`, `y4m`, or the decoder's factory name as the probe found it.
    pub fn decoder_name(&self) -> String {
        match self.kind {
            Kind::Raw => "raw".into(),
            Kind::Y4m => "y4m".into(),
            Kind::Media if self.nvdec => decode::DIRECT_NAME.into(),
            Kind::Media => self.decoder.clone().unwrap_or_else(|| "decodebin".into()),
        }
    }

    /// The decoder this input's `decodebin` plugged in the running
    /// pipeline, else [`Input::decoder_name`].
    fn decoder_used(&self, pipeline: &gst::Pipeline) -> String {
        pipeline
            .by_name(&format!("{}-decode", self.role.prefix()))
            .and_then(|b| b.downcast::<gst::Bin>().ok())
            .and_then(|b| input::decoder_and_codec(&b).0)
            .unwrap_or_else(|| self.decoder_name())
    }
}
