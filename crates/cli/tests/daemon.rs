//! Integration tests: a real `lever daemon` on a simulated board, real
//! clients over the socket, real signals.

mod common;

use common::daemon::{bound, is_root, state_dir, wait_until, Daemon};
use common::{changed, snapshot, LEVER};
use lever_client::{Acquire, ClientError, Handle, Lease, Priority};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SILVER_MIN: &str = "sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq";

#[test]
fn seed_perflock_acquire_sets_silver_min_and_release_restores() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let original = d.node(SILVER_MIN);
    let mut c = d.client();
    let h = c
        .acquire(
            None,
            Lease::UntilReleased,
            Priority::ThirdPartyLow,
            &[(0x44008100, 1958400)],
        )
        .unwrap();
    assert!(h.get() > 0 && h.get() <= i32::MAX as u32);
    assert_eq!(d.node(SILVER_MIN), "1958400");
    // Updating with the same handle changes the value, keeps the handle.
    assert_eq!(
        c.acquire(
            Some(h),
            Lease::UntilReleased,
            Priority::ThirdPartyLow,
            &[(0x44008100, 1516800)]
        )
        .unwrap(),
        h
    );
    assert_eq!(d.node(SILVER_MIN), "1516800");
    c.release(h).unwrap();
    assert_eq!(d.node(SILVER_MIN), original);
    // The daemon's log reaches us through a pipe and a reader thread: wait
    // for the line rather than racing it on a loaded machine.
    let logged = wait_until(Duration::from_secs(5), || {
        d.log().contains("set cpu_min_freq.silver (0x44008100)")
    });
    assert!(logged.is_some(), "{}", d.log());
}

#[test]
fn timed_request_reverts_within_50ms_under_200_live_timed_requests() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let mut c = d.client();
    // 200 long timed requests on other resources (a system client).
    for i in 0..200u32 {
        let pairs = [
            (0x44000000u32, i64::from(i % 1000)),
            (0x48800000, i64::from(i % 200)),
        ];
        c.acquire(None, Lease::from_ms(60_000), Priority::SystemLow, &pairs)
            .unwrap();
    }
    let original = d.node(SILVER_MIN);
    let start = Instant::now();
    c.acquire(
        None,
        Lease::from_ms(300),
        Priority::ThirdPartyLow,
        &[(0x44008100, 1958400)],
    )
    .unwrap();
    assert_eq!(d.node(SILVER_MIN), "1958400");
    let deadline = start + Duration::from_millis(300);
    wait_until(Duration::from_secs(5), || d.node(SILVER_MIN) == original).expect("reverted");
    let late = Instant::now().saturating_duration_since(deadline);
    assert!(
        late < bound(Duration::from_millis(50)),
        "reverted {late:?} after its deadline"
    );
    assert_eq!(c.status().unwrap().live_requests, 200);
}

