//! Raw `.yuv` and `.y4m` inputs are read here and pushed into the
//! pipeline's `appsrc`, frames timestamped at the input's frame rate.
//!
//! The frames are read straight into buffers of the element's own pool
//! (pinned memory when it computes on a GPU, which the engine uploads from
//! in place), only the planes the metrics read (luma alone unless an extractor
//! reads chroma), by several reader threads per file. Frames
//! are taken from the pool and pushed in order; the reads between run in
//! parallel.

use crate::cli::{Exit, Fail};
use crate::media::input::Input;
use crate::media::video::{Kind, frame_bytes, gst_format};
use gst::prelude::*;
use gst_video::prelude::*;
use gstvmafhip::vmaf::y4m::Y4mReader;
use std::fs::File;
use std::io::BufReader;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// Y4M's per-frame header when it carries no parameters.
const FRAME_HEADER: &[u8] = b"FRAME\n";

pub struct Feeder(Vec<JoinHandle<Result<(), Fail>>>);

impl Feeder {
    pub fn join(self) -> Result<(), Fail> {
        let mut first = Ok(());
        for t in self.0 {
            let r = t
                .join()
                .unwrap_or_else(|_| Err(Fail(Exit::Failed, "an input thread panicked".into())));
            if first.is_ok() {
                first = r;
            }
        }
        first
    }
}

/// Where frame `k` lies in the file.
#[derive(Clone, Copy)]
struct FrameLayout {
    /// Offset of frame 0's first sample.
    first: u64,
    /// Bytes from one frame's first sample to the next's.
    step: u64,
    /// Y4M: each frame's `FRAME\n` precedes its samples.
    y4m_header: bool,
}

/// How an input's frames are read.
enum Source {
    /// At known offsets (raw files, Y4M with plain frame headers): by
    /// several threads at once.
    Positioned {
        file: Arc<File>,
        layout: FrameLayout,
        frames: u64,
    },
    /// Y4M whose frame headers carry parameters: one thread, in order.
    Sequential(Box<Y4mReader<BufReader<File>>>),
    /// A raw stream (a named pipe): one thread, frame after frame, to its
    /// end.
    RawStream(File, usize),
}

/// An input's `appsrc`, configured, and what its threads will read.
pub struct Prepared {
    appsrc: gst_app::AppSrc,
    /// The element's sink pad this input ends at.
    sink: Option<gst::Pad>,
    source: Source,
    info: gst_video::VideoInfo,
    path: String,
    /// Planes read of each frame (1: luma only).
    planes: usize,
    /// Reader threads (positioned sources).
    readers: usize,
    fps: (u64, u64),
}

/// Configures the input's `appsrc` (caps, time format): before the
/// pipeline starts, so that its first segment is in time.
pub fn prepare(
    pipeline: &gst::Pipeline,
    input: &Input,
    chroma: bool,
    readers: usize,
) -> Result<Prepared, Fail> {
    let name = format!("{}-src", input.role.prefix());
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
    answer_uri_query(&appsrc, &input.path);
    appsrc.set_caps(Some(&caps));
    appsrc.set_format(gst::Format::Time);
    appsrc.set_block(true);
    // Two frames queued in the appsrc: with the branch's queue and the
    // readers', enough to keep the engine fed, and each one fewer is a
    // pinned buffer fewer to allocate before the first frames.
    appsrc.set_max_bytes(2 * info.size() as u64);
    let sink = pipeline
        .by_name("v")
        .and_then(|v| v.static_pad(&input.role.sink()));
    Ok(Prepared {
        appsrc,
        sink,
        source: open_source(input)?,
        planes: if chroma { info.n_planes() as usize } else { 1 },
        readers: readers.max(1),
        info,
        path: input.path.clone(),
        fps: (v.fps.0 as u64, v.fps.1 as u64),
    })
}

/// Answers the URI query at the `appsrc` with the file's URI, as `filesrc`
/// would: the element's results and report then name the file.
fn answer_uri_query(appsrc: &gst_app::AppSrc, path: &str) {
    let Some(pad) = appsrc.static_pad("src") else {
        return;
    };
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.into());
    let Ok(uri) = glib::filename_to_uri(&absolute, None) else {
        return;
    };
    pad.add_probe(gst::PadProbeType::QUERY_UPSTREAM, move |_, info| {
        if let Some(q) = info.query_mut()
            && let gst::QueryViewMut::Uri(u) = q.view_mut()
        {
            u.set_uri(Some(uri.as_str()));
            return gst::PadProbeReturn::Handled;
        }
        gst::PadProbeReturn::Ok
    });
}

