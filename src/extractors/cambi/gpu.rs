//! CAMBI on the GPU (`cambi.hip`): per picture scored (the
//! distorted one, and the reference with `full_ref`), a range check, the
//! preprocessing and mask, the five scales' c-values, and each scale's
//! top-k sum, exact in integers; the CPU twin (`cpu.rs`)
//! finishes the score. Where a scale's exact sum is too large for libvmaf's
//! double sum to be order-free, that scale is pooled on the host from its
//! c-values, read back.

#![forbid(unsafe_code)]

use crate::core::RawFeatures;
use crate::core::VmafError;
use crate::extractors::Slots;
use crate::extractors::cambi::cpu::{
    self as cambi, CambiParams, CambiScores, CambiSetup, NUM_SCALES, combine_scales, mask_index,
    scale_sizes, topk_count,
};
use crate::hip::module::ArgKind as K;
use crate::hip::twin::{
    Frame, Geometry, GpuExtractor, KernelSet, Modules, Retired, blocks, sig, upload_table,
};
use crate::hip::{Arg, Device, DeviceBuffer, HipError, Kernel, PinnedHostMem, Stream};
use std::sync::Arc;

/// Its kernel files.
pub(crate) const KERNELS: KernelSet = KernelSet {
    sources: &[("cambi.hip", include_str!("cambi.hip"))],
    load: |m, dev, st| Ok(Box::new(Kernels::load(m, dev, st)?)),
};

pub(crate) struct Kernels {
    check8: Kernel,
    check16: Kernel,
    prep8: Kernel,
    prep16: Kernel,
    mask: Kernel,
    scale: Kernel,
    cvalues: Kernel,
    radix_hist: Kernel,
    radix_select: Kernel,
    radix_sum: Kernel,
    radix_close: Kernel,
    /// CAMBI's reciprocal table (f32), device copy.
    recip: DeviceBuffer,
}

impl Kernels {
    pub(crate) fn load(m: &Modules, dev: &Arc<Device>, st: &Stream) -> Result<Self, HipError> {
        use K::{I32, Ptr, U32};
        let c = &m["cambi.hip"];
        let check = [Ptr, I32, I32, Ptr];
        let prep = [Ptr, I32, Ptr, Ptr, I32, I32, I32, I32, Ptr];
        let recip = upload_table(
            dev,
            st,
            &cambi::reciprocal_lut(),
            |v: f32| v.to_le_bytes().to_vec(),
            "CAMBI reciprocal table",
        )?;
        let cvalues = sig("pp iiiii p iiii pp");
        Ok(Kernels {
            check8: c.kernel("cambi_check_8", &check)?,
            check16: c.kernel("cambi_check_16", &check)?,
            prep8: c.kernel("cambi_prep_8", &prep)?,
            prep16: c.kernel("cambi_prep_16", &prep)?,
            mask: c.kernel("cambi_mask", &[Ptr, I32, I32, I32, I32, I32, U32, Ptr])?,
            scale: c.kernel("cambi_scale", &[Ptr, I32, I32, I32, I32, Ptr])?,
            cvalues: c.kernel("cambi_cvalues", &cvalues)?,
            radix_hist: c.kernel("cambi_radix_hist", &[Ptr, Ptr, I32, Ptr, Ptr, Ptr])?,
            radix_select: c.kernel("cambi_radix_select", &[Ptr, I32, Ptr, Ptr])?,
            radix_sum: c.kernel("cambi_radix_sum", &[Ptr, Ptr, Ptr, Ptr, Ptr])?,
            radix_close: c.kernel("cambi_radix_close", &[Ptr, Ptr, Ptr, Ptr])?,
            recip,
        })
    }
}

/// Output tile of `cambi_cvalues` (one block of 256 threads).
const CAMBI_TW: usize = 32;
const CAMBI_TH: usize = 8;

/// u64 slots of one CAMBI picture's results: per scale (exact top-k sum in
/// 2^-24 units, inexact flag), then the out-of-range-sample flag.
const CAMBI_SLOTS: usize = 2 * NUM_SCALES;

