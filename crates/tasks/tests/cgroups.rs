//! Cgroup files and moves on a fake cgroup2 tree, and on the real cgroup2
//! mount inside a child cgroup this test creates and removes.

use lever_kernel::KernelFs;
use lever_tasks::{restore, CgroupKnob, Cgroups, Original, Restored, TaskError};
use std::process::Command;

fn fake() -> (tempfile::TempDir, KernelFs) {
    let dir = tempfile::tempdir().unwrap();
    let fs = KernelFs::new(dir.path());
    fs.create_node("/proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n")
        .unwrap();
    fs.create_node(
        "/sys/fs/cgroup/cgroup.controllers",
        "cpuset cpu io memory pids\n",
    )
    .unwrap();
    fs.create_node("/sys/fs/cgroup/cgroup.subtree_control", "")
        .unwrap();
    fs.create_node("/sys/fs/cgroup/cgroup.procs", "1\n")
        .unwrap();
    fs.create_node("/proc/1/cgroup", "0::/\n").unwrap();
    fs.create_node("/proc/77/cgroup", "0::/user.slice/app.scope\n")
        .unwrap();
    fs.create_node("/proc/77/task/78/cgroup", "0::/user.slice/app.scope\n")
        .unwrap();
    fs.create_node("/sys/fs/cgroup/user.slice/app.scope/cgroup.procs", "77\n")
        .unwrap();
    (dir, fs)
}

#[test]
fn every_knob_written_and_restored_on_a_fake_tree() {
    let (_d, fs) = fake();
    let cg = Cgroups::discover(fs.clone());
    assert_eq!(cg.mount(), "/sys/fs/cgroup");
    cg.check().unwrap();
    assert!(cg.create("lever/camera").unwrap());
    assert!(!cg.create("lever/camera").unwrap());
    let defaults = [
        (CgroupKnob::UclampMin, "0.00", "50.00"),
        (CgroupKnob::UclampMax, "max", "80.00"),
        (CgroupKnob::Weight, "100", "400"),
        (CgroupKnob::Max, "max 100000", "50000 100000"),
        (CgroupKnob::CpusetCpus, "", "4-7"),
        (CgroupKnob::CpusetPartition, "member", "isolated"),
    ];
    for (knob, initial, _) in defaults {
        fs.create_node(
            &format!("/sys/fs/cgroup/lever/camera/{}", knob.file()),
            &format!("{initial}\n"),
        )
        .unwrap();
    }
    let mut originals = Vec::new();
    for (knob, initial, value) in defaults {
        let o = cg.write("lever/camera", knob, value).unwrap();
        assert_eq!(
            o,
            Original::CgroupFile {
                cgroup: "lever/camera".into(),
                knob,
                value: initial.into()
            }
        );
        assert_eq!(cg.read("lever/camera", knob).unwrap(), value);
        originals.push(o);
    }
    cg.enable_controllers("", &["cpu", "cpuset"]).unwrap();
    for o in originals.iter().rev() {
        assert_eq!(restore(&cg, o).unwrap(), Restored::Done);
    }
    for (knob, initial, _) in defaults {
        assert_eq!(cg.read("lever/camera", knob).unwrap(), initial);
    }
    // A removed cgroup is skipped on restore.
    cg.remove("lever/camera").unwrap();
    assert!(!cg.exists("lever/camera"));
    assert!(matches!(
        restore(&cg, &originals[0]).unwrap(),
        Restored::Skipped { .. }
    ));
}

#[test]
fn moves_and_moves_back_and_skips_the_dead() {
    let (_d, fs) = fake();
    let cg = Cgroups::new(fs.clone());
    cg.create("lever/focused").unwrap();
    fs.create_node("/sys/fs/cgroup/lever/focused/cgroup.procs", "")
        .unwrap();
    fs.create_node("/sys/fs/cgroup/lever/focused/cgroup.threads", "")
        .unwrap();
    fs.create_node("/sys/fs/cgroup/user.slice/app.scope/cgroup.threads", "")
        .unwrap();
    let p = cg.move_process(77, "lever/focused").unwrap();
    assert_eq!(
        fs.read("/sys/fs/cgroup/lever/focused/cgroup.procs")
            .unwrap(),
        "77"
    );
    assert_eq!(
        p,
        Original::Membership {
            pid: 77,
            thread: false,
            cgroup: "user.slice/app.scope".into()
        }
    );
    let t = cg.move_thread(78, "lever/focused");
    // Thread 78's own cgroup file is /proc/78/task/78/cgroup; in this tree
    // it is only under /proc/77, so the thread reads as gone.
    assert!(matches!(t, Err(TaskError::Gone { tid: 78 })), "{t:?}");
    assert_eq!(restore(&cg, &p).unwrap(), Restored::Done);
    assert_eq!(
        fs.read("/sys/fs/cgroup/user.slice/app.scope/cgroup.procs")
            .unwrap(),
        "77"
    );
    // The process exits (its /proc entry goes): skipped.
    std::fs::remove_dir_all(fs.resolve("/proc/77").unwrap()).unwrap();
    assert_eq!(
        restore(&cg, &p).unwrap(),
        Restored::Skipped {
            why: "task 77 exited".into()
        }
    );
}

