//! GStreamer's GPU memory, read where it lies: `memory:CUDAMemory` from
//! nvcodec's `libgstcuda-1.0` (GStreamer 1.22+) on NVIDIA, and
//! `memory:HIPMemory` from `libgsthip-1.0` (the hip library, public since
//! GStreamer 1.28) on either of its vendors, AMD and NVIDIA. Both libraries
//! are opened at run time, like the GPU runtimes themselves, so the plugin
//! links neither and still loads where they are missing; the element then
//! offers system memory only.
//!
//! What the element needs of them:
//! - a GStreamer object for *our* device: a `GstCudaContext` wrapping the
//!   primary CUDA context our kernels run in, or a `GstHipDevice` of our
//!   vendor and ordinal (on NVIDIA, GstHip's memory lives in the same
//!   primary context), to answer upstream's context query
//!   (`gst.cuda.context`, `gst.hip.device`) so that it allocates in memory
//!   we can read;
//! - whether a buffer's memory belongs to that context/device;
//! - a video-frame mapping with the library's device map flag, whose plane
//!   pointers are device addresses (no download);
//! - a buffer pool of that memory on our device, proposed upstream.

use super::device::{Device, Stream};
use glib::translate::IntoGlib;
use gst_video::prelude::*;
use libloading::Library;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::{Arc, Mutex};

/// `GST_MAP_FLAG_LAST << 1`: `GST_MAP_CUDA` (gstcudamemory.h) and
/// `GST_MAP_HIP` (gsthipmemory.h) have this one value.
const GST_MAP_DEVICE: c_uint = (gst::ffi::GST_MAP_FLAG_LAST as c_uint) << 1;
/// `GST_HIP_VENDOR_AMD` and `GST_HIP_VENDOR_NVIDIA` (gsthip-enums.h).
const GST_HIP_VENDOR_AMD: c_int = 1;
const GST_HIP_VENDOR_NVIDIA: c_int = 2;

/// GstHip's vendor number for a device of ours.
fn hip_vendor(vendor: super::Vendor) -> c_int {
    match vendor {
        super::Vendor::Amd => GST_HIP_VENDOR_AMD,
        _ => GST_HIP_VENDOR_NVIDIA,
    }
}

/// Which of GStreamer's GPU memories.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuMemoryKind {
    Cuda,
    Hip,
}

impl GpuMemoryKind {
    pub const ALL: [GpuMemoryKind; 2] = [GpuMemoryKind::Cuda, GpuMemoryKind::Hip];

    /// The caps feature of buffers in this memory.
    pub fn caps_feature(self) -> &'static str {
        match self {
            GpuMemoryKind::Cuda => "memory:CUDAMemory",
            GpuMemoryKind::Hip => "memory:HIPMemory",
        }
    }

    /// The allocator's memory type (`gst_memory_is_type`).
    pub fn memory_type(self) -> &'static str {
        match self {
            GpuMemoryKind::Cuda => "gst.cuda.memory",
            GpuMemoryKind::Hip => "HIPMemory",
        }
    }

    /// The memories GStreamer gives for a device of `vendor`: GstHip's on
    /// both, nvcodec's CUDA memory on NVIDIA too (first: the one 1.22 has).
    pub fn for_vendor(vendor: super::Vendor) -> &'static [GpuMemoryKind] {
        match vendor {
            super::Vendor::Amd => &[GpuMemoryKind::Hip],
            _ => &GpuMemoryKind::ALL,
        }
    }

    /// The context type upstream elements query for.
    pub fn context_type(self) -> &'static str {
        match self {
            GpuMemoryKind::Cuda => "gst.cuda.context",
            GpuMemoryKind::Hip => "gst.hip.device",
        }
    }

    fn library(self) -> &'static str {
        match self {
            GpuMemoryKind::Cuda => "libgstcuda-1.0.so.0",
            GpuMemoryKind::Hip => "libgsthip-1.0.so.0",
        }
    }
}

