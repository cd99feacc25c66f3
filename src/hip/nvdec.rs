//! NVIDIA's hardware video decoder (NVDEC), driven directly through
//! `libnvcuvid.so.1`, loaded at run time like `libcuda` (nothing linked:
//! without the library, [`available`] says why and callers decode another
//! way).
//!
//! The command uses it for H.264, HEVC, VP9 and AV1 on NVIDIA GPUs: the decoder runs
//! in the engine's own CUDA context, so a decoded picture is copied from
//! NVDEC's output surface into the frame the element reads on the device,
//! and no plane goes through the host. NVIDIA's parser (part of the
//! library) splits the stream (Annex B for H.264 and HEVC, frames or
//! superframes for VP9, temporal units of OBUs for AV1) into pictures, in decode order, and
//! hands them back in display order; this module queues them, and the
//! caller copies each out with [`NvDecoder::copy_out`].

use super::device::{Device, Stream};
use super::ffi::{self, CuvidFns, Handle};
use super::module::{Arg, Kernel, Module, compile_source};
use super::twin::{blocks, sig};
use super::{Api, Runtime};
use libloading::Library;
use std::collections::VecDeque;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::{Arc, OnceLock};

/// Pictures the parser holds back before showing one: lets NVDEC decode
/// ahead of the copies (NVIDIA recommends 2–4).
const DISPLAY_DELAY: u32 = 4;

/// The streams this path decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    H264,
    Hevc,
    Vp9,
    Av1,
}

impl Codec {
    /// The codec of a parser's caps name (`video/x-h264`, `video/x-h265`,
    /// `video/x-vp9`, `video/x-av1`).
    pub fn from_caps_name(name: &str) -> Option<Codec> {
        match name {
            "video/x-h264" => Some(Codec::H264),
            "video/x-h265" => Some(Codec::Hevc),
            "video/x-vp9" => Some(Codec::Vp9),
            "video/x-av1" => Some(Codec::Av1),
            _ => None,
        }
    }

    /// The codec's usual name.
    pub fn name(self) -> &'static str {
        match self {
            Codec::H264 => "H.264",
            Codec::Hevc => "HEVC",
            Codec::Vp9 => "VP9",
            Codec::Av1 => "AV1",
        }
    }

    fn cuvid(self) -> c_int {
        match self {
            Codec::H264 => ffi::CUVID_CODEC_H264,
            Codec::Hevc => ffi::CUVID_CODEC_HEVC,
            Codec::Vp9 => ffi::CUVID_CODEC_VP9,
            Codec::Av1 => ffi::CUVID_CODEC_AV1,
        }
    }
}

/// The library's function table, loaded once per process.
fn cuvid() -> Result<&'static CuvidFns, String> {
    static LIB: OnceLock<Result<(Library, CuvidFns), String>> = OnceLock::new();
    LIB.get_or_init(|| {
        let (lib, name) = ffi::open_first(&["libnvcuvid.so.1", "libnvcuvid.so"])?;
        // SAFETY: the table's signatures are those of nvcuvid.h/cuviddec.h.
        let fns = unsafe { CuvidFns::load(&lib, &name) }?;
        Ok((lib, fns))
    })
    .as_ref()
    .map(|(_, fns)| fns)
    .map_err(Clone::clone)
}

/// Whether NVDEC can be driven on `dev`: an NVIDIA device and the library.
pub fn available(dev: &Device) -> Result<(), String> {
    if !matches!(dev.runtime().api, Api::Nvidia { .. }) {
        return Err("NVDEC needs an NVIDIA GPU".into());
    }
    cuvid().map(|_| ())
}

/// The chroma layouts this path decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chroma {
    /// 4:2:0, out of NVDEC as NV12 (P016 above 8 bits): luma, then U and V
    /// interleaved at half size.
    Yuv420,
    /// 4:4:4, out of NVDEC as three full planes (16-bit, the samples in
    /// the high bits, above 8 bits).
    Yuv444,
}

impl Chroma {
    fn cuvid(self) -> c_int {
        match self {
            Chroma::Yuv420 => ffi::CUVID_CHROMA_420,
            Chroma::Yuv444 => ffi::CUVID_CHROMA_444,
        }
    }

