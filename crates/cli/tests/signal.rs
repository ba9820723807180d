//! `lever signal`: use cases triggered against a real daemon on a
//! simulated qcs6490 — nodes and cgroup files set and put back, aggregation
//! with perflocks, third-party refusal, and a crash mid use case.

mod common;

use common::daemon::{is_root, state_dir, wait_until, Daemon};
use common::LEVER;
use lever_client::{Client, ClientError, Code, Lease, Priority, Signal, SignalLease};
use std::process::{Command, Stdio};
use std::time::Duration;

const GOLD_MIN: &str = "sys/devices/system/cpu/cpufreq/policy4/scaling_min_freq";
const GPU_MIN: &str = "sys/class/kgsl/kgsl-3d0/devfreq/min_freq";
const UCLAMP: &str = "proc/sys/kernel/sched_util_clamp_min";
const CAM_WEIGHT: &str = "sys/fs/cgroup/lever/camera/cpu.weight";
const CAM_UCLAMP: &str = "sys/fs/cgroup/lever/camera/cpu.uclamp.min";

fn camera() -> Signal {
    Signal::of("camera-preview", SignalLease::UseCaseDefault)
}

/// The nodes camera-preview sets, as they are now.
fn camera_nodes(d: &Daemon) -> [String; 3] {
    [d.node(GOLD_MIN), d.node(GPU_MIN), d.node(UCLAMP)]
}

fn cgroup_file(d: &Daemon, rel: &str) -> Option<String> {
    std::fs::read_to_string(d.dir.join("sim").join(rel))
        .ok()
        .map(|s| s.trim().to_string())
}

#[test]
fn lever_signal_camera_preview_sets_its_nodes_and_restores_them_when_it_ends() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let before = camera_nodes(&d);
    let mut held = Command::new(LEVER)
        .args(["signal", "camera-preview"])
        .env("LEVER_SOCKET", &d.socket)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let set = wait_until(Duration::from_secs(10), || {
        d.node(GOLD_MIN) == "1228800" && cgroup_file(&d, CAM_WEIGHT).as_deref() == Some("400")
    });
    assert!(set.is_some(), "{}", d.log());
    assert_eq!(camera_nodes(&d), ["1228800", "450000000", "1024"]);
    assert_eq!(cgroup_file(&d, CAM_UCLAMP).as_deref(), Some("25.00"));
    // Status names the use case on its request.
    let out = Command::new(LEVER)
        .args(["status", "--json"])
        .env("LEVER_SOCKET", &d.socket)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let reqs = doc["requests"].as_array().unwrap();
    assert_eq!(reqs.len(), 1, "{doc}");
    assert_eq!(reqs[0]["usecase"], "camera-preview");
    let out = Command::new(LEVER)
        .args(["status"])
        .env("LEVER_SOCKET", &d.socket)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("USECASE") && text.contains("camera-preview"),
        "{text}"
    );
    // Ctrl-C (here SIGKILL of the client) ends it: its connection closes.
    held.kill().unwrap();
    held.wait().unwrap();
    let back = wait_until(Duration::from_secs(5), || camera_nodes(&d) == before);
    assert!(back.is_some(), "{:?} vs {before:?}", camera_nodes(&d));
    // The cgroup the use case created is removed again.
    let weight = wait_until(Duration::from_secs(5), || {
        cgroup_file(&d, CAM_WEIGHT).is_none()
    });
    assert!(weight.is_some(), "{:?}", cgroup_file(&d, CAM_WEIGHT));
    // A timed trigger ends by itself; the CLI says what it holds.
    let out = Command::new(LEVER)
        .args([
            "signal",
            "video-decode",
            "--attr",
            "fps=30,width=3840",
            "-d",
            "200ms",
        ])
        .env("LEVER_SOCKET", &d.socket)
        .output()
        .unwrap();
    common::assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("use case video-decode/4k30: handle") && text.contains("200 ms"),
        "{text}"
    );
    assert!(text.contains("gpu_min_freq"), "{text}");
    let back = wait_until(Duration::from_secs(5), || camera_nodes(&d) == before);
    assert!(back.is_some());
    // Unknown names are refused with the daemon's message and exit 8.
    let out = Command::new(LEVER)
        .args(["signal", "no-such-case", "-d", "10"])
        .env("LEVER_SOCKET", &d.socket)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(8));
    assert!(String::from_utf8_lossy(&out.stderr).contains("lever usecases"));
}