type HandleQuery = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_void) -> c_int;
type ObjectFn = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type MemoryFn = unsafe extern "C" fn(*mut c_void);
type UintFn = unsafe extern "C" fn(*mut c_void) -> c_uint;
type IntFn = unsafe extern "C" fn(*mut c_void) -> c_int;

/// The public head of `GstCudaMemory` (gstcudamemory.h, 1.22–1.28) and of
/// `GstHipMemory` (gsthipmemory.h): the memory, then the context or device
/// object it was allocated for, then its layout.
#[repr(C)]
struct GpuMemoryHead {
    mem: gst::ffi::GstMemory,
    owner: *mut c_void,
    info: gst_video::ffi::GstVideoInfo,
}

/// GStreamer's GPU library for one opened device, and that device's object.
pub struct GstGpu {
    kind: GpuMemoryKind,
    /// `GstCudaContext*` wrapping our context, or `GstHipDevice*` of our
    /// vendor and ordinal: one reference, dropped with `self`.
    object: *mut c_void,
    /// How a memory's context or device is known to be ours (`owns`).
    owner: Owner,
    handle_query: HandleQuery,
    /// Waits for the producer's stream: `gst_hip_memory_sync`, and
    /// `gst_cuda_memory_sync` where the library has it (1.24+).
    sync: Option<MemoryFn>,
    /// `gst_cuda_buffer_pool_new` or `gst_hip_buffer_pool_new`: pools of
    /// this memory on our device.
    new_pool: ObjectFn,
    dev: Arc<Device>,
    /// The stream small reads to the host and copies between devices go
    /// through (made on first use: `on_stream`).
    reader: Mutex<Option<Stream>>,
    _lib: Library,
}

/// What a memory of ours was allocated for, and how to read that off the
/// memory's context or device object.
enum Owner {
    /// `gst_cuda_context_get_handle` of the memory's `GstCudaContext` is
    /// `context`, the CUDA context our kernels run in.
    CudaContext {
        handle: ObjectFn,
        context: *mut c_void,
    },
    /// `gst_hip_device_get_vendor` and `_get_device_id` of the memory's
    /// `GstHipDevice` are our vendor (GstHip's number) and ordinal.
    HipDevice {
        vendor_of: IntFn,
        id_of: UintFn,
        vendor: c_int,
        ordinal: c_uint,
    },
}

// SAFETY: the object is a GstObject (thread-safe reference counting, its
// methods lock internally); the function pointers are plain code addresses.
unsafe impl Send for GstGpu {}
// SAFETY: as above; nothing here is mutated after construction.
unsafe impl Sync for GstGpu {}

impl Drop for GstGpu {
    fn drop(&mut self) {
        // SAFETY: releases the one reference `open` took of this GstObject.
        unsafe { gst::ffi::gst_object_unref(self.object.cast()) }
    }
}

/// A symbol of `lib`, typed by the caller.
///
/// SAFETY: `T` must be the C signature of `name`.
unsafe fn symbol<T: Copy>(lib: &Library, name: &str) -> Result<T, String> {
    // SAFETY: the caller names the type; the library stays open in `GstGpu`.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| format!("{name}: {e}"))
}

