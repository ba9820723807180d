//! `lever daemon --urm DIR`: a real daemon on a simulated qcs6490 run
//! straight from a URM configuration directory (common → target → custom),
//! with no import step: its use cases set their nodes, SIGHUP re-reads the
//! directory, and a directory URM refuses is a start-up error at its
//! file:line.

mod common;

use common::daemon::{state_dir, wait_until, Daemon};
use common::LEVER;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../urm/tests/fixtures/urm");
const LITTLE_MIN: &str = "sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq";
const BIG_MIN: &str = "sys/devices/system/cpu/cpufreq/policy4/scaling_min_freq";
const PRIME_MIN: &str = "sys/devices/system/cpu/cpufreq/policy7/scaling_min_freq";
const SIGHUP: i32 = 1;

/// A copy of the URM fixture tree (common/, target/, custom/) in `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn client(d: &Daemon, args: &[&str]) -> Output {
    Command::new(LEVER)
        .args(args)
        .env("LEVER_SOCKET", &d.socket)
        .output()
        .unwrap()
}

#[test]
fn a_urm_directory_runs_the_daemon_and_sighup_rereads_it() {
    let dir = state_dir();
    let urm = dir.path().join("urm");
    copy_tree(Path::new(FIXTURES), &urm);
    let urm_arg = urm.to_str().unwrap();
    let d = Daemon::start(dir.path(), &["--urm", urm_arg]);
    let log = d.log();
    assert!(log.contains("target urm (urm:"), "{log}");
    // The import's warnings, once each, at their file:line.
    let irq = "InitConfig.yaml:16: field `InitConfigs[2].IRQConfigs`";
    assert_eq!(log.matches(irq).count(), 1, "{log}");
    assert!(
        log.contains("warning: URM import: ") && log.contains("ResourcesConfig.yaml:4: field `ResourceConfigs[0].Policy`: lower_is_better on a floor"),
        "{log}"
    );

    // `lever usecases --urm` lists what the daemon serves.
    let root = dir.path().join("sim");
    let listed = common::ok(&[
        "--root",
        root.to_str().unwrap(),
        "usecases",
        "--urm",
        urm_arg,
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let names: Vec<&str> = doc["usecases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"app-launch"), "{listed}");
    assert!(!names.contains(&"little-boost"), "{listed}");

    // custom/ overrides common/: app-launch sets big (ResInfo 0x100) and
    // prime (CLUSTER_PLUS_ALL_CORES) minimum frequencies.
    let before = (d.node(BIG_MIN), d.node(PRIME_MIN));
    assert_ne!(before, ("1516800".into(), "2035200".into()));
    let out = client(&d, &["signal", "app-launch", "-d", "60s", "--detach"]);
    assert!(out.status.success(), "{out:?}\n{}", d.log());
    assert_eq!(d.node(BIG_MIN), "1516800", "{}", d.log());
    assert_eq!(d.node(PRIME_MIN), "2035200", "{}", d.log());

    // Not in the directory yet.
    let out = client(&d, &["signal", "little-boost", "-d", "60s", "--detach"]);
    assert!(!out.status.success(), "{out:?}");

    // A signal added to custom/, then SIGHUP: served, and only the new
    // warning is said.
    let custom = urm.join("custom/SignalsConfig.yaml");
    let mut text = std::fs::read_to_string(&custom).unwrap();
    text.push_str(
        "  - SigId: \"0x7\"\n    Category: \"0x2\"\n    Name: LITTLE_BOOST\n    Timeout: 60000\n    Resources:\n      - {ResCode: \"0x00020000\", ResInfo: \"CLUSTER_LITTLE_ALL_CORES\", Values: [1152000, 1324800]}\n",
    );
    std::fs::write(&custom, &text).unwrap();
    d.signal(SIGHUP);
    let reloaded = wait_until(Duration::from_secs(10), || {
        d.log().contains("reloaded target urm")
    });
    assert!(reloaded.is_some(), "{}", d.log());
    let log = d.log();
    assert_eq!(log.matches(irq).count(), 1, "{log}");
    assert!(
        log.contains(
            "SignalsConfig.yaml:15: field `SignalConfigs[1].Resources[0]`: 2 values given"
        ),
        "{log}"
    );
    let out = client(&d, &["signal", "little-boost", "-d", "60s", "--detach"]);
    assert!(out.status.success(), "{out:?}\n{}", d.log());
    assert_eq!(d.node(LITTLE_MIN), "1152000", "{}", d.log());

    // A directory broken after start: the reload is refused at its
    // file:line and the daemon keeps serving what it had.
    std::fs::write(&custom, text.replace("Timeout: 60000", "Timout: 60000")).unwrap();
    d.signal(SIGHUP);
    let refused = wait_until(Duration::from_secs(10), || {
        d.log().contains("reload failed")
    });
    assert!(refused.is_some(), "{}", d.log());
    let log = d.log();
    let line = log.lines().find(|l| l.contains("reload failed")).unwrap();
    assert!(
        line.contains("custom/SignalsConfig.yaml:13:5: field `SignalConfigs[1].Timout`"),
        "{line}"
    );
    let out = client(&d, &["signal", "little-boost", "-d", "60s", "--detach"]);
    assert!(out.status.success(), "{out:?}\n{}", d.log());
}

#[test]
fn a_urm_directory_urm_refuses_is_a_start_up_error_at_its_line() {
    let dir = state_dir();
    let urm = dir.path().join("urm");
    std::fs::create_dir(&urm).unwrap();
    std::fs::write(
        urm.join("SignalsConfig.yaml"),
        "SignalConfigs:\n  - SigId: 1\n    Category: 2\n    Timout: 5\n",
    )
    .unwrap();
    let state = dir.path().join("state");
    let out = Command::new(LEVER)
        .args(["daemon", "--sim", "qcs6490", "--urm"])
        .arg(&urm)
        .arg("--state-dir")
        .arg(&state)
        .arg("--socket")
        .arg(state.join("lever.sock"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("SignalsConfig.yaml:4:5: field `SignalConfigs[0].Timout`: unknown key"),
        "{stderr}"
    );
    assert!(!stderr.contains("ready on"), "{stderr}");

    // Not a URM directory at all: refused too, naming it.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = Command::new(LEVER)
        .args(["daemon", "--sim", "qcs6490", "--urm"])
        .arg(&empty)
        .arg("--state-dir")
        .arg(&state)
        .arg("--socket")
        .arg(state.join("lever.sock"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("no URM configuration here"), "{stderr}");
}
