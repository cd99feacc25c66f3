//! Devices, device and pinned host memory, streams and events.

use super::ffi::{self, Handle};
use super::{Api, HipError, PINNED, Runtime};
use std::ffi::{c_int, c_uint, c_void};
use std::sync::{Arc, Weak};

/// What a device is, as the messages and the kernel cache need it.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    /// `sm_90` on NVIDIA, the full gcnArchName (`gfx90a:sramecc+:xnack-`) on AMD.
    pub arch: String,
    /// Threads per warp / wavefront, read from the device.
    pub warp_size: u32,
    pub multiprocessors: u32,
    pub total_memory: usize,
}

impl DeviceInfo {
    /// From what the driver reported: the name as a NUL-ended buffer, and
    /// the warp size, multiprocessor count and memory.
    fn new(
        ordinal: usize,
        name: &[u8],
        arch: String,
        (warp, sms, mem): (c_int, c_int, usize),
    ) -> Self {
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        DeviceInfo {
            ordinal,
            name: String::from_utf8_lossy(&name[..end]).trim().to_string(),
            arch,
            warp_size: warp.max(1) as u32,
            multiprocessors: sms.max(1) as u32,
            total_memory: mem,
        }
    }
}

/// What NVIDIA's driver says of device `dev` (`ordinal` in the messages):
/// its name, architecture, warp size, multiprocessors and memory.
fn nvidia_info(rt: &Runtime, dev: c_int, ordinal: usize) -> Result<DeviceInfo, HipError> {
    let Api::Nvidia { cu, .. } = &rt.api else {
        unreachable!("called for NVIDIA's driver alone");
    };
    let attribute = |attr: c_int| {
        let mut out: c_int = 0;
        // SAFETY: valid out-pointer; `dev` is a device of this driver.
        rt.check(
            unsafe { (cu.device_get_attribute)(&mut out, attr, dev) },
            "cuDeviceGetAttribute",
        )
        .map(|()| out)
    };
    let warp = attribute(ffi::CU_ATTR_WARP_SIZE)?;
    let sms = attribute(ffi::CU_ATTR_MULTIPROCESSOR_COUNT)?;
    let arch = format!(
        "sm_{}{}",
        attribute(ffi::CU_ATTR_CC_MAJOR)?,
        attribute(ffi::CU_ATTR_CC_MINOR)?
    );
    let (mut name, mut mem) = ([0u8; 256], 0usize);
    // SAFETY: valid out-pointers and buffer length.
    unsafe {
        rt.check(
            (cu.device_get_name)(name.as_mut_ptr().cast(), 255, dev),
            "cuDeviceGetName",
        )?;
        rt.check((cu.device_total_mem)(&mut mem, dev), "cuDeviceTotalMem")?;
    }
    Ok(DeviceInfo::new(ordinal, &name, arch, (warp, sms, mem)))
}

/// Device `ordinal` of NVIDIA's driver and what it is (no context made).
fn nvidia_device(rt: &Runtime, ordinal: usize) -> Result<(c_int, DeviceInfo), HipError> {
    let Api::Nvidia { cu, .. } = &rt.api else {
        unreachable!("called for NVIDIA's driver alone");
    };
    let mut dev: c_int = 0;
    // SAFETY: valid out-pointer.
    rt.check(
        unsafe { (cu.device_get)(&mut dev, ordinal as c_int) },
        "cuDeviceGet",
    )?;
    Ok((dev, nvidia_info(rt, dev, ordinal)?))
}

/// An error unless the runtime reports a device `ordinal`.
fn check_ordinal(rt: &Runtime, ordinal: usize) -> Result<(), HipError> {
    let count = rt.device_count()?;
    if ordinal >= count {
        return Err(HipError::NoDevice(format!(
            "device-id {ordinal} asked for, but {} reports {count} device{}",
            rt.libraries,
            if count == 1 { "" } else { "s" }
        )));
    }
    Ok(())
}

/// An opened GPU: on NVIDIA its retained primary context (or a context a
/// program made, [`Device::adopt_context`]), on AMD its ordinal.
pub struct Device {
    pub(crate) rt: Arc<Runtime>,
    handle: c_int,
    ctx: Handle,
    /// The primary context was retained here (and is released on drop).
    retained: bool,
    pub info: DeviceInfo,
}

// SAFETY: a CUDA context and a HIP device ordinal may be used from any
// thread once made current there (`make_current`); the handle is immutable.
unsafe impl Send for Device {}
// SAFETY: as above; no method mutates the struct.
unsafe impl Sync for Device {}

impl Device {
    /// Opens device `ordinal` of `rt`.
    /// Whose driver runs this device (AMD's HIP or NVIDIA's CUDA).
    pub fn vendor(&self) -> super::Vendor {
        self.rt.vendor()
    }

    pub fn open(rt: &Arc<Runtime>, ordinal: usize) -> Result<Arc<Device>, HipError> {
        check_ordinal(rt, ordinal)?;
        let ord = ordinal as c_int;
        let (handle, ctx, info) = match &rt.api {
            Api::Nvidia { cu, .. } => {
                let (dev, info) = nvidia_device(rt, ordinal)?;
                let mut ctx: Handle = std::ptr::null_mut();
                let t = std::time::Instant::now();
                // SAFETY: valid out-pointer; `dev` came from cuDeviceGet.
                rt.check(
                    unsafe { (cu.primary_ctx_retain)(&mut ctx, dev) },
                    "cuDevicePrimaryCtxRetain",
                )?;
                super::record_step("primary context", t);
                (dev, ctx, info)
            }
            Api::Amd { hip, props, .. } => {
                let (mut name, mut warp, mut sms, mut mem) = ([0u8; 256], 0, 0, 0usize);
                // SAFETY: valid out-pointers and buffer lengths; the
                // properties buffer is larger than either struct layout.
                unsafe {
                    rt.check((hip.set_device)(ord), "hipSetDevice")?;
                    rt.check(
                        (hip.device_get_name)(name.as_mut_ptr().cast(), 255, ord),
                        "hipDeviceGetName",
                    )?;
                    rt.check(
                        (hip.device_get_attribute)(&mut warp, ffi::HIP_ATTR_WARP_SIZE, ord),
                        "hipDeviceGetAttribute",
                    )?;
                    rt.check(
                        (hip.device_get_attribute)(
                            &mut sms,
                            ffi::HIP_ATTR_MULTIPROCESSOR_COUNT,
                            ord,
                        ),
                        "hipDeviceGetAttribute",
                    )?;
                    rt.check((hip.device_total_mem)(&mut mem, ord), "hipDeviceTotalMem")?;
                    let (get, offset) = props.ok_or_else(|| {
                        HipError::NotFound("libamdhip64 exports no hipGetDeviceProperties".into())
                    })?;
                    let mut buf = vec![0u8; ffi::DEVICE_PROP_BYTES];
                    rt.check(get(buf.as_mut_ptr().cast(), ord), "hipGetDeviceProperties")?;
                    let arch = &buf[offset..offset + 256];
                    let end = arch.iter().position(|&b| b == 0).unwrap_or(256);
                    let arch = String::from_utf8_lossy(&arch[..end]).into_owned();
                    if !arch.starts_with("gfx") {
                        return Err(HipError::NoDevice(format!(
                            "device {ordinal} reports architecture {arch:?}, not a gfx name"
                        )));
                    }
                    let info = DeviceInfo::new(ordinal, &name, arch, (warp, sms, mem));
                    (ord, std::ptr::null_mut(), info)
                }
            }
        };
        Ok(Arc::new(Device {
            rt: rt.clone(),
            handle,
            ctx,
            retained: rt.vendor() == super::Vendor::Nvidia,
            info,
        }))
    }