impl GstGpu {
    /// GStreamer's library of `kind` memory, with an object for `dev`; one
    /// per device, kind and process. An error says why that memory cannot
    /// be taken (the library is absent, or cannot reach the device).
    pub fn for_device(dev: &Arc<Device>, kind: GpuMemoryKind) -> Result<Arc<GstGpu>, String> {
        type Key = (usize, super::Vendor, GpuMemoryKind);
        type Cache = Mutex<Vec<(Key, Result<Arc<GstGpu>, String>)>>;
        static CACHE: Cache = Mutex::new(Vec::new());
        let key = (dev.info.ordinal, dev.runtime().vendor(), kind);
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, r)) = cache.iter().find(|(k, _)| *k == key) {
            return r.clone();
        }
        let r = if GpuMemoryKind::for_vendor(key.1).contains(&kind) {
            Self::open(dev, kind).map(Arc::new)
        } else {
            Err(format!(
                "{} is not GStreamer's memory for this GPU",
                kind.caps_feature()
            ))
        };
        cache.push((key, r.clone()));
        r
    }

    fn open(dev: &Arc<Device>, kind: GpuMemoryKind) -> Result<GstGpu, String> {
        let name = kind.library();
        // SAFETY: loading GStreamer's own library, whose initialisers only
        // register types; it is the one nvcodec/the hip plugin link.
        let lib = unsafe { Library::new(name) }.map_err(|e| format!("{name}: {e}"))?;
        match kind {
            GpuMemoryKind::Cuda => Self::open_cuda(dev, lib),
            GpuMemoryKind::Hip => Self::open_hip(dev, lib),
        }
    }

    /// nvcodec's library `lib` with a `GstCudaContext` wrapping our context.
    fn open_cuda(dev: &Arc<Device>, lib: Library) -> Result<GstGpu, String> {
        let name = GpuMemoryKind::Cuda.library();
        let (context, ordinal) = dev.raw_handles();
        // SAFETY (every `symbol` below): each type is the C prototype of
        // that function in GStreamer's headers (gstcudacontext.h,
        // gstcudautils.h, gstcudamemory.h, gstcudaloader.h,
        // gstcudabufferpool.h).
        let load: unsafe extern "C" fn() -> c_int =
            unsafe { symbol(&lib, "gst_cuda_load_library") }?;
        let wrap: unsafe extern "C" fn(*mut c_void, c_int) -> *mut c_void =
            unsafe { symbol(&lib, "gst_cuda_context_new_wrapped") }?;
        let handle_query: HandleQuery = unsafe { symbol(&lib, "gst_cuda_handle_context_query") }?;
        let get_handle: ObjectFn = unsafe { symbol(&lib, "gst_cuda_context_get_handle") }?;
        let sync: Option<MemoryFn> = unsafe { symbol(&lib, "gst_cuda_memory_sync") }.ok();
        let new_pool: ObjectFn = unsafe { symbol(&lib, "gst_cuda_buffer_pool_new") }?;
        let memory_init: unsafe extern "C" fn() =
            unsafe { symbol(&lib, "gst_cuda_memory_init_once") }?;
        // SAFETY: no arguments; loads libcuda into its own table.
        if unsafe { load() } == 0 {
            return Err(format!(
                "{name}: gst_cuda_load_library failed (no libcuda for it)"
            ));
        }
        // SAFETY: no arguments; registers the CUDA allocator, which
        // nvcodec's plugin does too but which our own pools need
        // when no nvcodec element was made (idempotent).
        unsafe { memory_init() };
        // SAFETY: `context` is our retained primary context and
        // `ordinal` its CUdevice; the wrapper does not own it.
        let object = unsafe { wrap(context, ordinal) };
        if object.is_null() {
            return Err(format!("{name}: gst_cuda_context_new_wrapped failed"));
        }
        let owner = Owner::CudaContext {
            handle: get_handle,
            context,
        };
        Ok(GstGpu::new(
            GpuMemoryKind::Cuda,
            (object, owner),
            (handle_query, sync, new_pool),
            dev,
            lib,
        ))
    }

    /// GstHip's library `lib` with a `GstHipDevice` of our vendor and ordinal.
    fn open_hip(dev: &Arc<Device>, lib: Library) -> Result<GstGpu, String> {
        let name = GpuMemoryKind::Hip.library();
        let hip_vendor = hip_vendor(dev.runtime().vendor());
        // SAFETY (every `symbol` below): each type is the C prototype of
        // that function in GStreamer's headers (gsthipdevice.h,
        // gsthiputils.h, gsthipmemory.h, gsthiploader.h, gsthipbufferpool.h).
        let load: unsafe extern "C" fn(c_int) -> c_int =
            unsafe { symbol(&lib, "gst_hip_load_library") }?;
        let new: unsafe extern "C" fn(c_int, c_uint) -> *mut c_void =
            unsafe { symbol(&lib, "gst_hip_device_new") }?;
        let handle_query: HandleQuery = unsafe { symbol(&lib, "gst_hip_handle_context_query") }?;
        let device_id: UintFn = unsafe { symbol(&lib, "gst_hip_device_get_device_id") }?;
        let device_vendor: IntFn = unsafe { symbol(&lib, "gst_hip_device_get_vendor") }?;
        let sync: MemoryFn = unsafe { symbol(&lib, "gst_hip_memory_sync") }?;
        let new_pool: ObjectFn = unsafe { symbol(&lib, "gst_hip_buffer_pool_new") }?;
        let memory_init: unsafe extern "C" fn() =
            unsafe { symbol(&lib, "gst_hip_memory_init_once") }?;
        let vendor_name = hip_vendor_name(hip_vendor);
        // GstHip numbers devices as the runtimes do (hipGetDevice,
        // cudaGetDevice): our ordinal.
        let ordinal = dev.info.ordinal as c_int;
        // SAFETY: plain call with an enum value; loads the vendor's
        // runtime (libamdhip64, or libcuda and libcudart) into
        // GstHip's own table.
        if unsafe { load(hip_vendor) } == 0 {
            return Err(format!(
                "{name}: gst_hip_load_library({vendor_name}) failed (no HIP runtime for it)"
            ));
        }
        // SAFETY: no arguments; registers the HIP allocator, which
        // the hip plugin does too (idempotent).
        unsafe { memory_init() };
        // SAFETY: plain call; returns a new reference or null.
        let object = unsafe { new(hip_vendor, ordinal as c_uint) };
        if object.is_null() {
            return Err(format!(
                "{name}: gst_hip_device_new({vendor_name}, {ordinal}) failed"
            ));
        }
        let owner = Owner::HipDevice {
            vendor_of: device_vendor,
            id_of: device_id,
            vendor: hip_vendor,
            ordinal: ordinal as c_uint,
        };
        Ok(GstGpu::new(
            GpuMemoryKind::Hip,
            (object, owner),
            (handle_query, Some(sync), new_pool),
            dev,
            lib,
        ))
    }

    /// The opened library `lib` of `kind` memory, with our device's object
    /// and its owner test, and the library's calls the element makes.
    fn new(
        kind: GpuMemoryKind,
        (object, owner): (*mut c_void, Owner),
        (handle_query, sync, new_pool): (HandleQuery, Option<MemoryFn>, ObjectFn),
        dev: &Arc<Device>,
        lib: Library,
    ) -> GstGpu {
        GstGpu {
            kind,
            object,
            owner,
            handle_query,
            sync,
            new_pool,
            dev: dev.clone(),
            reader: Mutex::new(None),
            _lib: lib,
        }
    }

    pub fn kind(&self) -> GpuMemoryKind {
        self.kind
    }

    /// Answers upstream's context query with our context/device, so that it
    /// allocates where our kernels can read. False if it is not that query.
    pub fn answer_context_query(&self, element: &gst::Element, query: &mut gst::QueryRef) -> bool {
        let gst::QueryViewMut::Context(q) = query.view_mut() else {
            return false;
        };
        if q.context_type() != self.kind.context_type() {
            return false;
        }
        // SAFETY: both pointers are live for the call; the function fills
        // the query with a new GstContext holding a reference to `object`.
        unsafe {
            (self.handle_query)(
                glib::translate::ToGlibPtr::<*mut gst::ffi::GstElement>::to_glib_none(element)
                    .0
                    .cast(),
                query.as_mut_ptr().cast(),
                self.object,
            ) != 0
        }
    }

    /// Whether `mem` is this library's memory, allocated for our context
    /// (CUDA) or our device (HIP): memory we may read in place.
    pub fn owns(&self, mem: &gst::MemoryRef) -> bool {
        if !mem.is_type(self.kind.memory_type()) {
            return false;
        }
        // SAFETY: the memory's type says its allocator is this library's,
        // whose memories start with `GpuMemoryHead` (see its comment).
        let owner = unsafe { (*(mem.as_ptr() as *const GpuMemoryHead)).owner };
        if owner.is_null() {
            return false;
        }
        match self.owner {
            // SAFETY: `owner` is the memory's live GstCudaContext.
            Owner::CudaContext { handle, context } => unsafe { handle(owner) == context },
            Owner::HipDevice {
                vendor_of,
                id_of,
                vendor,
                ordinal,
            } => {
                // SAFETY: `owner` is the memory's live GstHipDevice.
                unsafe { vendor_of(owner) == vendor && id_of(owner) == ordinal }
            }
        }
    }

    /// An active pool of `caps` frames in this memory on our device, for
    /// frames written on the device (the command's NVDEC frames handed
    /// downstream, the sink pads' copies of another device's frames). A format GStreamer's allocator may not know (1.22 has
    /// no P012, and aborts the process when asked for it) is allocated as
    /// its layout twin ([`layout_twin`]), and each buffer's video meta
    /// says the format asked for.
    pub fn buffer_pool(&self, caps: &gst::Caps, min_buffers: u32) -> Result<FramePool, String> {
        let info = gst_video::VideoInfo::from_caps(caps).map_err(|e| e.to_string())?;
        let Some(twin) = layout_twin(info.format()) else {
            let pool = self.active_pool(caps, &info, min_buffers)?;
            return Ok(FramePool { pool, stamp: None });
        };
        let mut twin_caps = caps.clone();
        twin_caps.make_mut().set("format", twin.to_str());
        let twin_info = gst_video::VideoInfo::from_caps(&twin_caps).map_err(|e| e.to_string())?;
        let pool = self
            .active_pool(&twin_caps, &twin_info, min_buffers)
            .map_err(|e| format!("{e} ({} allocated as {twin})", info.format()))?;
        Ok(FramePool {
            pool,
            stamp: Some(info.format()),
        })
    }

    fn active_pool(
        &self,
        caps: &gst::Caps,
        info: &gst_video::VideoInfo,
        min_buffers: u32,
    ) -> Result<gst::BufferPool, String> {
        let (pool, _) = self.configured_pool(caps, info, min_buffers)?;
        pool.set_active(true)
            .map_err(|e| format!("{} buffer pool: {e}", self.kind.caps_feature()))?;
        Ok(pool)
    }

    /// A pool of `caps` frames in this memory on our device, for upstream to
    /// write into (the ALLOCATION query): the pool, configured but not
    /// active, and the size of its buffers.
    pub fn proposed_pool(
        &self,
        caps: &gst::Caps,
        min_buffers: u32,
    ) -> Result<(gst::BufferPool, u32), String> {
        let info = gst_video::VideoInfo::from_caps(caps).map_err(|e| e.to_string())?;
        self.configured_pool(caps, &info, min_buffers)
    }

    /// A new pool of this memory (`GstCudaBufferPool`, `GstHipBufferPool`)
    /// on our device, configured for `caps` with video meta; and its
    /// buffers' size (the pool pads rows to its pitch).
    fn configured_pool(
        &self,
        caps: &gst::Caps,
        info: &gst_video::VideoInfo,
        min_buffers: u32,
    ) -> Result<(gst::BufferPool, u32), String> {
        let what = format!("{} buffer pool", self.kind.caps_feature());
        // SAFETY: `object` is our live GstCudaContext or GstHipDevice, the
        // argument `new_pool` takes; it returns a new (floating) pool, or null.
        let raw = unsafe { (self.new_pool)(self.object) };
        if raw.is_null() {
            return Err(format!("{what}: the library made none"));
        }
        // SAFETY: a new GstBufferPool; from_glib_none sinks the floating
        // reference into the one we keep.
        let pool: gst::BufferPool =
            unsafe { glib::translate::from_glib_none(raw as *mut gst::ffi::GstBufferPool) };
        let mut config = pool.config();
        config.set_params(Some(caps), info.size() as u32, min_buffers, 0);
        config.add_option(gst_video::BUFFER_POOL_OPTION_VIDEO_META);
        if pool.set_config(config).is_err() {
            // The pool refuses a config it had to change (its pitch-aligned
            // frame size) and returns the changed one: take that.
            pool.set_config(pool.config())
                .map_err(|e| format!("{what}: {e}"))?;
        }
        let size = pool
            .config()
            .params()
            .map_or(info.size() as u32, |(_, size, _, _)| size);
        Ok((pool, size))
    }

    /// Maps a buffer of [`GstGpu::buffer_pool`] for writing on the device:
    /// its plane pointers are device addresses ([`device_plane`]).
    pub fn map_frame_writable(
        &self,
        buffer: gst::Buffer,
        info: &gst_video::VideoInfo,
    ) -> Result<gst_video::VideoFrame<gst_video::video_frame::Writable>, gst::Buffer> {
        match map_for_device(&buffer, info, gst::ffi::GST_MAP_WRITE) {
            // SAFETY: a frame mapped with its own reference of the buffer
            // (ours drops on return, as gstreamer-video's
            // `from_buffer_writable` does); `VideoFrame` unmaps it on drop.
            Some(frame) => Ok(unsafe { gst_video::VideoFrame::from_glib_full(frame) }),
            None => Err(buffer),
        }
    }

    /// Maps `buffer` (every memory of it ours: `owns`) as a video frame of
    /// `info` for the device: its plane pointers are device addresses. The
    /// producer's pending work on it is waited for first.
    pub fn map_frame(
        &self,
        buffer: &gst::Buffer,
        info: &gst_video::VideoInfo,
    ) -> Option<gst_video::VideoFrame<gst_video::video_frame::Readable>> {
        if let Some(sync) = self.sync {
            for mem in buffer.iter_memories() {
                // SAFETY: the memory is this library's (checked by the caller).
                unsafe { sync(mem.as_ptr() as *mut c_void) };
            }
        }
        let frame = map_for_device(buffer, info, gst::ffi::GST_MAP_READ)?;
        // SAFETY: a frame mapped with its own reference of the buffer;
        // `VideoFrame` unmaps it on drop.
        Some(unsafe { gst_video::VideoFrame::from_glib_full(frame) })
    }
    /// `buffer` mapped for the device when every memory of it (one at
    /// least) is this context's ([`GstGpu::owns`]); None otherwise.
    pub fn map_owned(
        &self,
        buffer: &gst::Buffer,
        info: &gst_video::VideoInfo,
    ) -> Option<gst_video::VideoFrame<gst_video::video_frame::Readable>> {
        (buffer.n_memory() > 0 && buffer.iter_memories().all(|m| self.owns(m)))
            .then(|| self.map_frame(buffer, info))
            .flatten()
    }

    /// A frame of this memory on another device or in another context
    /// (`owns` says no), mapped for the device (`map_frame`), copied on the
    /// GPU into a buffer of `pool` (ours): planes that go from device to
    /// device, with no host round trip, waited for before it returns.
    pub fn copy_frame(
        &self,
        src: &gst_video::VideoFrame<gst_video::video_frame::Readable>,
        pool: &FramePool,
    ) -> Result<gst::Buffer, String> {
        let info = src.info().clone();
        let buffer = pool.acquire()?;
        let dst = self
            .map_frame_writable(buffer, &info)
            .map_err(|_| "a frame of our pool does not map for the device".to_string())?;
        self.on_stream(|st| {
            for p in 0..info.n_planes() as usize {
                let plane = |f: &dyn Fn(usize) -> Option<(u64, usize, usize)>| {
                    f(p).ok_or_else(|| format!("plane {p} is not mapped for the device"))
                };
                let (s, s_bytes, s_pitch) = plane(&|p| device_plane(src, p))?;
                let (d, d_bytes, d_pitch) = plane(&|p| device_plane(&dst, p))?;
                let c = (0..info.n_components())
                    .find(|&c| info.comp_plane(c as u8) as usize == p)
                    .ok_or_else(|| format!("plane {p} holds no component"))?
                    as u8;
                let width_bytes = info.comp_width(c) as usize * info.comp_pstride(c) as usize;
                st.copy_2d_between(
                    (d, d_bytes),
                    d_pitch,
                    (s, s_bytes),
                    (s_pitch, width_bytes, info.comp_height(c) as usize),
                )
                .map_err(|e| e.to_string())?;
            }
            st.synchronize().map_err(|e| e.to_string())
        })?;
        Ok(dst.into_buffer())
    }

    /// `f` on this device's stream for small copies and reads (made on
    /// first use), one caller at a time.
    fn on_stream<R>(&self, f: impl FnOnce(&Stream) -> Result<R, String>) -> Result<R, String> {
        let mut stream = self.reader.lock().unwrap_or_else(|e| e.into_inner());
        if stream.is_none() {
            *stream = Some(Stream::new(&self.dev).map_err(|e| e.to_string())?);
        }
        f(stream.as_ref().expect("made above"))
    }

    /// Rows `0, step, 2·step, …` (`count` of them, `width_bytes` of each)
    /// of plane `plane` of a frame [`GstGpu::map_frame`] mapped, read to
    /// the host one after another.
    pub fn read_rows(
        &self,
        frame: &impl VideoFrameExt,
        plane: usize,
        (step, count): (usize, usize),
        width_bytes: usize,
    ) -> Result<Vec<u8>, String> {
        let (src, bytes, pitch) = device_plane(frame, plane)
            .filter(|_| mapped_for_device(frame))
            .ok_or_else(|| format!("plane {plane} is not mapped for the device"))?;
        let mut rows = vec![0u8; count * width_bytes];
        self.on_stream(|st| {
            st.read_2d_from_device(&mut rows, (src, bytes), pitch * step, width_bytes, count)
                .map_err(|e| e.to_string())
        })?;
        Ok(rows)
    }
}

