//! How `lever` fails: a bad `--root` or state directory is an error, not an
//! empty machine; `--json` errors are objects with a stable code; exit codes
//! are the ones `docs/cli.md` lists.

mod common;

use std::process::Output;

fn code(out: &Output) -> Option<i32> {
    out.status.code()
}

#[test]
fn a_root_that_is_not_a_kernel_tree_is_refused_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("nonexistent");
    let typo = typo.to_str().unwrap();
    let empty = dir.path().to_str().unwrap();
    for args in [
        vec!["resources"],
        vec!["target", "check", "generic"],
        vec!["cpu"],
        vec!["mem", "map"],
    ] {
        for (root, why) in [
            (typo, "no such directory"),
            (empty, "holds neither sys/ nor proc/"),
        ] {
            let mut argv = vec!["--root", root];
            argv.extend(&args);
            let out = common::lever(&argv);
            assert_eq!(code(&out), Some(3), "lever {argv:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(&format!("--root {root}: {why}")), "{err}");
        }
    }
    // The daemon must not start with zero resources on a typo either.
    let state = dir.path().join("state");
    let out = common::lever(&[
        "daemon",
        "--root",
        typo,
        "--state-dir",
        state.to_str().unwrap(),
        "--socket",
        dir.path().join("s.sock").to_str().unwrap(),
    ]);
    assert_eq!(code(&out), Some(3));
}

#[test]
fn restore_with_a_mistyped_state_dir_fails() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("typo");
    let out = common::lever(&["restore", "--state-dir", typo.to_str().unwrap()]);
    assert_eq!(code(&out), Some(4), "an ExecStopPost= must see this fail");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("state directory"), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("clean"));
    // An existing state directory without a journal is clean.
    let out = common::lever(&["restore", "--state-dir", dir.path().to_str().unwrap()]);
    assert!(out.status.success());
}

#[test]
fn json_errors_are_objects_with_a_stable_code() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("none.sock");
    let out = common::lever(&["status", "--json", "--socket", sock.to_str().unwrap()]);
    assert_eq!(code(&out), Some(7));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON object");
    assert_eq!(doc["error"]["code"], "daemon_unreachable");
    assert_eq!(doc["error"]["exit_code"], 7);
    assert!(doc["error"]["message"]
        .as_str()
        .unwrap()
        .contains("none.sock"));

    let out = common::lever(&["--json", "mem", "procs", "--no-such-flag"]);
    assert_eq!(code(&out), Some(2));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["code"], "usage");

    let log = dir.path().join("missing.log");
    let out = common::lever(&["--json", "boot", "--serial", log.to_str().unwrap()]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["code"], "not_available", "{doc}");
    assert_eq!(code(&out), Some(4));

    // Without --json, stdout stays empty and the text goes to stderr.
    let out = common::lever(&["status", "--socket", sock.to_str().unwrap()]);
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("lever: error: cannot connect"));
}

