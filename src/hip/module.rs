//! Run-time kernel compilation (hiprtc / nvrtc), the on-disk code cache,
//! modules and kernel launches.

use super::device::{Device, DeviceBuffer, Stream};
use super::ffi::Handle;
use super::{Api, HipError, Runtime};
use std::ffi::{CString, c_char, c_int, c_void};
use std::path::PathBuf;
use std::sync::Arc;

/// Our prelude header, included by every kernel file as `vmafhip_prelude.h`.
pub const PRELUDE: &str = include_str!("vmafhip_prelude.h");

/// Compiler options. Floating point must match the CPU engine bit for bit:
/// no contraction into FMAs, IEEE division and square root.
fn options(api: &Api, arch: &str) -> Vec<String> {
    match api {
        Api::Nvidia { .. } => vec![
            format!("--gpu-architecture={arch}"),
            "--fmad=false".into(),
            "--prec-div=true".into(),
            "--prec-sqrt=true".into(),
            "--std=c++17".into(),
        ],
        Api::Amd { .. } => vec![
            format!("--offload-arch={arch}"),
            "-ffp-contract=off".into(),
            "-O3".into(),
            "-std=c++17".into(),
        ],
    }
}

/// FNV-1a, 64-bit: a stable hash for cache keys (std's hasher may change
/// between Rust releases).
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in *p {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// `$VMAFHIP_CACHE_DIR`, else `$XDG_CACHE_HOME/vmafhip`, else `~/.cache/vmafhip`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("VMAFHIP_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("vmafhip"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("vmafhip"))
}

/// Compiles `source` (a kernel file, `*.hip`) for `arch` with `rt`'s
/// compiler, or reads the code object from the cache. Returns the code
/// object and whether it came from the cache.
pub fn compile_source(
    rt: &Runtime,
    arch: &str,
    file: &str,
    source: &str,
) -> Result<(Vec<u8>, bool), HipError> {
    let opts = options(&rt.api, arch);
    let key = fnv1a(&[
        source.as_bytes(),
        PRELUDE.as_bytes(),
        opts.join(" ").as_bytes(),
        arch.as_bytes(),
        rt.version.as_bytes(),
    ]);
    let safe_arch: String = arch
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let stem = file.trim_end_matches(".hip");
    let cached = cache_dir().map(|d| d.join(format!("{stem}-{safe_arch}-{key:016x}.bin")));
    if let Some(path) = &cached
        && let Ok(code) = std::fs::read(path)
        && !code.is_empty()
    {
        return Ok((code, true));
    }
    let code = compile(rt, arch, file, source)?;
    if let Some(path) = cached
        && let Some(dir) = path.parent()
        && std::fs::create_dir_all(dir).is_ok()
    {
        // Write then rename, so a concurrent reader never sees half a file.
        // A cache that cannot be written only costs a recompile next time.
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, &code).is_ok() {
            let _ = std::fs::rename(&tmp, &path);
        }
    }
    Ok((code, false))
}

