//! Frames the element may hold as they are: the mark a producer puts on
//! buffers it does not wait for back, which the tracker of `align` and
//! the reference frames waiting in a live pipeline then keep uncopied.

/// The custom meta (`GstCustomMeta` of this name) that marks a buffer the
/// element may hold for as long as it needs: its producer does not wait
/// for it back (a pool without a bound, as the command's readers and
/// NVDEC path use). Other frames the tracker holds past their turn are
/// copied, since a decoder whose buffers are held may stall.
pub const HOLDABLE_META: &str = "VmafHipHoldableMeta";

/// Registers [`HOLDABLE_META`] once per process; a copy or transform of a
/// buffer does not carry it.
pub(super) fn register_holdable_meta() {
    if !gst::meta::CustomMeta::is_registered(HOLDABLE_META) {
        gst::meta::CustomMeta::register_with_transform(HOLDABLE_META, &[], |_, _, _, _| false);
    }
}

/// Marks `buffer` as one the element may hold ([`HOLDABLE_META`]).
pub fn mark_holdable(buffer: &mut gst::BufferRef) {
    let _ = gst::meta::CustomMeta::add(buffer, HOLDABLE_META);
}

/// Whether `buffer` carries [`HOLDABLE_META`].
fn holdable(buffer: &gst::BufferRef) -> bool {
    gst::meta::CustomMeta::from_buffer(buffer, HOLDABLE_META).is_ok()
}

/// Makes `buffer` a copy of its own unless it is marked holdable: a
/// decoder's pool may be small, and a decoder whose buffers are held
/// stalls.
pub(in crate::element) fn own_copy(buffer: &mut gst::Buffer) {
    if holdable(buffer) {
        return;
    }
    if let Ok(copy) = buffer.copy_deep() {
        *buffer = copy;
    }
}