/// A format GStreamer's CUDA allocator may not know (1.22's), and one it
/// knows with the same planes, sample size and plane sizes: P012 (12 bits
/// in the high bits of 16, NVDEC's 12-bit 4:2:0) is laid out as P016,
/// planar 10- and 12-bit 4:4:4 as Y444_16LE.
pub fn layout_twin(format: gst_video::VideoFormat) -> Option<gst_video::VideoFormat> {
    use gst_video::VideoFormat as F;
    match format {
        F::P012Le => Some(F::P016Le),
        F::Y44410le | F::Y44412le => Some(F::Y44416le),
        _ => None,
    }
}

/// GstHip's name of its vendor number.
fn hip_vendor_name(vendor: c_int) -> &'static str {
    match vendor {
        GST_HIP_VENDOR_AMD => "AMD",
        GST_HIP_VENDOR_NVIDIA => "NVIDIA",
        _ => "unknown vendor",
    }
}

/// The device a `gst.hip.device` context holds (an application's, or a
/// neighbour's: GstHip's elements share theirs this way): its vendor
/// (AMD, NVIDIA) and device number. None for another context, or one
/// without a device.
pub fn hip_context_device(context: &gst::ContextRef) -> Option<(super::Vendor, u32)> {
    if context.context_type() != GpuMemoryKind::Hip.context_type() {
        return None;
    }
    let device = context.structure().get::<glib::Object>("device").ok()?;
    let id = device.property_value("device-id").get::<u32>().ok()?;
    let vendor = glib::EnumValue::from_value(&device.property_value("vendor"))?
        .1
        .value();
    let vendor = match vendor {
        GST_HIP_VENDOR_AMD => super::Vendor::Amd,
        GST_HIP_VENDOR_NVIDIA => super::Vendor::Nvidia,
        _ => return None,
    };
    Some((vendor, id))
}