#[test]
fn no_cgroup2_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let cg = Cgroups::new(KernelFs::new(dir.path()));
    let e = cg.check().unwrap_err();
    assert!(
        e.to_string()
            .contains("no cgroup2 hierarchy at /sys/fs/cgroup"),
        "{e}"
    );
}

/// The real cgroup2 mount: a child cgroup of our own, a child process moved
/// in and back, the cgroup removed at the end.
#[test]
fn real_cgroup2_child_group() {
    if !rustix::process::geteuid().is_root() {
        println!("skipped: not root (creating a cgroup needs root)");
        return;
    }
    let cg = Cgroups::discover(KernelFs::system());
    if let Err(e) = cg.check() {
        println!("skipped: {e}");
        return;
    }
    let mut child = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = child.id() as i32;
    let home = cg.cgroup_of(pid, false).unwrap();
    let name = format!("{}/lever-test-{}", home, std::process::id());
    let name = name.trim_start_matches('/').to_string();
    assert!(cg.create(&name).unwrap());
    let moved = cg.move_process(pid, &name);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let moved = moved.unwrap();
        assert_eq!(cg.cgroup_of(pid, false).unwrap(), name);
        // cpu.weight exists only where the cpu controller is enabled for
        // the parent (not on hybrid v1/v2 systems).
        match cg.write(&name, CgroupKnob::Weight, "300") {
            Ok(o) => {
                assert_eq!(cg.read(&name, CgroupKnob::Weight).unwrap(), "300");
                assert_eq!(restore(&cg, &o).unwrap(), Restored::Done);
            }
            Err(TaskError::Kernel(e)) if e.is_missing() => {
                println!("cpu.weight skipped: {e} (cpu controller not enabled for this cgroup2)")
            }
            Err(e) => panic!("{e}"),
        }
        assert_eq!(restore(&cg, &moved).unwrap(), Restored::Done);
        assert_eq!(cg.cgroup_of(pid, false).unwrap(), home);
    }));
    child.kill().unwrap();
    child.wait().unwrap();
    cg.remove(&name).unwrap();
    assert!(!cg.exists(&name));
    result.unwrap();
}

/// A simulated QCS6490: Lever's managed cgroups are created with the files
/// the kernel would give them, written, and restored.
#[test]
fn on_a_simulated_board() {
    let dir = tempfile::tempdir().unwrap();
    lever_sim::create("qcs6490", dir.path()).unwrap();
    let fs = KernelFs::new(dir.path());
    let cg = Cgroups::discover(fs.clone());
    cg.check().unwrap();
    // No live processes in a simulated tree.
    assert!(matches!(
        cg.cgroup_of(1, false),
        Err(TaskError::Gone { tid: 1 })
    ));
    assert_eq!(cg.read("user.slice", CgroupKnob::UclampMax).unwrap(), "max");
    assert!(cg.create("lever/camera").unwrap());
    assert!(cg.exists("lever"));
    cg.enable_controllers("lever", &["cpu", "cpuset"]).unwrap();
    assert_eq!(
        fs.read("/sys/fs/cgroup/lever/cgroup.subtree_control")
            .unwrap(),
        "cpu cpuset"
    );
    assert!(cg.create("lever/video").unwrap());
    let o = cg
        .write("lever/video", CgroupKnob::UclampMin, "25.00")
        .unwrap();
    assert_eq!(
        o,
        Original::CgroupFile {
            cgroup: "lever/video".into(),
            knob: CgroupKnob::UclampMin,
            value: "0.00".into()
        }
    );
    let p = cg
        .write("lever/video", CgroupKnob::CpusetCpus, "4-7")
        .unwrap();
    assert_eq!(restore(&cg, &p).unwrap(), Restored::Done);
    assert_eq!(restore(&cg, &o).unwrap(), Restored::Done);
    assert_eq!(
        cg.read("lever/video", CgroupKnob::UclampMin).unwrap(),
        "0.00"
    );
    assert_eq!(cg.read("lever/video", CgroupKnob::CpusetCpus).unwrap(), "");
    cg.remove("lever/video").unwrap();
    assert!(!cg.exists("lever/video"));
}

/// A board booted by busybox init (the arm64 kernel stage's guest, issue
/// 32): cgroup2 mounted, no controller enabled at the root. Lever's
/// cgroups still get their `cpu.*` and `cpuset.*` files.
#[test]
fn ensure_enables_the_controllers_at_the_root_too() {
    let (_d, fs) = fake();
    let cg = Cgroups::discover(fs.clone());
    cg.ensure("lever/arm64", &["cpu", "cpuset"]).unwrap();
    let root = fs.read("/sys/fs/cgroup/cgroup.subtree_control").unwrap();
    let words: Vec<&str> = root.split_whitespace().collect();
    assert!(
        words.contains(&"cpu") && words.contains(&"cpuset"),
        "{root}"
    );
    assert!(fs.exists("/sys/fs/cgroup/lever/arm64/cpu.weight"));
    assert!(fs.exists("/sys/fs/cgroup/lever/arm64/cpuset.cpus"));
}
