//! Pictures in GPU memory (`vmaf_cuda_preallocate_pictures` with
//! `VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE`, and the HIP pair): a
//! program copies its decoded frames into them on the GPU (ffmpeg's
//! `libvmaf_cuda` filter does), and the GPU engine reads them in place.
//!
//! A picture is one device allocation holding its planes, lent to the
//! program and given back to the pool when the engine is done with it or
//! the program unreferences it.

#![forbid(unsafe_code)]

use gstvmafhip::hip::{Device, DeviceBuffer, Stream};
use gstvmafhip::vmaf::{DevicePlane, PixelFormat};
use std::sync::{Arc, Mutex};

/// What a new picture's bytes are set to. A plane still holding it
/// everywhere at the first frame was never written: at more than 8 bits
/// it is not a sample value at all (0xA5A5 is over 12 bits).
const UNWRITTEN: u8 = 0xA5;

/// Rows start on this many bytes (the GPU's copy engines like 256).
const PITCH_ALIGN: usize = 256;

/// Pictures lent at once, at most: more is a program that never reads nor
/// unreferences what it fetched.
const LENT_MAX: usize = 64;

/// The size and layout of every picture of a pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub format: PixelFormat,
    pub bpc: u8,
    pub width: usize,
    pub height: usize,
}

impl Params {
    fn sample_bytes(&self) -> usize {
        if self.bpc > 8 { 2 } else { 1 }
    }

    /// Each plane's width, height, pitch and offset in the allocation.
    fn planes(&self) -> Vec<(usize, usize, usize, usize)> {
        let mut sizes = vec![(self.width, self.height)];
        if let Some(c) = self.format.chroma_size(self.width, self.height) {
            sizes.extend([c, c]);
        }
        let mut at = 0;
        sizes
            .into_iter()
            .map(|(w, h)| {
                let pitch = (w * self.sample_bytes()).next_multiple_of(PITCH_ALIGN);
                let plane = (w, h, pitch, at);
                at += pitch * h;
                plane
            })
            .collect()
    }

    fn bytes(&self) -> usize {
        self.planes()
            .iter()
            .map(|&(_, h, pitch, _)| pitch * h)
            .sum()
    }
}

/// The pool's pictures: those given back, and how many are lent.
struct Shelf {
    free: Vec<DeviceBuffer>,
    lent: usize,
}

/// The pictures of one context, all of `params`, on `device`.
pub struct Pool {
    device: Arc<Device>,
    params: Params,
    shelf: Arc<Mutex<Shelf>>,
}

/// A picture lent to the program: its planes, and its memory, which goes
/// back to the pool when this is dropped.
pub struct Lent {
    memory: Option<DeviceBuffer>,
    params: Params,
    shelf: Arc<Mutex<Shelf>>,
    device: Arc<Device>,
}

impl Pool {
    pub fn new(device: Arc<Device>, params: Params) -> Result<Pool, String> {
        if params.width == 0 || params.height == 0 || !(8..=16).contains(&params.bpc) {
            return Err(format!(
                "a {}x{} picture at {} bits",
                params.width, params.height, params.bpc
            ));
        }
        Ok(Pool {
            device,
            params,
            shelf: Arc::new(Mutex::new(Shelf {
                free: Vec::new(),
                lent: 0,
            })),
        })
    }

    /// A picture: one given back before, else a new one, its bytes set to
    /// [`UNWRITTEN`].
    pub fn fetch(&self) -> Result<Lent, String> {
        let mut shelf = self.shelf.lock().unwrap_or_else(|e| e.into_inner());
        if shelf.lent >= LENT_MAX {
            return Err(format!(
                "{LENT_MAX} device pictures are out, none read nor unreferenced"
            ));
        }
        let memory = match shelf.free.pop() {
            Some(m) => m,
            None => self
                .allocate()
                .map_err(|e| format!("a device picture: {e}"))?,
        };
        shelf.lent += 1;
        Ok(Lent {
            memory: Some(memory),
            params: self.params,
            shelf: self.shelf.clone(),
            device: self.device.clone(),
        })
    }

    fn allocate(&self) -> Result<DeviceBuffer, gstvmafhip::hip::HipError> {
        let bytes = self.params.bytes();
        let buffer = DeviceBuffer::new(&self.device, bytes, "a device picture")?;
        let stream = Stream::new(&self.device)?;
        stream.memset(&buffer, 0, bytes, UNWRITTEN)?;
        stream.synchronize()?;
        Ok(buffer)
    }
}

impl Lent {
    /// Each plane: its device address, width, height and pitch in bytes.
    pub fn planes(&self) -> Vec<(u64, usize, usize, usize)> {
        let base = self.memory.as_ref().expect("lent until dropped").addr();
        self.params
            .planes()
            .into_iter()
            .map(|(w, h, pitch, at)| (base + at as u64, w, h, pitch))
            .collect()
    }

    /// The planes as the engine reads them.
    pub fn device_planes(&self) -> Vec<DevicePlane> {
        let bytes = self.params.sample_bytes();
        self.planes()
            .into_iter()
            .map(|(ptr, w, h, pitch)| DevicePlane {
                ptr,
                bytes: pitch * (h - 1) + w * bytes,
                width: w,
                height: h,
                pitch,
                interleaved: false,
                msb_shift: 0,
            })
            .collect()
    }

    pub fn params(&self) -> Params {
        self.params
    }

    /// Whether every chroma sample still holds what a new picture was set
    /// to (the program copied luma alone). Reads the chroma planes back.
    pub fn chroma_unwritten(&self) -> Result<bool, String> {
        let planes = self.device_planes();
        if planes.len() < 3 {
            return Ok(false);
        }
        let stream = Stream::new(&self.device).map_err(|e| e.to_string())?;
        let row = planes[1].width * self.params.sample_bytes();
        for p in &planes[1..] {
            let mut host = vec![0u8; row * p.height];
            stream
                .read_2d_from_device(&mut host, (p.ptr, p.bytes), p.pitch, row, p.height)
                .map_err(|e| e.to_string())?;
            if host.iter().any(|&b| b != UNWRITTEN) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Waits for the program's copies into this picture, queued on its
    /// context's default stream, which the engine's streams do not wait for.
    pub fn wait_for_writes(&self) -> Result<(), String> {
        self.device
            .synchronize_default_stream()
            .map_err(|e| format!("waiting for the copies into a device picture: {e}"))
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        let mut shelf = self.shelf.lock().unwrap_or_else(|e| e.into_inner());
        shelf.lent = shelf.lent.saturating_sub(1);
        if let Some(m) = self.memory.take() {
            shelf.free.push(m);
        }
    }
}
