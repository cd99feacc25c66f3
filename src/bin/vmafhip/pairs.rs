//! `--pairs LIST`: many pairs in one run (a catalogue, an encoding ladder),
//! scored concurrently on one GPU or spread over several, each to its own
//! results file, with one summary table; `--shard I/N` takes every N-th
//! pair, for array jobs across machines.

use crate::cli::{Args, Exit, Fail, OutFormat};
use crate::media::decode::{self, GpuWarmUp};
use crate::pair::{self, Pair, Scored, Voice};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `I/N` with `I < N`.
/// The entries of shard `i` of `n`: those whose position in the list is
/// `i` modulo `n`. The shards of one `n` cover the list once.
pub fn shard<T>(items: Vec<T>, (i, n): (usize, usize)) -> Vec<T> {
    items
        .into_iter()
        .enumerate()
        .filter(|(k, _)| k % n == i)
        .map(|(_, t)| t)
        .collect()
}

/// One line of a pairs list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// 1-based line number in the list.
    pub line: usize,
    pub reference: String,
    pub distorted: String,
    pub output: Option<String>,
}

/// Parses a pairs list: CSV lines `REF,DIST[,OUTPUT]`, fields optionally
/// in double quotes (`""` for a quote inside); blank lines and `#` comments
/// are skipped, and so is a first line `ref,dist[,output]`.
pub fn parse_list(text: &str) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields = csv_fields(line).map_err(|e| format!("line {}: {e}", i + 1))?;
        let is_header = |f: &[String]| {
            f.len() >= 2
                && matches!(f[0].to_ascii_lowercase().as_str(), "ref" | "reference")
                && matches!(f[1].to_ascii_lowercase().as_str(), "dist" | "distorted")
        };
        if out.is_empty() && is_header(&fields) {
            continue;
        }
        match fields.as_slice() {
            [r, d] | [r, d, _] if r.is_empty() || d.is_empty() => {
                return Err(format!("line {}: an empty REF or DIST", i + 1));
            }
            [r, d] => out.push(Entry {
                line: i + 1,
                reference: r.clone(),
                distorted: d.clone(),
                output: None,
            }),
            [r, d, o] => out.push(Entry {
                line: i + 1,
                reference: r.clone(),
                distorted: d.clone(),
                output: (!o.is_empty()).then(|| o.clone()),
            }),
            _ => {
                return Err(format!(
                    "line {}: {} fields; a pair is REF,DIST or REF,DIST,OUTPUT",
                    i + 1,
                    fields.len()
                ));
            }
        }
    }
    Ok(out)
}

/// The comma-separated fields of one CSV line.
fn csv_fields(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        let mut field = String::new();
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                    None => return Err("a quote is not closed".into()),
                }
            }
            while chars.peek().is_some_and(|c| *c != ',') {
                if chars.next() != Some(' ') {
                    return Err("text after a closing quote".into());
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                field.push(c);
                chars.next();
            }
            field = field.trim_end().to_string();
        }
        fields.push(field);
        if chars.next().is_none() {
            return Ok(fields);
        }
    }
}

/// Where a pair's results go: its OUTPUT, else DIST's file name with the
/// format's extension in `dir`.
fn output_of(e: &Entry, format: OutFormat, dir: &Path) -> String {
    if let Some(o) = &e.output {
        return o.clone();
    }
    let stem = Path::new(&e.distorted)
        .file_stem()
        .map_or_else(|| "pair".into(), |s| s.to_string_lossy().into_owned());
    let ext = match format {
        OutFormat::Json => "json",
        OutFormat::Xml => "xml",
        OutFormat::Csv => "csv",
        OutFormat::Jsonl => "jsonl",
    };
    dir.join(format!("{stem}.{ext}")).display().to_string()
}

/// The pairs of this shard with their results files and GPUs; an error
/// when two pairs would write the same file.
fn plan(a: &Args, entries: Vec<Entry>) -> Result<Vec<(Entry, Pair)>, Fail> {
    let format = a.format.unwrap_or(OutFormat::Json);
    let dir = PathBuf::from(a.output_dir.as_deref().unwrap_or("."));
    let entries = match a.shard {
        Some(s) => shard(entries, s),
        None => entries,
    };
    let mut seen = std::collections::HashMap::new();
    let mut out = Vec::new();
    for (k, e) in entries.into_iter().enumerate() {
        let output = output_of(&e, format, &dir);
        if let Some(first) = seen.insert(output.clone(), e.line) {
            return Err(Fail(
                Exit::Usage,
                format!(
                    "--pairs: lines {first} and {} would both write {output}: give one of them an OUTPUT column",
                    e.line
                ),
            ));
        }
        let pair = Pair {
            reference: e.reference.clone(),
            distorted: e.distorted.clone(),
            output: Some(output),
            report: None,
            device_id: a.device_ids[k % a.device_ids.len()],
        };
        out.push((e, pair));
    }
    Ok(out)
}

