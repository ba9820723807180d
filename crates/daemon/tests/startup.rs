//! Start-up and the journal under failure: what the daemon does with a
//! `--socket` that names someone's file, and with an original it could
//! not write back at start (issue 11, items 6 and 8).

mod common;

use common::{TARGET, UCLAMP};
use lever_daemon::core::{Client, Core, Limits};
use lever_daemon::identity::Identity;
use lever_daemon::journal::Journal;
use lever_daemon::log::Logger;
use lever_protocol::{Reply, Request, Status};
use lever_testkit::FakeTree;
use lever_tunables::OriginalsLog;
use std::time::Duration;

fn tree() -> FakeTree {
    FakeTree::with(&[
        (UCLAMP, "0\n"),
        (common::RT, "950000\n"),
        (common::GOVERNOR, "schedutil\n"),
    ])
}

#[test]
fn a_socket_path_naming_a_regular_file_is_refused_and_the_file_kept() {
    let tree = tree();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("tiny.yaml");
    std::fs::write(&target, TARGET).unwrap();
    let precious = dir.path().join("notes.txt");
    std::fs::write(&precious, "keep me").unwrap();
    let config = lever_daemon::Config {
        root: tree.root().to_path_buf(),
        target: Some(target.display().to_string()),
        socket: precious.clone(),
        state_dir: dir.path().join("state"),
        quiet: true,
        ..lever_daemon::Config::default()
    };
    // A daemon that replaced the file would serve on: wait a bounded time.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(lever_daemon::run(config).map_err(|e| e.to_string())));
    let err = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the daemon started on a path that is not a socket")
        .unwrap_err();
    assert!(err.contains("not a socket"), "{err}");
    assert!(err.contains("notes.txt"), "{err}");
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me");
    // The state directory it created on the way is private.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir.path().join("state"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
}

fn status(core: &mut Core) -> Status {
    let root = Client::new(
        1,
        Identity {
            pid: 1,
            uid: 0,
            gid: 0,
            exe: None,
            system: true,
        },
    );
    match core.handle(&root, Request::Status, Duration::ZERO) {
        Reply::Json(t) => serde_json::from_str(&t).unwrap(),
        other => panic!("{other:?}"),
    }
}

/// Boost, crash, node unwritable at start (a directory in its place:
/// that stops root too, unlike `chmod 0444`): STATUS lists the owed
/// original until a retry writes it.
#[test]
fn status_shows_an_original_owed_since_start_until_it_is_written() {
    let tree = tree();
    let state = tempfile::tempdir().unwrap();
    let (mut j, _) = Journal::recover_and_open(state.path(), tree.fs()).unwrap();
    j.record(UCLAMP, "0").unwrap();
    tree.node(UCLAMP, "512");
    drop(j);
    std::fs::remove_file(tree.host_path(UCLAMP)).unwrap();
    std::fs::create_dir(tree.host_path(UCLAMP)).unwrap();
    let (journal, rec) = Journal::recover_and_open(state.path(), tree.fs()).unwrap();
    assert!(rec.restored[0].result.is_err());
    std::fs::remove_dir(tree.host_path(UCLAMP)).unwrap();
    tree.node(UCLAMP, "512");
    let target = lever_targets::parse("tiny.yaml", TARGET)
        .unwrap()
        .bind(tree.fs())
        .unwrap();
    let mut core = Core::new(
        tree.fs().clone(),
        target,
        journal,
        Limits::default(),
        Logger::quiet(),
    )
    .unwrap();
    let owed = status(&mut core).unrestored;
    assert_eq!(owed.len(), 1);
    assert_eq!(
        (owed[0].node.as_str(), owed[0].original.as_str()),
        (UCLAMP, "0")
    );
    let done = core.journal_mut().retry_unrestored().unwrap();
    assert_eq!(done.len(), 1);
    assert_eq!(tree.read(UCLAMP).trim(), "0");
    assert!(status(&mut core).unrestored.is_empty());
}
