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
