//! Helpers for tests that need the real `lever` binary and a daemon on a
//! simulated board. They skip (with a printed reason) when the binary is
//! missing or does not have `daemon` yet.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

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

/// The `lever` binary: `$LEVER_BIN`, else `lever` next to this test's
/// target directory, else `target/debug/lever` in the repository.
pub fn lever_bin() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("LEVER_BIN").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("LEVER_BIN={} does not exist", p.display()))
        };
    }
    let candidates = [
        profile_dir().map(|d| d.join("lever")),
        Some(repo_root().join("target/debug/lever")),
    ];
    for c in candidates.into_iter().flatten() {
        if c.is_file() {
            return Ok(c);
        }
    }
    Err("no `lever` binary (set LEVER_BIN or `cargo build -p lever`)".into())
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
