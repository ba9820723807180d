//! Shared helpers for the integration tests (included with `mod common;`).
#![allow(dead_code)]

use lever_kernel::KernelFs;
use std::path::PathBuf;

/// A fixture's text.
pub fn fixture(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A fake tree in a tempdir with the given kernel files.
pub fn tree(files: &[(&str, String)]) -> (tempfile::TempDir, KernelFs) {
    let dir = tempfile::tempdir().unwrap();
    let fs = KernelFs::new(dir.path());
    for (path, text) in files {
        fs.create_node(path, text).unwrap();
    }
    (dir, fs)
}

/// A simulated board in a tempdir.
pub fn sim(board: &str) -> (tempfile::TempDir, KernelFs) {
    let dir = tempfile::tempdir().unwrap();
    lever_sim::create(board, dir.path()).unwrap();
    let fs = KernelFs::new(dir.path());
    (dir, fs)
}
