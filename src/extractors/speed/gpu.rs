//! speed_chroma and speed_temporal on the GPU (`speed.hip`): the
//! chroma planes of both pictures (speed_temporal: the luma differences
//! from the frame before) decimated (and prescaled), centred on their local
//! means, then each image's eigenvalues and block variances, read back; the
//! CPU twin (`cpu.rs`) finishes the entropies and the score.

#![forbid(unsafe_code)]

use crate::core::RawFeatures;
use crate::core::VmafError;
use crate::extractors::Slots;
use crate::extractors::common::prescale::{AxisTaps, axis_taps};
use crate::extractors::speed::cpu::{
    self as speed, Dims, RawStats, SpeedParams, frame_scores, temporal_score,
};
use crate::hip::module::ArgKind as K;
use crate::hip::twin::{
    Frame, Geometry, GpuExtractor, KernelSet, Modules, Retired, blocks, sig, upload_table,
};
use crate::hip::{Arg, Device, DeviceBuffer, HipError, Kernel, Stream};
use std::sync::Arc;

/// Its kernel files.
pub(crate) const KERNELS: KernelSet = KernelSet {
    sources: &[(
        "speed.hip",
        concat!(
            include_str!("../common/prescale.h"),
            include_str!("speed.hip")
        ),
    )],
    load: |m, _, _| Ok(Box::new(Kernels::load(m)?)),
};

pub(crate) struct Kernels {
    small8: Kernel,
    small16: Kernel,
    temporal8: Kernel,
    temporal16: Kernel,
    localmean: Kernel,
    stats: Kernel,
}

impl Kernels {
    pub(crate) fn load(m: &Modules) -> Result<Self, HipError> {
        use K::{I32, Ptr};
        let s = &m["speed.hip"];
        let small = sig("pppp iuii pppp ii p iii p");
        Ok(Kernels {
            small8: s.kernel("speed_small_8", &small)?,
            small16: s.kernel("speed_small_16", &small)?,
            temporal8: s.kernel("speed_temporal_small_8", &small)?,
            temporal16: s.kernel("speed_temporal_small_16", &small)?,
            localmean: s.kernel("speed_localmean", &[Ptr, I32, I32, Ptr, I32, Ptr])?,
            stats: s.kernel("speed_stats", &[Ptr, I32, I32, I32, I32, Ptr, Ptr])?,
        })
    }
}

/// Which SpEED: speed_chroma's four images (U and V of reference and
/// distorted) or speed_temporal's two (the frame differences).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Images {
    Chroma,
    Temporal,
}

impl Images {
    fn count(self) -> usize {
        match self {
            Images::Chroma => 4,
            Images::Temporal => 2,
        }
    }
}

/// Stream-wide SpEED state on the device.
struct SpeedLayout {
    pub p: SpeedParams,
    pub dims: Dims,
    images: Images,
    method: i32,
    taps: usize,
    rows_idx: DeviceBuffer,
    rows_w: DeviceBuffer,
    cols_idx: DeviceBuffer,
    cols_w: DeviceBuffer,
    antialias: DeviceBuffer,
    aa_len: usize,
    local: DeviceBuffer,
    local_len: usize,
    scaler: f32,
}

/// Floats of one image's statistics in the read-back: 25 eigenvalues, the
/// singular flag (as bits), then the block variances.
fn stats_floats(d: &Dims) -> usize {
    25 + 1 + d.blocks()
}

