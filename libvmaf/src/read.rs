//! `vmaf_read_pictures`, at the C boundary as `lib.rs` is: a program's
//! pictures seen as the engine's, their blocks taken (libvmaf takes the
//! pictures) and held while the engine needs them.

use crate::context::Failure;
use crate::context::Kept;
use crate::{Handle, code, device_picture, einval, ffi, handle, picture};
use gstvmafhip::vmaf::{Picture, Replay, VmafError};
use std::ffi::{c_int, c_uint};
use std::sync::Arc;

/// A caller's picture as the engine's planes, borrowed for the call.
///
/// SAFETY: `pic`'s planes are readable for what its sizes and strides say.
unsafe fn view<'a>(pic: &'a ffi::Picture) -> Result<picture::View<'a>, String> {
    let format =
        picture::format_of(pic.pix_fmt).ok_or_else(|| format!("pixel format {}", pic.pix_fmt))?;
    let bpc = u8::try_from(pic.bpc)
        .ok()
        .filter(|b| (8..=16).contains(b))
        .ok_or_else(|| format!("{} bits per sample", pic.bpc))?;
    let mut planes = Vec::new();
    for i in 0..format.plane_count() {
        let len = picture::plane_bytes(pic, i)
            .ok_or_else(|| format!("plane {i}: its stride is shorter than a row"))?;
        let (data, stride) = (pic.data[i], pic.stride[i] as usize);
        if data.is_null() {
            return Err(format!("plane {i} has no data"));
        }
        let (w, h) = (pic.w[i] as usize, pic.h[i] as usize);
        let samples = if bpc > 8 {
            if !(data as usize).is_multiple_of(2) || stride % 2 != 0 {
                return Err(format!(
                    "plane {i}: 16-bit samples not on 2-byte boundaries"
                ));
            }
            // SAFETY: the caller's promise above: `len` bytes from
            // data[i], 2-byte aligned (checked); any bits are a u16.
            picture::Samples::U16(unsafe {
                std::slice::from_raw_parts(data.cast::<u16>(), len / 2)
            })
        } else {
            // SAFETY: the caller's promise above: `len` bytes from data[i].
            picture::Samples::U8(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) })
        };
        planes.push((samples, w, h, if bpc > 8 { stride / 2 } else { stride }));
    }
    Ok(picture::View {
        format,
        bpc,
        planes,
    })
}

/// A caller's picture as the engine sees it: a device picture's planes
/// (from its block), or host planes borrowed for the call.
///
/// SAFETY: as [`view`].
unsafe fn seen<'a>(
    pic: &'a ffi::Picture,
    block: &Option<Box<picture::Block>>,
) -> Result<picture::Seen<'a>, String> {
    if let Some(picture::Block::Device(lent)) = block.as_deref() {
        let p = lent.params();
        return Ok(picture::Seen::Device(p.format, p.bpc, lent.device_planes()));
    }
    // SAFETY: the caller's promise above.
    unsafe { view(pic) }.map(picture::Seen::Host)
}

/// The block `vmaf_picture_alloc` gave picture `p`, owned from here (the
/// picture still points at it: [`clear`] it after), or None for planes
/// allocated elsewhere.
///
/// SAFETY: `p` is a VmafPicture whose block is taken once.
unsafe fn owned_block(p: *mut ffi::Picture) -> Option<Box<picture::Block>> {
    // SAFETY: the caller's promise above.
    let private = unsafe { (*p).private };
    // SAFETY: `private` is the block `vmaf_picture_alloc` boxed.
    (!private.is_null()).then(|| unsafe { Box::from_raw(private.cast::<picture::Block>()) })
}

