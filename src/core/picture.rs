//! Pictures handed to the engine: planar Y'CbCr with explicit strides.
//!
//! The engine reads borrowed planes and copies what it keeps (it must keep the
//! earlier pictures the temporal extractors read, and frames travel to worker threads), so
//! callers can hand it GStreamer buffer memory directly.

#![forbid(unsafe_code)]

use super::VmafError;

/// Chroma layout of a picture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PixelFormat {
    Yuv420,
    Yuv422,
    Yuv444,
    /// Luma only (libvmaf's YUV400).
    Gray,
}

impl PixelFormat {
    /// Chroma plane size *as libvmaf keeps it*: floor halving (`picture.c:vmaf_picture_alloc`).
    /// Files laid out by ffmpeg carry ceil-size chroma; the reader drops the extra row/column.
    pub fn chroma_size(self, width: usize, height: usize) -> Option<(usize, usize)> {
        match self {
            PixelFormat::Yuv420 => Some((width / 2, height / 2)),
            PixelFormat::Yuv422 => Some((width / 2, height)),
            PixelFormat::Yuv444 => Some((width, height)),
            PixelFormat::Gray => None,
        }
    }

    /// Chroma plane size of the usual raw/ffmpeg/GStreamer layout (ceil halving).
    pub fn stored_chroma_size(self, width: usize, height: usize) -> Option<(usize, usize)> {
        match self {
            PixelFormat::Yuv420 => Some((width.div_ceil(2), height.div_ceil(2))),
            PixelFormat::Yuv422 => Some((width.div_ceil(2), height)),
            PixelFormat::Yuv444 => Some((width, height)),
            PixelFormat::Gray => None,
        }
    }

    pub fn plane_count(self) -> usize {
        if self == PixelFormat::Gray { 1 } else { 3 }
    }

    /// libvmaf CLI spelling (`-p 420`).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "420" => Some(Self::Yuv420),
            "422" => Some(Self::Yuv422),
            "444" => Some(Self::Yuv444),
            "400" | "gray" => Some(Self::Gray),
            _ => None,
        }
    }
}

/// A borrowed plane of samples: `width` x `height`, rows `stride` samples apart.
#[derive(Clone, Copy, Debug)]
pub struct Plane<'a, T> {
    pub data: &'a [T],
    pub width: usize,
    pub height: usize,
    /// Distance between rows, in samples (not bytes).
    pub stride: usize,
}

impl<'a, T: Copy> Plane<'a, T> {
    pub fn new(
        data: &'a [T],
        width: usize,
        height: usize,
        stride: usize,
    ) -> Result<Self, VmafError> {
        if width == 0 || height == 0 {
            return Err(VmafError::InvalidPicture(format!(
                "plane of {width}x{height} samples"
            )));
        }
        if stride < width {
            return Err(VmafError::InvalidPicture(format!(
                "stride {stride} is smaller than width {width}"
            )));
        }
        let needed = stride * (height - 1) + width;
        if data.len() < needed {
            return Err(VmafError::InvalidPicture(format!(
                "plane of {width}x{height} (stride {stride}) needs {needed} samples, got {}",
                data.len()
            )));
        }
        Ok(Self {
            data,
            width,
            height,
            stride,
        })
    }

    pub fn row(&self, y: usize) -> &'a [T] {
        &self.data[y * self.stride..y * self.stride + self.width]
    }
}

/// A plane in GPU memory: the device address of its first sample, as the
/// GPU backend's own context sees it (GStreamer's CUDA or HIP memory mapped
/// for the device), and the bytes mapped from there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DevicePlane {
    pub ptr: u64,
    /// Bytes from `ptr` to the end of the mapping.
    pub bytes: usize,
    pub width: usize,
    pub height: usize,
    /// Distance between rows, in bytes.
    pub pitch: usize,
    /// The samples alternate with another plane's (NV12's and P010's
    /// chroma): it cannot be copied as a plane of its own.
    pub interleaved: bool,
    /// The samples lie in the high bits of their 16 and are shifted down by
    /// this much (P010: 6); 0 for plain samples.
    pub msb_shift: u8,
}

