//! `lever status` shows what is held by default (issue 27: one request
//! listed all 58 resources of the board); `--all` lists every resource.
mod common;

use common::daemon::{state_dir, Daemon};
use std::process::Command;

fn status(d: &Daemon, extra: &[&str]) -> String {
    let out = Command::new(common::LEVER)
        .arg("status")
        .args(extra)
        .env("LEVER_SOCKET", &d.socket)
        .output()
        .unwrap();
    common::assert_success(&out);
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn status_shows_what_is_held_and_all_lists_everything() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &[]);
    let idle = status(&d, &[]);
    assert!(idle.contains("no resource is held"), "{idle}");
    let mut client = d.client();
    let _h = client
        .acquire(
            None,
            lever_client::Lease::UntilReleased,
            lever_client::Priority::ThirdPartyLow,
            &[(0x4400_8100, 1_958_400)],
        )
        .unwrap();
    let held = status(&d, &[]);
    let all = status(&d, &["--all"]);
    let rows = |text: &str| text.lines().filter(|l| l.starts_with("0x")).count();
    assert_eq!(rows(&held), 1, "{held}");
    assert!(held.contains("cpu_min_freq.silver"), "{held}");
    let total = rows(&all);
    assert!(total > 20, "{all}");
    assert!(
        held.contains(&format!(
            "{} other resource(s) at their original value",
            total - 1
        )),
        "{held}"
    );
    assert!(!all.contains("other resource(s)"), "{all}");
    // The old flag still works and means the default.
    assert_eq!(status(&d, &["--held"]), held);
}

/// `--sim BOARD --target T`: a target of one's own (here the built-in
/// `generic`) bound to the simulated board, not refused as a conflict.
#[test]
fn sim_and_target_combine() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &["--target", "generic"]);
    let doc: serde_json::Value = serde_json::from_str(&status(&d, &["--json"])).unwrap();
    assert_eq!(doc["target"], "generic", "{doc}");
    assert!(
        doc["root"].as_str().unwrap().ends_with("/sim"),
        "the simulated board's root: {doc}"
    );
}