#[test]
fn a_perflock_and_a_use_case_on_the_same_resource_aggregate_by_policy() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let original = d.node(GOLD_MIN);
    let mut a = d.client();
    let mut b = d.client();
    // cpu_min_freq.gold is a floor (max wins): the perflock's higher floor
    // holds while both live, the use case's when the perflock ends.
    // The gold cluster's opcode is target-specific: ask the daemon.
    let doc = a.explain("cpu_min_freq.gold").unwrap();
    let op = u32::from_str_radix(doc.resource.opcode.trim_start_matches("0x"), 16).unwrap();
    let lock = a
        .acquire(
            None,
            Lease::UntilReleased,
            Priority::ThirdPartyLow,
            &[(op, 1516800)],
        )
        .unwrap();
    assert_eq!(d.node(GOLD_MIN), "1516800");
    let report = b.signal_report(camera()).unwrap();
    assert_eq!(report.usecase.as_deref(), Some("camera-preview"));
    assert_eq!(report.lease, Some(Lease::UntilReleased));
    assert_eq!(d.node(GOLD_MIN), "1516800");
    // EXPLAIN names the use case on its vote.
    let ex = b.explain("cpu_min_freq.gold").unwrap();
    assert!(
        ex.votes
            .iter()
            .any(|v| v.usecase.as_deref() == Some("camera-preview")),
        "{ex:?}"
    );
    a.release(lock).unwrap();
    assert_eq!(d.node(GOLD_MIN), "1228800");
    b.release(report.handle).unwrap();
    assert_eq!(d.node(GOLD_MIN), original);
}

#[test]
fn a_third_party_client_cannot_trigger_a_system_only_use_case() {
    if !is_root() {
        eprintln!("skipped: needs root to run a client as `nobody`");
        return;
    }
    let dir = state_dir();
    // The built-in qcs6490 target plus one system-only use case.
    let (sim, file) = qcs6490_with(
        dir.path(),
        "  - name: thermal-override\n    id: 0x00030100\n    permission: system\n    duration: 1s\n    resources:\n      sched_util_clamp_min: 1024\n",
    );
    let d = Daemon::start(
        dir.path(),
        &[
            "--root",
            sim.to_str().unwrap(),
            "--target",
            file.to_str().unwrap(),
            "--system-group",
            "lever-test-no-such-group",
        ],
    );
    let before = d.node(UCLAMP);
    let as_nobody = |args: &[&str]| d.as_nobody(args);
    let out = as_nobody(&["signal", "thermal-override"]);
    assert_eq!(out.status.code(), Some(8));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("thermal-override is system-only") && err.contains("uid 65534"),
        "{err}"
    );
    assert_eq!(d.node(UCLAMP), before);
    // The same by id, and the protocol code.
    let mut root = d.client();
    let h = root
        .signal(Signal {
            usecase: "0x00030100".into(),
            ..camera()
        })
        .unwrap();
    assert_eq!(d.node(UCLAMP), "1024");
    root.release(h).unwrap();
    // A third-party use case works for nobody.
    let out = as_nobody(&["signal", "app-launch", "-d", "50"]);
    common::assert_success(&out);
    // Through the Rust client, the refusal's code is NotPermitted.
    match Client::connect(&d.socket).unwrap().signal(Signal {
        usecase: "nothing-like-it".into(),
        ..camera()
    }) {
        Err(ClientError::Refused { code, .. }) => assert_eq!(code, Code::UnknownUseCase),
        other => panic!("{other:?}"),
    }
}

