//! GPU-resident input: frames in GStreamer's CUDA memory (`cudaupload`
//! from nvcodec) score exactly as the same frames in system memory, and
//! reach the kernels with a copy on the device only: the element's `stats`
//! count no plane staged on the host or uploaded from it.
//!
//! Needs a GPU and GStreamer's nvcodec plugin (`gstreamer1.0-plugins-bad`);
//! without them each test says why and passes, unless `VMAFHIP_REQUIRE_GPU=1`
//! (device runs), which makes a missing GPU or `cudaupload` a failure.

mod common;

use common::gpu::*;
use common::pipeline::launch;
use common::*;
use gst::prelude::*;

/// Whether the tests can run here; panics when they must.
fn available() -> bool {
    gpu_available(Some("cudaupload"), "VMAFHIP_REQUIRE_GPU")
}

/// Golden clips through `filesrc ! rawvideoparse`, into both pads in
/// system memory and then through `cudaupload` (the caps filter after it:
/// a transform passes system memory through when downstream takes it):
/// the same numbers bit for bit, libvmaf's within the golden tolerance,
/// and no host staging.
#[test]
fn cuda_memory_scores_like_system_memory_with_no_host_copy() {
    if available() {
        golden_clips_in_gpu_memory("cudaupload", "memory:CUDAMemory");
    }
}

/// NV12 and P010 in CUDA memory (what NVIDIA's decoders give, at 8 and 10
/// bits) score as the same frames in system memory, luma-only and with
/// PSNR (which reads the interleaved chroma, split and for P010 shifted on
/// the device), with every plane read on the device.
#[test]
fn nv12_and_p010_cuda_memory_read_in_place() {
    if !available() {
        return;
    }
    for format in ["NV12", "P010_10LE"] {
        let src = |speed: u32| {
            format!(
                "videotestsrc num-buffers=8 pattern=smpte horizontal-speed={speed} ! video/x-raw,format={format},width=320,height=240,framerate=30/1"
            )
        };
        let desc = |upload: &str, psnr: bool| {
            format!(
                "{} {upload} ! v.ref_sink {} {upload} ! v.dist_sink vmafhip name=v backend=hip frame-message=true psnr={psnr} ! fakesink",
                src(2),
                src(3)
            )
        };
        for psnr in [false, true] {
            let host = run(&desc("", psnr));
            let gpu = run(&desc("! cudaupload ! video/x-raw(memory:CUDAMemory)", psnr));
            assert!(
                host.errors.is_empty() && gpu.errors.is_empty(),
                "{format}: {:?} {:?}",
                host.errors,
                gpu.errors
            );
            assert_eq!(gpu.frames.len(), 8);
            assert_eq!(
                numbers(&gpu),
                numbers(&host),
                "{format}, psnr={psnr}: CUDA memory vs system memory"
            );
            assert_eq!(stat(&gpu, "planes-staged") + stat(&gpu, "planes-pinned"), 0);
            let planes = if psnr { 48 } else { 16 };
            assert_eq!(stat(&gpu, "planes-device"), planes, "{format}, psnr={psnr}");
        }
    }
}

/// `tests/data/NAME`, from the source tree or, where the test binary was
/// carried to another machine, from the working directory's `tests/data`.
fn data_file(name: &str) -> std::path::PathBuf {
    let built = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    if built.exists() {
        built
    } else {
        std::path::Path::new("tests/data").join(name)
    }
}

/// NVIDIA's hardware decoder (`nvh264dec`) into both pads: it asks for a
/// CUDA context when it opens, before the element starts, so the element
/// answers from its settings; its frames (NV12 in CUDA memory) are then read
/// on the device, with the same numbers as the same decoder's frames in
/// system memory. Skips without NVDEC unless `VMAFHIP_REQUIRE_NVDEC=1`.
#[test]
fn nvdec_frames_are_read_on_the_device() {
    if !available() {
        return;
    }
    if gst::ElementFactory::find("nvh264dec").is_none()
        || gst::ElementFactory::find("h264parse").is_none()
    {
        assert!(
            !std::env::var("VMAFHIP_REQUIRE_NVDEC").is_ok_and(|v| v == "1"),
            "VMAFHIP_REQUIRE_NVDEC=1 but no nvh264dec/h264parse"
        );
        eprintln!("skipped: no nvh264dec (NVDEC) or h264parse");
        return;
    }
    let (r, d) = (
        data_file("ball_320x240_ref.h264"),
        data_file("ball_320x240_dis.h264"),
    );
    let desc = |after: &str| {
        format!(
            "filesrc location={} ! h264parse ! nvh264dec {after} ! v.ref_sink filesrc location={} ! h264parse ! nvh264dec {after} ! v.dist_sink vmafhip name=v backend=hip frame-message=true ! fakesink",
            r.display(),
            d.display()
        )
    };
    let gpu = run(&desc(""));
    let host = run(&desc("! video/x-raw,format=NV12"));
    assert!(
        gpu.errors.is_empty() && host.errors.is_empty(),
        "{:?} {:?}",
        gpu.errors,
        host.errors
    );
    assert!(gpu.warnings.is_empty(), "{:?}", gpu.warnings);
    assert_eq!(gpu.frames.len(), 30);
    assert_eq!(
        numbers(&gpu),
        numbers(&host),
        "NVDEC: CUDA memory vs system memory"
    );
    eprintln!(
        "nvh264dec: CUDA memory {}; system memory {}",
        gpu.stats.as_ref().unwrap(),
        host.stats.as_ref().unwrap()
    );
    assert_eq!(stat(&gpu, "planes-staged") + stat(&gpu, "planes-pinned"), 0);
    assert_eq!(stat(&gpu, "planes-device"), 60);
    assert_eq!(stat(&host, "planes-device"), 0);
}

