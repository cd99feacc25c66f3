//! An encoding ladder: one reference and several renditions (`vmafhip REF
//! DIST1 DIST2 …`) scored in one pipeline by one element, each rendition on
//! a `dist_sink_%u` pad at its own size (the engine scales it to the
//! reference's, on the GPU with the HIP backend), then a table.

use crate::cli::{Args, Exit, Fail};
use crate::media::decode::Decoding;
use crate::media::feed;
use crate::media::input::Input;
use crate::media::video::Role;
use crate::pair::{self, Heard, Pair, Progress, Voice};
use gst::prelude::*;

/// One rendition's line of the table.
struct Line {
    path: String,
    size: (usize, usize),
    mean: f64,
    harmonic_mean: f64,
    one_percent_low: f64,
    frames: u64,
}

/// Scores every rendition against the reference and prints the table.
pub fn run(a: &Args, paths: &[String], decoding: &Decoding, voice: Voice) -> Result<(), Fail> {
    let start = std::time::Instant::now();
    let mut reference = Input::open(Role::Reference, &paths[0], &a.raw)?;
    let mut renditions = paths[1..]
        .iter()
        .enumerate()
        .map(|(k, p)| Input::open(Role::Rendition(k as u32), p, &a.raw))
        .collect::<Result<Vec<_>, _>>()?;
    // The command's own NVDEC path where it takes the files, as for a pair.
    for r in &renditions {
        pair::check_comparable(&reference, r, a.needs_chroma)?;
    }
    let direct = decoding.direct_for(a.device_ids[0]);
    let mut all: Vec<&mut Input> = vec![&mut reference];
    all.extend(renditions.iter_mut());
    for note in crate::media::input::share_rate(&mut all) {
        if voice.notes {
            eprintln!("{note}");
        }
    }
    pair::decode_directly(direct.as_ref(), &mut all);
    for i in std::iter::once(&reference).chain(&renditions) {
        if let Some(note) = i.decoder_note(decoding)?
            && voice.notes
        {
            eprintln!("{note}");
        }
    }
    check_renditions(a, &reference, &renditions, voice)?;
    let pipeline = build_pipeline(&reference, &renditions)?;
    let v = pipeline.by_name("v").expect("named in the description");
    pair::share_gpu_context(&pipeline, &v);
    // The report is the command's own: every rendition in one plot.
    let pair = Pair {
        reference: reference.path.clone(),
        distorted: renditions[0].path.clone(),
        output: a.output.clone(),
        report: None,
        device_id: a.device_ids[0],
    };
    pair::configure_element(&v, a, &pair, &reference, &renditions[0], true)?;
    if a.output.is_some() {
        // Checked: a format comes with a file, so nothing goes to stdout.
        pair::results_target(a, &pair, &v);
    }
    let labels = label_pads(&v, &renditions);
    let mut inputs: Vec<&Input> = vec![&reference];
    inputs.extend(renditions.iter());
    let mut progress = Progress::new(voice.progress, reference.frames);
    let readers = a
        .read_threads
        .unwrap_or_else(|| feed::default_readers(renditions.len()));
    let played = pair::play(
        &pipeline,
        &inputs,
        direct.as_ref(),
        (&mut progress, voice),
        a.needs_chroma,
        readers,
    );
    if progress.enabled {
        progress.draw();
        eprintln!();
    }
    let (heard, decoders) = played?;
    let lines = lines(&heard, &renditions)?;
    print_table(&reference, &lines);
    if let Some(path) = &a.report {
        write_report(path, a, &reference, &renditions, &heard, &decoders)?;
    }
    if !a.quiet {
        let backend = heard.pooled.first().map_or("", |p| p.backend.as_str());
        eprintln!(
            "{} renditions of {} frames in {:.2} s, {backend}; decoded with {}",
            lines.len(),
            lines.iter().map(|l| l.frames).max().unwrap_or(0),
            start.elapsed().as_secs_f64(),
            decoders.join(" / ")
        );
        if let Some(path) = &a.output {
            let files: Vec<String> = labels
                .iter()
                .map(|l| gstvmafhip::rendition_file(path, l))
                .collect();
            eprintln!("results: {}", files.join(", "));
        }
        if let Some(path) = &a.report {
            eprintln!("report: {path}");
        }
    }
    ended_early(a, &heard, &reference, &renditions)
}

/// Exit 130 for an interrupted run, else the truncated-input error of the
/// first rendition that ended before the reference or outlasted it.
fn ended_early(
    a: &Args,
    heard: &Heard,
    reference: &Input,
    renditions: &[Input],
) -> Result<(), Fail> {
    for r in renditions {
        let pad = r.role.sink();
        let Some(p) = heard.pooled.iter().rfind(|p| p.rendition == pad) else {
            continue;
        };
        if p.interrupted {
            return Err(Fail(Exit::Interrupted, "interrupted".into()));
        }
        if let Some(fail) = pair::length_mismatch(a, p, &reference.path, &r.path) {
            return Err(fail);
        }
    }
    Ok(())
}

/// Notes and errors before anything runs: results in a format need a file
/// to name each rendition's after, and each rendition gets the notes and
/// errors of a pair (`pair::pairing_notes`).
fn check_renditions(
    a: &Args,
    reference: &Input,
    renditions: &[Input],
    voice: Voice,
) -> Result<(), Fail> {
    if a.format.is_some() && a.output.is_none() {
        return Err(Fail::input(
            "--json, --xml, --csv and --jsonl with several renditions need -o FILE: each rendition gets its own file, named after it",
        ));
    }
    // Each rendition as a pair would be: the scaling note, or the
    // --no-scale error; frame rates that differ.
    for r in renditions {
        for note in pair::pairing_notes(a, reference, r)? {
            if voice.notes {
                eprintln!("{note}");
            }
        }
    }
    Ok(())
}

