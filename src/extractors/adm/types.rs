//! ADM's parameters and the wavelet bands its stages hand each other.

use crate::extractors::common::grow;

/// libvmaf's defaults of the options that change numbers.
pub const DEFAULT_EGL: f64 = 100.0;
pub const DEFAULT_NORM_VIEW_DIST: f64 = 3.0;
pub const DEFAULT_REF_DISPLAY_HEIGHT: i32 = 1080;
pub const DEFAULT_NOISE_WEIGHT: f64 = 0.03125;
pub const DEFAULT_DLM_WEIGHT: f64 = 0.5;

pub use crate::extractors::common::adm_csf::{CSF_BARTEN, CSF_BLEND, CSF_BLEND_MAE, CSF_WATSON97};

/// ADM options (`integer_adm.c:options`) that change numbers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdmParams {
    pub enhn_gain_limit: f64,
    pub norm_view_dist: f64,
    pub ref_display_height: i32,
    pub noise_weight: f64,
    pub dlm_weight: f64,
    pub min_val: f64,
    /// `adm_csf_mode`: 0 Watson97, 1 Barten, 2 / 3 Barten–Watson blends.
    pub csf_mode: i32,
    /// Barten CSF scale of the h/v bands (`adm_csf_scale`) and of d (`adm_csf_diag_scale`).
    pub csf_scale: f64,
    pub csf_diag_scale: f64,
}

impl Default for AdmParams {
    fn default() -> Self {
        Self {
            enhn_gain_limit: DEFAULT_EGL,
            norm_view_dist: DEFAULT_NORM_VIEW_DIST,
            ref_display_height: DEFAULT_REF_DISPLAY_HEIGHT,
            noise_weight: DEFAULT_NOISE_WEIGHT,
            dlm_weight: DEFAULT_DLM_WEIGHT,
            min_val: 0.0,
            csf_mode: CSF_WATSON97,
            csf_scale: 1.0,
            csf_diag_scale: 1.0,
        }
    }
}

/// The four DWT bands of one image at one scale; `w`x`h` samples each.
#[derive(Default, Clone)]
pub struct Bands {
    pub a: Vec<i32>,
    pub v: Vec<i32>,
    pub h: Vec<i32>,
    pub d: Vec<i32>,
    pub w: usize,
    pub hgt: usize,
}

impl Bands {
    /// Room for `w`x`h` samples. Buffers only grow (a smaller scale uses
    /// the front part), so no frame after the first clears or allocates.
    pub(crate) fn resize(&mut self, w: usize, h: usize) {
        for b in [&mut self.a, &mut self.v, &mut self.h, &mut self.d] {
            grow(b, w * h);
        }
        self.w = w;
        self.hgt = h;
    }
    /// Detail bands in libvmaf's θ order: h, v, d.
    pub fn hvd(&self) -> [&[i32]; 3] {
        [&self.h, &self.v, &self.d]
    }
    /// The detail bands to overwrite, in the same order.
    pub(crate) fn hvd_mut(&mut self) -> [&mut [i32]; 3] {
        [&mut self.h, &mut self.v, &mut self.d]
    }
}

/// Three detail bands (h, v, d) sharing one size: libvmaf's stored CSF
/// output, which the masking's tests compare with.
#[cfg(test)]
#[derive(Default, Clone)]
pub struct Triple(pub [Vec<i32>; 3]);

#[cfg(test)]
impl Triple {
    /// Room for `n` samples per band; grows only, as [`Bands::resize`].
    pub(crate) fn resize(&mut self, n: usize) {
        for b in &mut self.0 {
            grow(b, n);
        }
    }
    pub(crate) fn refs(&self) -> [&[i32]; 3] {
        [&self.0[0], &self.0[1], &self.0[2]]
    }
}
