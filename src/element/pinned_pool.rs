//! A buffer pool of pinned (page-locked) host memory on the element's GPU.
//!
//! `vmafhip` proposes this pool in its answer to the ALLOCATION query on both
//! sink pads when it computes on a GPU. Upstream elements that allocate from
//! downstream pools (videotestsrc, decoders, videoconvert, ...) then write
//! their frames straight into DMA-able memory, and the HIP backend uploads
//! from those buffers in place instead of copying them into its own staging
//! memory first (see `hip::pinned_owner`). Frames from anywhere else are
//! copied into pinned memory by the sink pads as they arrive
//! (`pinned_copy`).
//!
//! Page-locked memory is slow to allocate and to free (the driver
//! serialises both), so the pinned blocks behind the pool's buffers are
//! recycled by [`PinnedBlocks`] rather than freed with their buffer: a pool
//! must discard a returning buffer whose memory is still shared (GstBaseParse
//! in push mode, for one, makes each buffer writable by a copy that shares
//! its memory), and allocating a fresh pinned block for each of those frames
//! held many pipelines at once to a fraction of their rate
//! (docs/history/performance-notebook.md, "Streams per GPU").
//!
//! What a station needs at its start (the frames queued while it opens
//! and aligns: hundreds) is far more than it needs later. The pool and the
//! free list each watch how many of their buffers or blocks stayed idle
//! all through the last [`EPOCH`] returns ([`IdleWatch`]): all but
//! [`SPARE`] of those are let go as they come back, one a return: the
//! pool's buffers discarded and their blocks unpinned, and the free list's
//! blocks unpinned.

use crate::hip::{Device, PinnedHostMem};
use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;
use once_cell::sync::Lazy;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

static CAT: Lazy<gst::DebugCategory> = Lazy::new(|| {
    gst::DebugCategory::new(
        "vmafhippool",
        gst::DebugColorFlags::empty(),
        Some("vmafhip pinned host buffer pool"),
    )
});

/// Returns over which the idle buffers or blocks are watched.
const EPOCH: usize = 150;
/// Idle buffers or blocks kept past what stayed idle all through an epoch.
const SPARE: usize = 8;

/// What stayed idle: the fewest idle at any time over the last [`EPOCH`]
/// returns were not needed then; all but [`SPARE`] of them go, one at each
/// return of the next epoch.
#[derive(Debug, Default)]
pub(crate) struct IdleWatch {
    idle: usize,
    /// The fewest idle this epoch.
    low: usize,
    returns: usize,
    /// Still to let go.
    surplus: usize,
}

impl IdleWatch {
    /// One idle was taken (lent again).
    pub(crate) fn taken(&mut self) {
        self.idle = self.idle.saturating_sub(1);
        self.low = self.low.min(self.idle);
    }

    /// One came back: whether to let it go rather than keep it idle.
    pub(crate) fn returned(&mut self) -> bool {
        self.returns += 1;
        if self.returns >= EPOCH {
            self.surplus = self.low.saturating_sub(SPARE);
            self.returns = 0;
            self.low = self.idle;
        }
        if self.surplus > 0 {
            self.surplus -= 1;
            self.low = self.low.min(self.idle);
            return true;
        }
        self.idle += 1;
        false
    }
}

/// The free blocks of a [`PinnedBlocks`], and what of them stays idle.
#[derive(Default)]
struct Free {
    blocks: Vec<PinnedHostMem>,
    watch: IdleWatch,
    /// Blocks to free as they come back rather than keep: those of the
    /// buffers a pool discarded as idle ([`PinnedBlocks::let_go_next`]).
    let_go: usize,
}

/// Pinned host blocks of one device, recycled: a block lent out goes back
/// to the free list when the last reference to the memory holding it is
/// dropped, and is lent again before any new block is allocated. The free
/// list holds at most what was out at once (frames queued on the pads, in
/// the pools, with their uploads under way), less what stayed idle
/// ([`IdleWatch`]).
#[derive(Clone)]
pub struct PinnedBlocks {
    device: Arc<Device>,
    free: Arc<Mutex<Free>>,
    allocated: Arc<AtomicUsize>,
}

/// `len` bytes of a block from [`PinnedBlocks`], back to its free list when dropped.
pub struct Lent {
    mem: Option<PinnedHostMem>,
    len: usize,
    home: Arc<Mutex<Free>>,
}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        &self.mem.as_ref().expect("lent block").as_ref()[..self.len]
    }
}

