//! The HTML report in a real browser: headless Chromium renders it, takes
//! a screenshot, and the screenshot must show the plot (curve and band
//! pixels across the plot's width, not a blank page). Also: the SVG has the
//! expected series and axis labels, and 100,000 frames stay a small page.
//!
//! Needs `chromium` (Debian's package; `.ci/setup` installs it). Without it
//! the tests say so and pass, unless `VMAFHIP_REQUIRE_CHROMIUM=1` (CI).

mod common;

use common::*;
use gstvmafhip::report::Report;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| {
            std::env::var_os("PATH")
                .into_iter()
                .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
                .map(move |dir| dir.join(name))
        })
        .find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("VMAFHIP_REQUIRE_CHROMIUM").is_none(),
            "VMAFHIP_REQUIRE_CHROMIUM is set but no chromium is on PATH"
        );
        eprintln!("skipped: no chromium on PATH (apt-get install chromium)");
    }
    found
}

/// Renders `html` headless at 1100 px wide and returns the screenshot.
fn screenshot(browser: &Path, html: &Path, tag: &str) -> (u32, u32, Vec<[u8; 3]>) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join(format!("{tag}.png"));
    let _ = std::fs::remove_file(&png);
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-dev-shm-usage",
            "--window-size=1100,2400",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.join(format!("profile-{tag}")).display()
        ))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html.canonicalize().unwrap().display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("chromium starts");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium took over 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png).expect("chromium wrote the screenshot"),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert!(channels >= 3 && info.bit_depth == png::BitDepth::Eight);
    let pixels = buf[..info.buffer_size()]
        .chunks_exact(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    (info.width, info.height, pixels)
}

/// The plot's curve colour (#1f77b4) and its band (the same at 22% over
/// the plot's #fbfcfe background).
fn is_curve(p: [u8; 3]) -> bool {
    p[0].abs_diff(31) < 24 && p[1].abs_diff(119) < 24 && p[2].abs_diff(180) < 24
}

fn is_band(p: [u8; 3]) -> bool {
    p[0].abs_diff(203) < 14 && p[1].abs_diff(223) < 14 && p[2].abs_diff(238) < 14
}

/// Checks a screenshot shows a drawn plot: not blank, curve and band
/// pixels spread over most of the main plot's width.
fn assert_plot_drawn(w: u32, h: u32, px: &[[u8; 3]], what: &str) {
    assert_eq!(px.len(), (w * h) as usize);
    // The top of the page (title, cards, main plot) is mostly drawn on.
    let top = &px[..(w * h.min(900)) as usize];
    let non_white = top.iter().filter(|p| p.iter().any(|&c| c < 240)).count();
    assert!(
        non_white * 100 > top.len() * 2,
        "{what}: page nearly blank ({non_white} non-white pixels in the top 900 rows)"
    );
    let mut colours: Vec<[u8; 3]> = px.to_vec();
    colours.sort_unstable();
    colours.dedup();
    assert!(
        colours.len() > 100,
        "{what}: only {} colours",
        colours.len()
    );
    // Columns of the top 900 rows (the main plot) that hold curve pixels.
    let rows = h.min(900) as usize;
    let mut cols = vec![false; w as usize];
    let mut curve = 0;
    let mut band = 0;
    for y in 0..rows {
        for x in 0..w as usize {
            let p = px[y * w as usize + x];
            if is_curve(p) {
                curve += 1;
                cols[x] = true;
            }
            band += is_band(p) as usize;
        }
    }
    let spread = cols.iter().filter(|&&c| c).count();
    assert!(curve > 300, "{what}: {curve} curve pixels in the main plot");
    assert!(spread > 600, "{what}: curve spans {spread} columns of {w}");
    assert!(band > 200, "{what}: {band} band pixels");
}

#[test]
fn report_of_a_golden_run_draws_its_plot_in_chromium() {
    let Some(browser) = chromium() else { return };
    let run = golden_runs()
        .into_iter()
        .find(|r| r.pair == "astronaut_576x324_420p8_12f_crf35" && r.model_name() == "vmaf_v0.6.1")
        .unwrap();
    let (r, d) = run.yuv_paths();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&dir).unwrap();
    let html = dir.join("golden.html");
    let o = Command::new(env!("CARGO_BIN_EXE_vmafhip"))
        .args([r.to_str().unwrap(), d.to_str().unwrap()])
        .args(["-w", "576", "-h", "324", "--feature", "psnr", "--quiet"])
        .args(["--report", html.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    // The series, the marks and the axis labels.
    assert!(
        page.contains("id=\"vmaf-plot\"") && page.contains("class=\"curve\" data-series=\"vmaf\"")
    );
    for m in [
        "integer_adm2",
        "integer_vif_scale0",
        "integer_vif_scale3",
        "integer_motion2",
        "psnr_y",
    ] {
        assert!(page.contains(&format!("data-metric=\"{m}\"")), "{m}");
    }
    for mark in ["pooled", "low1", "low5", "min"] {
        assert!(page.contains(&format!("data-mark=\"{mark}\"")), "{mark}");
    }
    assert!(page.contains(">time (s)</text>") && page.contains(">VMAF</text>"));
    // The pooled value libvmaf gives, in the summary.
    let mean = run.expected()["pooled_metrics"]["vmaf"]["mean"]
        .as_f64()
        .unwrap();
    assert!(
        page.contains(&format!("{mean:.3}")),
        "pooled {mean:.3} not on the page"
    );
    assert!(page.contains("astronaut_576x324_420p8_12f_ref.yuv"));
    let (w, h, px) = screenshot(&browser, &html, "golden");
    assert_plot_drawn(w, h, &px, "golden run");
}

#[test]
fn report_of_100000_frames_is_small_and_draws_in_chromium() {
    let Some(browser) = chromium() else { return };
    let mut r = Report::new();
    for i in 0..100_000u64 {
        let t = i as f64 / 30.0;
        // A slow wave with a sharp dip around frame 70,000.
        let dip = if (69_990..70_010).contains(&i) {
            40.0
        } else {
            0.0
        };
        let v = 85.0 + 8.0 * (t / 200.0).sin() + 3.0 * ((i * 7919 % 101) as f64 / 101.0) - dip;
        r.push(
            i,
            Some(t),
            [("vmaf", v), ("integer_adm2", 0.9 + v / 1000.0)],
        );
    }
    let page = r.render(
        "synthetic 100,000 frames",
        &[("frames".into(), "100000".into())],
    );
    let tags = page.matches('<').count();
    assert!(tags < 600, "{tags} tags for 100,000 frames");
    assert!(page.len() < 250_000, "{} bytes", page.len());
    // The dip survives downsampling: the minimum and the worst frame.
    assert!(r.worst()[0].index >= 69_990 && r.worst()[0].index < 70_010);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&dir).unwrap();
    let html = dir.join("long.html");
    std::fs::write(&html, &page).unwrap();
    let (w, h, px) = screenshot(&browser, &html, "long");
    assert_plot_drawn(w, h, &px, "100,000 frames");
}
