//! GStreamer video frames as engine pictures: the formats the element
//! takes, frames mapped on the host or on the device, and the replay the
//! failover reads a frame's planes from again.

use crate::hip;
use crate::hip::gst_gpu::{self, GpuMemoryKind};
use crate::vmaf::{self, DevicePlane, Picture, PixelFormat, Plane};
use gst_video::prelude::*;
use std::borrow::Cow;
use std::sync::Arc;

pub(super) const FORMATS: &[&str] = &[
    "I420",
    "YV12",
    "NV12",
    "Y42B",
    "Y444",
    "GRAY8",
    "I420_10LE",
    "I422_10LE",
    "Y444_10LE",
    "I420_12LE",
    "I422_12LE",
    "Y444_12LE",
    "GRAY16_LE",
];

/// Whether `buf` lies in one of GStreamer's GPU memories, which a host
/// mapping would download.
pub(super) fn in_gpu_memory(buf: &gst::BufferRef) -> bool {
    buf.iter_memories().any(|m| {
        GpuMemoryKind::ALL
            .iter()
            .any(|k| m.is_type(k.memory_type()))
    })
}

/// The engine's layout and depth of a GStreamer video format.
pub(super) fn engine_format(fmt: gst_video::VideoFormat) -> Result<(PixelFormat, u8), String> {
    use gst_video::VideoFormat as F;
    Ok(match fmt {
        F::I420 | F::Yv12 | F::Nv12 => (PixelFormat::Yuv420, 8),
        F::P01010le => (PixelFormat::Yuv420, 10),
        F::P012Le => (PixelFormat::Yuv420, 12),
        F::Y42b => (PixelFormat::Yuv422, 8),
        F::Y444 => (PixelFormat::Yuv444, 8),
        F::Gray8 => (PixelFormat::Gray, 8),
        F::I42010le => (PixelFormat::Yuv420, 10),
        F::I42210le => (PixelFormat::Yuv422, 10),
        F::Y44410le => (PixelFormat::Yuv444, 10),
        F::I42012le => (PixelFormat::Yuv420, 12),
        F::I42212le => (PixelFormat::Yuv422, 12),
        F::Y44412le => (PixelFormat::Yuv444, 12),
        F::Gray16Le => (PixelFormat::Gray, 16),
        other => return Err(format!("unsupported format {other:?}")),
    })
}