/// One picture CAMBI scores (the distorted one, or the reference with `full_ref`).
struct CambiPic {
    /// Encode (or source) size, window, and the five scales' sizes.
    w: usize,
    h: usize,
    window: usize,
    scales: [(usize, usize); NUM_SCALES],
    /// Source rows and columns of the encode-size samples.
    rows: DeviceBuffer,
    cols: DeviceBuffer,
    /// c-values of scale s start at `offsets[s]` (floats).
    offsets: [usize; NUM_SCALES],
    total: usize,
    mask_threshold: u32,
    /// The offsets and the total (i32 x 6), and each scale's top-k count (u32 x 5).
    seg: DeviceBuffer,
    kfirst: DeviceBuffer,
}

/// Stream-wide CAMBI state on the device.
struct CambiLayout {
    pub setup: CambiSetup,
    pics: Vec<CambiPic>,
    tvi: DeviceBuffer,
    src_w: usize,
    src_h: usize,
}

impl CambiLayout {
    fn new(
        dev: &Arc<Device>,
        st: &Stream,
        p: &CambiParams,
        w: usize,
        h: usize,
        bpc: u8,
    ) -> Result<Self, HipError> {
        let setup = p
            .setup(w as u32, h as u32, u32::from(bpc))
            .map_err(HipError::Usage)?;
        let mut pics = Vec::new();
        let sizes = if setup.full_ref {
            vec![(setup.enc, setup.window), (setup.src, setup.src_window)]
        } else {
            vec![(setup.enc, setup.window)]
        };
        for ((pw, ph), window) in sizes {
            let scales = scale_sizes(pw, ph, setup.speedup);
            let mut offsets = [0; NUM_SCALES];
            let mut total = 0;
            for (s, &(sw, sh)) in scales.iter().enumerate() {
                offsets[s] = total;
                total += sw * sh;
            }
            let to_i32 = |v: Vec<usize>| v.into_iter().map(|x| x as i32).collect::<Vec<_>>();
            let mut seg: Vec<i32> = offsets.iter().map(|&o| o as i32).collect();
            seg.push(total as i32);
            let kfirst: Vec<u32> = scales
                .iter()
                .map(|&(sw, sh)| topk_count(sw * sh, setup.topk) as u32)
                .collect();
            pics.push(CambiPic {
                seg: upload_table(
                    dev,
                    st,
                    &seg,
                    |v: i32| v.to_le_bytes().to_vec(),
                    "CAMBI scale offsets",
                )?,
                kfirst: upload_table(
                    dev,
                    st,
                    &kfirst,
                    |v: u32| v.to_le_bytes().to_vec(),
                    "CAMBI top-k counts",
                )?,
                w: pw,
                h: ph,
                window,
                scales,
                rows: upload_table(
                    dev,
                    st,
                    &to_i32(cambi::sample_positions(h, ph)),
                    |v: i32| v.to_le_bytes().to_vec(),
                    "CAMBI rows",
                )?,
                cols: upload_table(
                    dev,
                    st,
                    &to_i32(cambi::sample_positions(w, pw)),
                    |v: i32| v.to_le_bytes().to_vec(),
                    "CAMBI columns",
                )?,
                offsets,
                total,
                mask_threshold: mask_index(pw, ph),
            });
        }
        let tvi: Vec<u8> = setup
            .tvi_for_diff
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let tvi_buf = DeviceBuffer::new(dev, tvi.len().max(4), "CAMBI TVI table")?;
        st.upload_blocking(&tvi_buf, 0, &tvi)?;
        Ok(Self {
            setup,
            pics,
            tvi: tvi_buf,
            src_w: w,
            src_h: h,
        })
    }

