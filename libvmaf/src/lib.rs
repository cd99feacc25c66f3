//! libvmaf 3.2's C API (`libvmaf.so.3`, headers in `include/libvmaf`) on
//! vmafhip's engines, for programs written for libvmaf: ffmpeg's
//! `libvmaf` filter, libvmaf's `vmaf` tool, and the tools built on them.
//!
//! Each exported function checks its pointers, turns them into Rust values
//! and calls the safe code ([`context`], [`model`], [`picture`]); errors
//! are libvmaf's (0, or a negative errno) and are said on stderr at the
//! log level `vmaf_init` was given. `unsafe` here (and in [`gpu_calls`],
//! the GPU calls) is the C boundary only:
//! the pointers a C caller hands over, each use with its SAFETY comment.
#![deny(unsafe_op_in_unsafe_fn)]
// The C API's functions take raw pointers by contract: their safety is the
// caller's promise that they point where libvmaf's headers say.
#![allow(clippy::missing_safety_doc)]
// The handles' Rust types stay private: C sees opaque pointers.
#![allow(private_interfaces)]

mod context;
mod cuda_state;
mod device_picture;
mod dictionary;
mod ffi;
mod gpu_calls;
mod hip_state;
mod model;
mod picture;
mod read;

use context::{Context, Failure};
use dictionary::Dictionary;
use model::Model;
use std::ffi::{CStr, c_char, c_int, c_uint};
use std::sync::atomic::{AtomicI32, Ordering};

/// The log level of the last `vmaf_init` (libvmaf keeps one per process).
static LOG_LEVEL: AtomicI32 = AtomicI32::new(ffi::LOG_WARNING);

fn say(level: c_int, what: &str) {
    if level <= LOG_LEVEL.load(Ordering::Relaxed) {
        let tag = match level {
            ffi::LOG_ERROR => "ERROR",
            ffi::LOG_WARNING => "WARNING",
            ffi::LOG_INFO => "INFO",
            _ => "DEBUG",
        };
        eprintln!("libvmaf {tag} {what}");
    }
}

/// libvmaf's code for `f`, its message said as an error.
fn code(f: Failure) -> c_int {
    say(ffi::LOG_ERROR, &f.1);
    f.0
}

fn einval(what: &str) -> c_int {
    code(Failure(-ffi::EINVAL, what.to_string()))
}

/// A C string argument; None for NULL or text that is not UTF-8.
///
/// SAFETY: `p` is NULL or a NUL-terminated string alive for `'a`.
unsafe fn text<'a>(p: *const c_char) -> Option<&'a str> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller's promise above.
    unsafe { CStr::from_ptr(p) }.to_str().ok()
}

/// The handle behind a `VmafContext *`.
struct Handle {
    context: Context,
    /// `vmaf_preallocate_pictures`' picture parameters.
    preallocated: Option<ffi::PictureConfiguration>,
    /// How `vmaf_cuda_preallocate_pictures` (or the HIP twin) said the
    /// pictures it lends are made.
    gpu_pictures: Option<gpu_calls::GpuPictures>,
}

/// `VmafContext *` as our handle.
///
/// SAFETY: `p` is NULL or a pointer `vmaf_init` returned, not yet closed,
/// used by one thread at a time (libvmaf's contract).
unsafe fn handle<'a>(p: *mut Handle) -> Option<&'a mut Handle> {
    // SAFETY: the caller's promise above.
    unsafe { p.as_mut() }
}

