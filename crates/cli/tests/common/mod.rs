//! Helpers shared by the `lever` binary's integration tests.
#![allow(dead_code)] // each test file uses a subset

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
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

/// Every file under `root` with its bytes, for exact before/after checks.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(e.path());
            } else if ft.is_file() {
                out.insert(e.path(), std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

/// Paths whose content differs between two snapshots, with both contents.
pub fn changed(a: &BTreeMap<PathBuf, Vec<u8>>, b: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<String> {
    a.iter()
        .filter(|(k, v)| b.get(*k) != Some(v))
        .map(|(k, v)| {
            let after = b.get(k).map(|x| String::from_utf8_lossy(x).into_owned());
            format!(
                "{}: {:?} -> {after:?}",
                k.display(),
                String::from_utf8_lossy(v)
            )
        })
        .collect()
}