    /// What device `ordinal` is, without opening it: on NVIDIA no context
    /// is made (a program that brings its own context never pays for the
    /// primary one); on AMD the device is opened, which costs little.
    pub fn probe(rt: &Arc<Runtime>, ordinal: usize) -> Result<DeviceInfo, HipError> {
        if !matches!(rt.api, Api::Nvidia { .. }) {
            return Device::open(rt, ordinal).map(|d| d.info.clone());
        }
        check_ordinal(rt, ordinal)?;
        nvidia_device(rt, ordinal).map(|(_, info)| info)
    }

    /// The device of a CUDA context the caller made and keeps alive (a
    /// program's own, such as ffmpeg's hardware device): work runs in that
    /// context, so the caller's device memory is read in place. NVIDIA only.
    ///
    /// # Safety
    /// `ctx` is a live `CUcontext`, which outlives the returned device and
    /// everything made on it.
    pub unsafe fn adopt_context(
        rt: &Arc<Runtime>,
        ctx: *mut c_void,
    ) -> Result<Arc<Device>, HipError> {
        let Api::Nvidia { cu, .. } = &rt.api else {
            return Err(HipError::Usage(format!(
                "a CUDA context given to {}, which is not NVIDIA's driver",
                rt.libraries
            )));
        };
        if ctx.is_null() {
            return Err(HipError::Usage("a null CUDA context".into()));
        }
        let mut dev: c_int = 0;
        // SAFETY: `ctx` is live (the caller's promise); it is pushed, asked
        // for its device, and popped again, leaving the thread as it was.
        unsafe {
            rt.check((cu.ctx_push_current)(ctx), "cuCtxPushCurrent")?;
            let asked = rt.check((cu.ctx_get_device)(&mut dev), "cuCtxGetDevice");
            let mut popped: Handle = std::ptr::null_mut();
            rt.check((cu.ctx_pop_current)(&mut popped), "cuCtxPopCurrent")?;
            asked?;
        }
        let info = nvidia_info(rt, dev, dev.max(0) as usize)?;
        Ok(Arc::new(Device {
            rt: rt.clone(),
            handle: dev,
            ctx,
            retained: false,
            info,
        }))
    }

    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.rt
    }

    /// The raw handles GStreamer's GPU libraries are given: on NVIDIA the
    /// primary `CUcontext` and the `CUdevice`, on AMD a null context and the
    /// HIP ordinal.
    #[cfg_attr(not(feature = "plugin"), allow(dead_code))]
    pub(crate) fn raw_handles(&self) -> (Handle, c_int) {
        (self.ctx, self.handle)
    }

    /// Makes this device current on the calling thread (the current device
    /// is per thread; GStreamer may call from any streaming thread).
    pub fn make_current(&self) -> Result<(), HipError> {
        match &self.rt.api {
            // SAFETY: `ctx` is the retained primary context of this device.
            Api::Nvidia { cu, .. } => self
                .rt
                .check(unsafe { (cu.ctx_set_current)(self.ctx) }, "cuCtxSetCurrent"),
            // SAFETY: plain call with a valid ordinal.
            Api::Amd { hip, .. } => self
                .rt
                .check(unsafe { (hip.set_device)(self.handle) }, "hipSetDevice"),
        }
    }

    /// Waits for all work on the device (teardown only).
    pub fn synchronize(&self) -> Result<(), HipError> {
        self.make_current()?;
        match &self.rt.api {
            // SAFETY: plain call; the context is current.
            Api::Nvidia { cu, .. } => self
                .rt
                .check(unsafe { (cu.ctx_synchronize)() }, "cuCtxSynchronize"),
            // SAFETY: plain call; the device is current.
            Api::Amd { hip, .. } => self.rt.check(
                unsafe { (hip.device_synchronize)() },
                "hipDeviceSynchronize",
            ),
        }
    }

    /// Waits for the work queued on the legacy default stream of this
    /// device's context (the engine's own streams do not wait for it): a
    /// program's copies into pictures made here, which `cuMemcpy2D` queues
    /// there, are done before the engine reads the pictures.
    pub fn synchronize_default_stream(&self) -> Result<(), HipError> {
        self.make_current()?;
        let (f, call) = self.rt.pick(
            |c| (c.stream_synchronize, "cuStreamSynchronize"),
            |h| (h.stream_synchronize, "hipStreamSynchronize"),
        );
        // SAFETY: the null stream is the current context's default stream.
        self.rt.check(unsafe { f(std::ptr::null_mut()) }, call)
    }

    /// Free and total device memory, in bytes.
    pub fn memory_info(&self) -> Result<(usize, usize), HipError> {
        self.make_current()?;
        let (mut free, mut total) = (0usize, 0usize);
        match &self.rt.api {
            // SAFETY: valid out-pointers.
            Api::Nvidia { cu, .. } => self.rt.check(
                unsafe { (cu.mem_get_info)(&mut free, &mut total) },
                "cuMemGetInfo",
            )?,
            // SAFETY: valid out-pointers.
            Api::Amd { hip, .. } => self.rt.check(
                unsafe { (hip.mem_get_info)(&mut free, &mut total) },
                "hipMemGetInfo",
            )?,
        }
        Ok((free, total))
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        if let Api::Nvidia { cu, .. } = &self.rt.api
            && self.retained
        {
            // SAFETY: releases the retain taken in `open`, exactly once.
            // A failure here cannot be acted on; the context dies with the process.
            let _ = unsafe { (cu.primary_ctx_release)(self.handle) };
        }
    }
}

