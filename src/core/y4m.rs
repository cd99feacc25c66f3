//! YUV4MPEG2 (`.y4m`) files, libvmaf's other input format: one text header
//! line (`YUV4MPEG2 W.. H.. F.. C..`), then per frame a `FRAME` line and the
//! planes, laid out as in a raw file (see [`super::yuv`]).

#![forbid(unsafe_code)]

use super::VmafError;
use super::picture::PixelFormat;
use std::io::{BufRead, Read};

/// What a Y4M header says about the video.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Y4mHeader {
    pub width: usize,
    pub height: usize,
    pub format: PixelFormat,
    pub bpc: u8,
    /// Frame rate as a fraction (25/1 when the header has none).
    pub fps: (u32, u32),
    /// Bytes of the header line, newline included.
    pub header_len: usize,
}

impl Y4mHeader {
    /// Parses the header line (without reading past it).
    pub fn parse(line: &str) -> Result<Self, VmafError> {
        let bad = |what: String| VmafError::InvalidPicture(format!("Y4M header: {what}"));
        let mut tokens = line.trim_end_matches(['\n', '\r']).split(' ');
        if tokens.next() != Some("YUV4MPEG2") {
            return Err(bad("does not start with YUV4MPEG2".into()));
        }
        let (mut width, mut height, mut fps) = (0, 0, (25, 1));
        let mut colour = "420jpeg";
        for t in tokens.filter(|t| !t.is_empty()) {
            let (tag, v) = t.split_at(1);
            match tag {
                "W" => width = v.parse().map_err(|_| bad(format!("width \"{v}\"")))?,
                "H" => height = v.parse().map_err(|_| bad(format!("height \"{v}\"")))?,
                "F" => {
                    let (n, d) = v
                        .split_once(':')
                        .and_then(|(n, d)| Some((n.parse().ok()?, d.parse().ok()?)))
                        .filter(|&(n, d): &(u32, u32)| n > 0 && d > 0)
                        .ok_or_else(|| bad(format!("frame rate \"{v}\"")))?;
                    fps = (n, d);
                }
                "C" => colour = v,
                "I" if !matches!(v, "p" | "?") => {
                    return Err(bad(format!("interlaced video (I{v}) is not supported")));
                }
                // Aspect ratio, interlacing "p", comments/extensions.
                _ => {}
            }
        }
        if width == 0 || height == 0 {
            return Err(bad("no W or H".into()));
        }
        let (format, bpc) = match colour {
            "420" | "420jpeg" | "420paldv" | "420mpeg2" => (PixelFormat::Yuv420, 8),
            "422" => (PixelFormat::Yuv422, 8),
            "444" => (PixelFormat::Yuv444, 8),
            "mono" => (PixelFormat::Gray, 8),
            "420p10" => (PixelFormat::Yuv420, 10),
            "422p10" => (PixelFormat::Yuv422, 10),
            "444p10" => (PixelFormat::Yuv444, 10),
            "420p12" => (PixelFormat::Yuv420, 12),
            "422p12" => (PixelFormat::Yuv422, 12),
            "444p12" => (PixelFormat::Yuv444, 12),
            "mono16" => (PixelFormat::Gray, 16),
            other => return Err(bad(format!("colour space C{other} is not supported"))),
        };
        Ok(Y4mHeader {
            width,
            height,
            format,
            bpc,
            fps,
            header_len: line.len(),
        })
    }

    /// Bytes of one frame's planes (chroma at ceil size), without its `FRAME` line.
    pub fn frame_bytes(&self) -> usize {
        super::yuv::frame_bytes(self.width, self.height, self.format, self.bpc)
    }
}

/// Reads frames from a Y4M stream.
pub struct Y4mReader<R> {
    pub header: Y4mHeader,
    inner: R,
    line: Vec<u8>,
    frames: u64,
}

