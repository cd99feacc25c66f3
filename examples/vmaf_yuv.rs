//! Compare two raw YUV files with the CPU engine, like libvmaf's `vmaf` CLI.
//!
//! ```text
//! cargo run --release --example vmaf_yuv -- -r ref.yuv -d dist.yuv -w 1920 -h 1080 \
//!     -p 420 -b 8 --model version=vmaf_v0.6.1 --feature psnr --threads 0 --json -o out.json
//! ```

use gstvmafhip::vmaf::ModelSpec;
use gstvmafhip::vmaf::output::{Format, Results};
use gstvmafhip::vmaf::yuv::YuvFrame;
use gstvmafhip::vmaf::{Engine, EngineConfig, PixelFormat, Scorer};
use std::io::{BufReader, IsTerminal, Write};
use std::time::Instant;

const USAGE: &str = "usage: vmaf_yuv -r REF.yuv -d DIST.yuv -w W -h H -p 420|422|444 -b 8|10|12|16
                [--model version=NAME|path=FILE[:FEATURE.OPTION=VALUE]...]
                [--feature psnr|float_ssim|float_ms_ssim|cambi|speed_chroma]...
                [--threads N] [--subsample N] [--frame_cnt N] [--json|--xml|--csv] [-o FILE] [--quiet]";

struct Args {
    reference: String,
    distorted: String,
    width: usize,
    height: usize,
    format: PixelFormat,
    bpc: u8,
    model: String,
    features: Vec<String>,
    threads: usize,
    subsample: u32,
    frame_cnt: Option<u64>,
    out_format: Format,
    output: Option<String>,
    quiet: bool,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        reference: String::new(),
        distorted: String::new(),
        width: 0,
        height: 0,
        format: PixelFormat::Yuv420,
        bpc: 8,
        model: "version=vmaf_v0.6.1".into(),
        features: Vec::new(),
        threads: 1,
        subsample: 1,
        frame_cnt: None,
        out_format: Format::Xml,
        output: None,
        quiet: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut val = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match flag.as_str() {
            "-r" | "--reference" => a.reference = val(&flag)?,
            "-d" | "--distorted" => a.distorted = val(&flag)?,
            "-w" | "--width" => a.width = val(&flag)?.parse().map_err(|_| "bad width")?,
            "-h" | "--height" => a.height = val(&flag)?.parse().map_err(|_| "bad height")?,
            "-p" | "--pixel_format" => {
                let v = val(&flag)?;
                a.format = PixelFormat::parse(&v)
                    .ok_or_else(|| format!("pixel format {v}: use 420, 422, 444 or 400"))?
            }
            "-b" | "--bitdepth" => a.bpc = val(&flag)?.parse().map_err(|_| "bad bit depth")?,
            "-m" | "--model" => a.model = val(&flag)?,
            "--feature" => a.features.push(val(&flag)?),
            "--threads" => a.threads = val(&flag)?.parse().map_err(|_| "bad thread count")?,
            "--subsample" => a.subsample = val(&flag)?.parse().map_err(|_| "bad subsample")?,
            "--frame_cnt" => {
                a.frame_cnt = Some(val(&flag)?.parse().map_err(|_| "bad frame count")?)
            }
            "--json" => a.out_format = Format::Json,
            "--xml" => a.out_format = Format::Xml,
            "--csv" => a.out_format = Format::Csv,
            "-o" | "--output" => a.output = Some(val(&flag)?),
            "-q" | "--quiet" => a.quiet = true,
            "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    if a.reference.is_empty() || a.distorted.is_empty() || a.width == 0 || a.height == 0 {
        return Err(USAGE.into());
    }
    Ok(a)
}

fn run(a: Args) -> Result<(), Box<dyn std::error::Error>> {
    let spec = ModelSpec::parse(&a.model)?;
    let mut config = EngineConfig::new(spec.models);
    config.flags = spec.flags;
    // The plan checks the names, with the list of those it takes.
    config.features = a.features.clone();
    config.threads = a.threads;
    config.subsample = a.subsample;
    let mut engine = Scorer::cpu(&config)?;
    let open = |p: &str| {
        std::fs::File::open(p)
            .map(BufReader::new)
            .map_err(|e| format!("{p}: {e}"))
    };
    let (mut rf, mut df) = (open(&a.reference)?, open(&a.distorted)?);
    let mut rbuf = YuvFrame::new(a.width, a.height, a.format, a.bpc)?;
    let mut dbuf = YuvFrame::new(a.width, a.height, a.format, a.bpc)?;
    let progress = !a.quiet && std::io::stderr().is_terminal();
    let start = Instant::now();
    let mut frames = Vec::new();
    let mut n = 0u64;
    loop {
        if a.frame_cnt.is_some_and(|c| n >= c) {
            break;
        }
        let named = |path: &str, e: gstvmafhip::vmaf::VmafError| {
            format!("{path}: {e} (after {n} whole frames; a raw file must hold whole frames)")
        };
        let hr = rbuf
            .read_from(&mut rf)
            .map_err(|e| named(&a.reference, e))?;
        let hd = dbuf
            .read_from(&mut df)
            .map_err(|e| named(&a.distorted, e))?;
        if hr != hd {
            return Err(format!(
                "{} ends after {n} frames but the other file goes on",
                if hr { &a.distorted } else { &a.reference }
            )
            .into());
        }
        if !hr {
            break;
        }
        frames.extend(engine.push(gstvmafhip::vmaf::FramePair::new(
            &rbuf.picture()?,
            &dbuf.picture()?,
        ))?);
        n += 1;
        if progress {
            let secs = start.elapsed().as_secs_f64();
            eprint!("\rframe {n}  {:.1} fps", n as f64 / secs.max(1e-9));
        }
    }
    frames.extend(engine.flush()?);
    let secs = start.elapsed().as_secs_f64();
    if progress {
        eprintln!();
    }
    if n == 0 {
        return Err(format!(
            "{} and {}: no whole {}x{} frame to compare (empty files?)",
            a.reference, a.distorted, a.width, a.height
        )
        .into());
    }
    let pooled = engine.pooled();
    let fps = n as f64 / secs;
    let results = Results {
        frames: &frames,
        pooled: &pooled,
        width: a.width,
        height: a.height,
        fps: Some(fps),
        version: "3.2.0",
    };
    let text = results.write(a.out_format);
    match &a.output {
        Some(path) => std::fs::write(path, text).map_err(|e| format!("{path}: {e}"))?,
        None => std::io::stdout().write_all(text.as_bytes())?,
    }
    if !a.quiet {
        let vmaf = pooled.get("vmaf").map_or(f64::NAN, |p| p.mean());
        eprintln!(
            "vmaf_v: {vmaf:.6} ({n} frames, {fps:.2} fps, {})",
            engine.describe()
        );
    }
    Ok(())
}

fn main() {
    match parse() {
        Err(msg) => {
            eprintln!("{msg}");
            std::process::exit(2);
        }
        Ok(a) => {
            if let Err(e) = run(a) {
                eprintln!("vmaf_yuv: {e}");
                std::process::exit(1);
            }
        }
    }
}