/// Frames in our GPU memory ([`GstGpu::buffer_pool`]).
pub struct FramePool {
    pool: gst::BufferPool,
    /// The format each buffer's video meta is to say, where the pool
    /// allocates its layout twin.
    stamp: Option<gst_video::VideoFormat>,
}

impl FramePool {
    /// A frame of the pool, its video meta saying the format asked for.
    pub fn acquire(&self) -> Result<gst::Buffer, String> {
        let mut buffer = self
            .pool
            .acquire_buffer(None)
            .map_err(|e| format!("a CUDA frame: {e}"))?;
        if let Some(format) = self.stamp {
            let b = buffer.get_mut().ok_or("a pool buffer shared")?;
            let mut meta = b
                .meta_mut::<gst_video::VideoMeta>()
                .ok_or("a CUDA frame without a video meta")?;
            // SAFETY: a live GstVideoMeta of a buffer we hold writable; the
            // format is of the same layout as the one the pool allocated
            // (`layout_twin`), so its planes, offsets and strides stay true.
            unsafe { (*meta.as_mut_ptr()).format = format.into_glib() };
        }
        Ok(buffer)
    }
}

/// `gst_video_frame_map` of `buffer` as `info` with `access` and the GPU
/// libraries' device flag: plane pointers are device addresses. On success
/// the frame holds a reference of the buffer of its own and the mappings,
/// for `gst_video_frame_unmap` (`VideoFrame`'s drop) to release.
fn map_for_device(
    buffer: &gst::Buffer,
    info: &gst_video::VideoInfo,
    access: c_uint,
) -> Option<gst_video::ffi::GstVideoFrame> {
    let mut frame = std::mem::MaybeUninit::<gst_video::ffi::GstVideoFrame>::zeroed();
    // SAFETY: valid info, buffer and out-pointer, all live for the call;
    // the library's map function returns the device address for the
    // device flag; the frame is initialised when the call succeeds.
    unsafe {
        let ok = gst_video::ffi::gst_video_frame_map(
            frame.as_mut_ptr(),
            glib::translate::ToGlibPtr::<*const gst_video::ffi::GstVideoInfo>::to_glib_none(info).0
                as *mut _,
            glib::translate::ToGlibPtr::<*mut gst::ffi::GstBuffer>::to_glib_none(buffer).0,
            access | GST_MAP_DEVICE,
        );
        (ok != 0).then(|| frame.assume_init())
    }
}

/// Whether `frame` was mapped for the device (`GstGpu::map_frame`).
pub fn mapped_for_device(frame: &impl VideoFrameExt) -> bool {
    // SAFETY: `as_ptr` is the frame's live GstVideoFrame.
    let map = unsafe { &(*frame.as_ptr()).map[0] };
    map.flags & GST_MAP_DEVICE != 0
}

/// Plane `plane` of a frame `mapped_for_device`: its device address, the
/// bytes mapped from there, and its pitch in bytes.
pub fn device_plane(frame: &impl VideoFrameExt, plane: usize) -> Option<(u64, usize, usize)> {
    if plane >= frame.n_planes() as usize {
        return None;
    }
    // SAFETY: `as_ptr` is the frame's live GstVideoFrame; its `data[p]`
    // point into `map[p]` (gst_video_frame_map), here device mappings.
    let raw = unsafe { &*frame.as_ptr() };
    let map = &raw.map[plane];
    let start = raw.data[plane] as u64;
    let end = map.data as u64 + map.size as u64;
    Some((
        start,
        end.saturating_sub(start) as usize,
        frame.plane_stride()[plane].max(0) as usize,
    ))
}