fn open_source(input: &Input) -> Result<Source, Fail> {
    let fail = |e: std::io::Error| Fail::input(format!("{}: {e}", input.path));
    let file = File::open(&input.path).map_err(fail)?;
    let tight = frame_bytes(&input.video) as u64;
    let frames = input.frames.unwrap_or(0);
    if input.kind == Kind::Raw && input.frames.is_none() {
        return Ok(Source::RawStream(file, tight as usize));
    }
    let layout = match input.kind {
        Kind::Raw => FrameLayout {
            first: 0,
            step: tight,
            y4m_header: false,
        },
        Kind::Y4m => {
            let r = Y4mReader::new(BufReader::new(file.try_clone().map_err(fail)?))
                .map_err(|e| Fail::input(format!("{}: {e}", input.path)))?;
            let start = r.header.header_len as u64;
            let mut head = [0u8; FRAME_HEADER.len()];
            let plain = file.read_exact_at(&mut head, start).is_ok() && head == FRAME_HEADER;
            let size = file.metadata().map_err(fail)?.len();
            let step = tight + FRAME_HEADER.len() as u64;
            if !plain || !(size - start).is_multiple_of(step) {
                return Ok(Source::Sequential(Box::new(r)));
            }
            FrameLayout {
                first: start + FRAME_HEADER.len() as u64,
                step,
                y4m_header: true,
            }
        }
        Kind::Media => unreachable!("media files have no feeder"),
    };
    Ok(Source::Positioned {
        file: Arc::new(file),
        layout,
        frames,
    })
}

/// The pool the element proposes for these caps, if any. It is asked
/// directly: the converters between pass its frames through untouched when
/// the input already has the scoring format and size, but answer no query
/// before they have negotiated.
fn element_pool(sink: &gst::Pad, info: &gst_video::VideoInfo) -> Option<gst::BufferPool> {
    let caps = info.to_caps().expect("valid info");
    let mut query = gst::query::Allocation::new(Some(&caps), true);
    if !sink.query(&mut query) {
        return None;
    }
    let (pool, size, min, max) = query.allocation_pools().next()?;
    let pool = pool?;
    (pool.is_active() || configure(&pool, &caps, size.max(info.size() as u32), min, max))
        .then_some(pool)
}

/// A plain video pool of our own.
fn own_pool(info: &gst_video::VideoInfo) -> gst::BufferPool {
    let caps = info.to_caps().expect("valid info");
    let pool = gst_video::VideoBufferPool::new().upcast::<gst::BufferPool>();
    configure(&pool, &caps, info.size() as u32, 2, 0);
    pool
}

fn configure(pool: &gst::BufferPool, caps: &gst::Caps, size: u32, min: u32, max: u32) -> bool {
    let mut config = pool.config();
    config.set_params(Some(caps), size, min, max);
    pool.set_config(config).is_ok() && pool.set_active(true).is_ok()
}

/// The order frames are taken from the pool and pushed in: frame `k` is
/// taken after frame `k - 1` and pushed after it, whichever thread reads it.
#[derive(Default)]
struct Turns {
    /// The next frame of each stage: `[take a buffer, push]`.
    next: Mutex<[u64; 2]>,
    changed: Condvar,
}

impl Turns {
    /// Waits until it is frame `k`'s turn at stage `which` (0: take a
    /// buffer, 1: push), runs `f`, and passes the turn on. No lock is held
    /// while `f` runs (it may block until the pipeline takes frames), and
    /// only the thread whose turn it is runs it.
    fn take<T>(&self, which: usize, k: u64, stop: &AtomicBool, f: impl FnOnce() -> T) -> Option<T> {
        {
            let mut next = self.next.lock().unwrap();
            while next[which] != k {
                if stop.load(Ordering::Relaxed) {
                    return None;
                }
                next = self
                    .changed
                    .wait_timeout(next, std::time::Duration::from_millis(50))
                    .unwrap()
                    .0;
            }
        }
        let out = f();
        self.next.lock().unwrap()[which] += 1;
        self.changed.notify_all();
        Some(out)
    }
}

/// Reader threads per file when not given (`--read-threads`): the
/// page-cache copies are what bound a raw input, and one core copies less
/// than the engine takes, fewer than 2160p frames with chroma need
/// (docs/PERFORMANCE.md, "Raw files"). Three eighths of the cores shared among the pairs
/// scored at once, between 1 and 6.
pub fn default_readers(pairs_at_once: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    (cores * 3 / (8 * pairs_at_once.max(1))).clamp(1, 6)
}

/// What every reader thread of one input shares.
struct Shared {
    appsrc: gst_app::AppSrc,
    /// Our own pool, for the first frame (the element answers no ALLOCATION
    /// query before its pad has caps, which come with that frame) and
    /// whenever the element proposes none.
    own_pool: gst::BufferPool,
    /// The element's pool once it offered one, and whether to stop asking.
    element_pool: Mutex<(Option<gst::BufferPool>, bool)>,
    sink: Option<gst::Pad>,
    info: gst_video::VideoInfo,
    path: String,
    planes: usize,
    fps: (u64, u64),
    turns: Turns,
    stop: AtomicBool,
}

