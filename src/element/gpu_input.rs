//! The GPU memories the sink pads take: GStreamer's memories of the
//! engine's device whose library is present here (`hip::gst_gpu`):
//! `memory:CUDAMemory` (nvcodec) and `memory:HIPMemory` (GstHip) on
//! NVIDIA, `memory:HIPMemory` on AMD.

use crate::hip::Device;
use crate::hip::gst_gpu::{GpuMemoryKind, GstGpu};
use gst_video::prelude::*;
use std::sync::Arc;

/// GStreamer's GPU memories of one device that the element reads in place.
pub(crate) struct GpuInputs(Vec<Arc<GstGpu>>);

impl GpuInputs {
    /// Every memory GStreamer has for `dev` here, and for each one it does
    /// not have, why.
    pub(crate) fn open(dev: &Arc<Device>) -> (GpuInputs, Vec<String>) {
        let mut found = Vec::new();
        let mut missing = Vec::new();
        for &kind in GpuMemoryKind::for_vendor(dev.runtime().vendor()) {
            match GstGpu::for_device(dev, kind) {
                Ok(g) => found.push(g),
                Err(why) => missing.push(format!("no {}: {why}", kind.caps_feature())),
            }
        }
        (GpuInputs(found), missing)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The memories, as their caps features: "memory:CUDAMemory,memory:HIPMemory".
    pub(crate) fn features(&self) -> String {
        let names: Vec<&str> = self.0.iter().map(|g| g.kind().caps_feature()).collect();
        names.join(",")
    }

    /// Whether caps with `features` are in one of these memories.
    pub(crate) fn takes(&self, features: &gst::CapsFeaturesRef) -> bool {
        self.0
            .iter()
            .any(|g| features.contains(g.kind().caps_feature()))
    }

    /// The memory of `kind`, where present.
    pub(crate) fn of_kind(&self, kind: GpuMemoryKind) -> Option<&Arc<GstGpu>> {
        self.0.iter().find(|g| g.kind() == kind)
    }

    /// The memory every memory of `buffer` is of (one at least), where it
    /// is one of these, whatever device it was allocated for.
    pub(crate) fn of_buffer(&self, buffer: &gst::BufferRef) -> Option<&Arc<GstGpu>> {
        (buffer.n_memory() > 0)
            .then(|| {
                self.0.iter().find(|g| {
                    buffer
                        .iter_memories()
                        .all(|m| m.is_type(g.kind().memory_type()))
                })
            })
            .flatten()
    }

    /// `buffer` mapped for the device when every memory of it is ours
    /// (one memory, allocated for the engine's device); None otherwise.
    pub(crate) fn map_owned(
        &self,
        buffer: &gst::Buffer,
        info: &gst_video::VideoInfo,
    ) -> Option<gst_video::VideoFrame<gst_video::video_frame::Readable>> {
        self.of_buffer(buffer)?.map_owned(buffer, info)
    }

    /// Rows of plane `plane` of a frame mapped for the device, read to the
    /// host ([`GstGpu::read_rows`]).
    pub(crate) fn read_rows(
        &self,
        frame: &impl VideoFrameExt,
        plane: usize,
        rows: (usize, usize),
        width_bytes: usize,
    ) -> Result<Vec<u8>, String> {
        self.0
            .first()
            .ok_or("no GPU memory is taken")?
            .read_rows(frame, plane, rows, width_bytes)
    }

    /// Answers upstream's context query (`gst.cuda.context`,
    /// `gst.hip.device`) with the engine's device: the kind answered.
    pub(crate) fn answer_context_query(
        &self,
        element: &gst::Element,
        query: &mut gst::QueryRef,
    ) -> Option<GpuMemoryKind> {
        self.0
            .iter()
            .find(|g| g.answer_context_query(element, query))
            .map(|g| g.kind())
    }
}
