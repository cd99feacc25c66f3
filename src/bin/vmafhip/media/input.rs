//! The two inputs: what each is (raw, Y4M, or a media file GStreamer
//! decodes), its video, and its branch of the pipeline.

use crate::cli::{Exit, Fail, RawArgs};
use crate::media::video::{Kind, Role, Video, frame_bytes, frames_in, gst_format};
use gst::prelude::*;
use gstvmafhip::vmaf::PixelFormat;
use gstvmafhip::vmaf::y4m::Y4mReader;
use std::io::BufReader;

pub struct Input {
    pub role: Role,
    pub path: String,
    pub kind: Kind,
    pub video: Video,
    /// Frames, when known up front (raw, Y4M) or estimated (duration × rate).
    pub frames: Option<u64>,
    /// Media files: the decoder the probe's `decodebin` chose (the scoring
    /// pipeline's makes the same choice), and the stream it decodes.
    pub decoder: Option<String>,
    pub codec: Option<String>,
    /// Decoded by the command's own NVDEC path ([`crate::media::nvdec`]).
    pub nvdec: bool,
    /// Why that path does not take it (where the GPU has one).
    pub nvdec_refused: Option<String>,
    /// A raw `.yuv` without `--fps`: its rate is the other input's
    /// ([`share_rate`]), or [`RAW_FPS`] when none has one.
    pub rate_assumed: bool,
    /// Media files no installed GStreamer decoder decodes exactly: the
    /// error, given unless the command's own NVDEC path takes the file
    /// ([`Input::decoder_note`]).
    pub no_decoder: Option<(crate::cli::Exit, String)>,
}

/// A raw `.yuv`'s frame rate when neither input has one (libvmaf's
/// frames have no time; 25 is ffmpeg's rawvideo default).
pub const RAW_FPS: (u32, u32) = (25, 1);

/// Raw inputs without `--fps` take the first other input's frame rate, as
/// ffmpeg's and libvmaf's users expect of a raw master against its
/// encodes; the notes say so. With no rate anywhere, [`RAW_FPS`] stays.
pub fn share_rate(inputs: &mut [&mut Input]) -> Vec<String> {
    let Some((rate, from)) = inputs
        .iter()
        .find(|i| !i.rate_assumed && i.video.fps.0 > 0)
        .map(|i| (i.video.fps, i.path.clone()))
    else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    for i in inputs.iter_mut().filter(|i| i.rate_assumed) {
        i.video.fps = rate;
        notes.push(format!(
            "note: {} takes {from}'s frame rate, {}/{} (a raw .yuv has none; --fps gives one)",
            i.path, rate.0, rate.1
        ));
    }
    notes
}

impl Input {
    /// The caps this path pushes: the input's NV12, P010, P012 or planar
    /// 4:4:4 in CUDA memory ([`Video::direct_cuda_format`]) at its size.
    pub fn direct_caps(&self) -> String {
        let format = self
            .video
            .direct_cuda_format()
            .expect("an input this path takes");
        format!(
            "video/x-raw(memory:CUDAMemory),format={format},width={},height={}",
            self.video.width, self.video.height
        )
    }