impl<R: BufRead> Y4mReader<R> {
    pub fn new(mut inner: R) -> Result<Self, VmafError> {
        let mut line = Vec::new();
        inner
            .by_ref()
            .take(4096)
            .read_until(b'\n', &mut line)
            .map_err(|e| VmafError::Io(e.to_string()))?;
        if line.last() != Some(&b'\n') {
            return Err(VmafError::InvalidPicture(
                "Y4M header: no header line (not a Y4M file?)".into(),
            ));
        }
        let text = std::str::from_utf8(&line)
            .map_err(|_| VmafError::InvalidPicture("Y4M header: not text".into()))?;
        Ok(Y4mReader {
            header: Y4mHeader::parse(text)?,
            inner,
            line: Vec::new(),
            frames: 0,
        })
    }

    /// Reads the next frame's planes into `out` (exactly
    /// [`Y4mHeader::frame_bytes`] long); `Ok(false)` at a clean end.
    pub fn read_frame(&mut self, out: &mut [u8]) -> Result<bool, VmafError> {
        let n = self.frames;
        self.line.clear();
        self.inner
            .by_ref()
            .take(1024)
            .read_until(b'\n', &mut self.line)
            .map_err(|e| VmafError::Io(e.to_string()))?;
        if self.line.is_empty() {
            return Ok(false);
        }
        if !self.line.starts_with(b"FRAME") || self.line.last() != Some(&b'\n') {
            return Err(VmafError::Io(format!(
                "frame {n}: expected a FRAME line, found {:?}",
                String::from_utf8_lossy(&self.line[..self.line.len().min(16)])
            )));
        }
        self.inner.read_exact(out).map_err(|e| {
            VmafError::Io(format!(
                "frame {n}: truncated ({} bytes of planes expected): {e}",
                out.len()
            ))
        })?;
        self.frames += 1;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        let h =
            Y4mHeader::parse("YUV4MPEG2 W576 H324 F30000:1001 Ip A1:1 C420jpeg XYSCSS=420JPEG\n")
                .unwrap();
        assert_eq!(
            (h.width, h.height, h.format, h.bpc, h.fps),
            (576, 324, PixelFormat::Yuv420, 8, (30000, 1001))
        );
        assert_eq!(h.frame_bytes(), 576 * 324 * 3 / 2);
        let h = Y4mHeader::parse("YUV4MPEG2 W5 H3 C420p10\n").unwrap();
        // Chroma at ceil size: 3x2 per plane; 2 bytes per sample.
        assert_eq!(h.frame_bytes(), (15 + 12) * 2);
        assert_eq!(h.fps, (25, 1));
        for (bad, needle) in [
            ("YUV4MPEG W5 H3\n", "YUV4MPEG2"),
            ("YUV4MPEG2 W5\n", "no W or H"),
            ("YUV4MPEG2 W5 H3 C411\n", "C411"),
            ("YUV4MPEG2 W5 H3 It\n", "interlaced"),
            ("YUV4MPEG2 W5 H3 F0:1\n", "frame rate"),
        ] {
            let e = Y4mHeader::parse(bad).unwrap_err().to_string();
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }

    #[test]
    fn frames_and_truncation() {
        let mut data = b"YUV4MPEG2 W2 H2 F25:1 C444\n".to_vec();
        for k in 0..2u8 {
            data.extend_from_slice(b"FRAME\n");
            data.extend(std::iter::repeat_n(k, 12));
        }
        data.extend_from_slice(b"FRAME Ixyz\n");
        data.extend([9; 5]);
        let mut r = Y4mReader::new(&data[..]).unwrap();
        let mut buf = vec![0; r.header.frame_bytes()];
        assert!(r.read_frame(&mut buf).unwrap());
        assert_eq!(buf, [0; 12]);
        assert!(r.read_frame(&mut buf).unwrap());
        assert_eq!(buf, [1; 12]);
        let e = r.read_frame(&mut buf).unwrap_err().to_string();
        assert!(e.contains("frame 2: truncated"), "{e}");
        let mut r = Y4mReader::new(&b"YUV4MPEG2 W2 H2 C444\n"[..]).unwrap();
        assert!(!r.read_frame(&mut buf).unwrap());
        assert!(Y4mReader::new(&b"\x00\x01garbage"[..]).is_err());
    }
}
