//! The run-time HIP layer: the only module with `unsafe`.
//!
//! A HIP-shaped safe API (device, stream, event, device buffer, pinned host
//! buffer, 2D copies, module, kernel launch) over two function tables loaded
//! with `libloading` on first use: AMD's `libamdhip64` + hiprtc and NVIDIA's
//! `libcuda` + nvrtc (what HIP's own NVIDIA path wraps). Nothing is linked, so
//! the plugin loads, and `gst-inspect-1.0 vmafhip` works, with neither.
//!
//! Every call is checked; a failure becomes a [`HipError`] naming the call.
//! Above the FFI, [`twin`] is what an extractor's GPU twin is written
//! against; the GPU backend (`crate::gpu`) runs the twins with no `unsafe`.
//! Also here, for their `unsafe`: NVDEC for the command ([`nvdec`]) and
//! GStreamer's CUDA memory for the element ([`gst_gpu`]).

mod device;
mod ffi;
#[cfg(feature = "plugin")]
pub mod gst_gpu;
pub(crate) mod module;
pub mod nvdec;
pub mod twin;

pub use device::{
    Device, DeviceBuffer, DeviceInfo, Event, HostRegistration, PinnedBuffer, PinnedHostMem, Stream,
    pinned_owner,
};
pub use module::{Arg, ArgKind, Kernel, Module, PRELUDE, cache_dir, compile, compile_source};
pub use twin::{KernelSet, MAX_WIDTH};

use ffi::{CudaFns, HipFns, RtcFns};
use libloading::Library;
use std::ffi::{CStr, c_int};
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Which vendor stack to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Vendor {
    /// AMD first, then NVIDIA.
    Auto,
    Amd,
    Nvidia,
}

impl Vendor {
    /// `VMAFHIP_VENDOR` (`auto`, `amd`, `nvidia`) overrides `Auto`.
    pub fn from_env_or(self) -> Vendor {
        if self != Vendor::Auto {
            return self;
        }
        match std::env::var("VMAFHIP_VENDOR").ok().as_deref() {
            Some("amd") => Vendor::Amd,
            Some("nvidia") => Vendor::Nvidia,
            _ => Vendor::Auto,
        }
    }

    /// Every vendor's name, as `--vendor` and the property take them.
    pub const NAMES: [&'static str; 3] = ["auto", "amd", "nvidia"];

    /// The vendor named `name`.
    pub fn parse(name: &str) -> Option<Vendor> {
        match name {
            "auto" => Some(Vendor::Auto),
            "amd" => Some(Vendor::Amd),
            "nvidia" => Some(Vendor::Nvidia),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Vendor::Auto => "auto",
            Vendor::Amd => "amd",
            Vendor::Nvidia => "nvidia",
        }
    }
}

/// Everything the HIP layer can report.
#[derive(Clone, Debug, PartialEq)]
pub enum HipError {
    /// No runtime library could be opened; lists what was tried.
    NotFound(String),
    /// The runtime loaded but has no usable device.
    NoDevice(String),
    /// A runtime call failed: the call, its code and the runtime's name for it.
    Call {
        call: &'static str,
        code: i32,
        name: String,
    },
    /// The kernel compiler rejected a source; `log` is its output.
    Compile {
        file: String,
        arch: String,
        log: String,
    },
    /// A device allocation failed for lack of memory.
    OutOfMemory { bytes: usize, what: String },
    /// Arguments do not fit a kernel's declared signature, or a copy is out of bounds.
    Usage(String),
}

impl fmt::Display for HipError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HipError::NotFound(s) => write!(f, "no GPU runtime found: {s}"),
            HipError::NoDevice(s) => write!(f, "no usable GPU: {s}"),
            HipError::Call { call, code, name } => write!(f, "{call} failed: {name} ({code})"),
            HipError::Compile { file, arch, log } => {
                write!(f, "compiling {file} for {arch} failed:\n{log}")
            }
            HipError::OutOfMemory { bytes, what } => {
                write!(f, "out of GPU memory allocating {bytes} bytes for {what}")
            }
            HipError::Usage(s) => write!(f, "{s}"),
        }
    }
}

impl std::error::Error for HipError {}