#[test]
fn kill_9_with_a_live_use_case_then_restart_puts_nodes_and_cgroup_files_back() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let before = camera_nodes(&d);
    let mut c = d.client();
    c.signal(camera()).unwrap();
    assert_eq!(camera_nodes(&d), ["1228800", "450000000", "1024"]);
    assert_eq!(cgroup_file(&d, CAM_WEIGHT).as_deref(), Some("400"));
    d.signal(9);
    let d = {
        let _ = d.wait();
        drop(c);
        Daemon::start(dir.path(), &[])
    };
    // The sim tree is not recreated over an existing one: what the killed
    // daemon left is what the new one finds, and puts back.
    assert_eq!(camera_nodes(&d), before);
    // The cgroup the use case created is gone again (its file with it).
    assert_eq!(cgroup_file(&d, CAM_WEIGHT), None);
    assert!(
        d.log().contains("recovered request")
            || wait_until(Duration::from_secs(5), || d
                .log()
                .contains("recovered request"))
            .is_some(),
        "{}",
        d.log()
    );
}

/// Replace the board's apps with one, `sleeper`, that matches `sleep`
/// anywhere and triggers use case `tester`; `more` adds to the entry.
fn only_app(file: &std::path::Path, more: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    let at = text.find("\napp_filter:").unwrap();
    let text = format!(
        "{}\napp_filter:\n  require_tty_or_display: false\napps:\n  - name: sleeper\n    exec: sleep\n    usecases: [tester]\n{more}",
        &text[..at]
    );
    std::fs::write(file, text).unwrap();
}

/// `/proc/PID` of a real `sleep 30` in the board's tree (the daemon reads
/// /proc under --root), as the kernel shows it after the exec.
fn fake_sleep(sim: &std::path::Path, pid: u32) -> std::path::PathBuf {
    let proc_dir = sim.join(format!("proc/{pid}"));
    std::fs::create_dir_all(proc_dir.join(format!("task/{pid}"))).unwrap();
    for (f, v) in [
        ("comm", "sleep\n".to_string()),
        ("cmdline", "sleep\u{0}30\u{0}".to_string()),
        ("stat", format!("{pid} (sleep) S 1 {pid} {pid} 0 -1 0")),
        ("status", "Name:\tsleep\nUid:\t0\t0\t0\t0\n".to_string()),
        ("cgroup", "0::/user.slice\n".to_string()),
    ] {
        std::fs::write(proc_dir.join(f), v).unwrap();
    }
    proc_dir
}

