//! Profiles applied by a real `lever daemon` on a simulated qcs6490: apply
//! and off leave every byte as it was (also across `kill -9`), a refused
//! write rolls the transaction back, a boost below a profile never lowers
//! its floors while one above wins until it ends, holds
//! end with their connection, power-saver beats performance, and
//! third-party clients are refused.

mod common;

use common::daemon::{is_root, state_dir, wait_until, Daemon};
use common::{changed, snapshot, LEVER};
use lever_client::{Client, Handle, Lease, Priority, Profile, Signal, SignalLease};
use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

const GOLD_GOV: &str = "sys/devices/system/cpu/cpufreq/policy4/scaling_governor";
const GOLD_MIN: &str = "sys/devices/system/cpu/cpufreq/policy4/scaling_min_freq";
const SILVER_MIN: &str = "sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq";
const GPU_MIN: &str = "sys/class/kgsl/kgsl-3d0/devfreq/min_freq";
const UCLAMP_MIN: &str = "proc/sys/kernel/sched_util_clamp_min";
const TIMER_MIGRATION: &str = "proc/sys/kernel/timer_migration";
const IDLE7: &str = "sys/devices/system/cpu/cpu7/cpuidle/state0/disable";
const IRQ27: &str = "proc/irq/27/smp_affinity_list";

fn tree(d: &Daemon) -> BTreeMap<std::path::PathBuf, Vec<u8>> {
    snapshot(&d.dir.join("sim"))
}

fn lever(d: &Daemon, args: &[&str]) -> std::process::Output {
    Command::new(LEVER)
        .args(args)
        .env("LEVER_SOCKET", &d.socket)
        .output()
        .unwrap()
}

fn ok(d: &Daemon, args: &[&str]) -> String {
    let out = lever(d, args);
    common::assert_success(&out);
    String::from_utf8(out.stdout).unwrap()
}

fn status_profile(d: &Daemon) -> serde_json::Value {
    let doc: serde_json::Value = serde_json::from_str(&ok(d, &["status", "--json"])).unwrap();
    doc["profile"].clone()
}

fn profile(name: &str, hold: bool) -> Profile {
    Profile {
        name: name.into(),
        hold,
        rt_cpus: None,
    }
}

/// A perflock on the gold cluster's floor at the lowest wire class (the
/// opcode is the target's: ask the daemon).
fn gold_floor(c: &mut Client, khz: i64) -> Handle {
    let op = c.explain("cpu_min_freq.gold").unwrap().resource.opcode;
    let op = u32::from_str_radix(op.trim_start_matches("0x"), 16).unwrap();
    c.acquire(
        None,
        Lease::UntilReleased,
        Priority::ThirdPartyLow,
        &[(op, khz)],
    )
    .unwrap()
}

/// `rt` moves these nodes on qcs6490 with RT CPUs 6-7.
fn assert_rt_applied(d: &Daemon) {
    assert_eq!(d.node(GOLD_GOV), "performance", "{}", d.log());
    assert_eq!(d.node(TIMER_MIGRATION), "0");
    assert_eq!(d.node(IDLE7), "1");
    assert_eq!(d.node(IRQ27), "0-5");
}