/// Whether `code` is the vendor's out-of-memory error.
fn out_of_memory(api: &Api, code: c_int) -> bool {
    match api {
        Api::Nvidia { .. } => code == ffi::CUDA_ERROR_OUT_OF_MEMORY,
        Api::Amd { .. } => code == ffi::HIP_ERROR_OUT_OF_MEMORY,
    }
}

/// Where a 2D copy reads: host memory (pinned or page-locked) or a device address.
enum CopySource {
    Host(*const u8),
    Device(u64),
    /// A device address of this process that may belong to another context
    /// or device (copied to a destination that may too).
    Anywhere(u64),
}

/// The shape of a 2D copy into a device buffer.
struct Copy2d {
    dst_offset: usize,
    dst_pitch: usize,
    src_pitch: usize,
    width_bytes: usize,
    rows: usize,
}

impl Copy2d {
    fn new(
        dst_offset: usize,
        dst_pitch: usize,
        src_pitch: usize,
        width_bytes: usize,
        rows: usize,
    ) -> Self {
        Copy2d {
            dst_offset,
            dst_pitch,
            src_pitch,
            width_bytes,
            rows,
        }
    }

    /// Whether there is anything to copy, after checking both sides: the
    /// source's `src_len` bytes from `src_offset`, and `dst_len` bytes of
    /// the destination.
    fn fits(
        &self,
        what: &str,
        src_offset: usize,
        src_len: usize,
        dst_len: usize,
    ) -> Result<bool, HipError> {
        let (rows, width) = (self.rows, self.width_bytes);
        if rows == 0 || width == 0 {
            return Ok(false);
        }
        let span = |off: usize, pitch: usize| off + pitch * (rows - 1) + width;
        if width > self.src_pitch
            || width > self.dst_pitch
            || span(src_offset, self.src_pitch) > src_len
            || span(self.dst_offset, self.dst_pitch) > dst_len
        {
            return Err(HipError::Usage(format!(
                "{what} of {rows}x{width} bytes out of bounds (source {src_len} bytes from {src_offset}, pitch {}; destination {} bytes from {}, pitch {})",
                self.src_pitch, dst_len, self.dst_offset, self.dst_pitch
            )));
        }
        Ok(true)
    }
}

/// Host memory page-locked where it lies for as long as this lives, so that
/// the DMA engine reads it without a staging copy (NVIDIA:
/// `cuMemHostRegister`). Covers whole pages: the ones holding the bytes given.
pub struct HostRegistration {
    dev: Arc<Device>,
    base: *mut c_void,
    start: usize,
    end: usize,
}

// SAFETY: the registration is a pair of addresses and a device handle; the
// driver call that ends it may come from any thread (the context is made
// current first).
unsafe impl Send for HostRegistration {}

impl HostRegistration {
    /// Page-locks the pages holding `data`. Fails where the runtime has no
    /// such call here (AMD: not used), or the driver refuses (a page already
    /// registered by another live registration, e.g. the neighbouring
    /// picture's plane): the caller then stages instead.
    pub fn new(dev: &Arc<Device>, data: &[u8]) -> Result<Self, HipError> {
        const PAGE: usize = 4096;
        let Api::Nvidia { cu, .. } = &dev.rt.api else {
            return Err(HipError::Usage(
                "host registration is used on NVIDIA only".into(),
            ));
        };
        let start = data.as_ptr() as usize & !(PAGE - 1);
        let end = (data.as_ptr() as usize + data.len()).div_ceil(PAGE) * PAGE;
        dev.make_current()?;
        let base = start as *mut c_void;
        // SAFETY: `[start, end)` covers only pages that hold `data`, which
        // is mapped; registering does not write to it. `Drop` ends it.
        dev.rt.check(
            unsafe { (cu.mem_host_register)(base, end - start, 0) },
            "cuMemHostRegister",
        )?;
        Ok(HostRegistration {
            dev: dev.clone(),
            base,
            start,
            end,
        })
    }

    /// Whether `data` lies inside the registered pages.
    pub fn covers(&self, data: &[u8]) -> bool {
        let p = data.as_ptr() as usize;
        p >= self.start && p + data.len() <= self.end
    }
}

impl Drop for HostRegistration {
    fn drop(&mut self) {
        if let Api::Nvidia { cu, .. } = &self.dev.rt.api {
            let _ = self.dev.make_current();
            // SAFETY: ends the registration `new` made, once; its owner drops
            // it only after the copies that read the pages completed.
            let _ = unsafe { (cu.mem_host_unregister)(self.base) };
        }
    }
}

/// Device memory of `bytes` bytes; freed on drop.
pub struct DeviceBuffer {
    dev: Arc<Device>,
    ptr: u64,
    bytes: usize,
}

// SAFETY: a device address is plain data; the memory is only touched by
// device work ordered through streams.
unsafe impl Send for DeviceBuffer {}
// SAFETY: as above; `&DeviceBuffer` exposes no host access to the memory.
unsafe impl Sync for DeviceBuffer {}

