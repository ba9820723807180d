//! `apply_plan`: every original journalled before its change; restoring
//! the journal in reverse puts a simulated board's cgroup tree back byte
//! for byte, whatever the plans (property test); on the real machine, a
//! child process's threads and cgroup membership set and restored.

use lever_kernel::KernelFs;
use lever_tasks::{
    apply_plan, restore, CgroupKnob, CgroupSetting, Cgroups, Original, Policy, Restored, Sched,
    TaskPlan, ThreadRule, ThreadSetting,
};
use proptest::prelude::*;

const KNOBS: [(CgroupKnob, &[&str]); 5] = [
    (CgroupKnob::UclampMin, &["10.00", "50.00", "max"]),
    (CgroupKnob::UclampMax, &["80.00", "max"]),
    (CgroupKnob::Weight, &["1", "400", "10000"]),
    (CgroupKnob::Max, &["50000 100000", "max 100000"]),
    (CgroupKnob::CpusetCpus, &["4-7", "0-3"]),
];

fn plan_strategy() -> impl Strategy<Value = TaskPlan> {
    let setting = (
        0..KNOBS.len(),
        0..3usize,
        prop::sample::select(vec!["lever/a", "lever/b", "user.slice"]),
    )
        .prop_map(|(k, v, cg)| {
            let (knob, values) = KNOBS[k];
            CgroupSetting {
                cgroup: cg.to_string(),
                knob,
                value: values[v % values.len()].to_string(),
            }
        });
    (
        prop::collection::vec(setting, 0..6),
        prop::option::of(prop::sample::select(vec!["lever/focused", "user.slice"])),
    )
        .prop_map(|(cgroups, move_to)| TaskPlan {
            cgroups,
            move_to: move_to.map(String::from),
            threads: Vec::new(),
        })
}

/// The cgroup part of a simulated QCS6490 (its `/sys/fs/cgroup` and
/// `/proc/mounts`), generated once and copied per case: the whole board is
/// too slow to create and snapshot dozens of times.
fn cgroup_board() -> tempfile::TempDir {
    static BOARD: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let board = BOARD.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        lever_sim::create("qcs6490", dir.path()).unwrap();
        dir
    });
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &board.path().join("sys/fs/cgroup"),
        &dir.path().join("sys/fs/cgroup"),
    );
    std::fs::create_dir_all(dir.path().join("proc")).unwrap();
    std::fs::copy(
        board.path().join("proc/mounts"),
        dir.path().join("proc/mounts"),
    )
    .unwrap();
    dir
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn any_plans_restore_the_tree_exactly(plans in prop::collection::vec(plan_strategy(), 1..5)) {
        let dir = cgroup_board();
        let fs = KernelFs::new(dir.path());
        // A process (no threads listed) in system.slice.
        fs.create_node("/proc/4242/cgroup", "0::/system.slice\n").unwrap();
        fs.write_raw("/sys/fs/cgroup/system.slice/cgroup.procs", "4242\n").unwrap();
        let cg = Cgroups::discover(fs.clone());
        // Lever's cgroups exist before the snapshot, as after a first use.
        for c in ["lever/a", "lever/b", "lever/focused"] {
            cg.ensure(c, &["cpu", "cpuset"]).unwrap();
        }
        let before = lever_testkit::snapshot(dir.path());
        let mut journal: Vec<String> = Vec::new();
        for plan in &plans {
            let applied = apply_plan(&cg, 4242, plan, |o| {
                journal.push(serde_json::to_string(o).unwrap());
                Ok::<(), ()>(())
            }).unwrap();
            prop_assert!(applied.failures.is_empty(), "{:?}", applied.failures);
            prop_assert_eq!(applied.originals.len(), plan.cgroups.len() + usize::from(plan.move_to.is_some()));
        }
        // The journal is all a restarted daemon has.
        for line in journal.iter().rev() {
            let o: Original = serde_json::from_str(line).unwrap();
            prop_assert_eq!(restore(&cg, &o).unwrap(), Restored::Done);
        }
        let after = lever_testkit::snapshot(dir.path());
        let diff: Vec<String> = lever_testkit::changed(&before, &after);
        prop_assert!(diff.is_empty(), "{:?}", diff);
    }
}

#[test]
fn a_real_child_with_thread_rules_and_a_cgroup() {
    let fs = KernelFs::system();
    let cg = Cgroups::discover(fs.clone());
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let home = cg.cgroup_of(pid, false);
    let root_ok = rustix::process::geteuid().is_root() && cg.check().is_ok() && home.is_ok();
    let test_cg = home
        .as_ref()
        .map(|h| {
            format!("{}/lever-plan-{}", h, std::process::id())
                .trim_start_matches('/')
                .to_string()
        })
        .unwrap_or_default();
    let plan = TaskPlan {
        cgroups: Vec::new(),
        move_to: root_ok.then(|| test_cg.clone()),
        threads: vec![ThreadRule {
            comm: Some("sleep".into()),
            settings: vec![
                ThreadSetting::Affinity { cpus: vec![0] },
                ThreadSetting::Sched(Sched {
                    policy: Policy::Batch,
                    priority: 0,
                }),
            ],
            cgroup: None,
        }],
    };
    if !root_ok {
        println!("cgroup move skipped: not root or no cgroup2 hierarchy");
    }
    let before_cpus = lever_tasks::affinity(pid).unwrap();
    let mut journal = Vec::new();
    let applied = apply_plan(&cg, pid, &plan, |o| {
        journal.push(o.clone());
        Ok::<(), ()>(())
    })
    .unwrap();
    assert!(applied.failures.is_empty(), "{:?}", applied.failures);
    assert_eq!(journal, applied.originals);
    assert_eq!(lever_tasks::affinity(pid).unwrap(), vec![0]);
    assert_eq!(lever_tasks::sched(pid).unwrap().policy, Policy::Batch);
    if root_ok {
        assert_eq!(cg.cgroup_of(pid, false).unwrap(), test_cg);
    }
    for o in journal.iter().rev() {
        assert_eq!(restore(&cg, o).unwrap(), Restored::Done);
    }
    assert_eq!(lever_tasks::affinity(pid).unwrap(), before_cpus);
    assert_eq!(lever_tasks::sched(pid).unwrap().policy, Policy::Other);
    if root_ok {
        assert_eq!(cg.cgroup_of(pid, false).unwrap(), *home.as_ref().unwrap());
        // Lever created it (Original::Created): restoring removed it.
        assert!(!cg.exists(&test_cg), "{test_cg} is left behind");
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn restore_order_puts_settings_back_newest_first_then_created_cgroups_deepest_first() {
    let created = |c: &str| Original::Created { cgroup: c.into() };
    let moved = |p: i32| Original::Membership {
        pid: p,
        thread: false,
        cgroup: "user.slice".into(),
    };
    // As after two hand-overs: the parent came before its child.
    let list = vec![
        created("lever/focused"),
        created("lever"),
        moved(1),
        created("lever/camera"),
        moved(2),
    ];
    assert_eq!(lever_tasks::restore_order(&list), vec![4, 2, 3, 0, 1]);
}