/// Frames in ordinary memory (`filesrc ! rawvideoparse`, which takes no pool
/// from downstream) have the planes the engine reads (the luma; all three
/// where PSNR or v1's speed_chroma read the chroma) copied into pinned memory
/// by the sink pads as they arrive: the same numbers as the CPU engine bit
/// for bit, every plane uploaded from pinned memory and none staged, and
/// `src` gives each reference buffer on as it came: its bytes, one memory,
/// no mark of the copy. One case without PSNR, so that the luma-only copy
/// (the frame rebuilt around it) runs.
#[test]
fn ordinary_memory_frames_are_copied_on_arrival_and_pass_through_unchanged() {
    if !gpu_available(None, "VMAFHIP_REQUIRE_GPU") {
        return;
    }
    let cases = [
        (
            "astronaut_576x324_420p8_12f_crf35",
            "vmaf_v0.6.1",
            "i420",
            true,
        ),
        (
            "astronaut_576x324_420p8_12f_crf35",
            "vmaf_v0.6.1",
            "i420",
            false,
        ),
        (
            "rocket_576x324_420p10_6f_crf30",
            "vmaf_v0.6.1",
            "i420-10le",
            false,
        ),
        (
            "astronaut_576x324_420p8_12f_crf23",
            "vmaf_v1.0.16_hfr_3d0h",
            "i420",
            true,
        ),
    ];
    for (pair, runname, fmt, as_run) in cases {
        let run_ = golden_run(pair, runname);
        let (rp, dp) = run_.yuv_paths();
        let src = |path: &std::path::Path| raw_src(&run_, path, fmt);
        let desc = |backend: &str| {
            format!(
                "{} ! v.ref_sink {} ! v.dist_sink vmafhip name=v backend={backend} frame-message=true model-filename=\"{}\" psnr={} ssim={} ! appsink name=out sync=false",
                src(&rp),
                src(&dp),
                run_.model.trim_start_matches("version="),
                run_.psnr && as_run,
                run_.ssim,
            )
        };
        let chroma = (run_.psnr && as_run) || runname.starts_with("vmaf_v1");
        let (gpu, out) = run_with_output(&desc("hip"));
        let (cpu, _) = run_with_output(&desc("cpu"));
        assert!(gpu.errors.is_empty(), "{pair}: {:?}", gpu.errors);
        assert!(gpu.warnings.is_empty(), "{pair}: {:?}", gpu.warnings);
        let frames = run_.expected()["frames"].as_array().unwrap().len();
        assert_eq!(gpu.frames.len(), frames, "{pair}");
        assert_eq!(numbers(&gpu), numbers(&cpu), "{pair}: GPU vs CPU engine");
        eprintln!("{pair} {runname}: {}", gpu.stats.as_ref().unwrap());
        let n = frames as u64;
        let planes = if chroma { 6 } else { 2 };
        assert_eq!(stat(&gpu, "planes-copied-on-arrival"), planes * n, "{pair}");
        assert_eq!(stat(&gpu, "planes-pinned"), planes * n, "{pair}");
        assert_eq!(stat(&gpu, "planes-staged"), 0, "{pair}");
        assert_eq!(
            stat(&gpu, "planes-registered") + stat(&gpu, "planes-device"),
            0
        );
        // The reference, as it came.
        let bytes = std::fs::read(&rp).unwrap();
        let frame_len = bytes.len() / frames;
        assert_eq!(out.len(), frames, "{pair}: output buffers");
        for (i, b) in out.iter().enumerate() {
            assert_eq!(b.n_memory(), 1, "{pair} output {i}: memories");
            assert!(
                gst::meta::CustomMeta::from_buffer(b, "GstVmafHipCopiedOnArrival").is_err(),
                "{pair} output {i}: carries the copy's mark"
            );
            let map = b.map_readable().unwrap();
            assert!(
                map.as_slice() == &bytes[i * frame_len..(i + 1) * frame_len],
                "{pair} output {i}: not the reference frame"
            );
        }
    }
}

