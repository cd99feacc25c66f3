//! Helpers of the GPU-memory tests (`gpu_memory.rs`: nvcodec's CUDA
//! memory; `hip_memory.rs`: GStreamer 1.28's HIP memory): whether a GPU and
//! GStreamer's upload element are here, a pipeline's messages and `stats`,
//! and the golden clips through an upload element against system memory.

use super::pipeline::{init, launch};
use super::*;
use gst::prelude::*;
use gstvmafhip::VmafFrameMessage;

/// Whether a GPU (and GStreamer's `upload` element, where named) is here;
/// panics when one must be (`VMAFHIP_REQUIRE_GPU=1`, and for the element
/// `require` set to 1 as well).
pub fn gpu_available(upload: Option<&str>, require: &str) -> bool {
    init();
    let required = std::env::var("VMAFHIP_REQUIRE_GPU").is_ok_and(|v| v == "1");
    let element_required = std::env::var(require).is_ok_and(|v| v == "1");
    let missing = upload.filter(|e| gst::ElementFactory::find(e).is_none());
    let why = if let Some(e) = missing {
        Some((format!("no {e} element"), element_required))
    } else if gstvmafhip::gpu::HipBackend::new(
        gstvmafhip::vmaf::EngineConfig::new(
            gstvmafhip::vmaf::ModelSet::load("vmaf_v0.6.1").unwrap(),
        )
        .plan()
        .unwrap(),
        &Default::default(),
    )
    .is_err()
    {
        Some(("no usable GPU".to_string(), required))
    } else {
        None
    };
    match why {
        Some((w, true)) => panic!("required ({require}, VMAFHIP_REQUIRE_GPU) but {w}"),
        Some((w, false)) => {
            eprintln!("skipped: {w}");
            false
        }
        None => true,
    }
}

/// The element's messages, and its `stats` at EOS.
pub struct Outcome {
    pub frames: Vec<VmafFrameMessage>,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
    pub pooled: Vec<gstvmafhip::VmafPooledMessage>,
    pub stats: Option<gst::Structure>,
}

/// Runs `desc` (whose element is named `v`) to EOS and reads `v`'s stats there.
pub fn run(desc: &str) -> Outcome {
    play(&launch(desc))
}

/// Plays `pipeline` to EOS, reads its element `v`'s stats there, then stops it.
pub fn play(pipeline: &gst::Pipeline) -> Outcome {
    let bus = pipeline.bus().unwrap();
    let _ = pipeline.set_state(gst::State::Playing);
    let said = super::pipeline::collect(&bus);
    let out = Outcome {
        frames: said.frames,
        errors: said.errors,
        warnings: said.warnings,
        pooled: said.pooled,
        stats: pipeline
            .by_name("v")
            .map(|v| v.property::<gst::Structure>("stats")),
    };
    pipeline.set_state(gst::State::Null).unwrap();
    out
}

pub fn stat(out: &Outcome, name: &str) -> u64 {
    out.stats.as_ref().expect("stats").get::<u64>(name).unwrap()
}

/// `filesrc ! rawvideoparse` of one of `run`'s raw files, in format `fmt`.
pub fn raw_src(run: &GoldenRun, path: &std::path::Path, fmt: &str) -> String {
    format!(
        "filesrc location={} ! rawvideoparse width={} height={} format={fmt} framerate=25/1",
        path.display(),
        run.width,
        run.height
    )
}

/// Every metric of every frame message, for bit-for-bit comparison.
pub fn numbers(out: &Outcome) -> Vec<Vec<(String, u64)>> {
    out.frames
        .iter()
        .map(|f| {
            let mut v = vec![("vmaf".to_string(), f.score.to_bits())];
            v.extend(f.features.iter().map(|(k, x)| (k.clone(), x.to_bits())));
            for (k, x) in [
                ("psnr_y", f.psnr_y),
                ("ssim", f.ssim),
                ("ms_ssim", f.ms_ssim),
            ] {
                if let Some(x) = x {
                    v.push((k.to_string(), x.to_bits()));
                }
            }
            v
        })
        .collect()
}

