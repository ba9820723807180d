//! `lever daemon --dbus-address` on a private system-like `dbus-daemon`
//! (with packaging/dbus/lever-dbus.conf), driven by the desktop's own
//! tools: `powerprofilesctl set` / `launch` and a GameMode `RegisterGame`
//! by `gdbus` for a child process that then exits. Each changes a
//! simulated qcs6490's nodes and puts them back. Where no bus can be
//! started or a tool is missing, the test says why it skips (under CI=true
//! it fails instead: .ci/run installs them).

mod common;

use common::daemon::{state_dir, wait_until, Daemon};
use lever_dbus::testbus::PrivateBus;
use std::process::{Command, Output};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(15);
const SILVER_GOV: &str = "sys/devices/system/cpu/cpufreq/policy0/scaling_governor";
const SILVER_MIN: &str = "sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq";
const GOLD_MIN: &str = "sys/devices/system/cpu/cpufreq/policy4/scaling_min_freq";
const GPU_MIN: &str = "sys/class/kgsl/kgsl-3d0/devfreq/min_freq";

struct Setup {
    bus: PrivateBus,
    daemon: Daemon,
    _dir: tempfile::TempDir,
}

/// Skip (or fail under CI) without `tool`.
fn have(tool: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found {
        assert!(std::env::var_os("CI").is_none(), "CI must have {tool}");
        eprintln!("skipping: no {tool} (Debian's dbus / power-profiles-daemon / libglib2.0-bin)");
    }
    found
}

/// A private bus and `lever daemon --sim qcs6490 --dbus-address` on it,
/// once the daemon owns ppd's legacy name (what powerprofilesctl calls).
fn setup() -> Option<Setup> {
    if !have("gdbus") {
        return None;
    }
    let dir = state_dir();
    let bus = PrivateBus::start_or_skip(dir.path())?;
    let daemon = Daemon::start(dir.path(), &["--dbus-address", bus.address()]);
    let s = Setup {
        bus,
        daemon,
        _dir: dir,
    };
    let up = wait_until(WAIT, || {
        s.gdbus(&[
            "--dest",
            "com.feralinteractive.GameMode",
            "--object-path",
            "/com/feralinteractive/GameMode",
            "--method",
            "org.freedesktop.DBus.Properties.Get",
            "com.feralinteractive.GameMode",
            "ClientCount",
        ])
        .status
        .success()
    });
    assert!(
        up.is_some(),
        "the D-Bus service did not come up:\n{}",
        s.daemon.log()
    );
    Some(s)
}

impl Setup {
    fn gdbus(&self, args: &[&str]) -> Output {
        Command::new("gdbus")
            .args(["call", "--address", self.bus.address()])
            .args(args)
            .output()
            .unwrap()
    }

    fn ppctl(&self) -> Command {
        let mut c = Command::new("powerprofilesctl");
        c.env("DBUS_SYSTEM_BUS_ADDRESS", self.bus.address());
        c
    }

    fn nodes(&self, rels: &[&str]) -> Vec<String> {
        rels.iter().map(|r| self.daemon.node(r)).collect()
    }

