//! Raw `.yuv` and `.y4m` inputs are read here and pushed into the
//! pipeline's `appsrc`, one thread per input, frames timestamped at the
//! input's frame rate.

use crate::input::{Input, Kind, frame_bytes, gst_format};
use crate::{Exit, Fail};
use gst::prelude::*;
use gstvmafhip::vmaf::y4m::Y4mReader;
use std::io::{BufReader, Read};
use std::thread::JoinHandle;

pub struct Feeder(JoinHandle<Result<(), Fail>>);

impl Feeder {
    pub fn join(self) -> Result<(), Fail> {
        self.0
            .join()
            .unwrap_or_else(|_| Err(Fail(Exit::Failed, "an input thread panicked".into())))
    }
}

enum Reader {
    Raw(BufReader<std::fs::File>),
    Y4m(Y4mReader<BufReader<std::fs::File>>),
}

impl Reader {
    /// The next frame's planes, tightly packed, into `out`; false at the end.
    fn next(&mut self, out: &mut [u8]) -> Result<bool, String> {
        match self {
            Reader::Y4m(r) => r.read_frame(out).map_err(|e| match e {
                gstvmafhip::vmaf::VmafError::Io(s) => s,
                e => e.to_string(),
            }),
            Reader::Raw(r) => {
                let mut filled = 0;
                while filled < out.len() {
                    match r.read(&mut out[filled..]) {
                        Ok(0) => break,
                        Ok(n) => filled += n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e.to_string()),
                    }
                }
                match filled {
                    0 => Ok(false),
                    n if n == out.len() => Ok(true),
                    n => Err(format!("truncated: {n} of {} bytes", out.len())),
                }
            }
        }
    }
}

/// An input's `appsrc`, configured, and what its thread will read.
pub struct Prepared {
    appsrc: gst_app::AppSrc,
    reader: Reader,
    pool: gst_video::VideoBufferPool,
    info: gst_video::VideoInfo,
    path: String,
    tight: usize,
    fps: (u64, u64),
}

/// Configures the input's `appsrc` (caps, time format): before the
/// pipeline starts, so that its first segment is in time.
pub fn prepare(pipeline: &gst::Pipeline, input: &Input) -> Result<Prepared, Fail> {
    let name = format!("{}-src", input.role.name());
    let appsrc = pipeline
        .by_name(&name)
        .and_then(|e| e.downcast::<gst_app::AppSrc>().ok())
        .ok_or_else(|| Fail(Exit::Failed, format!("no {name} in the pipeline")))?;
    let v = &input.video;
    let format = gst_video::VideoFormat::from_string(
        gst_format(v.format, v.bpc).expect("checked when the input was opened"),
    );
    let info = gst_video::VideoInfo::builder(format, v.width as u32, v.height as u32)
        .fps(gst::Fraction::new(v.fps.0 as i32, v.fps.1 as i32))
        .par(gst::Fraction::new(1, 1))
        .build()
        .map_err(|e| Fail::input(format!("{}: {e}", input.path)))?;
    let caps = info
        .to_caps()
        .map_err(|e| Fail(Exit::Failed, format!("{}: {e}", input.path)))?;
    appsrc.set_caps(Some(&caps));
    appsrc.set_format(gst::Format::Time);
    appsrc.set_block(true);
    appsrc.set_max_bytes(4 * info.size() as u64);
    let file = std::fs::File::open(&input.path)
        .map_err(|e| Fail::input(format!("{}: {e}", input.path)))?;
    let file = BufReader::with_capacity(1 << 20, file);
    let reader = match input.kind {
        Kind::Raw => Reader::Raw(file),
        Kind::Y4m => Reader::Y4m(
            Y4mReader::new(file).map_err(|e| Fail::input(format!("{}: {e}", input.path)))?,
        ),
        Kind::Media => unreachable!("media files have no feeder"),
    };
    let pool = gst_video::VideoBufferPool::new();
    let mut config = pool.config();
    config.set_params(Some(&caps), info.size() as u32, 2, 0);
    pool.set_config(config)
        .and_then(|_| pool.set_active(true))
        .map_err(|e| Fail(Exit::Failed, format!("{}: buffer pool: {e}", input.path)))?;
    Ok(Prepared {
        appsrc,
        reader,
        pool,
        info,
        path: input.path.clone(),
        tight: frame_bytes(v),
        fps: (v.fps.0 as u64, v.fps.1 as u64),
    })
}