/// Samples of one picture: 8-bit, or 9..16-bit in native-endian `u16`, in
/// host memory; or in GPU memory, which only the GPU backend reads.
#[derive(Clone, Copy, Debug)]
pub enum Planes<'a> {
    U8([Option<Plane<'a, u8>>; 3]),
    U16([Option<Plane<'a, u16>>; 3]),
    Device([Option<DevicePlane>; 3]),
}

/// A borrowed picture: format, depth and up to three planes.
#[derive(Clone, Copy, Debug)]
pub struct Picture<'a> {
    pub format: PixelFormat,
    pub bpc: u8,
    pub width: usize,
    pub height: usize,
    pub planes: Planes<'a>,
}

impl<'a> Picture<'a> {
    /// An 8-bit picture. `planes` holds luma then (unless gray) Cb and Cr.
    pub fn new_u8(format: PixelFormat, planes: &[Plane<'a, u8>]) -> Result<Self, VmafError> {
        let mut slots = [None; 3];
        for (slot, plane) in slots.iter_mut().zip(planes) {
            *slot = Some(*plane);
        }
        let pic = Self {
            format,
            bpc: 8,
            width: planes[0].width,
            height: planes[0].height,
            planes: Planes::U8(slots),
        };
        pic.validate(planes.len())?;
        Ok(pic)
    }

    /// A 9..16-bit picture.
    pub fn new_u16(
        format: PixelFormat,
        bpc: u8,
        planes: &[Plane<'a, u16>],
    ) -> Result<Self, VmafError> {
        if !(9..=16).contains(&bpc) {
            return Err(VmafError::InvalidPicture(format!(
                "{bpc} bits per sample in a 16-bit container"
            )));
        }
        let mut slots = [None; 3];
        for (slot, plane) in slots.iter_mut().zip(planes) {
            *slot = Some(*plane);
        }
        let pic = Self {
            format,
            bpc,
            width: planes[0].width,
            height: planes[0].height,
            planes: Planes::U16(slots),
        };
        pic.validate(planes.len())?;
        Ok(pic)
    }

    /// A picture in GPU memory (`bpc` 8 for one byte per sample, 9..16 for two).
    pub fn new_device(
        format: PixelFormat,
        bpc: u8,
        planes: &[DevicePlane],
    ) -> Result<Self, VmafError> {
        if !(8..=16).contains(&bpc) {
            return Err(VmafError::InvalidPicture(format!("{bpc} bits per sample")));
        }
        let bps = if bpc == 8 { 1 } else { 2 };
        let mut slots = [None; 3];
        for (slot, plane) in slots.iter_mut().zip(planes) {
            let (w, h, pitch) = (plane.width, plane.height, plane.pitch);
            // An interleaved plane's last sample ends one sample before its row.
            let row = if plane.interleaved {
                (2 * w - 1) * bps
            } else {
                w * bps
            };
            if w == 0 || h == 0 || pitch < row || plane.bytes < pitch * (h - 1) + row {
                return Err(VmafError::InvalidPicture(format!(
                    "GPU plane of {w}x{h} samples (pitch {pitch} bytes) in a mapping of {} bytes",
                    plane.bytes
                )));
            }
            *slot = Some(*plane);
        }
        let pic = Self {
            format,
            bpc,
            width: planes[0].width,
            height: planes[0].height,
            planes: Planes::Device(slots),
        };
        pic.validate(planes.len())?;
        Ok(pic)
    }

    /// Whether the samples are in GPU memory.
    pub fn on_device(&self) -> bool {
        matches!(self.planes, Planes::Device(_))
    }

    fn validate(&self, given: usize) -> Result<(), VmafError> {
        let want = self.format.plane_count();
        if given < want {
            return Err(VmafError::InvalidPicture(format!(
                "{:?} needs {want} planes, got {given}",
                self.format
            )));
        }
        if let Some((cw, ch)) = self.format.chroma_size(self.width, self.height) {
            for p in 1..3 {
                let (w, h) = self.plane_size(p);
                if w < cw || h < ch {
                    return Err(VmafError::InvalidPicture(format!(
                        "chroma plane {p} is {w}x{h}, {:?} at {}x{} needs at least {cw}x{ch}",
                        self.format, self.width, self.height
                    )));
                }
            }
        }
        Ok(())
    }

    fn plane_size(&self, p: usize) -> (usize, usize) {
        match &self.planes {
            Planes::U8(pl) => pl[p].map(|x| (x.width, x.height)).unwrap_or((0, 0)),
            Planes::U16(pl) => pl[p].map(|x| (x.width, x.height)).unwrap_or((0, 0)),
            Planes::Device(pl) => pl[p].map(|x| (x.width, x.height)).unwrap_or((0, 0)),
        }
    }
}

/// An owned plane, always widened to `u16` (8-bit values stay 0..255). The
/// fixed-point paths depend on `bpc`, never on the container, so one sample
/// type keeps every kernel monomorphic.
#[derive(Clone, Debug, Default)]
pub struct OwnedPlane {
    pub data: Vec<u16>,
    pub width: usize,
    pub height: usize,
}

impl OwnedPlane {
    pub fn row(&self, y: usize) -> &[u16] {
        &self.data[y * self.width..(y + 1) * self.width]
    }

    fn copy_from<T: Copy + Into<u16>>(&mut self, src: &Plane<'_, T>, width: usize, height: usize) {
        self.width = width;
        self.height = height;
        self.data.clear();
        self.data.reserve(width * height);
        for y in 0..height {
            self.data
                .extend(src.row(y)[..width].iter().map(|&v| v.into()));
        }
    }
}

/// An owned copy of a picture, chroma cropped to libvmaf's floor sizes.
#[derive(Clone, Debug)]
pub struct Frame {
    pub format: PixelFormat,
    pub bpc: u8,
    pub planes: Vec<OwnedPlane>,
}

impl Frame {
    pub fn width(&self) -> usize {
        self.planes[0].width
    }
    pub fn height(&self) -> usize {
        self.planes[0].height
    }
    pub fn luma(&self) -> &OwnedPlane {
        &self.planes[0]
    }

    /// A copy of `pic`: every plane, or with `chroma` false the luma only
    /// (what the extractors that read no chroma need: half the memory and
    /// copying of a 4:2:0 frame's samples saved, a third at 4:4:4).
    pub fn from_picture(pic: &Picture<'_>, chroma: bool) -> Frame {
        let mut frame = Frame {
            format: pic.format,
            bpc: pic.bpc,
            planes: Vec::new(),
        };
        frame.fill_from(pic, chroma);
        frame
    }

    /// Reuse this frame's allocations for a new picture of any size (luma
    /// only unless `chroma`). A picture in GPU memory has no samples here:
    /// `Scorer` refuses it before a backend that reads host memory could
    /// see it.
    pub fn fill_from(&mut self, pic: &Picture<'_>, chroma: bool) {
        self.format = pic.format;
        self.bpc = pic.bpc;
        let n = if chroma { pic.format.plane_count() } else { 1 };
        self.planes.resize_with(n, OwnedPlane::default);
        for p in 0..n {
            let (w, h) = if p == 0 {
                (pic.width, pic.height)
            } else {
                pic.format
                    .chroma_size(pic.width, pic.height)
                    .unwrap_or((0, 0))
            };
            match &pic.planes {
                Planes::U8(pl) => {
                    self.planes[p].copy_from(pl[p].as_ref().expect("validated"), w, h)
                }
                Planes::U16(pl) => {
                    self.planes[p].copy_from(pl[p].as_ref().expect("validated"), w, h)
                }
                Planes::Device(_) => {
                    unreachable!("GPU pictures are refused before a host-memory backend")
                }
            }
        }
    }
}