    pub fn open(role: Role, path: &str, raw: &RawArgs) -> Result<Input, Fail> {
        let meta = std::fs::metadata(path).map_err(|e| Fail::input(format!("{path}: {e}")))?;
        if meta.is_dir() {
            return Err(Fail::input(format!(
                "{path}: is a directory, not a video file"
            )));
        }
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".yuv") {
            // A named pipe streams frames until its writer closes it.
            use std::os::unix::fs::FileTypeExt;
            let size = (!meta.file_type().is_fifo()).then_some(meta.len());
            Self::raw(role, path, raw, size)
        } else if lower.ends_with(".y4m") {
            Self::y4m(role, path, meta.len())
        } else {
            Self::media(role, path)
        }
    }

    /// A raw file of `size` bytes, or a stream (`None`: a named pipe).
    fn raw(role: Role, path: &str, raw: &RawArgs, size: Option<u64>) -> Result<Input, Fail> {
        let (Some(width), Some(height)) = (raw.width, raw.height) else {
            return Err(Fail(
                Exit::Usage,
                format!(
                    "{path}: a raw .yuv file needs -w WIDTH and -h HEIGHT (and -p, -b unless 420 and 8)"
                ),
            ));
        };
        if gst_format(raw.format, raw.bpc).is_none() {
            return Err(Fail(
                Exit::Usage,
                format!(
                    "{path}: -b {} is not supported for this pixel format (8, 10, 12; 16 for 400)",
                    raw.bpc
                ),
            ));
        }
        let video = Video {
            width,
            height,
            format: raw.format,
            bpc: raw.bpc,
            fps: raw.fps.unwrap_or(RAW_FPS),
            par: (1, 1),
        };
        let frame = frame_bytes(&video) as u64;
        if let Some(size) = size
            && (size == 0 || !size.is_multiple_of(frame))
        {
            return Err(Fail::input(format!(
                "{path}: {size} bytes is not a whole number of {width}x{height} {} {}-bit frames ({frame} bytes each): check -w -h -p -b",
                match raw.format {
                    PixelFormat::Yuv420 => "4:2:0",
                    PixelFormat::Yuv422 => "4:2:2",
                    PixelFormat::Yuv444 => "4:4:4",
                    PixelFormat::Gray => "4:0:0",
                },
                raw.bpc
            )));
        }
        Ok(Input {
            role,
            path: path.into(),
            kind: Kind::Raw,
            video,
            frames: size.map(|s| s / frame),
            decoder: None,
            codec: None,
            nvdec: false,
            nvdec_refused: None,
            rate_assumed: raw.fps.is_none(),
            no_decoder: None,
        })
    }

    fn y4m(role: Role, path: &str, size: u64) -> Result<Input, Fail> {
        let file = std::fs::File::open(path).map_err(|e| Fail::input(format!("{path}: {e}")))?;
        let r = Y4mReader::new(BufReader::new(file))
            .map_err(|e| Fail::input(format!("{path}: {e}")))?;
        let h = &r.header;
        let per_frame = (h.frame_bytes() + "FRAME\n".len()) as u64;
        Ok(Input {
            role,
            path: path.into(),
            kind: Kind::Y4m,
            video: Video {
                width: h.width,
                height: h.height,
                format: h.format,
                bpc: h.bpc,
                fps: h.fps,
                par: (1, 1),
            },
            frames: Some(size.saturating_sub(h.header_len as u64) / per_frame),
            decoder: None,
            codec: None,
            nvdec: false,
            nvdec_refused: None,
            rate_assumed: false,
            no_decoder: None,
        })
    }

    /// Parses the file to learn its video (and duration), or, where the
    /// parser does not say the chroma layout and depth, decodes its first
    /// frame.
    fn media(role: Role, path: &str) -> Result<Input, Fail> {
        match crate::media::probe::probe(path) {
            crate::media::probe::Probe::NoVideo(streams) => Err(Fail::input(format!(
                "{path} has no video stream (it holds {})",
                streams.join(", ")
            ))),
            crate::media::probe::Probe::Video(p) => {
                let (decoder, no_decoder) = match p.decoder {
                    Ok(d) => (Some(d), None),
                    Err(crate::cli::Fail(exit, why)) => (None, Some((exit, why))),
                };
                Ok(Input {
                    role,
                    path: path.into(),
                    kind: Kind::Media,
                    video: p.video,
                    frames: p.frames,
                    decoder,
                    codec: Some(p.codec),
                    nvdec: false,
                    nvdec_refused: None,
                    rate_assumed: false,
                    no_decoder,
                })
            }
            crate::media::probe::Probe::Unknown => Self::decoded(role, path),
            crate::media::probe::Probe::Broken(err) => {
                Err(Fail::input(format!("{path}: {}", damaged(&err))))
            }
        }
    }

    /// Decodes up to the first frame to learn the video (and the duration).
    fn decoded(role: Role, path: &str) -> Result<Input, Fail> {
        let desc = format!(
            "filesrc location={} ! decodebin ! videoconvert ! fakesink name=probe",
            quote(path)
        );
        let pipeline = gst::parse::launch(&desc)
            .map_err(|e| Fail(Exit::Failed, format!("{path}: {e}")))?
            .downcast::<gst::Pipeline>()
            .map_err(|_| Fail(Exit::Failed, "not a pipeline".into()))?;
        let sink = pipeline.by_name("probe").expect("named");
        let done = |p: &gst::Pipeline| {
            let _ = p.set_state(gst::State::Null);
        };
        let outcome = preroll(&pipeline, path);
        if let Err(e) = outcome {
            done(&pipeline);
            return Err(e);
        }
        let caps = sink.static_pad("sink").and_then(|p| p.current_caps());
        let duration = pipeline.query_duration::<gst::ClockTime>();
        let (decoder, codec) = decoder_and_codec(pipeline.upcast_ref());
        done(&pipeline);
        let info = caps
            .as_ref()
            .and_then(|c| gst_video::VideoInfo::from_caps(c).ok())
            .ok_or_else(|| Fail::input(format!("{path}: has no video stream")))?;
        let (format, bpc) = layout_and_depth(&info);
        let fps = info.fps();
        let fps = (fps.numer().max(0) as u32, fps.denom().max(1) as u32);
        let frames = frames_in(duration, fps);
        let par = info.par();
        Ok(Input {
            role,
            path: path.into(),
            kind: Kind::Media,
            video: Video {
                width: info.width() as usize,
                height: info.height() as usize,
                format,
                bpc,
                fps,
                par: (par.numer().max(1), par.denom().max(1)),
            },
            frames,
            decoder,
            codec,
            nvdec: false,
            nvdec_refused: None,
            rate_assumed: false,
            no_decoder: None,
        })
    }

    /// The format in which GStreamer's NVDEC decoder hands this input's
    /// frames to the element in CUDA memory ([`Video::nvdec_cuda_format`]),
    /// where they come at the scoring size, layout and depth. `None`: the
    /// frames go through system memory; no GStreamer converter touches the
    /// samples (`cudaconvert` and `videoconvert` do not convert P010
    /// exactly).
    fn cuda_format(&self, target: &Video) -> Option<&'static str> {
        let nvdec = self
            .decoder
            .as_deref()
            .is_some_and(|d| d.starts_with("nv") && crate::media::decode::is_gpu_decoder(d));
        let v = &self.video;
        let same = (v.width, v.height, v.format, v.bpc)
            == (target.width, target.height, target.format, target.bpc);
        v.nvdec_cuda_format().filter(|_| nvdec && same)
    }

    /// The video this input enters the element as: the reference's size,
    /// chroma layout and depth, except that a rendition (`dist_sink_k`)
    /// keeps its own size, which the engine scales.
    pub fn scored_as(&self, reference: &Video) -> Video {
        match self.role {
            Role::Rendition(_) => Video {
                width: self.video.width,
                height: self.video.height,
                ..reference.clone()
            },
            _ => reference.clone(),
        }
    }

    /// This input's part of the pipeline description, ending at its
    /// `vmafhip` sink pad. Converter and scaler pass through untouched
    /// when the video already has the caps asked for.
    ///
    /// `target` is the video scored: the reference's size, chroma layout
    /// and depth. NVDEC's frames stay in CUDA memory where they can
    /// ([`Input::cuda_format`]); every other input is converted and scaled
    /// on the CPU where it must be.
    pub fn branch(&self, target: &Video) -> String {
        let (r, sink) = (self.role.prefix(), self.role.sink());
        let (format, w, h) = (target.scoring_format(), target.width, target.height);
        if self.nvdec {
            return format!(
                "appsrc name={r}-src ! capsfilter name={r}-caps caps=\"{}\" \
                 ! queue name={r}-queue max-size-buffers=8 max-size-bytes=0 max-size-time=0 ! v.{sink}",
                self.direct_caps()
            );
        }
        let source = match self.kind {
            Kind::Media => format!(
                "filesrc name={r}-file location={} ! decodebin name={r}-decode",
                quote(&self.path)
            ),
            Kind::Raw | Kind::Y4m => format!("appsrc name={r}-src"),
        };
        let (convert, caps) = if let Some(cuda) = self.cuda_format(target) {
            (
                format!("identity name={r}-convert"),
                format!("video/x-raw(memory:CUDAMemory),format={cuda},width={w},height={h}"),
            )
        } else {
            // A 10-bit 4:2:0 decoder's P010 passes as it is (the element
            // shifts its samples); dithering off, so that a conversion
            // that is needed changes no sample it need not.
            let formats = if format == "I420_10LE" {
                "{ I420_10LE, P010_10LE }".to_string()
            } else {
                format.to_string()
            };
            (
                format!(
                    "videoconvert name={r}-convert dither=none ! videoscale name={r}-scale add-borders=false"
                ),
                format!(
                    "video/x-raw,format={formats},width={w},height={h},pixel-aspect-ratio={}/{}",
                    target.par.0, target.par.1
                ),
            )
        };
        // The queue holds a few frames, whatever their size (its default
        // byte limit holds less than one 4K frame): eight behind a decoder, which
        // delivers in bursts; two behind our own readers, which keep four
        // frames coming and whose every frame in flight is a pinned buffer
        // to allocate at start-up.
        let depth = if self.kind == Kind::Media { 8 } else { 2 };
        format!(
            "{source} ! {convert} ! capsfilter name={r}-caps caps=\"{caps}\" \
             ! queue name={r}-queue max-size-buffers={depth} max-size-bytes=0 max-size-time=0 ! v.{sink}"
        )
    }
}

