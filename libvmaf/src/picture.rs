//! `VmafPicture`: planes allocated here (`vmaf_picture_alloc`, the layout
//! libvmaf gives: rows 32-sample aligned, one block for all planes), and a
//! caller's picture seen as the engine's [`Picture`].
//!
//! A program allocates a picture pair per frame, so blocks are recycled:
//! a block released (its picture unreferenced, or the engine done with
//! it) is lent again to the next picture of its size. While the GPU engine
//! scores, blocks are its pinned memory, which it uploads from in place.

#![forbid(unsafe_code)]

use crate::device_picture::Lent;
use crate::ffi;
use gstvmafhip::hip::{Device, PinnedHostMem};
use gstvmafhip::vmaf::{DevicePlane, Picture, PixelFormat, Plane, VmafError};
use std::ffi::{c_int, c_uint, c_void};
use std::sync::{Arc, Mutex};

/// Released blocks kept for reuse, at most.
const SPARE_MAX: usize = 32;

/// Where a block's bytes lie.
enum Memory {
    Plain(Vec<u8>),
    Pinned(PinnedHostMem),
}

impl Memory {
    fn bytes(&mut self) -> &mut [u8] {
        match self {
            Memory::Plain(v) => v,
            Memory::Pinned(p) => p.as_mut(),
        }
    }
}

/// Blocks released, lent again before any is allocated.
static SPARE: Mutex<Vec<Memory>> = Mutex::new(Vec::new());
/// Whose pinned memory new blocks are.
pub enum PinnedOn {
    /// Ordinary memory (the CPU engine).
    Nothing,
    /// The GPU of this ordinal, opened at the first picture (not before:
    /// a program may import its own context instead).
    Ordinal(usize),
    Device(Arc<Device>),
}

/// The GPU whose pinned memory new blocks are, while its engine scores.
static PINNED_ON: Mutex<PinnedOn> = Mutex::new(PinnedOn::Nothing);

/// Where new blocks are allocated from now on.
pub fn allocate_pinned_on(on: PinnedOn) {
    *PINNED_ON.lock().unwrap_or_else(|e| e.into_inner()) = on;
}

/// The device new blocks are pinned on, opened now if need be (None:
/// ordinary memory, also where the device does not open).
fn pinned_device() -> Option<Arc<Device>> {
    let mut on = PINNED_ON.lock().unwrap_or_else(|e| e.into_inner());
    if let PinnedOn::Ordinal(n) = *on {
        *on = match gstvmafhip::vmaf::gpu_device(gstvmafhip::hip::Vendor::Auto, n) {
            Ok(d) => PinnedOn::Device(d),
            Err(_) => PinnedOn::Nothing,
        };
    }
    match &*on {
        PinnedOn::Device(d) => Some(d.clone()),
        _ => None,
    }
}

/// A block of `len` bytes: a spare one of that length and kind, else new.
fn memory(len: usize) -> Memory {
    let pinned = pinned_device();
    {
        let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
        let fits = |m: &Memory| match m {
            Memory::Plain(v) => pinned.is_none() && v.len() == len,
            Memory::Pinned(p) => pinned.is_some() && p.as_ref().len() == len,
        };
        if let Some(i) = spare.iter().position(fits) {
            return spare.swap_remove(i);
        }
    }
    match pinned.map(|dev| PinnedHostMem::new(&dev, len)) {
        Some(Ok(p)) => Memory::Pinned(p),
        _ => Memory::Plain(vec![0u8; len]),
    }
}

/// Rows start this many samples apart at least, and planes on this many bytes.
const ALIGN: usize = 32;

/// The engine's pixel format of libvmaf's `enum VmafPixelFormat`.
pub fn format_of(pix_fmt: c_int) -> Option<PixelFormat> {
    match pix_fmt {
        ffi::PIX_FMT_YUV420P => Some(PixelFormat::Yuv420),
        ffi::PIX_FMT_YUV422P => Some(PixelFormat::Yuv422),
        ffi::PIX_FMT_YUV444P => Some(PixelFormat::Yuv444),
        ffi::PIX_FMT_YUV400P => Some(PixelFormat::Gray),
        _ => None,
    }
}

/// What a picture's `priv` owns: the memory behind its planes, in the host
/// (`vmaf_picture_alloc`) or on a GPU (a device picture a pool lent).
pub enum Block {
    /// Held for its drop, which keeps the memory for reuse.
    Host {
        _memory: HostBlock,
    },
    Device(Lent),
}

/// Host memory behind a picture's planes; dropped (the picture
/// unreferenced, or the engine done with it), it is kept for reuse.
pub struct HostBlock(Option<Memory>);

impl Drop for HostBlock {
    fn drop(&mut self) {
        if let Some(m) = self.0.take() {
            let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
            if spare.len() < SPARE_MAX {
                spare.push(m);
            }
        }
    }
}

/// `pic` owns `block` through its `priv` (and `ref`), until it is
/// unreferenced or read.
fn attach(pic: &mut ffi::Picture, block: Block) {
    let raw = Box::into_raw(Box::new(block)).cast();
    pic.private = raw;
    pic.reference = raw;
}