/// Clears picture `p` after its block was taken (libvmaf's unref).
///
/// SAFETY: `p` is a VmafPicture no reference into which is alive.
unsafe fn clear(p: *mut ffi::Picture) {
    // SAFETY: the caller's promise above.
    let p = unsafe { &mut *p };
    if !p.private.is_null() {
        p.private = std::ptr::null_mut();
        p.reference = std::ptr::null_mut();
        p.data = [std::ptr::null_mut(); 3];
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn vmaf_read_pictures(
    vmaf: *mut Handle,
    reference: *mut ffi::Picture,
    distorted: *mut ffi::Picture,
    index: c_uint,
) -> c_int {
    // SAFETY: as [`handle`].
    let Some(h) = (unsafe { handle(vmaf) }) else {
        return einval("vmaf_read_pictures: a NULL argument");
    };
    if reference.is_null() && distorted.is_null() {
        return h.context.flush().map_or_else(code, |()| 0);
    }
    if reference.is_null() || distorted.is_null() || reference == distorted {
        return einval("vmaf_read_pictures: a reference and a distorted picture, or neither");
    }
    // libvmaf takes the pictures: their blocks go with the frame to the
    // engine, which releases them once done (a GPU engine uploads pinned
    // memory, or copies device pictures, after `push` returns).
    // SAFETY: two distinct VmafPictures, each block taken once.
    let blocks = [reference, distorted].map(|p| unsafe { owned_block(p) });
    let read = {
        // SAFETY: both are VmafPictures whose planes are readable as their
        // sizes say, alive (their blocks are in `blocks`) for the call.
        let (r, d) = unsafe { (&*reference, &*distorted) };
        // SAFETY: as above.
        let seen = unsafe { (seen(r, &blocks[0]), seen(d, &blocks[1])) };
        let lent: Vec<&device_picture::Lent> = blocks
            .iter()
            .filter_map(|b| match b.as_deref() {
                Some(picture::Block::Device(l)) => Some(l),
                _ => None,
            })
            .collect();
        match seen {
            (Ok(rv), Ok(dv)) => h.context.accept_device_pictures(&lent).and_then(|()| {
                let kept = Kept::of(blocks, [r, d]);
                h.context.read(&rv, &dv, index, kept)
            }),
            (Err(e), _) => Err(Failure(-ffi::EINVAL, format!("reference picture: {e}"))),
            (_, Err(e)) => Err(Failure(-ffi::EINVAL, format!("distorted picture: {e}"))),
        }
    };
    for p in [reference, distorted] {
        // SAFETY: the views are gone; the pictures are cleared as unreferenced.
        unsafe { clear(p) };
    }
    read.map_or_else(code, |()| 0)
}

/// A frame pair's host pictures whose blocks the library holds: uploaded
/// in place by the GPU engine and, should the GPU fail, made again for the
/// CPU engine from the same memory instead of a copy of every frame.
pub struct Held {
    _blocks: Vec<picture::Block>,
    pictures: [ffi::Picture; 2],
}

// SAFETY: the planes the pictures point into lie in the blocks `Held`
// owns, which nothing writes while it lives (libvmaf took the pictures);
// they are only read, from whichever thread.
unsafe impl Send for Held {}
// SAFETY: as above: shared reads of memory nothing writes.
unsafe impl Sync for Held {}

impl Held {
    /// The pair `pics`, whose planes lie in `blocks` (host blocks both).
    pub fn new(blocks: Vec<picture::Block>, pics: [&ffi::Picture; 2]) -> Held {
        let copy = |p: &ffi::Picture| ffi::Picture {
            data: p.data,
            w: p.w,
            h: p.h,
            stride: p.stride,
            ..ffi::Picture::empty(p.pix_fmt, p.bpc)
        };
        Held {
            _blocks: blocks,
            pictures: pics.map(copy),
        }
    }
}

impl Replay for Held {
    fn pictures(
        &self,
        f: &mut dyn FnMut(&Picture<'_>, &Picture<'_>) -> Result<(), VmafError>,
    ) -> Result<(), VmafError> {
        // SAFETY: the planes lie in the blocks held, alive while `self` is.
        let views = unsafe { (view(&self.pictures[0]), view(&self.pictures[1])) };
        match views {
            (Ok(r), Ok(d)) => f(&r.picture()?, &d.picture()?),
            (Err(e), _) | (_, Err(e)) => Err(VmafError::InvalidPicture(e)),
        }
    }
}

impl Kept {
    /// What holds the pair's memory: for two host blocks, a [`Held`] pair
    /// the failover reads again; else the blocks alone.
    fn of(blocks: [Option<Box<picture::Block>>; 2], pics: [&ffi::Picture; 2]) -> Kept {
        let host = blocks
            .iter()
            .all(|b| matches!(b.as_deref(), Some(picture::Block::Host { .. })));
        let blocks: Vec<picture::Block> = blocks.into_iter().flatten().map(|b| *b).collect();
        if host {
            return Kept::Replayable(Arc::new(Held::new(blocks, pics)));
        }
        Kept::Blocks(blocks)
    }
}
