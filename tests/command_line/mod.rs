//! What the tests of the `vmafhip` command share: the command, a scratch
//! folder per test file, and readers of its output. (A module of the tests
//! that run the command only: the command is built with the `plugin`
//! feature.)
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn vmafhip() -> Command {
    Command::new(env!("CARGO_BIN_EXE_vmafhip"))
}

/// `target/tmp/<name>`, made if needed.
pub fn scratch_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn json_of(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
