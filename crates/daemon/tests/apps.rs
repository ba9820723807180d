//! App detection without the connector's events: the `/proc` scan at start
//! (apps already running) and the rescan after a netlink overrun
//! (`WatchError::Overrun`), over a fake tree whose `/proc` entries describe
//! real child processes (the pidfds are real).

mod common;

use common::{fixture_of, Fixture, TARGET, UCLAMP};
use lever_daemon::apps::AppWatch;
use lever_daemon::core::Limits;
use lever_daemon::seats::Seats;
use lever_daemon::server::ConnLimits;
use lever_procwatch::{ProcEvent, WatchError};
use lever_testkit::FakeTree;
use std::process::{Child, Command};
use std::time::Duration;

const APPS: &str = "
usecases:
  - name: sleepy
    id: 0x00030020
    resources:
      sched_util_clamp_min: 512
app_filter:
  require_tty_or_display: false
apps:
  - name: sleeper
    exec: sleep
    usecases: [sleepy]
";

fn board() -> Fixture {
    let tree = FakeTree::with(&[
        (UCLAMP, "0\n"),
        (common::RT, "950000\n"),
        (common::GOVERNOR, "schedutil\n"),
    ]);
    fixture_of(tree, &format!("{TARGET}{APPS}"), Limits::default())
}

/// A real `sleep` and its `/proc` entries in the fake tree.
fn sleeper(f: &Fixture, comm: &str) -> Child {
    let child = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = child.id();
    for (file, text) in [
        ("comm", format!("{comm}\n")),
        ("cmdline", format!("{comm}\u{0}30\u{0}")),
        ("stat", format!("{pid} ({comm}) S 1 {pid} {pid} 0 -1 0")),
        ("status", format!("Name:\t{comm}\nUid:\t0\t0\t0\t0\n")),
        ("cgroup", "0::/user.slice\n".to_string()),
    ] {
        f.tree.node(&format!("/proc/{pid}/{file}"), &text);
    }
    child
}

#[test]
fn the_scan_at_start_configures_apps_already_running_and_only_those() {
    let mut f = board();
    let mut app = sleeper(&f, "sleep");
    let mut other = sleeper(&f, "bash");
    f.tree.node("/proc/self/comm", "sleep\n"); // not a pid: passed over
    let mut w = AppWatch::matcher_only(&f.core, f.tree.fs().clone()).unwrap();
    let mut seats = Seats::new(ConnLimits::for_nofile(1024));
    assert!(w.fd().is_none(), "no connector in this mode");
    let started = w.scan(&mut f.core, &mut seats, Duration::ZERO);
    assert_eq!(started.conns.len(), 1, "{:?}", started.log);
    assert!(started
        .log
        .iter()
        .any(|l| l.contains(&format!("app sleeper started: pid {}", app.id()))));
    assert_eq!(f.node(UCLAMP), "512");
    // A second scan finds nothing new: the app is configured once.
    assert!(w
        .scan(&mut f.core, &mut seats, Duration::ZERO)
        .conns
        .is_empty());
    let running: Vec<_> = w.running().map(|(_, n, p)| (n.to_string(), p)).collect();
    assert_eq!(running, [("app sleeper".to_string(), app.id() as i32)]);
    // Its exit releases it.
    app.kill().unwrap();
    app.wait().unwrap();
    w.exited(&mut f.core, &mut seats, started.conns[0]).unwrap();
    assert_eq!(f.node(UCLAMP), "0");
    other.kill().unwrap();
    other.wait().unwrap();
}

#[test]
fn an_overrun_triggers_a_rescan_that_finds_apps_whose_exec_was_lost() {
    let mut f = board();
    let mut w = AppWatch::matcher_only(&f.core, f.tree.fs().clone()).unwrap();
    let mut seats = Seats::new(ConnLimits::for_nofile(1024));
    // No events lost: an exec of a process no entry matches does nothing.
    let mut first = sleeper(&f, "bash");
    let quiet = w.on_events(
        &mut f.core,
        &mut seats,
        Ok(vec![ProcEvent::Exec {
            pid: first.id() as i32,
            tgid: first.id() as i32,
            timestamp_ns: 0,
        }]),
        Duration::ZERO,
    );
    assert!(quiet.conns.is_empty());
    // Apps start while the queue overflows: their exec events are gone.
    let mut lost = sleeper(&f, "sleep");
    let started = w.on_events(
        &mut f.core,
        &mut seats,
        Err(WatchError::Overrun),
        Duration::ZERO,
    );
    assert_eq!(started.conns.len(), 1, "{:?}", started.log);
    assert!(
        started.log[0].contains("netlink queue overrun): rescanned /proc, 1 app(s) found"),
        "{:?}",
        started.log
    );
    assert_eq!(f.node(UCLAMP), "512");
    // Another error is only logged.
    let other = w.on_events(
        &mut f.core,
        &mut seats,
        Err(WatchError::Gone { pid: 1 }),
        Duration::ZERO,
    );
    assert!(other.conns.is_empty() && other.log[0].starts_with("process connector:"));
    for c in [&mut first, &mut lost] {
        c.kill().unwrap();
        c.wait().unwrap();
    }
}

/// Apps count against whom they are for: a third-party uid's apps take its
/// share of the live requests and never the system reserve, and a refused
/// app leaves nothing behind; the system reserve stays root's.
#[test]
fn a_third_party_uids_apps_never_take_the_system_reserve() {
    let tree = FakeTree::with(&[
        (UCLAMP, "0\n"),
        (common::RT, "950000\n"),
        (common::GOVERNOR, "schedutil\n"),
    ]);
    let limits = Limits {
        live_requests: 4,
        system_reserve: 2,
        ..Limits::default()
    };
    let mut f = fixture_of(tree, &format!("{TARGET}{APPS}"), limits);
    let nobody = common::client(1, 65534, false).id;
    let root = common::client(2, 0, true).id;
    let app = |f: &mut Fixture, owner: u64, id: &lever_daemon::identity::Identity| {
        f.core
            .app_started(owner, 4000 + owner as i32, id, "sleeper", Duration::ZERO)
    };
    assert!(app(&mut f, 101, &nobody).is_ok());
    assert!(app(&mut f, 102, &nobody).is_ok());
    let refused = app(&mut f, 103, &nobody).unwrap_err();
    match refused {
        lever_protocol::Reply::Error { code, message } => {
            assert_eq!(code, lever_protocol::ErrorCode::Limit);
            assert!(
                message.contains("app sleeper, use case sleepy")
                    && message.contains("kept for system clients"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(f.core.live(), 2, "the refused app left nothing behind");
    // The reserve is root's: two more apps of root's.
    assert!(app(&mut f, 104, &root).is_ok());
    assert!(app(&mut f, 105, &root).is_ok());
    assert_eq!(f.core.live(), 4);
    f.core.app_exited(101);
    assert_eq!(f.core.live(), 3);
    assert!(app(&mut f, 106, &nobody).is_ok(), "its share came back");
}