/// Run each command line in its own thread (the binary starts in a few ms;
/// side by side the table takes about as long as its slowest line).
fn run_all(lines: Vec<Vec<String>>) -> Vec<(Vec<String>, Output)> {
    let handles: Vec<_> = lines
        .into_iter()
        .map(|argv| {
            std::thread::spawn(move || {
                let out = std::process::Command::new(common::LEVER)
                    .args(&argv)
                    .env_remove("LEVER_SOCKET")
                    .output()
                    .unwrap();
                (argv, out)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

/// The rule of docs/cli.md, end to end: a flag value that does not parse
/// or make sense exits 3 naming the flag (issue 27's lines among them),
/// before anything is done; an unknown flag or missing argument exits 2
/// with clap's one `error:`; a check that fails exits 1 after its result.
#[test]
fn one_exit_code_rule() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let sim = format!("{d}/sim");
    common::ok(&["sim", "create", "qcs6490", &sim]);
    let trace = format!("{d}/t.txt");
    std::fs::write(&trace, "").unwrap();
    let bad: Vec<(String, &str)> = vec![
        ("perflock --acq 0 100 zz,1".into(), "--acq"),
        ("signal camera-preview --attr fps=abc".into(), "--attr"),
        ("signal camera-preview --attr fps=0".into(), "--attr"),
        ("mem thrash --duration 0".into(), "--duration"),
        ("mem map --interval 0".into(), "--interval"),
        (format!("trace analyze --kpi bogus {trace}"), "--kpi"),
        (format!("sim create nosuch {d}/board"), "<BOARD>"),
        ("daemon --sim nosuch".into(), "--sim"),
        (format!("--root {sim} rt check --rt-cpus 99"), "--rt-cpus"),
        (format!("--root {sim} rt check --rt-cpus 1-"), "--rt-cpus"),
        ("acquire -d 1s cpu_min_freq.silver".into(), "<RES=VALUE>"),
        ("acquire -d soon 0x44008100=1".into(), "--duration"),
        ("results --db mysql://lab/db list".into(), "--db"),
        ("results list --since yesterday".into(), "--since"),
        ("bench --max-time forever --list".into(), "--max-time"),
        ("bench --only no-such-test".into(), "--only"),
        ("completions tcsh".into(), "<SHELL>"),
        ("latency -i soon -l 1".into(), "-i"),
        (format!("--root {sim} status"), "--root"),
        (format!("acquire -d 1s 0x44008100=1 --root {sim}"), "--root"),
    ];
    let usage = [
        "latency --bogus",
        "latency import",
        "mem procs --no-such-flag",
        "sim create",
    ];
    let help = [
        "latency --help",
        "latency import --help",
        "latency kpi --help",
        "rt check --help",
    ];
    let mut lines: Vec<Vec<String>> = bad.iter().map(|(l, _)| words(l)).collect();
    lines.extend(usage.iter().chain(&help).map(|l| words(l)));
    let outs = run_all(lines);
    for ((argv, out), (_, flag)) in outs.iter().zip(&bad) {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(out), Some(3), "lever {argv:?}: {err}");
        assert!(
            err.contains(flag),
            "lever {argv:?} does not name {flag}: {err}"
        );
    }
    for (argv, out) in &outs[bad.len()..bad.len() + usage.len()] {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(out), Some(2), "lever {argv:?}: {err}");
        assert_eq!(err.matches("error:").count(), 1, "lever {argv:?}: {err}");
    }
    for (argv, out) in &outs[bad.len() + usage.len()..] {
        assert_eq!(code(out), Some(0), "lever {argv:?}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Usage"),
            "{argv:?}"
        );
    }
}

/// Check commands fail (exit 1) when a check fails, having printed their
/// result: `rt check` with a FAIL, `profile verify` with a drifted node
/// (`results trend` on a metric no run has: tests/results.rs).
#[test]
fn failed_checks_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let sim = format!("{d}/sim");
    common::ok(&["sim", "create", "qcs6490", &sim]);
    // The simulated board has no PREEMPT_RT kernel: FAILs.
    let out = common::lever(&["--root", &sim, "rt", "check"]);
    assert_eq!(code(&out), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("FAIL"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("checks failed"));
    // --json: the report on stdout, and only the report.
    let out = common::lever(&["--root", &sim, "--json", "rt", "check"]);
    assert_eq!(code(&out), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one document");
    assert!(doc["checks"].is_array(), "{doc}");

    // Applied, then a node changed behind the profile's back.
    let state = format!("{d}/profile.state");
    common::ok(&[
        "--root",
        &sim,
        "profile",
        "apply",
        "--direct",
        "performance",
        "--state",
        &state,
    ]);
    let again = common::lever(&[
        "--root",
        &sim,
        "profile",
        "apply",
        "--direct",
        "performance",
        "--state",
        &state,
    ]);
    assert_eq!(code(&again), Some(3), "a second apply --direct: {again:?}");
    common::ok(&["--root", &sim, "profile", "verify", "--state", &state]);
    let node = format!("{sim}/sys/devices/system/cpu/cpufreq/policy0/scaling_governor");
    std::fs::write(&node, "powersave\n").unwrap();
    let out = common::lever(&["--root", &sim, "profile", "verify", "--state", &state]);
    assert_eq!(code(&out), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("drifted"));
}

/// Values only the daemon's table can judge are bad input too (exit 3,
/// naming the pair): `acquire RES=abc` on a numeric resource.
#[test]
fn a_value_the_resource_does_not_take_is_bad_input() {
    let dir = common::daemon::state_dir();
    let d = common::daemon::Daemon::start(dir.path(), &[]);
    let sock = d.socket.to_str().unwrap().to_string();
    let outs = run_all(vec![
        words(&format!(
            "acquire -d 1s --socket {sock} cpu_min_freq.silver=abc"
        )),
        words(&format!("acquire -d 1s --socket {sock} 0x44008100=fast")),
    ]);
    for (argv, out) in outs {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(&out), Some(3), "lever {argv:?}: {err}");
        assert!(
            err.contains("RES=VALUE") && err.contains("is not an integer"),
            "{err}"
        );
    }
}