/// A simulated qcs6490 in `dir/sim` and a target file: the built-in
/// qcs6490 plus `extra` use case entries. Returns (sim, file).
fn qcs6490_with(dir: &std::path::Path, extra: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let builtin = include_str!("../../targets/targets/qcs6490.yaml");
    let target = builtin.replacen("\n# --- apps", &format!("{extra}\n# --- apps"), 1);
    assert_ne!(target, builtin, "the built-in target's layout changed");
    let file = dir.join("board.yaml");
    std::fs::write(&file, target).unwrap();
    let sim = dir.join("sim");
    common::assert_success(
        &Command::new(LEVER)
            .args(["sim", "create", "qcs6490", sim.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    (sim, file)
}

#[test]
fn kill_9_with_a_use_case_that_moved_a_real_process_then_restart_moves_it_back() {
    let dir = state_dir();
    let (sim, file) = qcs6490_with(
        dir.path(),
        "  - name: focus\n    id: 0x00030101\n    resources:\n      sched_util_clamp_min: 300\n    threads:\n      - comm: lever\n        cgroup: lever/focus\n",
    );
    let args = board_args(&sim, &file);
    let d = Daemon::start(dir.path(), &args);
    let before = d.node(UCLAMP);
    // A real process, paused until its /proc entries exist in the board's
    // tree (the daemon reads /proc under --root): then it becomes
    // `lever signal focus` (exec keeps the pid), whose one thread, `lever`,
    // the use case moves to lever/focus.
    let mut child = Command::new("sh")
        .args(["-c", &format!("read x; exec {LEVER} signal focus")])
        .env("LEVER_SOCKET", &d.socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let task = sim.join(format!("proc/{pid}/task/{pid}"));
    std::fs::create_dir_all(&task).unwrap();
    std::fs::write(task.join("comm"), "lever\n").unwrap();
    std::fs::write(task.join("cgroup"), "0::/user.slice\n").unwrap();
    std::fs::write(sim.join(format!("proc/{pid}/cgroup")), "0::/user.slice\n").unwrap();
    let threads = |cg: &str| {
        std::fs::read_to_string(sim.join(format!("sys/fs/cgroup/{cg}/cgroup.threads")))
            .unwrap_or_default()
    };
    std::fs::write(
        sim.join("sys/fs/cgroup/user.slice/cgroup.threads"),
        format!("{pid}\n"),
    )
    .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), b"\n").unwrap();
    let moved = wait_until(Duration::from_secs(10), || {
        std::fs::read_to_string(task.join("cgroup")).unwrap() == "0::/lever/focus\n"
    });
    assert!(moved.is_some(), "{}", d.log());
    // The client has its reply (so the kill below cannot race it).
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert!(line.starts_with("use case focus: handle"), "{line}");
    assert_eq!(d.node(UCLAMP), "300");
    assert!(threads("lever/focus").contains(&pid.to_string()));
    assert!(!threads("user.slice").contains(&pid.to_string()));
    d.signal(9);
    let _ = d.wait();
    let d = Daemon::start(dir.path(), &args);
    assert_eq!(
        std::fs::read_to_string(task.join("cgroup")).unwrap(),
        "0::/user.slice\n"
    );
    assert!(threads("user.slice").contains(&pid.to_string()));
    assert!(!threads("lever/focus").contains(&pid.to_string()));
    assert_eq!(d.node(UCLAMP), before);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn every_use_case_lever_usecases_lists_can_be_signalled_by_name_and_id() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let out = Command::new(LEVER)
        .args(["usecases", "-t", "qcs6490", "--json"])
        .output()
        .unwrap();
    common::assert_success(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed = doc["usecases"].as_array().unwrap();
    assert!(listed.len() >= 3, "{doc}");
    let mut c = d.client();
    for uc in listed {
        let name = uc["name"].as_str().unwrap();
        let id = format!("0x{:08x}", uc["id"].as_u64().unwrap());
        for key in [name.to_string(), id] {
            let r = c
                .signal_report(Signal {
                    usecase: key.clone(),
                    lease: SignalLease::Given(Lease::from_ms(5000)),
                    ..camera()
                })
                .unwrap_or_else(|e| panic!("{key}: {e}"));
            assert!(
                r.usecase.as_deref().unwrap().starts_with(name),
                "{key}: {r:?}"
            );
            c.release(r.handle).unwrap();
        }
    }
}

#[test]
fn a_detected_app_gets_its_configuration_within_50ms_of_exec_and_loses_it_at_exit() {
    if !is_root() {
        eprintln!("skipped: the netlink process connector needs CAP_NET_ADMIN (root)");
        return;
    }
    let dir = state_dir();
    let extra =
        "  - name: tester\n    id: 0x00030102\n    resources:\n      sched_util_clamp_min: 300\n";
    let (sim, file) = qcs6490_with(dir.path(), extra);
    // The board's apps: replaced by one that matches `sleep` anywhere.
    only_app(&file, "    move_to: lever/focused\n");
    let args = board_args(&sim, &file);
    let d = Daemon::start(dir.path(), &args);
    if d.log().contains("app detection is not available") {
        eprintln!("skipped: {}", d.log());
        return;
    }
    let before = d.node(UCLAMP);
    // One exec of a matching program: (exec → configured, exit →
    // restored), each `None` when it did not happen within 5 s.
    let run_once = || {
        let mut child = Command::new("sh")
            .args(["-c", "read x; exec sleep 30"])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        // Its /proc entries in the board's tree (the daemon reads /proc
        // under --root), as the kernel will show them after the exec.
        let proc_dir = fake_sleep(&sim, pid);
        std::fs::write(
            sim.join("sys/fs/cgroup/user.slice/cgroup.procs"),
            format!("{pid}\n"),
        )
        .unwrap();
        let exec = std::time::Instant::now();
        std::io::Write::write_all(child.stdin.as_mut().unwrap(), b"\n").unwrap();
        let applied = wait_until(Duration::from_secs(5), || {
            d.node(UCLAMP) == "300"
                && std::fs::read_to_string(proc_dir.join("cgroup")).unwrap()
                    == "0::/lever/focused\n"
        })
        .map(|_| exec.elapsed());
        println!("exec -> configured: {applied:?}");
        child.kill().unwrap();
        let exited = std::time::Instant::now();
        child.wait().unwrap();
        let back = wait_until(Duration::from_secs(5), || {
            d.node(UCLAMP) == before
                && std::fs::read_to_string(proc_dir.join("cgroup")).unwrap() == "0::/user.slice\n"
        })
        .map(|_| exited.elapsed());
        println!("exit -> restored: {back:?}");
        (applied, back)
    };
    // Both within 50 ms. The times include the shell's exec and this
    // test's polling, so a noisy neighbour (other tests run beside this
    // one) can spoil one run: up to three are made. A daemon that misses
    // the event or applies late fails all three.
    let mut seen = Vec::new();
    let limit = Duration::from_millis(50);
    for _ in 0..3 {
        let (applied, back) = run_once();
        assert!(applied.is_some(), "never configured: {}", d.log());
        assert!(back.is_some(), "never restored: {}", d.log());
        if applied.unwrap() < limit && back.unwrap() < limit {
            break;
        }
        seen.push((applied, back));
        assert!(
            seen.len() < 3,
            "exec -> configured, exit -> restored over 50 ms in three runs: {seen:?}"
        );
    }
    // STATUS says detection is on.
    let doc: serde_json::Value = serde_json::from_slice(
        &Command::new(LEVER)
            .args(["status", "--json"])
            .env("LEVER_SOCKET", &d.socket)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(doc["app_detection"], "on");
    let out = Command::new(LEVER)
        .args(["status"])
        .env("LEVER_SOCKET", &d.socket)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("app detection: on"));
}

#[test]
fn an_app_already_running_when_the_daemon_starts_is_configured_by_the_start_scan() {
    let dir = state_dir();
    let extra =
        "  - name: tester\n    id: 0x00030102\n    resources:\n      sched_util_clamp_min: 300\n";
    let (sim, file) = qcs6490_with(dir.path(), extra);
    only_app(&file, "");
    // The app runs first, its /proc entries in the board's tree.
    let mut child = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = child.id();
    fake_sleep(&sim, pid);
    let args = board_args(&sim, &file);
    let d = Daemon::start(dir.path(), &args);
    // Configured before the daemon said it is ready (with or without the
    // connector: the scan needs none).
    assert_eq!(d.node(UCLAMP), "300", "{}", d.log());
    assert!(wait_until(Duration::from_secs(5), || d
        .log()
        .contains(&format!("app sleeper started: pid {pid}")))
    .is_some());
    child.kill().unwrap();
    child.wait().unwrap();
    let back = wait_until(Duration::from_secs(5), || d.node(UCLAMP) != "300");
    assert!(back.is_some(), "{}", d.log());
}

/// `--root SIM --target FILE`: the daemon on a simulated board with a
/// target file of the test's own.
fn board_args<'a>(sim: &'a std::path::Path, file: &'a std::path::Path) -> [&'a str; 4] {
    [
        "--root",
        sim.to_str().unwrap(),
        "--target",
        file.to_str().unwrap(),
    ]
}