impl DeviceBuffer {
    /// Allocates `bytes` (at least 1) of device memory; `what` names it in errors.
    pub fn new(dev: &Arc<Device>, bytes: usize, what: &str) -> Result<Self, HipError> {
        dev.make_current()?;
        let bytes = bytes.max(1);
        let mut ptr = 0u64;
        let r = match &dev.rt.api {
            // SAFETY: valid out-pointer; the context is current.
            Api::Nvidia { cu, .. } => (unsafe { (cu.mem_alloc)(&mut ptr, bytes) }, "cuMemAlloc"),
            // SAFETY: valid out-pointer; the device is current.
            Api::Amd { hip, .. } => (unsafe { (hip.malloc)(&mut ptr, bytes) }, "hipMalloc"),
        };
        if out_of_memory(&dev.rt.api, r.0) {
            return Err(HipError::OutOfMemory {
                bytes,
                what: what.to_string(),
            });
        }
        dev.rt.check(r.0, r.1)?;
        Ok(Self {
            dev: dev.clone(),
            ptr,
            bytes,
        })
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The device address of the first byte, as this device's context sees it.
    pub fn addr(&self) -> u64 {
        self.ptr
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // Kernels may still read the memory: let them finish first.
        let _ = self.dev.synchronize();
        let _ = match &self.dev.rt.api {
            // SAFETY: `ptr` came from cuMemAlloc and is freed exactly once.
            Api::Nvidia { cu, .. } => unsafe { (cu.mem_free)(self.ptr) },
            // SAFETY: `ptr` came from hipMalloc and is freed exactly once.
            Api::Amd { hip, .. } => unsafe { (hip.free)(self.ptr) },
        }; // nothing to do about a failed free at teardown
    }
}

/// Page-locked host memory the GPU can DMA from and to. Shared through an
/// `Arc`; host access goes through [`PinnedHostMem`], the exclusive owner,
/// while copies use the raw address.
pub struct PinnedBuffer {
    dev: Arc<Device>,
    ptr: *mut u8,
    len: usize,
    /// How the memory was had, and so how it is given back.
    origin: PinnedOrigin,
}

/// Where a pinned buffer's memory came from.
enum PinnedOrigin {
    /// The runtime's own pinned allocator (`cuMemHostAlloc`, `hipHostMalloc`).
    Runtime,
    /// Our own allocation in 2 MiB pages, then registered with the driver
    /// (`cuMemHostRegister`): page-locking huge pages is faster than
    /// `cuMemHostAlloc`'s 4 KiB ones (`benches/readbw.c --alloc` measures
    /// both; docs/history/performance-notebook.md), and those allocations
    /// are a raw 2160p input's start-up. The layout frees it.
    Registered(std::alloc::Layout),
}

// SAFETY: the allocation is plain host memory owned by this value; Rust
// references into it are only made by the exclusive `PinnedHostMem`.
unsafe impl Send for PinnedBuffer {}
// SAFETY: `&PinnedBuffer` gives out no references into the memory.
unsafe impl Sync for PinnedBuffer {}

impl PinnedBuffer {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        let me = self.ptr as usize;
        PINNED.lock().unwrap().retain(|(a, _, _)| *a != me);
        // A copy may still read or write the memory: let it finish first.
        let _ = self.dev.synchronize();
        let _ = match (&self.dev.rt.api, &self.origin) {
            (Api::Nvidia { cu, .. }, PinnedOrigin::Registered(layout)) => {
                // SAFETY: `ptr` was registered once by `register_huge` and
                // is unregistered once, after the synchronisation above.
                let r = unsafe { (cu.mem_host_unregister)(self.ptr.cast()) };
                // SAFETY: `ptr` came from `std::alloc::alloc(layout)` and is
                // freed once, now that no copy reads it.
                unsafe { std::alloc::dealloc(self.ptr, *layout) };
                r
            }
            // SAFETY: `ptr` came from cuMemHostAlloc and is freed once.
            (Api::Nvidia { cu, .. }, _) => unsafe { (cu.mem_free_host)(self.ptr.cast()) },
            // SAFETY: `ptr` came from hipHostMalloc and is freed once.
            (Api::Amd { hip, .. }, _) => unsafe { (hip.host_free)(self.ptr.cast()) },
        }; // nothing to do about a failed free at teardown
    }
}

/// 2 MiB: a huge page, the alignment and granule of [`register_huge`].
const HUGE_PAGE: usize = 2 << 20;

#[cfg(target_os = "linux")]
unsafe extern "C" {
    /// The C library's `madvise` (std links it).
    fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
}

/// Asks the kernel to back `[p, p + len)` with huge pages where it can (a
/// hint: without them the memory works the same, in 4 KiB pages).
fn advise_huge_pages(p: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const MADV_HUGEPAGE: c_int = 14;
        // SAFETY: `[p, p + len)` is one live allocation of ours, aligned to
        // a huge page; the advice changes no contents.
        let _ = unsafe { madvise(p.cast(), len, MADV_HUGEPAGE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, len);
}

/// `len` bytes (rounded up to 2 MiB) of zeroed host memory in huge pages,
/// page-locked with `cuMemHostRegister`; `None` for less than a huge page
/// (rounding up would waste more than it saves) and where any step fails
/// (the caller then asks the driver's own allocator).
fn register_huge(dev: &Arc<Device>, len: usize) -> Option<(*mut u8, std::alloc::Layout)> {
    let Api::Nvidia { cu, .. } = &dev.rt.api else {
        return None;
    };
    if len < HUGE_PAGE {
        return None;
    }
    let layout =
        std::alloc::Layout::from_size_align(len.div_ceil(HUGE_PAGE) * HUGE_PAGE, HUGE_PAGE).ok()?;
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { std::alloc::alloc(layout) };
    if p.is_null() {
        return None;
    }
    advise_huge_pages(p, layout.size());
    // SAFETY: `p` holds `layout.size()` writable bytes; zeroing them faults
    // the pages in (before registering) so they are never read uninitialised.
    unsafe { std::ptr::write_bytes(p, 0, layout.size()) };
    // SAFETY: `[p, p + size)` is our live allocation; registering does not
    // write to it, and `PinnedBuffer`'s drop unregisters it before freeing.
    let r = unsafe { (cu.mem_host_register)(p.cast(), layout.size(), 0) };
    if r != 0 {
        // SAFETY: `p` came from `alloc(layout)` and was not registered.
        unsafe { std::alloc::dealloc(p, layout) };
        return None;
    }
    Some((p, layout))
}

/// The exclusive host-side owner of a pinned buffer: reads and writes it as
/// a byte slice. Uploads take [`PinnedHostMem::shared`] and read the memory by
/// address, so callers must not write while an upload from it is in flight
/// (the engine's slot ring and GStreamer's buffer refcounts ensure that).
pub struct PinnedHostMem {
    buf: Arc<PinnedBuffer>,
}

impl PinnedHostMem {
    /// Allocates `len` bytes (at least 1) of pinned host memory.
    pub fn new(dev: &Arc<Device>, len: usize) -> Result<Self, HipError> {
        dev.make_current()?;
        let len = len.max(1);
        if let Some((p, layout)) = register_huge(dev, len) {
            return Ok(Self::keep(dev, p, len, PinnedOrigin::Registered(layout)));
        }
        let mut p: *mut c_void = std::ptr::null_mut();
        let r = match &dev.rt.api {
            // SAFETY: valid out-pointer; flags 0 = default pinned memory.
            Api::Nvidia { cu, .. } => (
                unsafe { (cu.mem_host_alloc)(&mut p, len, 0) },
                "cuMemHostAlloc",
            ),
            // SAFETY: as above.
            Api::Amd { hip, .. } => (
                unsafe { (hip.host_malloc)(&mut p, len, ffi::HIP_HOST_MALLOC_DEFAULT) },
                "hipHostMalloc",
            ),
        };
        if out_of_memory(&dev.rt.api, r.0) {
            return Err(HipError::OutOfMemory {
                bytes: len,
                what: "pinned host memory".into(),
            });
        }
        dev.rt.check(r.0, r.1)?;
        if p.is_null() {
            return Err(HipError::OutOfMemory {
                bytes: len,
                what: "pinned host memory (null)".into(),
            });
        }
        // SAFETY: fresh allocation of `len` bytes; zero it so it is never read uninitialised.
        unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0, len) };
        Ok(Self::keep(dev, p.cast(), len, PinnedOrigin::Runtime))
    }

    /// Owns `len` pinned bytes at `p` and lists them for [`pinned_owner`].
    fn keep(dev: &Arc<Device>, p: *mut u8, len: usize, origin: PinnedOrigin) -> Self {
        let buf = Arc::new(PinnedBuffer {
            dev: dev.clone(),
            ptr: p,
            len,
            origin,
        });
        PINNED
            .lock()
            .unwrap()
            .push((p as usize, len, Arc::downgrade(&buf)));
        Self { buf }
    }

    /// The buffer, for uploads and downloads by address.
    pub fn shared(&self) -> &Arc<PinnedBuffer> {
        &self.buf
    }
}