#[test]
fn sigkill_of_a_client_releases_its_requests_within_50ms() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let original = d.node(SILVER_MIN);
    let mut holder = Command::new(LEVER)
        .args([
            "acquire",
            "--socket",
            d.socket.to_str().unwrap(),
            "-d",
            "0",
            "0x44008100=1958400",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until it holds.
    let mut line = String::new();
    BufReader::new(holder.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("acquired handle"), "{line}");
    assert_eq!(d.node(SILVER_MIN), "1958400");
    holder.kill().unwrap(); // SIGKILL
    let killed = Instant::now();
    holder.wait().unwrap();
    wait_until(Duration::from_secs(5), || d.node(SILVER_MIN) == original).expect("released");
    let took = killed.elapsed();
    assert!(
        took < bound(Duration::from_millis(50)),
        "lease ended {took:?} after SIGKILL"
    );
}

#[test]
fn unprivileged_client_is_refused_system_resources_and_others_handles() {
    if !is_root() {
        eprintln!("skipped: needs root to run a client as `nobody`");
        return;
    }
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &["--system-group", "lever-test-no-such-group"]);
    let mut root_client = d.client();
    let h = root_client
        .acquire(
            None,
            Lease::UntilReleased,
            Priority::SystemHigh,
            &[(0x44008100, 1958400)],
        )
        .unwrap();
    let as_nobody = |args: &[&str]| d.as_nobody(args);
    // A system-only resource (PM QoS) is refused.
    let out = as_nobody(&["acquire", "-d", "100", "0x49800000=0"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("system-only") && err.contains("uid 65534"),
        "{err}"
    );
    // So is a system priority class.
    let out = as_nobody(&[
        "acquire",
        "-d",
        "100",
        "-p",
        "system-high",
        "0x44008100=300000",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a system client"));
    // Root's handle cannot be released, and its existence is not revealed.
    let out = as_nobody(&["release", &h.to_string()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("no request {h} of yours")));
    assert_eq!(d.node(SILVER_MIN), "1958400");
    // Status shows nobody's view: no foreign requests, winner hidden.
    let out = as_nobody(&["status", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["requests"].as_array().unwrap().len(), 0);
    let silver = doc["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["opcode"] == "0x44008100")
        .unwrap();
    assert_eq!(silver["winner"], "another client");
    // A third-party resource works for nobody.
    let out = as_nobody(&["acquire", "-d", "50", "0x44000000=512"]);
    common::assert_success(&out);
}

#[test]
fn silent_and_half_frame_connections_do_not_delay_others() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let _silent = UnixStream::connect(&d.socket).unwrap();
    let mut half = UnixStream::connect(&d.socket).unwrap();
    half.write_all(&lever_protocol::Request::Ping.encode()[..5])
        .unwrap();
    let mut c = d.client();
    let bound = bound(Duration::from_millis(50));
    for _ in 0..200 {
        let t = Instant::now();
        c.ping().unwrap();
        assert!(t.elapsed() < bound);
    }
    let t = Instant::now();
    let h = c
        .acquire(
            None,
            Lease::UntilReleased,
            Priority::ThirdPartyLow,
            &[(0x44008100, 1958400)],
        )
        .unwrap();
    c.release(h).unwrap();
    assert!(t.elapsed() < bound);
}

#[test]
fn malformed_frames_get_an_error_and_harm_no_one() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let mut good = d.client();
    let h = good
        .acquire(
            None,
            Lease::UntilReleased,
            Priority::ThirdPartyLow,
            &[(0x44008100, 1958400)],
        )
        .unwrap();
    for garbage in [
        &b"GET / HTTP/1.0\r\n\r\n"[..],
        &[0x4c, 1, 1, 0, 0xff, 0xff, 0xff, 0xff],
        &[0x4c, 9],
    ] {
        let mut bad = UnixStream::connect(&d.socket).unwrap();
        bad.write_all(garbage).unwrap();
        let mut reply = Vec::new();
        bad.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        bad.read_to_end(&mut reply).unwrap(); // the daemon closes after the error
        let (r, _) = lever_protocol::decode_reply(&reply).unwrap().unwrap();
        assert!(matches!(r, lever_protocol::Reply::Error { .. }), "{r:?}");
    }
    // Invalid content is refused precisely, without closing.
    let err = good
        .acquire(
            None,
            Lease::UntilReleased,
            Priority::ThirdPartyLow,
            &[(0x4abc0000, 1)],
        )
        .unwrap_err();
    assert!(err.to_string().contains("not a resource"), "{err}");
    let err = good
        .acquire(
            None,
            Lease::UntilReleased,
            Priority::ThirdPartyLow,
            &[(0x44008100, 1), (0x44008100, 2)],
        )
        .unwrap_err();
    assert!(err.to_string().contains("twice"), "{err}");
    let err = good
        .acquire_with(Acquire {
            handle: None,
            lease: Lease::UntilReleased,
            priority: Priority::ThirdPartyLow,
            detach: true,
            report: false,
            pairs: vec![(0x44008100, 1)],
        })
        .unwrap_err();
    assert!(err.to_string().contains("detach needs a duration"), "{err}");
    // The good client's lease is intact.
    assert_eq!(d.node(SILVER_MIN), "1958400");
    good.release(h).unwrap();
}

#[test]
fn kill_9_with_50_live_boosts_then_restart_restores_every_node() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let before = snapshot(&dir.path().join("sim"));
    let mut c = d.client();
    let status = c.status().unwrap();
    // One request per resource, each asking for a value other than the
    // current one (pair maxima are left alone so floors stay effective).
    let mut boosted = 0;
    for r in &status.resources {
        if boosted == 50 {
            break;
        }
        let explain = c.explain(&r.name).unwrap();
        let spec = &explain.spec;
        let kind = spec.kind.as_str();
        if kind == "pair-max" || kind == "hold-fd" {
            continue;
        }
        let current = r.current.as_deref().unwrap();
        let (low, high) = (spec.low, spec.high);
        let value = if kind == "enum" {
            let values = spec.kind.values();
            let cur = values.iter().position(|v| v == current).unwrap_or(0);
            ((cur + 1) % values.len()) as i64
        } else if current == high.to_string() {
            low
        } else {
            high
        };
        let opcode = u32::from_str_radix(r.opcode.trim_start_matches("0x"), 16).unwrap();
        c.acquire(
            None,
            Lease::UntilReleased,
            Priority::SystemHigh,
            &[(opcode, value)],
        )
        .unwrap();
        boosted += 1;
    }
    assert_eq!(boosted, 50);
    let during = snapshot(&dir.path().join("sim"));
    let n = changed(&before, &during).len();
    assert!(n >= 50, "only {n} nodes changed");
    d.signal(9);
    let _ = d.wait();
    // The nodes are still boosted while no daemon runs...
    assert!(!changed(&before, &snapshot(&dir.path().join("sim"))).is_empty());
    // ...and the next start restores them before serving.
    let d2 = Daemon::start(dir.path(), &[]);
    let diff = changed(&before, &snapshot(&dir.path().join("sim")));
    assert!(diff.is_empty(), "{diff:#?}\n{}", d2.log());
    assert!(d2.log().contains("recovered"), "{}", d2.log());
}

#[test]
fn sigterm_restores_everything_and_exits_cleanly() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let before = snapshot(&dir.path().join("sim"));
    let mut c = d.client();
    c.acquire(
        None,
        Lease::UntilReleased,
        Priority::ThirdPartyLow,
        &[(0x44008100, 1958400), (0x4400C000, 1516800)],
    )
    .unwrap();
    c.acquire(
        None,
        Lease::UntilReleased,
        Priority::SystemLow,
        &[(0x48C08000, 0), (0x49400031, 1)],
    )
    .unwrap();
    assert!(!changed(&before, &snapshot(&dir.path().join("sim"))).is_empty());
    d.signal(15);
    let socket = d.socket.clone();
    let st = d.wait();
    assert!(st.success(), "{st:?}");
    let diff = changed(&before, &snapshot(&dir.path().join("sim")));
    assert!(diff.is_empty(), "{diff:#?}");
    assert!(!socket.exists(), "socket removed on exit");
    // The journal is clean: `lever restore` has nothing to do.
    let out = Command::new(LEVER)
        .args(["restore", "--state-dir", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to restore"));
}

#[test]
fn sighup_reload_keeps_the_last_good_config() {
    let dir = state_dir();
    // First create the board, then run on it with a target file we can break.
    let root = dir.path().join("sim");
    lever_sim::create("qcs6490", &root).unwrap();
    let target = dir.path().join("target.yaml");
    std::fs::write(&target, lever_targets::builtin_text("qcs6490").unwrap()).unwrap();
    let d = Daemon::start(
        dir.path(),
        &[
            "--root",
            root.to_str().unwrap(),
            "--target",
            target.to_str().unwrap(),
        ],
    );
    let mut c = d.client();
    let h = c
        .acquire(
            None,
            Lease::UntilReleased,
            Priority::ThirdPartyLow,
            &[(0x44008100, 1958400)],
        )
        .unwrap();
    std::fs::write(
        &target,
        "target: broken\nresources:\n  - name: x\n    colour: red\n",
    )
    .unwrap();
    d.signal(1);
    wait_until(Duration::from_secs(5), || d.log().contains("reload failed"))
        .expect("reload attempted");
    assert!(d.log().contains("target.yaml:4:5"), "{}", d.log());
    // Still serving with the old config and the lease intact.
    assert_eq!(d.node(SILVER_MIN), "1958400");
    assert_eq!(c.ping().unwrap(), 1);
    // A good file is taken, and live requests survive the reload.
    std::fs::write(&target, lever_targets::builtin_text("qcs6490").unwrap()).unwrap();
    d.signal(1);
    wait_until(Duration::from_secs(5), || {
        d.log().contains("reloaded target qcs6490")
    })
    .expect("reloaded");
    assert_eq!(d.node(SILVER_MIN), "1958400");
    c.release(h).unwrap();
    assert_eq!(d.node(SILVER_MIN), "300000");
}

#[test]
fn acquire_durations_take_units() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let out = Command::new(LEVER)
        .args(["acquire", "--socket", d.socket.to_str().unwrap(), "--json"])
        .args(["-d", "2s", "--detach", "cpu_min_freq.silver=1958400"])
        .output()
        .unwrap();
    common::assert_success(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["duration_ms"], 2000);
    assert_eq!(doc["detached"], true);
    let mut c = d.client();
    let status = c.status().unwrap();
    assert_eq!(status.requests[0].lease, Lease::from_ms(2000));
    assert_eq!(
        status.requests[0].handle.get() as u64,
        doc["handle"].as_u64().unwrap()
    );
    c.release(status.requests[0].handle).unwrap();
}

#[test]
fn detached_request_outlives_its_client_and_a_second_daemon_is_refused() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let out = Command::new(LEVER)
        .args([
            "acquire",
            "--socket",
            d.socket.to_str().unwrap(),
            "-d",
            "400",
            "--detach",
            "cpu_min_freq.silver=1958400",
        ])
        .output()
        .unwrap();
    common::assert_success(&out);
    let handle: Handle = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert_eq!(d.node(SILVER_MIN), "1958400");
    // Same uid may release it from another process.
    let mut c = d.client();
    c.release(handle).unwrap();
    assert_eq!(d.node(SILVER_MIN), "300000");
    let err = c.release(handle).unwrap_err();
    assert!(matches!(err, ClientError::Refused { .. }));
    // A second daemon on the same socket refuses to start.
    let out = Command::new(LEVER)
        .args([
            "daemon",
            "--sim",
            "qcs6490",
            "--state-dir",
            dir.path().join("other").to_str().unwrap(),
            "--socket",
            d.socket.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already listening"));
}

#[test]
fn systemd_unit_verifies() {
    let unit = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../packaging/systemd/lever.service"
    );
    let Ok(out) = Command::new("systemd-analyze").arg("--version").output() else {
        eprintln!("skipped: systemd-analyze is not installed");
        return;
    };
    assert!(out.status.success());
    // Point the unit at the binary under test, then let systemd check it.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(unit)
        .unwrap()
        .replace("/usr/bin/lever", LEVER);
    let copy = dir.path().join("lever.service");
    std::fs::write(&copy, text).unwrap();
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&copy)
        .output()
        .unwrap();
    let msg =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    let problems: Vec<&str> = msg
        .lines()
        .filter(|l| l.contains("lever.service"))
        .collect();
    assert!(problems.is_empty(), "{msg}");
}

/// utime + stime of a process in clock ticks (`/proc/PID/stat` fields 14
/// and 15, counted after the `(comm)` field).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let f: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
        .split_whitespace()
        .collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

#[test]
fn busy_poll_serves_bursts_and_still_sleeps_when_idle() {
    let dir = state_dir();
    // Without app detection: with it, every exec on this machine (other
    // jobs' compilers) wakes the daemon to read a comm, by design.
    let d = Daemon::start(dir.path(), &["--busy-poll-us", "2000", "--no-apps"]);
    let mut c = d.client();
    for _ in 0..200 {
        let h = c
            .acquire(
                None,
                Lease::UntilReleased,
                Priority::ThirdPartyLow,
                &[(0x44008100, 1958400)],
            )
            .unwrap();
        assert_eq!(d.node(SILVER_MIN), "1958400");
        c.release(h).unwrap();
        assert_eq!(d.node(SILVER_MIN), "300000");
    }
    // A timed request still expires on time while the loop polls.
    c.acquire(
        None,
        Lease::from_ms(50),
        Priority::ThirdPartyLow,
        &[(0x44008100, 1958400)],
    )
    .unwrap();
    assert!(
        wait_until(Duration::from_millis(500), || d.node(SILVER_MIN)
            == "300000")
        .is_some(),
        "timed request did not expire"
    );
    // Then nothing happens: the window ends and the daemon sleeps. A loop
    // that kept polling would burn a whole CPU second (100 ticks) here.
    std::thread::sleep(Duration::from_millis(50));
    let before = cpu_ticks(d.child.id());
    std::thread::sleep(Duration::from_secs(1));
    let used = cpu_ticks(d.child.id()) - before;
    assert!(
        used <= 2,
        "daemon used {used} clock ticks while idle for 1 s"
    );
}

#[test]
fn bench_daemon_reports_lever_and_floor_rows_with_memory() {
    let out = common::ok(&[
        "--json",
        "bench-daemon",
        "--clients",
        "1,4",
        "--operations",
        "400",
        "--idle-secs",
        "1",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let what: Vec<(&str, u64)> = rows
        .iter()
        .map(|r| (r["what"].as_str().unwrap(), r["clients"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        what,
        [("acquire", 1), ("floor", 1), ("acquire", 4), ("floor", 4)]
    );
    for r in rows {
        assert_eq!(r["operations"].as_u64().unwrap(), 400, "{r}");
        let p50 = r["p50_us"].as_f64().unwrap();
        let p99 = r["p99_us"].as_f64().unwrap();
        assert!(p50 > 0.0 && p50 <= p99 && p99 <= r["max_us"].as_f64().unwrap());
        assert!(r["acquire_release_per_s"].as_f64().unwrap() > 0.0);
    }
    // The workload: newest-wins resources, so every acquire writes a node.
    let workload: Vec<&str> = v["workload"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        workload.iter().any(|w| w.starts_with("vm_swappiness")),
        "{workload:?}"
    );
    assert!(v["rss_kb_idle_start"].as_u64().unwrap() > 0);
    assert!(v["rss_kb_after_load"].as_u64().unwrap() > 0);
    assert!(v["idle_cpu_ticks"].as_u64().is_some());
}

/// Run `lever acquire -d 0 ARGS` until its report is printed, then kill it
/// (which ends the lease). Returns its stdout lines.
fn acquire_report(d: &Daemon, args: &[&str]) -> Vec<String> {
    let mut child = Command::new(LEVER)
        .args(["acquire", "--socket", d.socket.to_str().unwrap(), "-d", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    // The handle line, then two lines per pair.
    for _ in 0..1 + 2 * args.iter().filter(|a| a.contains('=')).count() {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        lines.push(line.trim_end().to_string());
    }
    child.kill().unwrap();
    child.wait().unwrap();
    lines
}

#[test]
fn acquire_says_what_was_clamped_snapped_and_who_capped_it() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let lines = acquire_report(&d, &["0x44008100=99999999"]);
    assert!(lines[0].contains("acquired handle"), "{lines:?}");
    assert!(
        lines[1].contains(
            "asked 99999999 kHz, holds 1958400 kHz: clamped to the resource's max 1958400 kHz"
        ),
        "{lines:?}"
    );
    assert_eq!(lines[2].trim(), "node now 1958400 kHz", "{lines:?}");
    let lines = acquire_report(&d, &["0x44008100=1000000"]);
    assert!(
        lines[1].contains("holds 1152000 kHz: snapped up to the next table frequency 1152000 kHz"),
        "{lines:?}"
    );
    // A ceiling held by another client caps a boost: the report names it.
    let mut c = d.client();
    let cap = c
        .acquire(
            None,
            Lease::UntilReleased,
            Priority::ThirdPartyLow,
            &[(0x4400C100, 806400)],
        )
        .unwrap();
    // Root sees every handle; another uid sees "another client".
    let who = if is_root() {
        cap.to_string()
    } else {
        "another client".to_string()
    };
    let lines = acquire_report(&d, &["cpu_min_freq.silver=1958400"]);
    assert!(
        lines[2].contains(&format!(
            "node now 806400 kHz: capped by the ceiling cpu_max_freq.silver = 806400 kHz (request {who}, third-party-low): a ceiling beats a floor"
        )),
        "{lines:?}"
    );
    // --json carries the same report. The lease outlives the explain and
    // status below, also when each command takes a second (qemu-user).
    let out = Command::new(LEVER)
        .args(["acquire", "--socket", d.socket.to_str().unwrap(), "--json"])
        .args(["-d", "10s", "--detach", "0x44008100=99999999"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["resources"][0];
    assert_eq!(
        (r["asked"].as_i64(), r["held"].as_i64()),
        (Some(99999999), Some(1958400))
    );
    assert_eq!(
        r["clamped"],
        serde_json::json!({"bound": "max", "to": 1958400})
    );
    assert_eq!(r["applied"], 806400);
    assert_eq!(r["cause"]["type"], "pair");
    if is_root() {
        assert_eq!(r["cause"]["by"]["handle"], cap.get());
    }
    // explain names the request that capped the boost.
    let out = Command::new(LEVER)
        .args([
            "explain",
            "--socket",
            d.socket.to_str().unwrap(),
            "cpu_min_freq.silver",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "decided by:  the ceiling cpu_max_freq.silver = 806400 kHz (request {who}, third-party-low), which beats a floor"
        )),
        "{text}"
    );
    // status prints values in their unit; --json keeps the raw numbers.
    let status = |json: bool| {
        let mut cmd = Command::new(LEVER);
        cmd.args(["status", "--held", "--socket", d.socket.to_str().unwrap()]);
        if json {
            cmd.arg("--json");
        }
        String::from_utf8(cmd.output().unwrap().stdout).unwrap()
    };
    let text = status(false);
    let row = text
        .lines()
        .find(|l| l.contains("cpu_min_freq.silver"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        row.contains("806.4 MHz") && row.contains("300 MHz"),
        "{row}"
    );
    assert!(text.contains("cpu_max_freq.silver=806.4 MHz"), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&status(true)).unwrap();
    let silver = doc["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "cpu_min_freq.silver")
        .unwrap();
    assert_eq!(
        (silver["current"].as_str(), silver["unit"].as_str()),
        (Some("806400"), Some("kHz"))
    );
    assert_eq!(doc["requests"][0]["pairs"][0]["unit"], "kHz");
}
