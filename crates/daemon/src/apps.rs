//! App detection in the event loop: the netlink process connector says
//! which processes exec; those an `apps:` entry matches get their
//! configuration ([`Core::app_started`]) and a pidfd in the epoll set,
//! whose readiness at exit ends it ([`Core::app_exited`]). A pidfd cannot
//! mistake a recycled pid for the app, and catches an exit whose
//! connector event was lost.
//!
//! Processes are read under the daemon's root (`/proc/PID/comm`, ...): on
//! a simulated board only processes whose `/proc` entries exist in the
//! board's tree are seen (the tests create them).

use crate::core::Core;
use crate::identity::Identity;
use lever_kernel::KernelFs;
use lever_procwatch::{AppMatcher, PidFd, ProcConnector, ProcEvent, WatchError};
use std::collections::{HashMap, HashSet};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Duration;

/// Owner ids of apps start here, far above client connection ids.
pub const APP_CONN_BASE: u64 = 1 << 40;

/// The connector, the matcher and the running apps.
pub struct AppWatch {
    connector: ProcConnector,
    matcher: AppMatcher,
    procfs: KernelFs,
    running: HashMap<u64, (String, PidFd)>,
    /// Pids of running apps: a second exec of the same process (a shell
    /// that execs the app) keeps the configuration it has.
    pids: HashSet<i32>,
    next: u64,
}

/// Whether app detection runs, and if not why (for the log and STATUS).
pub enum Detection {
    /// Watching.
    On(Box<AppWatch>),
    /// The target has no `apps:`.
    NoApps,
    /// It cannot run here (no CAP_NET_ADMIN, no connector, a bad pattern).
    Unavailable(String),
}

impl AppWatch {
    /// Watch for the apps of `core`'s target, reading processes under
    /// `procfs`.
    pub fn open(core: &Core, procfs: KernelFs) -> Detection {
        if core.target().apps.is_empty() {
            return Detection::NoApps;
        }
        let matcher = match core.target().app_matcher() {
            Ok(m) => m,
            Err(e) => return Detection::Unavailable(e.to_string()),
        };
        match ProcConnector::open() {
            Ok(connector) => Detection::On(Box::new(AppWatch {
                connector,
                matcher,
                procfs,
                running: HashMap::new(),
                pids: HashSet::new(),
                next: APP_CONN_BASE,
            })),
            Err(e) => Detection::Unavailable(e.to_string()),
        }
    }

    /// The connector's socket, for the epoll set.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.connector.as_fd()
    }

    /// The pidfd of running app `conn`.
    pub fn pidfd(&self, conn: u64) -> Option<BorrowedFd<'_>> {
        self.running.get(&conn).map(|(_, p)| p.as_fd())
    }

    /// Read what the connector has; start every matching app. Returns the
    /// new apps' owner ids (their pidfds go into the epoll set) and lines
    /// for the log.
    pub fn on_readable(&mut self, core: &mut Core, now: Duration) -> (Vec<u64>, Vec<String>) {
        let mut log = Vec::new();
        let events = match self.connector.recv(None) {
            Ok(e) => e,
            Err(WatchError::Overrun) => {
                log.push("process events were lost (netlink queue overrun); apps that started meanwhile are not configured".into());
                return (Vec::new(), log);
            }
            Err(e) => {
                log.push(format!("process connector: {e}"));
                return (Vec::new(), log);
            }
        };
        let mut started = Vec::new();
        for ev in events {
            let ProcEvent::Exec { pid, tgid, .. } = ev else {
                continue;
            };
            // A thread other than the leader exec'ing replaces the process
            // image too; the process is still `tgid`.
            let _ = pid;
            if self.pids.contains(&tgid) {
                continue;
            }
            let Ok(Some((info, Ok(app)))) = self.matcher.match_pid(&self.procfs, tgid) else {
                continue;
            };
            let name = app.name.clone();
            let Ok(pidfd) = PidFd::open(tgid) else {
                continue; // exited already
            };
            let conn = self.next;
            self.next += 1;
            let id = Identity {
                pid: tgid,
                uid: info.uid.unwrap_or(u32::MAX),
                gid: info.uid.unwrap_or(u32::MAX),
                exe: Some(info.comm.clone()),
                system: true,
            };
            for problem in core.app_started(conn, id, &name, now) {
                log.push(format!("app {name} (pid {tgid}): {problem}"));
            }
            log.push(format!("app {name} started: pid {tgid}"));
            self.running.insert(conn, (name, pidfd));
            self.pids.insert(tgid);
            started.push(conn);
        }
        (started, log)
    }

    /// App `conn`'s process exited: end its configuration. Returns its
    /// name and pidfd (to leave the epoll set).
    pub fn exited(&mut self, core: &mut Core, conn: u64) -> Option<(String, PidFd)> {
        let gone = self.running.remove(&conn)?;
        self.pids.remove(&gone.1.pid());
        core.app_exited(conn);
        Some(gone)
    }
}