/// Golden clips through `filesrc ! rawvideoparse`, into both pads in
/// system memory and then through `upload` into GPU memory `feature` (the
/// caps filter after it: a transform passes system memory through when
/// downstream takes it): the same numbers bit for bit, libvmaf's within
/// the golden tolerance, and no host staging.
pub fn golden_clips_in_gpu_memory(upload: &str, feature: &str) {
    let cases = [
        ("astronaut_576x324_420p8_12f_crf35", "vmaf_v0.6.1", "i420"),
        ("rocket_576x324_420p10_6f_crf30", "vmaf_v0.6.1", "i420-10le"),
        (
            "astronaut_576x324_420p8_12f_crf23",
            "vmaf_v1.0.16_hfr_3d0h",
            "i420",
        ),
    ];
    for (pair, runname, fmt) in cases {
        let run_ = golden_run(pair, runname);
        let (rp, dp) = run_.yuv_paths();
        let src =
            |path: &std::path::Path, upload: &str| format!("{}{upload}", raw_src(&run_, path, fmt));
        let desc = |upload: &str| {
            format!(
                "{} ! v.ref_sink {} ! v.dist_sink vmafhip name=v backend=hip frame-message=true model-filename=\"{}\" psnr={} ssim={} ! fakesink",
                src(&rp, upload),
                src(&dp, upload),
                run_.model.trim_start_matches("version="),
                run_.psnr,
                run_.ssim,
            )
        };
        let host = run(&desc(""));
        let gpu = run(&desc(&format!(" ! {upload} ! video/x-raw({feature})")));
        assert!(
            host.errors.is_empty(),
            "{pair} system memory: {:?}",
            host.errors
        );
        assert!(gpu.errors.is_empty(), "{pair} {feature}: {:?}", gpu.errors);
        assert!(
            gpu.warnings.is_empty(),
            "{pair} {feature}: {:?}",
            gpu.warnings
        );
        let golden = run_.expected();
        let gf = golden["frames"].as_array().unwrap();
        assert_eq!(gpu.frames.len(), gf.len(), "{pair}");
        assert_eq!(
            numbers(&gpu),
            numbers(&host),
            "{pair}: {feature} vs system memory"
        );
        for (m, g) in gpu.frames.iter().zip(gf) {
            let want = g["metrics"]["vmaf"].as_f64().unwrap();
            assert!(
                (m.score - want).abs() <= 1e-4,
                "{pair} frame {}: {} vs libvmaf {want}",
                m.index,
                m.score
            );
        }
        assert_eq!(gpu.pooled.len(), 1);
        // Planes uploaded per frame: luma, plus chroma for v1's speed_chroma.
        let stats = gpu.stats.as_ref().unwrap();
        eprintln!(
            "{pair} {runname}: {feature} {stats}; system memory {}",
            host.stats.as_ref().unwrap()
        );
        let taken = stats.get::<String>("gpu-memory").unwrap();
        assert!(taken.split(',').any(|f| f == feature), "{pair}: {taken}");
        assert_eq!(stat(&gpu, "planes-staged"), 0, "{pair}: staged on the host");
        assert_eq!(
            stat(&gpu, "planes-pinned"),
            0,
            "{pair}: uploaded from the host"
        );
        let per_frame = stat(&gpu, "planes-device") / gf.len() as u64;
        assert!(
            stat(&gpu, "planes-device") == per_frame * gf.len() as u64 && per_frame >= 2,
            "{pair}: {} device planes for {} frames",
            stat(&gpu, "planes-device"),
            gf.len()
        );
        assert_eq!(stat(&host, "planes-device"), 0);
        assert_eq!(
            stat(&host, "planes-staged") + stat(&host, "planes-pinned"),
            per_frame * gf.len() as u64,
            "{pair}: system memory uploads as many planes"
        );
    }
}

/// A GStreamer GPU element (`cudaupload`, `hipupload`) started alone, so
/// that it made a context of its own, and that context (`context_type`), as
/// it answers the context query: an element's GPU context to hand to others.
pub fn started_alone(element: &str, context_type: &str) -> (gst::Element, gst::Context) {
    let holder = gst::ElementFactory::make(element).build().unwrap();
    holder.set_state(gst::State::Paused).unwrap();
    let mut q = gst::query::Context::new(context_type);
    assert!(
        holder.static_pad("src").unwrap().query(&mut q),
        "{element} answers the {context_type} query"
    );
    let context = q.context_owned().expect("a context");
    (holder, context)
}
