//! Scaling a rendition to the reference's size on the GPU
//! (`scale.hip`): the twin of `core::scale`, with the same integer
//! weights (made on the host, uploaded once per size) and the same sums, so
//! the same samples. The engine uploads the rendition's planes into this
//! scaler's buffers of the frame's ring slot and launches both passes into
//! the slot's distorted planes.

#![forbid(unsafe_code)]

use crate::core::scale::{Filter, PlaneFilters, ScaleMethod, Scaler};
use crate::core::{PixelFormat, VmafError};
use crate::hip::twin::{KernelSet, Modules, blocks, sig, upload_table};
use crate::hip::{Arg, Device, DeviceBuffer, HipError, Kernel, Stream};
use std::sync::Arc;

/// The scaler's kernel file: a set the backend loads beside the
/// extractors'.
pub(super) static KERNELS: KernelSet = KernelSet {
    sources: &[("scale.hip", include_str!("scale.hip"))],
    load: |m, _, _| Ok(Box::new(Kernels::load(m)?)),
};

pub(super) struct Kernels {
    h8: Kernel,
    h16: Kernel,
    v8: Kernel,
    v16: Kernel,
    /// NV12's interleaved chroma into a plane of its own.
    pub(super) split8: Kernel,
    /// P010's planes (interleaved chroma, samples in the high bits) into
    /// plain 16-bit planes.
    pub(super) unpack16: Kernel,
}

impl Kernels {
    pub(super) fn load(m: &Modules) -> Result<Self, HipError> {
        let f = &m["scale.hip"];
        // Source, its pitch, width and rows; the filter; output width and
        // sums (horizontal). Sums, width, source rows; the filter; output
        // rows, the largest sample, output (vertical).
        let (h, v) = (sig("p iii pp i i p"), sig("p ii pp i i i p"));
        Ok(Kernels {
            h8: f.kernel("scale_h_8", &h)?,
            h16: f.kernel("scale_h_16", &h)?,
            v8: f.kernel("scale_v_8", &v)?,
            v16: f.kernel("scale_v_16", &v)?,
            split8: f.kernel("split_interleaved_8", &sig("p iii p"))?,
            unpack16: f.kernel("unpack_16", &sig("p iiiii p"))?,
        })
    }
}

/// One direction's filter on the device.
struct DeviceFilter {
    start: DeviceBuffer,
    weights: DeviceBuffer,
    taps: usize,
    src: usize,
    dst: usize,
}

impl DeviceFilter {
    fn upload(dev: &Arc<Device>, st: &Stream, f: &Filter) -> Result<Self, HipError> {
        let table = |v: &[i32], what| upload_table(dev, st, v, |x| x.to_le_bytes().to_vec(), what);
        Ok(DeviceFilter {
            start: table(&f.start, "scaler taps' first samples")?,
            weights: table(&f.weights, "scaler weights")?,
            taps: f.taps,
            src: f.src,
            dst: f.dst,
        })
    }
}

/// The rendition's planes of one ring slot, as uploaded, and the
/// horizontal pass's sums.
struct ScaleSlot {
    source: Vec<DeviceBuffer>,
    sums: DeviceBuffer,
}

/// Scales renditions of one size to the reference's, frame by frame.
pub(super) struct DeviceScaler {
    pub method: ScaleMethod,
    /// The rendition's chroma layout and depth.
    pub layout: (PixelFormat, u8),
    pub from: (usize, usize),
    pub to: (usize, usize),
    bps: usize,
    max_value: i32,
    /// Per plane scaled (luma, then chroma where the engine reads it).
    planes: Vec<(DeviceFilter, DeviceFilter)>,
    slots: Vec<ScaleSlot>,
}