#[test]
fn apply_rt_then_off_leaves_every_file_of_the_board_byte_identical() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let before = tree(&d);
    // Mistakes are refused before anything is written.
    let out = lever(&d, &["profile", "apply", "no-such-profile"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-profile"));
    let out = lever(&d, &["profile", "apply", "rt", "--rt-cpus", "9"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not online"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(changed(&before, &tree(&d)), Vec::<String>::new());
    let out = ok(&d, &["profile", "apply", "rt", "--rt-cpus", "6-7"]);
    assert!(out.contains("profile rt applied by the daemon"), "{out}");
    assert_rt_applied(&d);
    assert_eq!(
        status_profile(&d),
        serde_json::json!({"base": "rt", "effective": "rt", "holds": []})
    );
    let text = ok(&d, &["status"]);
    assert!(text.contains("profile: rt (base rt)"), "{text}");
    // EXPLAIN names the profile behind a value it holds.
    let explain = ok(&d, &["explain", "cpu_governor.gold"]);
    assert!(explain.contains("profile rt"), "{explain}");
    assert!(dir.path().join("profile").exists());

    let out = ok(&d, &["profile", "off", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["action"], "off");
    assert_eq!(changed(&before, &tree(&d)), Vec::<String>::new());
    assert_eq!(status_profile(&d), serde_json::Value::Null);
    assert!(!dir.path().join("profile").exists());
    // A second off has nothing to remove.
    let out = lever(&d, &["profile", "off"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no base profile is applied"));
}

#[test]
fn kill_9_after_apply_then_restart_keeps_the_base_profile_and_off_restores_every_byte() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let before = tree(&d);
    let irq_before = d.node(IRQ27);
    ok(&d, &["profile", "apply", "rt", "--rt-cpus", "6-7"]);
    assert_rt_applied(&d);
    // The IRQ affinity is no target resource: the daemon wrote it itself,
    // its original recorded in the journal first.
    let journal = std::fs::read_to_string(dir.path().join("originals.journal")).unwrap();
    assert!(
        journal.contains(&format!("set /{IRQ27} {irq_before}\n")),
        "{journal}"
    );
    d.signal(9);
    let _ = d.wait();
    // Restart without off: the journal puts every original back, then the
    // base profile kept in the state directory is applied again.
    let d = Daemon::start(dir.path(), &[]);
    assert!(
        d.log().contains("base profile rt re-applied"),
        "{}",
        d.log()
    );
    assert_rt_applied(&d);
    assert_eq!(status_profile(&d)["base"], "rt");
    // Killed again, restarted, and off: byte-identical to before.
    d.signal(9);
    let _ = d.wait();
    let d = Daemon::start(dir.path(), &[]);
    ok(&d, &["profile", "off"]);
    assert_eq!(changed(&before, &tree(&d)), Vec::<String>::new());
    // A clean stop with a base profile puts everything back too (and the
    // next start applies the profile again).
    ok(&d, &["profile", "apply", "rt", "--rt-cpus", "6-7"]);
    d.signal(15);
    assert!(d.wait().success());
    let sim = dir.path().join("sim");
    assert_eq!(changed(&before, &snapshot(&sim)), Vec::<String>::new());
    let d = Daemon::start(dir.path(), &[]);
    assert_rt_applied(&d);
    ok(&d, &["profile", "off"]);
    assert_eq!(changed(&before, &tree(&d)), Vec::<String>::new());
}

#[test]
fn a_refused_third_write_rolls_back_the_first_two_and_names_node_and_errno() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let sim = dir.path().join("sim");
    // The third node is a directory: reading or writing it fails with
    // EISDIR, as a refusing kernel node would (also for root).
    let third = "sys/devices/virtual/workqueue/writeback/cpumask";
    std::fs::remove_file(sim.join(third)).unwrap();
    std::fs::create_dir(sim.join(third)).unwrap();
    let file = dir.path().join("three.yaml");
    std::fs::write(
        &file,
        "profile: three\nsysctl:\n  kernel.sched_schedstats: 1\nsysfs:\n  /sys/devices/virtual/workqueue/cpumask: 3f\n  /sys/devices/virtual/workqueue/writeback/cpumask: 3f\n",
    )
    .unwrap();
    // Another client's perflock, which must stay as it is.
    let mut c = d.client();
    let lock = gold_floor(&mut c, 1516800);
    assert_eq!(d.node(GOLD_MIN), "1516800");
    let before = tree(&d);

    let out = lever(&d, &["profile", "apply", file.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/sys/devices/virtual/workqueue/writeback/cpumask")
            && err.contains("errno 21"),
        "{err}"
    );
    assert_eq!(changed(&before, &tree(&d)), Vec::<String>::new());
    assert_eq!(d.node("proc/sys/kernel/sched_schedstats"), "0");
    assert_eq!(d.node("sys/devices/virtual/workqueue/cpumask"), "ff");
    assert_eq!(status_profile(&d), serde_json::Value::Null);
    // The perflock is untouched and still releasable.
    assert_eq!(d.node(GOLD_MIN), "1516800");
    let st = c.status().unwrap();
    assert_eq!(st.requests.len(), 1);
    c.release(lock).unwrap();
    // The daemon's log reaches us through a pipe and a reader thread.
    let logged = common::daemon::wait_until(std::time::Duration::from_secs(5), || {
        d.log().contains("profile three refused")
    });
    assert!(logged.is_some(), "{}", d.log());
}

/// Issue 27 item 1: with `performance` in effect, a game's use case, a
/// lower perflock (`acquire cpu_min_freq.silver=300000`) and a lower
/// uclamp floor leave every floor where the profile put it: a profile's
/// values are votes aggregated by each resource's own rule.
#[test]
fn a_boost_below_the_performance_profile_never_lowers_its_floors() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let floors = [SILVER_MIN, GOLD_MIN, GPU_MIN, UCLAMP_MIN];
    let originals: Vec<String> = floors.iter().map(|n| d.node(n)).collect();
    let mut admin = d.client();
    assert_eq!(admin.profile(profile("performance", false)).unwrap(), None);
    let held: Vec<String> = floors.iter().map(|n| d.node(n)).collect();
    assert_eq!(
        held,
        ["1958400", "2400000", "812000000", "1024"],
        "{}",
        d.log()
    );
    // GameMode's use case (as `--dbus` triggers it for a registered game)
    // at the lowest wire class and at system-high: floors 1152000 /
    // 1516800 / 450 MHz, all below the profile's.
    let mut game = d.client();
    for priority in [Priority::ThirdPartyLow, Priority::SystemHigh] {
        let h = game
            .signal(Signal {
                usecase: "game".into(),
                lease: SignalLease::Given(Lease::UntilReleased),
                priority,
                detach: false,
                report: false,
                fps: None,
                width: None,
                height: None,
            })
            .unwrap();
        let now: Vec<String> = floors.iter().map(|n| d.node(n)).collect();
        assert_eq!(now, held, "{priority:?}: the game lowered a floor");
        game.release(h).unwrap();
    }
    let out = lever(
        &d,
        &[
            "acquire",
            "-d",
            "60s",
            "--detach",
            "cpu_min_freq.silver=300000",
        ],
    );
    common::assert_success(&out);
    assert_eq!(d.node(SILVER_MIN), "1958400", "{}", d.log());
    let mut c = d.client();
    let lock = gold_floor(&mut c, 1228800);
    assert_eq!(d.node(GOLD_MIN), "2400000");
    // EXPLAIN: the profile's vote first (strongest), the perflock below it.
    let doc = c.explain("cpu_min_freq.gold").unwrap();
    assert_eq!(doc.votes.len(), 2);
    assert_eq!(doc.votes[0].usecase.as_deref(), Some("profile:performance"));
    assert_eq!(doc.votes[1].handle, lever_client::Holder::Handle(lock));
    c.release(lock).unwrap();
    admin.profile_off().unwrap();
    // Without the profile the detached perflock holds its own value.
    assert_eq!(d.node(SILVER_MIN), "300000");
    let now: Vec<String> = floors.iter().map(|n| d.node(n)).collect();
    assert_eq!(now[1..], originals[1..]);
}

#[test]
fn a_perflock_above_a_profile_wins_and_the_node_returns_to_the_profiles_value() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let original = d.node(GOLD_MIN);
    let mut admin = d.client();
    // balanced: every cluster's full range, the floor at its lowest step.
    assert_eq!(admin.profile(profile("balanced", false)).unwrap(), None);
    let profile_value = d.node(GOLD_MIN);
    let mut c = d.client();
    let lock = gold_floor(&mut c, 1228800);
    assert_eq!(d.node(GOLD_MIN), "1228800");
    let doc = c.explain("cpu_min_freq.gold").unwrap();
    assert_eq!(doc.votes.len(), 2);
    assert_eq!(doc.votes[1].usecase.as_deref(), Some("profile:balanced"));
    c.release(lock).unwrap();
    assert_eq!(d.node(GOLD_MIN), profile_value);
    admin.profile_off().unwrap();
    assert_eq!(d.node(GOLD_MIN), original);
}

#[test]
fn holds_end_with_their_connection_and_power_saver_beats_performance() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let original = d.node(GOLD_GOV);
    let mut admin = d.client();
    admin.profile(profile("performance", false)).unwrap();
    assert_eq!(d.node(GOLD_GOV), "performance");
    // A hold beats the base while its connection lives.
    {
        let mut h = d.client();
        let handle = h.profile(profile("powersave", true)).unwrap();
        assert!(handle.is_some());
        assert_eq!(d.node(GOLD_GOV), "powersave");
        let p = status_profile(&d);
        assert_eq!(p["effective"], "powersave", "{p}");
        assert_eq!(p["holds"][0]["name"], "powersave", "{p}");
    }
    let back = wait_until(Duration::from_secs(5), || d.node(GOLD_GOV) == "performance");
    assert!(back.is_some(), "{}", d.log());
    assert_eq!(status_profile(&d)["holds"], serde_json::json!([]));
    // power-saver (older) beats performance (newer); releasing it lets
    // the performance hold win; releasing that leaves the base.
    admin.profile_off().unwrap();
    assert_eq!(d.node(GOLD_GOV), original);
    let mut a = d.client();
    let mut b = d.client();
    let saver = a.profile(profile("powersave", true)).unwrap().unwrap();
    let perf = b.profile(profile("performance", true)).unwrap().unwrap();
    assert_eq!(d.node(GOLD_GOV), "powersave");
    assert_eq!(status_profile(&d)["effective"], "powersave");
    a.release(saver).unwrap();
    assert_eq!(d.node(GOLD_GOV), "performance");
    // Another connection cannot end someone else's hold (root can, as it
    // can any request).
    if !is_root() {
        assert!(a.release(perf).is_err());
    }
    b.release(perf).unwrap();
    assert_eq!(d.node(GOLD_GOV), original);
    // `lever profile hold NAME -- CMD` holds while CMD runs and exits
    // with its status.
    let out = lever(
        &d,
        &[
            "profile",
            "hold",
            "powersave",
            "--",
            "sh",
            "-c",
            &format!(
                "cat {}; exit 3",
                dir.path().join("sim").join(GOLD_GOV).display()
            ),
        ],
    );
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("holding profile powersave") && text.contains("\npowersave\n"),
        "{text}"
    );
    assert_eq!(d.node(GOLD_GOV), original);
}

#[test]
fn third_party_clients_may_hold_but_not_change_the_base_profile() {
    if !is_root() {
        eprintln!("skipped: needs root to run a client as `nobody`");
        return;
    }
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &["--system-group", "lever-test-no-such-group"]);
    let before = tree(&d);
    // The base profile is the board's: system clients only.
    for args in [
        &["profile", "apply", "performance"][..],
        &["profile", "off"][..],
    ] {
        let out = d.as_nobody(args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("needs a system client") && err.contains("uid 65534"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(changed(&before, &tree(&d)), Vec::<String>::new());
    // A hold is any client's (as ppd's HoldProfile is), counted against
    // its caps, and ends with its command: everything is put back.
    let out = d.as_nobody(&["profile", "hold", "performance", "--", "true"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let back = wait_until(Duration::from_secs(10), || {
        changed(&before, &tree(&d)).is_empty()
    });
    assert!(back.is_some(), "{:?}", changed(&before, &tree(&d)));
}

#[test]
fn without_a_daemon_apply_says_how_to_start_one() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("none.sock");
    let out = Command::new(LEVER)
        .args(["profile", "apply", "performance", "--socket"])
        .arg(&sock)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("no daemon at {}", sock.display()))
            && err.contains("start `lever daemon` or use --direct"),
        "{err}"
    );
}