/// Compiles `source` for `arch` with `rt`'s compiler, bypassing the cache.
/// Needs no device: hiprtc and nvrtc compile for any architecture they know.
pub fn compile(rt: &Runtime, arch: &str, file: &str, source: &str) -> Result<Vec<u8>, HipError> {
    // ROCm 5.2's hiprtc crashes when two threads compile at once: one
    // compile at a time per process.
    static COMPILING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = COMPILING.lock().unwrap_or_else(|e| e.into_inner());
    let opts = &options(&rt.api, arch);
    let nul = |s: &str| CString::new(s).map_err(|_| HipError::Usage(format!("NUL in {s:?}")));
    let src = nul(source)?;
    let name = nul(file)?;
    let hdr = nul(PRELUDE)?;
    let hdr_name = nul("vmafhip_prelude.h")?;
    let headers = [hdr.as_ptr()];
    let header_names = [hdr_name.as_ptr()];
    let copts: Vec<CString> = opts.iter().map(|o| nul(o)).collect::<Result<_, _>>()?;
    let opt_ptrs: Vec<*const c_char> = copts.iter().map(|o| o.as_ptr()).collect();

    let t = rt.rtc();
    let mut prog: Handle = std::ptr::null_mut();
    // SAFETY: all strings are NUL-terminated and outlive the call; one header.
    let r = unsafe {
        (t.create_program)(
            &mut prog,
            src.as_ptr(),
            name.as_ptr(),
            1,
            headers.as_ptr(),
            header_names.as_ptr(),
        )
    };
    rtc_check(rt, r, t.names[1])?;
    // SAFETY: `prog` is live; the option pointers outlive the call.
    let r = unsafe { (t.compile_program)(prog, opt_ptrs.len() as c_int, opt_ptrs.as_ptr()) };
    let result = if r != 0 {
        let mut n = 0usize;
        // SAFETY: valid out-pointer; then a buffer of exactly that size.
        let log = unsafe {
            if (t.get_program_log_size)(prog, &mut n) == 0 && n > 0 {
                let mut buf = vec![0u8; n];
                let _ = (t.get_program_log)(prog, buf.as_mut_ptr().cast()); // best effort: it is already an error
                String::from_utf8_lossy(&buf)
                    .trim_end_matches('\0')
                    .to_string()
            } else {
                String::new()
            }
        };
        Err(HipError::Compile {
            file: file.to_string(),
            arch: arch.to_string(),
            log: format!("{}: {}\n{log}", t.names[2], rtc_error(rt, r)),
        })
    } else {
        let mut n = 0usize;
        // SAFETY: valid out-pointer.
        rtc_check(rt, unsafe { (t.get_code_size)(prog, &mut n) }, t.names[5]).and_then(|_| {
            let mut code = vec![0u8; n];
            // SAFETY: `code` holds exactly the size the compiler reported.
            rtc_check(
                rt,
                unsafe { (t.get_code)(prog, code.as_mut_ptr().cast()) },
                t.names[6],
            )?;
            if code.is_empty() {
                return Err(HipError::Compile {
                    file: file.to_string(),
                    arch: arch.to_string(),
                    log: "the compiler returned an empty code object".into(),
                });
            }
            Ok(code)
        })
    };
    // SAFETY: destroys the program created above, once.
    let _ = unsafe { (t.destroy_program)(&mut prog) }; // a leak at worst
    result
}

fn rtc_error(rt: &Runtime, code: c_int) -> String {
    // SAFETY: both compilers return static strings for any code.
    let p = unsafe { (rt.rtc().get_error_string)(code) };
    super::cstr_or(p, "unknown compiler error")
}

fn rtc_check(rt: &Runtime, code: c_int, call: &'static str) -> Result<(), HipError> {
    if code == 0 {
        Ok(())
    } else {
        Err(HipError::Call {
            call,
            code,
            name: rtc_error(rt, code),
        })
    }
}

/// A loaded code object.
pub struct Module {
    dev: Arc<Device>,
    raw: Handle,
}

// SAFETY: modules are context-wide objects usable from any thread.
unsafe impl Send for Module {}
// SAFETY: as above; no method mutates.
unsafe impl Sync for Module {}

/// The kinds of kernel parameter, declared per kernel and checked at launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    Ptr,
    I32,
    U32,
    I64,
    U64,
    F64,
}

/// One kernel argument.
#[derive(Clone, Copy)]
pub enum Arg<'a> {
    /// A device buffer, at a byte offset.
    Buf(&'a DeviceBuffer, usize),
    /// Device memory this backend does not own (a GPU-memory frame of its
    /// context, mapped by GStreamer), at this address; the caller checks
    /// that the kernel stays inside the mapping.
    Foreign(u64),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    F64(f64),
}

impl Arg<'_> {
    fn kind(&self) -> ArgKind {
        match self {
            Arg::Buf(..) | Arg::Foreign(_) => ArgKind::Ptr,
            Arg::I32(_) => ArgKind::I32,
            Arg::U32(_) => ArgKind::U32,
            Arg::I64(_) => ArgKind::I64,
            Arg::U64(_) => ArgKind::U64,
            Arg::F64(_) => ArgKind::F64,
        }
    }
}

/// A kernel of a module with its declared parameter list.
pub struct Kernel {
    module: Arc<Module>,
    raw: Handle,
    pub name: String,
    params: Vec<ArgKind>,
}

// SAFETY: function handles are immutable context-wide objects.
unsafe impl Send for Kernel {}
// SAFETY: as above.
unsafe impl Sync for Kernel {}

impl Module {
    pub fn load(dev: &Arc<Device>, code: &[u8]) -> Result<Arc<Module>, HipError> {
        dev.make_current()?;
        let mut raw: Handle = std::ptr::null_mut();
        match &dev.rt.api {
            // SAFETY: `code` is a complete code object for this device.
            Api::Nvidia { cu, .. } => dev.rt.check(
                unsafe { (cu.module_load_data)(&mut raw, code.as_ptr().cast()) },
                "cuModuleLoadData",
            )?,
            // SAFETY: as above.
            Api::Amd { hip, .. } => dev.rt.check(
                unsafe { (hip.module_load_data)(&mut raw, code.as_ptr().cast()) },
                "hipModuleLoadData",
            )?,
        }
        Ok(Arc::new(Module {
            dev: dev.clone(),
            raw,
        }))
    }