/// Starts the reader threads (once the pipeline runs: an appsrc that never
/// started would block them for good).
pub fn start(p: Prepared) -> Result<Feeder, Fail> {
    let shared = Arc::new(Shared {
        appsrc: p.appsrc,
        own_pool: own_pool(&p.info),
        element_pool: Mutex::new((None, false)),
        sink: p.sink,
        info: p.info,
        path: p.path,
        planes: p.planes,
        fps: p.fps,
        turns: Turns::default(),
        stop: AtomicBool::new(false),
    });
    let spawn = |name: String, f: Box<dyn FnOnce() -> Result<(), Fail> + Send>| {
        std::thread::Builder::new()
            .name(name)
            .spawn(f)
            .map_err(|e| Fail(Exit::Failed, format!("starting a reader thread: {e}")))
    };
    let base = shared.appsrc.name().to_string();
    let mut threads = Vec::new();
    match p.source {
        Source::Positioned {
            file,
            layout,
            frames,
        } => {
            if frames == 0 {
                let _ = shared.appsrc.end_of_stream();
                return Ok(Feeder(threads));
            }
            let n = p.readers.min(frames as usize);
            for t in 0..n {
                let (s, file) = (shared.clone(), file.clone());
                let read = move || read_positioned(&s, &file, layout, frames, t as u64, n as u64);
                threads.push(spawn(format!("{base}-{t}"), Box::new(read))?);
            }
        }
        Source::Sequential(mut reader) => {
            let s = shared.clone();
            let tight = reader.header.frame_bytes();
            let read = move |frame: &mut [u8]| reader.read_frame(frame).map_err(|e| e.to_string());
            threads.push(spawn(
                base,
                Box::new(move || read_sequential(&s, tight, read)),
            )?);
        }
        Source::RawStream(mut file, tight) => {
            let s = shared.clone();
            let read = move |frame: &mut [u8]| read_whole(&mut file, frame);
            threads.push(spawn(
                base,
                Box::new(move || read_sequential(&s, tight, read)),
            )?);
        }
    }
    Ok(Feeder(threads))
}

impl Shared {
    /// Stops every reader of this input and posts the error on the bus.
    fn fail(&self, msg: String) -> Result<(), Fail> {
        self.stop.store(true, Ordering::Relaxed);
        self.turns.changed.notify_all();
        // The message names no file: whoever reads it knows the input.
        let _ = self.appsrc.post_message(
            gst::message::Error::builder(gst::ResourceError::Read, &msg)
                .src(&self.appsrc)
                .build(),
        );
        Err(Fail(Exit::Decode, format!("{}: {msg}", self.path)))
    }

    /// Timestamps frame `k` and pushes it in its turn; false when the
    /// pipeline stopped taking frames.
    fn push(&self, k: u64, mut buffer: gst::Buffer) -> bool {
        let (n, d) = self.fps;
        let t = |k: u64| gst::ClockTime::from_nseconds(k * 1_000_000_000 * d / n);
        {
            let b = buffer.get_mut().expect("a fresh pool buffer is writable");
            b.set_pts(t(k));
            b.set_duration(t(k + 1) - t(k));
            // Our pools and the element's have no bound: frames aligned
            // by content are held as they are.
            gstvmafhip::mark_holdable(b);
        }
        let pushed = self
            .turns
            .take(1, k, &self.stop, || self.appsrc.push_buffer(buffer).is_ok());
        if pushed != Some(true) {
            self.stop.store(true, Ordering::Relaxed);
            self.turns.changed.notify_all();
            return false;
        }
        true
    }

    /// A buffer in frame `k`'s turn; `None` when stopping. Frame 0 takes
    /// ours; from then on the element's pool is asked for (its pad must
    /// have handled the caps first) until it offers one or
    /// [`ASK_POOL_FRAMES`] frames have gone, and used once it has.
    fn acquire(&self, k: u64) -> Option<gst::Buffer> {
        self.turns
            .take(0, k, &self.stop, || self.pool(k).acquire_buffer(None).ok())
            .flatten()
    }

    fn pool(&self, k: u64) -> gst::BufferPool {
        let mut asked = self.element_pool.lock().unwrap();
        if !asked.1 && !read_into_element_pool() {
            asked.1 = true;
        }
        if !asked.1
            && k > 0
            && let Some(sink) = self.sink.as_ref().filter(|p| p.current_caps().is_some())
        {
            asked.0 = element_pool(sink, &self.info);
            asked.1 = asked.0.is_some() || k >= ASK_POOL_FRAMES;
        }
        asked.0.clone().unwrap_or_else(|| self.own_pool.clone())
    }
}