impl AsMut<[u8]> for Lent {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.mem.as_mut().expect("lent block").as_mut()[..self.len]
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        let Some(mem) = self.mem.take() else {
            return;
        };
        let unneeded = {
            let mut free = self.home.lock().unwrap();
            if free.let_go > 0 {
                free.let_go -= 1;
                Some(mem)
            } else if free.watch.returned() {
                Some(mem)
            } else {
                free.blocks.push(mem);
                None
            }
        };
        if unneeded.is_some() {
            gst::debug!(CAT, "an idle pinned block freed");
        }
    }
}

impl PinnedBlocks {
    pub fn new(device: Arc<Device>) -> Self {
        PinnedBlocks {
            device,
            free: Arc::default(),
            allocated: Arc::default(),
        }
    }

    /// The next block to come back is freed, not kept: a pool discards
    /// the buffer that holds it as idle (its block would only stay idle on
    /// the free list, which sees no traffic once the pool's buffers go
    /// round).
    pub fn let_go_next(&self) {
        self.free.lock().unwrap().let_go += 1;
    }

    /// How many blocks were allocated (page-locked) so far; the rest of
    /// what was lent was recycled.
    pub fn allocated(&self) -> usize {
        self.allocated.load(Ordering::Relaxed)
    }

    /// `len` bytes (at least 1) of pinned memory: a free block large enough,
    /// or a new one; the error says why none could be allocated.
    pub fn lend(&self, len: usize) -> Result<Lent, crate::hip::HipError> {
        let (reuse, free_blocks) = {
            let mut free = self.free.lock().unwrap();
            let found = free
                .blocks
                .iter()
                .position(|m| m.as_ref().len() >= len)
                .map(|i| free.blocks.swap_remove(i));
            if found.is_some() {
                free.watch.taken();
            }
            (found, free.blocks.len())
        };
        let mem = match reuse {
            Some(m) => m,
            None => {
                let m = PinnedHostMem::new(&self.device, len)?;
                let n = self.allocated.fetch_add(1, Ordering::Relaxed) + 1;
                gst::debug!(
                    CAT,
                    "pinned block {n} of {len} bytes allocated ({free_blocks} free, all smaller)"
                );
                m
            }
        };
        Ok(Lent {
            mem: Some(mem),
            len,
            home: self.free.clone(),
        })
    }
}

glib::wrapper! {
    pub struct PinnedPool(ObjectSubclass<imp::PinnedPool>) @extends gst::BufferPool, gst::Object;
}

impl PinnedPool {
    /// A pool whose buffers are pinned host memory from `blocks`.
    pub fn new(blocks: PinnedBlocks) -> Self {
        let pool: Self = glib::Object::new();
        *pool.imp().blocks.lock().unwrap() = Some(blocks);
        pool
    }

    /// How many buffers the pool has allocated so far (each one pinned host
    /// memory; a pool in steady state reuses them instead).
    pub fn allocated(&self) -> usize {
        self.imp().allocated.load(Ordering::Relaxed)
    }
}

