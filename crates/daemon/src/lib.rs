//! `lever daemon`: the resource manager.
//!
//! It owns the tunables of a target (see `lever-targets`), serves clients on
//! a Unix socket with the protocol of `lever-protocol`, aggregates their
//! requests with `lever-engine`, writes the winners through
//! `lever-tunables`, and restores every original value when requests end —
//! including after a crash, from the journal in its state directory.
//!
//! The parts: [`journal`] (crash-safe originals), [`identity`] (peer
//! credentials and pidfds), [`core`] (decisions, bookkeeping, logs, status,
//! profiles applied through PROFILE — `docs/profiles.md`),
//! [`server`] (the epoll loop), [`writer`] (the journal's disk thread),
//! [`log`].
//!
//! ```no_run
//! // A board's tree under /tmp/board (e.g. from `lever sim create`).
//! let config = lever_daemon::Config {
//!     root: "/tmp/board".into(),
//!     state_dir: "/tmp/lever-state".into(),
//!     socket: "/tmp/lever-state/lever.sock".into(),
//!     ..lever_daemon::Config::default()
//! };
//! lever_daemon::run(config).unwrap();
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod apps;
pub mod core;
pub mod exporter;
pub mod identity;
pub mod journal;
pub mod log;
pub mod metrics;
pub mod seats;
pub mod server;
pub mod tasks;
pub mod writer;

use crate::core::{Core, Limits};
use crate::log::Logger;
use lever_kernel::KernelFs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// Default socket path.
pub const DEFAULT_SOCKET: &str = "/run/lever/lever.sock";
/// Default state directory.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/lever";

/// Daemon configuration (the `lever daemon` flags).
#[derive(Debug, Clone)]
pub struct Config {
    /// Root prefix of kernel paths.
    pub root: PathBuf,
    /// Target name or file; `None` = detect.
    pub target: Option<String>,
    /// Socket path.
    pub socket: PathBuf,
    /// State directory (the journal of originals).
    pub state_dir: PathBuf,
    /// Group whose members are system clients (besides root).
    pub system_group: String,
    /// Per-client limits.
    pub limits: Limits,
    /// Drop informational log lines.
    pub quiet: bool,
    /// Busy-poll window after each burst of events (see
    /// [`server::Server::set_busy_poll`]); zero always sleeps.
    pub busy_poll: std::time::Duration,
    /// Detect the target's `apps:` with the process connector.
    pub apps: bool,
    /// Serve OpenMetrics/Prometheus text here (`--metrics`).
    pub metrics: Option<exporter::Endpoint>,
    /// Write node_exporter's textfile `lever.prom` into this directory
    /// (`--metrics-textfile`), every `metrics_interval`.
    pub metrics_textfile: Option<PathBuf>,
    /// How often the textfile is rewritten.
    pub metrics_interval: std::time::Duration,
    /// Makes the target file in place of `target` (`lever daemon --urm
    /// DIR` imports a URM directory with it): called at start and again
    /// on SIGHUP.
    pub loader: Option<TargetLoader>,
}

/// What a [`TargetLoader`] made: the target file, and what to say about
/// it once in the log (an import's warnings).
#[derive(Debug)]
pub struct Loaded {
    /// The target file, not yet bound.
    pub file: lever_targets::TargetFile,
    /// Warnings, each one log line.
    pub warnings: Vec<String>,
    /// What loading did besides (a URM directory's cgroups created), each
    /// one log line at info level.
    pub notes: Vec<String>,
    /// What URM's client API is served (URM request), for a target
    /// imported from a URM directory.
    pub urm: Option<lever_protocol::UrmView>,
}

/// Why a [`TargetLoader`] made no target (kept as the cause, so a caller
/// can tell its kind).
pub type LoadError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A maker of the daemon's target file from the kernel below the root.
#[derive(Clone)]
pub struct TargetLoader(pub std::sync::Arc<LoadFn>);

/// The function a [`TargetLoader`] calls.
pub type LoadFn = dyn Fn(&KernelFs) -> Result<Loaded, LoadError> + Send + Sync;

