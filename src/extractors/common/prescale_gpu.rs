//! libvmaf's float prescale on the device (`prescale.hip` through
//! `prescale.h`), for float_vif's `vif_prescale` and float_motion's halving.
//! CPU twin: `prescale.rs`.

#![forbid(unsafe_code)]

use crate::extractors::common::prescale::{PrescaleMethod, axis_taps};
use crate::hip::twin::{Frame, KernelSet, Modules, blocks, sig, upload_table};
use crate::hip::{Arg, Device, DeviceBuffer, HipError, Kernel, Stream};
use std::sync::Arc;

/// Its kernel file, after the sampling it shares with `speed.hip`.
pub(crate) const KERNELS: KernelSet = KernelSet {
    sources: &[(
        "prescale.hip",
        concat!(include_str!("prescale.h"), include_str!("prescale.hip")),
    )],
    load: |m, _, _| Ok(Box::new(Kernels::load(m)?)),
};

pub(crate) struct Kernels {
    scale: Kernel,
}

impl Kernels {
    fn load(m: &Modules) -> Result<Self, HipError> {
        let scale = m["prescale.hip"].kernel("vif_scale_frame", &sig("p iii pppp ii p"))?;
        Ok(Kernels { scale })
    }
}

/// `vif_scale_frame_s` on the device: the method and its row and column tap
/// tables for one size change, built on the host as the CPU twin
/// (`prescale::scale_frame`) builds them.
pub(crate) struct Prescale {
    method: i32,
    taps: usize,
    from: (usize, usize),
    to: (usize, usize),
    rows_idx: DeviceBuffer,
    rows_w: DeviceBuffer,
    cols_idx: DeviceBuffer,
    cols_w: DeviceBuffer,
}

impl Prescale {
    /// The tables for `from` → `to` (sizes that differ).
    pub(crate) fn upload(
        dev: &Arc<Device>,
        st: &Stream,
        method: PrescaleMethod,
        from: (usize, usize),
        to: (usize, usize),
    ) -> Result<Self, HipError> {
        let rows = axis_taps(method, from.1, to.1);
        let cols = axis_taps(method, from.0, to.0);
        let ints = |v: &[i32]| {
            upload_table(
                dev,
                st,
                v,
                |x: i32| x.to_le_bytes().to_vec(),
                "prescale taps",
            )
        };
        let floats = |v: &[f32]| {
            upload_table(
                dev,
                st,
                v,
                |x: f32| x.to_le_bytes().to_vec(),
                "prescale taps",
            )
        };
        Ok(Prescale {
            method: method.code(),
            taps: rows.taps.max(1),
            from,
            to,
            rows_idx: ints(&rows.index)?,
            rows_w: floats(&rows.weight)?,
            cols_idx: ints(&cols.index)?,
            cols_w: floats(&cols.weight)?,
        })
    }

    /// Queues the scaling of float picture `src` into `out`.
    pub(crate) fn scale(
        &self,
        f: &Frame<'_>,
        src: &DeviceBuffer,
        out: &DeviceBuffer,
    ) -> Result<(), HipError> {
        let (dw, dh) = self.to;
        f.stream.launch(
            &f.kernels.get::<Kernels>().scale,
            (blocks(dw), dh as u32, 1),
            (256, 1, 1),
            0,
            &[
                Arg::Buf(src, 0),
                Arg::I32(self.from.0 as i32),
                Arg::I32(self.method),
                Arg::I32(self.taps as i32),
                Arg::Buf(&self.rows_idx, 0),
                Arg::Buf(&self.rows_w, 0),
                Arg::Buf(&self.cols_idx, 0),
                Arg::Buf(&self.cols_w, 0),
                Arg::I32(dw as i32),
                Arg::I32(dh as i32),
                Arg::Buf(out, 0),
            ],
        )
    }
}