mod imp {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        /// Whether this thread's acquire allocated its buffer (the pool
        /// calls `alloc_buffer` on the acquiring thread): exact when
        /// several threads acquire at once, where a shared count is not.
        static ALLOCATED_HERE: Cell<bool> = const { Cell::new(false) };
    }

    #[derive(Default)]
    struct Config {
        info: Option<gst_video::VideoInfo>,
        video_meta: bool,
    }

    #[derive(Default)]
    pub struct PinnedPool {
        pub(super) blocks: Mutex<Option<PinnedBlocks>>,
        config: Mutex<Config>,
        pub(super) allocated: AtomicUsize,
        /// The buffers idle in the pool's queue.
        idle: Mutex<IdleWatch>,
    }

    #[glib::object_subclass]
    impl ObjectSubclass for PinnedPool {
        const NAME: &'static str = "GstVmafHipPinnedPool";
        type Type = super::PinnedPool;
        type ParentType = gst::BufferPool;
    }

    impl ObjectImpl for PinnedPool {}
    impl GstObjectImpl for PinnedPool {}

    impl BufferPoolImpl for PinnedPool {
        fn options() -> &'static [&'static str] {
            static OPTIONS: [&str; 1] = ["GstBufferPoolOptionVideoMeta"];
            &OPTIONS
        }

        fn set_config(&self, config: &mut gst::BufferPoolConfigRef) -> bool {
            let Some((Some(caps), size, _min, _max)) = config.params() else {
                gst::warning!(CAT, imp = self, "configuration without caps");
                return false;
            };
            let info = match gst_video::VideoInfo::from_caps(&caps) {
                Ok(info) => info,
                Err(_) => {
                    gst::warning!(CAT, imp = self, "caps are not raw video: {caps}");
                    return false;
                }
            };
            if (size as usize) < info.size() {
                gst::warning!(
                    CAT,
                    imp = self,
                    "buffer size {size} is smaller than a {} frame ({} bytes)",
                    info.format(),
                    info.size()
                );
                return false;
            }
            let video_meta = config.has_option("GstBufferPoolOptionVideoMeta");
            *self.config.lock().unwrap() = Config {
                info: Some(info),
                video_meta,
            };
            self.parent_set_config(config)
        }

        fn acquire_buffer(
            &self,
            params: Option<&gst::BufferPoolAcquireParams>,
        ) -> Result<gst::Buffer, gst::FlowError> {
            ALLOCATED_HERE.set(false);
            let buffer = self.parent_acquire_buffer(params)?;
            if !ALLOCATED_HERE.replace(false) {
                self.idle.lock().unwrap().taken();
            }
            Ok(buffer)
        }

        /// A buffer back: kept for the next frame, or discarded with its
        /// block when buffers stayed idle ([`IdleWatch`]).
        fn release_buffer(&self, mut buffer: gst::Buffer) {
            if self.idle.lock().unwrap().returned()
                && let Some(b) = buffer.get_mut()
            {
                // GstBufferPool frees a returning buffer so marked; its
                // block is freed too.
                b.set_flags(gst::BufferFlags::TAG_MEMORY);
                if let Some(blocks) = self.blocks.lock().unwrap().as_ref() {
                    blocks.let_go_next();
                }
                gst::debug!(CAT, imp = self, "an idle pinned buffer discarded");
            }
            self.parent_release_buffer(buffer);
        }

        fn alloc_buffer(
            &self,
            _params: Option<&gst::BufferPoolAcquireParams>,
        ) -> Result<gst::Buffer, gst::FlowError> {
            let (info, video_meta) = {
                let c = self.config.lock().unwrap();
                (
                    c.info.clone().ok_or(gst::FlowError::NotNegotiated)?,
                    c.video_meta,
                )
            };
            let blocks = self
                .blocks
                .lock()
                .unwrap()
                .clone()
                .ok_or(gst::FlowError::NotNegotiated)?;
            let size = self
                .obj()
                .config()
                .params()
                .map_or(info.size(), |(_, size, _, _)| {
                    (size as usize).max(info.size())
                });
            let mem = blocks.lend(size).map_err(|e| {
                gst::error!(CAT, imp = self, "pinned host buffer of {size} bytes: {e}");
                gst::FlowError::Error
            })?;
            let mut buffer = gst::Buffer::from_mut_slice(mem);
            buffer.get_mut().unwrap().set_size(info.size());
            if video_meta {
                gst_video::VideoMeta::add_full(
                    buffer.get_mut().unwrap(),
                    gst_video::VideoFrameFlags::empty(),
                    info.format(),
                    info.width(),
                    info.height(),
                    info.offset(),
                    info.stride(),
                )
                .map_err(|_| gst::FlowError::Error)?;
            }
            let n = self.allocated.fetch_add(1, Ordering::Relaxed) + 1;
            ALLOCATED_HERE.set(true);
            gst::debug!(CAT, imp = self, "pinned buffer {n} of {size} bytes");
            Ok(buffer)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A station's start: 255 frames out at once, all back; then two at a
    /// time for a few epochs. Returns how many stay idle after each epoch.
    fn idle_after_epochs(epochs: usize) -> Vec<usize> {
        let mut w = IdleWatch::default();
        let mut idle = 0usize;
        let mut out = Vec::new();
        // 255 made new (none idle to take), then back.
        for _ in 0..255 {
            if !w.returned() {
                idle += 1;
            }
        }
        for _ in 0..epochs {
            for _ in 0..EPOCH / 2 {
                for _ in 0..2 {
                    if idle > 0 {
                        idle -= 1;
                        w.taken();
                    }
                }
                for _ in 0..2 {
                    if !w.returned() {
                        idle += 1;
                    }
                }
            }
            out.push(idle);
        }
        out
    }

    #[test]
    fn what_stays_idle_goes_but_the_spare() {
        let idle = idle_after_epochs(4);
        println!("idle after each epoch: {idle:?}");
        // The start's backlog stays through the epoch it came back in and
        // goes in the next, one at each return; what the steady use needs,
        // and the spare, stay.
        assert!(idle[0] > 100, "{idle:?}");
        assert_eq!(idle[1..], [SPARE + 2; 3]);
    }

    #[test]
    fn buffers_all_in_use_are_never_let_go() {
        let mut w = IdleWatch::default();
        for _ in 0..10 * EPOCH {
            // Each back and taken again at once: never idle long.
            assert!(!w.returned());
            w.taken();
        }
    }
}
