//! Every shell block of README.md and docs/*.md runs, as written, like a
//! doc test: each ```` ```sh ```` block is run by bash in a folder holding
//! the files the docs name (`ref.mp4`, `dist.mp4`: an H.264 round trip of a
//! golden clip; `ref.yuv`, `dist.yuv`: a golden 1080p pair; `ladder.csv`,
//! `catalogue.csv`: lists of those pairs), with `vmafhip` on `PATH`,
//! `target/` the build's, and the plugin on `GST_PLUGIN_PATH`.
//!
//! What the harness changes, and why:
//! - `bash .ci/setup` and `cargo build …` are done already (`.ci/run` set
//!   the machine up; `cargo test` built the plugin, command and examples);
//! - `num-buffers=N` above 60 becomes 60: the sizes, caps and queues stay
//!   as written, so the defaults still matter (the 1080p ladder), while the
//!   suite stays short on two cores.
//!
//! A block that cannot run on this machine says where it runs instead in
//! its info string, ```` ```sh elsewhere:PLACE ````: a test, a script or
//! the GPU machine. The harness checks that PLACE exists and lists them.

mod command_line;
mod common;

use command_line::*;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Block {
    file: String,
    line: usize,
    /// `elsewhere:PLACE`, if any.
    elsewhere: Option<String>,
    text: String,
}

/// Every ```` ```sh ```` block of README.md and docs/*.md, indentation
/// (list items) removed.
fn blocks() -> Vec<Block> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut out = Vec::new();
    for path in files {
        let name = path.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut open: Option<(usize, usize, Option<String>, Vec<String>)> = None;
        for (n, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            let indent = line.len() - trimmed.len();
            match &mut open {
                None => {
                    if let Some(info) = trimmed.strip_prefix("```sh") {
                        let info = info.trim();
                        let elsewhere = info.strip_prefix("elsewhere:").map(str::to_string);
                        assert!(
                            info.is_empty() || elsewhere.is_some(),
                            "{name}:{}: ```sh takes only elsewhere:PLACE",
                            n + 1
                        );
                        open = Some((n + 1, indent, elsewhere, Vec::new()));
                    }
                }
                Some((_, ind, _, body)) => {
                    if !trimmed.starts_with("```") {
                        body.push(line.get(*ind..).unwrap_or(trimmed).to_string());
                        continue;
                    }
                    let (line, _, elsewhere, body) = open.take().unwrap();
                    out.push(Block {
                        file: name.clone(),
                        line,
                        elsewhere,
                        text: body.join("\n"),
                    });
                }
            }
        }
    }
    out
}

/// The block as the harness runs it (see the module's documentation).
fn as_run(text: &str) -> String {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line
            .replace("bash .ci/setup && ", "")
            .replace("cargo build --release && ", "");
        let line = if line.trim_start().starts_with("cargo build ") {
            format!(": {line}")
        } else {
            line
        };
        out.push(cap_buffers(&line));
    }
    out.join("\n")
}

fn cap_buffers(line: &str) -> String {
    let mut rest = line;
    let mut out = String::new();
    while let Some(at) = rest.find("num-buffers=") {
        let (head, tail) = rest.split_at(at + "num-buffers=".len());
        out.push_str(head);
        let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
        let n: u64 = digits.parse().unwrap_or(0);
        out.push_str(&n.min(60).to_string());
        rest = &tail[digits.len()..];
    }
    out.push_str(rest);
    out
}

