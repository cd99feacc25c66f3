//! The library answers to libvmaf's soname, so that programs linked
//! against libvmaf 3 load it (through LD_LIBRARY_PATH or its own folder).
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libvmaf.so.3");
}