/// `VMAFHIP_READ_INTO_POOL=0` reads into our own pool instead of the
/// element's (which then copies on arrival), for comparisons.
fn read_into_element_pool() -> bool {
    std::env::var("VMAFHIP_READ_INTO_POOL").map_or(true, |v| v != "0")
}

/// Frames after which a reader stops asking the element for its pool.
const ASK_POOL_FRAMES: u64 = 16;

/// Reader `t` of `n`: frames `t`, `t + n`, … read at their offsets.
fn read_positioned(
    s: &Shared,
    file: &File,
    layout: FrameLayout,
    frames: u64,
    t: u64,
    n: u64,
) -> Result<(), Fail> {
    let mut scratch = Vec::new();
    let mut k = t;
    while k < frames {
        let Some(mut buffer) = s.acquire(k) else {
            return Ok(());
        };
        let at = layout.first + k * layout.step;
        if layout.y4m_header {
            let mut head = [0u8; FRAME_HEADER.len()];
            let at_header = at - FRAME_HEADER.len() as u64;
            if file.read_exact_at(&mut head, at_header).is_err() || head != FRAME_HEADER {
                return s.fail(format!(
                    "frame {k}: no plain FRAME header where one was expected"
                ));
            }
        }
        let got = read_planes(
            s,
            buffer.get_mut().expect("writable"),
            &mut scratch,
            |dst, off| file.read_exact_at(dst, at + off),
        );
        if let Err(e) = got {
            return s.fail(format!("frame {k}: {e}"));
        }
        if !s.push(k, buffer) {
            return Ok(());
        }
        if k + 1 == frames {
            let _ = s.appsrc.end_of_stream();
        }
        k += n;
    }
    Ok(())
}

/// One tightly packed frame from a stream: false at its end (nothing
/// left), an error for a frame cut short.
fn read_whole(file: &mut File, frame: &mut [u8]) -> Result<bool, String> {
    use std::io::Read;
    let mut got = 0;
    while got < frame.len() {
        match file.read(&mut frame[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => {
                return Err(format!(
                    "truncated ({got} of {} bytes of planes)",
                    frame.len()
                ));
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(true)
}

/// One thread through a stream (a Y4M file whose frame headers carry
/// parameters, a raw pipe): frames read in order with `read_frame` (tight
/// frames of `tight` bytes; false at the end) and pushed.
fn read_sequential(
    s: &Shared,
    tight: usize,
    mut read_frame: impl FnMut(&mut [u8]) -> Result<bool, String>,
) -> Result<(), Fail> {
    let mut frame = vec![0u8; tight];
    let mut scratch = Vec::new();
    let mut k = 0u64;
    loop {
        let Some(mut buffer) = s.acquire(k) else {
            return Ok(());
        };
        match read_frame(&mut frame) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return s.fail(format!("frame {k}: {e}")),
        }
        let _ = read_planes(
            s,
            buffer.get_mut().expect("writable"),
            &mut scratch,
            |dst, off| {
                dst.copy_from_slice(&frame[off as usize..off as usize + dst.len()]);
                Ok(())
            },
        );
        if !s.push(k, buffer) {
            return Ok(());
        }
        k += 1;
    }
    let _ = s.appsrc.end_of_stream();
    Ok(())
}

/// Fills the planes read of one frame in `buffer` (its layout from its
/// video meta, or the stream's), `read(dst, offset)` reading tight bytes at
/// `offset` from the frame's first sample.
fn read_planes(
    s: &Shared,
    buffer: &mut gst::BufferRef,
    scratch: &mut Vec<u8>,
    mut read: impl FnMut(&mut [u8], u64) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut frame = gst_video::VideoFrameRef::from_buffer_ref_writable(buffer, &s.info)
        .map_err(|_| std::io::Error::other("the pool's buffer does not map as a video frame"))?;
    let mut off = 0u64;
    for p in 0..s.planes {
        let (row, rows) = plane_size(&s.info, p);
        let stride = frame.plane_stride()[p] as usize;
        let dst = frame
            .plane_data_mut(p as u32)
            .map_err(|_| std::io::Error::other("plane does not map"))?;
        if stride == row {
            read(&mut dst[..row * rows], off)?;
        } else {
            scratch.resize(row * rows, 0);
            read(scratch, off)?;
            for (y, src) in scratch.chunks_exact(row).enumerate() {
                dst[y * stride..y * stride + row].copy_from_slice(src);
            }
        }
        off += (row * rows) as u64;
    }
    Ok(())
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
