//! Build script: plugin version information, and the plugin's origin.
//! Kernels are embedded with `include_str!` and compiled at run time for the
//! exact device (hiprtc/nvrtc), so nothing here needs a GPU toolchain, and
//! nothing touches the network.

/// GStreamer's own wording for a build that names no origin (its meson
/// option `package-origin` defaults to it); GStreamer refuses an empty one.
const NO_ORIGIN: &str = "Unknown package origin";

fn main() {
    gst_plugin_version_helper::info();
    watch_the_commit();
    // The plugin's "Origin URL" (gst-inspect-1.0): where this build comes
    // from, set by whoever packages it (meson: -Dpackage-origin=URL).
    println!("cargo:rerun-if-env-changed=VMAFHIP_PACKAGE_ORIGIN");
    let origin = std::env::var("VMAFHIP_PACKAGE_ORIGIN")
        .ok()
        .filter(|o| !o.trim().is_empty())
        .unwrap_or_else(|| NO_ORIGIN.to_string());
    println!("cargo:rustc-env=VMAFHIP_PACKAGE_ORIGIN={origin}");
}

/// Runs this script again when the checkout's commit changes, so that the
/// version (`COMMIT_ID`) follows it: once a script names what it depends
/// on (the origin's variable below), cargo reruns it for nothing else.
/// Watched, where present (a missing path would make every build rerun
/// it): HEAD, the branches' folder (a commit rewrites or adds a loose ref
/// there) and the packed refs, in the git directory of this checkout or
/// its worktree's common one.
fn watch_the_commit() {
    let manifest =
        std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let Some(git) = git_dir(&manifest) else {
        return;
    };
    let common = std::fs::read_to_string(git.join("commondir"))
        .map(|c| git.join(c.trim()))
        .unwrap_or_else(|_| git.clone());
    let watched = [
        git.join("HEAD"),
        git.join("refs/heads"),
        common.join("refs/heads"),
        common.join("packed-refs"),
    ];
    for path in watched.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// The git directory of the checkout `dir` lies in (`.git`, or where a
/// worktree's `.git` file points), looking up to the filesystem's root.
fn git_dir(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let dot_git = dir
        .ancestors()
        .map(|d| d.join(".git"))
        .find(|g| g.exists())?;
    if dot_git.is_dir() {
        return Some(dot_git);
    }
    let pointer = std::fs::read_to_string(&dot_git).ok()?;
    let target = std::path::PathBuf::from(pointer.strip_prefix("gitdir:")?.trim());
    Some(if target.is_absolute() {
        target
    } else {
        dot_git.parent()?.join(target)
    })
}