    fn from_cuvid(format: c_int) -> Option<Chroma> {
        match format {
            ffi::CUVID_CHROMA_420 => Some(Chroma::Yuv420),
            ffi::CUVID_CHROMA_444 => Some(Chroma::Yuv444),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Chroma::Yuv420 => "4:2:0",
            Chroma::Yuv444 => "4:4:4",
        }
    }
}

/// Whether this path takes `bit_depth`, in either layout: 8, 10 and 12
/// bits (4:2:0 as NV12, P010 and P012; 4:4:4 as planar samples, shifted
/// down from the high bits as they are copied above 8 bits).
pub fn takes_depth(bit_depth: u8) -> bool {
    matches!(bit_depth, 8 | 10 | 12)
}

/// Whether NVDEC on `dev` decodes `codec` at `bit_depth` in `chroma`, at
/// this size; if not, why (the GPU lacks it, or the size is past its limits).
pub fn supports(
    dev: &Device,
    codec: Codec,
    bit_depth: u8,
    chroma: Chroma,
    (width, height): (usize, usize),
) -> Result<(), String> {
    let fns = cuvid()?;
    let mut caps = ffi::CuvidDecodeCaps {
        codec_type: codec.cuvid(),
        chroma_format: chroma.cuvid(),
        bit_depth_minus8: c_uint::from(bit_depth.saturating_sub(8)),
        ..Default::default()
    };
    dev.make_current().map_err(|e| e.to_string())?;
    // SAFETY: a valid, zeroed-out CUVIDDECODECAPS; the context is current.
    let r = unsafe { (fns.get_decoder_caps)(&mut caps) };
    if r != 0 {
        return Err(format!("cuvidGetDecoderCaps failed ({r})"));
    }
    if caps.is_supported == 0 {
        return Err(format!(
            "NVDEC on {} does not decode {} {} at {bit_depth} bits",
            dev.info.name,
            codec.name(),
            chroma.name()
        ));
    }
    let (w, h) = (width as c_uint, height as c_uint);
    if w > caps.max_width || h > caps.max_height || w * h / 256 > caps.max_mb_count {
        return Err(format!(
            "NVDEC on {} decodes {} up to {}x{} ({} macroblocks), not {width}x{height}",
            dev.info.name,
            codec.name(),
            caps.max_width,
            caps.max_height,
            caps.max_mb_count
        ));
    }
    Ok(())
}

/// What the stream's sequence header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sequence {
    pub width: usize,
    pub height: usize,
    pub bit_depth: u8,
    pub chroma: Chroma,
}

impl Sequence {
    /// Bytes per sample of the output surface (NV12: 1, P016: 2).
    pub fn sample_bytes(&self) -> usize {
        if self.bit_depth > 8 { 2 } else { 1 }
    }

    /// Whether the samples are shifted down as they are copied: 4:4:4
    /// above 8 bits, whose high-bit layout no planar format describes
    /// (4:2:0's P016 is P010's and P012's layout as it is).
    pub fn shifted(&self) -> bool {
        self.chroma == Chroma::Yuv444 && self.bit_depth > 8
    }

    /// The rows of each output plane: luma and interleaved chroma (4:2:0),
    /// or Y, U and V (4:4:4).
    pub fn plane_rows(&self) -> Vec<usize> {
        match self.chroma {
            Chroma::Yuv420 => vec![self.height, self.height.div_ceil(2)],
            Chroma::Yuv444 => vec![self.height; 3],
        }
    }
}

/// A picture decoded (or being decoded), in display order.
#[derive(Clone, Copy, Debug)]
pub struct Picture(ffi::CuvidParserDispInfo);

/// What the parser's callbacks share with the decoder (boxed: the parser
/// holds its address).
struct State {
    fns: &'static CuvidFns,
    /// Names CUDA's error codes (NVDEC returns CUresult).
    rt: Arc<Runtime>,
    codec: Codec,
    decoder: Handle,
    sequence: Option<Sequence>,
    /// The output surface's height (the chroma plane starts that many rows
    /// below luma).
    surface_height: usize,
    /// Crop offsets of the displayed area within the decoded surface.
    crop: (usize, usize),
    ready: VecDeque<Picture>,
    /// The first failure inside a callback, reported by the next call.
    error: Option<String>,
}

/// One stream's NVDEC session in the engine's CUDA context.
pub struct NvDecoder {
    dev: Arc<Device>,
    state: Box<State>,
    parser: Handle,
    stream: Stream,
    /// The copy that shifts deep 4:4:4 samples down (`nvdec.hip`), loaded
    /// with the first such picture.
    shift_down: Option<Kernel>,
}