/// The folder a block runs in, with the files the docs name.
fn fixtures() -> PathBuf {
    let dir = scratch_dir("docs");
    let target = Path::new(env!("CARGO_BIN_EXE_vmafhip"))
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let link = |from: &Path, to: &Path| {
        let _ = std::fs::remove_file(to);
        std::os::unix::fs::symlink(from, to).unwrap();
    };
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    link(
        Path::new(env!("CARGO_BIN_EXE_vmafhip")),
        &dir.join("bin/vmafhip"),
    );
    // `target/release` as `cargo build --release` leaves it: the plugin
    // cargo built for this test run (the one in target/release may be a
    // build without the element, `--no-default-features`), the command and
    // the example.
    let release = dir.join("target/release");
    let _ = std::fs::remove_file(dir.join("target"));
    std::fs::create_dir_all(release.join("examples")).unwrap();
    let plugin = std::env::current_exe()
        .unwrap()
        .with_file_name("libgstvmafhip.so");
    assert!(plugin.exists(), "{} missing", plugin.display());
    link(&plugin, &release.join("libgstvmafhip.so"));
    link(
        Path::new(env!("CARGO_BIN_EXE_vmafhip")),
        &release.join("vmafhip"),
    );
    link(
        &target.join("release/examples/vmaf_yuv"),
        &release.join("examples/vmaf_yuv"),
    );
    link(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tools")
            .as_path(),
        &dir.join("tools"),
    );
    let run = golden_run("eveningglow_1920x1080_420p8_3f_crf30", "vmaf_v0.6.1");
    let (r, d) = run.yuv_paths();
    std::fs::copy(&r, dir.join("ref.yuv")).unwrap();
    std::fs::copy(&d, dir.join("dist.yuv")).unwrap();
    std::fs::write(dir.join("ladder.csv"), "ref.yuv,dist.yuv,pair0.json\n").unwrap();
    std::fs::write(
        dir.join("catalogue.csv"),
        "ref,dist,output\nref.mp4,dist.mp4,results/a.json\nref.mp4,ref.mp4,results/b.json\n",
    )
    .unwrap();
    let run = golden_run("coffee_576x324_420p8_12f_crf35", "vmaf_v0.6.1");
    let (r, d) = run.yuv_paths();
    for (raw, name) in [(&r, "ref.mp4"), (&d, "dist.mp4")] {
        let ok = Command::new("gst-launch-1.0")
            .arg("-q")
            .args(
                format!(
                    "filesrc location={} ! rawvideoparse width=576 height=324 format=i420 framerate=25/1 \
                     ! x264enc speed-preset=veryfast ! h264parse ! mp4mux ! filesink location={}",
                    s(raw),
                    s(&dir.join(name))
                )
                .split_whitespace(),
            )
            .status()
            .unwrap()
            .success();
        assert!(ok, "encoding {name}");
    }
    dir
}

fn run_block(dir: &Path, b: &Block) -> Result<(), String> {
    let script = dir.join("block.sh");
    std::fs::write(&script, format!("set -e\n{}\n", as_run(&b.text))).unwrap();
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new("timeout")
        .args(["300", "bash", s(&script)])
        .current_dir(dir)
        .env("PATH", path)
        .env("GST_PLUGIN_PATH", dir.join("target/release"))
        .env("SLURM_ARRAY_TASK_ID", "0")
        .env("SLURM_ARRAY_TASK_COUNT", "2")
        .output()
        .unwrap();
    if o.status.success() {
        return Ok(());
    }
    let out = String::from_utf8_lossy(&o.stdout);
    let tail: Vec<&str> = out.lines().rev().take(5).collect();
    Err(format!(
        "{}:{}: {:?}\n{}\n{}",
        b.file,
        b.line,
        o.status,
        stderr(&o),
        tail.join("\n")
    ))
}

#[test]
fn every_shell_block_of_the_docs_runs() {
    let all = blocks();
    assert!(all.len() > 20, "{} shell blocks", all.len());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = fixtures();
    let (mut ran, mut failures) = (0, Vec::new());
    for b in &all {
        if let Some(place) = &b.elsewhere {
            let named = place.split_whitespace().next().unwrap_or_default();
            assert!(
                named == "device" || root.join(named).exists(),
                "{}:{}: elsewhere:{place}: no such test or script",
                b.file,
                b.line
            );
            println!("elsewhere  {}:{}: {place}", b.file, b.line);
            continue;
        }
        println!("runs here  {}:{}", b.file, b.line);
        match run_block(&dir, b) {
            Ok(()) => ran += 1,
            Err(e) => failures.push(e),
        }
    }
    println!("{ran} blocks ran, {} failed", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