#[unsafe(no_mangle)]
pub extern "C" fn vmaf_version() -> *const c_char {
    c"3.2.0-vmafhip".as_ptr()
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_init(vmaf: *mut *mut Handle, cfg: ffi::Configuration) -> c_int {
    if vmaf.is_null() {
        return einval("vmaf_init: a NULL argument");
    }
    LOG_LEVEL.store(cfg.log_level, Ordering::Relaxed);
    let called = std::time::Instant::now();
    let backend = match context::Backend::from_env() {
        Ok((b, note)) => {
            if let Some(n) = note {
                say(ffi::LOG_WARNING, &n);
            }
            b
        }
        Err(e) => return einval(&e),
    };
    pinned_for(backend);
    let mut context = Context::new(&cfg, backend);
    say(ffi::LOG_INFO, &context.describe());
    context.timing().init = called.elapsed();
    let h = Box::new(Handle {
        context,
        preallocated: None,
        gpu_pictures: None,
    });
    // SAFETY: `vmaf` is a valid out-pointer (checked non-null).
    unsafe { *vmaf = Box::into_raw(h) };
    0
}

/// Pictures allocated from now on are the GPU's pinned memory while its
/// engine scores (uploaded in place), ordinary memory otherwise.
fn pinned_for(backend: context::Backend) {
    picture::allocate_pinned_on(match backend {
        context::Backend::Hip(n) => picture::PinnedOn::Ordinal(n),
        context::Backend::Cpu => picture::PinnedOn::Nothing,
    });
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_close(vmaf: *mut Handle) -> c_int {
    if vmaf.is_null() {
        return einval("vmaf_close: a NULL argument");
    }
    // SAFETY: `vmaf` came from `vmaf_init` and is closed once.
    let h = unsafe { Box::from_raw(vmaf) };
    say(ffi::LOG_DEBUG, &h.context.timing_line());
    let called = std::time::Instant::now();
    drop(h);
    say(
        ffi::LOG_DEBUG,
        &format!(
            "vmafhip: closed in {:.1} ms",
            called.elapsed().as_secs_f64() * 1e3
        ),
    );
    0
}

/// Loads a model for `vmaf_model_load(_from_path)` and the collection calls.
///
/// SAFETY: `cfg` is NULL or a valid `VmafModelConfig`; `source` a C string.
unsafe fn load(cfg: *const ffi::ModelConfig, source: *const c_char) -> Result<Model, Failure> {
    // SAFETY: the caller's promise above.
    let source = unsafe { text(source) }
        .ok_or_else(|| Failure(-ffi::EINVAL, "no model version or path".into()))?;
    // SAFETY: as above.
    let (name, flags) = match unsafe { cfg.as_ref() } {
        // SAFETY: `name` is NULL or a C string (VmafModelConfig).
        Some(c) => (unsafe { text(c.name) }, c.flags),
        None => (None, 0),
    };
    Model::load(source, name, flags)
        .map_err(|e| Failure(-ffi::EINVAL, format!("model {source}: {e}")))
}

/// Stores `value` boxed at the out-pointer `out`.
///
/// SAFETY: `out` is a valid pointer to write a pointer to.
unsafe fn give<T>(out: *mut *mut T, value: T) {
    // SAFETY: the caller's promise above.
    unsafe { *out = Box::into_raw(Box::new(value)) };
}

/// One model, not a collection (those fail here, as in libvmaf, so that a
/// caller tries `vmaf_model_collection_load` next).
unsafe fn load_model(
    model: *mut *mut Model,
    cfg: *const ffi::ModelConfig,
    source: *const c_char,
) -> c_int {
    if model.is_null() {
        return einval("vmaf_model_load: a NULL VmafModel out-pointer");
    }
    // SAFETY: the caller's arguments, as libvmaf's header says.
    match unsafe { load(cfg, source) } {
        Ok(m) if m.is_collection() => {
            // Quietly: libvmaf's tool takes this as "load it as a collection".
            say(
                ffi::LOG_DEBUG,
                "a model collection: vmaf_model_collection_load loads it",
            );
            -ffi::EINVAL
        }
        Ok(m) => {
            // SAFETY: `model` is a valid out-pointer (checked non-null).
            unsafe { give(model, m) };
            0
        }
        Err(f) => code(f),
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_model_load(
    model: *mut *mut Model,
    cfg: *mut ffi::ModelConfig,
    version: *const c_char,
) -> c_int {
    // SAFETY: the caller's arguments, as libvmaf's header says.
    unsafe { load_model(model, cfg, version) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_model_load_from_path(
    model: *mut *mut Model,
    cfg: *mut ffi::ModelConfig,
    path: *const c_char,
) -> c_int {
    // SAFETY: the caller's arguments, as libvmaf's header says.
    unsafe { load_model(model, cfg, path) }
}

/// Takes a dictionary's ownership (libvmaf's calls free the one they are given).
///
/// SAFETY: `dict` is NULL or from `vmaf_feature_dictionary_set`, not yet freed.
unsafe fn take_dictionary(dict: *mut Dictionary) -> Dictionary {
    if dict.is_null() {
        return Dictionary::default();
    }
    // SAFETY: the caller's promise above; freed here, once.
    *unsafe { Box::from_raw(dict) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_model_feature_overload(
    model: *mut Model,
    feature_name: *const c_char,
    opts_dict: *mut Dictionary,
) -> c_int {
    // SAFETY: as libvmaf's header says; the dictionary is ours from here.
    let (m, feature, opts) = unsafe {
        (
            model.as_mut(),
            text(feature_name),
            take_dictionary(opts_dict),
        )
    };
    let (Some(m), Some(feature)) = (m, feature) else {
        return einval("vmaf_model_feature_overload: a NULL argument");
    };
    m.overload(feature, &opts)
        .map_or_else(|e| einval(&e), |()| 0)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_model_destroy(model: *mut Model) {
    if !model.is_null() {
        // SAFETY: from `vmaf_model_load*`, destroyed once.
        drop(unsafe { Box::from_raw(model) });
    }
}

/// A bootstrap collection and its main model.
unsafe fn load_collection(
    model: *mut *mut Model,
    collection: *mut *mut Model,
    cfg: *const ffi::ModelConfig,
    source: *const c_char,
) -> c_int {
    if model.is_null() || collection.is_null() {
        return einval("vmaf_model_collection_load: a NULL out-pointer");
    }
    // SAFETY: the caller's arguments, as libvmaf's header says.
    match unsafe { load(cfg, source) } {
        Ok(m) if !m.is_collection() => einval(&format!("{} is not a model collection", m.name())),
        Ok(m) => {
            // SAFETY: both out-pointers checked non-null.
            unsafe {
                give(model, m.clone());
                give(collection, m);
            }
            0
        }
        Err(f) => code(f),
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_model_collection_load(
    model: *mut *mut Model,
    model_collection: *mut *mut Model,
    cfg: *mut ffi::ModelConfig,
    version: *const c_char,
) -> c_int {
    // SAFETY: the caller's arguments, as libvmaf's header says.
    unsafe { load_collection(model, model_collection, cfg, version) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_model_collection_load_from_path(
    model: *mut *mut Model,
    model_collection: *mut *mut Model,
    cfg: *mut ffi::ModelConfig,
    path: *const c_char,
) -> c_int {
    // SAFETY: the caller's arguments, as libvmaf's header says.
    unsafe { load_collection(model, model_collection, cfg, path) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_model_collection_feature_overload(
    model: *mut Model,
    model_collection: *mut *mut Model,
    feature_name: *const c_char,
    opts_dict: *mut Dictionary,
) -> c_int {
    // SAFETY: as libvmaf's header says; the dictionary is ours from here.
    let (m, c, feature, opts) = unsafe {
        (
            model.as_mut(),
            model_collection.as_ref().and_then(|c| c.as_mut()),
            text(feature_name),
            take_dictionary(opts_dict),
        )
    };
    let (Some(m), Some(c), Some(feature)) = (m, c, feature) else {
        return einval("vmaf_model_collection_feature_overload: a NULL argument");
    };
    match m
        .overload(feature, &opts)
        .and_then(|()| c.overload(feature, &opts))
    {
        Ok(()) => 0,
        Err(e) => einval(&e),
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_model_collection_destroy(model_collection: *mut Model) {
    if !model_collection.is_null() {
        // SAFETY: from `vmaf_model_collection_load*`, destroyed once.
        drop(unsafe { Box::from_raw(model_collection) });
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_feature_dictionary_set(
    dict: *mut *mut Dictionary,
    key: *const c_char,
    val: *const c_char,
) -> c_int {
    // SAFETY: as libvmaf's header says.
    let (Some(key), Some(val)) = (unsafe { text(key) }, unsafe { text(val) }) else {
        return einval("vmaf_feature_dictionary_set: a NULL argument");
    };
    if dict.is_null() {
        return einval("vmaf_feature_dictionary_set: a NULL argument");
    }
    // SAFETY: `dict` points to NULL or to a dictionary of ours.
    unsafe {
        if (*dict).is_null() {
            give(dict, Dictionary::default());
        }
        (**dict).set(key, val);
    }
    0
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_feature_dictionary_free(dict: *mut *mut Dictionary) -> c_int {
    if dict.is_null() {
        return einval("vmaf_feature_dictionary_free: a NULL argument");
    }
    // SAFETY: `dict` points to NULL or to a dictionary of ours, freed once.
    unsafe {
        drop(take_dictionary(*dict));
        *dict = std::ptr::null_mut();
    }
    0
}

/// Runs `f` on the context, saying its error.
///
/// SAFETY: as [`handle`].
unsafe fn with_context(
    vmaf: *mut Handle,
    f: impl FnOnce(&mut Context) -> Result<(), Failure>,
) -> c_int {
    // SAFETY: the caller's promise above.
    match unsafe { handle(vmaf) } {
        Some(h) => f(&mut h.context).map_or_else(code, |()| 0),
        None => einval("a NULL VmafContext"),
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_use_features_from_model(
    vmaf: *mut Handle,
    model: *mut Model,
) -> c_int {
    // SAFETY: `model` is NULL or from `vmaf_model_load*`.
    let Some(m) = (unsafe { model.as_ref() }) else {
        return einval("vmaf_use_features_from_model: a NULL argument");
    };
    // SAFETY: as [`handle`].
    unsafe { with_context(vmaf, |c| c.use_model(m)) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_use_features_from_model_collection(
    vmaf: *mut Handle,
    model_collection: *mut Model,
) -> c_int {
    // SAFETY: as `vmaf_use_features_from_model`.
    unsafe { vmaf_use_features_from_model(vmaf, model_collection) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_use_feature(
    vmaf: *mut Handle,
    feature_name: *const c_char,
    opts_dict: *mut Dictionary,
) -> c_int {
    // SAFETY: as libvmaf's header says; the dictionary is ours from here.
    let (name, opts) = unsafe { (text(feature_name), take_dictionary(opts_dict)) };
    let Some(name) = name else {
        return einval("vmaf_use_feature: a NULL argument");
    };
    // SAFETY: as [`handle`].
    unsafe { with_context(vmaf, |c| c.use_feature(name, &opts)) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_import_feature_score(
    _vmaf: *mut Handle,
    feature_name: *const c_char,
    _value: f64,
    _index: c_uint,
) -> c_int {
    // SAFETY: a C string or NULL.
    let name = unsafe { text(feature_name) }.unwrap_or("?");
    einval(&format!(
        "vmaf_import_feature_score(\"{name}\"): vmafhip computes every feature it scores itself"
    ))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_picture_alloc(
    pic: *mut ffi::Picture,
    pix_fmt: c_int,
    bpc: c_uint,
    w: c_uint,
    h: c_uint,
) -> c_int {
    // SAFETY: `pic` is NULL or a writable VmafPicture.
    let Some(p) = (unsafe { pic.as_mut() }) else {
        return einval("vmaf_picture_alloc: a NULL argument");
    };
    match picture::alloc(p, pix_fmt, bpc, w, h) {
        Ok(()) => 0,
        Err(e) => einval(&format!("vmaf_picture_alloc: {e}")),
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_picture_unref(pic: *mut ffi::Picture) -> c_int {
    // SAFETY: `pic` is NULL or a VmafPicture.
    let Some(p) = (unsafe { pic.as_mut() }) else {
        return einval("vmaf_picture_unref: a NULL argument");
    };
    if p.reference.is_null() || p.private.is_null() {
        return einval("vmaf_picture_unref: a NULL argument");
    }
    // SAFETY: `private` holds the block `vmaf_picture_alloc` boxed; the
    // picture is cleared below, so it is freed once.
    drop(unsafe { Box::from_raw(p.private.cast::<picture::Block>()) });
    p.private = std::ptr::null_mut();
    p.reference = std::ptr::null_mut();
    p.data = [std::ptr::null_mut(); 3];
    0
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_preallocate_pictures(
    vmaf: *mut Handle,
    cfg: ffi::PictureConfiguration,
) -> c_int {
    // SAFETY: as [`handle`].
    let Some(h) = (unsafe { handle(vmaf) }) else {
        return einval("vmaf_preallocate_pictures: a NULL argument");
    };
    if picture::format_of(cfg.pix_fmt).is_none() || cfg.w == 0 || cfg.h == 0 {
        return einval("vmaf_preallocate_pictures: bad picture parameters");
    }
    h.preallocated = Some(cfg);
    0
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_fetch_preallocated_picture(
    vmaf: *mut Handle,
    pic: *mut ffi::Picture,
) -> c_int {
    // SAFETY: as [`handle`].
    let Some(h) = (unsafe { handle(vmaf) }) else {
        return einval("vmaf_fetch_preallocated_picture: a NULL argument");
    };
    let Some(c) = h.preallocated else {
        return einval("vmaf_fetch_preallocated_picture before vmaf_preallocate_pictures");
    };
    // SAFETY: `pic` as `vmaf_picture_alloc` takes it.
    unsafe { vmaf_picture_alloc(pic, c.pix_fmt, c.bpc, c.w, c.h) }
}

/// Writes `value` to the out-pointer `out`.
///
/// SAFETY: `out` is NULL or writable.
unsafe fn put<T>(out: *mut T, value: Result<T, Failure>) -> c_int {
    if out.is_null() {
        return einval("a NULL out-pointer for the score");
    }
    match value {
        Ok(v) => {
            // SAFETY: the caller's promise above (checked non-null).
            unsafe { *out = v };
            0
        }
        Err(f) => code(f),
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_score_at_index(
    vmaf: *mut Handle,
    model: *mut Model,
    score: *mut f64,
    index: c_uint,
) -> c_int {
    // SAFETY: as libvmaf's header says.
    let (Some(h), Some(m)) = (unsafe { handle(vmaf) }, unsafe { model.as_ref() }) else {
        return einval("vmaf_score_at_index: a NULL argument");
    };
    // SAFETY: `score` as `put` takes it.
    unsafe { put(score, h.context.score_at(m.name(), index)) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_feature_score_at_index(
    vmaf: *mut Handle,
    feature_name: *const c_char,
    score: *mut f64,
    index: c_uint,
) -> c_int {
    // SAFETY: as libvmaf's header says.
    let (Some(h), Some(name)) = (unsafe { handle(vmaf) }, unsafe { text(feature_name) }) else {
        return einval("vmaf_feature_score_at_index: a NULL argument");
    };
    // SAFETY: `score` as `put` takes it.
    unsafe { put(score, h.context.score_at(name, index)) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_score_pooled(
    vmaf: *mut Handle,
    model: *mut Model,
    pool_method: c_int,
    score: *mut f64,
    index_low: c_uint,
    index_high: c_uint,
) -> c_int {
    // SAFETY: as libvmaf's header says.
    let (Some(h), Some(m)) = (unsafe { handle(vmaf) }, unsafe { model.as_ref() }) else {
        return einval("vmaf_score_pooled: a NULL argument");
    };
    let v = h
        .context
        .pooled(m.name(), pool_method, index_low, index_high);
    // SAFETY: `score` as `put` takes it.
    unsafe { put(score, v) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_feature_score_pooled(
    vmaf: *mut Handle,
    feature_name: *const c_char,
    pool_method: c_int,
    score: *mut f64,
    index_low: c_uint,
    index_high: c_uint,
) -> c_int {
    // SAFETY: as libvmaf's header says.
    let (Some(h), Some(name)) = (unsafe { handle(vmaf) }, unsafe { text(feature_name) }) else {
        return einval("vmaf_feature_score_pooled: a NULL argument");
    };
    let v = h.context.pooled(name, pool_method, index_low, index_high);
    // SAFETY: `score` as `put` takes it.
    unsafe { put(score, v) }
}

/// A collection's four statistics, each from `stat(name)`.
fn collection_score(
    base: &str,
    mut stat: impl FnMut(&str) -> Result<f64, Failure>,
) -> Result<ffi::CollectionScore, Failure> {
    Ok(ffi::CollectionScore {
        kind: ffi::COLLECTION_SCORE_BOOTSTRAP,
        bagging_score: stat(&format!("{base}_bagging"))?,
        stddev: stat(&format!("{base}_stddev"))?,
        ci_p95_lo: stat(&format!("{base}_ci_p95_lo"))?,
        ci_p95_hi: stat(&format!("{base}_ci_p95_hi"))?,
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_score_at_index_model_collection(
    vmaf: *mut Handle,
    model_collection: *mut Model,
    score: *mut ffi::CollectionScore,
    index: c_uint,
) -> c_int {
    // SAFETY: as libvmaf's header says.
    let (Some(h), Some(c)) = (unsafe { handle(vmaf) }, unsafe {
        model_collection.as_ref()
    }) else {
        return einval("vmaf_score_at_index_model_collection: a NULL argument");
    };
    let v = collection_score(c.name(), |n| h.context.score_at(n, index));
    // SAFETY: `score` as `put` takes it.
    unsafe { put(score, v) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_score_pooled_model_collection(
    vmaf: *mut Handle,
    model_collection: *mut Model,
    pool_method: c_int,
    score: *mut ffi::CollectionScore,
    index_low: c_uint,
    index_high: c_uint,
) -> c_int {
    // SAFETY: as libvmaf's header says.
    let (Some(h), Some(c)) = (unsafe { handle(vmaf) }, unsafe {
        model_collection.as_ref()
    }) else {
        return einval("vmaf_score_pooled_model_collection: a NULL argument");
    };
    let v = collection_score(c.name(), |n| {
        h.context.pooled(n, pool_method, index_low, index_high)
    });
    // SAFETY: `score` as `put` takes it.
    unsafe { put(score, v) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_write_output(
    vmaf: *mut Handle,
    output_path: *const c_char,
    fmt: c_int,
) -> c_int {
    // SAFETY: as libvmaf's header says.
    let (Some(h), Some(path)) = (unsafe { handle(vmaf) }, unsafe { text(output_path) }) else {
        return einval("vmaf_write_output: a NULL argument");
    };
    h.context.write_output(path, fmt).map_or_else(code, |()| 0)
}