// SAFETY: the handles are used from one thread at a time (`&mut self`);
// NVDEC sessions and parsers are not tied to the thread that made them
// once the context is current there (`make_current` on every call).
unsafe impl Send for NvDecoder {}

impl NvDecoder {
    /// A parser for `codec`; the decoder itself is created when the first
    /// sequence header is parsed.
    pub fn new(dev: &Arc<Device>, codec: Codec) -> Result<NvDecoder, String> {
        available(dev)?;
        let fns = cuvid()?;
        dev.make_current().map_err(|e| e.to_string())?;
        let stream = Stream::new(dev).map_err(|e| e.to_string())?;
        let mut state = Box::new(State {
            fns,
            rt: dev.runtime().clone(),
            codec,
            decoder: std::ptr::null_mut(),
            sequence: None,
            surface_height: 0,
            crop: (0, 0),
            ready: VecDeque::new(),
            error: None,
        });
        let mut params = ffi::CuvidParserParams {
            codec_type: codec.cuvid(),
            // The sequence callback's return value raises it.
            max_num_decode_surfaces: 1,
            clock_rate: 0,
            error_threshold: 0,
            max_display_delay: DISPLAY_DELAY,
            flags: 0,
            reserved1: [0; 4],
            user_data: (&mut *state as *mut State).cast(),
            sequence_callback: Some(on_sequence),
            decode_picture: Some(on_decode),
            display_picture: Some(on_display),
            get_operating_point: std::ptr::null_mut(),
            get_sei_msg: std::ptr::null_mut(),
            reserved2: [std::ptr::null_mut(); 5],
            ext_video_info: std::ptr::null_mut(),
        };
        let mut parser: Handle = std::ptr::null_mut();
        // SAFETY: valid out-pointer and parameters; `state` is boxed and
        // outlives the parser (destroyed first in `drop`).
        state.check(
            unsafe { (fns.create_video_parser)(&mut parser, &mut params) },
            "cuvidCreateVideoParser",
        )?;
        Ok(NvDecoder {
            dev: dev.clone(),
            state,
            parser,
            stream,
            shift_down: None,
        })
    }

    /// Parses one access unit (a whole picture, Annex B): decodes it, and
    /// queues the pictures now due for display ([`NvDecoder::pop`]).
    pub fn push(&mut self, au: &[u8]) -> Result<(), String> {
        self.parse(au, ffi::CUVID_PKT_ENDOFPICTURE)
    }

    /// The end of the stream: every picture still held back is queued.
    pub fn finish(&mut self) -> Result<(), String> {
        self.parse(&[], ffi::CUVID_PKT_ENDOFSTREAM)
    }

    fn parse(&mut self, data: &[u8], flags: std::ffi::c_ulong) -> Result<(), String> {
        self.dev.make_current().map_err(|e| e.to_string())?;
        let mut packet = ffi::CuvidSourceDataPacket {
            flags,
            payload_size: data.len() as std::ffi::c_ulong,
            payload: if data.is_empty() {
                std::ptr::null()
            } else {
                data.as_ptr()
            },
            timestamp: 0,
        };
        // SAFETY: the packet points into `data` for the call; the callbacks
        // it triggers run on this thread, inside it, with `state`.
        let r = unsafe { (self.state.fns.parse_video_data)(self.parser, &mut packet) };
        if let Some(e) = self.state.error.take() {
            return Err(e);
        }
        self.state.check(r, "cuvidParseVideoData")
    }

    /// The next picture in display order, if one is due.
    pub fn pop(&mut self) -> Option<Picture> {
        self.state.ready.pop_front()
    }

    /// The stream's size and depth, once its sequence header was parsed.
    pub fn sequence(&self) -> Option<Sequence> {
        self.state.sequence
    }

