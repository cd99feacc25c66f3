//! `align`'s pieces the element's modules share: the tracker a rendition
//! keeps, a frame's thumbnail, and what becomes of a pad's frames on
//! arrival. The pairing itself is in `imp/aligned.rs`.

use super::late::{Arrived, Timed, WaitingRef};
use crate::core::align::{Luma, Thumb, Tracker, thumbnail};
use gst_video::prelude::*;

/// A rendition's tracker: reference frames waiting with their running
/// time, distorted frames as they arrived.
pub(in crate::element) type Aligner = Tracker<Timed<WaitingRef>, Timed<Arrived>>;

/// The name of the element messages that report a dropped or duplicated
/// distorted frame.
pub const ALIGN_EVENT: &str = "align-event";

/// A frame's luma thumbnail, where its luma is in host memory.
pub(in crate::element) fn thumb_of(
    frame: &gst_video::VideoFrameRef<&gst::BufferRef>,
) -> Option<Thumb> {
    let info = frame.info();
    let f = info.format_info();
    if !f.is_yuv() && !f.is_gray() {
        return None;
    }
    let bytes = f.pixel_stride()[0] as usize;
    if bytes == 0 || bytes > 2 || f.is_complex() {
        return None;
    }
    let data = frame.plane_data(0).ok()?;
    Some(thumbnail(&Luma {
        data,
        stride: frame.plane_stride()[0] as usize,
        width: info.width() as usize,
        height: info.height() as usize,
        bytes,
        shift: f.shift()[0] + f.depth()[0].saturating_sub(8),
    }))
}

/// A buffer's luma thumbnail (None: it cannot be read on the host).
pub(in crate::element) fn thumb_of_buffer(
    buffer: &gst::Buffer,
    info: &gst_video::VideoInfo,
) -> Option<Thumb> {
    let frame = gst_video::VideoFrameRef::from_buffer_ref_readable(buffer.as_ref(), info).ok()?;
    thumb_of(&frame)
}

/// What becomes of a sink pad's frames on arrival (the element's `holding`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Holding {
    /// Queued for the aggregator.
    No,
    /// Taken for the waiting reference frames.
    Late,
    /// Taken, with their thumbnails, for the tracker; passed on to the
    /// aggregator too unless `live`.
    Aligned { live: bool },
}
