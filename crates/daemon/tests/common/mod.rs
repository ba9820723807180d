//! The daemon core over a fake tree, shared by the core and server tests.
#![allow(dead_code)] // each test file uses a subset

use lever_daemon::core::{Client, Core, Limits};
use lever_daemon::identity::Identity;
use lever_daemon::journal::Journal;
use lever_daemon::log::Logger;
use lever_testkit::FakeTree;

/// A small target: a third-party floor, a system-only knob and an enum.
pub const TARGET: &str = "\
target: tiny
resources:
  - name: sched_util_clamp_min
    opcode: 0x44000000
    node: /proc/sys/kernel/sched_util_clamp_min
    unit: level
    low: 0
    high: 1024
    aggregation: max
    permission: third-party
  - name: sched_rt_runtime_us
    opcode: 0x48C04000
    node: /proc/sys/kernel/sched_rt_runtime_us
    unit: us
    low: -1
    high: 1000000
    aggregation: newest
    permission: system
  - name: cpu_governor
    opcode: 0x48000000
    node: /sys/devices/system/cpu/cpufreq/policy0/scaling_governor
    kind: enum
    values: [powersave, schedutil, performance]
    aggregation: max
    permission: third-party
";

pub const UCLAMP: &str = "/proc/sys/kernel/sched_util_clamp_min";
pub const RT: &str = "/proc/sys/kernel/sched_rt_runtime_us";
pub const GOVERNOR: &str = "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor";

/// A core over the tiny target, its tree and its state directory.
pub struct Fixture {
    pub tree: FakeTree,
    pub state: tempfile::TempDir,
    pub core: Core,
}

/// A Silver cluster min/max frequency pair with the QCS6490 table (part of
/// it), for clamping, snapping and a ceiling that caps a floor.
pub const FREQ_TARGET: &str = "\
target: freq
resources:
  - name: cpu_min_freq_silver
    opcode: 0x44008100
    node: /sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq
    kind: pair-min
    pair: cpu_max_freq_silver
    unit: kHz
    low: 300000
    high: 1958400
    steps: [300000, 806400, 1152000, 1516800, 1958400]
    aggregation: max
    permission: third-party
  - name: cpu_max_freq_silver
    opcode: 0x4400C100
    node: /sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq
    kind: pair-max
    pair: cpu_min_freq_silver
    unit: kHz
    low: 300000
    high: 1958400
    steps: [300000, 806400, 1152000, 1516800, 1958400]
    aggregation: min
    permission: third-party
";

pub const SILVER_MIN: &str = "/sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq";
pub const SILVER_MAX: &str = "/sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq";

/// A fresh tree with the nodes' boot values and a core over it.
pub fn fixture(limits: Limits) -> Fixture {
    // What the nodes hold before Lever runs (sched_rt_runtime_us is the
    // kernel default).
    let tree = FakeTree::with(&[(UCLAMP, "0\n"), (RT, "950000\n"), (GOVERNOR, "schedutil\n")]);
    fixture_of(tree, TARGET, limits)
}

/// The frequency pair at its boot values (300000..1958400).
pub fn freq_fixture() -> Fixture {
    let tree = FakeTree::with(&[(SILVER_MIN, "300000\n"), (SILVER_MAX, "1958400\n")]);
    fixture_of(tree, FREQ_TARGET, Limits::default())
}

pub fn fixture_of(tree: FakeTree, yaml: &str, limits: Limits) -> Fixture {
    let target = lever_targets::parse("tiny.yaml", yaml)
        .unwrap()
        .bind(tree.fs())
        .unwrap();
    let state = tempfile::tempdir().unwrap();
    let (journal, _) = Journal::recover_and_open(state.path(), tree.fs()).unwrap();
    let core = Core::new(tree.fs().clone(), target, journal, limits, Logger::quiet()).unwrap();
    Fixture { tree, state, core }
}

impl Fixture {
    /// A node's value, without its newline.
    pub fn node(&self, path: &str) -> String {
        self.tree.read(path).trim().to_string()
    }
}

/// A client on connection `conn`, running as `uid` (pid and executable
/// derived from `conn`).
pub fn client(conn: u64, uid: u32, system: bool) -> Client {
    Client::new(
        conn,
        Identity {
            pid: 1000 + conn as i32,
            uid,
            gid: uid,
            exe: Some(format!("/usr/bin/app{conn}")),
            system,
        },
    )
}
