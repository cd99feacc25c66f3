//! Build script: plugin version information, and the plugin's origin.
//! Kernels are embedded with `include_str!` and compiled at run time for the
//! exact device (hiprtc/nvrtc), so nothing here needs a GPU toolchain, and
//! nothing touches the network.

/// GStreamer's own wording for a build that names no origin (its meson
/// option `package-origin` defaults to it); GStreamer refuses an empty one.
const NO_ORIGIN: &str = "Unknown package origin";

fn main() {
    gst_plugin_version_helper::info();
    // The plugin's "Origin URL" (gst-inspect-1.0): where this build comes
    // from, set by whoever packages it (meson: -Dpackage-origin=URL).
    println!("cargo:rerun-if-env-changed=VMAFHIP_PACKAGE_ORIGIN");
    let origin = std::env::var("VMAFHIP_PACKAGE_ORIGIN")
        .ok()
        .filter(|o| !o.trim().is_empty())
        .unwrap_or_else(|| NO_ORIGIN.to_string());
    println!("cargo:rustc-env=VMAFHIP_PACKAGE_ORIGIN={origin}");
}
