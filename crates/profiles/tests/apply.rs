//! The transaction: a refused write rolls back what came before it, byte
//! for byte; `rt` then rollback leaves a simulated QCS6490 as it was.

mod common;

use lever_kernel::{KernelError, KernelFs};
use lever_profiles::{
    apply, apply_direct, diff, load, off_direct, resolve, rollback, verify, DirectError, From,
    Nodes, Options, State, Write,
};
use lever_testkit::{changed, snapshot, FakeTree};
use std::io;

fn write(node: &str, value: &str) -> Write {
    Write {
        node: node.into(),
        value: value.into(),
        resource: None,
        required: true,
        from: From {
            file: "t.yaml".into(),
            line: 1,
            field: "sysfs".into(),
        },
    }
}

/// The kernel below a fake tree, except that one node refuses every write
/// with EINVAL, as a sysfs store() that rejects the value does.
struct Refusing<'a> {
    fs: &'a KernelFs,
    node: &'a str,
}

impl Nodes for Refusing<'_> {
    fn read(&self, node: &str) -> Result<String, KernelError> {
        self.fs.read(node)
    }

    fn write(&self, node: &str, value: &str) -> Result<(), KernelError> {
        if node == self.node {
            return Err(KernelError::Rejected {
                path: node.into(),
                value: value.into(),
                source: io::Error::from_raw_os_error(22),
            });
        }
        self.fs.write_raw(node, value)
    }
}

fn three_nodes() -> (FakeTree, Vec<Write>) {
    let tree = FakeTree::with(&[
        ("/proc/sys/vm/swappiness", "60\n"),
        ("/proc/sys/kernel/timer_migration", "1\n"),
        ("/sys/devices/system/cpu/cpu1/cpuidle/state0/disable", "0\n"),
    ]);
    let writes = vec![
        write("/proc/sys/vm/swappiness", "100"),
        write("/proc/sys/kernel/timer_migration", "0"),
        write("/sys/devices/system/cpu/cpu1/cpuidle/state0/disable", "1"),
    ];
    (tree, writes)
}

#[test]
fn a_refused_third_write_puts_the_first_two_back_and_names_node_and_errno() {
    let (tree, writes) = three_nodes();
    let before = snapshot(tree.root());
    let refusing = Refusing {
        fs: tree.fs(),
        node: "/sys/devices/system/cpu/cpu1/cpuidle/state0/disable",
    };
    let e = apply(&refusing, &writes).unwrap_err();
    assert_eq!(
        e.node,
        "/sys/devices/system/cpu/cpu1/cpuidle/state0/disable"
    );
    assert_eq!(e.errno, Some(22));
    assert_eq!(e.value, "1");
    assert_eq!(
        e.rolled_back,
        [
            "/proc/sys/kernel/timer_migration",
            "/proc/sys/vm/swappiness"
        ],
        "reverse order"
    );
    assert!(e.failed_restores.is_empty());
    assert_eq!(
        changed(&before, &snapshot(tree.root())),
        Vec::<String>::new()
    );
    assert!(
        e.to_string().contains("2 earlier write(s) rolled back"),
        "{e}"
    );
}

#[test]
fn a_directory_in_the_third_nodes_place_fails_like_the_kernel_and_rolls_back() {
    // Real files, no test double: the third "node" is a directory, which
    // cannot be read or written as a file (EISDIR) — also as root.
    let (tree, writes) = three_nodes();
    let host = tree.host_path("/sys/devices/system/cpu/cpu1/cpuidle/state0/disable");
    std::fs::remove_file(&host).unwrap();
    std::fs::create_dir(&host).unwrap();
    let before = snapshot(tree.root());
    let e = apply(tree.fs(), &writes).unwrap_err();
    assert_eq!(
        e.node,
        "/sys/devices/system/cpu/cpu1/cpuidle/state0/disable"
    );
    assert_eq!(e.errno, Some(21), "EISDIR: {e}");
    assert_eq!(e.rolled_back.len(), 2);
    assert_eq!(tree.read("/proc/sys/vm/swappiness"), "60");
    assert_eq!(
        changed(&before, &snapshot(tree.root())),
        Vec::<String>::new()
    );
}