/// Plays `pipeline` to its first frame (PAUSED): an error names what is
/// wrong with the file at `path`.
fn preroll(pipeline: &gst::Pipeline, path: &str) -> Result<(), Fail> {
    let _ = pipeline.set_state(gst::State::Paused);
    let bus = pipeline.bus().expect("a pipeline has a bus");
    let mut outcome = Err(Fail::input(format!(
        "{path}: no video frame after 30 s of trying to decode it"
    )));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        let Some(msg) = bus.timed_pop(gst::ClockTime::from_nseconds(left.as_nanos() as u64)) else {
            break;
        };
        match msg.view() {
            gst::MessageView::AsyncDone(_) => {
                outcome = Ok(());
                break;
            }
            gst::MessageView::Error(e) => {
                let err = e.error();
                let code = if err.matches(gst::StreamError::Decode) {
                    Exit::Decode
                } else {
                    Exit::BadInput
                };
                let why = if err.matches(gst::StreamError::TypeNotFound)
                    || err.matches(gst::StreamError::WrongType)
                {
                    format!("not a media file GStreamer can decode ({err})")
                } else if err.matches(gst::CoreError::MissingPlugin)
                    || err.matches(gst::StreamError::CodecNotFound)
                {
                    format!("no decoder installed for it ({err})")
                } else if err.matches(gst::StreamError::Demux) {
                    damaged(&err.to_string())
                } else {
                    err.to_string()
                };
                outcome = Err(Fail(code, format!("{path}: {why}")));
                break;
            }
            gst::MessageView::Eos(_) => {
                outcome = Err(Fail::input(format!("{path}: has no video frames")));
                break;
            }
            _ => {}
        }
    }
    outcome
}