/// Like `run`, with every buffer the pipeline's `appsink` named `out` received.
fn run_with_output(desc: &str) -> (Outcome, Vec<gst::Buffer>) {
    let pipeline = launch(desc);
    let sink = pipeline
        .by_name("out")
        .unwrap()
        .downcast::<gst_app::AppSink>()
        .unwrap();
    let got = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = got.clone();
    sink.set_callbacks(
        gst_app::AppSinkCallbacks::builder()
            .new_sample(move |s| {
                let sample = s.pull_sample().map_err(|_| gst::FlowError::Eos)?;
                keep.lock().unwrap().push(sample.buffer_owned().unwrap());
                Ok(gst::FlowSuccess::Ok)
            })
            .build(),
    );
    let out = play(&pipeline);
    let buffers = std::mem::take(&mut *got.lock().unwrap());
    (out, buffers)
}

/// Pool buffers that upstream gives back with their memory still shared
/// (GstBaseParse in push mode makes each buffer writable by a copy that
/// shares its memory) are discarded by the pool, but their page-locked
/// blocks are recycled, not freed and allocated again for every frame
/// (which held sixteen such pipelines to ~215 fps in total): 120 frames a
/// pad take a handful of blocks, with the numbers of the CPU engine.
#[test]
fn pinned_blocks_are_recycled_when_the_pool_discards_buffers() {
    if !gpu_available(None, "VMAFHIP_REQUIRE_GPU") {
        return;
    }
    let src = |colour: &str| {
        format!(
            "videotestsrc num-buffers=120 pattern=solid-color foreground-color={colour} ! video/x-raw,format=I420,width=640,height=360,framerate=30/1 ! rawvideoparse use-sink-caps=true"
        )
    };
    let desc = |backend: &str| {
        format!(
            "{} ! v.ref_sink {} ! v.dist_sink vmafhip name=v backend={backend} frame-message=true ! fakesink",
            src("0xff808080"),
            src("0xff707070")
        )
    };
    let gpu = run(&desc("hip"));
    let cpu = run(&desc("cpu"));
    assert!(gpu.errors.is_empty(), "{:?}", gpu.errors);
    assert_eq!(gpu.frames.len(), 120);
    assert_eq!(numbers(&gpu), numbers(&cpu), "GPU vs CPU engine");
    let stats = gpu.stats.as_ref().unwrap();
    eprintln!("{stats}");
    let blocks = stat(&gpu, "pinned-blocks");
    assert!(
        (1..=32).contains(&blocks),
        "{blocks} pinned blocks allocated for 240 frames"
    );
}

/// CUDA memory of a context the element does not run in (`cudaupload`
/// given the context of another `cudaupload`, started alone, which made
/// its own) is copied on the GPU into the engine's context, plane by plane,
/// with one warning: the numbers of system memory, nothing through the host.
#[test]
fn cuda_memory_of_another_context_is_copied_on_the_gpu() {
    if !available() {
        return;
    }
    // cudaupload makes its CUDA context when it starts.
    let (holder, context) = started_alone("cudaupload", "gst.cuda.context");
    let src = |pattern: &str, upload: &str| {
        format!(
            "videotestsrc num-buffers=8 pattern={pattern} ! video/x-raw,format=NV12,width=320,height=240,framerate=30/1{upload}"
        )
    };
    let desc = |upload: &dyn Fn(u32) -> String| {
        format!(
            "{} ! v.ref_sink {} ! v.dist_sink vmafhip name=v backend=hip frame-message=true psnr=true ! fakesink",
            src("smpte", &upload(0)),
            src("ball", &upload(1))
        )
    };
    let host = run(&desc(&|_| String::new()));
    let pipeline = launch(&desc(&|n| {
        format!(" ! cudaupload name=u{n} ! video/x-raw(memory:CUDAMemory)")
    }));
    for n in 0..2 {
        pipeline
            .by_name(&format!("u{n}"))
            .unwrap()
            .set_context(&context);
    }
    let gpu = play(&pipeline);
    holder.set_state(gst::State::Null).unwrap();
    assert!(gpu.errors.is_empty(), "{:?}", gpu.errors);
    assert_eq!(gpu.frames.len(), 8);
    assert_eq!(
        numbers(&gpu),
        numbers(&host),
        "copied CUDA memory vs system memory"
    );
    assert!(
        gpu.warnings.len() == 2 && gpu.warnings.iter().all(|w| w.contains("copied on the GPU")),
        "one warning a pad: {:?}",
        gpu.warnings
    );
    assert_eq!(stat(&gpu, "planes-staged") + stat(&gpu, "planes-pinned"), 0);
    // NV12's two planes of 8 frames on each pad, copied; the engine reads
    // luma and both chroma planes (PSNR) of each.
    assert_eq!(stat(&gpu, "planes-device-copied"), 8 * 2 * 2);
    assert_eq!(stat(&gpu, "planes-device"), 8 * 2 * 3);
}
