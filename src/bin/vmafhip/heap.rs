//! The live station's memory after a burst. A station held up (a busy
//! machine) catches up by holding a backlog of decoded frames at once.
//! glibc raises its mmap threshold to the size of each mapped block freed,
//! so frame-sized blocks soon come from the heap instead, and after the
//! burst the heap, fragmented by the small blocks among them, stays at
//! its high-water mark: resident memory steps up at each burst and never
//! comes down. A fixed threshold keeps every frame in a mapping of its
//! own, returned to the system when freed.

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