    /// Copies `pic` into `dst`'s planes on the device, each `(address,
    /// pitch, bytes mapped)`: NV12 (P010, P012 above 8 bits), luma then
    /// interleaved chroma, or 4:4:4's Y, U and V (above 8 bits shifted down
    /// into plain samples, [`Sequence::shifted`]). Returns once the copies
    /// are done and the surface is released.
    pub fn copy_out(&mut self, pic: Picture, dst: &[(u64, usize, usize)]) -> Result<(), String> {
        let seq = self
            .state
            .sequence
            .ok_or("NVDEC: a picture before any sequence")?;
        let rows = seq.plane_rows();
        if dst.len() != rows.len() {
            return Err(format!(
                "NVDEC: {} output planes for {} {}",
                dst.len(),
                rows.len(),
                seq.chroma.name()
            ));
        }
        let row = seq.width * seq.sample_bytes();
        for (p, &(addr, pitch, bytes)) in dst.iter().enumerate() {
            if addr == 0 || pitch < row || bytes < pitch * (rows[p] - 1) + row {
                return Err(format!(
                    "NVDEC: output plane {p} too small for {}x{}",
                    seq.width, seq.height
                ));
            }
        }
        self.dev.make_current().map_err(|e| e.to_string())?;
        if seq.shifted() && self.shift_down.is_none() {
            self.shift_down = Some(shift_down_kernel(&self.dev)?);
        }
        let d = pic.0;
        let mut proc = ffi::CuvidProcParams {
            progressive_frame: d.progressive_frame,
            second_field: d.repeat_first_field + 1,
            top_field_first: d.top_field_first,
            unpaired_field: (d.repeat_first_field < 0) as c_int,
            reserved_flags: 0,
            reserved_zero: 0,
            raw_input_dptr: 0,
            raw_input_pitch: 0,
            raw_input_format: 0,
            raw_output_dptr: 0,
            raw_output_pitch: 0,
            reserved1: 0,
            output_stream: self.stream.raw(),
            reserved: [0; 46],
            histogram_dptr: std::ptr::null_mut(),
            reserved2: [std::ptr::null_mut(); 1],
        };
        let (mut src, mut pitch): (u64, c_uint) = (0, 0);
        let fns = self.state.fns;
        // SAFETY: a live decoder, a picture index the parser gave, valid
        // out-pointers and parameters.
        self.state.check(
            unsafe {
                (fns.map_video_frame)(
                    self.state.decoder,
                    d.picture_index,
                    &mut src,
                    &mut pitch,
                    &mut proc,
                )
            },
            "cuvidMapVideoFrame64",
        )?;
        let copied = self.copy_planes(src, pitch as usize, &seq, &rows, dst);
        // SAFETY: `src` is the mapping made above, released once.
        let unmapped = unsafe { (fns.unmap_video_frame)(self.state.decoder, src) };
        copied?;
        self.state.check(unmapped, "cuvidUnmapVideoFrame64")
    }

    /// The plane copies (`rows` each, [`Sequence::plane_rows`]) out of a
    /// mapped surface, waited for. NVDEC lays
    /// each plane after the last, a whole surface (its height rounded up
    /// to even) apart.
    fn copy_planes(
        &self,
        src: u64,
        pitch: usize,
        seq: &Sequence,
        rows: &[usize],
        dst: &[(u64, usize, usize)],
    ) -> Result<(), String> {
        let Api::Nvidia { cu, .. } = &self.dev.runtime().api else {
            return Err("NVDEC needs an NVIDIA GPU".into());
        };
        let (left, top) = self.state.crop;
        let left = left * seq.sample_bytes();
        let surface = self.state.surface_height.next_multiple_of(2);
        let first_row = |plane: usize| match (seq.chroma, plane) {
            (_, 0) => top,
            (Chroma::Yuv420, _) => surface + top / 2,
            (Chroma::Yuv444, p) => p * surface + top,
        };
        for (k, (&height, &(to, to_pitch, _))) in rows.iter().zip(dst).enumerate() {
            let from = src + (first_row(k) * pitch + left) as u64;
            if let Some(kernel) = self.shift_down.as_ref().filter(|_| seq.shifted()) {
                let args = [
                    Arg::Foreign(from),
                    Arg::I32(pitch as i32),
                    Arg::I32(seq.width as i32),
                    Arg::I32(height as i32),
                    Arg::I32(16 - i32::from(seq.bit_depth)),
                    Arg::Foreign(to),
                    Arg::I32(to_pitch as i32),
                ];
                let grid = (blocks(seq.width), height as u32, 1);
                self.stream
                    .launch(kernel, grid, (256, 1, 1), 0, &args)
                    .map_err(|e| e.to_string())?;
                continue;
            }
            let p = ffi::CudaMemcpy2D {
                src_x_in_bytes: 0,
                src_y: 0,
                src_memory_type: ffi::CU_MEMORYTYPE_DEVICE,
                src_host: std::ptr::null(),
                src_device: from,
                src_array: std::ptr::null_mut(),
                src_pitch: pitch,
                dst_x_in_bytes: 0,
                dst_y: 0,
                dst_memory_type: ffi::CU_MEMORYTYPE_DEVICE,
                dst_host: std::ptr::null_mut(),
                dst_device: to,
                dst_array: std::ptr::null_mut(),
                dst_pitch: to_pitch,
                width_in_bytes: seq.width * seq.sample_bytes(),
                height,
            };
            // SAFETY: the source is the mapped surface (pitch × its rows,
            // as NVDEC laid it out); the destination's size was checked in
            // `copy_out`; `p` lives across the call.
            let r = unsafe { (cu.memcpy_2d_async)(&p, self.stream.raw()) };
            self.dev
                .runtime()
                .check(r, "cuMemcpy2DAsync")
                .map_err(|e| e.to_string())?;
        }
        self.stream.synchronize().map_err(|e| e.to_string())
    }
}

