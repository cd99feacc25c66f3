//! The float extractors' shared GPU stages (`float_filter.hip`):
//! pictures to float, the separable Gaussian filter, and per-row float sums
//! that the host adds in order. CPU twins: `float_filter.rs`,
//! `float_psnr::float_picture`, `float_motion::image_sad`.

#![forbid(unsafe_code)]

use crate::extractors::common::float_picture::float_scaler;
use crate::hip::twin::{Frame, KernelSet, Modules, blocks, sig, upload_table};
use crate::hip::{Arg, Device, DeviceBuffer, HipError, Kernel, Stream};
use std::sync::Arc;

/// Its kernel files.
pub(crate) const KERNELS: KernelSet = KernelSet {
    sources: &[("float_filter.hip", include_str!("float_filter.hip"))],
    load: |m, _, _| Ok(Box::new(Kernels::load(m)?)),
};

pub(crate) struct Kernels {
    to_float8: Kernel,
    to_float16: Kernel,
    vertical: Kernel,
    horizontal: Kernel,
    row_sums: Kernel,
    row_absdiff: Kernel,
}

impl Kernels {
    pub(crate) fn load(m: &Modules) -> Result<Self, HipError> {
        let f = &m["float_filter.hip"];
        let to_float = sig("p i d p");
        Ok(Kernels {
            to_float8: f.kernel("ff_to_float_8", &to_float)?,
            to_float16: f.kernel("ff_to_float_16", &to_float)?,
            vertical: f.kernel("ff_vertical", &sig("pp iii pi p"))?,
            horizontal: f.kernel("ff_horizontal", &sig("p ii pi p"))?,
            row_sums: f.kernel("ff_row_sums", &sig("p iiiii p"))?,
            row_absdiff: f.kernel("ff_row_absdiff", &sig("pp ii p"))?,
        })
    }
}

/// Filters (tap lists) in one device table.
pub(crate) struct Taps {
    pub table: DeviceBuffer,
    /// (first tap, tap count) of each filter.
    pub at: Vec<(usize, usize)>,
}

impl Taps {
    pub(crate) fn upload(
        dev: &Arc<Device>,
        st: &Stream,
        filters: &[Vec<f32>],
        what: &str,
    ) -> Result<Self, HipError> {
        let mut all = Vec::new();
        let mut at = Vec::new();
        for f in filters {
            at.push((all.len(), f.len()));
            all.extend_from_slice(f);
        }
        let table = upload_table(dev, st, &all, |x: f32| x.to_le_bytes().to_vec(), what)?;
        Ok(Taps { table, at })
    }
}

/// A `w`×`h` float picture.
pub(crate) fn picture_bytes(w: usize, h: usize) -> usize {
    (w * h * 4).max(4)
}

/// Uploaded luma plane `pix` (`w`×`h` samples) as floats, less 128, into
/// `out`.
pub(crate) fn to_float(
    f: &Frame<'_>,
    pix: &DeviceBuffer,
    out: &DeviceBuffer,
) -> Result<(), HipError> {
    to_float_samples(f, pix, f.geo.w * f.geo.h, out)
}

/// The first `n` samples of uploaded plane `pix` as floats, less 128, into
/// `out`.
pub(crate) fn to_float_samples(
    f: &Frame<'_>,
    pix: &DeviceBuffer,
    n: usize,
    out: &DeviceBuffer,
) -> Result<(), HipError> {
    let (g, k) = (f.geo, &f.kernels.get::<Kernels>());
    let kern = if g.bps == 1 {
        &k.to_float8
    } else {
        &k.to_float16
    };
    let scaler = float_scaler(g.bpc).map_or(0.0, f64::from);
    f.stream.launch(
        kern,
        (blocks(n), 1, 1),
        (256, 1, 1),
        0,
        &[
            Arg::Buf(pix, 0),
            Arg::I32(n as i32),
            Arg::F64(scaler),
            Arg::Buf(out, 0),
        ],
    )
}