impl SpeedLayout {
    /// The layout of `images` made from `cw`×`ch` planes.
    fn new(
        dev: &Arc<Device>,
        st: &Stream,
        (p, images): (&SpeedParams, Images),
        cw: usize,
        ch: usize,
        bpc: u8,
    ) -> Result<Self, HipError> {
        let dims = p.dims(cw, ch).map_err(HipError::Usage)?;
        let (method, rows, cols) = if p.prescaled() {
            (
                p.method.code(),
                axis_taps(p.method, ch, dims.sh),
                axis_taps(p.method, cw, dims.sw),
            )
        } else {
            (0, AxisTaps::default(), AxisTaps::default())
        };
        let ks = p.kernelscale as f32;
        let aa = speed::antialias_filter(ks);
        let local =
            crate::extractors::common::float_filter::gaussian_filter(speed::NUM_SCALES as i32, ks);
        Ok(Self {
            p: *p,
            dims,
            images,
            method,
            taps: rows.taps.max(1),
            rows_idx: upload_table(
                dev,
                st,
                &rows.index,
                |v: i32| v.to_le_bytes().to_vec(),
                "speed prescale rows",
            )?,
            rows_w: upload_table(
                dev,
                st,
                &rows.weight,
                |v: f32| v.to_le_bytes().to_vec(),
                "speed prescale rows",
            )?,
            cols_idx: upload_table(
                dev,
                st,
                &cols.index,
                |v: i32| v.to_le_bytes().to_vec(),
                "speed prescale columns",
            )?,
            cols_w: upload_table(
                dev,
                st,
                &cols.weight,
                |v: f32| v.to_le_bytes().to_vec(),
                "speed prescale columns",
            )?,
            antialias: upload_table(
                dev,
                st,
                &aa,
                |v: f32| v.to_le_bytes().to_vec(),
                "speed filter",
            )?,
            aa_len: aa.len(),
            local: upload_table(
                dev,
                st,
                &local,
                |v: f32| v.to_le_bytes().to_vec(),
                "speed filter",
            )?,
            local_len: local.len(),
            scaler: crate::extractors::common::float_picture::float_scaler(bpc).unwrap_or(0.0),
        })
    }

    /// Bytes of the images' statistics in the read-back.
    fn result_bytes(&self) -> usize {
        self.images.count() * stats_floats(&self.dims) * 4
    }

    fn slot(&self, dev: &Arc<Device>) -> Result<SpeedSlot, HipError> {
        let d = &self.dims;
        let (n, k) = (d.ow * d.oh, self.images.count());
        Ok(SpeedSlot {
            small: DeviceBuffer::new(dev, k * n * 4, "speed decimated planes")?,
            centred: DeviceBuffer::new(dev, k * n * 4, "speed decimated planes")?,
            stats: DeviceBuffer::new(dev, self.result_bytes(), "speed statistics")?,
            scratch: DeviceBuffer::new(dev, k * 2 * 25 * d.blocks() * 4, "speed solve scratch")?,
        })
    }

