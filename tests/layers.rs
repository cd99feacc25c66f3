//! The layers stay layers: `tools/import_graph.py` (docs/architecture.md)
//! reads the library (`src/`), the command (`src/bin/vmafhip/`) and the C
//! library (`libvmaf/src/`), inline modules included, and finds no import
//! circle and no arrow up between their layers.

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