#[test]
fn a_read_only_third_node_is_refused_with_eacces_when_not_root() {
    use std::os::unix::fs::PermissionsExt;
    let (tree, writes) = three_nodes();
    let host = tree.host_path("/sys/devices/system/cpu/cpu1/cpuidle/state0/disable");
    std::fs::set_permissions(&host, std::fs::Permissions::from_mode(0o444)).unwrap();
    if std::fs::OpenOptions::new().write(true).open(&host).is_ok() {
        eprintln!("skipped: running as root, file modes do not refuse writes (the EISDIR and EINVAL tests cover the rollback)");
        return;
    }
    let before = snapshot(tree.root());
    let e = apply(tree.fs(), &writes).unwrap_err();
    assert_eq!(e.errno, Some(13));
    assert_eq!(
        changed(&before, &snapshot(tree.root())),
        Vec::<String>::new()
    );
}

#[test]
fn an_optional_write_the_kernel_refuses_is_reported_not_rolled_back() {
    let (tree, mut writes) = three_nodes();
    writes[2].required = false;
    let refusing = Refusing {
        fs: tree.fs(),
        node: "/sys/devices/system/cpu/cpu1/cpuidle/state0/disable",
    };
    let applied = apply(&refusing, &writes).unwrap();
    assert_eq!(applied.entries.len(), 2);
    assert_eq!(applied.refused.len(), 1);
    assert_eq!(applied.refused[0].errno, Some(22));
    assert_eq!(tree.read("/proc/sys/vm/swappiness"), "100");
}

#[test]
fn unchanged_nodes_are_not_written_and_rollback_restores_exactly() {
    let (tree, mut writes) = three_nodes();
    writes[0].value = "60".into();
    let before = snapshot(tree.root());
    let applied = apply(tree.fs(), &writes).unwrap();
    assert!(!applied.entries[0].changed);
    assert_eq!(applied.entries[1].original, "1");
    assert_eq!(applied.entries[1].applied, "0");
    assert_eq!(changed(&before, &snapshot(tree.root())).len(), 2);
    let restored = rollback(tree.fs(), &applied.entries).unwrap();
    assert_eq!(restored.len(), 2);
    assert_eq!(
        changed(&before, &snapshot(tree.root())),
        Vec::<String>::new()
    );
}

#[test]
fn rt_then_rollback_leaves_a_simulated_qcs6490_byte_identical() {
    let b = common::qcs6490();
    let before = snapshot(b.root());
    let chain = load("rt").unwrap();
    let opts = Options {
        rt_cpus: Some(vec![1, 2, 3]),
    };
    let resolved = resolve(&chain, &b.target, &b.fs, &opts).unwrap();
    let d = diff(&b.fs, &resolved);
    // 3 governors, timer_migration, sched_rt_runtime_us, 9 cpuidle
    // states, the global, blkcg_punt_bio and writeback workqueue masks,
    // the simulator's 6 IRQs.
    assert_eq!(d.changes.len(), 23, "{:#?}", d.changes);

    let applied = apply(&b.fs, &resolved.writes).unwrap();
    let during = changed(&before, &snapshot(b.root()));
    assert_eq!(during.len(), d.changes.len(), "diff predicted every change");
    assert_eq!(
        b.fs.read("/sys/devices/system/cpu/cpu2/cpuidle/state1/disable")
            .unwrap(),
        "1"
    );
    assert_eq!(b.fs.read("/proc/irq/9/smp_affinity_list").unwrap(), "0,4-7");
    assert!(diff(&b.fs, &resolved).changes.is_empty());
    assert!(verify(&b.fs, &lever_profiles::expected_of(&resolved))
        .drifted
        .is_empty());

    rollback(&b.fs, &applied.entries).unwrap();
    assert_eq!(changed(&before, &snapshot(b.root())), Vec::<String>::new());
}