/// Pairs scored at once: `--jobs`, else one per core and at most 16 per
/// GPU, and one on the CPU engine (which already uses every core).
fn jobs(a: &Args, on_gpu: bool, pairs: usize) -> usize {
    let n = a.jobs.unwrap_or_else(|| {
        if on_gpu {
            let cores = std::thread::available_parallelism().map_or(4, |c| c.get());
            cores.min(16 * a.device_ids.len())
        } else {
            1
        }
    });
    n.clamp(1, pairs.max(1))
}

/// Scores the list (this shard of it), prints the summary table, writes it
/// as CSV with `--summary`; fails if any pair failed, after all have run.
pub fn run(a: &Args, list: &str, warm_up: GpuWarmUp) -> Result<(), Fail> {
    let text = std::fs::read_to_string(list).map_err(|e| Fail::input(format!("{list}: {e}")))?;
    let entries = parse_list(&text).map_err(|e| Fail(Exit::Usage, format!("{list}: {e}")))?;
    if entries.is_empty() {
        return Err(Fail::input(format!("{list}: no pairs in it")));
    }
    let planned = plan(a, entries)?;
    if let Some(dir) = &a.output_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| Fail::input(format!("--output-dir {dir}: {e}")))?;
    }
    let gpu = warm_up.wait();
    if let (Some(Err(why)), "hip") = (&gpu, a.backend.as_str()) {
        // Once for the run, not once per pair.
        return Err(Fail(
            Exit::NoGpu,
            format!("--backend hip: no usable GPU ({why}); no pair was scored"),
        ));
    }
    let decoding = decode::rank_decoders(a.decoder, &a.backend, gpu.as_ref())?;
    let on_gpu = matches!(gpu, Some(Ok(_)));
    let mut a = a.clone();
    if let (Some(Err(why)), "auto") = (&gpu, a.backend.as_str()) {
        // Said once here, not by every pair's element.
        if !a.quiet {
            eprintln!("note: no usable GPU ({why}); the pairs are scored on the CPU");
        }
        a.backend = "cpu".into();
    }
    let jobs = jobs(&a, on_gpu, planned.len());
    a.pairs_at_once = jobs;
    let a = &a;
    let start = std::time::Instant::now();
    let results = score_all(a, &planned, &decoding, jobs);
    let secs = start.elapsed().as_secs_f64();
    let rows: Vec<Row> = planned
        .iter()
        .zip(&results)
        .map(|((e, p), r)| Row::new(a, e, p, r))
        .collect();
    if !a.quiet {
        print_table(&rows, secs);
    }
    if let Some(path) = &a.summary {
        std::fs::write(path, summary_csv(&rows))
            .map_err(|e| Fail(Exit::Failed, format!("--summary {path}: {e}")))?;
    }
    let failed: Vec<&Row> = rows.iter().filter(|r| r.error.is_some()).collect();
    match failed.first() {
        None => Ok(()),
        Some(first) => Err(Fail(
            first.code,
            format!(
                "{} of {} pairs failed (see the table)",
                failed.len(),
                rows.len()
            ),
        )),
    }
}

/// Every pair scored by `jobs` worker threads taking the next pair in turn.
fn score_all(
    a: &Args,
    planned: &[(Entry, Pair)],
    decoding: &decode::Decoding,
    jobs: usize,
) -> Vec<Result<Scored, Fail>> {
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Result<Scored, Fail>>>> =
        planned.iter().map(|_| Mutex::new(None)).collect();
    let done = AtomicUsize::new(0);
    let voice = Voice {
        notes: !a.quiet,
        progress: false,
    };
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some((_, pair)) = planned.get(k) else {
                        break;
                    };
                    let r = pair::score_pair(a, pair, decoding, voice);
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if !a.quiet {
                        match &r {
                            Ok(_) => eprintln!("[{n}/{}] {}", planned.len(), pair.distorted),
                            Err(Fail(_, why)) => {
                                eprintln!(
                                    "[{n}/{}] {}: failed: {why}",
                                    planned.len(),
                                    pair.distorted
                                )
                            }
                        }
                    }
                    *results[k].lock().unwrap() = Some(r);
                }
            });
        }
    });
    results
        .into_iter()
        .map(|m| m.into_inner().unwrap().expect("every pair was scored"))
        .collect()
}

/// One row of the summary.
struct Row {
    reference: String,
    distorted: String,
    size: String,
    frames: u64,
    mean: f64,
    harmonic_mean: f64,
    min: f64,
    fps: f64,
    backend: String,
    decoders: String,
    output: String,
    error: Option<String>,
    code: Exit,
}

