//! The live station's memory after a burst. A station held up (a busy
//! machine) catches up by holding a backlog of decoded frames at once.
//! glibc raises its mmap threshold to the size of each mapped block freed,
//! so frame-sized blocks soon come from the heap instead, and after the
//! burst the heap, fragmented by the small blocks among them, stays at
//! its high-water mark: resident memory steps up at each burst and never
//! comes down. A fixed threshold keeps every frame in a mapping of its
//! own, returned to the system when freed.
//!
//! A decoder's buffer pool has the same high-water mark: it keeps every
//! buffer it ever gave out, so a backlog held in the queue before the
//! element would stay allocated in the pool for good. The frames are
//! copied into memory of their own as they enter that queue
//! ([`frames_in_own_memory`]): the pool stays at what decoding needs, and
//! a backlog is freed once scored. The element would copy most of them
//! anyway (the tracker of `align` holds frames past their turn): marked
//! holdable, they are not copied again.

use gst::prelude::*;

/// Blocks this big or bigger get a mapping of their own: every frame of
/// 320x180 4:2:0 or more (86,400 bytes), none of the small ones.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const OWN_MAPPING: libc::c_int = 64 * 1024;

/// Makes glibc map every frame-sized block on its own, for the rest of
/// the process (a no-op elsewhere than glibc).
pub fn map_frames_on_their_own() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of glibc's allocator, for the
    // blocks allocated from then on; M_MMAP_THRESHOLD takes any value up
    // to 32 MiB, and the call allocates and frees nothing.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, OWN_MAPPING);
    }
}

/// Copies each frame in system memory that enters `queue` into memory of
/// its own, marked holdable, and lets the decoder's buffer go back to its
/// pool at once. Frames in other memory (a GPU's) pass as they are.
pub fn frames_in_own_memory(queue: &gst::Element) {
    let Some(pad) = queue.static_pad("sink") else {
        return;
    };
    pad.add_probe(gst::PadProbeType::BUFFER, |_, info| {
        if let Some(gst::PadProbeData::Buffer(buffer)) = info.data.as_mut()
            && in_system_memory(buffer)
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
