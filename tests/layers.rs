//! The layers stay layers: `tools/import_graph.py` (docs/architecture.md)
//! reads the library (`src/`), the command (`src/bin/vmafhip/`) and the C
//! library (`libvmaf/src/`), inline modules included, and finds no import
//! circle, no arrow up between their layers and no extractor using
//! another's folder.

use std::process::Command;

fn import_graph(args: &[&str]) -> (bool, String) {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{root}/tools/import_graph.py"))
        .args(args)
        .output()
        .expect("python3 runs tools/import_graph.py");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr);
    (out.status.success(), format!("{text}{err}"))
}

#[test]
fn crates_have_no_import_circle_and_no_upward_arrow() {
    let (ok, text) = import_graph(&[]);
    println!("{text}");
    assert!(
        text.contains("src/bin/vmafhip") && text.contains("libvmaf/src"),
        "{text}"
    );
    assert!(ok && text.trim_end().ends_with(" 0 problems"), "{text}");
}

/// The check can fail: a circle through an inline module's `super::super`
/// path, the kind `element/pad.rs` once had with `element/imp`.
#[test]
fn a_circle_through_an_inline_module_is_found() {
    let dir = std::env::temp_dir().join(format!("vmafhip-layers-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(dir.join("a/mod.rs"), "pub fn f() { crate::b::g() }\n").unwrap();
    std::fs::write(
        dir.join("b.rs"),
        "pub fn g() {}\nmod inner {\n    fn h() { super::super::a::f() }\n}\n",
    )
    .unwrap();
    let (ok, text) = import_graph(&["--crate", dir.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        !ok && text.contains("circle: crate:a <-> crate:b"),
        "{text}"
    );
}

/// The check can fail sideways: one extractor's folder using another's
/// (as `float_vif` once used `speed`'s prescale) instead of `common`.
#[test]
fn an_extractor_using_another_is_found() {
    let dir = std::env::temp_dir().join(format!("vmafhip-sideways-{}", std::process::id()));
    for sub in ["ex/a", "ex/b", "ex/common"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::write(dir.join("lib.rs"), "mod ex;\n").unwrap();
    std::fs::write(dir.join("ex/mod.rs"), "mod a;\nmod b;\nmod common;\n").unwrap();
    std::fs::write(dir.join("ex/common/mod.rs"), "pub fn shared() {}\n").unwrap();
    std::fs::write(
        dir.join("ex/a/mod.rs"),
        "pub fn f() { crate::ex::common::shared() }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("ex/b/mod.rs"),
        "pub fn g() { crate::ex::a::f() }\n",
    )
    .unwrap();
    let (ok, text) = import_graph(&["--crate", dir.to_str().unwrap(), "--siblings", "ex"]);
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        !ok && text.contains("sideways: crate:ex::b uses crate:ex::a")
            && text.contains("1 problems"),
        "{text}"
    );
}

/// Short functions: none in the three crates over 100 lines
/// (`tools/fn_lengths.py`, which also lists them at any other limit).
#[test]
fn no_function_is_over_a_hundred_lines() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{root}/tools/fn_lengths.py"))
        .output()
        .expect("python3 runs tools/fn_lengths.py");
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    assert!(
        out.status.success() && text.contains(": 0 functions over 100 lines"),
        "{text}"
    );
}