impl Row {
    fn new(a: &Args, e: &Entry, p: &Pair, r: &Result<Scored, Fail>) -> Row {
        let mut row = Row {
            reference: e.reference.clone(),
            distorted: e.distorted.clone(),
            size: String::new(),
            frames: 0,
            mean: f64::NAN,
            harmonic_mean: f64::NAN,
            min: f64::NAN,
            fps: 0.0,
            backend: String::new(),
            decoders: String::new(),
            output: p.output.clone().unwrap_or_default(),
            error: None,
            code: Exit::Failed,
        };
        match r {
            Ok(s) => {
                let q = &s.pooled;
                row.size = format!("{}x{}", s.sizes[1].0, s.sizes[1].1);
                (row.frames, row.mean, row.harmonic_mean, row.min) =
                    (q.frames, q.mean, q.harmonic_mean, q.min);
                row.fps = q.frames as f64 / s.secs.max(1e-9);
                row.backend = q.backend.clone();
                row.decoders = format!("{} / {}", s.decoders[0], s.decoders[1]);
                if let Some(Fail(code, why)) =
                    crate::pair::length_mismatch(a, q, &p.reference, &p.distorted)
                {
                    (row.error, row.code) = (Some(why), code);
                }
            }
            Err(Fail(code, why)) => {
                row.error = Some(why.clone());
                row.code = *code;
            }
        }
        row
    }
}

fn print_table(rows: &[Row], secs: f64) {
    let width = rows
        .iter()
        .map(|r| r.distorted.len())
        .max()
        .unwrap_or(4)
        .max(4);
    crate::cli::outln!(
        "{:<width$}  {:>9}  {:>6}  {:>10}  {:>10}  {:>10}  {:>7}  results",
        "dist",
        "size",
        "frames",
        "VMAF",
        "harmonic",
        "min",
        "fps"
    );
    let mut frames = 0;
    for r in rows {
        match &r.error {
            None => crate::cli::outln!(
                "{:<width$}  {:>9}  {:>6}  {:>10.6}  {:>10.6}  {:>10.6}  {:>7.1}  {}",
                r.distorted,
                r.size,
                r.frames,
                r.mean,
                r.harmonic_mean,
                r.min,
                r.fps,
                r.output
            ),
            Some(e) => crate::cli::outln!("{:<width$}  failed: {e}", r.distorted),
        }
        frames += r.frames;
    }
    let ok = rows.iter().filter(|r| r.error.is_none()).count();
    let backend = rows
        .iter()
        .find(|r| r.error.is_none())
        .map_or("", |r| r.backend.as_str());
    eprintln!(
        "{ok} of {} pairs scored, {frames} frames in {secs:.2} s ({:.1} fps in all), {backend}",
        rows.len(),
        frames as f64 / secs.max(1e-9)
    );
}

/// The summary as CSV: one row per pair.
fn summary_csv(rows: &[Row]) -> String {
    let q = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut out = String::from(
        "ref,dist,size,frames,vmaf_mean,vmaf_harmonic_mean,vmaf_min,fps,backend,decoders,results,error\n",
    );
    for r in rows {
        let num = |v: f64| {
            if v.is_nan() {
                String::new()
            } else {
                format!("{v:.6}")
            }
        };
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{:.1},{},{},{},{}\n",
            q(&r.reference),
            q(&r.distorted),
            r.size,
            r.frames,
            num(r.mean),
            num(r.harmonic_mean),
            num(r.min),
            r.fps,
            q(&r.backend),
            q(&r.decoders),
            q(&r.output),
            q(r.error.as_deref().unwrap_or(""))
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_with_quotes_comments_and_a_header() {
        let text = "ref,dist,output\n# a comment\n\na.yuv,b.yuv\n\"c,1.yuv\", \"d \"\"q\"\".yuv\" ,out.json\n";
        let e = parse_list(text).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(
            (e[0].line, e[0].reference.as_str(), e[0].distorted.as_str()),
            (4, "a.yuv", "b.yuv")
        );
        assert_eq!(e[0].output, None);
        assert_eq!(e[1].reference, "c,1.yuv");
        assert_eq!(e[1].distorted, "d \"q\".yuv");
        assert_eq!(e[1].output.as_deref(), Some("out.json"));
        for (bad, needle) in [
            ("a.yuv\n", "1 fields"),
            ("a,b,c,d\n", "4 fields"),
            ("\"a,b\n", "not closed"),
            (",b\n", "empty REF"),
        ] {
            let err = parse_list(bad).unwrap_err();
            assert!(err.contains(needle), "{bad:?}: {err}");
        }
    }

    #[test]
    fn shards_cover_the_list_once() {
        for len in 0..12usize {
            for n in 1..6 {
                let mut all: Vec<usize> = (0..n)
                    .flat_map(|i| shard((0..len).collect(), (i, n)))
                    .collect();
                all.sort();
                assert_eq!(all, (0..len).collect::<Vec<_>>(), "{len} pairs, {n} shards");
            }
        }
        assert_eq!(shard(vec!['a', 'b', 'c', 'd', 'e'], (1, 2)), vec!['b', 'd']);
    }
}
