//! Helpers shared by the `lever` binary's integration tests.
#![allow(dead_code)] // each test file uses a subset

pub mod attack;
pub mod daemon;

use std::process::{Command, Output};

/// Path of the binary under test.
pub const LEVER: &str = env!("CARGO_BIN_EXE_lever");

/// Run `lever ARGS`.
pub fn lever(args: &[&str]) -> Output {
    Command::new(LEVER).args(args).output().expect("run lever")
}

/// Require that a finished `lever` succeeded; the failure shows its stderr.
pub fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "lever failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
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

/// Spawn a daemon command (its stderr piped here) and wait until it says
/// `ready on`; returns it and its log so far, kept up to date by a thread.
pub fn spawn_daemon(
    cmd: &mut Command,
) -> (
    std::process::Child,
    std::sync::Arc<std::sync::Mutex<String>>,
) {
    use std::io::BufRead;
    let mut child = cmd
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("start daemon");
    let stderr = child.stderr.take().unwrap();
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let sink = log.clone();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if line.contains("ready on") {
                let _ = tx.send(());
            }
            sink.lock().unwrap().push_str(&(line + "\n"));
        }
    });
    if rx.recv_timeout(std::time::Duration::from_secs(20)).is_err() {
        let _ = child.kill();
        panic!("daemon did not get ready: {}", log.lock().unwrap());
    }
    (child, log)
}
