//! Files scored from Python (`vmafhip.score`): a raw planar YUV or Y4M
//! pair, each side read ahead on a thread of its own while the engine
//! scores the frames before.

use crate::{ScoreResults, Settings, Stream};
use gstvmafhip::vmaf::y4m::Y4mReader;
use gstvmafhip::vmaf::yuv::YuvFrame;
use gstvmafhip::vmaf::{PixelFormat, VmafError};
use std::io::BufReader;
use std::sync::mpsc::{Receiver, Sender, channel};

/// Frames each side reads ahead of the engine.
const AHEAD: usize = 3;

/// What a side's reader hands over: a frame, the end (`None`), or why it
/// could not read the next one.
type Read = Result<Option<YuvFrame>, VmafError>;

/// Reads one side's frames on a thread of `scope`: `read` fills a frame
/// (`Ok(false)` at a clean end). Frames circulate: the caller sends each
/// back once scored, so `AHEAD` of them are ever allocated.
fn read_ahead<'scope, R>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    frames: Vec<YuvFrame>,
    mut read: R,
) -> (Receiver<Read>, Sender<YuvFrame>)
where
    R: FnMut(&mut YuvFrame) -> Result<bool, VmafError> + Send + 'scope,
{
    let (filled_tx, filled) = channel();
    let (free, free_rx) = channel::<YuvFrame>();
    for f in frames {
        let _ = free.send(f);
    }
    scope.spawn(move || {
        // Ends when the caller drops its `free` sender (done or failed).
        while let Ok(mut f) = free_rx.recv() {
            let next = match read(&mut f) {
                Ok(true) => Ok(Some(f)),
                Ok(false) => Ok(None),
                Err(e) => Err(e),
            };
            let last = !matches!(next, Ok(Some(_)));
            if filled_tx.send(next).is_err() || last {
                break;
            }
        }
    });
    (filled, free)
}

/// Scores a file pair, `readers` giving each side's next frame into its
/// buffer (`Ok(false)` at a clean end), `frame` making a side's buffers.
fn score_pair<R0, R1>(
    settings: &Settings,
    paths: (&str, &str),
    frame: impl Fn() -> Result<YuvFrame, VmafError>,
    readers: (R0, R1),
) -> Result<ScoreResults, String>
where
    R0: FnMut(&mut YuvFrame) -> Result<bool, VmafError> + Send,
    R1: FnMut(&mut YuvFrame) -> Result<bool, VmafError> + Send,
{
    let buffers = || (0..AHEAD).map(|_| frame()).collect::<Result<Vec<_>, _>>();
    let (ref_frames, dis_frames) = (
        buffers().map_err(|e| e.to_string())?,
        buffers().map_err(|e| e.to_string())?,
    );
    let mut stream = Stream::new(settings).map_err(|e| e.to_string())?;
    std::thread::scope(|scope| {
        let (ref_in, ref_back) = read_ahead(scope, ref_frames, readers.0);
        let (dis_in, dis_back) = read_ahead(scope, dis_frames, readers.1);
        let next = |rx: &Receiver<Read>| rx.recv().unwrap_or(Ok(None));
        loop {
            let n = stream.pushed;
            let whole = |p: &str, e: VmafError| format!("{p}: {e} (after {n} whole frames)");
            let r = next(&ref_in).map_err(|e| whole(paths.0, e))?;
            let d = next(&dis_in).map_err(|e| whole(paths.1, e))?;
            let (r, d) = match (r, d) {
                (Some(r), Some(d)) => (r, d),
                (None, None) => break,
                (r, _) => {
                    let short = if r.is_some() { paths.1 } else { paths.0 };
                    return Err(format!(
                        "{short} ends after {n} frames but the other file goes on"
                    ));
                }
            };
            {
                let rp = r.picture().map_err(|e| e.to_string())?;
                let dp = d.picture().map_err(|e| e.to_string())?;
                stream.push(&rp, &dp, None).map_err(|e| e.to_string())?;
            }
            let _ = (ref_back.send(r), dis_back.send(d));
        }
        Ok(())
    })?;
    if stream.pushed == 0 {
        return Err(format!("{} holds no whole frame", paths.0));
    }
    stream.finish().map_err(|e| e.to_string())
}

/// A raw planar YUV pair of the geometry given, read and scored.
pub(crate) fn score_raw(
    settings: &Settings,
    paths: (&str, &str),
    (width, height): (usize, usize),
    format: PixelFormat,
    bpc: u8,
) -> Result<ScoreResults, String> {
    let open = |p: &str| {
        std::fs::File::open(p)
            .map(|f| BufReader::with_capacity(1 << 20, f))
            .map_err(|e| format!("{p}: {e}"))
    };
    let (mut r, mut d) = (open(paths.0)?, open(paths.1)?);
    score_pair(
        settings,
        paths,
        || YuvFrame::new(width, height, format, bpc),
        (
            move |f: &mut YuvFrame| f.read_from(&mut r),
            move |f: &mut YuvFrame| f.read_from(&mut d),
        ),
    )
}

/// A Y4M pair's frames, read and scored (the geometry from the headers).
pub(crate) fn score_y4m(settings: &Settings, paths: (&str, &str)) -> Result<ScoreResults, String> {
    let open = |p: &str| -> Result<Y4mReader<BufReader<std::fs::File>>, String> {
        let f = std::fs::File::open(p).map_err(|e| format!("{p}: {e}"))?;
        Y4mReader::new(BufReader::new(f)).map_err(|e| format!("{p}: {e}"))
    };
    let (mut r, mut d) = (open(paths.0)?, open(paths.1)?);
    let (rh, dh) = (&r.header, &d.header);
    if (rh.width, rh.height, rh.format, rh.bpc) != (dh.width, dh.height, dh.format, dh.bpc) {
        return Err(format!(
            "{} is {}x{} {:?} {}-bit but {} is {}x{} {:?} {}-bit",
            paths.0,
            rh.width,
            rh.height,
            rh.format,
            rh.bpc,
            paths.1,
            dh.width,
            dh.height,
            dh.format,
            dh.bpc
        ));
    }
    let (w, h, format, bpc) = (rh.width, rh.height, rh.format, rh.bpc);
    score_pair(
        settings,
        paths,
        || YuvFrame::new(w, h, format, bpc),
        (
            move |f: &mut YuvFrame| f.fill(|bytes| r.read_frame(bytes)),
            move |f: &mut YuvFrame| f.fill(|bytes| d.read_frame(bytes)),
        ),
    )
}