/// `nvdec.hip`'s shifting copy, compiled for `dev` (or taken from the
/// kernel cache) and loaded.
fn shift_down_kernel(dev: &Arc<Device>) -> Result<Kernel, String> {
    let text = |e: super::HipError| format!("NVDEC's copy kernel: {e}");
    let (file, source) = KERNEL_SOURCE;
    let (code, _) = compile_source(dev.runtime(), &dev.info.arch, file, source).map_err(text)?;
    Module::load(dev, &code)
        .and_then(|m| m.kernel("nvdec_shift_down_16", &sig("p iii i p i")))
        .map_err(text)
}

/// The kernel file of this module, for the checks that compile every one.
pub const KERNEL_SOURCE: (&str, &str) = ("nvdec.hip", include_str!("nvdec.hip"));

impl Drop for NvDecoder {
    fn drop(&mut self) {
        let _ = self.dev.make_current();
        // SAFETY: handles made by this decoder, each destroyed once, the
        // parser (which calls into `state`) first.
        unsafe {
            (self.state.fns.destroy_video_parser)(self.parser);
            if !self.state.decoder.is_null() {
                (self.state.fns.destroy_decoder)(self.state.decoder);
            }
        }
    }
}

impl State {
    fn check(&self, code: c_int, call: &'static str) -> Result<(), String> {
        self.rt.check(code, call).map_err(|e| e.to_string())
    }
}

/// The sequence callback: creates the decoder for the stream's first
/// sequence; returns how many decode surfaces the parser may cycle through
/// (0 stops parsing).
unsafe extern "C" fn on_sequence(user: *mut c_void, format: *mut ffi::CuvidVideoFormat) -> c_int {
    // SAFETY: `user` is the boxed `State` this parser was made with, used
    // only on the parsing thread; `format` is valid for the call.
    let (state, f) = unsafe { (&mut *(user as *mut State), &*format) };
    match state.start(f) {
        Ok(surfaces) => surfaces as c_int,
        Err(e) => {
            state.error.get_or_insert(e);
            0
        }
    }
}

/// The decode callback: one picture's parameters, in decode order.
unsafe extern "C" fn on_decode(user: *mut c_void, pic: *mut c_void) -> c_int {
    // SAFETY: as in `on_sequence`; `pic` is the parser's CUVIDPICPARAMS.
    let state = unsafe { &mut *(user as *mut State) };
    if state.decoder.is_null() {
        state
            .error
            .get_or_insert("NVDEC: a picture before any sequence".into());
        return 0;
    }
    // SAFETY: a live decoder and the parser's picture parameters.
    let r = unsafe { (state.fns.decode_picture)(state.decoder, pic) };
    match state.check(r, "cuvidDecodePicture") {
        Ok(()) => 1,
        Err(e) => {
            state.error.get_or_insert(e);
            0
        }
    }
}

/// The display callback: a picture due for display (null at the end).
unsafe extern "C" fn on_display(user: *mut c_void, info: *mut ffi::CuvidParserDispInfo) -> c_int {
    // SAFETY: as in `on_sequence`; `info` is valid for the call or null.
    let state = unsafe { &mut *(user as *mut State) };
    if !info.is_null() {
        // SAFETY: non-null, valid for the call; copied out.
        state.ready.push_back(Picture(unsafe { *info }));
    }
    1
}

