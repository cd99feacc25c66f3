//! GStreamer 1.28's HIP memory (`memory:HIPMemory`, libgsthip-1.0: the
//! `hipupload` and `hipconvert` elements) into the element: frames read on
//! the device with the numbers of system memory and of the CPU engine, no
//! plane staged on the host, the reference passed on in HIP memory, and
//! GStreamer's HIP device shared through a `gst.hip.device` context.
//!
//! Needs a GPU and GStreamer 1.28's hip plugin (GStreamer 1.22–1.26 have
//! none); without them each test says why and passes, unless
//! `VMAFHIP_REQUIRE_GSTHIP=1` (the GPU machine under 1.28:
//! benches/device_sid_env.sh), which makes a missing `hipupload` a failure,
//! and `VMAFHIP_REQUIRE_GPU=1` a missing GPU.

mod common;

use common::gpu::*;
use common::pipeline::launch;
use gst::prelude::*;

/// Whether the tests can run here; panics when they must.
fn available() -> bool {
    gpu_available(Some("hipupload"), "VMAFHIP_REQUIRE_GSTHIP")
}

#[test]
fn hip_memory_scores_like_system_memory_with_no_host_copy() {
    if available() {
        golden_clips_in_gpu_memory("hipupload", "memory:HIPMemory");
    }
}

/// `hipconvert`'s output in every layout the engine reads in place (8-bit
/// 4:2:0 planar and semi-planar, 10-bit planar and P010, 4:4:4), with PSNR
/// (which reads the chroma): the numbers of the CPU engine on the same
/// frames downloaded by `hipdownload`, every plane read on the device.
#[test]
fn hipconvert_output_is_read_in_place() {
    if !available() {
        return;
    }
    for format in ["I420", "NV12", "I420_10LE", "P010_10LE", "Y444"] {
        let src = |speed: u32| {
            format!(
                "videotestsrc num-buffers=8 pattern=smpte horizontal-speed={speed} ! video/x-raw,format=NV12,width=320,height=240,framerate=30/1 ! hipupload ! hipconvert ! video/x-raw(memory:HIPMemory),format={format}"
            )
        };
        let desc = |download: &str, backend: &str| {
            format!(
                "{}{download} ! v.ref_sink {}{download} ! v.dist_sink vmafhip name=v backend={backend} frame-message=true psnr=true ! fakesink",
                src(2),
                src(3)
            )
        };
        let gpu = run(&desc("", "hip"));
        let cpu = run(&desc(" ! hipdownload", "cpu"));
        assert!(gpu.errors.is_empty(), "{format}: {:?}", gpu.errors);
        assert!(cpu.errors.is_empty(), "{format}: {:?}", cpu.errors);
        assert_eq!(gpu.frames.len(), 8, "{format}");
        assert_eq!(
            numbers(&gpu),
            numbers(&cpu),
            "{format}: HIP memory vs the CPU engine"
        );
        assert_eq!(stat(&gpu, "planes-staged"), 0, "{format}");
        assert_eq!(stat(&gpu, "planes-pinned"), 0, "{format}");
        // Luma and both chroma planes (PSNR reads them) of 8 frame pairs.
        assert_eq!(stat(&gpu, "planes-device"), 8 * 2 * 3, "{format}");
    }
}

/// Downstream that takes HIP memory only gets the reference in HIP memory:
/// every frame, the reference's own buffer (never mapped to the host).
#[test]
fn the_reference_leaves_in_hip_memory() {
    if !available() {
        return;
    }
    let up = "video/x-raw,format=NV12,width=320,height=240,framerate=30/1 ! hipupload";
    let pipeline = launch(&format!(
        "videotestsrc num-buffers=6 ! {up} ! v.ref_sink videotestsrc num-buffers=6 pattern=ball ! {up} ! v.dist_sink vmafhip name=v backend=hip ! video/x-raw(memory:HIPMemory) ! appsink name=out sync=false"
    ));
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
                let caps = sample.caps().map(|c| c.to_string()).unwrap_or_default();
                let buffer = sample.buffer_owned().unwrap();
                keep.lock().unwrap().push((caps, buffer));
                Ok(gst::FlowSuccess::Ok)
            })
            .build(),
    );
    let out = play(&pipeline);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.pooled.len(), 1);
    let got = got.lock().unwrap();
    assert_eq!(got.len(), 6);
    for (caps, buffer) in got.iter() {
        assert!(caps.contains("memory:HIPMemory"), "{caps}");
        assert!(
            buffer.n_memory() > 0 && buffer.iter_memories().all(|m| m.is_type("HIPMemory")),
            "a reference buffer out of src not in HIP memory"
        );
    }
}

/// A `gst.hip.device` context given to the element before it opens (by an
/// application, or a neighbour through the bin) is its GPU: HIP memory of
/// that device is read in place; a `device-id` set on the element wins
/// over it (the error names that device).
#[test]
fn a_shared_hip_device_context_is_taken() {
    if !available() {
        return;
    }
    // hipupload makes its GstHipDevice when it starts.
    let (holder, context) = started_alone("hipupload", "gst.hip.device");
    let desc = |device: &str| {
        format!(
            "videotestsrc num-buffers=4 ! video/x-raw,format=NV12,width=128,height=96,framerate=30/1 ! hipupload ! v.ref_sink videotestsrc num-buffers=4 pattern=ball ! video/x-raw,format=NV12,width=128,height=96,framerate=30/1 ! hipupload ! v.dist_sink vmafhip name=v backend=hip frame-message=true{device} ! fakesink"
        )
    };
    let shared = launch(&desc(""));
    shared.by_name("v").unwrap().set_context(&context);
    let out = play(&shared);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.frames.len(), 4);
    assert_eq!(stat(&out, "planes-staged") + stat(&out, "planes-pinned"), 0);
    assert_eq!(stat(&out, "planes-device"), 8);
    let own = launch(&desc(" device-id=7"));
    own.by_name("v").unwrap().set_context(&context);
    let out = play(&own);
    assert!(
        out.errors.iter().any(|e| e.contains('7')),
        "device-id=7 with a context of device 0: {:?}",
        out.errors
    );
    holder.set_state(gst::State::Null).unwrap();
}