/// What opening the GPU took so far in this process, step by step
/// (libraries, driver initialisation, context).
static STEPS: Mutex<Vec<(&'static str, Duration)>> = Mutex::new(Vec::new());

/// Notes that step `what` began at `start` and has just ended.
pub(crate) fn record_step(what: &'static str, start: Instant) {
    let took = start.elapsed();
    STEPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((what, took));
}

/// The steps of opening the GPU so far and how long each took, for
/// diagnostics: `libcuda … ms, cuInit … ms, ...`.
pub fn startup_steps() -> String {
    let steps = STEPS.lock().unwrap_or_else(|e| e.into_inner());
    let parts: Vec<String> = steps
        .iter()
        .map(|(what, took)| format!("{what} {:.1} ms", took.as_secs_f64() * 1e3))
        .collect();
    parts.join(", ")
}

/// One loaded vendor stack.
pub struct Runtime {
    api: Api,
    /// Library names actually opened, for messages.
    pub libraries: String,
    /// Runtime and compiler versions, part of the kernel cache key.
    pub version: String,
    // Keep the libraries open for as long as the tables are used.
    _libs: Vec<Library>,
}

pub(crate) enum Api {
    Amd {
        hip: HipFns,
        rtc: RtcFns,
        props: Option<(ffi::HipGetDeviceProperties, usize)>,
    },
    Nvidia {
        cu: CudaFns,
        rtc: RtcFns,
    },
}

impl Runtime {
    pub fn vendor(&self) -> Vendor {
        match self.api {
            Api::Amd { .. } => Vendor::Amd,
            Api::Nvidia { .. } => Vendor::Nvidia,
        }
    }

    /// The runtime of `vendor`, loaded once per process.
    pub fn load(vendor: Vendor) -> Result<Arc<Runtime>, HipError> {
        static AMD: OnceLock<Result<Arc<Runtime>, HipError>> = OnceLock::new();
        static NVIDIA: OnceLock<Result<Arc<Runtime>, HipError>> = OnceLock::new();
        match vendor.from_env_or() {
            Vendor::Amd => AMD.get_or_init(load_amd).clone(),
            Vendor::Nvidia => NVIDIA.get_or_init(load_nvidia).clone(),
            // With no AMD compute device node there is no AMD GPU to find:
            // the AMD runtime is not loaded just to say so (its search
            // costs tens of milliseconds on an NVIDIA machine).
            Vendor::Auto if !amd_compute_node() => {
                NVIDIA.get_or_init(load_nvidia).clone().map_err(|nv| {
                    HipError::NoDevice(format!(
                        "AMD: no {AMD_COMPUTE_NODE} (no AMD GPU driver); NVIDIA: {nv}"
                    ))
                })
            }
            Vendor::Auto => match AMD.get_or_init(timed_load_amd).clone() {
                Ok(rt) if rt.device_count().unwrap_or(0) > 0 => Ok(rt),
                amd => match NVIDIA.get_or_init(load_nvidia).clone() {
                    Ok(rt) => Ok(rt),
                    Err(nv) => Err(match amd {
                        Ok(_) => HipError::NoDevice(format!(
                            "AMD runtime loaded but reports no device; NVIDIA: {nv}"
                        )),
                        Err(a) => HipError::NotFound(format!("AMD: {a}; NVIDIA: {nv}")),
                    }),
                },
            },
        }
    }

    /// Number of devices the runtime sees (0 when it reports "no device").
    pub fn device_count(&self) -> Result<usize, HipError> {
        let mut n: c_int = 0;
        match &self.api {
            Api::Amd { hip, .. } => {
                // SAFETY: `n` is a valid out-pointer.
                let r = unsafe { (hip.get_device_count)(&mut n) };
                if r == ffi::HIP_ERROR_NO_DEVICE || r == ffi::HIP_ERROR_INVALID_DEVICE {
                    return Ok(0);
                }
                self.check(r, "hipGetDeviceCount")?;
            }
            Api::Nvidia { cu, .. } => {
                // SAFETY: `n` is a valid out-pointer.
                self.check(unsafe { (cu.device_get_count)(&mut n) }, "cuDeviceGetCount")?;
            }
        }
        Ok(n.max(0) as usize)
    }

    /// Turns a runtime return code into a result naming the call.
    pub(crate) fn check(&self, code: c_int, call: &'static str) -> Result<(), HipError> {
        if code == 0 {
            return Ok(());
        }
        Err(HipError::Call {
            call,
            code,
            name: self.error_name(code),
        })
    }

    /// The same call from either table, where both vendors' functions have
    /// one C signature: the function and its name, for `check`.
    pub(crate) fn pick<F: Copy>(
        &self,
        nvidia: impl FnOnce(&CudaFns) -> (F, &'static str),
        amd: impl FnOnce(&HipFns) -> (F, &'static str),
    ) -> (F, &'static str) {
        match &self.api {
            Api::Nvidia { cu, .. } => nvidia(cu),
            Api::Amd { hip, .. } => amd(hip),
        }
    }

    /// The kernel compiler of this runtime.
    pub(crate) fn rtc(&self) -> &RtcFns {
        match &self.api {
            Api::Amd { rtc, .. } | Api::Nvidia { rtc, .. } => rtc,
        }
    }

    fn error_name(&self, code: c_int) -> String {
        match &self.api {
            Api::Amd { hip, .. } => {
                // SAFETY: hipGetErrorName returns a static string for any code.
                let p = unsafe { (hip.get_error_name)(code) };
                cstr_or(p, "unknown HIP error")
            }
            Api::Nvidia { cu, .. } => {
                let mut p = std::ptr::null();
                // SAFETY: `p` is a valid out-pointer; the string is static.
                let r = unsafe { (cu.get_error_name)(code, &mut p) };
                if r != 0 {
                    return "unknown CUDA error".into();
                }
                cstr_or(p, "unknown CUDA error")
            }
        }
    }
}

fn cstr_or(p: *const std::ffi::c_char, default: &str) -> String {
    if p.is_null() {
        return default.into();
    }
    // SAFETY: the runtimes return NUL-terminated static strings.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// The hiprtc library of the ROCm whose runtime is `hipname`: the same
/// soname major (`libamdhip64.so.7` → `libhiprtc.so.7`), or the same
/// directory; None for ROCm 5, whose runtime library carries hiprtc.
fn hiprtc_for(hipname: &str) -> Option<String> {
    let (dir, file) = match hipname.rsplit_once('/') {
        Some((d, f)) => (format!("{d}/"), f),
        None => (String::new(), hipname),
    };
    let suffix = file.strip_prefix("libamdhip64.so")?;
    match suffix {
        ".5" => None,
        _ if suffix.starts_with(".5.") => None,
        _ => Some(format!("{dir}libhiprtc.so{suffix}")),
    }
}

/// The AMD runtime libraries to try, in order: `VMAFHIP_HIP_LIBRARY` alone
/// when it is set (a ROCm outside the loader's path, e.g.
/// `/opt/rocm-6.2.0/lib/libamdhip64.so.6`; its hiprtc is looked for beside
/// it), else the sonames of ROCm 7, 6 and 5, then `/opt/rocm/lib`.
fn amd_candidates(env: Option<String>) -> Vec<String> {
    match env.filter(|p| !p.is_empty()) {
        Some(p) => vec![p],
        None => [
            "libamdhip64.so.7",
            "libamdhip64.so.6",
            "libamdhip64.so.5",
            "/opt/rocm/lib/libamdhip64.so",
        ]
        .map(String::from)
        .to_vec(),
    }
}

/// The device node through which ROCm reaches every AMD GPU (amdgpu's
/// KFD); a container given an AMD GPU is given this node too.
const AMD_COMPUTE_NODE: &str = "/dev/kfd";

/// Whether this machine has AMD's compute device node.
fn amd_compute_node() -> bool {
    std::path::Path::new(AMD_COMPUTE_NODE).exists()
}

/// `load_amd`, its time recorded as a step (on an NVIDIA machine: the
/// search for a library that is not there).
fn timed_load_amd() -> Result<Arc<Runtime>, HipError> {
    let t = Instant::now();
    let rt = load_amd();
    record_step("AMD runtime", t);
    rt
}

fn load_amd() -> Result<Arc<Runtime>, HipError> {
    let names = amd_candidates(std::env::var("VMAFHIP_HIP_LIBRARY").ok());
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let (hiplib, hipname) = ffi::open_first(&names).map_err(HipError::NotFound)?;
    // SAFETY: libamdhip64 exports these functions with these C signatures
    // (hip_runtime_api.h of ROCm 5.2 and HIP 6/7).
    let hip = unsafe { HipFns::load(&hiplib, &hipname) }.map_err(HipError::NotFound)?;
    // ROCm 6+ ship hiprtc separately; ROCm 5 exports it from libamdhip64.
    // The compiler must come from the same ROCm as the runtime (its code
    // objects target that runtime's loader), so it is chosen by the runtime
    // library that was found, never by whatever hiprtc is first on the path.
    let mut libs = Vec::new();
    let (rtc, rtcname) = match hiprtc_for(&hipname) {
        Some(want) => match ffi::open_first(&[want.as_str()]) {
            Ok((lib, name)) => {
                // SAFETY: hiprtc's C API, same signatures in every ROCm since 5.
                let t = unsafe { RtcFns::load(&lib, &name, &ffi::HIPRTC) }
                    .map_err(HipError::NotFound)?;
                libs.push(lib);
                (t, name)
            }
            // An unversioned ROCm 5 install carries hiprtc in the runtime.
            // SAFETY: as above.
            Err(e) => match unsafe { RtcFns::load(&hiplib, &hipname, &ffi::HIPRTC) } {
                Ok(t) => (t, hipname.clone()),
                Err(_) => {
                    return Err(HipError::NotFound(format!(
                        "{hipname} was found but not the hiprtc of the same ROCm ({e})"
                    )));
                }
            },
        },
        // SAFETY: ROCm 5's libamdhip64 exports hiprtc's C API itself.
        None => (
            unsafe { RtcFns::load(&hiplib, &hipname, &ffi::HIPRTC) }.map_err(|e| {
                HipError::NotFound(format!("hiprtc: {hipname} does not carry it: {e}"))
            })?,
            hipname.clone(),
        ),
    };
    // SAFETY: the R0600 symbol takes hipDeviceProp_tR0600*, the old one the
    // ROCm 5 struct; our buffer is larger than either.
    let props = unsafe {
        match hiplib.get::<ffi::HipGetDeviceProperties>(b"hipGetDevicePropertiesR0600\0") {
            Ok(f) => Some((*f, ffi::GCN_ARCH_OFFSET_R0600)),
            Err(_) => hiplib
                .get::<ffi::HipGetDeviceProperties>(b"hipGetDeviceProperties\0")
                .ok()
                .map(|f| (*f, ffi::GCN_ARCH_OFFSET_R0500)),
        }
    };
    let mut rt = Runtime {
        api: Api::Amd { hip, rtc, props },
        libraries: format!("{hipname} + hiprtc from {rtcname}"),
        version: String::new(),
        _libs: Vec::new(),
    };
    libs.insert(0, hiplib);
    rt._libs = libs;
    if let Api::Amd { hip, rtc, props } = &rt.api {
        // SAFETY: plain calls with valid out-pointers.
        // With no AMD GPU, ROCm answers hipErrorNoDevice (100) or, as ROCm
        // 5.2 does, hipErrorInvalidDevice (101): the runtime is still usable
        // for compiling, and `device_count` reports 0.
        rt.check(unsafe { (hip.init)(0) }, "hipInit")
            .or_else(|e| match e {
                HipError::Call { code, .. }
                    if code == ffi::HIP_ERROR_NO_DEVICE
                        || code == ffi::HIP_ERROR_INVALID_DEVICE =>
                {
                    Ok(())
                }
                e => Err(e),
            })?;
        let mut v: c_int = 0;
        // SAFETY: valid out-pointer.
        rt.check(
            unsafe { (hip.runtime_get_version)(&mut v) },
            "hipRuntimeGetVersion",
        )?;
        let (mut a, mut b) = (0, 0);
        // SAFETY: valid out-pointers.
        let _ = unsafe { (rtc.version)(&mut a, &mut b) }; // version is informational only
        rt.version = format!("hip{v}-hiprtc{a}.{b}");
        // HIP_VERSION is major * 10^7 + minor * 10^5 + patch. From ROCm 6 on
        // the properties struct has the R0600 layout, read only through the
        // R0600 symbol; a ROCm 6+ runtime without it is one we cannot read.
        let major = v / 10_000_000;
        let r0600 = matches!(props, Some((_, off)) if *off == ffi::GCN_ARCH_OFFSET_R0600);
        if major >= 6 && !r0600 {
            return Err(HipError::NotFound(format!(
                "{hipname} reports HIP {major}.x but does not export hipGetDevicePropertiesR0600; \
                 its device-properties layout is unknown"
            )));
        }
    }
    Ok(Arc::new(rt))
}

fn load_nvidia() -> Result<Arc<Runtime>, HipError> {
    // nvrtc is opened beside the driver's initialisation, which takes longer.
    std::thread::scope(|s| {
        let nvrtc = s.spawn(open_nvrtc);
        let t = Instant::now();
        let (culib, cuname) =
            ffi::open_first(&["libcuda.so.1", "libcuda.so"]).map_err(HipError::NotFound)?;
        // SAFETY: libcuda exports the driver API with these signatures (cuda.h).
        let cu = unsafe { CudaFns::load(&culib, &cuname) }.map_err(HipError::NotFound)?;
        record_step("libcuda", t);
        let t = Instant::now();
        // SAFETY: cuInit with flags 0.
        let init = unsafe { (cu.init)(0) };
        record_step("cuInit", t);
        let (rtclib, rtcname, rtc) = nvrtc
            .join()
            .unwrap_or_else(|_| Err(HipError::NotFound("opening nvrtc panicked".into())))?;
        let mut rt = Runtime {
            api: Api::Nvidia { cu, rtc },
            libraries: format!("{cuname} + {rtcname}"),
            version: String::new(),
            _libs: vec![culib, rtclib],
        };
        rt.check(init, "cuInit")?;
        if let Api::Nvidia { cu, rtc } = &rt.api {
            let mut v: c_int = 0;
            // SAFETY: valid out-pointer.
            rt.check(
                unsafe { (cu.driver_get_version)(&mut v) },
                "cuDriverGetVersion",
            )?;
            let (mut a, mut b) = (0, 0);
            // SAFETY: valid out-pointers.
            let _ = unsafe { (rtc.version)(&mut a, &mut b) }; // informational only
            rt.version = format!("cuda{v}-nvrtc{a}.{b}");
        }
        Ok(Arc::new(rt))
    })
}

/// NVIDIA's kernel compiler: the library, its name and its functions.
fn open_nvrtc() -> Result<(Library, String, RtcFns), HipError> {
    let t = Instant::now();
    let (lib, name) = ffi::open_first(&[
        "libnvrtc.so.13",
        "libnvrtc.so.12",
        "/usr/local/cuda/lib64/libnvrtc.so",
    ])
    .map_err(|e| HipError::NotFound(format!("nvrtc: {e}")))?;
    // SAFETY: nvrtc's C API (nvrtc.h), stable since CUDA 11.
    let rtc = unsafe { RtcFns::load(&lib, &name, &ffi::NVRTC) }.map_err(HipError::NotFound)?;
    record_step("nvrtc", t);
    Ok((lib, name, rtc))
}

/// Address ranges of live pinned buffers, so an upload can tell whether a
/// host slice is DMA-able as it stands (see [`pinned_owner`]).
pub(crate) static PINNED: Mutex<Vec<(usize, usize, std::sync::Weak<PinnedBuffer>)>> =
    Mutex::new(Vec::new());

/// The bytes of a `u16` slice (native endian), for uploads of deep pictures.
pub fn u16_bytes(v: &[u16]) -> &[u8] {
    // SAFETY: u8 has no alignment or validity requirements, the length is
    // exactly the slice's size in bytes, and the borrow is carried over.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// A little-endian byte slice seen as `u16` samples without copying, when
/// it is 2-byte aligned and of even length on a little-endian machine (so a
/// deep frame in pinned memory stays in place for the upload).
pub fn u16_view(bytes: &[u8]) -> Option<&[u16]> {
    if cfg!(target_endian = "big")
        || !bytes.len().is_multiple_of(2)
        || !(bytes.as_ptr() as usize).is_multiple_of(2)
    {
        return None;
    }
    // SAFETY: the pointer is 2-aligned, every bit pattern is a valid u16,
    // the length covers exactly the slice's bytes, and the borrow is carried over.
    Some(unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<u16>(), bytes.len() / 2) })
}

/// The `u64` values of a byte slice (little endian), for read-backs.
pub fn read_u64s(bytes: &[u8], n: usize) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .take(n)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{amd_candidates, hiprtc_for};

    #[test]
    fn vmafhip_hip_library_replaces_the_search() {
        assert_eq!(
            amd_candidates(Some("/opt/rocm-6.2.0/lib/libamdhip64.so.6".into())),
            ["/opt/rocm-6.2.0/lib/libamdhip64.so.6"]
        );
        assert_eq!(amd_candidates(Some(String::new())).len(), 4);
        assert_eq!(amd_candidates(None)[0], "libamdhip64.so.7");
    }

    #[test]
    fn hiprtc_comes_from_the_runtime_s_rocm() {
        assert_eq!(
            hiprtc_for("libamdhip64.so.7").as_deref(),
            Some("libhiprtc.so.7")
        );
        assert_eq!(
            hiprtc_for("libamdhip64.so.6").as_deref(),
            Some("libhiprtc.so.6")
        );
        assert_eq!(hiprtc_for("libamdhip64.so.5"), None);
        assert_eq!(
            hiprtc_for("/opt/rocm/lib/libamdhip64.so").as_deref(),
            Some("/opt/rocm/lib/libhiprtc.so")
        );
    }
}
