//! vmafhip: Netflix VMAF for GStreamer, on the GPU through HIP, with a
//! bit-exact CPU engine that is also the reference and fallback.
//!
//! The layers, lowest first; none imports a higher one
//! (`tools/import_graph.py`, docs/architecture.md):
//! [`core`] (pictures, values, models, output), [`hip`] (the GPU runtime),
//! [`extractors`] (one folder each, the registry, the plan), [`cpu`] and
//! [`gpu`] (the backends), [`vmaf`] (the scorer, and the library's public
//! face), then the element.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod core;
pub mod cpu;
pub mod extractors;
pub mod gpu;
pub mod hip;
pub mod report;
pub mod vmaf;

#[cfg(feature = "plugin")]
mod element;

#[cfg(feature = "plugin")]
pub use element::*;

#[cfg(feature = "plugin")]
fn plugin_init(plugin: &gst::Plugin) -> Result<(), glib::BoolError> {
    element::register(plugin)
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