/// Whether two sink pads' formats can be scored against each other: the
/// same chroma layout and bit depth, in any memory layout (I420, YV12 and
/// NV12 are all 8-bit 4:2:0; NV12's chroma is split where it is read).
pub(super) fn comparable_formats(a: gst_video::VideoFormat, b: gst_video::VideoFormat) -> bool {
    match (engine_format(a), engine_format(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// The formats whose deep samples sit in the high bits of 16 with U and V
/// interleaved (a 10- or 12-bit decoder's output: P010, P012), and their
/// depth.
pub(super) fn msb_semi_planar(fmt: gst_video::VideoFormat) -> Option<u8> {
    match fmt {
        gst_video::VideoFormat::P01010le => Some(10),
        gst_video::VideoFormat::P012Le => Some(12),
        _ => None,
    }
}

/// A frame mapped for the device (`gst_gpu::mapped_for_device`) as an
/// engine picture of device planes, in component order (Y, U, V).
pub(super) fn device_picture(
    frame: &gst_video::VideoFrameRef<&gst::BufferRef>,
) -> Result<Picture<'static>, String> {
    let info = frame.info();
    let (pf, bpc) = engine_format(info.format())?;
    // NV12's, P010's and P012's U and V share plane 1: V starts one
    // sample in. P010 and P012 keep their bits in the high bits of 16.
    let msb = msb_semi_planar(info.format());
    let semi_planar = msb.is_some() || info.format() == gst_video::VideoFormat::Nv12;
    let sample = if msb.is_some() { 2 } else { 1 };
    let mut planes = Vec::new();
    for c in 0..pf.plane_count() as u8 {
        let p = info.comp_plane(c) as usize;
        let (ptr, bytes, pitch) =
            gst_gpu::device_plane(frame, p).ok_or_else(|| format!("GPU frame has no plane {p}"))?;
        let interleaved = semi_planar && c > 0;
        let skip = if interleaved && c == 2 { sample } else { 0 };
        planes.push(DevicePlane {
            ptr: ptr + skip,
            bytes: bytes.saturating_sub(skip as usize),
            width: info.comp_width(c) as usize,
            height: info.comp_height(c) as usize,
            pitch,
            interleaved,
            msb_shift: msb.map_or(0, |depth| 16 - depth),
        });
    }
    Picture::new_device(pf, bpc, &planes).map_err(|e| e.to_string())
}

/// Borrow a mapped frame as an engine picture (NV12 chroma is deinterleaved;
/// a frame mapped for the device gives device planes).
/// A frame pair's buffers (host memory), mapped again when the CPU engine
/// takes a stream over from a failed GPU (`vmaf::Failover`).
pub(super) struct BufferReplay([(gst::Buffer, gst_video::VideoInfo); 2]);

impl BufferReplay {
    /// The replay of two mapped frames, unless one lies in GPU memory.
    pub(super) fn of(
        r: &gst_video::VideoFrameRef<&gst::BufferRef>,
        d: &gst_video::VideoFrameRef<&gst::BufferRef>,
        buffers: (&gst::Buffer, &gst::Buffer),
    ) -> Option<Arc<dyn vmaf::Replay>> {
        if gst_gpu::mapped_for_device(r) || gst_gpu::mapped_for_device(d) {
            return None;
        }
        Some(Arc::new(BufferReplay([
            (buffers.0.clone(), r.info().clone()),
            (buffers.1.clone(), d.info().clone()),
        ])))
    }
}

impl vmaf::Replay for BufferReplay {
    fn pictures(
        &self,
        f: &mut dyn FnMut(&Picture<'_>, &Picture<'_>) -> Result<(), vmaf::VmafError>,
    ) -> Result<(), vmaf::VmafError> {
        let lost = |e: String| vmaf::VmafError::Backend(format!("remaking a kept frame: {e}"));
        let [(rb, ri), (db, di)] = &self.0;
        let r = gst_video::VideoFrameRef::from_buffer_ref_readable(rb.as_ref(), ri)
            .map_err(|_| lost("its buffer no longer maps".into()))?;
        let d = gst_video::VideoFrameRef::from_buffer_ref_readable(db.as_ref(), di)
            .map_err(|_| lost("its buffer no longer maps".into()))?;
        with_picture(&r, |rp| with_picture(&d, |dp| f(rp, dp)))
            .map_err(lost)?
            .map_err(lost)?
    }
}

pub(super) fn with_picture<R>(
    frame: &gst_video::VideoFrameRef<&gst::BufferRef>,
    f: impl FnOnce(&Picture<'_>) -> R,
) -> Result<R, String> {
    if gst_gpu::mapped_for_device(frame) {
        return Ok(f(&device_picture(frame)?));
    }
    let info = frame.info();
    let (w, h) = (info.width() as usize, info.height() as usize);
    let fmt = info.format();
    use gst_video::VideoFormat as F;
    if let Some(depth) = msb_semi_planar(fmt) {
        return with_msb_picture(frame, depth, f);
    }
    let (pf, bpc) = engine_format(fmt)?;
    let nplanes = pf.plane_count();
    let err = |e: vmaf::VmafError| e.to_string();
    let comp_size =
        |c: u8| -> (usize, usize) { (info.comp_width(c) as usize, info.comp_height(c) as usize) };
    if bpc == 8 {
        let mut deinterleaved: Vec<Vec<u8>> = Vec::new();
        let mut planes: Vec<Plane<'_, u8>> = Vec::new();
        if fmt == F::Nv12 {
            let (cw, ch) = comp_size(1);
            let uv = frame.plane_data(1).map_err(|e| e.to_string())?;
            let stride = frame.plane_stride()[1] as usize;
            let mut u = Vec::with_capacity(cw * ch);
            let mut v = Vec::with_capacity(cw * ch);
            for y in 0..ch {
                let row = &uv[y * stride..y * stride + 2 * cw];
                u.extend(row.iter().step_by(2));
                v.extend(row.iter().skip(1).step_by(2));
            }
            deinterleaved = vec![u, v];
        }
        let y = frame.plane_data(0).map_err(|e| e.to_string())?;
        planes.push(Plane::new(y, w, h, frame.plane_stride()[0] as usize).map_err(err)?);
        if nplanes == 3 {
            if fmt == F::Nv12 {
                let (cw, ch) = comp_size(1);
                for p in &deinterleaved {
                    planes.push(Plane::new(p, cw, ch, cw).map_err(err)?);
                }
            } else {
                // Component order (Y, U, V) regardless of plane order (YV12).
                for c in 1..3u8 {
                    let (cw, ch) = comp_size(c);
                    let p = info.comp_plane(c);
                    let data = frame.plane_data(p).map_err(|e| e.to_string())?;
                    planes.push(
                        Plane::new(data, cw, ch, frame.plane_stride()[p as usize] as usize)
                            .map_err(err)?,
                    );
                }
            }
        }
        let pic = Picture::new_u8(pf, &planes).map_err(err)?;
        Ok(f(&pic))
    } else {
        // Samples are read in place where the plane is aligned (then pinned
        // memory stays pinned for the upload); otherwise converted once.
        let mut samples: Vec<(Cow<'_, [u16]>, usize, usize, usize)> = Vec::new();
        for c in 0..nplanes as u8 {
            let (cw, ch) = comp_size(c);
            let p = info.comp_plane(c);
            let data = frame.plane_data(p).map_err(|e| e.to_string())?;
            let stride = frame.plane_stride()[p as usize] as usize;
            if let Some(view) = hip::u16_view(data).filter(|_| stride.is_multiple_of(2)) {
                samples.push((Cow::Borrowed(view), cw, ch, stride / 2));
                continue;
            }
            let mut v = Vec::with_capacity(cw * ch);
            for y in 0..ch {
                let row = &data[y * stride..y * stride + 2 * cw];
                v.extend(
                    row.chunks_exact(2)
                        .map(|b| u16::from_le_bytes([b[0], b[1]])),
                );
            }
            samples.push((Cow::Owned(v), cw, ch, cw));
        }
        let planes: Vec<Plane<'_, u16>> = samples
            .iter()
            .map(|(v, cw, ch, stride)| Plane::new(v, *cw, *ch, *stride))
            .collect::<Result<_, _>>()
            .map_err(err)?;
        let pic = Picture::new_u16(pf, bpc, &planes).map_err(err)?;
        Ok(f(&pic))
    }
}

/// A P010 or P012 frame (`depth`-bit samples in the high bits of 16,
/// chroma interleaved) as a planar picture of that depth: every sample
/// shifted down, the chroma split.
pub(super) fn with_msb_picture<R>(
    frame: &gst_video::VideoFrameRef<&gst::BufferRef>,
    depth: u8,
    f: impl FnOnce(&Picture<'_>) -> R,
) -> Result<R, String> {
    let info = frame.info();
    let (w, h) = (info.width() as usize, info.height() as usize);
    let (cw, ch) = (info.comp_width(1) as usize, info.comp_height(1) as usize);
    let samples = |p: u32, count: usize, rows: usize| -> Result<Vec<Vec<u16>>, String> {
        let data = frame.plane_data(p).map_err(|e| e.to_string())?;
        let stride = frame.plane_stride()[p as usize] as usize;
        (0..rows)
            .map(|y| {
                let row = data
                    .get(y * stride..y * stride + 2 * count)
                    .ok_or_else(|| {
                        format!("{:?} plane {p} shorter than its rows", info.format())
                    })?;
                Ok(row
                    .chunks_exact(2)
                    .map(|b| u16::from_le_bytes([b[0], b[1]]) >> (16 - depth))
                    .collect())
            })
            .collect()
    };
    let luma: Vec<u16> = samples(0, w, h)?.concat();
    let uv = samples(1, 2 * cw, ch)?.concat();
    let u: Vec<u16> = uv.iter().step_by(2).copied().collect();
    let v: Vec<u16> = uv.iter().skip(1).step_by(2).copied().collect();
    let err = |e: vmaf::VmafError| e.to_string();
    let planes = [
        Plane::new(&luma, w, h, w).map_err(err)?,
        Plane::new(&u, cw, ch, cw).map_err(err)?,
        Plane::new(&v, cw, ch, cw).map_err(err)?,
    ];
    let pic = Picture::new_u16(PixelFormat::Yuv420, depth, &planes).map_err(err)?;
    Ok(f(&pic))
}