/// The engine's layout and depth of a decoded video.
fn layout_and_depth(info: &gst_video::VideoInfo) -> (PixelFormat, u8) {
    let fi = info.format_info();
    let depth = fi.depth().first().copied().unwrap_or(8);
    let format = if fi.is_gray() {
        PixelFormat::Gray
    } else if fi.is_yuv() {
        match (fi.w_sub().get(1), fi.h_sub().get(1)) {
            (Some(0), Some(0)) => PixelFormat::Yuv444,
            (Some(1), Some(0)) => PixelFormat::Yuv422,
            _ => PixelFormat::Yuv420,
        }
    } else {
        PixelFormat::Yuv420
    };
    let bpc = match (format, depth) {
        (_, 0..=8) => 8,
        (_, 9..=10) => 10,
        (PixelFormat::Gray, 13..) => 16,
        _ => 12,
    };
    (format, bpc)
}

/// A demuxer's error about a file, and what it means for the user.
fn damaged(err: &str) -> String {
    format!("{err} The file is damaged or incomplete (cut short?).")
}

/// A value quoted for a pipeline description.
fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The decoder `decodebin` chose inside `bin`, and the caps of the stream it
/// decodes (`video/x-h264`, …).
pub fn decoder_and_codec(bin: &gst::Bin) -> (Option<String>, Option<String>) {
    // decodebin's own class says Decoder too: the decoder is no bin.
    let Some(dec) = bin.iterate_recurse().into_iter().flatten().find(|e| {
        !e.is::<gst::Bin>()
            && e.factory().is_some_and(|f| {
                f.metadata(gst::ELEMENT_METADATA_KLASS)
                    .is_some_and(|k| k.contains("Decoder"))
            })
    }) else {
        return (None, None);
    };
    let codec = dec
        .static_pad("sink")
        .and_then(|p| p.current_caps())
        .and_then(|c| c.structure(0).map(|s| s.name().to_string()));
    (dec.factory().map(|f| f.name().to_string()), codec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded_by(decoder: &str, format: PixelFormat, bpc: u8) -> Input {
        Input {
            role: Role::Reference,
            path: "in.mp4".into(),
            kind: Kind::Media,
            video: Video {
                width: 1920,
                height: 1080,
                format,
                bpc,
                fps: (25, 1),
                par: (1, 1),
            },
            frames: None,
            decoder: Some(decoder.into()),
            codec: Some("video/x-h265".into()),
            nvdec: false,
            nvdec_refused: None,
            rate_assumed: false,
            no_decoder: None,
        }
    }

    /// The command's own NVDEC path also takes 12-bit 4:2:0 (P012), which
    /// GStreamer 1.22's decoders give only as P016, and deep 4:4:4.
    #[test]
    fn the_direct_path_hands_12_bit_420_over_as_p012() {
        use PixelFormat::*;
        for (format, bpc, want) in [
            (Yuv420, 8, Some("NV12")),
            (Yuv420, 10, Some("P010_10LE")),
            (Yuv420, 12, Some("P012_LE")),
            (Yuv444, 8, Some("Y444")),
            (Yuv444, 10, Some("Y444_10LE")),
            (Yuv444, 12, Some("Y444_12LE")),
            (Yuv422, 10, None),
        ] {
            let v = decoded_by("nvdec", format, bpc).video;
            assert_eq!(v.direct_cuda_format(), want, "{format:?} {bpc}");
        }
    }

    #[test]
    fn gstreamers_nvdec_frames_stay_in_cuda_memory_where_the_element_reads_them() {
        use PixelFormat::*;
        for (format, bpc, want) in [
            (Yuv420, 8, Some("NV12")),
            (Yuv420, 10, Some("P010_10LE")),
            (Yuv444, 8, Some("Y444")),
            (Yuv444, 10, None),
            (Yuv420, 12, None),
            (Yuv422, 8, None),
        ] {
            let i = decoded_by("nvh265dec", format, bpc);
            assert_eq!(i.cuda_format(&i.video), want, "{format:?} {bpc}");
            let branch = i.branch(&i.video);
            match want {
                Some(f) => assert!(branch.contains(&format!("(memory:CUDAMemory),format={f},"))),
                None => assert!(branch.contains("videoconvert") && !branch.contains("CUDAMemory")),
            }
        }
        let cpu = decoded_by("avdec_h265", Yuv420, 10);
        assert_eq!(cpu.cuda_format(&cpu.video), None);
        let nv = decoded_by("nvh265dec", Yuv420, 8);
        let smaller = Video {
            width: 1280,
            height: 720,
            ..nv.video.clone()
        };
        assert_eq!(nv.cuda_format(&smaller), None);
    }
}
