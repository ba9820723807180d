//! The state directory is owned (issue 26): a daemon locks it for its
//! whole life, before it reads or writes anything there (the simulated
//! board included); a second daemon on it is refused, naming the first's
//! pid, and touches nothing; `lever restore` refuses while the holder
//! lives, and after a `kill -9` of it puts every node back. The directory
//! is created 0700 with or without `--sim` (0711 when the socket is inside).

mod common;

use common::{snapshot, LEVER};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

const SILVER_MIN: &str = "sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq";

fn daemon(state: &Path, socket: &Path, board: &[&str]) -> Command {
    let mut cmd = Command::new(LEVER);
    cmd.arg("daemon")
        .args(board)
        .arg("--state-dir")
        .arg(state)
        .arg("--socket")
        .arg(socket);
    cmd
}

fn start(state: &Path, socket: &Path) -> (Child, std::sync::Arc<std::sync::Mutex<String>>) {
    common::spawn_daemon(&mut daemon(state, socket, &["--sim", "qcs6490"]))
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn restore(state: &Path) -> Output {
    Command::new(LEVER)
        .arg("restore")
        .arg("--state-dir")
        .arg(state)
        .output()
        .unwrap()
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// Kills the daemon if the test fails before it does.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_second_daemon_is_refused_and_kill_9_then_restore_puts_the_node_back() {
    let base = common::daemon::state_dir();
    let state: PathBuf = base.path().join("state");
    let sock1 = base.path().join("one.sock");
    let (child, log) = start(&state, &sock1);
    let mut first = Killed(child);
    let pid = first.0.id();
    // Created private, with --sim too (the board is created inside it
    // after the lock), and the lock names its holder.
    assert_eq!(mode(&state), 0o700, "state directory mode");
    assert_eq!(
        std::fs::read_to_string(state.join("lock")).unwrap().trim(),
        pid.to_string()
    );
    let node = state.join("sim").join(SILVER_MIN);
    let original = std::fs::read_to_string(&node).unwrap();
    let out = Command::new(LEVER)
        .args([
            "acquire",
            "--detach",
            "-d",
            "60s",
            "cpu_min_freq.silver=1958400",
        ])
        .env("LEVER_SOCKET", &sock1)
        .output()
        .unwrap();
    common::assert_success(&out);
    assert_eq!(std::fs::read_to_string(&node).unwrap().trim(), "1958400");

    // A second daemon on the same directory, another socket: refused,
    // naming the holder, and not one byte of the directory changes.
    let before = snapshot(&state);
    let journal = std::fs::read(state.join("originals.journal")).unwrap();
    let sock2 = base.path().join("two.sock");
    let out = daemon(&state, &sock2, &["--sim", "qcs6490"])
        .output()
        .unwrap();
    let said = text(&out.stderr);
    eprintln!("second daemon: {}", said.trim());
    assert!(!out.status.success(), "a second daemon started: {said}");
    assert!(
        said.contains(&format!("lever pid {pid}")) && said.contains("in use"),
        "{said}"
    );
    assert!(!sock2.exists(), "the second daemon bound its socket");
    let after = snapshot(&state);
    assert!(
        before == after,
        "the second daemon changed the state directory: {:?}",
        common::changed(&before, &after)
    );
    assert_eq!(
        std::fs::read(state.join("originals.journal")).unwrap(),
        journal
    );
    // The first is unharmed and still holds the boost.
    lever_client::Client::connect(&sock1)
        .unwrap()
        .ping()
        .unwrap();
    assert_eq!(std::fs::read_to_string(&node).unwrap().trim(), "1958400");

    // `lever restore` would fight the live daemon: refused too.
    let out = restore(&state);
    let said = text(&out.stderr);
    eprintln!("restore beside a live daemon: {}", said.trim());
    assert!(!out.status.success(), "{said}");
    assert!(said.contains(&format!("lever pid {pid}")), "{said}");
    assert_eq!(std::fs::read_to_string(&node).unwrap().trim(), "1958400");
    assert_eq!(
        std::fs::read(state.join("originals.journal")).unwrap(),
        journal
    );

    // kill -9: the kernel drops the lock with the process; restore then
    // puts the node back.
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    let out = restore(&state);
    let said = text(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}\n{}",
        text(&out.stderr),
        log.lock().unwrap()
    );
    eprintln!("restore after kill -9: {}", said.trim());
    assert!(said.contains("restored"), "{said}");
    assert_eq!(
        std::fs::read_to_string(&node).unwrap().trim(),
        original.trim()
    );
    // Nothing left: a second restore finds the journal clean.
    let out = restore(&state);
    assert!(text(&out.stdout).contains("nothing to restore"), "{out:?}");
}

#[test]
fn the_state_directory_is_created_private_with_or_without_sim() {
    let base = common::daemon::state_dir();
    // --sim, the socket inside: clients may pass through, not list.
    let inside = base.path().join("inside");
    let (child, _log) = start(&inside, &inside.join("lever.sock"));
    let _first = Killed(child);
    assert_eq!(mode(&inside), 0o711);
    // --root (a board made beforehand), the socket outside: 0700.
    let board = base.path().join("board");
    common::ok(&["sim", "create", "qcs6490", board.to_str().unwrap()]);
    let plain = base.path().join("plain").join("state");
    let mut cmd = daemon(&plain, &base.path().join("plain.sock"), &[]);
    cmd.arg("--root").arg(&board);
    let (child, _log) = common::spawn_daemon(&mut cmd);
    let _second = Killed(child);
    assert_eq!(mode(&plain), 0o700);
    assert_eq!(mode(&plain.join("originals.journal")) & 0o077, 0);
    assert_eq!(mode(&plain.join("lock")), 0o600);
}

#[test]
fn a_stopped_daemon_frees_the_directory_for_the_next() {
    let base = common::daemon::state_dir();
    let state = base.path().join("state");
    let sock = base.path().join("s.sock");
    let (child, log) = start(&state, &sock);
    let first = Killed(child);
    let pid = rustix::process::Pid::from_raw(first.0.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let mut first = first;
    assert!(first.0.wait().unwrap().success());
    assert!(
        log.lock().unwrap().contains("stopped; every node restored"),
        "{}",
        log.lock().unwrap()
    );
    // The next daemon takes the directory at once.
    let (child, _log) = start(&state, &sock);
    let second = Killed(child);
    assert_eq!(
        std::fs::read_to_string(state.join("lock")).unwrap().trim(),
        second.0.id().to_string()
    );
}