impl AsRef<[u8]> for PinnedHostMem {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `ptr` is a live allocation of `len` initialised bytes; only
        // this exclusive owner makes references into it.
        unsafe { std::slice::from_raw_parts(self.buf.ptr, self.buf.len) }
    }
}

impl AsMut<[u8]> for PinnedHostMem {
    fn as_mut(&mut self) -> &mut [u8] {
        // SAFETY: as for `as_ref`, and `&mut self` makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.buf.ptr, self.buf.len) }
    }
}

/// The pinned buffer that holds `data`, and `data`'s offset in it, if
/// `data` lies inside a live pinned buffer of this process.
pub fn pinned_owner(data: &[u8]) -> Option<(Arc<PinnedBuffer>, usize)> {
    let start = data.as_ptr() as usize;
    let end = start + data.len();
    let reg = PINNED.lock().unwrap();
    reg.iter()
        .find_map(|(a, len, weak): &(usize, usize, Weak<PinnedBuffer>)| {
            if start >= *a && end <= a + len {
                weak.upgrade().map(|b| (b, start - a))
            } else {
                None
            }
        })
}

/// An ordered queue of device work.
pub struct Stream {
    dev: Arc<Device>,
    raw: Handle,
}

// SAFETY: CUDA and HIP streams may be used from any thread.
unsafe impl Send for Stream {}
// SAFETY: as above; stream calls are thread-safe in both runtimes.
unsafe impl Sync for Stream {}

impl Stream {
    /// A non-blocking stream (it does not synchronise with the legacy default stream).
    pub fn new(dev: &Arc<Device>) -> Result<Self, HipError> {
        dev.make_current()?;
        let mut raw: Handle = std::ptr::null_mut();
        match &dev.rt.api {
            // SAFETY: valid out-pointer.
            Api::Nvidia { cu, .. } => dev.rt.check(
                unsafe { (cu.stream_create)(&mut raw, ffi::CU_STREAM_NON_BLOCKING) },
                "cuStreamCreate",
            )?,
            // SAFETY: valid out-pointer.
            Api::Amd { hip, .. } => dev.rt.check(
                unsafe { (hip.stream_create_with_flags)(&mut raw, ffi::HIP_STREAM_NON_BLOCKING) },
                "hipStreamCreateWithFlags",
            )?,
        }
        Ok(Self {
            dev: dev.clone(),
            raw,
        })
    }

    pub fn device(&self) -> &Arc<Device> {
        &self.dev
    }

    pub(crate) fn raw(&self) -> Handle {
        self.raw
    }

    /// Asynchronous 2D copy host → device: `rows` rows of `width_bytes`,
    /// from `src` at `src_offset` with `src_pitch`, to `dst` at `dst_offset`
    /// with `dst_pitch`. Bounds are checked on both sides. `src` must stay
    /// unwritten until the copy completed (record an event after it).
    #[allow(clippy::too_many_arguments)]
    pub fn upload_2d(
        &self,
        dst: &DeviceBuffer,
        dst_offset: usize,
        dst_pitch: usize,
        src: &PinnedBuffer,
        src_offset: usize,
        src_pitch: usize,
        width_bytes: usize,
        rows: usize,
    ) -> Result<(), HipError> {
        let shape = Copy2d::new(dst_offset, dst_pitch, src_pitch, width_bytes, rows);
        if !shape.fits("2D upload", src_offset, src.len, dst.bytes)? {
            return Ok(());
        }
        // SAFETY: `src_offset` is inside the allocation (checked by `fits`).
        let host = unsafe { src.ptr.add(src_offset) };
        self.copy_2d(dst, &shape, CopySource::Host(host))
    }

