//! Runs the Python client's tests (`python3 -m pytest -q clients/python`)
//! so that `cargo test --workspace` covers them. Skips, saying why, when
//! python3 or pytest is missing (a failure under `CI=true`); fails when
//! pytest fails. The `lever` binary is built first and passed as
//! `LEVER_BIN` for the Python integration tests, which fail rather than
//! skip under `CI=true` too.
mod common;

use std::process::{Command, Stdio};

#[test]
fn python_client_tests() {
    let has_pytest = Command::new("python3")
        .args(["-c", "import pytest"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_pytest {
        common::skip(
            "python_client_tests",
            "python3 with pytest is not installed",
        );
        return;
    }
    let root = common::repo_root();
    let mut cmd = Command::new("python3");
    cmd.args([
        "-m",
        "pytest",
        "-q",
        "-rs",
        "-p",
        "no:cacheprovider",
        "clients/python",
    ])
    .current_dir(&root)
    .env("PYTHONDONTWRITEBYTECODE", "1");
    if std::env::var_os("LEVER_BIN").is_none() {
        let built = common::built().unwrap_or_else(|e| panic!("python_client_tests: {e}"));
        cmd.env("LEVER_BIN", built.lever);
    }
    let out = cmd.output().expect("run pytest");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert!(out.status.success(), "pytest failed:\n{text}");
}
