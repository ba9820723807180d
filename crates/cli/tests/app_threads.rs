//! Per-thread rules end to end: a real daemon on this machine's /proc
//! (`--root /`, a target that only configures threads, so no node is ever
//! written), a real process with named threads (a small C program built
//! with gcc here), registered as an app; its threads get their affinity,
//! policy and nice (read back with `sched_getaffinity` and
//! `/proc/PID/task/TID/stat`) within 50 ms, and at its exit the daemon
//! releases the configuration, skipping the threads that are gone, and
//! marks it done in its task journal.

mod common;

use common::daemon::{bound, is_root, state_dir, wait_until, Daemon};
use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TARGET: &str = "\
target: threads-only
resources:
  - name: swappiness
    opcode: 0x48800000
    node: /proc/sys/vm/swappiness
    unit: count
    low: 0
    high: 200
    aggregation: newest
    permission: third-party
    optional: true
app_filter:
  require_tty_or_display: false
apps:
  - name: threaded
    exec: lever-thr-probe
    threads:
      - { comm: lw-fifo, affinity: 0, policy: fifo, priority: 10 }
      - { comm: \"lw-b*\", affinity: 0, policy: batch, nice: 5 }
";

const PROGRAM: &str = r#"
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *idle(void *arg) { (void)arg; for (;;) pause(); return 0; }
int main(void) {
    const char *names[] = {"lw-fifo", "lw-batch", "lw-other"};
    for (int i = 0; i < 3; i++) {
        pthread_t t;
        if (pthread_create(&t, 0, idle, 0) || pthread_setname_np(t, names[i])) return 1;
    }
    printf("ready\n");
    fflush(stdout);
    char c;
    return read(0, &c, 1) < 0;
}
"#;

/// The CPUs thread `tid` may run on (`sched_getaffinity`).
fn affinity(tid: i32) -> Vec<u32> {
    let set = rustix::thread::sched_getaffinity(rustix::process::Pid::from_raw(tid)).unwrap();
    (0..rustix::thread::CpuSet::MAX_CPU as u32)
        .filter(|&c| set.is_set(c as usize))
        .collect()
}

/// (comm, policy, allowed CPUs, nice) of every thread of `pid`.
fn threads(pid: u32) -> Vec<(String, u32, Vec<u32>, i32)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let tid: i32 = e.unwrap().file_name().to_str().unwrap().parse().unwrap();
        let comm = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).unwrap();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).unwrap();
        // Fields 41 (policy) and 19 (nice), counted after the `(comm)`
        // that may hold spaces.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let field = |n: usize| after.split_whitespace().nth(n - 3).unwrap();
        out.push((
            comm.trim().to_string(),
            field(41).parse().unwrap(),
            affinity(tid),
            field(19).parse().unwrap(),
        ));
    }
    out.sort();
    out
}

#[test]
fn named_threads_get_affinity_and_policy_within_50ms_and_are_released_at_exit() {
    if !is_root() {
        eprintln!("skipped: SCHED_FIFO for a thread needs CAP_SYS_NICE (root)");
        return;
    }
    let dir = state_dir();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let src = work.join("probe.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let exe = work.join("lever-thr-probe");
    let cc = Command::new("gcc")
        .args(["-O1", "-pthread", "-o"])
        .arg(&exe)
        .arg(&src)
        .output();
    match cc {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!("gcc failed: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => {
            eprintln!("skipped: no gcc to build the probe: {e}");
            return;
        }
    }
    let file = work.join("threads.yaml");
    std::fs::write(&file, TARGET).unwrap();
    // Detection off: the probe registers once its threads exist (at exec
    // they do not yet, and the connector would configure it then).
    let d = Daemon::start(
        dir.path(),
        &[
            "--root",
            "/",
            "--target",
            file.to_str().unwrap(),
            "--no-apps",
        ],
    );
    let mut probe = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(probe.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "ready\n");
    let pid = probe.id();
    let before = threads(pid);
    let all: Vec<u32> = before[0].2.clone();
    assert!(
        before.iter().all(|t| t.1 == 0),
        "SCHED_OTHER at start: {before:?}"
    );

    let t0 = Instant::now();
    d.client().register(pid, "threaded").unwrap();
    let after = threads(pid);
    let applied = t0.elapsed();
    println!(
        "register -> applied and read back: {:.2} ms (load {})",
        applied.as_secs_f64() * 1e3,
        std::fs::read_to_string("/proc/loadavg").unwrap().trim()
    );
    assert!(applied < bound(Duration::from_millis(50)), "{applied:?}");
    let expect = |comm: &str| after.iter().find(|t| t.0 == comm).unwrap().clone();
    assert_eq!(expect("lw-fifo").1, 1, "SCHED_FIFO: {after:?}");
    assert_eq!(expect("lw-fifo").2, vec![0]);
    assert_eq!(expect("lw-batch").1, 3, "SCHED_BATCH: {after:?}");
    assert_eq!(expect("lw-batch").2, vec![0]);
    assert_eq!(expect("lw-batch").3, 5, "nice 5: {after:?}");
    assert_eq!(expect("lw-fifo").3, 0);
    // Threads no rule names are left alone.
    assert_eq!(expect("lw-other").1, 0);
    assert_eq!(expect("lw-other").2, all);
    assert_eq!(expect("lever-thr-probe").2, all);

    std::io::Write::write_all(probe.stdin.as_mut().unwrap(), b"x").unwrap();
    let exited = Instant::now();
    probe.wait().unwrap();
    let released = wait_until(Duration::from_secs(5), || {
        d.log()
            .contains(&format!("app threaded (pid {pid}) exited"))
    })
    .map(|_| exited.elapsed());
    println!("exit -> released: {released:?}");
    assert!(released.is_some(), "{}", d.log());
    assert!(
        released.unwrap() < Duration::from_millis(50),
        "{released:?}"
    );
    // Every original was skipped (the threads are gone), none failed, and
    // the request is marked done: a restart restores nothing.
    let log = d.log();
    assert!(!log.contains("could not restore"), "{log}");
    assert!(log.contains("nothing to restore"), "{log}");
    let journal = std::fs::read_to_string(dir.path().join("tasks.journal")).unwrap();
    let sets = journal.lines().filter(|l| l.starts_with("set ")).count();
    assert_eq!(
        sets, 5,
        "affinity and policy of two threads, one nice: {journal}"
    );
    assert!(journal.lines().any(|l| l.starts_with("done ")), "{journal}");
}
