//! H.264, HEVC, VP9 and AV1 inputs decoded by NVDEC directly
//! ([`hip::nvdec`], over `libnvcuvid`), not by GStreamer's `nvh264dec` and
//! the like, which decode the same files at half the rate on the same GPU
//! (docs/PERFORMANCE.md, "End to end").
//!
//! Per input: a demuxing pipeline of its own (`filesrc ! parsebin !` the
//! stream's parser to what NVIDIA's parser takes `! appsink`), one NVDEC
//! session in the engine's CUDA context on a thread of its own, and each
//! decoded picture copied on the device into a `memory:CUDAMemory` buffer
//! pushed into the input's `appsrc`, which the element reads in
//! place. No plane goes through the host.
//!
//! Taken when the engine runs on an NVIDIA GPU with `libnvcuvid` and
//! GStreamer's CUDA library, for 8-, 10- and 12-bit 4:2:0 and 4:4:4
//! streams scored at their own size (the element reads NV12, P010, P012
//! and planar 4:4:4 in place); everything else goes through `decodebin`.
//! `VMAFHIP_NVDEC=0` turns it off (A/B).

use crate::cli::{Exit, Fail};
use crate::media::decode::Direct;
use crate::media::input::Input;
use gst::prelude::*;
use gstvmafhip::hip::gst_gpu::{FramePool, device_plane};
use gstvmafhip::hip::nvdec::{Codec, NvDecoder};
use std::thread::JoinHandle;

/// One input's decoding thread.
pub struct Feeder(JoinHandle<Result<(), Fail>>);

impl Feeder {
    pub fn join(self) -> Result<(), Fail> {
        self.0
            .join()
            .unwrap_or_else(|_| Err(Fail(Exit::Failed, "an NVDEC thread panicked".into())))
    }
}

/// What one input's thread needs, made before the pipeline starts.
pub struct Prepared {
    direct: Direct,
    appsrc: gst_app::AppSrc,
    demux: gst::Pipeline,
    appsink: gst_app::AppSink,
    codec: Codec,
    info: gst_video::VideoInfo,
    pool: FramePool,
    path: String,
    fps: (u64, u64),
}

/// Sets up `input`'s appsrc (caps, time format), its buffer pool in the
/// engine's CUDA memory, and its demuxing pipeline.
pub fn prepare(pipeline: &gst::Pipeline, input: &Input, direct: &Direct) -> Result<Prepared, Fail> {
    let failed = |e: String| Fail(Exit::Failed, format!("{}: NVDEC: {e}", input.path));
    let name = format!("{}-src", input.role.prefix());
    let appsrc = pipeline
        .by_name(&name)
        .and_then(|e| e.downcast::<gst_app::AppSrc>().ok())
        .ok_or_else(|| failed(format!("no {name} in the pipeline")))?;
    let v = &input.video;
    let fps = if v.fps.0 > 0 { v.fps } else { (25, 1) };
    let caps: gst::Caps = input
        .direct_caps()
        .parse()
        .map_err(|e: glib::BoolError| failed(e.to_string()))?;
    let caps = {
        let mut c = caps;
        c.make_mut()
            .set("framerate", gst::Fraction::new(fps.0 as i32, fps.1 as i32));
        c
    };
    let info = gst_video::VideoInfo::from_caps(&caps).map_err(|e| failed(e.to_string()))?;
    appsrc.set_caps(Some(&caps));
    appsrc.set_format(gst::Format::Time);
    appsrc.set_block(true);
    appsrc.set_max_bytes(4 * info.size() as u64);
    let pool = direct.gpu.buffer_pool(&caps, 4).map_err(failed)?;
    let codec = input
        .codec
        .as_deref()
        .and_then(Codec::from_caps_name)
        .ok_or_else(|| failed("not H.264, HEVC, VP9 or AV1".into()))?;
    let (demux, appsink) = demuxer(&input.path, codec).map_err(failed)?;
    Ok(Prepared {
        direct: direct.clone(),
        appsrc,
        demux,
        appsink,
        codec,
        info,
        pool,
        path: input.path.clone(),
        fps: (fps.0 as u64, fps.1 as u64),
    })
}

