//! Raw planar YUV files (the libvmaf CLI's input): frames back to back,
//! Y then Cb then Cr, chroma laid out at ceil size as ffmpeg writes it;
//! 8-bit samples in bytes, deeper samples as little-endian u16.

#![forbid(unsafe_code)]

use super::VmafError;
use super::picture::{Picture, PixelFormat, Plane};
use std::io::Read;

/// Bytes of one frame as raw files and Y4M store it: planes back to back,
/// chroma at ceil size, 2 bytes per sample above 8 bits.
pub fn frame_bytes(width: usize, height: usize, format: PixelFormat, bpc: u8) -> usize {
    let chroma = format
        .stored_chroma_size(width, height)
        .map_or(0, |(w, h)| 2 * w * h);
    (width * height + chroma) * if bpc > 8 { 2 } else { 1 }
}

/// One frame of raw samples, reusable across reads.
pub struct YuvFrame {
    pub width: usize,
    pub height: usize,
    pub format: PixelFormat,
    pub bpc: u8,
    bytes: Vec<u8>,
    wide: Vec<u16>,
}

impl YuvFrame {
    pub fn new(
        width: usize,
        height: usize,
        format: PixelFormat,
        bpc: u8,
    ) -> Result<Self, VmafError> {
        if !(8..=16).contains(&bpc) {
            return Err(VmafError::InvalidPicture(format!(
                "bit depth {bpc} (8..16 supported)"
            )));
        }
        let mut f = YuvFrame {
            width,
            height,
            format,
            bpc,
            bytes: Vec::new(),
            wide: Vec::new(),
        };
        f.bytes.resize(f.frame_bytes(), 0);
        Ok(f)
    }

    fn plane_sizes(&self) -> Vec<(usize, usize)> {
        let mut v = vec![(self.width, self.height)];
        if let Some(c) = self.format.stored_chroma_size(self.width, self.height) {
            v.extend([c, c]);
        }
        v
    }

    pub fn bytes_per_sample(&self) -> usize {
        if self.bpc > 8 { 2 } else { 1 }
    }

    pub fn frame_bytes(&self) -> usize {
        frame_bytes(self.width, self.height, self.format, self.bpc)
    }

    /// Read the next frame; `Ok(false)` at a clean end of file.
    pub fn read_from(&mut self, r: &mut impl Read) -> Result<bool, VmafError> {
        self.fill(|bytes| {
            let mut filled = 0;
            while filled < bytes.len() {
                match r.read(&mut bytes[filled..]) {
                    Ok(0) => break,
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(VmafError::Io(e.to_string())),
                }
            }
            if filled == 0 {
                return Ok(false);
            }
            if filled < bytes.len() {
                return Err(VmafError::Io(format!(
                    "truncated frame: {filled} of {} bytes",
                    bytes.len()
                )));
            }
            Ok(true)
        })
    }

    /// The next frame, written by `read` straight into the frame's bytes
    /// (exactly `frame_bytes()`; a Y4M reader's `read_frame`, say); `read`
    /// says whether there was one.
    pub fn fill(
        &mut self,
        read: impl FnOnce(&mut [u8]) -> Result<bool, VmafError>,
    ) -> Result<bool, VmafError> {
        if !read(&mut self.bytes)? {
            return Ok(false);
        }
        if self.bpc > 8 {
            self.wide.clear();
            self.wide.extend(
                self.bytes
                    .chunks_exact(2)
                    .map(|b| u16::from_le_bytes([b[0], b[1]])),
            );
        }
        Ok(true)
    }

    /// Load a frame from a byte slice of exactly `frame_bytes()`.
    pub fn load(&mut self, data: &[u8]) -> Result<(), VmafError> {
        let mut r = data;
        if self.read_from(&mut r)? {
            Ok(())
        } else {
            Err(VmafError::Io("empty frame".into()))
        }
    }

    pub fn picture(&self) -> Result<Picture<'_>, VmafError> {
        let sizes = self.plane_sizes();
        let mut off = 0;
        if self.bpc == 8 {
            let mut planes = Vec::new();
            for &(w, h) in &sizes {
                planes.push(Plane::new(&self.bytes[off..off + w * h], w, h, w)?);
                off += w * h;
            }
            Picture::new_u8(self.format, &planes)
        } else {
            let mut planes = Vec::new();
            for &(w, h) in &sizes {
                planes.push(Plane::new(&self.wide[off..off + w * h], w, h, w)?);
                off += w * h;
            }
            Picture::new_u16(self.format, self.bpc, &planes)
        }
    }
}
