//! Helpers shared by the `lever` binary's integration tests.
#![allow(dead_code)] // each test file uses a subset

use std::process::{Command, Output};

/// Path of the binary under test.
pub const LEVER: &str = env!("CARGO_BIN_EXE_lever");

/// Run `lever ARGS`.
pub fn lever(args: &[&str]) -> Output {
    Command::new(LEVER).args(args).output().expect("run lever")
}

/// Run `lever ARGS`, require success, return stdout.
pub fn ok(args: &[&str]) -> String {
    let out = lever(args);
    assert!(
        out.status.success(),
        "lever {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Every file under a root with its bytes, and what differs between two
/// snapshots: the shared helpers every crate's tests use.
#[allow(unused_imports)] // each test file uses a subset
pub use lever_testkit::{changed, snapshot};