impl std::fmt::Debug for TargetLoader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TargetLoader")
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            root: PathBuf::from("/"),
            target: None,
            socket: PathBuf::from(DEFAULT_SOCKET),
            state_dir: PathBuf::from(DEFAULT_STATE_DIR),
            system_group: "lever".into(),
            limits: Limits::default(),
            quiet: false,
            busy_poll: std::time::Duration::ZERO,
            apps: true,
            metrics: None,
            metrics_textfile: None,
            metrics_interval: std::time::Duration::from_secs(15),
            loader: None,
        }
    }
}

/// Why the daemon could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The target could not be loaded or bound.
    #[error("{0}")]
    Target(#[from] lever_targets::TargetError),
    /// The [`Config::loader`] made no target (a URM directory refused).
    #[error("{0}")]
    Load(#[source] LoadError),
    /// The target's resources are inconsistent.
    #[error("target is not usable: {0}")]
    Engine(#[from] lever_engine::EngineError),
    /// The journal could not be recovered or written.
    #[error("journal {path}: {source}")]
    Journal {
        /// Journal path.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// Another daemon answers on the socket.
    #[error("another lever daemon is already listening on {0}")]
    Busy(PathBuf),
    /// Socket setup failed.
    #[error("socket {path}: {source}")]
    Socket {
        /// Socket path.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The event loop failed.
    #[error("event loop: {0}")]
    Io(#[from] std::io::Error),
    /// The metrics endpoint or textfile could not be set up.
    #[error("{what}: {source}")]
    Metrics {
        /// The option and its value.
        what: String,
        /// Cause.
        source: std::io::Error,
    },
    /// Another process (a running daemon, or a `lever restore`) holds the
    /// state directory's lock.
    #[error("state directory {} is in use by {} (it holds {}); {hint}", dir.display(), holder(*pid), dir.join(journal::LOCK_FILE).display())]
    Locked {
        /// The state directory.
        dir: PathBuf,
        /// The holder's pid, as its lock file says.
        pid: Option<u32>,
        /// What to do about it.
        hint: &'static str,
    },
    /// `lever restore --state-dir DIR` names no directory: a typo there
    /// must not read as "the journal is clean".
    #[error("state directory {}: {source} (give the daemon's --state-dir)", path.display())]
    StateDir {
        /// The directory given.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
}

fn holder(pid: Option<u32>) -> String {
    match pid {
        Some(pid) => format!("lever pid {pid}"),
        None => "another lever process".into(),
    }
}

/// The state directory's mode when it is created: private (0700), except
/// that clients must be able to pass through it when the socket lives
/// inside (0711: enter, not list; the journal itself is 0600).
pub fn state_dir_mode(state_dir: &Path, socket: &Path) -> u32 {
    if socket.parent() == Some(state_dir) {
        0o711
    } else {
        0o700
    }
}

/// Take the daemon's lock on `state_dir` (created with
/// [`state_dir_mode`] if missing) before anything in it is read or
/// written — the journal, and the simulated board `lever daemon --sim`
/// creates there. A second daemon on the same directory gets
/// [`DaemonError::Locked`] naming the holder's pid and touches nothing.
pub fn lock_state_dir(state_dir: &Path, socket: &Path) -> Result<journal::StateLock, DaemonError> {
    journal::StateLock::acquire(state_dir, state_dir_mode(state_dir, socket)).map_err(|e| match e {
        journal::LockError::Held { pid } => DaemonError::Locked {
            dir: state_dir.to_path_buf(),
            pid,
            hint: "one daemon per state directory: give this one its own --state-dir",
        },
        journal::LockError::Io(source) => DaemonError::StateDir {
            path: state_dir.to_path_buf(),
            source,
        },
    })
}

fn bind(path: &Path, system_gid: Option<u32>) -> Result<UnixListener, DaemonError> {
    let err = |source| DaemonError::Socket {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(err)?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        use std::os::unix::fs::FileTypeExt;
        // Only a socket (a dead daemon's) is ours to replace: a typo in
        // --socket must not delete someone's file.
        if !meta.file_type().is_socket() {
            return Err(err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "exists and is not a socket; refusing to replace it",
            )));
        }
        if UnixStream::connect(path).is_ok() {
            return Err(DaemonError::Busy(path.to_path_buf()));
        }
        std::fs::remove_file(path).map_err(err)?;
    }
    let listener = UnixListener::bind(path).map_err(err)?;
    // With a system group, only root and the group may connect; without
    // one, anyone may connect and the per-request permission checks (from
    // SO_PEERCRED) decide what each client can do.
    let mode = match system_gid {
        Some(gid) => {
            rustix::fs::chown(path, None, Some(rustix::fs::Gid::from_raw(gid)))
                .map_err(|e| err(e.into()))?;
            0o660
        }
        None => 0o666,
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(err)?;
    Ok(listener)
}

/// Tell systemd we are ready (`Type=notify`), when started by it.
fn sd_notify(state: &str) {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixDatagram};
    let Some(path) = std::env::var_os("NOTIFY_SOCKET") else {
        return;
    };
    let path = path.to_string_lossy().into_owned();
    let Ok(sock) = UnixDatagram::unbound() else {
        return;
    };
    let _ = match path.strip_prefix('@') {
        Some(name) => SocketAddr::from_abstract_name(name.as_bytes())
            .and_then(|addr| sock.send_to_addr(state.as_bytes(), &addr)),
        None => sock.send_to(state.as_bytes(), &path),
    };
}

/// Run the daemon until SIGTERM/SIGINT. Prints
/// `lever daemon: ready on SOCKET` on stderr once it accepts clients.
/// Takes the state directory's lock first ([`lock_state_dir`]).
pub fn run(config: Config) -> Result<(), DaemonError> {
    let lock = lock_state_dir(&config.state_dir, &config.socket)?;
    run_locked(config, lock)
}

/// [`run`] with the state directory's lock already held (taken by the
/// caller before it prepared the directory, as `lever daemon --sim` does
/// for its board); it is released when the daemon stops.
pub fn run_locked(config: Config, lock: journal::StateLock) -> Result<(), DaemonError> {
    if lock.dir() != config.state_dir {
        return Err(DaemonError::StateDir {
            path: config.state_dir.clone(),
            source: std::io::Error::other(format!("the lock held is {}'s", lock.dir().display())),
        });
    }
    let log = if config.quiet {
        Logger::quiet()
    } else {
        Logger::from_env()
    };
    let root = &config.root;
    let fs = KernelFs::new(root);
    // A loader's warnings are said once; a reload says only new ones.
    let (target, said, urm) = match &config.loader {
        Some(loader) => {
            let loaded = (loader.0)(&fs).map_err(DaemonError::Load)?;
            for w in &loaded.warnings {
                log.warn(w);
            }
            for n in &loaded.notes {
                log.info(n);
            }
            (loaded.file.bind(&fs)?, loaded.warnings, loaded.urm)
        }
        None => (
            lever_targets::resolve(config.target.as_deref(), &fs)?,
            Vec::new(),
            None,
        ),
    };
    let jpath = journal::Journal::path_in(&config.state_dir);
    // The state directory was created by the lock, private (see
    // `state_dir_mode`).
    let (mut journal, recovered) = journal::Journal::recover_and_open(&config.state_dir, &fs)
        .map_err(|source| DaemonError::Journal {
            path: jpath.clone(),
            source,
        })?;
    if let Some((boot, n)) = &recovered.earlier_boot {
        log.info(&format!(
            "journal from an earlier boot ({boot}): the reboot reset its {n} node(s); nothing to restore"
        ));
    }
    journal.set_logger(log.clone());
    for r in &recovered.restored {
        match &r.result {
            Ok(()) => log.info(&format!(
                "recovered {}: restored original {:?} left by an earlier run",
                r.node, r.original
            )),
            Err(e) => log.warn(&format!(
                "could not restore {} to {:?}: {e}; kept in the journal and retried every {} s",
                r.node,
                r.original,
                server::RETRY_UNRESTORED.as_secs()
            )),
        }
    }
    let tpath = tasks::TaskJournal::path_in(&config.state_dir);
    let (task_journal, task_recovered) =
        tasks::TaskJournal::recover_and_open(&config.state_dir, &fs).map_err(|source| {
            DaemonError::Journal {
                path: tpath.clone(),
                source,
            }
        })?;
    for r in &task_recovered {
        match &r.result {
            Ok(done) => log.info(&format!(
                "recovered {} of an earlier run: {:?} ({done:?})",
                core::task_request_name(r.request),
                r.original
            )),
            Err(e) => log.warn(&format!(
                "could not restore {:?} of {} of an earlier run: {e}",
                r.original,
                core::task_request_name(r.request)
            )),
        }
    }
    let system_gid = identity::group_id(&config.system_group);
    let listener = bind(&config.socket, system_gid)?;
    log.info(&format!(
        "target {} ({}), {} resources, root {}, state {}",
        target.name,
        target.source,
        target.resources.len(),
        root.display(),
        config.state_dir.display()
    ));
    let mut core = Core::new(
        fs.clone(),
        target,
        journal,
        config.limits.clone(),
        log.clone(),
    )?;
    core.set_task_journal(task_journal);
    let urm_view = core.urm_view();
    *urm_view.lock().unwrap_or_else(|p| p.into_inner()) = urm;
    if core.has_task_rules() {
        if let Some(why) = core.task_rules_unavailable() {
            log.warn(&why);
        }
    }
    if config.metrics.is_some() || config.metrics_textfile.is_some() {
        let metrics = std::sync::Arc::new(metrics::Metrics::new(
            env!("CARGO_PKG_VERSION"),
            &core.target().name,
            vec![
                ("originals".into(), jpath.clone()),
                ("tasks".into(), tpath.clone()),
            ],
        ));
        core.set_metrics(metrics.clone());
        if let Some(endpoint) = &config.metrics {
            let at = exporter::serve(endpoint, metrics.clone()).map_err(|source| {
                DaemonError::Metrics {
                    what: format!("--metrics {endpoint:?}"),
                    source,
                }
            })?;
            log.info(&format!("metrics on {at} (GET /metrics)"));
        }
        if let Some(dir) = &config.metrics_textfile {
            let at =
                exporter::textfile(dir, config.metrics_interval, metrics).map_err(|source| {
                    DaemonError::Metrics {
                        what: format!("--metrics-textfile {}", dir.display()),
                        source,
                    }
                })?;
            log.info(&format!("metrics textfile {}", at.display()));
        }
    }
    // After the journal put every original back: the base profile kept
    // from the last run goes in effect again.
    if let Some(problem) = core.restore_profile() {
        log.warn(&problem);
    }
    let target_arg = config.target.clone();
    let reload_fs = fs.clone();
    let loader = config.loader.clone();
    let reload_log = log.clone();
    let mut said = said;
    let reload = Box::new(move || match &loader {
        Some(loader) => {
            let loaded = (loader.0)(&reload_fs).map_err(|e| e.to_string())?;
            for w in loaded.warnings.iter().filter(|w| !said.contains(w)) {
                reload_log.warn(w);
            }
            said = loaded.warnings;
            for n in &loaded.notes {
                reload_log.info(n);
            }
            let target = loaded.file.bind(&reload_fs).map_err(|e| e.to_string())?;
            // A reload that fails keeps the running target and its view.
            *urm_view.lock().unwrap_or_else(|p| p.into_inner()) = loaded.urm;
            Ok(target)
        }
        None => {
            lever_targets::resolve(target_arg.as_deref(), &reload_fs).map_err(|e| e.to_string())
        }
    });
    // systemd's default soft limit (1024) would cap connections far below
    // what the hard limit allows; the caps are derived from what is set.
    server::raise_nofile();
    let mut server = server::Server::new(core, listener, system_gid, log.clone(), reload)?;
    server.set_busy_poll(config.busy_poll);
    if config.apps {
        server.watch_apps(fs.clone())?;
    }
    // Start-up code (argument parsing, target loading, journal recovery)
    // will not run again: let the kernel take its pages back now.
    if let Err(e) = lever_syscalls::page_out_own_code() {
        log.info(&format!("could not release start-up code pages: {e}"));
    }
    sd_notify("READY=1\nSTATUS=serving");
    eprintln!("lever daemon: ready on {}", config.socket.display());
    server.run()?;
    sd_notify("STOPPING=1");
    let _ = std::fs::remove_file(&config.socket);
    log.flush_all();
    // Say "every node restored" only when the journals hold no original
    // any more: what a crash now would leave to the next start.
    let nodes = journal::pending_in(&config.state_dir);
    let tasks = tasks_pending(&tpath);
    match (nodes, tasks) {
        (Ok(0), Ok(0)) => log.info("stopped; every node restored"),
        (Ok(n), Ok(t)) => log.warn(&format!(
            "stopped; {n} node original(s) and the task settings of {t} request(s) are still owed (kept in the journals of {}; the next start or `lever restore` retries)",
            config.state_dir.display()
        )),
        (Err(e), _) | (_, Err(e)) => log.warn(&format!(
            "stopped; cannot read the journals back to check every node was restored: {e}"
        )),
    }
    drop(lock);
    Ok(())
}

/// Requests of the task journal at `path` with a `set` and no `done`.
fn tasks_pending(path: &Path) -> std::io::Result<usize> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut owed = std::collections::BTreeSet::new();
    for line in text.lines().skip(1) {
        let mut words = line.split(' ');
        match (words.next(), words.next()) {
            (Some("set"), Some(id)) => {
                owed.insert(id);
            }
            (Some("done"), Some(id)) => {
                owed.remove(id);
            }
            _ => {}
        }
    }
    Ok(owed.len())
}

/// `lever restore`: write back every original an earlier run left in the
/// journal of `state_dir` (for `ExecStopPost=` after a crash). Refused
/// with [`DaemonError::Locked`] while a daemon holds the directory: it
/// owns those nodes, and restores them itself when it stops.
pub fn restore(state_dir: &Path, root: &Path) -> Result<journal::Recovery, DaemonError> {
    let not_dir = || std::io::Error::other("not a directory");
    match std::fs::metadata(state_dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(DaemonError::StateDir {
                path: state_dir.into(),
                source: not_dir(),
            })
        }
        Err(source) => {
            return Err(DaemonError::StateDir {
                path: state_dir.into(),
                source,
            })
        }
    }
    // Held while restoring: a daemon starting meanwhile is refused.
    let _lock = journal::StateLock::acquire(state_dir, 0o700).map_err(|e| match e {
        journal::LockError::Held { pid } => DaemonError::Locked {
            dir: state_dir.to_path_buf(),
            pid,
            hint: "a running daemon owns its nodes and restores them when it stops: stop it (SIGTERM) instead",
        },
        journal::LockError::Io(source) => DaemonError::StateDir {
            path: state_dir.to_path_buf(),
            source,
        },
    })?;
    let path = journal::Journal::path_in(state_dir);
    let fs = KernelFs::new(root);
    let recovery =
        journal::recover(&path, &fs).map_err(|source| DaemonError::Journal { path, source })?;
    // Task settings of use cases (cgroup files, thread affinity, ...).
    let tpath = tasks::TaskJournal::path_in(state_dir);
    if tpath.exists() {
        tasks::TaskJournal::recover_and_open(state_dir, &fs).map_err(|source| {
            DaemonError::Journal {
                path: tpath,
                source,
            }
        })?;
    }
    Ok(recovery)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_requests_pending_are_sets_without_done() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks.journal");
        assert_eq!(tasks_pending(&path).unwrap(), 0);
        std::fs::write(
            &path,
            "lever-tasks v1 boot=-\nset 7 {}\nset 7 @12 {}\nset 9 {}\ndone 7\nset 11 {}\n",
        )
        .unwrap();
        assert_eq!(tasks_pending(&path).unwrap(), 2);
        std::fs::write(&path, "lever-tasks v1 boot=-\nset 9 {}\ndone 9\n").unwrap();
        assert_eq!(tasks_pending(&path).unwrap(), 0);
    }

    #[test]
    fn the_state_directory_is_private_unless_the_socket_is_inside() {
        let state = Path::new("/var/lib/lever");
        assert_eq!(
            state_dir_mode(state, Path::new("/run/lever/lever.sock")),
            0o700
        );
        assert_eq!(state_dir_mode(state, &state.join("lever.sock")), 0o711);
    }
}
