//! App detection wakes the daemon only for what it needs (issue 26): a
//! real `lever daemon --sim qcs6490` (the built-in target has `apps:`, so
//! detection is on when the test runs as root) is measured by its context
//! switches — `voluntary_ctxt_switches` + `nonvoluntary_ctxt_switches`
//! summed over `/proc/PID/task/*/status`, one or more per wake-up — while
//!
//! - nothing happens (10 s),
//! - `nobody` (uid 65534) forks 1,000 subshells that exit without exec,
//! - `nobody` runs `/bin/true` 1,000 times.
//!
//! The daemon's connector socket keeps exec events only (a socket filter
//! in the kernel), so the fork churn must not wake it, and an exec wakes
//! it at most once. Other processes on the machine exec meanwhile (a build
//! beside the test): this test counts them on an exec-only connector
//! socket of its own and allows one wake-up for each.
//!
//! `LEVER_APP_WAKEUPS_BIN=PATH` measures another `lever` binary (an older
//! build, to compare; the assertions then say what it costs).

mod common;

use common::daemon::{is_root, state_dir};
use lever_procwatch::{ProcConnector, ProcEvent, WatchError};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

const NOBODY: u32 = 65534;

/// Context switches of every thread of process `pid`.
fn switches(pid: u32) -> u64 {
    let mut total = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let Ok(status) = std::fs::read_to_string(task.unwrap().path().join("status")) else {
            continue; // a thread that just ended
        };
        for line in status.lines() {
            if let Some(v) = line
                .strip_prefix("voluntary_ctxt_switches:")
                .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
            {
                total += v.trim().parse::<u64>().unwrap();
            }
        }
    }
    total
}

/// Exec events on the machine read so far from `tap`.
fn drain(tap: &mut ProcConnector) -> u64 {
    match tap.recv(None) {
        Ok(events) => events
            .iter()
            .filter(|e| matches!(e, ProcEvent::Exec { .. }))
            .count() as u64,
        Err(e) => panic!("the test's own connector socket: {e}"),
    }
}

/// What one measured stretch cost the daemon.
struct Cost {
    wakeups: u64,
    execs: u64,
    took: Duration,
}

/// Run `script` with `sh -c` as `nobody` (or just wait `idle` when
/// `None`), counting the daemon's context switches and the machine's
/// execs from just before until it ended and 200 ms more.
fn measure(daemon: u32, tap: &mut ProcConnector, script: Option<&str>, idle: Duration) -> Cost {
    drain(tap);
    let before = switches(daemon);
    let start = Instant::now();
    let mut execs = 0;
    if let Some(script) = script {
        let mut sh = Command::new("sh")
            .args(["-c", script])
            .uid(NOBODY)
            .gid(NOBODY)
            .spawn()
            .unwrap();
        while sh.try_wait().unwrap().is_none() {
            execs += drain(tap);
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(sh.wait().unwrap().success());
    } else {
        while start.elapsed() < idle {
            execs += drain(tap);
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let took = start.elapsed();
    std::thread::sleep(Duration::from_millis(200));
    execs += drain(tap);
    Cost {
        wakeups: switches(daemon) - before,
        execs,
        took,
    }
}

#[test]
fn fork_churn_by_nobody_does_not_wake_the_daemon_and_an_exec_wakes_it_once() {
    if !is_root() {
        eprintln!("skipped: the process connector needs root, and the churn runs as `nobody`");
        return;
    }
    let mut tap = match ProcConnector::open() {
        Ok(t) => t,
        Err(e @ WatchError::Unavailable { .. }) => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let bin = std::env::var_os("LEVER_APP_WAKEUPS_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| common::LEVER.into());
    let dir = state_dir();
    let (child, log) = common::spawn_daemon(Command::new(&bin).args([
        "daemon".as_ref(),
        "--sim".as_ref(),
        "qcs6490".as_ref(),
        "--state-dir".as_ref(),
        dir.path().as_os_str(),
        "--socket".as_ref(),
        dir.path().join("lever.sock").as_os_str(),
    ]));
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let child = Kill(child);
    let pid = child.0.id();
    let text = log.lock().unwrap().clone();
    if text.contains("app detection is not available") {
        eprintln!("skipped: {text}");
        return;
    }
    assert!(text.contains("app detection on"), "{text}");
    // Let start-up settle (the /proc scan, the journal).
    std::thread::sleep(Duration::from_millis(500));

    let idle = measure(pid, &mut tap, None, Duration::from_secs(10));
    let forks = measure(
        pid,
        &mut tap,
        Some("i=0; while [ $i -lt 1000 ]; do (exit 0); i=$((i+1)); done"),
        Duration::ZERO,
    );
    let execs = measure(
        pid,
        &mut tap,
        Some("i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i+1)); done"),
        Duration::ZERO,
    );
    let line = |what: &str, c: &Cost| {
        println!(
            "{what}: {} daemon context switches in {:.2} s, {} execs on the machine meanwhile",
            c.wakeups,
            c.took.as_secs_f64(),
            c.execs
        )
    };
    println!("{}", bin.display());
    line("idle, 10 s", &idle);
    line("1,000 fork+exit by nobody", &forks);
    line("1,000 execs of /bin/true by nobody", &execs);

    // The fork churn: the shell's own exec, other processes' execs, and a
    // few more (the daemon's own timers; a preemption) at most. Without
    // the filter it is at least one per fork and one per exit.
    assert!(
        forks.wakeups < 20 + forks.execs,
        "1,000 fork+exit woke the daemon {} times ({} execs on the machine)",
        forks.wakeups,
        forks.execs
    );
    // At most one wake-up an exec (several queued execs are read at once).
    assert!(execs.execs >= 1000, "the test's tap missed execs");
    assert!(
        execs.wakeups < 20 + execs.execs,
        "1,000 execs woke the daemon {} times ({} execs on the machine)",
        execs.wakeups,
        execs.execs
    );
}
