//! What an input holds: its role, its kind, and its video as it arrives.
//! The bottom of the media modules.

use gstvmafhip::vmaf::PixelFormat;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Reference,
    /// The distorted file of a pair (`dist_sink`).
    Distorted,
    /// Rendition `k` of a ladder (`dist_sink_k`).
    Rendition(u32),
}

impl Role {
    /// Prefix of its elements' names (`ref`, `dist`, `rend0`, …).
    pub fn prefix(self) -> String {
        match self {
            Role::Reference => "ref".into(),
            Role::Distorted => "dist".into(),
            Role::Rendition(k) => format!("rend{k}"),
        }
    }

    /// Its `vmafhip` sink pad.
    pub fn sink(self) -> String {
        match self {
            Role::Reference => "ref_sink".into(),
            Role::Distorted => "dist_sink".into(),
            Role::Rendition(k) => format!("dist_sink_{k}"),
        }
    }

    /// The role whose elements' names start as `name` does (`rend2-file`).
    pub fn of_element(name: &str) -> Option<Role> {
        let (prefix, _) = name.split_once('-')?;
        match prefix {
            "ref" => Some(Role::Reference),
            "dist" => Some(Role::Distorted),
            p => p.strip_prefix("rend")?.parse().ok().map(Role::Rendition),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Raw,
    Y4m,
    Media,
}

/// An input's video as it arrives (before any scaling).
#[derive(Clone, Debug)]
pub struct Video {
    pub width: usize,
    pub height: usize,
    pub format: PixelFormat,
    pub bpc: u8,
    /// Frame rate (0/1 when variable or unknown).
    pub fps: (u32, u32),
    pub par: (i32, i32),
}

impl Video {
    /// `8-bit 4:2:0` and the like.
    pub fn describe(&self) -> String {
        let layout = match self.format {
            PixelFormat::Yuv420 => "4:2:0",
            PixelFormat::Yuv422 => "4:2:2",
            PixelFormat::Yuv444 => "4:4:4",
            PixelFormat::Gray => "4:0:0",
        };
        format!("{}-bit {layout}", self.bpc)
    }

    /// The GStreamer format both inputs are scored in: this video's chroma
    /// layout and depth (RGB becomes 4:2:0; VMAF is defined on YUV).
    pub fn scoring_format(&self) -> &'static str {
        gst_format(self.format, self.bpc).unwrap_or("I420")
    }

    /// The format NVDEC's frames of this video take in CUDA memory, where
    /// the element reads them in place (NV12's and P010's chroma split,
    /// P010 shifted, on the GPU): NV12 (8-bit 4:2:0), P010 (10-bit 4:2:0)
    /// or Y444 (8-bit 4:4:4); `None` for any other layout and depth.
    pub fn nvdec_cuda_format(&self) -> Option<&'static str> {
        match (self.format, self.bpc) {
            (PixelFormat::Yuv420, 8) => Some("NV12"),
            (PixelFormat::Yuv420, 10) => Some("P010_10LE"),
            (PixelFormat::Yuv444, 8) => Some("Y444"),
            _ => None,
        }
    }

    /// The format the command's own NVDEC path ([`crate::media::nvdec`]) hands
    /// this video's frames to the element in: GStreamer's decoders' above;
    /// P012 for 12-bit 4:2:0 (NVDEC's P016 surface, whose samples have 12
    /// significant bits); planar 10- and 12-bit 4:4:4, shifted down from
    /// NVDEC's high bits as they are copied.
    pub fn direct_cuda_format(&self) -> Option<&'static str> {
        match (self.format, self.bpc) {
            (PixelFormat::Yuv420, 12) => Some("P012_LE"),
            (PixelFormat::Yuv444, 10) => Some("Y444_10LE"),
            (PixelFormat::Yuv444, 12) => Some("Y444_12LE"),
            _ => self.nvdec_cuda_format(),
        }
    }
}

/// The element's format for a layout and depth.
pub fn gst_format(format: PixelFormat, bpc: u8) -> Option<&'static str> {
    Some(match (format, bpc) {
        (PixelFormat::Yuv420, 8) => "I420",
        (PixelFormat::Yuv422, 8) => "Y42B",
        (PixelFormat::Yuv444, 8) => "Y444",
        (PixelFormat::Gray, 8) => "GRAY8",
        (PixelFormat::Yuv420, 10) => "I420_10LE",
        (PixelFormat::Yuv422, 10) => "I422_10LE",
        (PixelFormat::Yuv444, 10) => "Y444_10LE",
        (PixelFormat::Yuv420, 12) => "I420_12LE",
        (PixelFormat::Yuv422, 12) => "I422_12LE",
        (PixelFormat::Yuv444, 12) => "Y444_12LE",
        (PixelFormat::Gray, 16) => "GRAY16_LE",
        _ => return None,
    })
}

/// Frames of a media file, estimated from its duration and frame rate
/// (none when either is unknown).
pub fn frames_in(duration: Option<gst::ClockTime>, fps: (u32, u32)) -> Option<u64> {
    duration
        .filter(|_| fps.0 > 0)
        .map(|d| (d.nseconds() as f64 * 1e-9 * fps.0 as f64 / fps.1 as f64).round() as u64)
}

/// Bytes of one tightly packed frame (chroma at ceil size).
pub fn frame_bytes(v: &Video) -> usize {
    gstvmafhip::vmaf::yuv::frame_bytes(v.width, v.height, v.format, v.bpc)
}
