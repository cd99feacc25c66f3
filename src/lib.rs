//! vmafhip: Netflix VMAF for GStreamer, on the GPU through HIP, with a
//! bit-exact CPU engine (`vmaf`) that is also the reference and fallback.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod extractors;
pub mod hip;
pub mod isa;
pub mod report;
pub mod vmaf;

#[cfg(feature = "plugin")]
mod vmafhip;

#[cfg(feature = "plugin")]
pub use vmafhip::*;

#[cfg(feature = "plugin")]
fn plugin_init(plugin: &gst::Plugin) -> Result<(), glib::BoolError> {
    vmafhip::register(plugin)
}

#[cfg(feature = "plugin")]
gst::plugin_define!(
    vmafhip,
    env!("CARGO_PKG_DESCRIPTION"),
    plugin_init,
    concat!(env!("CARGO_PKG_VERSION"), "-", env!("COMMIT_ID")),
    "MPL",
    env!("CARGO_PKG_NAME"),
    env!("CARGO_PKG_NAME"),
    // Origin URL: the packager's (VMAFHIP_PACKAGE_ORIGIN at build time,
    // meson's -Dpackage-origin), else GStreamer's "Unknown package origin".
    env!("VMAFHIP_PACKAGE_ORIGIN"),
    env!("BUILD_REL_DATE")
);
