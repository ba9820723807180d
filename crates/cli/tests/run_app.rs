//! `lever run --app NAME -- CMD` and REGISTER against a real daemon on a
//! simulated qcs6490 with app detection off (`--no-apps`, as where the
//! process connector is unavailable): the app's configuration holds while
//! the command runs and is released when it exits; the command's exit
//! status passes through; an unknown app and another uid's process are
//! refused.

mod common;

use common::daemon::{is_root, state_dir, wait_until, Daemon};
use common::LEVER;
use lever_client::{Client, ClientError, Code};
use std::process::{Command, Stdio};
use std::time::Duration;

/// camera-preview, the use case of app gst-camera, sets it to 512.
const UCLAMP: &str = "proc/sys/kernel/sched_util_clamp_min";
const GOLD_MIN: &str = "sys/devices/system/cpu/cpufreq/policy4/scaling_min_freq";

#[test]
fn lever_run_holds_the_apps_configuration_while_the_command_runs_and_passes_its_status() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &["--no-apps"]);
    let (uclamp, gold) = (d.node(UCLAMP), d.node(GOLD_MIN));
    assert_ne!(uclamp, "512");
    let mut run = Command::new(LEVER)
        .args([
            "run",
            "--app",
            "gst-camera",
            "--",
            "sh",
            "-c",
            "read x; exit 7",
        ])
        .env("LEVER_SOCKET", &d.socket)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let set = wait_until(Duration::from_secs(10), || {
        d.node(UCLAMP) == "512" && d.node(GOLD_MIN) == "1228800"
    });
    assert!(set.is_some(), "{}", d.log());
    let logged = wait_until(Duration::from_secs(5), || {
        d.log().contains("app gst-camera started") && d.log().contains("registered by pid")
    });
    assert!(logged.is_some(), "{}", d.log());
    // The lease is the command's: `lever status` from elsewhere sees it.
    let status = d.client().status().unwrap();
    assert!(status.live_requests >= 1, "{status:?}");
    std::io::Write::write_all(run.stdin.as_mut().unwrap(), b"\n").unwrap();
    let st = run.wait().unwrap();
    assert_eq!(st.code(), Some(7), "the command's status passes through");
    let back = wait_until(Duration::from_secs(5), || {
        d.node(UCLAMP) == uclamp && d.node(GOLD_MIN) == gold
    });
    assert!(back.is_some(), "{}", d.log());
    assert!(wait_until(Duration::from_secs(5), || d
        .log()
        .contains("exited: its configuration is released"))
    .is_some());
    // A command that succeeds exits 0; one that exits at once is still
    // registered and released (a zombie until `lever run` reaps it).
    let out = Command::new(LEVER)
        .args(["run", "--app", "gst-camera", "--", "true"])
        .env("LEVER_SOCKET", &d.socket)
        .output()
        .unwrap();
    common::assert_success(&out);
    assert!(wait_until(Duration::from_secs(5), || d.node(UCLAMP) == uclamp).is_some());
}

#[test]
fn an_unknown_app_is_refused_precisely_and_the_command_does_not_run_on() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &["--no-apps"]);
    let t0 = std::time::Instant::now();
    let out = Command::new(LEVER)
        .args(["run", "--app", "no-such-app", "--", "sleep", "30"])
        .env("LEVER_SOCKET", &d.socket)
        .output()
        .unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "the command was killed"
    );
    assert_eq!(out.status.code(), Some(8), "refused");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no app named \"no-such-app\" in target qcs6490 (its apps: gst-camera)"),
        "{err}"
    );
    let mut c = d.client();
    match c.register(1, "no-such-app") {
        Err(ClientError::Refused { code, .. }) => assert_eq!(code, Code::UnknownApp),
        other => panic!("{other:?}"),
    }
    // No command: a usage mistake, before anything is started.
    let out = Command::new(LEVER)
        .args(["run", "--app", "gst-camera"])
        .env("LEVER_SOCKET", &d.socket)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no command given"));
}

#[test]
fn a_process_registered_twice_or_not_running_is_refused() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &["--no-apps"]);
    let mut child = Command::new("sleep").arg("30").spawn().unwrap();
    let mut c: Client = d.client();
    c.register(child.id(), "gst-camera").unwrap();
    let again = c
        .register(child.id(), "gst-camera")
        .unwrap_err()
        .to_string();
    assert!(
        again.contains("already configured as app gst-camera"),
        "{again}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    // Reaped: no process any more (pid_max is far above the pids in use).
    let gone = c
        .register(child.id(), "gst-camera")
        .unwrap_err()
        .to_string();
    assert!(gone.contains("is running"), "{gone}");
}

/// Run by the test below as uid 65534: register `LEVER_TEST_REGISTER_PID`
/// and print the daemon's answer.
#[test]
fn register_helper() {
    let (Ok(pid), Ok(sock)) = (
        std::env::var("LEVER_TEST_REGISTER_PID"),
        std::env::var("LEVER_SOCKET"),
    ) else {
        return;
    };
    let mut c = Client::connect(sock.as_ref()).unwrap();
    match c.register(pid.parse().unwrap(), "gst-camera") {
        Ok(()) => println!("RESULT ok"),
        Err(ClientError::Refused { code, message }) => println!("RESULT {code:?} {message}"),
        Err(e) => println!("RESULT {e}"),
    }
}

#[test]
fn a_third_party_client_may_register_only_its_own_processes() {
    if !is_root() {
        eprintln!("skipped: switching to uid 65534 needs root");
        return;
    }
    use std::os::unix::process::CommandExt;
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &["--no-apps"]);
    let mine = Command::new("sleep").arg("30").uid(65534).spawn().unwrap();
    let theirs = Command::new("sleep").arg("30").spawn().unwrap();
    let exe = std::env::current_exe().unwrap();
    let ask = |pid: u32| {
        let out = Command::new(&exe)
            .args(["--exact", "register_helper", "--nocapture"])
            .env("LEVER_TEST_REGISTER_PID", pid.to_string())
            .env("LEVER_SOCKET", &d.socket)
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines()
            .find_map(|l| l.strip_prefix("RESULT "))
            .unwrap_or_else(|| panic!("{text} {}", String::from_utf8_lossy(&out.stderr)))
            .to_string()
    };
    let refused = ask(theirs.id());
    assert!(
        refused.starts_with("NotPermitted")
            && refused.contains("belongs to uid 0; uid 65534 may register only its own processes"),
        "{refused}"
    );
    assert_eq!(ask(mine.id()), "ok");
    for mut c in [mine, theirs] {
        c.kill().unwrap();
        c.wait().unwrap();
    }
}