    /// Queues the images: speed_chroma's from `planes` (U ref, U dist,
    /// V ref, V dist), speed_temporal's from (previous, current) luma of
    /// each side.
    fn launch(
        &self,
        k: &Kernels,
        st: &Stream,
        slot: &SpeedSlot,
        planes: [&DeviceBuffer; 4],
        bps: usize,
    ) -> Result<(), HipError> {
        let d = &self.dims;
        let kern = match (self.images, bps) {
            (Images::Chroma, 1) => &k.small8,
            (Images::Chroma, _) => &k.small16,
            (Images::Temporal, 1) => &k.temporal8,
            (Images::Temporal, _) => &k.temporal16,
        };
        let z = self.images.count() as u32;
        st.launch(
            kern,
            (blocks(d.ow), d.oh as u32, z),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(planes[0], 0),
                Arg::Buf(planes[1], 0),
                Arg::Buf(planes[2], 0),
                Arg::Buf(planes[3], 0),
                Arg::I32(d.w as i32),
                Arg::U32(self.scaler.to_bits()),
                Arg::I32(self.method),
                Arg::I32(self.taps as i32),
                Arg::Buf(&self.rows_idx, 0),
                Arg::Buf(&self.rows_w, 0),
                Arg::Buf(&self.cols_idx, 0),
                Arg::Buf(&self.cols_w, 0),
                Arg::I32(d.sw as i32),
                Arg::I32(d.sh as i32),
                Arg::Buf(&self.antialias, 0),
                Arg::I32(self.aa_len as i32),
                Arg::I32(d.ow as i32),
                Arg::I32(d.oh as i32),
                Arg::Buf(&slot.small, 0),
            ],
        )?;
        st.launch(
            &k.localmean,
            (blocks(d.ow), d.oh as u32, z),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(&slot.small, 0),
                Arg::I32(d.ow as i32),
                Arg::I32(d.oh as i32),
                Arg::Buf(&self.local, 0),
                Arg::I32(self.local_len as i32),
                Arg::Buf(&slot.centred, 0),
            ],
        )?;
        st.launch(
            &k.stats,
            (z, 1, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(&slot.centred, 0),
                Arg::I32(d.ow as i32),
                Arg::I32(d.oh as i32),
                Arg::I32(d.tw as i32),
                Arg::I32(d.th as i32),
                Arg::Buf(&slot.stats, 0),
                Arg::Buf(&slot.scratch, 0),
            ],
        )?;
        Ok(())
    }

    /// The read-back statistics of the `N` images.
    fn raw_stats<const N: usize>(&self, bytes: &[u8]) -> [RawStats; N] {
        let f = |i: usize| {
            f32::from_le_bytes([
                bytes[4 * i],
                bytes[4 * i + 1],
                bytes[4 * i + 2],
                bytes[4 * i + 3],
            ])
        };
        let sf = stats_floats(&self.dims);
        let raw = |img: usize| {
            let at = img * sf;
            let mut eig = [0f32; 25];
            for (e, slot) in eig.iter_mut().enumerate() {
                *slot = f(at + e);
            }
            RawStats {
                eig,
                singular: f(at + 25).to_bits() != 0,
                variances: (0..self.dims.blocks()).map(|b| f(at + 26 + b)).collect(),
            }
        };
        std::array::from_fn(raw)
    }
}

/// Per-slot device memory of speed_chroma.
struct SpeedSlot {
    small: DeviceBuffer,
    centred: DeviceBuffer,
    stats: DeviceBuffer,
    scratch: DeviceBuffer,
}

impl SpeedSlot {
    /// Device bytes this slot holds.
    fn device_bytes(&self) -> usize {
        [&self.small, &self.centred, &self.stats, &self.scratch]
            .iter()
            .map(|b| b.bytes())
            .sum()
    }
}

/// One SpEED computation's layout and its scratch per ring slot: what
/// speed_chroma and speed_temporal share.
struct SpeedImages {
    layout: SpeedLayout,
    scratch: Vec<SpeedSlot>,
}

impl SpeedImages {
    fn new(layout: SpeedLayout) -> Self {
        Self {
            layout,
            scratch: Vec::new(),
        }
    }

    fn add_slot(&mut self, dev: &Arc<Device>) -> Result<(), HipError> {
        self.scratch.push(self.layout.slot(dev)?);
        Ok(())
    }

    fn slot_bytes(&self) -> usize {
        self.scratch.first().map_or(0, SpeedSlot::device_bytes)
    }

    /// Queues the images from `planes` (as `SpeedLayout::launch` takes
    /// them) and the read-back of their statistics into the frame's result.
    fn run(&self, f: &Frame<'_>, planes: [&DeviceBuffer; 4]) -> Result<(), HipError> {
        let ss = &self.scratch[f.slot];
        self.layout
            .launch(f.kernels.get::<Kernels>(), f.stream, ss, planes, f.geo.bps)?;
        f.read_back_extra(&ss.stats, self.layout.result_bytes())
    }
}

/// speed_chroma for one geometry.
pub(crate) struct Speed {
    images: SpeedImages,
    slots: Slots,
}

