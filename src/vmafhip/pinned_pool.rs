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

use crate::hip::{Device, PinnedHostMem};
use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

glib::wrapper! {
    pub struct PinnedPool(ObjectSubclass<imp::PinnedPool>) @extends gst::BufferPool, gst::Object;
}

impl PinnedPool {
    /// A pool whose buffers are pinned host memory of `device`.
    pub fn new(device: Arc<Device>) -> Self {
        let pool: Self = glib::Object::new();
        *pool.imp().device.lock().unwrap() = Some(device);
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
    use once_cell::sync::Lazy;

    static CAT: Lazy<gst::DebugCategory> = Lazy::new(|| {
        gst::DebugCategory::new(
            "vmafhippool",
            gst::DebugColorFlags::empty(),
            Some("vmafhip pinned host buffer pool"),
        )
    });

    #[derive(Default)]
    struct Config {
        info: Option<gst_video::VideoInfo>,
        video_meta: bool,
    }

    #[derive(Default)]
    pub struct PinnedPool {
        pub(super) device: Mutex<Option<Arc<Device>>>,
        config: Mutex<Config>,
        pub(super) allocated: AtomicUsize,
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
            let device = self
                .device
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
            let mem = PinnedHostMem::new(&device, size).map_err(|e| {
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
            gst::debug!(CAT, imp = self, "pinned buffer {n} of {size} bytes");
            Ok(buffer)
        }
    }
}