    /// Looks up an `extern "C"` kernel; `params` is its C parameter list.
    pub fn kernel(self: &Arc<Self>, name: &str, params: &[ArgKind]) -> Result<Kernel, HipError> {
        let cname = CString::new(name).map_err(|_| HipError::Usage(format!("bad name {name}")))?;
        let mut raw: Handle = std::ptr::null_mut();
        let (r, call) = match &self.dev.rt.api {
            // SAFETY: live module, NUL-terminated name, valid out-pointer.
            Api::Nvidia { cu, .. } => (
                unsafe { (cu.module_get_function)(&mut raw, self.raw, cname.as_ptr()) },
                "cuModuleGetFunction",
            ),
            // SAFETY: as above.
            Api::Amd { hip, .. } => (
                unsafe { (hip.module_get_function)(&mut raw, self.raw, cname.as_ptr()) },
                "hipModuleGetFunction",
            ),
        };
        self.dev
            .rt
            .check(r, call)
            .map_err(|e| HipError::Usage(format!("kernel {name}: {e}")))?;
        Ok(Kernel {
            module: self.clone(),
            raw,
            name: name.to_string(),
            params: params.to_vec(),
        })
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        let _ = self.dev.synchronize();
        let _ = match &self.dev.rt.api {
            // SAFETY: unloads the module loaded in `load`, once, after all work finished.
            Api::Nvidia { cu, .. } => unsafe { (cu.module_unload)(self.raw) },
            // SAFETY: as above.
            Api::Amd { hip, .. } => unsafe { (hip.module_unload)(self.raw) },
        }; // teardown: nothing to report to
    }
}

impl Stream {
    /// Launches `k` on this stream. The arguments must match the kernel's
    /// declared parameters in number and kind, and every buffer offset must
    /// lie inside its buffer.
    pub fn launch(
        &self,
        k: &Kernel,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_bytes: u32,
        args: &[Arg<'_>],
    ) -> Result<(), HipError> {
        if args.len() != k.params.len() || args.iter().zip(&k.params).any(|(a, p)| a.kind() != *p) {
            return Err(HipError::Usage(format!(
                "kernel {} takes {:?}, got {:?}",
                k.name,
                k.params,
                args.iter().map(Arg::kind).collect::<Vec<_>>()
            )));
        }
        if grid.0 == 0 || grid.1 == 0 || grid.2 == 0 {
            return Ok(());
        }
        let mut store: Vec<u64> = Vec::with_capacity(args.len());
        for a in args {
            store.push(match *a {
                Arg::Buf(b, off) => {
                    if off > b.bytes() {
                        return Err(HipError::Usage(format!(
                            "kernel {}: offset {off} past a {}-byte buffer",
                            k.name,
                            b.bytes()
                        )));
                    }
                    b.addr() + off as u64
                }
                Arg::Foreign(addr) => addr,
                Arg::I32(v) => u64::from(v as u32),
                Arg::U32(v) => u64::from(v),
                Arg::I64(v) => v as u64,
                Arg::U64(v) => v,
                Arg::F64(v) => v.to_bits(),
            });
        }
        // Each parameter points at its 8-byte slot; 4-byte parameters read the
        // low half, which is where a little-endian store put them.
        let mut ptrs: Vec<*mut c_void> = store
            .iter_mut()
            .map(|s| (s as *mut u64).cast::<c_void>())
            .collect();
        let dev = &k.module.dev;
        // cuLaunchKernel and hipModuleLaunchKernel take the same C arguments.
        let (launch, call) = match &dev.rt.api {
            Api::Nvidia { cu, .. } => (cu.launch_kernel, "cuLaunchKernel"),
            Api::Amd { hip, .. } => (hip.module_launch_kernel, "hipModuleLaunchKernel"),
        };
        // SAFETY: `ptrs` has one valid pointer per declared parameter, each to
        // storage of at least the parameter's size, alive across the call.
        let r = unsafe {
            launch(
                k.raw,
                grid.0,
                grid.1,
                grid.2,
                block.0,
                block.1,
                block.2,
                shared_bytes,
                self.raw(),
                ptrs.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        dev.rt
            .check(r, call)
            .map_err(|e| HipError::Usage(format!("launching {}: {e}", k.name)))
    }
}

// The launch marshalling above stores 4-byte parameters in the low half of
// an 8-byte slot: little-endian hosts only.
const _: () = assert!(cfg!(target_endian = "little"));
