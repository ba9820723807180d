//! Shared helpers for the integration tests (included with `mod common;`):
//! thin wrappers over `lever_testkit` for this crate's fixtures.
#![allow(dead_code)]

use lever_kernel::KernelFs;
use lever_testkit::FakeTree;

/// A fixture's text (`tests/fixtures/NAME`).
pub fn fixture(name: &str) -> String {
    lever_testkit::fixture(env!("CARGO_MANIFEST_DIR"), name)
}

/// A fake tree with the given kernel files, and its reader.
pub fn tree(files: &[(&str, String)]) -> (FakeTree, KernelFs) {
    let tree = FakeTree::new();
    for (path, text) in files {
        tree.node(path, text);
    }
    let fs = tree.fs().clone();
    (tree, fs)
}

/// A simulated board in a fake tree, and its reader.
pub fn sim(board: &str) -> (FakeTree, KernelFs) {
    let tree = FakeTree::new();
    lever_sim::create(board, tree.root()).unwrap();
    let fs = tree.fs().clone();
    (tree, fs)
}
