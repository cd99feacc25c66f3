//! What the sink pads take: system memory, pinned host memory the GPU
//! reads in place, and GStreamer's GPU memory of the engine's device.

use super::{CAT, VmafHip};
use crate::element::Backend;
use crate::element::metrics::{Metrics, MetricsServer};
use crate::element::pinned_copy::PinnedCopier;
use crate::element::pinned_pool::PinnedPool;
use crate::element::settings::*;
use crate::hip::gst_gpu::{GpuMemoryKind, GstGpu};
use crate::vmaf;
use gst::prelude::*;
use gst::subclass::prelude::*;
use gst_base::subclass::prelude::*;
use std::sync::Arc;

impl VmafHip {
    /// The metrics endpoint of `metrics-address`, started: the metrics the
    /// renditions feed, or None without one. An address it cannot listen
    /// on fails the start.
    pub(super) fn serve_metrics(
        &self,
        settings: &Settings,
    ) -> Result<Option<Metrics>, gst::ErrorMessage> {
        let Some(address) = settings.metrics_address.as_deref() else {
            return Ok(None);
        };
        let metrics = Metrics::default();
        let server = MetricsServer::start(address, metrics.clone()).map_err(|e| {
            gst::error_msg!(gst::ResourceError::OpenRead, ("{e}"), ["metrics-address"])
        })?;
        gst::info!(CAT, imp = self, "metrics at {}", server.url);
        *self.metrics.lock().unwrap() = Some((metrics.clone(), server));
        Ok(Some(metrics))
    }

    /// Planes the sink pads copied into pinned memory since start.
    pub(super) fn copied_on_arrival(&self) -> u64 {
        self.pinned_copier().map_or(0, |c| c.copied())
    }

    /// See `copier`; read by the sink pads' probe for every buffer.
    pub(crate) fn pinned_copier(&self) -> Option<Arc<PinnedCopier>> {
        self.copier.lock().unwrap().clone()
    }

    /// See `gpu_input`; read by the sink pads for every buffer.
    pub(crate) fn gpu_input(&self) -> Option<Arc<GstGpu>> {
        self.gpu_input.lock().unwrap().clone()
    }

    /// `gpu_input`, opened from the settings when asked before `start`:
    /// decoders ask for a CUDA context when they open (NULL→READY), before
    /// the element starts. `start` then sets it from the engine's device.
    pub(super) fn gpu_input_for_query(&self) -> Option<Arc<GstGpu>> {
        if let Some(g) = self.gpu_input() {
            return Some(g);
        }
        if self.state.lock().unwrap().is_some() {
            return None; // started without one: the engine is not on a GPU
        }
        let (backend, vendor, device_id) = {
            let s = self.settings.lock().unwrap();
            (s.backend, s.vendor, s.device_id)
        };
        if backend == Backend::Cpu {
            return None;
        }
        let g = match vmaf::gpu_device(vendor.hip(), device_id.max(0) as usize)
            .and_then(|dev| GstGpu::for_device(&dev))
        {
            Ok(g) => g,
            Err(why) => {
                gst::debug!(
                    CAT,
                    imp = self,
                    "no GPU context to offer before start: {why}"
                );
                return None;
            }
        };
        *self.gpu_input.lock().unwrap() = Some(g.clone());
        Some(g)
    }

    /// Whether the sink pads take buffers whose caps carry `features`:
    /// system memory always; GPU memory of the engine's device once started
    /// with it readable in place; before start (linking), GPU memory unless
    /// the backend is the CPU, so that `cudaupload ! vmafhip` links and the
    /// start decides.
    pub(super) fn takes_features(&self, features: Option<&gst::CapsFeaturesRef>) -> bool {
        let Some(features) = features.filter(|f| !f.is_any() && !f.is_empty()) else {
            return true;
        };
        if features.contains(gst::CAPS_FEATURE_MEMORY_SYSTEM_MEMORY) {
            return true;
        }
        if self.state.lock().unwrap().is_none() {
            return self.settings.lock().unwrap().backend != Backend::Cpu
                && GpuMemoryKind::ALL
                    .iter()
                    .any(|k| features.contains(k.caps_feature()));
        }
        self.gpu_input()
            .is_some_and(|g| features.contains(g.kind().caps_feature()))
    }

    /// `caps` without the structures whose memory the sink pads cannot
    /// take, GPU memory first: upstream elements that can give either (a
    /// decoder, `cudaupload`) pick the first, and GPU memory is read in place.
    pub(super) fn filter_caps(&self, caps: &gst::Caps) -> gst::Caps {
        let mut out = gst::Caps::new_empty();
        {
            let out = out.get_mut().expect("new caps");
            for gpu_pass in [true, false] {
                for (s, f) in caps.iter_with_features() {
                    let gpu = !f.is_any()
                        && !f.is_empty()
                        && !f.contains(gst::CAPS_FEATURE_MEMORY_SYSTEM_MEMORY);
                    if gpu == gpu_pass && self.takes_features(Some(f)) {
                        out.append_structure_full(s.to_owned(), Some(f.to_owned()));
                    }
                }
            }
        }
        out
    }
}