    /// Wait until `rels` read `want`; the daemon's log on failure.
    fn wait_nodes(&self, rels: &[&str], want: &[String], what: &str) {
        let ok = wait_until(WAIT, || self.nodes(rels) == want);
        assert!(
            ok.is_some(),
            "{what}: {:?} != {want:?}\n{}",
            self.nodes(rels),
            self.daemon.log()
        );
    }
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn gamemode_register_game_of_a_child_that_exits_sets_and_restores_the_game_nodes() {
    let Some(s) = setup() else { return };
    let nodes = [GOLD_MIN, GPU_MIN];
    let before = s.nodes(&nodes);
    let mut game = Command::new("sleep").arg("60").spawn().unwrap();
    let pid = game.id().to_string();
    let gm = [
        "--dest",
        "com.feralinteractive.GameMode",
        "--object-path",
        "/com/feralinteractive/GameMode",
    ];
    let call = |method: &str, args: &[&str]| {
        let mut a = gm.to_vec();
        a.extend(["--method", method]);
        a.extend(args);
        ok(&s.gdbus(&a))
    };
    assert_eq!(
        call("com.feralinteractive.GameMode.RegisterGame", &[&pid]),
        "(0,)"
    );
    // The qcs6490 `game` use case: Gold and GPU minimum-frequency floors.
    s.wait_nodes(
        &nodes,
        &["1516800".into(), "450000000".into()],
        "game registered",
    );
    assert_eq!(
        call("com.feralinteractive.GameMode.QueryStatus", &[&pid]),
        "(2,)"
    );
    let count = call(
        "org.freedesktop.DBus.Properties.Get",
        &["com.feralinteractive.GameMode", "ClientCount"],
    );
    assert_eq!(count, "(<1>,)");
    game.kill().unwrap();
    game.wait().unwrap();
    s.wait_nodes(&nodes, &before, "game exited");
    assert_eq!(
        call("com.feralinteractive.GameMode.QueryStatus", &[&pid]),
        "(0,)"
    );
}

#[test]
fn powerprofilesctl_set_performance_then_balanced_changes_and_restores_the_nodes() {
    if !have("powerprofilesctl") {
        return;
    }
    let Some(s) = setup() else { return };
    let nodes = [SILVER_GOV, SILVER_MIN];
    let before = s.nodes(&nodes);
    assert_eq!(ok(&s.ppctl().arg("get").output().unwrap()), "balanced");
    ok(&s.ppctl().args(["set", "performance"]).output().unwrap());
    // seed 000 §6.2/§5.1: performance governor, min = the highest step.
    let max = s
        .daemon
        .node("sys/devices/system/cpu/cpufreq/policy0/cpuinfo_max_freq");
    s.wait_nodes(&nodes, &["performance".into(), max], "set performance");
    assert_eq!(ok(&s.ppctl().arg("get").output().unwrap()), "performance");
    let listed = ok(&s.ppctl().arg("list").output().unwrap());
    assert!(listed.contains("* performance:"), "{listed}");
    ok(&s.ppctl().args(["set", "balanced"]).output().unwrap());
    s.wait_nodes(&nodes, &before, "set balanced");
    assert_eq!(ok(&s.ppctl().arg("get").output().unwrap()), "balanced");
}

/// `powerprofilesctl launch -p performance -- sleep SECS`: the governor
/// turns to performance while it holds; `kill` ends it while holding
/// (without its ReleaseProfile). Either way the node comes back.
fn launch(secs: &str, kill: bool) {
    if !have("powerprofilesctl") {
        return;
    }
    let Some(s) = setup() else { return };
    let nodes = [SILVER_GOV];
    let before = s.nodes(&nodes);
    let mut launch = s
        .ppctl()
        .args(["launch", "-p", "performance", "--", "sleep", secs])
        .spawn()
        .unwrap();
    s.wait_nodes(&nodes, &["performance".into()], "launch holding");
    if kill {
        launch.kill().unwrap();
        launch.wait().unwrap();
    } else {
        assert!(launch.wait().unwrap().success());
    }
    s.wait_nodes(&nodes, &before, "launch ended");
}

#[test]
fn powerprofilesctl_launch_holds_performance_while_its_command_runs() {
    launch("2", false);
}

#[test]
fn a_hold_whose_client_is_killed_ends_with_its_bus_connection() {
    // Only the bus's NameOwnerChanged tells Lever this holder is gone.
    launch("20", true);
}

#[test]
fn an_unreachable_bus_leaves_the_daemon_running_without_dbus() {
    let dir = state_dir();
    let missing = format!("unix:path={}", dir.path().join("no-bus").display());
    let d = Daemon::start(dir.path(), &["--dbus-address", &missing]);
    let said = wait_until(WAIT, || d.log().contains("goes on without D-Bus"));
    assert!(said.is_some(), "{}", d.log());
    assert_eq!(d.client().ping().unwrap(), 1);
}