/// The reference's branch to `ref_sink`, and each rendition's to its
/// `dist_sink_k` in the reference's scoring format at its own size.
fn build_pipeline(reference: &Input, renditions: &[Input]) -> Result<gst::Pipeline, Fail> {
    let mut desc = reference.branch(&reference.video);
    for r in renditions {
        desc.push(' ');
        desc.push_str(&r.branch(&r.scored_as(&reference.video)));
    }
    desc.push_str(" vmafhip name=v ! fakesink name=out sync=false");
    gst::parse::launch(&desc)
        .map_err(|e| Fail(Exit::Failed, format!("building the pipeline: {e}")))?
        .downcast::<gst::Pipeline>()
        .map_err(|_| Fail(Exit::Failed, "not a pipeline".into()))
}

/// Names each rendition's pad after its file (the results files and
/// reports take the name: `out.r720.json`); returns the names.
fn label_pads(v: &gst::Element, renditions: &[Input]) -> Vec<String> {
    let mut used: Vec<String> = Vec::new();
    for r in renditions {
        let stem = std::path::Path::new(&r.path)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut label: String = stem
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if label.is_empty() || used.contains(&label) {
            label = r.role.sink();
        }
        if let Some(pad) = v.static_pad(&r.role.sink()) {
            pad.set_property("label", &label);
        }
        used.push(label);
    }
    used
}

/// Each rendition's pooled values and 1% low (its k-th lowest per-frame
/// score, k = ⌈frames/100⌉, as the HTML report's).
fn lines(heard: &Heard, renditions: &[Input]) -> Result<Vec<Line>, Fail> {
    renditions
        .iter()
        .map(|r| {
            let pad = r.role.sink();
            let p = heard
                .pooled
                .iter()
                .rfind(|p| p.rendition == pad)
                .ok_or_else(|| Fail::input(format!("{}: no frame was scored", r.path)))?;
            let mut scores = heard.frames.get(&pad).cloned().unwrap_or_default();
            scores.sort_by(f64::total_cmp);
            // The k-th lowest, k = ⌈n/100⌉: the report's 1% low, unrounded.
            let low = scores
                .get(scores.len().div_ceil(100).max(1) - 1)
                .copied()
                .unwrap_or(f64::NAN);
            Ok(Line {
                path: r.path.clone(),
                size: (r.video.width, r.video.height),
                mean: p.mean,
                harmonic_mean: p.harmonic_mean,
                one_percent_low: low,
                frames: p.frames,
            })
        })
        .collect()
}

/// One HTML page: every rendition's pooled values and curve
/// (`report::Report::render_ladder`).
fn write_report(
    path: &str,
    a: &Args,
    reference: &Input,
    renditions: &[Input],
    heard: &Heard,
    decoders: &[String],
) -> Result<(), Fail> {
    let reports: Vec<(String, gstvmafhip::report::Report)> = renditions
        .iter()
        .map(|r| {
            let mut report = gstvmafhip::report::Report::new();
            let scores = heard.frames.get(&r.role.sink()).map_or(&[][..], |v| &v[..]);
            for (i, &v) in scores.iter().enumerate() {
                report.push(i as u64, None, [("vmaf", v)]);
            }
            let (w, h) = (r.video.width, r.video.height);
            let file = std::path::Path::new(&r.path)
                .file_name()
                .map_or(r.path.clone(), |f| f.to_string_lossy().into_owned());
            (format!("{file} ({w}x{h})"), report)
        })
        .collect();
    let named: Vec<(String, &gstvmafhip::report::Report)> =
        reports.iter().map(|(n, r)| (n.clone(), r)).collect();
    let rv = &reference.video;
    let facts = vec![
        (
            "reference".to_string(),
            format!("{} ({}x{})", reference.path, rv.width, rv.height),
        ),
        ("model".into(), a.model.clone()),
        (
            "backend".into(),
            heard
                .pooled
                .first()
                .map_or(String::new(), |p| p.backend.clone()),
        ),
        (
            "scaling".into(),
            "bicubic, by the engine (renditions of another size)".into(),
        ),
        ("decoded with".into(), decoders.join(" / ")),
        ("written".into(), gstvmafhip::report::utc_now()),
        ("vmafhip".into(), env!("CARGO_PKG_VERSION").into()),
    ];
    let title = format!("{}: {} renditions", reference.path, renditions.len());
    let page = gstvmafhip::report::Report::render_ladder(&title, &named, &facts);
    std::fs::write(path, page).map_err(|e| Fail(Exit::Failed, format!("--report {path}: {e}")))
}

/// The table on stdout.
fn print_table(reference: &Input, lines: &[Line]) {
    let width = lines
        .iter()
        .map(|l| l.path.len())
        .chain([reference.path.len(), 9])
        .max()
        .unwrap_or(9);
    crate::cli::outln!(
        "{:width$}  {:>9}  {:>10}  {:>10}  {:>10}  {:>6}",
        "rendition",
        "size",
        "VMAF",
        "harmonic",
        "1% low",
        "frames"
    );
    let rv = &reference.video;
    crate::cli::outln!(
        "{:width$}  {:>9}  (reference)",
        reference.path,
        format!("{}x{}", rv.width, rv.height)
    );
    for l in lines {
        crate::cli::outln!(
            "{:width$}  {:>9}  {:>10.6}  {:>10.6}  {:>10.6}  {:>6}",
            l.path,
            format!("{}x{}", l.size.0, l.size.1),
            l.mean,
            l.harmonic_mean,
            l.one_percent_low,
            l.frames
        );
    }
}
