//! The live station's memory after a burst. A station held up (a busy
//! machine) catches up by holding a backlog of decoded frames at once.
//! glibc raises its mmap threshold to the size of each mapped block freed,
//! so frame-sized blocks soon come from the heap instead, and after the
//! burst the heap, fragmented by the small blocks among them, stays at
//! its high-water mark: resident memory steps up at each burst and never
//! comes down. A fixed threshold keeps every frame in a mapping of its
//! own, returned to the system when freed, and the heap's free pages are
//! given back every [`TRIM_EVERY`] ([`give_back_free_pages`]): the small
//! blocks of a burst (compressed data, events) leave free pages among
//! those in use, which glibc keeps otherwise.
//!
//! Each thread's blocks come from an arena of glibc's; a station's threads
//! share two ([`for_a_station`]), or their arenas grow apart.
//!
//! A decoder's buffer pool has the same high-water mark: it keeps every
//! buffer it ever gave out, so a backlog held in the queue before the
//! element would stay allocated in the pool for good. The frames are
//! copied into memory of their own as they enter that queue
//! ([`frames_in_own_memory`]): the pool stays at what decoding needs, and
//! a backlog is freed once scored. The element would copy most of them
//! anyway (the tracker of `align` holds frames past their turn): marked
//! holdable, they are not copied again. Frames a decoder wrote into the
//! element's pinned memory (its pool on a GPU) pass as they are: the GPU
//! reads them in place, and a copy would only be copied back into pinned
//! memory.

use gst::prelude::*;

/// Blocks this big or bigger get a mapping of their own: every frame of
/// 320x180 4:2:0 or more (86,400 bytes), none of the small ones.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const OWN_MAPPING: libc::c_int = 64 * 1024;

/// glibc's arenas for the station's threads. With its default (eight per
/// core) a station on a GPU grew at each reconnect of a source, in the
/// arenas of its threads, through the trims; with two it stays flat
/// (docs/device-runs/2026-11-29-reconnect-memory-h200.txt).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const ARENAS: libc::c_int = 2;

/// How often the live station gives the heap's free pages back.
pub const TRIM_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// Gives the free pages of glibc's heaps back to the system (a no-op
/// elsewhere than glibc).
pub fn give_back_free_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases pages of glibc's arenas that hold
    // no block in use; it may be called from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The live station's heap, set before any thread starts (a no-op
/// elsewhere than glibc): every frame-sized block in a mapping of its own,
/// and the threads' blocks in [`ARENAS`] arenas.
pub fn for_a_station() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets parameters of glibc's allocator, for the
    // blocks and arenas made from then on; M_MMAP_THRESHOLD takes any
    // value up to 32 MiB, M_ARENA_MAX any positive count, and the calls
    // allocate and free nothing.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, OWN_MAPPING);
        libc::mallopt(libc::M_ARENA_MAX, ARENAS);
    }
}

/// Copies each frame in system memory that enters `queue` into memory of
/// its own, marked holdable, and lets the decoder's buffer go back to its
/// pool at once. Frames in other memory (a GPU's, or the element's pinned
/// memory) pass as they are.
pub fn frames_in_own_memory(queue: &gst::Element) {
    let Some(pad) = queue.static_pad("sink") else {
        return;
    };
    pad.add_probe(gst::PadProbeType::BUFFER, |_, info| {
        if let Some(gst::PadProbeData::Buffer(buffer)) = info.data.as_mut()
            && in_system_memory(buffer)
            && !in_pinned_memory(buffer)
            && let Ok(mut copy) = buffer.copy_deep()
        {
            gstvmafhip::mark_holdable(copy.make_mut());
            *buffer = copy;
        }
        gst::PadProbeReturn::Ok
    });
}

/// Whether every memory of `buffer` is system memory.
fn in_system_memory(buffer: &gst::BufferRef) -> bool {
    buffer.n_memory() > 0 && buffer.iter_memories().all(|m| m.is_type("SystemMemory"))
}

/// Whether `buffer`'s first memory lies in pinned memory of the element's
/// (its pool's blocks).
fn in_pinned_memory(buffer: &gst::BufferRef) -> bool {
    buffer
        .peek_memory(0)
        .map_readable()
        .is_ok_and(|m| gstvmafhip::hip::pinned_owner(m.as_slice()).is_some())
}