    fn slot(&self, dev: &Arc<Device>) -> Result<CambiSlot, HipError> {
        let big = self.pics.iter().map(|p| p.w * p.h).max().unwrap_or(1);
        let (m0w, m0h) = self
            .pics
            .iter()
            .map(|p| p.scales[0])
            .fold((1, 1), |a, b| (a.0.max(b.0), a.1.max(b.1)));
        Ok(CambiSlot {
            img: [
                DeviceBuffer::new(dev, big * 2, "CAMBI image")?,
                DeviceBuffer::new(dev, big * 2, "CAMBI image")?,
            ],
            mask: DeviceBuffer::new(dev, m0w * m0h, "CAMBI mask")?,
            cvals: self
                .pics
                .iter()
                .map(|p| DeviceBuffer::new(dev, p.total * 4, "CAMBI c-values"))
                .collect::<Result<_, _>>()?,
            radix: DeviceBuffer::new(dev, RADIX_BYTES, "CAMBI top-k selection")?,
        })
    }

    /// Queues CAMBI of the distorted picture (and the reference with
    /// `full_ref`). `luma` is (reference, distorted) luma on the device;
    /// results land in `accum` from u64 slot `base`; `bad` is the u64 slot
    /// flagged when a sample exceeds the bit depth.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &self,
        k: &Kernels,
        st: &Stream,
        slot: &CambiSlot,
        luma: (&DeviceBuffer, &DeviceBuffer),
        bps: usize,
        bpc: u8,
        accum: &DeviceBuffer,
        base: usize,
        bad: usize,
    ) -> Result<(), HipError> {
        for (pi, pic) in self.pics.iter().enumerate() {
            let src = if pi == 0 { luma.1 } else { luma.0 };
            if bpc != 8 && bpc < 16 {
                self.launch_range_check(k, st, src, bps, bpc, accum, bad)?;
            }
            self.launch_prepare_and_mask(k, st, slot, pic, src, bps, bpc)?;
            self.launch_scales(k, st, slot, pic, pi)?;
            Self::launch_top_k(k, st, slot, pic, pi, accum, (base + pi * CAMBI_SLOTS) * 8)?;
        }
        Ok(())
    }

    /// Flags, in `accum`'s u64 slot `bad`, a sample of `src` above the bit
    /// depth (the backend turns the flag into an error naming the frame).
    #[allow(clippy::too_many_arguments)]
    fn launch_range_check(
        &self,
        k: &Kernels,
        st: &Stream,
        src: &DeviceBuffer,
        bps: usize,
        bpc: u8,
        accum: &DeviceBuffer,
        bad: usize,
    ) -> Result<(), HipError> {
        let (w, h) = (self.src_w, self.src_h);
        let kern = if bps == 1 { &k.check8 } else { &k.check16 };
        st.launch(
            kern,
            (blocks(w * h), 1, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(src, 0),
                Arg::I32((w * h) as i32),
                Arg::I32(i32::from(bpc)),
                Arg::Buf(accum, bad * 8),
            ],
        )?;
        Ok(())
    }

    /// The picture CAMBI reads (`pic`'s size, depth handling as libvmaf's
    /// preprocessing) into `slot.img[0]`, and its mask at the first scale.
    #[allow(clippy::too_many_arguments)]
    fn launch_prepare_and_mask(
        &self,
        k: &Kernels,
        st: &Stream,
        slot: &CambiSlot,
        pic: &CambiPic,
        src: &DeviceBuffer,
        bps: usize,
        bpc: u8,
    ) -> Result<(), HipError> {
        let s = &self.setup;
        let w = self.src_w;
        let prep = if bps == 1 { &k.prep8 } else { &k.prep16 };
        st.launch(
            prep,
            (blocks(pic.w), pic.h as u32, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(src, 0),
                Arg::I32(w as i32),
                Arg::Buf(&pic.rows, 0),
                Arg::Buf(&pic.cols, 0),
                Arg::I32(pic.w as i32),
                Arg::I32(pic.h as i32),
                Arg::I32(i32::from(bpc)),
                Arg::I32(i32::from(s.enc_bitdepth < 10)),
                Arg::Buf(&slot.img[0], 0),
            ],
        )?;
        let (mw, mh) = pic.scales[0];
        st.launch(
            &k.mask,
            (blocks(mw), mh as u32, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(&slot.img[0], 0),
                Arg::I32(pic.w as i32),
                Arg::I32(pic.h as i32),
                Arg::I32(if s.speedup { 2 } else { 1 }),
                Arg::I32(mw as i32),
                Arg::I32(mh as i32),
                Arg::U32(pic.mask_threshold),
                Arg::Buf(&slot.mask, 0),
            ],
        )?;
        Ok(())
    }

    /// Each of the five scales: decimated into the other image, then its
    /// c-values into `slot.cvals[pi]` at the scale's offset.
    fn launch_scales(
        &self,
        k: &Kernels,
        st: &Stream,
        slot: &CambiSlot,
        pic: &CambiPic,
        pi: usize,
    ) -> Result<(), HipError> {
        let s = &self.setup;
        let (mw, _) = pic.scales[0];
        let mut src_w = pic.w;
        for (sc, &(sw, sh)) in pic.scales.iter().enumerate() {
            let (from, to) = (&slot.img[sc % 2], &slot.img[(sc + 1) % 2]);
            let dec = sc > 0 || s.speedup;
            st.launch(
                &k.scale,
                (blocks(sw), sh as u32, 1),
                (256, 1, 1),
                0,
                &[
                    Arg::Buf(from, 0),
                    Arg::I32(src_w as i32),
                    Arg::I32(i32::from(dec)),
                    Arg::I32(sw as i32),
                    Arg::I32(sh as i32),
                    Arg::Buf(to, 0),
                ],
            )?;
            src_w = sw;
            let coff = pic.offsets[sc] * 4;
            let pad = pic.window >> 1;
            let tile = (CAMBI_TW + 2 * pad) * (CAMBI_TH + 2 * pad) * 2;
            st.launch(
                &k.cvalues,
                (
                    sw.div_ceil(CAMBI_TW) as u32,
                    sh.div_ceil(CAMBI_TH) as u32,
                    1,
                ),
                (256, 1, 1),
                tile as u32,
                &[
                    Arg::Buf(to, 0),
                    Arg::Buf(&slot.mask, 0),
                    Arg::I32(mw as i32),
                    Arg::I32(1 << sc),
                    Arg::I32(sw as i32),
                    Arg::I32(sh as i32),
                    Arg::I32(pad as i32),
                    Arg::Buf(&self.tvi, 0),
                    Arg::I32(s.tvi_for_diff.len() as i32),
                    Arg::I32(i32::from(s.vlt_luma)),
                    Arg::I32(i32::from(s.band_base)),
                    Arg::I32(i32::from(s.band_size)),
                    Arg::Buf(&k.recip, 0),
                    Arg::Buf(&slot.cvals[pi], coff),
                ],
            )?;
        }
        Ok(())
    }

    /// The exact top-k sums of picture `pi`'s c-values per scale, into
    /// `accum` at byte offset `total`.
    fn launch_top_k(
        k: &Kernels,
        st: &Stream,
        slot: &CambiSlot,
        pic: &CambiPic,
        pi: usize,
        accum: &DeviceBuffer,
        total: usize,
    ) -> Result<(), HipError> {
        // Exact top-k sums of the five scales: three radix levels, then
        // the sum above the threshold and the threshold's share.
        let n = pic.total;
        st.memset(&slot.radix, 0, RADIX_BYTES, 0)?;
        for level in 1..=3 {
            st.launch(
                &k.radix_hist,
                (blocks(n), 1, 1),
                (256, 1, 1),
                0,
                &[
                    Arg::Buf(&slot.cvals[pi], 0),
                    Arg::Buf(&pic.seg, 0),
                    Arg::I32(level),
                    Arg::Buf(&slot.radix, RADIX_STATE),
                    Arg::Buf(&slot.radix, RADIX_HIST),
                    Arg::Buf(accum, total),
                ],
            )?;
            st.launch(
                &k.radix_select,
                (NUM_SCALES as u32, 1, 1),
                (256, 1, 1),
                0,
                &[
                    Arg::Buf(&pic.kfirst, 0),
                    Arg::I32(level),
                    Arg::Buf(&slot.radix, RADIX_STATE),
                    Arg::Buf(&slot.radix, RADIX_HIST),
                ],
            )?;
        }
        st.launch(
            &k.radix_sum,
            (blocks(n), 1, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(&slot.cvals[pi], 0),
                Arg::Buf(&pic.seg, 0),
                Arg::Buf(&slot.radix, RADIX_STATE),
                Arg::Buf(accum, total),
                Arg::Buf(&slot.radix, RADIX_ABOVE),
            ],
        )?;
        st.launch(
            &k.radix_close,
            (1, 1, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(&pic.kfirst, 0),
                Arg::Buf(&slot.radix, RADIX_STATE),
                Arg::Buf(&slot.radix, RADIX_ABOVE),
                Arg::Buf(accum, total),
            ],
        )?;
        Ok(())
    }

    /// CAMBI from the read-back sums; a scale whose exact sum is too large
    /// (or not representable) is pooled from its c-values, read back with
    /// `fetch(picture, float offset, count)`.
    fn finish(
        &self,
        sums: &[u64],
        base: usize,
        host_pooling: bool,
        fetch: &mut dyn FnMut(usize, usize, usize) -> Result<Vec<f32>, HipError>,
    ) -> Result<CambiScores, HipError> {
        let s = &self.setup;
        let mut score = [0f64; 2];
        for (pi, pic) in self.pics.iter().enumerate() {
            let mut per_scale = [0f64; NUM_SCALES];
            for (sc, &(sw, sh)) in pic.scales.iter().enumerate() {
                let n = sw * sh;
                let k = topk_count(n, s.topk);
                let total = sums[base + pi * CAMBI_SLOTS + 2 * sc];
                let inexact = sums[base + pi * CAMBI_SLOTS + 2 * sc + 1] != 0;
                per_scale[sc] = if !host_pooling && !inexact && total < (1u64 << 53) {
                    // Every partial sum below 2^29 is exact in double: any
                    // order, libvmaf's included, gives this value.
                    (total as f64 * 2f64.powi(-24)) / k as f64
                } else {
                    let mut c = fetch(pi, pic.offsets[sc], n)?;
                    cambi::spatial_pooling(&mut c, s.topk)
                };
            }
            score[pi] = combine_scales(&per_scale, pic.window);
        }
        let dist = score[0];
        let mut out = CambiScores {
            distorted: dist.min(s.max_val),
            ..Default::default()
        };
        if s.full_ref {
            let src = score[1];
            out.source = Some(src.min(s.max_val));
            out.full_reference = Some((dist - src).max(0.0).min(s.max_val));
        }
        Ok(out)
    }
}