#[test]
fn direct_apply_keeps_a_state_file_that_off_and_verify_use() {
    let b = common::qcs6490();
    let before = snapshot(b.root());
    let state_dir = tempfile::tempdir().unwrap();
    // The state directory is created on first use (/run/lever after boot).
    let state_path = state_dir.path().join("run/lever/profile.json");
    let chain = load("performance").unwrap();
    let resolved = resolve(&chain, &b.target, &b.fs, &Options::default()).unwrap();

    let state = apply_direct(&b.fs, &resolved, &state_path).unwrap();
    assert!(!state.pending);
    assert_eq!(State::load(&state_path).unwrap(), Some(state.clone()));
    let again = apply_direct(&b.fs, &resolved, &state_path).unwrap_err();
    assert!(
        matches!(again, DirectError::AlreadyApplied { .. }),
        "{again}"
    );

    // Someone changes a node behind Lever's back: verify names it.
    let gov = "/sys/devices/system/cpu/cpufreq/policy4/scaling_governor";
    b.fs.write_raw(gov, "schedutil").unwrap();
    let v = verify(&b.fs, &state.expected());
    assert_eq!(v.drifted.len(), 1);
    assert_eq!(v.drifted[0].node, gov);
    assert_eq!(v.drifted[0].expected, "performance");
    assert_eq!(v.drifted[0].now.as_deref(), Some("schedutil"));
    b.fs.write_raw(gov, "performance").unwrap();

    let off = off_direct(&b.fs, &state_path).unwrap();
    assert_eq!(off.profile, "performance");
    assert!(!state_path.exists());
    assert_eq!(changed(&before, &snapshot(b.root())), Vec::<String>::new());
    assert!(matches!(
        off_direct(&b.fs, &state_path),
        Err(DirectError::NotApplied { .. })
    ));
}

#[test]
fn off_undoes_an_apply_that_crashed_after_recording_its_originals() {
    let b = common::qcs6490();
    let before = snapshot(b.root());
    let state_dir = tempfile::tempdir().unwrap();
    let state_path = state_dir.path().join("profile.json");
    let chain = load("memory-low-latency").unwrap();
    let resolved = resolve(&chain, &b.target, &b.fs, &Options::default()).unwrap();
    // What apply_direct records before its first write, then a crash after
    // two of the writes.
    let entries = resolved
        .writes
        .iter()
        .map(|w| lever_profiles::Entry {
            node: w.node.clone(),
            original: b.fs.read(&w.node).unwrap(),
            applied: w.value.clone(),
            changed: true,
        })
        .collect();
    let pending = State {
        format: lever_profiles::FORMAT.into(),
        profile: resolved.profile.clone(),
        target: resolved.target.clone(),
        rt_cpus: None,
        pending: true,
        entries,
        refused: Vec::new(),
    };
    pending.save(&state_path).unwrap();
    let differing = resolved
        .writes
        .iter()
        .filter(|w| b.fs.read(&w.node).unwrap() != w.value);
    for w in differing.take(2) {
        b.fs.write_raw(&w.node, &w.value).unwrap();
    }
    assert_eq!(changed(&before, &snapshot(b.root())).len(), 2);
    off_direct(&b.fs, &state_path).unwrap();
    assert_eq!(changed(&before, &snapshot(b.root())), Vec::<String>::new());
}

#[test]
fn a_failed_direct_apply_leaves_no_state_and_no_change() {
    let (tree, writes) = three_nodes();
    let before = snapshot(tree.root());
    let resolved = lever_profiles::Resolved {
        profile: "t".into(),
        chain: vec!["t".into()],
        target: "fake".into(),
        rt_cpus: None,
        writes,
        cmdline: Vec::new(),
        skipped: Vec::new(),
    };
    let refusing = Refusing {
        fs: tree.fs(),
        node: "/sys/devices/system/cpu/cpu1/cpuidle/state0/disable",
    };
    let dir = tempfile::tempdir().unwrap();
    let state_path = dir.path().join("s.json");
    let e = apply_direct(&refusing, &resolved, &state_path).unwrap_err();
    assert!(
        matches!(e, DirectError::Apply(ref a) if a.errno == Some(22)),
        "{e}"
    );
    assert!(!state_path.exists());
    assert_eq!(
        changed(&before, &snapshot(tree.root())),
        Vec::<String>::new()
    );
    std::fs::write(&state_path, "{}").unwrap();
    assert!(State::load(&state_path)
        .unwrap_err()
        .to_string()
        .contains("not a Lever profile state file"));
}
