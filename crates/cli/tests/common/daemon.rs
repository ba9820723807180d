//! A real `lever daemon` for integration tests (`tests/daemon.rs`,
//! `tests/signal.rs`).

use super::LEVER;
use lever_client::Client;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A `lever daemon` child on a simulated board (or `--root`), killed when
/// dropped.
pub struct Daemon {
    pub child: Child,
    pub dir: PathBuf,
    pub socket: PathBuf,
    pub log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Daemon {
    /// Start `lever daemon --sim qcs6490` in `dir` and wait until ready.
    pub fn start(dir: &Path, extra: &[&str]) -> Daemon {
        let socket = dir.join("lever.sock");
        let mut args: Vec<String> = vec![
            "daemon".into(),
            "--state-dir".into(),
            dir.display().to_string(),
            "--socket".into(),
            socket.display().to_string(),
        ];
        if !extra.contains(&"--root") {
            args.extend(["--sim".into(), "qcs6490".into()]);
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        let (child, log) = super::spawn_daemon(Command::new(LEVER).args(&args));
        Daemon {
            child,
            dir: dir.to_path_buf(),
            socket,
            log,
        }
    }

    /// Run `lever ARGS` as `nobody` (uid/gid 65534) against this daemon:
    /// a third-party client (needs root to switch).
    pub fn as_nobody(&self, args: &[&str]) -> std::process::Output {
        use std::os::unix::process::CommandExt;
        Command::new(LEVER)
            .args(args)
            .env("LEVER_SOCKET", &self.socket)
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap()
    }

    pub fn client(&self) -> Client {
        Client::connect(&self.socket).expect("connect")
    }

    pub fn node(&self, rel: &str) -> String {
        std::fs::read_to_string(self.dir.join("sim").join(rel))
            .unwrap()
            .trim()
            .to_string()
    }

    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    pub fn signal(&self, sig: i32) {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::from_named_raw(sig).unwrap())
            .unwrap();
    }

    pub fn wait(mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return st;
            }
            assert!(Instant::now() < deadline, "daemon did not exit");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn state_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    // Let an unprivileged client reach the socket inside.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Wait until `f` holds, polling every 200 µs; returns how long it took.
pub fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if f() {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    None
}

pub fn is_root() -> bool {
    rustix::process::getuid().is_root()
}

/// A time bound meant for native speed: `native`, or ten times it under
/// qemu-user (LEVER_UNDER_QEMU, scripts/cross-test.sh), where every round
/// trip is emulated. The check stays; only the scale is the emulator's.
pub fn bound(native: Duration) -> Duration {
    if std::env::var_os("LEVER_UNDER_QEMU").is_some() {
        native * 10
    } else {
        native
    }
}