/// `filesrc ! parsebin ! PARSER ! CAPS ! appsink`: Annex B access units
/// for H.264 and HEVC, superframes as stored for VP9, temporal units of
/// OBUs for AV1 (what NVIDIA's parser takes).
fn demuxer(path: &str, codec: Codec) -> Result<(gst::Pipeline, gst_app::AppSink), String> {
    let (parser, caps) = match codec {
        Codec::H264 => (
            "h264parse",
            "video/x-h264,stream-format=byte-stream,alignment=au",
        ),
        Codec::Hevc => (
            "h265parse",
            "video/x-h265,stream-format=byte-stream,alignment=au",
        ),
        Codec::Vp9 => ("vp9parse", "video/x-vp9,alignment=super-frame"),
        Codec::Av1 => (
            "av1parse",
            "video/x-av1,stream-format=obu-stream,alignment=tu",
        ),
    };
    let desc = format!(
        "filesrc location=\"{}\" ! parsebin ! {parser} ! {caps} ! appsink name=au sync=false max-buffers=32",
        path.replace('\\', "\\\\").replace('"', "\\\"")
    );
    let pipeline = gst::parse::launch(&desc)
        .map_err(|e| e.to_string())?
        .downcast::<gst::Pipeline>()
        .map_err(|_| "not a pipeline".to_string())?;
    let appsink = pipeline
        .by_name("au")
        .and_then(|e| e.downcast::<gst_app::AppSink>().ok())
        .ok_or("no appsink")?;
    Ok((pipeline, appsink))
}

/// Starts the input's decoding thread (once the pipeline runs).
pub fn start(p: Prepared) -> Result<Feeder, Fail> {
    let name = format!("{}-nvdec", p.appsrc.name());
    std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            let r = run(&p);
            let _ = p.demux.set_state(gst::State::Null);
            if let Err(msg) = &r {
                let _ = p.appsrc.post_message(
                    gst::message::Error::builder(gst::StreamError::Decode, msg)
                        .src(&p.appsrc)
                        .build(),
                );
            }
            let _ = p.appsrc.end_of_stream();
            r.map_err(|msg| Fail(Exit::Decode, format!("{}: {msg}", p.path)))
        })
        .map(Feeder)
        .map_err(|e| Fail(Exit::Failed, format!("starting an NVDEC thread: {e}")))
}

/// Demuxes, decodes and pushes every frame; Ok at the end of the file or
/// when the pipeline stops taking frames.
fn run(p: &Prepared) -> Result<(), String> {
    let mut decoder = NvDecoder::new(p.direct.device(), p.codec)?;
    p.demux
        .set_state(gst::State::Playing)
        .map_err(|_| demux_error(&p.demux))?;
    let mut next = 0u64;
    loop {
        let Ok(sample) = p.appsink.pull_sample() else {
            if !p.appsink.is_eos() {
                return Err(demux_error(&p.demux));
            }
            decoder.finish()?;
            push_ready(p, &mut decoder, &mut next)?;
            return if next == 0 {
                Err("no video frame decoded".into())
            } else {
                Ok(())
            };
        };
        let buffer = sample.buffer().ok_or("an access unit without data")?;
        let map = buffer.map_readable().map_err(|e| e.to_string())?;
        decoder.push(map.as_slice())?;
        if !push_ready(p, &mut decoder, &mut next)? {
            return Ok(());
        }
    }
}

/// Copies every picture due for display into a CUDA buffer and pushes it,
/// timestamped at the input's frame rate; false once the pipeline stopped
/// taking frames.
fn push_ready(p: &Prepared, decoder: &mut NvDecoder, next: &mut u64) -> Result<bool, String> {
    while let Some(pic) = decoder.pop() {
        let buffer = p.pool.acquire()?;
        let frame = p
            .direct
            .gpu
            .map_frame_writable(buffer, &p.info)
            .map_err(|_| "cannot map a CUDA buffer for writing".to_string())?;
        let planes = (0..p.info.n_planes() as usize)
            .map(|i| {
                device_plane(&frame, i)
                    .map(|(addr, bytes, pitch)| (addr, pitch, bytes))
                    .ok_or_else(|| format!("a CUDA buffer without plane {i}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        decoder.copy_out(pic, &planes)?;
        let mut buffer = frame.into_buffer();
        let (n, d) = p.fps;
        let t = |k: u64| gst::ClockTime::from_nseconds(k * 1_000_000_000 * d / n);
        {
            let b = buffer.get_mut().ok_or("a pool buffer shared")?;
            b.set_pts(t(*next));
            b.set_duration(t(*next + 1) - t(*next));
            // The pool has no bound: frames aligned by content are held
            // as they are.
            gstvmafhip::mark_holdable(b);
        }
        *next += 1;
        if p.appsrc.push_buffer(buffer).is_err() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The demuxing pipeline's first error, as text.
fn demux_error(demux: &gst::Pipeline) -> String {
    let bus = demux.bus().expect("a pipeline has a bus");
    while let Some(msg) = bus.pop() {
        if let gst::MessageView::Error(e) = msg.view() {
            return format!("demuxing: {}", e.error());
        }
    }
    "demuxing stopped before the end of the file".into()
}
