//! `align`'s pieces the element's modules share: the tracker a rendition
//! keeps, a frame's thumbnail, and what becomes of a pad's frames on
//! arrival. The pairing itself is in `imp/aligned.rs`.

use super::gpu_input::GpuInputs;
use super::late::{Arrived, Timed, WaitingRef};
use crate::core::align::{Luma, Thumb, Tracker, sampled_rows, thumbnail, thumbnail_of_rows};
use crate::hip::gst_gpu;
use gst_video::prelude::*;

/// A rendition's tracker: reference frames waiting with their running
/// time, distorted frames as they arrived.
pub(in crate::element) type Aligner = Tracker<Timed<WaitingRef>, Timed<Arrived>>;

/// The name of the element messages that report a dropped or duplicated
/// distorted frame.
pub const ALIGN_EVENT: &str = "align-event";

/// A frame's luma thumbnail: read on the host, or, for a frame mapped for
/// the device (GPU memory of `gpu`'s device), from the rows it needs
/// read back first. None: a layout it cannot read, or a failed read.
pub(in crate::element) fn thumb_of(
    frame: &gst_video::VideoFrameRef<&gst::BufferRef>,
    gpu: Option<&GpuInputs>,
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
    let (width, height) = (info.width() as usize, info.height() as usize);
    let luma = |data, stride| Luma {
        data,
        stride,
        width,
        height,
        bytes,
        shift: f.shift()[0] + f.depth()[0].saturating_sub(8),
    };
    if gst_gpu::mapped_for_device(frame) {
        let rows = gpu?
            .read_rows(frame, 0, sampled_rows(height), width * bytes)
            .ok()?;
        return Some(thumbnail_of_rows(&luma(&rows, width * bytes)));
    }
    let data = frame.plane_data(0).ok()?;
    Some(thumbnail(&luma(data, frame.plane_stride()[0] as usize)))
}

/// A buffer's luma thumbnail; GPU memory of `gpu`'s context is read on
/// the device, other memory mapped for the host.
pub(in crate::element) fn thumb_of_buffer(
    buffer: &gst::Buffer,
    info: &gst_video::VideoInfo,
    gpu: Option<&GpuInputs>,
) -> Option<Thumb> {
    if let Some(frame) = gpu.and_then(|g| g.map_owned(buffer, info)) {
        return thumb_of(&frame.as_video_frame_ref(), gpu);
    }
    let frame = gst_video::VideoFrameRef::from_buffer_ref_readable(buffer.as_ref(), info).ok()?;
    thumb_of(&frame, None)
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
