//! Copying the planes of a system-memory frame that the engine reads into
//! pinned memory, on the thread that delivers the frame.
//!
//! Sources that do not take the element's pinned pool (`filesrc !
//! rawvideoparse`: rawvideoparse does not pass the ALLOCATION query on) hand
//! over frames in ordinary memory, which the HIP backend must first copy
//! into pinned staging memory before the GPU can read it. Done by the
//! element's aggregating thread, one thread per element does every input's
//! copy, long after the source wrote the frame. Done instead by the sink
//! pad's buffer probe, on the source's own streaming thread right after it
//! produced the frame, the copies of all inputs run on their own threads
//! (docs/PERFORMANCE.md measures what that gives many pipelines).
//!
//! Only the planes the engine reads are copied. Where that is the luma
//! alone, the frame is rebuilt without a pixel copy beyond it: a buffer of
//! two memories, the pinned copy of every byte before the first chroma
//! plane, then the original buffer's remaining bytes, shared. Its layout is
//! the original's (a video meta says so, for mapping plane by plane), and
//! the engine finds the luma in pinned memory and uploads it in place.
//! Where the chroma is read too (`Plan::reads_chroma`), the whole frame is
//! copied into one pinned block. The
//! rebuilt buffer carries the original (a custom meta, [`original`]), which
//! is what `src` passes on: downstream sees the reference buffer as it came.
//! The pinned block goes back to the element's free list
//! (`pinned_pool::PinnedBlocks`) as soon as the upload is done.
//!
//! `VMAFHIP_COPY_ON_ARRIVAL=0` turns this off (the backend then stages the
//! frames itself), to compare the two.

use super::pinned_pool::PinnedBlocks;
use crate::hip::pinned_owner;
use std::sync::atomic::{AtomicU64, Ordering};

/// The custom meta that marks a rebuilt buffer and holds the original.
const META: &str = "GstVmafHipCopiedOnArrival";

/// Whether frames are copied on arrival (`VMAFHIP_COPY_ON_ARRIVAL`, read once).
pub fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("VMAFHIP_COPY_ON_ARRIVAL").as_deref() != Ok("0"))
}

/// The buffer `buf` was rebuilt from by [`PinnedCopier::copy_in`], if it was.
pub fn original(buf: &gst::BufferRef) -> Option<gst::Buffer> {
    if !gst::meta::CustomMeta::is_registered(META) {
        return None;
    }
    let meta = gst::meta::CustomMeta::from_buffer(buf, META).ok()?;
    meta.structure().get::<gst::Buffer>("original").ok()
}

/// The element's copies on arrival, into its recycled pinned blocks.
pub struct PinnedCopier {
    blocks: PinnedBlocks,
    /// Copy every plane, not only the luma.
    whole: bool,
    copied: AtomicU64,
}

impl PinnedCopier {
    /// `chroma`: the engine reads the chroma planes too.
    pub fn new(blocks: PinnedBlocks, chroma: bool) -> Self {
        if !gst::meta::CustomMeta::is_registered(META) {
            gst::meta::CustomMeta::register_simple(META);
        }
        PinnedCopier {
            blocks,
            whole: chroma,
            copied: AtomicU64::new(0),
        }
    }

    /// Planes this copier moved into pinned memory.
    pub fn copied(&self) -> u64 {
        self.copied.load(Ordering::Relaxed)
    }

    /// `buf` with the planes the engine reads in pinned memory (every byte
    /// before its first chroma plane, or the whole frame), or None where
    /// nothing is gained (frames already in pinned memory, luma-only copies
    /// of layouts where the luma does not come first, frames split over
    /// several memories) or no pinned memory could be had: the buffer then
    /// goes on as it is and the backend stages it.
    pub fn copy_in(&self, buf: &gst::Buffer, info: &gst_video::VideoInfo) -> Option<gst::Buffer> {
        if buf.n_memory() != 1 {
            return None;
        }
        let (offsets, strides): (Vec<usize>, Vec<i32>) = match buf.meta::<gst_video::VideoMeta>() {
            Some(m) => (m.offset().to_vec(), m.stride().to_vec()),
            None => (info.offset().to_vec(), info.stride().to_vec()),
        };
        let planes = info.n_planes() as usize;
        let (split, copied) = if self.whole {
            (buf.size(), planes)
        } else {
            // Everything before the first of the other planes (the whole
            // frame when it has one plane).
            let luma = usize::try_from(strides[0]).ok()? * info.comp_height(0) as usize;
            let split = offsets
                .iter()
                .skip(1)
                .take(planes.saturating_sub(1))
                .copied()
                .min()
                .unwrap_or(buf.size());
            if offsets[0] != 0 || split < luma || split > buf.size() {
                return None;
            }
            (split, 1)
        };
        if split == 0 {
            return None;
        }
        let mem = buf.peek_memory(0);
        let map = mem.map_readable().ok()?;
        if pinned_owner(&map[..split]).is_some() {
            return None;
        }
        let mut lent = self.blocks.lend(split).ok()?;
        crate::core::isa::stream_copy(lent.as_mut(), &map[..split]);
        crate::core::isa::stream_fence();
        drop(map);
        let mut out = gst::Buffer::new();
        {
            let o = out.get_mut().expect("new buffer");
            o.append_memory(gst::Memory::from_slice(lent));
            if split < buf.size() {
                o.append_memory(mem.share(split..));
            }
            buf.copy_into(
                o,
                gst::BufferCopyFlags::FLAGS
                    | gst::BufferCopyFlags::TIMESTAMPS
                    | gst::BufferCopyFlags::META,
                ..,
            )
            .ok()?;
            if o.meta::<gst_video::VideoMeta>().is_none() {
                gst_video::VideoMeta::add_full(
                    o,
                    gst_video::VideoFrameFlags::empty(),
                    info.format(),
                    info.width(),
                    info.height(),
                    &offsets,
                    &strides,
                )
                .ok()?;
            }
            gst::meta::CustomMeta::add(o, META)
                .ok()?
                .mut_structure()
                .set("original", buf.clone());
        }
        self.copied.fetch_add(copied as u64, Ordering::Relaxed);
        Some(out)
    }
}