    /// Asynchronous 2D copy host → device from page-locked host memory that
    /// is not ours (`reg` covers `src`): as `upload_2d`, and `src` must stay
    /// allocated and unwritten, and `reg` alive, until the copy completed.
    #[allow(clippy::too_many_arguments)]
    pub fn upload_2d_registered(
        &self,
        dst: &DeviceBuffer,
        dst_offset: usize,
        dst_pitch: usize,
        src: &[u8],
        reg: &HostRegistration,
        src_pitch: usize,
        width_bytes: usize,
        rows: usize,
    ) -> Result<(), HipError> {
        if !matches!(self.dev.rt.api, Api::Nvidia { .. }) || !reg.covers(src) {
            return Err(HipError::Usage(
                "a registered upload needs NVIDIA and a registration covering its source".into(),
            ));
        }
        let shape = Copy2d::new(dst_offset, dst_pitch, src_pitch, width_bytes, rows);
        if !shape.fits("2D upload from registered memory", 0, src.len(), dst.bytes)? {
            return Ok(());
        }
        self.copy_2d(dst, &shape, CopySource::Host(src.as_ptr()))
    }

    /// Asynchronous 2D copy device → device: `rows` rows of `width_bytes`
    /// from the device address `src` (memory this process's context owns,
    /// such as a GStreamer GPU buffer mapped for the device) with
    /// `src_pitch`, to `dst` at `dst_offset` with `dst_pitch`. The
    /// destination is bounds-checked; the source is the caller's promise
    /// (`src_bytes` is the size of the mapped source, checked too).
    #[allow(clippy::too_many_arguments)]
    pub fn copy_2d_from_device(
        &self,
        dst: &DeviceBuffer,
        dst_offset: usize,
        dst_pitch: usize,
        src: u64,
        src_bytes: usize,
        src_pitch: usize,
        width_bytes: usize,
        rows: usize,
    ) -> Result<(), HipError> {
        if src == 0 {
            return Err(HipError::Usage("2D device copy from a null address".into()));
        }
        let shape = Copy2d::new(dst_offset, dst_pitch, src_pitch, width_bytes, rows);
        if !shape.fits("2D device copy", 0, src_bytes, dst.bytes)? {
            return Ok(());
        }
        self.copy_2d(dst, &shape, CopySource::Device(src))
    }

    /// Asynchronous 2D copy between two device addresses of this process,
    /// either of which may belong to another context or device (GStreamer
    /// memory allocated elsewhere): `rows` rows of `width_bytes` from `src`
    /// (`src_bytes` mapped there, rows `src_pitch` apart) to `dst`
    /// (`dst_bytes`, `dst_pitch`), both bounds-checked. Unified addressing
    /// finds each side's owner (NVIDIA: `CU_MEMORYTYPE_UNIFIED`; HIP routes
    /// a device-to-device copy between devices itself).
    pub fn copy_2d_between(
        &self,
        (dst, dst_bytes): (u64, usize),
        dst_pitch: usize,
        (src, src_bytes): (u64, usize),
        (src_pitch, width_bytes, rows): (usize, usize, usize),
    ) -> Result<(), HipError> {
        if src == 0 || dst == 0 {
            return Err(HipError::Usage(
                "2D copy between devices with a null address".into(),
            ));
        }
        let shape = Copy2d::new(0, dst_pitch, src_pitch, width_bytes, rows);
        if !shape.fits("2D copy between devices", 0, src_bytes, dst_bytes)? {
            return Ok(());
        }
        self.copy_2d_to(dst, &shape, CopySource::Anywhere(src))
    }

    /// Queues a copy of `bytes` from `src` at `src_offset` to `dst` at
    /// `dst_offset`, both buffers of this device (bounds-checked).
    pub fn copy(
        &self,
        dst: &DeviceBuffer,
        dst_offset: usize,
        src: &DeviceBuffer,
        src_offset: usize,
        bytes: usize,
    ) -> Result<(), HipError> {
        let shape = Copy2d::new(dst_offset, bytes, bytes, bytes, 1);
        if !shape.fits("device copy", src_offset, src.bytes(), dst.bytes)? {
            return Ok(());
        }
        self.copy_2d(dst, &shape, CopySource::Device(src.ptr + src_offset as u64))
    }

    /// Reads `rows` rows of `width_bytes` from the device address `src`
    /// (`src_bytes` mapped there, rows `src_pitch` apart) into `dst`,
    /// packed, and waits for it: small reads from frames in GPU memory
    /// (GStreamer's, mapped for the device).
    pub fn read_2d_from_device(
        &self,
        dst: &mut [u8],
        (src, src_bytes): (u64, usize),
        src_pitch: usize,
        width_bytes: usize,
        rows: usize,
    ) -> Result<(), HipError> {
        if rows == 0 || width_bytes == 0 {
            return Ok(());
        }
        if src == 0
            || width_bytes > src_pitch
            || src_pitch * (rows - 1) + width_bytes > src_bytes
            || dst.len() < rows * width_bytes
        {
            return Err(HipError::Usage(format!(
                "2D read of {rows}x{width_bytes} bytes out of bounds (source {src_bytes} bytes, pitch {src_pitch}; destination {} bytes)",
                dst.len()
            )));
        }
        self.dev.make_current()?;
        match &self.dev.rt.api {
            Api::Nvidia { cu, .. } => {
                let p = ffi::CudaMemcpy2D {
                    src_x_in_bytes: 0,
                    src_y: 0,
                    src_memory_type: ffi::CU_MEMORYTYPE_DEVICE,
                    src_host: std::ptr::null(),
                    src_device: src,
                    src_array: std::ptr::null_mut(),
                    src_pitch,
                    dst_x_in_bytes: 0,
                    dst_y: 0,
                    dst_memory_type: ffi::CU_MEMORYTYPE_HOST,
                    dst_host: dst.as_mut_ptr().cast(),
                    dst_device: 0,
                    dst_array: std::ptr::null_mut(),
                    dst_pitch: width_bytes,
                    width_in_bytes: width_bytes,
                    height: rows,
                };
                // SAFETY: both regions checked above; `dst` is borrowed
                // mutably until the stream is synchronised below; `p`
                // lives across the call.
                self.dev.rt.check(
                    unsafe { (cu.memcpy_2d_async)(&p, self.raw) },
                    "cuMemcpy2DAsync",
                )?;
            }
            Api::Amd { hip, .. } => {
                // SAFETY: as above; HIP takes both addresses as plain pointers.
                self.dev.rt.check(
                    unsafe {
                        (hip.memcpy_2d_async)(
                            dst.as_mut_ptr() as u64,
                            width_bytes,
                            src as usize as *const c_void,
                            src_pitch,
                            width_bytes,
                            rows,
                            ffi::HIP_MEMCPY_DEVICE_TO_HOST,
                            self.raw,
                        )
                    },
                    "hipMemcpy2DAsync",
                )?;
            }
        }
        self.synchronize()
    }