/// Per-slot device memory of CAMBI.
struct CambiSlot {
    img: [DeviceBuffer; 2],
    mask: DeviceBuffer,
    cvals: Vec<DeviceBuffer>,
    radix: DeviceBuffer,
}

/// Layout of [`CambiSlot::radix`]: 5 x 512 histogram bins, 5 counts above
/// the threshold, 5 x 4 selection state words (u32 each).
const RADIX_HIST: usize = 0;
const RADIX_ABOVE: usize = 5 * 512 * 4;
const RADIX_STATE: usize = RADIX_ABOVE + 32;
const RADIX_BYTES: usize = RADIX_STATE + 5 * 4 * 4;

impl CambiSlot {
    /// Blocking read of `n` c-values of picture `pic` from float `offset`
    /// (only after the frame's work completed).
    fn read(
        &self,
        st: &Stream,
        host: &PinnedHostMem,
        pic: usize,
        offset: usize,
        n: usize,
    ) -> Result<Vec<f32>, HipError> {
        st.download(host.shared(), 0, &self.cvals[pic], offset * 4, n * 4)?;
        st.synchronize()?;
        Ok(host.as_ref()[..n * 4]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    /// Floats of the largest picture, for [`CambiSlot::read`]'s host buffer.
    /// Device bytes this slot holds.
    fn device_bytes(&self) -> usize {
        let img: usize = self.img.iter().map(DeviceBuffer::bytes).sum();
        let cvals: usize = self.cvals.iter().map(DeviceBuffer::bytes).sum();
        img + self.mask.bytes() + cvals + self.radix.bytes()
    }

    fn max_floats(&self) -> usize {
        self.cvals.iter().map(|b| b.bytes() / 4).max().unwrap_or(0)
    }
}

/// CAMBI for one geometry: its layout, scratch per slot, and the host
/// memory c-values are read back into when a scale is pooled on the host.
pub(crate) struct Cambi {
    slots: Slots,
    layout: CambiLayout,
    scratch: Vec<CambiSlot>,
    fallback: Option<PinnedHostMem>,
    host_pooling: bool,
}

impl Cambi {
    pub(crate) fn new(
        dev: &Arc<Device>,
        st: &Stream,
        geo: &Geometry,
        p: &CambiParams,
        slots: Slots,
    ) -> Result<Self, VmafError> {
        let layout = CambiLayout::new(dev, st, p, geo.w, geo.h, geo.bpc)
            .map_err(|e| VmafError::TooSmall(format!("{e}")))?;
        Ok(Cambi {
            slots,
            layout,
            scratch: Vec::new(),
            fallback: None,
            host_pooling: false,
        })
    }

    /// The sum flagging a sample above the bit depth.
    fn bad_word(&self) -> usize {
        2 * CAMBI_SLOTS
    }
}

impl GpuExtractor for Cambi {
    fn stage(&self) -> &'static str {
        "cambi"
    }

    fn memory(&self) -> &'static str {
        "CAMBI"
    }

