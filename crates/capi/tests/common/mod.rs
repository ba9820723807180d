//! Helpers for tests that need the real `lever` binary, `liblever.so` and
//! a daemon on a simulated board. [`built`] builds the binary and the
//! library with the cargo that runs the tests (`cargo test` alone writes
//! neither), so a fresh clone tests them for real. A test may still skip,
//! saying why, when the machine lacks a tool (gcc, pytest) — except under
//! `CI=true`, where [`skip`] fails instead: CI installs those tools, so a
//! skip there would hide an untested feature.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::Duration;

/// True when running in CI (`CI=true`, as GitHub Actions and `.ci/run` set).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Skip a test for `why` — printed, and a failure under `CI=true`, where
/// everything a test needs is provided. Returns so the caller can `return`.
pub fn skip(test: &str, why: &str) {
    assert!(
        !in_ci(),
        "{test} cannot run under CI=true: {why} (CI must provide it; see .ci/run)"
    );
    println!("SKIPPED {test}: {why}");
}

/// What [`built`] made: the `lever` binary and the C library.
#[derive(Debug, Clone)]
pub struct Built {
    /// `target/<profile>/lever`.
    pub lever: PathBuf,
    /// `target/<profile>/liblever.so`.
    pub liblever: PathBuf,
}

/// Build `lever` and `liblever.so` (once per test binary) into the target
/// directory and profile this test runs from, with the cargo running the
/// tests (`$CARGO`). Errors carry cargo's output.
pub fn built() -> Result<Built, String> {
    static BUILT: OnceLock<Result<Built, String>> = OnceLock::new();
    BUILT.get_or_init(build).clone()
}

fn build() -> Result<Built, String> {
    let profile_dir = profile_dir().ok_or("cannot locate the test's target directory")?;
    let target_dir = profile_dir
        .parent()
        .ok_or("the profile directory has no parent")?;
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or("profile directory name is not UTF-8")?;
    // target/debug is the `dev` profile; any other directory is named after
    // its profile (release, or a custom one).
    let profile = if profile == "debug" { "dev" } else { profile };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    // A cross run (scripts/cross-test.sh) names its target: the tests are in
    // target/<triple>/debug, and the binaries must be built for <triple>
    // too, into the same place, not for the build machine.
    let cross = std::env::var("LEVER_TEST_TARGET")
        .ok()
        .filter(|t| !t.is_empty());
    let target_dir = match &cross {
        Some(_) => target_dir
            .parent()
            .ok_or("the target directory has no parent")?,
        None => target_dir,
    };
    let mut command = Command::new(&cargo);
    command.args([
        "build",
        "-p",
        "lever",
        "-p",
        "lever-capi",
        "--profile",
        profile,
    ]);
    if let Some(triple) = &cross {
        command.args(["--target", triple]);
    }
    let out = command
        .arg("--target-dir")
        .arg(target_dir)
        .current_dir(repo_root())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {cargo:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo build -p lever -p lever-capi failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let built = Built {
        lever: profile_dir.join("lever"),
        liblever: profile_dir.join("liblever.so"),
    };
    for p in [&built.lever, &built.liblever] {
        if !p.is_file() {
            return Err(format!(
                "cargo build succeeded but wrote no {}",
                p.display()
            ));
        }
    }
    Ok(built)
}

/// The workspace root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The target profile directory this test runs from (`target/debug`).
pub fn profile_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    // target/debug/deps/<test> → target/debug
    Some(exe.parent()?.parent()?.to_path_buf())
}

/// The `lever` binary: `$LEVER_BIN`, else the one [`built`] makes.
pub fn lever_bin() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("LEVER_BIN").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("LEVER_BIN={} does not exist", p.display()))
        };
    }
    built().map(|b| b.lever)
}

/// A `lever` binary that has the `daemon` command.
pub fn lever_with_daemon() -> Result<PathBuf, String> {
    let bin = lever_bin()?;
    let ok = Command::new(&bin)
        .args(["daemon", "--help"])
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("--sim"));
    if ok {
        Ok(bin)
    } else {
        Err(format!("{} has no `daemon` command yet", bin.display()))
    }
}

/// A daemon on the simulated qcs6490 board, killed on drop.
pub struct Daemon {
    pub child: Child,
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
}

impl Daemon {
    /// Start `lever daemon --sim qcs6490` and wait for its ready line.
    pub fn start(bin: &Path) -> Daemon {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("lever.sock");
        let mut child = Command::new(bin)
            .args(["daemon", "--sim", "qcs6490", "--state-dir"])
            .arg(dir.path())
            .arg("--socket")
            .arg(&socket)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn lever daemon");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut ready = Some(tx);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                eprintln!("[daemon] {line}");
                if line.contains("lever daemon: ready on") {
                    if let Some(tx) = ready.take() {
                        let _ = tx.send(());
                    }
                }
            }
        });
        if rx.recv_timeout(Duration::from_secs(20)).is_err() {
            let _ = child.kill();
            panic!("lever daemon did not print its ready line within 20 s");
        }
        Daemon { child, dir, socket }
    }

    /// A file of the simulated board, e.g.
    /// `sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq`.
    pub fn node(&self, rel: &str) -> PathBuf {
        self.dir.path().join("sim").join(rel)
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.node(rel))
            .unwrap_or_else(|e| panic!("{}: {e}", self.node(rel).display()))
            .trim()
            .to_string()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
