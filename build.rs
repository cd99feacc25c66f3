//! Build script: plugin version information only. Kernels are embedded with
//! `include_str!` and compiled at run time for the exact device (hiprtc/nvrtc),
//! so nothing here needs a GPU toolchain, and nothing touches the network.

fn main() {
    println!("cargo:rerun-if-changed=kernels");
    gst_plugin_version_helper::info();
}