impl VmafHip {
    /// The ACCEPT_CAPS query. GstVideoAggregator accepts only the output's
    /// current size on its (non-converting) sink pads, which would refuse a
    /// mid-stream size change. Any caps of the pad template are fine here:
    /// the two pads are compared when frames arrive (`check_caps`).
    pub(super) fn accept_caps(
        &self,
        pad: &gst_base::AggregatorPad,
        q: &mut gst::query::AcceptCaps,
    ) {
        let caps = q.caps_owned();
        let memory_ok = caps
            .iter_with_features()
            .all(|(_, f)| self.takes_features(Some(f)));
        q.set_result(memory_ok && caps.is_subset(&pad.pad_template_caps()));
        if !memory_ok && caps.is_fixed() {
            // Only a caps filter forces GPU memory the caps query did not offer.
            let why = match (&self.gpu_input(), self.state.lock().unwrap().as_ref()) {
                (_, Some(st)) if st.device.is_none() => {
                    format!("the engine runs on the CPU ({})", st.backend)
                }
                _ => "GStreamer's library for this GPU's memory (libgstcuda-1.0 from gst-plugins-bad for CUDA, libgsthip-1.0 for HIP) is not usable here, or the memory is another vendor's".to_string(),
            };
            gst::element_imp_error!(
                self,
                gst::CoreError::Negotiation,
                (
                    "{}: {} cannot be taken: {why}; give vmafhip system memory (cudadownload), or run it with backend=hip on that GPU",
                    pad.name(),
                    caps.features(0).map_or_else(String::new, |f| f.to_string())
                ),
                ["caps {caps}"]
            );
        }
    }

    /// The CONTEXT query: upstream GPU elements ask for a context, and get
    /// ours, so that they allocate where the kernels read.
    pub(super) fn answer_context(
        &self,
        pad: &gst_base::AggregatorPad,
        query: &mut gst::QueryRef,
    ) -> bool {
        // allocate where the kernels read.
        if let gst::QueryViewMut::Context(q) = query.view_mut()
            && GpuMemoryKind::ALL
                .iter()
                .any(|k| k.context_type() == q.context_type())
            && let Some(g) = self.gpu_input_for_query()
            && g.answer_context_query(self.obj().upcast_ref(), query)
        {
            gst::debug!(
                CAT,
                obj = pad,
                "answered {} context query",
                g.kind().context_type()
            );
            return true;
        }
        false
    }

    /// The CAPS query. GstVideoAggregator answers in system memory only: it
    /// is asked with the filter's system-memory twin, and the same caps are
    /// offered in each GPU memory the engine can take, first.
    pub(super) fn answer_caps(
        &self,
        pad: &gst_base::AggregatorPad,
        q: &mut gst::query::Caps,
    ) -> bool {
        // GstVideoAggregator answers in system memory only: ask it with
        // the filter's system-memory twin, then offer the same caps in
        // each GPU memory the engine can take, first.
        let filter = q.filter_owned();
        let mut sys_query =
            gst::query::Caps::new(
                filter
                    .as_ref()
                    .map(|f| {
                        let mut f = f.copy();
                        f.get_mut().expect("a copy").set_features_simple(Some(
                            gst::CapsFeatures::new([gst::CAPS_FEATURE_MEMORY_SYSTEM_MEMORY]),
                        ));
                        f
                    })
                    .as_ref(),
            );
        if !self.parent_sink_query(pad, &mut sys_query) {
            return false;
        }
        let result = sys_query
            .result_owned()
            .unwrap_or_else(gst::Caps::new_empty);
        let mut caps = gst::Caps::new_empty();
        for kind in GpuMemoryKind::ALL {
            let mut gpu = result.copy();
            gpu.get_mut()
                .expect("a copy")
                .set_features_simple(Some(gst::CapsFeatures::new([kind.caps_feature()])));
            caps.merge(gpu);
        }
        caps.merge(result);
        let mut caps = self.filter_caps(&caps);
        if let Some(filter) = filter {
            caps = filter.intersect_with_mode(&caps, gst::CapsIntersectMode::First);
        }
        gst::log!(CAT, obj = pad, "caps query answer {caps}");
        q.set_result(&caps);
        true
    }

    /// A pool of pinned host memory offered upstream when the engine
    /// computes on a GPU and upstream writes system memory.
    pub(super) fn propose_pinned_pool(
        &self,
        pad: &gst_base::AggregatorPad,
        query: &mut gst::query::Allocation,
    ) -> Result<(), gst::LoggableError> {
        let blocks = self.blocks.lock().unwrap().clone();
        let (Some(blocks), (Some(caps), true)) = (blocks, query.get_owned()) else {
            // On the CPU, or upstream asked without caps: its own memory is as good.
            return Ok(());
        };
        if caps
            .features(0)
            .is_some_and(|f| !f.contains(gst::CAPS_FEATURE_MEMORY_SYSTEM_MEMORY) && !f.is_empty())
        {
            // GPU memory: upstream allocates it in the context we gave it.
            return Ok(());
        }
        let info = gst_video::VideoInfo::from_caps(&caps).map_err(|_| {
            gst::loggable_error!(CAT, "ALLOCATION query with non-video caps {caps}")
        })?;
        // Upstream writes frames into pinned host memory, which the GPU
        // reads in place; the pool grows as far as the backend's ring needs.
        let pool = PinnedPool::new(blocks);
        let mut config = pool.config();
        config.set_params(Some(&caps), info.size() as u32, 0, 0);
        config.add_option("GstBufferPoolOptionVideoMeta");
        pool.set_config(config)
            .map_err(|e| gst::loggable_error!(CAT, "pinned pool configuration: {e}"))?;
        query.add_allocation_pool(Some(&pool), info.size() as u32, 0, 0);
        gst::debug!(
            CAT,
            imp = self,
            "proposing pinned host buffers of {} bytes on {}",
            info.size(),
            pad.name()
        );
        Ok(())
    }
}
