//! The layers stay layers: `tools/import_graph.py` (docs/architecture.md)
//! finds no import circle in `src/` and no arrow up between `core`, `hip`,
//! `extractors`, `cpu`, `gpu`, `vmaf` and the element.

use std::process::Command;

#[test]
fn src_has_no_import_circle_and_no_upward_arrow() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{root}/tools/import_graph.py"))
        .output()
        .expect("python3 runs tools/import_graph.py");
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    assert!(
        out.status.success() && text.trim_end().ends_with(" 0 problems"),
        "tools/import_graph.py: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