impl DeviceScaler {
    /// A scaler from `from` to `to` for `planes` planes of `format` at
    /// `bpc` bits, with buffers for `ring` frames in flight.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        dev: &Arc<Device>,
        method: ScaleMethod,
        layout @ (format, bpc): (PixelFormat, u8),
        from: (usize, usize),
        to: (usize, usize),
        planes: usize,
        ring: usize,
    ) -> Result<Self, VmafError> {
        let host = Scaler::new(method, format, bpc, from, to)?;
        let be = |e: HipError| VmafError::Backend(format!("HIP: setting up the scaler: {e}"));
        let st = Stream::new(dev).map_err(be)?;
        let used: Vec<&PlaneFilters> = host.planes.iter().take(planes).collect();
        let filters = used
            .iter()
            .map(|f| {
                Ok((
                    DeviceFilter::upload(dev, &st, &f.horizontal)?,
                    DeviceFilter::upload(dev, &st, &f.vertical)?,
                ))
            })
            .collect::<Result<Vec<_>, HipError>>()
            .map_err(be)?;
        let bps = if bpc == 8 { 1 } else { 2 };
        let slots = (0..ring)
            .map(|_| {
                let source = used
                    .iter()
                    .map(|f| {
                        let bytes = f.horizontal.src * f.vertical.src * bps;
                        DeviceBuffer::new(dev, bytes, "rendition planes")
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let most = used
                    .iter()
                    .map(|f| f.vertical.src * f.horizontal.dst * 4)
                    .max()
                    .unwrap_or(4);
                Ok(ScaleSlot {
                    source,
                    sums: DeviceBuffer::new(dev, most, "scaler sums")?,
                })
            })
            .collect::<Result<Vec<_>, HipError>>()
            .map_err(be)?;
        Ok(DeviceScaler {
            method,
            layout,
            from,
            to,
            bps,
            max_value: (1i32 << bpc) - 1,
            planes: filters,
            slots,
        })
    }

    /// Whether it scales renditions of `layout` from `from` to `to` with
    /// `method`, for `planes` planes and `ring` slots.
    pub fn fits(
        &self,
        (method, layout): (ScaleMethod, (PixelFormat, u8)),
        from: (usize, usize),
        to: (usize, usize),
        (planes, ring): (usize, usize),
    ) -> bool {
        (self.method, self.layout, self.from, self.to) == (method, layout, from, to)
            && (self.planes.len(), self.slots.len()) == (planes, ring)
    }

    /// Plane `p`'s size in the rendition (samples).
    pub fn source_size(&self, p: usize) -> (usize, usize) {
        let (h, v) = &self.planes[p];
        (h.src, v.src)
    }

    /// Where slot `s`'s plane `p` of the rendition is uploaded (rows packed).
    pub fn source(&self, s: usize, p: usize) -> &DeviceBuffer {
        &self.slots[s].source[p]
    }

    /// Bytes of device memory per ring slot (for the engine's accounting).
    pub fn slot_bytes(&self) -> usize {
        self.slots.first().map_or(0, |s| {
            s.sums.bytes() + s.source.iter().map(DeviceBuffer::bytes).sum::<usize>()
        })
    }

    /// Launches both passes of plane `p` on `st`: slot `s`'s uploaded
    /// plane, scaled into `dst` (the reference's size, rows packed).
    pub fn launch(
        &self,
        k: &Kernels,
        st: &Stream,
        s: usize,
        p: usize,
        dst: &DeviceBuffer,
    ) -> Result<(), HipError> {
        let (h, v) = &self.planes[p];
        let slot = &self.slots[s];
        let (kh, kv) = if self.bps == 1 {
            (&k.h8, &k.v8)
        } else {
            (&k.h16, &k.v16)
        };
        st.launch(
            kh,
            (blocks(h.dst), v.src as u32, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(&slot.source[p], 0),
                Arg::I32(h.src as i32),
                Arg::I32(h.src as i32),
                Arg::I32(v.src as i32),
                Arg::Buf(&h.start, 0),
                Arg::Buf(&h.weights, 0),
                Arg::I32(h.taps as i32),
                Arg::I32(h.dst as i32),
                Arg::Buf(&slot.sums, 0),
            ],
        )?;
        st.launch(
            kv,
            (blocks(h.dst), v.dst as u32, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(&slot.sums, 0),
                Arg::I32(h.dst as i32),
                Arg::I32(v.src as i32),
                Arg::Buf(&v.start, 0),
                Arg::Buf(&v.weights, 0),
                Arg::I32(v.taps as i32),
                Arg::I32(v.dst as i32),
                Arg::I32(self.max_value),
                Arg::Buf(dst, 0),
            ],
        )
    }
}