    /// Queues a 2D copy whose bounds `Copy2d::fits` checked.
    fn copy_2d(&self, dst: &DeviceBuffer, c: &Copy2d, src: CopySource) -> Result<(), HipError> {
        self.copy_2d_to(dst.ptr + c.dst_offset as u64, c, src)
    }

    /// `copy_2d` to the device address `dst_device` (checked by the caller).
    fn copy_2d_to(&self, dst_device: u64, c: &Copy2d, src: CopySource) -> Result<(), HipError> {
        match &self.dev.rt.api {
            Api::Nvidia { cu, .. } => {
                let (src_memory_type, src_host, src_device) = match src {
                    CopySource::Host(p) => (ffi::CU_MEMORYTYPE_HOST, p.cast(), 0),
                    CopySource::Device(d) => (ffi::CU_MEMORYTYPE_DEVICE, std::ptr::null(), d),
                    CopySource::Anywhere(d) => (ffi::CU_MEMORYTYPE_UNIFIED, std::ptr::null(), d),
                };
                let dst_memory_type = match src {
                    CopySource::Anywhere(_) => ffi::CU_MEMORYTYPE_UNIFIED,
                    _ => ffi::CU_MEMORYTYPE_DEVICE,
                };
                let p = ffi::CudaMemcpy2D {
                    src_x_in_bytes: 0,
                    src_y: 0,
                    src_memory_type,
                    src_host,
                    src_device,
                    src_array: std::ptr::null_mut(),
                    src_pitch: c.src_pitch,
                    dst_x_in_bytes: 0,
                    dst_y: 0,
                    dst_memory_type,
                    dst_host: std::ptr::null_mut(),
                    dst_device,
                    dst_array: std::ptr::null_mut(),
                    dst_pitch: c.dst_pitch,
                    width_in_bytes: c.width_bytes,
                    height: c.rows,
                };
                // SAFETY: both regions were bounds-checked by `fits` (a
                // device source against the size its mapping reported); a
                // host source is pinned or page-locked; `p` lives across the call.
                self.dev.rt.check(
                    unsafe { (cu.memcpy_2d_async)(&p, self.raw) },
                    "cuMemcpy2DAsync",
                )
            }
            Api::Amd { hip, .. } => {
                let (src_ptr, kind) = match src {
                    CopySource::Host(p) => (p.cast::<c_void>(), ffi::HIP_MEMCPY_HOST_TO_DEVICE),
                    CopySource::Device(d) | CopySource::Anywhere(d) => (
                        d as usize as *const c_void,
                        ffi::HIP_MEMCPY_DEVICE_TO_DEVICE,
                    ),
                };
                // SAFETY: as above; HIP takes device addresses as plain pointers.
                self.dev.rt.check(
                    unsafe {
                        (hip.memcpy_2d_async)(
                            dst_device,
                            c.dst_pitch,
                            src_ptr,
                            c.src_pitch,
                            c.width_bytes,
                            c.rows,
                            kind,
                            self.raw,
                        )
                    },
                    "hipMemcpy2DAsync",
                )
            }
        }
    }

    /// Asynchronous copy of `bytes` device → pinned host.
    pub fn download(
        &self,
        dst: &PinnedBuffer,
        dst_offset: usize,
        src: &DeviceBuffer,
        src_offset: usize,
        bytes: usize,
    ) -> Result<(), HipError> {
        if dst_offset + bytes > dst.len || src_offset + bytes > src.bytes {
            return Err(HipError::Usage(format!(
                "download of {bytes} bytes out of bounds"
            )));
        }
        match &self.dev.rt.api {
            // SAFETY: both regions bounds-checked above.
            Api::Nvidia { cu, .. } => self.dev.rt.check(
                unsafe {
                    (cu.memcpy_dtoh_async)(
                        dst.ptr.add(dst_offset).cast(),
                        src.ptr + src_offset as u64,
                        bytes,
                        self.raw,
                    )
                },
                "cuMemcpyDtoHAsync",
            ),
            // SAFETY: both regions bounds-checked above.
            Api::Amd { hip, .. } => self.dev.rt.check(
                unsafe {
                    (hip.memcpy_async)(
                        dst.ptr.add(dst_offset).cast(),
                        (src.ptr + src_offset as u64) as *const c_void,
                        bytes,
                        ffi::HIP_MEMCPY_DEVICE_TO_HOST,
                        self.raw,
                    )
                },
                "hipMemcpyAsync",
            ),
        }
    }

    /// Asynchronous host → device copy of a small host slice through
    /// pageable memory, completed before returning (tables at set-up).
    pub fn upload_blocking(
        &self,
        dst: &DeviceBuffer,
        dst_offset: usize,
        src: &[u8],
    ) -> Result<(), HipError> {
        if dst_offset + src.len() > dst.bytes {
            return Err(HipError::Usage(format!(
                "upload of {} bytes out of bounds",
                src.len()
            )));
        }
        match &self.dev.rt.api {
            // SAFETY: bounds checked; the stream is synchronised below, before `src` can go away.
            Api::Nvidia { cu, .. } => self.dev.rt.check(
                unsafe {
                    (cu.memcpy_htod_async)(
                        dst.ptr + dst_offset as u64,
                        src.as_ptr().cast(),
                        src.len(),
                        self.raw,
                    )
                },
                "cuMemcpyHtoDAsync",
            )?,
            // SAFETY: as above.
            Api::Amd { hip, .. } => self.dev.rt.check(
                unsafe {
                    (hip.memcpy_async)(
                        (dst.ptr + dst_offset as u64) as *mut c_void,
                        src.as_ptr().cast(),
                        src.len(),
                        ffi::HIP_MEMCPY_HOST_TO_DEVICE,
                        self.raw,
                    )
                },
                "hipMemcpyAsync",
            )?,
        }
        self.synchronize()
    }