/// What the vertical pass filters.
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
    Samples(&'a DeviceBuffer),
    Squares(&'a DeviceBuffer),
    Products(&'a DeviceBuffer, &'a DeviceBuffer),
}

/// The separable filter `filter` of `taps` over a `w`×`h` picture, through
/// `tmp`, into `out` (`vif_filter1d_s` and its `_sq`/`_xy` forms).
pub(crate) fn filter(
    f: &Frame<'_>,
    (taps, filter): (&Taps, usize),
    src: Source<'_>,
    (w, h): (usize, usize),
    tmp: &DeviceBuffer,
    out: &DeviceBuffer,
) -> Result<(), HipError> {
    let k = &f.kernels.get::<Kernels>();
    let (a, b, mode) = match src {
        Source::Samples(a) => (a, a, 0),
        Source::Squares(a) => (a, a, 1),
        Source::Products(a, b) => (a, b, 2),
    };
    let (first, n) = taps.at[filter];
    let grid = (blocks(w), h as u32, 1);
    f.stream.launch(
        &k.vertical,
        grid,
        (256, 1, 1),
        0,
        &[
            Arg::Buf(a, 0),
            Arg::Buf(b, 0),
            Arg::I32(mode),
            Arg::I32(w as i32),
            Arg::I32(h as i32),
            Arg::Buf(&taps.table, first * 4),
            Arg::I32(n as i32),
            Arg::Buf(tmp, 0),
        ],
    )?;
    f.stream.launch(
        &k.horizontal,
        grid,
        (256, 1, 1),
        0,
        &[
            Arg::Buf(tmp, 0),
            Arg::I32(w as i32),
            Arg::I32(h as i32),
            Arg::Buf(&taps.table, first * 4),
            Arg::I32(n as i32),
            Arg::Buf(out, 0),
        ],
    )
}

/// Rows `rows` × columns `cols` of `v` (`stride` wide): each row's float
/// sum into `out` at float `out_at`.
pub(crate) fn row_sums(
    f: &Frame<'_>,
    v: &DeviceBuffer,
    stride: usize,
    (rows, cols): (std::ops::Range<usize>, std::ops::Range<usize>),
    out: &DeviceBuffer,
    out_at: usize,
) -> Result<(), HipError> {
    let n = rows.len();
    f.stream.launch(
        &f.kernels.get::<Kernels>().row_sums,
        (blocks(n), 1, 1),
        (256, 1, 1),
        0,
        &[
            Arg::Buf(v, 0),
            Arg::I32(stride as i32),
            Arg::I32(rows.start as i32),
            Arg::I32(n as i32),
            Arg::I32(cols.start as i32),
            Arg::I32(cols.len() as i32),
            Arg::Buf(out, out_at * 4),
        ],
    )
}

/// Per row of two `w`×`h` pictures, the float sum of |a − b| into `out`
/// from float `out_at` on.
pub(crate) fn row_absdiff(
    f: &Frame<'_>,
    a: &DeviceBuffer,
    b: &DeviceBuffer,
    (w, h): (usize, usize),
    (out, out_at): (&DeviceBuffer, usize),
) -> Result<(), HipError> {
    f.stream.launch(
        &f.kernels.get::<Kernels>().row_absdiff,
        (blocks(h), 1, 1),
        (256, 1, 1),
        0,
        &[
            Arg::Buf(a, 0),
            Arg::Buf(b, 0),
            Arg::I32(w as i32),
            Arg::I32(h as i32),
            Arg::Buf(out, 4 * out_at),
        ],
    )
}

/// The little-endian floats of a read-back.
pub(crate) fn floats(bytes: &[u8]) -> impl Iterator<Item = f32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

/// The float sum of a run of row sums, in order (the CPU's outer loop).
pub(crate) fn add_rows(rows: impl Iterator<Item = f32>) -> f32 {
    let mut acc = 0f32;
    for r in rows {
        acc += r;
    }
    acc
}