/// Starts the reader thread (once the pipeline runs: an appsrc that never
/// started would block it for good).
pub fn start(p: Prepared) -> Result<Feeder, Fail> {
    let Prepared {
        appsrc,
        mut reader,
        pool,
        info,
        path,
        tight,
        fps: (fps_n, fps_d),
    } = p;
    let thread = std::thread::Builder::new()
        .name(appsrc.name().to_string())
        .spawn(move || {
            let fail = |msg: String| {
                // The message names no file: whoever reads it knows the input.
                let text = msg.clone();
                let _ = appsrc.post_message(
                    gst::message::Error::builder(gst::ResourceError::Read, &text)
                        .src(&appsrc)
                        .build(),
                );
                Err(Fail(Exit::Decode, format!("{path}: {msg}")))
            };
            let mut scratch = vec![0u8; tight];
            let planes = info.n_planes() as usize;
            // GStreamer's layout equals the file's when no plane is padded.
            let same_layout = info.size() == tight
                && (0..planes).all(|p| {
                    let (w, _) = plane_size(&info, p);
                    info.stride()[p] as usize == w
                });
            let mut k = 0u64;
            loop {
                let mut buffer = match pool.acquire_buffer(None) {
                    Ok(b) => b,
                    Err(_) => return Ok(()),
                };
                {
                    let b = buffer.get_mut().expect("a fresh pool buffer is writable");
                    let got = {
                        let mut map = b.map_writable().expect("pool memory maps");
                        if same_layout {
                            reader.next(&mut map[..tight])
                        } else {
                            let got = reader.next(&mut scratch);
                            if got == Ok(true) {
                                copy_planes(&scratch, &mut map, &info);
                            }
                            got
                        }
                    };
                    match got {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(e) if e.starts_with("frame ") => return fail(e),
                        Err(e) => return fail(format!("frame {k}: {e}")),
                    }
                    let t =
                        |k: u64| gst::ClockTime::from_nseconds(k * 1_000_000_000 * fps_d / fps_n);
                    b.set_pts(t(k));
                    b.set_duration(t(k + 1) - t(k));
                }
                if appsrc.push_buffer(buffer).is_err() {
                    // The pipeline stopped (error elsewhere, or done).
                    return Ok(());
                }
                k += 1;
            }
            let _ = appsrc.end_of_stream();
            Ok(())
        })
        .map_err(|e| Fail(Exit::Failed, format!("starting a reader thread: {e}")))?;
    Ok(Feeder(thread))
}

/// A plane's size in bytes per row and rows (as stored in a tight file).
fn plane_size(info: &gst_video::VideoInfo, p: usize) -> (usize, usize) {
    let fi = info.format_info();
    let (w, h) = (info.width() as usize, info.height() as usize);
    let bytes = if fi.depth()[0] > 8 { 2 } else { 1 };
    if p == 0 {
        (w * bytes, h)
    } else {
        let (ws, hs) = (fi.w_sub()[p] as usize, fi.h_sub()[p] as usize);
        (w.div_ceil(1 << ws) * bytes, h.div_ceil(1 << hs))
    }
}

/// Tight planes into GStreamer's (padded) layout.
fn copy_planes(src: &[u8], dst: &mut [u8], info: &gst_video::VideoInfo) {
    let mut off = 0;
    for p in 0..info.n_planes() as usize {
        let (row, rows) = plane_size(info, p);
        let (base, stride) = (info.offset()[p], info.stride()[p] as usize);
        for y in 0..rows {
            dst[base + y * stride..base + y * stride + row]
                .copy_from_slice(&src[off + y * row..off + (y + 1) * row]);
        }
        off += row * rows;
    }
}
