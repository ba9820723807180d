//! A `trace record` killed with SIGKILL cannot remove its tracefs
//! instance (`instances/lever-PID`), which keeps tracing into its buffer
//! (issue 29: 1.09 M events written in a minute). The next `trace
//! record`, and `lever restore`, remove such instances of dead processes
//! and say so. On the real tracefs (root; skips with the reason
//! otherwise).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const INSTANCES: &str = "/sys/kernel/tracing/instances";

/// One recorder at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn usable() -> bool {
    if !Path::new(INSTANCES).is_dir() {
        eprintln!("skipped: no tracefs instances at {INSTANCES}");
        return false;
    }
    if std::fs::OpenOptions::new()
        .write(true)
        .open("/sys/kernel/tracing/trace_marker")
        .is_err()
    {
        eprintln!("skipped: tracefs is not writable here (need root)");
        return false;
    }
    true
}

/// Start `trace record` for a minute, wait for its instance, SIGKILL it:
/// the instance it leaves behind.
fn killed_recorder(dir: &Path) -> (u32, PathBuf) {
    let mut child = Command::new(common::LEVER)
        .args(["trace", "record", "-e", "sched", "--duration", "60s", "-o"])
        .arg(dir.join("killed.txt"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let inst = PathBuf::from(format!("{INSTANCES}/lever-{pid}"));
    let t = Instant::now();
    while !inst.join("tracing_on").exists() && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    // Its events are enabled once the instance is configured.
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    assert!(inst.is_dir(), "the killed recorder's instance is left");
    assert_eq!(
        std::fs::read_to_string(inst.join("tracing_on"))
            .unwrap()
            .trim(),
        "1",
        "and keeps tracing"
    );
    (pid, inst)
}

#[test]
fn the_next_trace_record_removes_a_killed_recorder_s_instance() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (pid, inst) = killed_recorder(dir.path());
    let out = common::lever(&[
        "trace",
        "record",
        "-e",
        "sched:sched_switch",
        "--duration",
        "100ms",
        "-o",
        dir.path().join("next.txt").to_str().unwrap(),
    ]);
    common::assert_success(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "removed the stale tracefs instance lever-{pid} (its recorder, pid {pid}, is gone)"
        )),
        "{err}"
    );
    assert!(!inst.exists(), "{} removed", inst.display());
}

#[test]
fn lever_restore_removes_a_killed_recorder_s_instance() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (pid, inst) = killed_recorder(dir.path());
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let out = common::lever(&["restore", "--state-dir", state.to_str().unwrap()]);
    common::assert_success(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("removed the stale tracefs instance lever-{pid}")),
        "{err}"
    );
    assert!(!inst.exists(), "{} removed", inst.display());
}
