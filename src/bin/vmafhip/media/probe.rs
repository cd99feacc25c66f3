//! The cheap probe of a media file: demuxed and parsed (`parsebin`), not
//! decoded, so that no decoder and no GPU context is set up twice (once to
//! probe, once to score). The parsers of H.264, HEVC, AV1 and VP9 say the
//! size, rate, chroma layout and depth; for other streams the command falls
//! back to decoding the first frame.

use crate::media::video::{Video, frames_in};
use gst::prelude::*;
use gstvmafhip::vmaf::PixelFormat;

/// What parsing a media file told.
pub struct Parsed {
    pub video: Video,
    pub frames: Option<u64>,
    /// The stream's caps name (`video/x-h264`, …).
    pub codec: String,
    /// The decoder `decodebin` will pick for it, by rank; or the error
    /// where no installed decoder decodes it exactly
    /// ([`crate::media::decode::no_exact_decoder`]).
    pub decoder: Result<String, crate::cli::Fail>,
}

/// What parsing a media file found.
pub enum Probe {
    Video(Parsed),
    /// Streams, none of them video: their caps names (`audio/mpeg`, …).
    NoVideo(Vec<String>),
    /// Parsing did not say everything the command needs (then the caller
    /// decodes a frame).
    Unknown,
    /// The demuxer found the file damaged or cut short: its error.
    Broken(String),
}

/// Parses `path` up to its streams' caps.
pub fn probe(path: &str) -> Probe {
    let mut names = Vec::new();
    let mut broken = None;
    let found = parsed(path, &mut names, &mut broken);
    if let Some(err) = broken {
        return Probe::Broken(err);
    }
    match found {
        Some(p) => Probe::Video(p),
        None if !names.is_empty() && !names.iter().any(|n| n.starts_with("video/")) => {
            Probe::NoVideo(names)
        }
        None => Probe::Unknown,
    }
}

/// Parses `path` up to its video stream's caps, noting every stream's caps
/// name in `streams` and a demuxer's error in `broken`; `None` when parsing
/// does not say everything the command needs.
fn parsed(path: &str, streams: &mut Vec<String>, broken: &mut Option<String>) -> Option<Parsed> {
    let pipeline = gst::Pipeline::new();
    let src = gst::ElementFactory::make("filesrc")
        .property("location", path)
        .build()
        .ok()?;
    let parse = gst::ElementFactory::make("parsebin").build().ok()?;
    pipeline.add_many([&src, &parse]).ok()?;
    src.link(&parse).ok()?;
    // Every stream goes to a fakesink, so that the demuxer prerolls.
    let weak = pipeline.downgrade();
    parse.connect_pad_added(move |_, pad| {
        let (Some(bin), Ok(sink)) = (
            weak.upgrade(),
            gst::ElementFactory::make("fakesink").build(),
        ) else {
            return;
        };
        if bin.add(&sink).is_ok() {
            let _ = sink.sync_state_with_parent();
            let _ = pad.link(&sink.static_pad("sink").expect("fakesink has a sink"));
        }
    });
    let prerolled = match preroll(&pipeline) {
        Ok(done) => done,
        Err(e) => {
            *broken = Some(e);
            false
        }
    };
    let all: Vec<gst::Caps> = if prerolled {
        parse
            .src_pads()
            .into_iter()
            .filter_map(|p| p.current_caps())
            .collect()
    } else {
        Vec::new()
    };
    streams.extend(
        all.iter()
            .filter_map(|c| c.structure(0).map(|s| s.name().to_string())),
    );
    let caps = all.into_iter().find(|c| {
        c.structure(0)
            .is_some_and(|s| s.name().starts_with("video/"))
    });
    let duration = pipeline.query_duration::<gst::ClockTime>();
    let _ = pipeline.set_state(gst::State::Null);
    let caps = caps?;
    let video = video_of(caps.structure(0)?)?;
    let decoder = crate::media::decode::exact_decoder(&caps, &video)
        .map_err(|unfit| crate::media::decode::no_exact_decoder(path, &caps, &unfit));
    Some(Parsed {
        frames: frames_in(duration, video.fps),
        video,
        codec: caps.structure(0)?.name().to_string(),
        decoder,
    })
}

/// PAUSED within 10 s, without an error; a demuxer's error (the file is
/// damaged or cut short) as `Err`.
fn preroll(pipeline: &gst::Pipeline) -> Result<bool, String> {
    let _ = pipeline.set_state(gst::State::Paused);
    let bus = pipeline.bus().expect("a pipeline has a bus");
    let msg = bus.timed_pop_filtered(
        gst::ClockTime::from_seconds(10),
        &[
            gst::MessageType::AsyncDone,
            gst::MessageType::Error,
            gst::MessageType::Eos,
        ],
    );
    match msg.as_ref().map(|m| m.view()) {
        Some(gst::MessageView::AsyncDone(_)) => Ok(true),
        Some(gst::MessageView::Error(e)) if e.error().matches(gst::StreamError::Demux) => {
            Err(e.error().to_string())
        }
        _ => Ok(false),
    }
}

/// The video a parser's caps describe, if they say the chroma layout and
/// depth as well as the size.
fn video_of(s: &gst::StructureRef) -> Option<Video> {
    let format = match s.get::<&str>("chroma-format").ok()? {
        "4:2:0" => PixelFormat::Yuv420,
        "4:2:2" => PixelFormat::Yuv422,
        "4:4:4" => PixelFormat::Yuv444,
        "4:0:0" => PixelFormat::Gray,
        _ => return None,
    };
    let bpc = match s.get::<u32>("bit-depth-luma").ok()? {
        8 => 8,
        10 => 10,
        12 => 12,
        _ => return None,
    };
    let fraction = |name: &str, or: (i32, i32)| {
        s.get::<gst::Fraction>(name)
            .map_or(or, |f| (f.numer(), f.denom()))
    };
    let (fps_n, fps_d) = fraction("framerate", (0, 1));
    let par = fraction("pixel-aspect-ratio", (1, 1));
    Some(Video {
        width: s.get::<i32>("width").ok()?.try_into().ok()?,
        height: s.get::<i32>("height").ok()?.try_into().ok()?,
        format,
        bpc,
        fps: (fps_n.max(0) as u32, fps_d.max(1) as u32),
        par: (par.0.max(1), par.1.max(1)),
    })
}
