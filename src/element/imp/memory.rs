//! What the sink pads take: system memory, pinned host memory the GPU
//! reads in place, and GStreamer's GPU memory of the engine's device.

use super::{CAT, VmafHip};
use crate::element::gpu_input::GpuInputs;
use crate::element::metrics::{Metrics, MetricsServer};
use crate::element::pinned_copy::PinnedCopier;
use crate::element::pinned_pool::PinnedPool;
use crate::element::settings::*;
use crate::element::{Backend, Vendor};
use crate::hip::Device;
use crate::hip::gst_gpu::GpuMemoryKind;
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

    /// Planes of GPU memory from another device or context the sink pads
    /// copied on the GPU since start.
    pub(super) fn copied_on_device(&self) -> u64 {
        self.obj()
            .sink_pads()
            .iter()
            .filter_map(|p| p.downcast_ref::<super::super::VmafHipPad>())
            .map(|p| p.imp().copied_on_device())
            .sum()
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
    pub(crate) fn gpu_input(&self) -> Option<Arc<GpuInputs>> {
        self.gpu_input.lock().unwrap().clone()
    }

    /// The GPU memories of `dev` the sink pads take; None (system memory
    /// only) where GStreamer has none of them here.
    pub(super) fn open_gpu_input(&self, dev: &Arc<Device>) -> Option<Arc<GpuInputs>> {
        let (inputs, missing) = GpuInputs::open(dev);
        for why in &missing {
            gst::info!(CAT, imp = self, "{why}");
        }
        if inputs.is_empty() {
            gst::info!(CAT, imp = self, "system memory input only");
            return None;
        }
        gst::info!(
            CAT,
            imp = self,
            "sink pads also take {} of the engine's device",
            inputs.features()
        );
        Some(Arc::new(inputs))
    }

    /// `gpu_input`, opened from the settings when asked before `start`:
    /// decoders ask for a CUDA context when they open (NULL→READY), before
    /// the element starts. `start` then sets it from the engine's device.
    pub(super) fn gpu_input_for_query(&self) -> Option<Arc<GpuInputs>> {
        if let Some(g) = self.gpu_input() {
            return Some(g);
        }
        if self.state.lock().unwrap().is_some() {
            return None; // started without one: the engine is not on a GPU
        }
        let settings = self.settings.lock().unwrap().clone();
        if settings.backend == Backend::Cpu {
            return None;
        }
        let settings = self.on_shared_device(settings);
        let dev = match vmaf::gpu_device(settings.vendor.hip(), settings.device_id.max(0) as usize)
        {
            Ok(dev) => dev,
            Err(why) => {
                gst::debug!(
                    CAT,
                    imp = self,
                    "no GPU context to offer before start: {why}"
                );
                return None;
            }
        };
        let g = self.open_gpu_input(&dev)?;
        *self.gpu_input.lock().unwrap() = Some(g.clone());
        Some(g)
    }

    /// `settings` with the GPU the engine opens: `vendor` and `device-id`
    /// as set, unless `device-id` was left alone and the pipeline shares a
    /// HIP device (`gst.hip.device` context) of a vendor `vendor` admits:
    /// then that device.
    pub(super) fn on_shared_device(&self, mut settings: Settings) -> Settings {
        let shared = *self.shared_device.lock().unwrap();
        if let Some((vendor, id)) = shared
            && !settings.device_id_set
            && let Some(v) = Vendor::admitted(settings.vendor, vendor)
        {
            settings.vendor = v;
            settings.device_id = id as i32;
        }
        settings
    }

    /// A `gst.hip.device` context given to the element (by the application,
    /// or by a neighbour through the bin): the device it holds becomes the
    /// engine's unless `device-id` is set (`on_shared_device`).
    pub(super) fn take_context(&self, context: &gst::Context) {
        let Some((vendor, id)) = crate::hip::gst_gpu::hip_context_device(context) else {
            return;
        };
        let mut shared = self.shared_device.lock().unwrap();
        if shared.is_none() {
            gst::info!(
                CAT,
                imp = self,
                "the pipeline's HIP device: {vendor:?} {id}"
            );
            *shared = Some((vendor, id));
        }
    }

    /// Asks the neighbours, then the application (`need-context`), for a
    /// HIP device the pipeline already shares, as GstHip's elements do when
    /// they open; an answer arrives through `set_context`.
    pub(super) fn ask_for_shared_device(&self) {
        if self.shared_device.lock().unwrap().is_some()
            || self.settings.lock().unwrap().backend == Backend::Cpu
        {
            return;
        }
        let context_type = GpuMemoryKind::Hip.context_type();
        let obj = self.obj();
        let pads = obj.src_pads().into_iter().chain(obj.sink_pads());
        for pad in pads {
            let mut q = gst::query::Context::new(context_type);
            if pad.peer_query(&mut q)
                && let Some(c) = q.context_owned()
            {
                obj.set_context(&c);
                if self.shared_device.lock().unwrap().is_some() {
                    return;
                }
            }
        }
        let _ = obj.post_message(
            gst::message::NeedContext::builder(context_type)
                .src(&*obj)
                .build(),
        );
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
        self.gpu_input().is_some_and(|g| g.takes(features))
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
        if let gst::QueryViewMut::Context(q) = query.view_mut()
            && GpuMemoryKind::ALL
                .iter()
                .any(|k| k.context_type() == q.context_type())
            && let Some(g) = self.gpu_input_for_query()
            && let Some(kind) = g.answer_context_query(self.obj().upcast_ref(), query)
        {
            gst::debug!(
                CAT,
                obj = pad,
                "answered {} context query",
                kind.context_type()
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
        // GstVideoAggregator answers with what downstream takes, in
        // downstream's memory, intersected with the filter: ask it with
        // the filter's twin in each memory (downstream may take GPU memory
        // only, `… ! vmafhip ! video/x-raw(memory:HIPMemory)`), then offer
        // the caps in each GPU memory the engine can take, first.
        let filter = q.filter_owned();
        let Some(result) = self.parent_caps_any_memory(pad, filter.as_ref()) else {
            return false;
        };
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

    /// GstVideoAggregator's answer to a caps query with `filter` in each
    /// memory (the filter itself when there is none), merged in system
    /// memory; None if it answered none.
    fn parent_caps_any_memory(
        &self,
        pad: &gst_base::AggregatorPad,
        filter: Option<&gst::Caps>,
    ) -> Option<gst::Caps> {
        let system = gst::CapsFeatures::new([gst::CAPS_FEATURE_MEMORY_SYSTEM_MEMORY]);
        let twins: Vec<Option<gst::Caps>> = match filter {
            None => vec![None],
            Some(f) => std::iter::once(gst::CAPS_FEATURE_MEMORY_SYSTEM_MEMORY.as_str())
                .chain(GpuMemoryKind::ALL.map(|k| k.caps_feature()))
                .map(|feature| {
                    let mut twin = f.copy();
                    twin.get_mut()
                        .expect("a copy")
                        .set_features_simple(Some(gst::CapsFeatures::new([feature])));
                    Some(twin)
                })
                .collect(),
        };
        let mut answered = None::<gst::Caps>;
        for twin in twins {
            let mut query = gst::query::Caps::new(twin.as_ref());
            if !self.parent_sink_query(pad, &mut query) {
                continue;
            }
            let mut result = query
                .result_owned()
                .unwrap_or_else(gst::Caps::new_empty)
                .copy();
            result
                .get_mut()
                .expect("a copy")
                .set_features_simple(Some(system.clone()));
            answered
                .get_or_insert_with(gst::Caps::new_empty)
                .merge(result);
        }
        answered
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
        if let Some(kind) = caps.features(0).and_then(|f| {
            GpuMemoryKind::ALL
                .into_iter()
                .find(|k| f.contains(k.caps_feature()))
        }) {
            return self.propose_gpu_pool(pad, query, (&caps, kind));
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

impl VmafHip {
    /// A pool of GStreamer's GPU memory of `kind` on the engine's device
    /// (`GstHipBufferPool`, `GstCudaBufferPool`), offered to upstream that
    /// writes that memory (`hipupload`, `hipconvert`, a decoder): frames
    /// land where the kernels read them.
    fn propose_gpu_pool(
        &self,
        pad: &gst_base::AggregatorPad,
        query: &mut gst::query::Allocation,
        (caps, kind): (&gst::Caps, GpuMemoryKind),
    ) -> Result<(), gst::LoggableError> {
        let Some(gpu) = self.gpu_input().and_then(|g| g.of_kind(kind).cloned()) else {
            return Ok(()); // not ours to read: upstream keeps its own pool
        };
        let (pool, size) = gpu
            .proposed_pool(caps, 0)
            .map_err(|e| gst::loggable_error!(CAT, "{e}"))?;
        query.add_allocation_pool(Some(&pool), size, 0, 0);
        gst::debug!(
            CAT,
            imp = self,
            "proposing a {} pool of {size}-byte buffers on {}",
            kind.caps_feature(),
            pad.name()
        );
        Ok(())
    }
}