/// Fills `pic` with planes for a `w`x`h` picture of `pix_fmt` at `bpc`
/// bits, in a block `pic` owns ([`attach`]).
pub fn alloc(
    pic: &mut ffi::Picture,
    pix_fmt: c_int,
    bpc: c_uint,
    w: c_uint,
    h: c_uint,
) -> Result<(), String> {
    let format = format_of(pix_fmt).ok_or_else(|| format!("pixel format {pix_fmt}"))?;
    if !(8..=16).contains(&bpc) {
        return Err(format!("{bpc} bits per sample (8 to 16)"));
    }
    if w == 0 || h == 0 {
        return Err(format!("a {w}x{h} picture"));
    }
    let bytes = if bpc > 8 { 2 } else { 1 };
    let (w, h) = (w as usize, h as usize);
    let mut sizes = vec![(w, h)];
    if let Some(c) = format.chroma_size(w, h) {
        sizes.extend([c, c]);
    }
    let strides: Vec<usize> = sizes
        .iter()
        .map(|&(pw, _)| pw.next_multiple_of(ALIGN) * bytes)
        .collect();
    let total: usize = sizes.iter().zip(&strides).map(|(s, st)| st * s.1).sum();
    let mut host = HostBlock(Some(memory(total + ALIGN)));
    let base = host.0.as_mut().expect("just made").bytes().as_mut_ptr();
    let mut at = base.align_offset(ALIGN);
    *pic = ffi::Picture::empty(pix_fmt, bpc);
    for (i, (&(pw, ph), &st)) in sizes.iter().zip(&strides).enumerate() {
        pic.w[i] = pw as c_uint;
        pic.h[i] = ph as c_uint;
        pic.stride[i] = st as isize;
        pic.data[i] = base.wrapping_add(at).cast::<c_void>();
        at += st * ph;
    }
    attach(pic, Block::Host { _memory: host });
    Ok(())
}

/// Fills `pic` with the planes of `lent`, a device picture, which `pic`
/// owns ([`attach`]). `data` holds device addresses.
pub fn lend_device(pic: &mut ffi::Picture, pix_fmt: c_int, lent: Lent) {
    let params = lent.params();
    *pic = ffi::Picture::empty(pix_fmt, c_uint::from(params.bpc));
    for (i, (ptr, w, h, pitch)) in lent.planes().into_iter().enumerate() {
        pic.w[i] = w as c_uint;
        pic.h[i] = h as c_uint;
        pic.stride[i] = pitch as isize;
        // A device address, which the program hands to its GPU copies.
        pic.data[i] = std::ptr::without_provenance_mut(ptr as usize);
    }
    attach(pic, Block::Device(lent));
}

/// One plane's samples, borrowed from a caller's picture.
pub enum Samples<'a> {
    U8(&'a [u8]),
    /// Native-endian 16-bit words (9 to 16 bits).
    U16(&'a [u16]),
}

/// A caller's picture for one frame: planes in host memory, or a device
/// picture's.
pub enum Seen<'a> {
    Host(View<'a>),
    Device(PixelFormat, u8, Vec<DevicePlane>),
}

impl Seen<'_> {
    pub fn picture(&self) -> Result<Picture<'_>, VmafError> {
        match self {
            Seen::Host(v) => v.picture(),
            Seen::Device(format, bpc, planes) => Picture::new_device(*format, *bpc, planes),
        }
    }
}

/// A caller's planes, borrowed for one frame: each plane's samples, width,
/// height and stride in samples.
pub struct View<'a> {
    pub format: PixelFormat,
    pub bpc: u8,
    pub planes: Vec<(Samples<'a>, usize, usize, usize)>,
}

/// The bytes plane `i` of `pic` spans: `stride` bytes a row, the last row
/// only its samples. None where a stride is shorter than a row.
pub fn plane_bytes(pic: &ffi::Picture, i: usize) -> Option<usize> {
    let bytes = if pic.bpc > 8 { 2 } else { 1 };
    let (w, h) = (pic.w[i] as usize, pic.h[i] as usize);
    let stride = usize::try_from(pic.stride[i]).ok()?;
    (w > 0 && h > 0 && stride >= w * bytes).then(|| stride * (h - 1) + w * bytes)
}

impl View<'_> {
    /// The engine's picture of these planes.
    pub fn picture(&self) -> Result<Picture<'_>, VmafError> {
        let mismatch = || VmafError::InvalidPicture("planes of mixed depths".into());
        if self.bpc == 8 {
            let planes = self
                .planes
                .iter()
                .map(|(data, w, h, stride)| match data {
                    Samples::U8(d) => Plane::new(d, *w, *h, *stride),
                    Samples::U16(_) => Err(mismatch()),
                })
                .collect::<Result<Vec<_>, _>>()?;
            return Picture::new_u8(self.format, &planes);
        }
        let planes = self
            .planes
            .iter()
            .map(|(data, w, h, stride)| match data {
                Samples::U16(d) => Plane::new(d, *w, *h, *stride),
                Samples::U8(_) => Err(mismatch()),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Picture::new_u16(self.format, self.bpc, &planes)
    }
}