    /// Distorted then reference: per scale (top-k sum, inexact), then the
    /// out-of-range flag.
    fn sum_words(&self) -> usize {
        2 * CAMBI_SLOTS + 1
    }

    fn add_slot(&mut self, dev: &Arc<Device>) -> Result<(), HipError> {
        self.scratch.push(self.layout.slot(dev)?);
        Ok(())
    }

    fn slot_bytes(&self) -> usize {
        self.scratch.first().map_or(0, CambiSlot::device_bytes)
    }

    fn launch(&mut self, f: &Frame<'_>) -> Result<bool, HipError> {
        self.layout.launch(
            f.kernels.get::<Kernels>(),
            f.stream,
            &self.scratch[f.slot],
            (f.plane(0, 0), f.plane(1, 0)),
            f.geo.bps,
            f.geo.bpc,
            f.sums,
            f.sums_at,
            f.sums_at + self.bad_word(),
        )?;
        Ok(true)
    }

    fn finish(&mut self, r: &Retired<'_>, out: &mut RawFeatures) -> Result<(), HipError> {
        let bpc = r.geo.bpc;
        if r.sums[self.bad_word()] != 0 {
            out.error = Some(format!(
                "CAMBI: a luma value exceeds the {bpc}-bit maximum {}",
                (1u32 << bpc) - 1
            ));
            return Ok(());
        }
        let cs = &self.scratch[r.slot];
        if self.fallback.is_none() {
            self.fallback = Some(PinnedHostMem::new(r.stream.device(), cs.max_floats() * 4)?);
        }
        let host = self.fallback.as_ref().expect("just made");
        let mut fetch = |pic: usize, off: usize, n: usize| cs.read(r.stream, host, pic, off, n);
        self.layout
            .finish(r.sums, 0, self.host_pooling, &mut fetch)?
            .write(out, self.slots);
        Ok(())
    }

    fn set_host_pooling(&mut self, on: bool) {
        self.host_pooling = on;
    }
}
