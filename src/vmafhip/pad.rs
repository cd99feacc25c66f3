//! The sink pads: GstVideoAggregator's pads, except that a buffer in GPU
//! memory of the element's own device is mapped for the device (its plane
//! pointers are device addresses) instead of being downloaded to the host.

use gst::glib;

glib::wrapper! {
    /// `ref_sink` and `dist_sink`.
    pub struct VmafHipPad(ObjectSubclass<imp::VmafHipPad>)
        @extends gst_video::VideoAggregatorPad, gst_base::AggregatorPad, gst::Pad, gst::Object;
}

mod imp {
    use crate::hip::gst_gpu;
    use gst::glib;
    use gst::prelude::*;
    use gst::subclass::prelude::*;
    use gst_base::subclass::prelude::*;
    use gst_video::prelude::*;
    use gst_video::subclass::prelude::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[derive(Default)]
    pub struct VmafHipPad {
        /// A warning about GPU memory we cannot read in place went out.
        warned: AtomicBool,
    }

    #[glib::object_subclass]
    impl ObjectSubclass for VmafHipPad {
        const NAME: &'static str = "GstVmafHipPad";
        type Type = super::VmafHipPad;
        type ParentType = gst_video::VideoAggregatorPad;
    }

    impl ObjectImpl for VmafHipPad {}
    impl GstObjectImpl for VmafHipPad {}
    impl PadImpl for VmafHipPad {}
    impl AggregatorPadImpl for VmafHipPad {}

    impl VideoAggregatorPadImpl for VmafHipPad {
        fn prepare_frame(
            &self,
            aggregator: &gst_video::VideoAggregator,
            token: &gst_video::subclass::AggregateFramesToken,
            buffer: &gst::Buffer,
        ) -> Option<gst_video::VideoFrame<gst_video::video_frame::Readable>> {
            let gpu = aggregator
                .downcast_ref::<crate::vmafhip::VmafHip>()
                .and_then(|e| e.imp().gpu_input());
            if let Some(gpu) = gpu {
                let kind = gpu.kind();
                let on_gpu = buffer.n_memory() > 0
                    && buffer
                        .iter_memories()
                        .all(|m| m.is_type(kind.memory_type()));
                if on_gpu {
                    if buffer.iter_memories().all(|m| gpu.owns(m)) {
                        if let Some(info) = self.obj().video_info()
                            && let Some(frame) = gpu.map_frame(buffer, &info)
                        {
                            debug_assert!(gst_gpu::mapped_for_device(&frame));
                            return Some(frame);
                        }
                    } else if !self.warned.swap(true, Ordering::Relaxed) {
                        gst::element_warning!(
                            aggregator,
                            gst::StreamError::Format,
                            (
                                "{}: {} from another {} is downloaded to the host for every frame; let upstream use vmafhip's (it answers the {} context query) for zero-copy input",
                                self.obj().name(),
                                kind.caps_feature(),
                                if kind == gst_gpu::GpuMemoryKind::Cuda {
                                    "CUDA context"
                                } else {
                                    "HIP device"
                                },
                                kind.context_type()
                            ),
                            ["the buffer's memory belongs to a context vmafhip does not run in"]
                        );
                    }
                }
            }
            self.parent_prepare_frame(aggregator, token, buffer)
        }
    }
}