    /// Asynchronously sets `bytes` bytes of `dst` from `offset` to `value`.
    pub fn memset(
        &self,
        dst: &DeviceBuffer,
        offset: usize,
        bytes: usize,
        value: u8,
    ) -> Result<(), HipError> {
        if offset + bytes > dst.bytes {
            return Err(HipError::Usage(format!(
                "memset of {bytes} bytes out of bounds"
            )));
        }
        match &self.dev.rt.api {
            // SAFETY: bounds checked above.
            Api::Nvidia { cu, .. } => self.dev.rt.check(
                unsafe { (cu.memset_d8_async)(dst.ptr + offset as u64, value, bytes, self.raw) },
                "cuMemsetD8Async",
            ),
            // SAFETY: bounds checked above.
            Api::Amd { hip, .. } => self.dev.rt.check(
                unsafe {
                    (hip.memset_async)(dst.ptr + offset as u64, c_int::from(value), bytes, self.raw)
                },
                "hipMemsetAsync",
            ),
        }
    }

    /// Records `ev` after the work queued so far.
    pub fn record(&self, ev: &Event) -> Result<(), HipError> {
        let rt = &self.dev.rt;
        let (f, call) = rt.pick(
            |c| (c.event_record, "cuEventRecord"),
            |h| (h.event_record, "hipEventRecord"),
        );
        // SAFETY: both handles are live.
        rt.check(unsafe { f(ev.raw, self.raw) }, call)
    }

    /// Makes later work on this stream wait for `ev` (recorded on any stream).
    pub fn wait(&self, ev: &Event) -> Result<(), HipError> {
        let rt = &self.dev.rt;
        let (f, call) = rt.pick(
            |c| (c.stream_wait_event, "cuStreamWaitEvent"),
            |h| (h.stream_wait_event, "hipStreamWaitEvent"),
        );
        // SAFETY: both handles are live.
        rt.check(unsafe { f(self.raw, ev.raw, 0) }, call)
    }

    pub fn synchronize(&self) -> Result<(), HipError> {
        let rt = &self.dev.rt;
        let (f, call) = rt.pick(
            |c| (c.stream_synchronize, "cuStreamSynchronize"),
            |h| (h.stream_synchronize, "hipStreamSynchronize"),
        );
        // SAFETY: live handle.
        rt.check(unsafe { f(self.raw) }, call)
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        let _ = self.synchronize(); // teardown: nothing to report to
        let (f, _) = self.dev.rt.pick(
            |c| (c.stream_destroy, "cuStreamDestroy"),
            |h| (h.stream_destroy, "hipStreamDestroy"),
        );
        // SAFETY: destroys the stream created in `new`, once.
        let _ = unsafe { f(self.raw) };
    }
}

/// A point in a stream's work that the host or other streams can wait for.
pub struct Event {
    dev: Arc<Device>,
    raw: Handle,
}

// SAFETY: CUDA and HIP events may be used from any thread.
unsafe impl Send for Event {}
// SAFETY: as above.
unsafe impl Sync for Event {}

impl Event {
    /// An event that can time work (`elapsed_ms`); a thread waiting on it
    /// may spin, as the context's scheduling policy decides.
    pub fn new(dev: &Arc<Device>) -> Result<Self, HipError> {
        Self::with_flags(dev, ffi::CU_EVENT_DEFAULT, ffi::HIP_EVENT_DEFAULT)
    }

    /// An event a thread waits on asleep rather than spinning, untimed.
    /// With one context and more cores than contexts, CUDA's default policy
    /// spins a waiting thread on its core; an element waiting for its
    /// oldest frame would then take a core from the sources feeding it.
    pub fn blocking(dev: &Arc<Device>) -> Result<Self, HipError> {
        Self::with_flags(
            dev,
            ffi::CU_EVENT_BLOCKING_SYNC | ffi::CU_EVENT_DISABLE_TIMING,
            ffi::HIP_EVENT_BLOCKING_SYNC | ffi::HIP_EVENT_DISABLE_TIMING,
        )
    }

    fn with_flags(
        dev: &Arc<Device>,
        cu_flags: c_uint,
        hip_flags: c_uint,
    ) -> Result<Self, HipError> {
        dev.make_current()?;
        let mut raw: Handle = std::ptr::null_mut();
        match &dev.rt.api {
            // SAFETY: valid out-pointer.
            Api::Nvidia { cu, .. } => dev.rt.check(
                unsafe { (cu.event_create)(&mut raw, cu_flags) },
                "cuEventCreate",
            )?,
            // SAFETY: valid out-pointer.
            Api::Amd { hip, .. } => dev.rt.check(
                unsafe { (hip.event_create_with_flags)(&mut raw, hip_flags) },
                "hipEventCreateWithFlags",
            )?,
        }
        Ok(Self {
            dev: dev.clone(),
            raw,
        })
    }

    /// True once the work before the last `record` has completed.
    pub fn query(&self) -> Result<bool, HipError> {
        let (f, name) = self.dev.rt.pick(
            |c| (c.event_query, "cuEventQuery"),
            |h| (h.event_query, "hipEventQuery"),
        );
        // SAFETY: live handle.
        let r = unsafe { f(self.raw) };
        if r == ffi::CUDA_ERROR_NOT_READY || r == ffi::HIP_ERROR_NOT_READY {
            return Ok(false);
        }
        self.dev.rt.check(r, name)?;
        Ok(true)
    }

    pub fn synchronize(&self) -> Result<(), HipError> {
        let rt = &self.dev.rt;
        let (f, call) = rt.pick(
            |c| (c.event_synchronize, "cuEventSynchronize"),
            |h| (h.event_synchronize, "hipEventSynchronize"),
        );
        // SAFETY: live handle.
        rt.check(unsafe { f(self.raw) }, call)
    }

    /// Milliseconds between two completed events.
    pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f32, HipError> {
        let rt = &start.dev.rt;
        let (f, call) = rt.pick(
            |c| (c.event_elapsed_time, "cuEventElapsedTime"),
            |h| (h.event_elapsed_time, "hipEventElapsedTime"),
        );
        let mut ms = 0f32;
        // SAFETY: valid out-pointer, live handles.
        rt.check(unsafe { f(&mut ms, start.raw, end.raw) }, call)?;
        Ok(ms)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        let (f, _) = self.dev.rt.pick(
            |c| (c.event_destroy, "cuEventDestroy"),
            |h| (h.event_destroy, "hipEventDestroy"),
        );
        // SAFETY: destroys the event created in `new`, once.
        let _ = unsafe { f(self.raw) }; // teardown: nothing to report to
    }
}
