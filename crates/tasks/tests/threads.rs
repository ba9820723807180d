//! Thread settings on real tasks this test starts: a child process and a
//! thread of our own. Read back with `sched_getaffinity` and
//! `/proc/PID/task/*/stat`, never touching anything else on the machine.

use lever_kernel::KernelFs;
use lever_tasks::{
    affinity, apply_process, restore, set_affinity, set_sched, set_uclamp, threads_of, Cgroups,
    Original, Policy, Restored, Sched, TaskError, ThreadSetting,
};
use std::process::{Child, Command};

/// A `sleep 30` child, returned once it has exec'd: until then the child
/// is a copy of this process (under qemu-user, with qemu's own helper
/// thread), and its thread list can change under the test.
fn sleeper() -> Child {
    let child = Command::new("sleep")
        .arg("30")
        .spawn()
        .expect("spawn sleep");
    let comm = format!("/proc/{}/comm", child.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::fs::read_to_string(&comm).map_or(true, |c| c.trim_end() != "sleep") {
        assert!(
            std::time::Instant::now() < deadline,
            "sleep did not exec within 10 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    child
}

/// (rt_priority, policy): fields 40 and 41 of `/proc/PID/task/TID/stat`,
/// counted after the `(comm)` that may contain spaces.
fn stat_sched(pid: i32, tid: i32) -> (u32, u32) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).unwrap();
    let after = &text[text.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // `after` starts at field 3 (state).
    (f[40 - 3].parse().unwrap(), f[41 - 3].parse().unwrap())
}

fn cgroups() -> Cgroups {
    Cgroups::new(KernelFs::system())
}

#[test]
fn affinity_of_every_thread_of_a_child_and_back() {
    let online = affinity(0).unwrap();
    let mut child = sleeper();
    let pid = child.id() as i32;
    let fs = KernelFs::system();
    let tids = threads_of(&fs, pid).unwrap();
    if std::env::var_os("LEVER_UNDER_QEMU").is_some() {
        // qemu-user runs helper threads (RCU) inside the emulated process.
        assert_eq!(tids[0], pid, "{tids:?}");
    } else {
        assert_eq!(tids, vec![pid]);
    }
    let want = vec![online[0]];
    let originals =
        apply_process(&fs, pid, &ThreadSetting::Affinity { cpus: want.clone() }).unwrap();
    assert_eq!(affinity(pid).unwrap(), want);
    // One original per thread, the main thread's first.
    assert_eq!(originals.len(), tids.len());
    assert_eq!(
        originals[0],
        Original::Affinity {
            tid: pid,
            cpus: affinity(0).unwrap()
        }
    );
    for o in &originals {
        assert_eq!(restore(&cgroups(), o).unwrap(), Restored::Done);
    }
    assert_eq!(affinity(pid).unwrap(), online);

    // Set again, then the child dies: restoring is a skip, not an error.
    let o = set_affinity(pid, &want).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    match restore(&cgroups(), &o).unwrap() {
        Restored::Skipped { why } => assert!(why.contains(&pid.to_string()), "{why}"),
        other => panic!("expected a skip, got {other:?}"),
    }
}

#[test]
fn policy_of_a_thread_read_back_from_proc() {
    let (tx, rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let handle = std::thread::spawn(move || {
        tx.send(rustix::thread::gettid().as_raw_nonzero().get())
            .unwrap();
        let _ = stop_rx.recv();
    });
    let tid = rx.recv().unwrap();
    let pid = std::process::id() as i32;
    assert_eq!(stat_sched(pid, tid), (0, Policy::Other.raw()));

    // SCHED_BATCH needs no privilege; SCHED_FIFO needs CAP_SYS_NICE.
    let o = set_sched(
        tid,
        Sched {
            policy: Policy::Batch,
            priority: 0,
        },
    )
    .unwrap();
    assert_eq!(stat_sched(pid, tid), (0, Policy::Batch.raw()));
    assert_eq!(restore(&cgroups(), &o).unwrap(), Restored::Done);
    assert_eq!(stat_sched(pid, tid), (0, Policy::Other.raw()));

    match set_sched(
        tid,
        Sched {
            policy: Policy::Fifo,
            priority: 10,
        },
    ) {
        Ok(o) => {
            assert_eq!(stat_sched(pid, tid), (10, Policy::Fifo.raw()));
            let json = serde_json::to_string(&o).unwrap();
            let back: Original = serde_json::from_str(&json).unwrap();
            assert_eq!(restore(&cgroups(), &back).unwrap(), Restored::Done);
            assert_eq!(stat_sched(pid, tid), (0, Policy::Other.raw()));
        }
        Err(TaskError::NotAllowed { .. }) => {
            println!("skipped SCHED_FIFO: not root / no CAP_SYS_NICE");
        }
        Err(e) => panic!("{e}"),
    }
    stop_tx.send(()).unwrap();
    handle.join().unwrap();
}

#[test]
fn uclamp_is_set_or_says_why_not() {
    let child = sleeper();
    let pid = child.id() as i32;
    let mut child = child;
    match set_uclamp(pid, Some(512), None) {
        Ok(o) => {
            let Original::Uclamp { min, .. } = o else {
                panic!("{o:?}")
            };
            assert_eq!(restore(&cgroups(), &o).unwrap(), Restored::Done);
            println!("uclamp available; original min {min}");
        }
        Err(e @ TaskError::NotAvailable { .. }) => {
            let text = e.to_string();
            assert!(text.contains("CONFIG_UCLAMP_TASK"), "{text}");
            println!("skipped uclamp: {text}");
        }
        Err(e) => panic!("{e}"),
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_gone_task_is_an_error_to_set() {
    let mut child = sleeper();
    let pid = child.id() as i32;
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(matches!(set_affinity(pid, &[0]), Err(TaskError::Gone { tid }) if tid == pid));
}
