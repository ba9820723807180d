//! What a real `lever daemon` (not `--quiet`) logs, on a simulated
//! qcs6490: counts that match the writes it logged, and requests named by
//! what a user can see — the handle clients know, the app and its pid, the
//! client's pid — never an internal id (issue 27 item 7).

mod common;

use common::daemon::{state_dir, wait_until, Daemon};
use common::LEVER;
use lever_client::{Lease, Priority};
use std::process::Command;
use std::time::Duration;

fn lever_at(d: &Daemon, args: &[&str]) {
    let out = Command::new(LEVER)
        .args(args)
        .env("LEVER_SOCKET", &d.socket)
        .output()
        .unwrap();
    common::assert_success(&out);
}

/// The `set` lines logged for `why`, as (old, new) values.
fn sets<'a>(log: &'a str, why: &str) -> Vec<(&'a str, &'a str)> {
    let tail = format!(" ({why})");
    log.lines()
        .filter(|l| l.starts_with("lever daemon: set "))
        .filter_map(|l| l.strip_suffix(&tail))
        .filter_map(|l| {
            let (_, values) = l.rsplit_once(": ")?;
            values.split_once(" -> ")
        })
        .collect()
}

/// Numbers too big for a handle (31-bit) or a pid: the request ids of an
/// app's own task settings (1 << 62 | owner) and the owner ids of apps
/// (from 1 << 40) were logged as such.
fn internal_ids(log: &str) -> Vec<&str> {
    log.split(|c: char| !c.is_ascii_digit())
        .filter(|t| t.parse::<u128>().is_ok_and(|n| n > u128::from(u32::MAX)))
        .collect()
}

#[test]
fn the_profile_line_counts_the_writes_it_made() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &["--no-apps"]);
    lever_at(&d, &["profile", "apply", "performance"]);
    let line = "profile performance in effect:";
    assert!(
        wait_until(Duration::from_secs(5), || d.log().contains(line)).is_some(),
        "{}",
        d.log()
    );
    let log = d.log();
    let sets = sets(&log, "profile performance");
    let changed = sets.iter().filter(|(old, new)| old != new).count();
    let same = sets.len() - changed;
    // On the simulated qcs6490 the performance profile raises the three
    // clusters' floors and governors and the GPU floor; the caps and the
    // uclamp values already hold its values.
    assert_eq!((changed, same), (7, 6), "{log}");
    assert!(
        log.contains(&format!(
            "{line} {changed} node(s) written, {same} already held the value, 13 resource(s) held"
        )),
        "{log}"
    );
    assert!(internal_ids(&log).is_empty(), "{log}");
}

#[test]
fn apps_and_clients_are_named_by_app_pid_and_handle_not_internal_ids() {
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &["--no-apps"]);
    // An app with its own task plan (move_to, a thread rule) and a use
    // case: lever run registers it, it exits soon after. (Not `true`: a
    // command gone before its pid reaches the daemon has nothing to
    // configure, and under qemu-user the client is slow enough for that.)
    lever_at(&d, &["run", "--app", "gst-camera", "--", "sleep", "1"]);
    assert!(
        wait_until(Duration::from_secs(5), || d
            .log()
            .contains("exited: its configuration is released"))
        .is_some(),
        "{}",
        d.log()
    );
    // A client that holds a request and goes away.
    let mut c = d.client();
    let handle = c
        .acquire(
            None,
            Lease::UntilReleased,
            Priority::SystemLow,
            &[(0x4400_8100, 1_152_000)],
        )
        .unwrap()
        .get();
    drop(c);
    let me = std::process::id();
    assert!(
        wait_until(Duration::from_secs(5), || d
            .log()
            .contains(&format!("(client pid {me} ")))
        .is_some(),
        "{}",
        d.log()
    );
    let log = d.log();
    assert!(
        internal_ids(&log).is_empty(),
        "{:?}\n{log}",
        internal_ids(&log)
    );
    // The app's own task plan is the app's, with its pid.
    let app = log
        .lines()
        .find(|l| l.contains("app gst-camera (pid ") && l.contains("task setting(s) applied"))
        .unwrap_or_else(|| panic!("{log}"));
    assert!(!app.contains("use case app"), "{app}");
    // Its use case's request, released when the process ended, and the
    // client's request, by the handle the client got.
    assert!(log.contains("(process pid "), "{log}");
    assert!(log.contains("ended, 1 request(s) released)"), "{log}");
    assert!(
        log.contains(&format!("(request {handle} pid {me} ")),
        "{log}"
    );
}
