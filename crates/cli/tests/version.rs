//! `lever --version` names the git revision, target and features, and
//! falls back to `unknown` outside a git checkout of the workspace.

mod common;

#[path = "../build_support/revision.rs"]
#[allow(dead_code)] // version_line is build.rs's
mod revision;

use std::path::Path;
use std::process::Command;

fn workspace_root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn version_names_revision_target_and_features() {
    let out = common::ok(&["--version"]);
    let line = out.trim();
    assert!(
        line.starts_with(&format!("lever {} (git ", env!("CARGO_PKG_VERSION"))),
        "{line}"
    );
    // The features this test (and so the binary) was built with, in the
    // build script's order: the host build names every one.
    let features: Vec<&str> = [
        ("board", cfg!(feature = "board")),
        ("dbus", cfg!(feature = "dbus")),
        ("flamegraph", cfg!(feature = "flamegraph")),
        ("host", cfg!(feature = "host")),
        ("html", cfg!(feature = "html")),
        ("parquet", cfg!(feature = "parquet")),
        ("postgres", cfg!(feature = "postgres")),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect();
    let features = if features.is_empty() {
        "none".to_string()
    } else {
        features.join(",")
    };
    assert!(
        line.ends_with(&format!(", features: {features})")),
        "{line}"
    );
    let target = if cfg!(target_arch = "x86_64") {
        "x86_64-"
    } else {
        "-linux-"
    };
    assert!(line.contains(target), "{line}");
    // The same revision git reports, when the tests run in a checkout (a
    // build from a tarball says "unknown", checked below).
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(workspace_root())
        .output();
    match head {
        Ok(o) if o.status.success() && std::env::var_os("LEVER_GIT_REV").is_none() => {
            let rev = String::from_utf8_lossy(&o.stdout).trim().to_string();
            assert!(
                line.contains(&format!("(git {rev},")),
                "{line} vs HEAD {rev}"
            );
        }
        _ => println!("not in a git checkout (or LEVER_GIT_REV set): revision not compared"),
    }
}

#[test]
fn outside_a_checkout_the_revision_is_unknown() {
    let dir = tempfile::tempdir().unwrap();
    assert!(revision::git_revision(dir.path()).is_none());
    // A tarball unpacked inside another repository is not that repository.
    let outer = dir.path().join("outer");
    let inner = outer.join("lever-0.1.0");
    std::fs::create_dir_all(&inner).unwrap();
    let init = Command::new("git")
        .arg("init")
        .arg("-q")
        .arg(&outer)
        .status();
    if init.is_ok_and(|s| s.success()) {
        assert!(revision::git_revision(&inner).is_none());
    }
    let line = revision::version_line("0.1.0", None, "armv7-unknown-linux-gnueabihf", &[]);
    assert_eq!(
        line,
        "0.1.0 (git unknown, armv7-unknown-linux-gnueabihf, features: none)"
    );
}

#[test]
fn in_this_checkout_the_revision_and_its_ref_files_are_found() {
    let Some((rev, files)) = revision::git_revision(workspace_root()) else {
        println!("skipped: the workspace is not a git checkout here");
        return;
    };
    assert_eq!(rev.len(), 12, "{rev}");
    assert!(files.iter().any(|f| f.ends_with("HEAD")), "{files:?}");
}
