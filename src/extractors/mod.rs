//! VMAF's extractors, one folder each: its CPU twin (`cpu.rs`, the
//! reference, bit-exact with libvmaf), its GPU twin (`gpu.rs`, the same
//! numbers through HIP) and its kernels (`*.hip`). What several share is in
//! [`common`].

#![forbid(unsafe_code)]

pub mod adm;
pub mod cambi;
pub mod ciede;
pub mod common;
pub mod float_adm;
pub mod float_ansnr;
pub mod float_moment;
pub mod float_motion;
pub mod float_psnr;
pub mod float_vif;
pub mod motion;
pub mod psnr;
pub mod psnr_hvs;
pub mod speed;
pub mod ssim;
pub mod vif;