impl State {
    /// Creates the decoder for `f`, or checks that a later sequence header
    /// keeps the size and format. Returns the decode surfaces.
    fn start(&mut self, f: &ffi::CuvidVideoFormat) -> Result<u32, String> {
        let [left, top, right, bottom] = f.display_area;
        let bit_depth = f.bit_depth_luma_minus8 + 8;
        let chroma = Chroma::from_cuvid(f.chroma_format)
            .filter(|_| takes_depth(bit_depth))
            .ok_or_else(|| {
                format!(
                    "NVDEC: this path decodes 8-, 10- and 12-bit 4:2:0 and 4:4:4 only (the stream is {bit_depth}-bit, chroma format {})",
                    f.chroma_format
                )
            })?;
        let seq = Sequence {
            width: (right - left).max(0) as usize,
            height: (bottom - top).max(0) as usize,
            bit_depth,
            chroma,
        };
        let surfaces = (f.min_num_decode_surfaces as u32 + DISPLAY_DELAY + 2).clamp(8, 32);
        if let Some(old) = self.sequence {
            if old != seq {
                return Err(format!(
                    "NVDEC: the stream changes from {}x{} to {}x{} mid-stream",
                    old.width, old.height, seq.width, seq.height
                ));
            }
            return Ok(surfaces);
        }
        let mut info = ffi::CuvidDecodeCreateInfo {
            width: f.coded_width as _,
            height: f.coded_height as _,
            num_decode_surfaces: surfaces as _,
            codec_type: self.codec.cuvid(),
            chroma_format: f.chroma_format,
            creation_flags: ffi::CUVID_CREATE_PREFER_CUVID,
            bit_depth_minus8: f.bit_depth_luma_minus8 as _,
            intra_decode_only: 0,
            max_width: f.coded_width as _,
            max_height: f.coded_height as _,
            reserved1: 0,
            // Zero: the whole coded picture (cropped in the copy).
            display_area: [0; 4],
            // 10 and 12 bits: P016, the samples in the high bits (P010's
            // and P012's layouts).
            output_format: match (chroma, seq.bit_depth) {
                (Chroma::Yuv444, 8) => ffi::CUVID_SURFACE_YUV444,
                (Chroma::Yuv444, _) => ffi::CUVID_SURFACE_YUV444_16BIT,
                (Chroma::Yuv420, 8) => ffi::CUVID_SURFACE_NV12,
                (Chroma::Yuv420, _) => ffi::CUVID_SURFACE_P016,
            },
            deinterlace_mode: ffi::CUVID_DEINTERLACE_WEAVE,
            // The output surface is the coded size: no scaling; the
            // displayed area is cropped in the copy.
            target_width: f.coded_width as _,
            target_height: f.coded_height as _,
            num_output_surfaces: 2,
            vid_lock: std::ptr::null_mut(),
            target_rect: [0; 4],
            enable_histogram: 0,
            reserved2: [0; 4],
        };
        let mut decoder: Handle = std::ptr::null_mut();
        // SAFETY: valid out-pointer and parameters; the engine's context is
        // current on this thread (the caller of cuvidParseVideoData).
        self.check(
            unsafe { (self.fns.create_decoder)(&mut decoder, &mut info) },
            "cuvidCreateDecoder",
        )?;
        self.decoder = decoder;
        self.sequence = Some(seq);
        self.surface_height = f.coded_height as usize;
        self.crop = (left.max(0) as usize, top.max(0) as usize);
        Ok(surfaces)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_layout_has_its_planes_and_depths() {
        let seq = |chroma| Sequence {
            width: 1920,
            height: 1081,
            bit_depth: 8,
            chroma,
        };
        assert_eq!(seq(Chroma::Yuv420).plane_rows(), [1081, 541]);
        assert_eq!(seq(Chroma::Yuv444).plane_rows(), [1081, 1081, 1081]);
        assert!(takes_depth(10) && takes_depth(12));
        assert!(!takes_depth(9) && !takes_depth(14) && !takes_depth(16));
        assert_eq!(
            Chroma::from_cuvid(ffi::CUVID_CHROMA_444),
            Some(Chroma::Yuv444)
        );
        assert_eq!(Chroma::from_cuvid(2), None); // 4:2:2
    }
}