impl Speed {
    pub(crate) fn new(
        dev: &Arc<Device>,
        st: &Stream,
        geo: &Geometry,
        p: &SpeedParams,
        slots: Slots,
    ) -> Result<Self, VmafError> {
        let Some((cw, ch)) = geo.format.chroma_size(geo.w, geo.h) else {
            return Err(VmafError::Unsupported(
                "speed_chroma needs chroma planes (input is GRAY)".into(),
            ));
        };
        let layout = SpeedLayout::new(dev, st, (p, Images::Chroma), cw, ch, geo.bpc)
            .map_err(|e| VmafError::TooSmall(format!("{e}")))?;
        Ok(Speed {
            images: SpeedImages::new(layout),
            slots,
        })
    }
}

impl GpuExtractor for Speed {
    fn stage(&self) -> &'static str {
        "speed"
    }

    fn memory(&self) -> &'static str {
        "speed_chroma"
    }

    /// The four images' statistics.
    fn extra_bytes(&self) -> usize {
        self.images.layout.result_bytes()
    }

    fn add_slot(&mut self, dev: &Arc<Device>) -> Result<(), HipError> {
        self.images.add_slot(dev)
    }

    fn slot_bytes(&self) -> usize {
        self.images.slot_bytes()
    }

    /// The four images (U, V of reference and distorted), their statistics
    /// read back into the frame's result.
    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        self.images.run(
            f,
            [f.plane(0, 1), f.plane(1, 1), f.plane(0, 2), f.plane(1, 2)],
        )?;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let l = &self.images.layout;
        let raw: [RawStats; 4] = l.raw_stats(r.extra);
        out.put(self.slots, &frame_scores(&raw, &l.dims, &l.p));
        Ok(())
    }
}

/// speed_temporal for one geometry.
pub(crate) struct SpeedTemporal {
    images: SpeedImages,
    slots: Slots,
    use_ref_diff: bool,
}

impl SpeedTemporal {
    /// The twin for the luma of `geo`; none where the luma is too small
    /// for SpEED's blocks (the CPU twin beside the GPU then says so on
    /// each frame it scores, as on the CPU).
    pub(crate) fn new(
        dev: &Arc<Device>,
        st: &Stream,
        geo: &Geometry,
        (p, use_ref_diff): (&SpeedParams, bool),
        slots: Slots,
    ) -> Result<Option<Self>, HipError> {
        if p.dims(geo.w, geo.h).is_err() {
            return Ok(None);
        }
        let layout = SpeedLayout::new(dev, st, (p, Images::Temporal), geo.w, geo.h, geo.bpc)?;
        Ok(Some(SpeedTemporal {
            images: SpeedImages::new(layout),
            slots,
            use_ref_diff,
        }))
    }
}

impl GpuExtractor for SpeedTemporal {
    fn stage(&self) -> &'static str {
        "speed_temporal"
    }

    /// The two images' statistics.
    fn extra_bytes(&self) -> usize {
        self.images.layout.result_bytes()
    }

    fn add_slot(&mut self, dev: &Arc<Device>) -> Result<(), HipError> {
        self.images.add_slot(dev)
    }

    fn slot_bytes(&self) -> usize {
        self.images.slot_bytes()
    }

    fn frames_back(&self) -> usize {
        1
    }

    /// The frame differences from the frame just before (scored or not),
    /// once that one is uploaded; false for the first frame (score 0).
    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        let Some(prev) = f.earlier[0] else {
            return Ok(false);
        };
        f.stream.wait(prev.uploaded)?;
        let (cur_ref, cur_dis) = (f.plane(0, 0), f.plane(1, 0));
        let dis_now = if self.use_ref_diff { cur_ref } else { cur_dis };
        self.images
            .run(f, [prev.plane(0, 0), cur_ref, prev.plane(1, 0), dis_now])?;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let score = if r.computed {
            let l = &self.images.layout;
            let raw: [RawStats; 2] = l.raw_stats(r.extra);
            temporal_score(&raw, &l.dims, &l.p)
        } else {
            0.0
        };
        out.set(self.slots.at(0), score);
        Ok(())
    }
}
