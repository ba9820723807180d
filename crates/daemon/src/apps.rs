//! App detection in the event loop: the netlink process connector says
//! which processes exec; those an `apps:` entry matches get their
//! configuration ([`Core::app_started`]) and a pidfd in the epoll set,
//! whose readiness at exit ends it ([`Core::app_exited`]). A pidfd cannot
//! mistake a recycled pid for the app, and catches an exit whose
//! connector event was lost.
//!
//! The connector only reports processes that exec while it listens, and
//! drops events when its queue overflows: [`AppWatch::scan`] walks `/proc`
//! at start and again after an overrun, so apps already running (or
//! started during the storm) are configured too.
//!
//! Where the connector is unavailable, a client may name a process itself
//! (REGISTER, `lever run --app NAME -- CMD`): [`AppWatch::register`].
//!
//! Processes are read under the daemon's root (`/proc/PID/comm`, ...): on
//! a simulated board only processes whose `/proc` entries exist in the
//! board's tree are seen (the tests create them). The permission check of
//! a REGISTER reads the kernel's own `/proc`: the pid is a real process.

use crate::core::{Client, Core};
use crate::identity::Identity;
use crate::seats::Seats;
use lever_kernel::KernelFs;
use lever_procwatch::{AppMatcher, PidFd, ProcConnector, ProcEvent, WatchError};
use lever_protocol::{Bind, ErrorCode, Register, Reply};
use std::collections::{HashMap, HashSet};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Duration;

/// Owner ids of apps start here, far above client connection ids.
pub const APP_CONN_BASE: u64 = 1 << 40;

/// The connector, the matcher and the running apps.
pub struct AppWatch {
    /// `None` when only registered apps are tracked.
    connector: Option<ProcConnector>,
    matcher: Option<AppMatcher>,
    procfs: KernelFs,
    running: HashMap<u64, Running>,
    /// Pids of running apps: a second exec of the same process (a shell
    /// that execs the app) keeps the configuration it has.
    pids: HashSet<i32>,
    next: u64,
}

/// A process-owned configuration: an app, or a BIND's use case.
struct Running {
    /// `app NAME`, or `use case NAME` for a BIND.
    what: String,
    pidfd: PidFd,
    /// Whom it is counted against (its seat, and its requests).
    uid: u32,
    system: bool,
    /// An app (one configuration per process), not a BIND.
    app: bool,
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

/// What one pass over new processes did: the new apps' owner ids (their
/// pidfds go into the epoll set) and lines for the log.
#[derive(Debug, Default)]
pub struct Started {
    /// Owner ids of the apps started.
    pub conns: Vec<u64>,
    /// Lines for the log.
    pub log: Vec<String>,
}

/// A process recognised as an app, before it is started.
struct Found {
    pid: i32,
    name: String,
    uid: Option<u32>,
    comm: String,
}

impl AppWatch {
    /// Track registered apps only (no connector), reading processes under
    /// `procfs`.
    pub fn new(procfs: KernelFs) -> AppWatch {
        AppWatch {
            connector: None,
            matcher: None,
            procfs,
            running: HashMap::new(),
            pids: HashSet::new(),
            next: APP_CONN_BASE,
        }
    }

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
                connector: Some(connector),
                matcher: Some(matcher),
                ..AppWatch::new(procfs)
            })),
            Err(e) => Detection::Unavailable(e.to_string()),
        }
    }

    /// Where the connector cannot be used: the matcher alone, so that
    /// [`AppWatch::scan`] still configures the apps running at start.
    /// `None` when the target has no apps or a bad pattern.
    pub fn matcher_only(core: &Core, procfs: KernelFs) -> Option<AppWatch> {
        if core.target().apps.is_empty() {
            return None;
        }
        let matcher = core.target().app_matcher().ok()?;
        Some(AppWatch {
            matcher: Some(matcher),
            ..AppWatch::new(procfs)
        })
    }

    /// The connector's socket, for the epoll set.
    pub fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.connector.as_ref().map(|c| c.as_fd())
    }

    /// The pidfd of running app (or BIND) `conn`.
    pub fn pidfd(&self, conn: u64) -> Option<BorrowedFd<'_>> {
        self.running.get(&conn).map(|r| r.pidfd.as_fd())
    }

    /// Process-owned configurations running now: (owner id, `app NAME`
    /// or `use case NAME`, pid).
    pub fn running(&self) -> impl Iterator<Item = (u64, &str, i32)> {
        self.running
            .iter()
            .map(|(c, r)| (*c, r.what.as_str(), r.pidfd.pid()))
    }

    /// Read what the connector has; start every matching app. After an
    /// overrun (events were lost), rescan `/proc` instead.
    pub fn on_readable(&mut self, core: &mut Core, seats: &mut Seats, now: Duration) -> Started {
        let Some(connector) = self.connector.as_mut() else {
            return Started::default();
        };
        let events = connector.recv(None);
        self.on_events(core, seats, events, now)
    }

    /// What [`AppWatch::on_readable`] does with one `recv`'s result.
    pub fn on_events(
        &mut self,
        core: &mut Core,
        seats: &mut Seats,
        events: Result<Vec<ProcEvent>, WatchError>,
        now: Duration,
    ) -> Started {
        let events = match events {
            Ok(e) => e,
            Err(WatchError::Overrun) => {
                let mut out = self.scan(core, seats, now);
                out.log.insert(
                    0,
                    format!(
                        "process events were lost (netlink queue overrun): rescanned /proc, {} app(s) found",
                        out.conns.len()
                    ),
                );
                return out;
            }
            Err(e) => {
                return Started {
                    conns: Vec::new(),
                    log: vec![format!("process connector: {e}")],
                }
            }
        };
        let mut out = Started::default();
        for ev in events {
            // A thread other than the leader exec'ing replaces the process
            // image too; the process is still `tgid`.
            let ProcEvent::Exec { tgid, .. } = ev else {
                continue;
            };
            if let Some(found) = self.matches(tgid) {
                self.start(core, seats, found, now, &mut out);
            }
        }
        out
    }

    /// Every process under `/proc` an entry matches and that is not
    /// configured yet gets its configuration (at start: the connector only
    /// sees processes exec'ing from now on; after an overrun).
    pub fn scan(&mut self, core: &mut Core, seats: &mut Seats, now: Duration) -> Started {
        let mut out = Started::default();
        if self.matcher.is_none() {
            return out;
        }
        let pids: Vec<i32> = match self.procfs.list_dir("/proc") {
            Ok(names) => names.iter().filter_map(|n| n.parse().ok()).collect(),
            Err(e) => {
                out.log.push(format!("cannot scan /proc: {e}"));
                return out;
            }
        };
        for pid in pids {
            if let Some(found) = self.matches(pid) {
                self.start(core, seats, found, now, &mut out);
            }
        }
        out
    }

    /// Is `pid` (not configured yet) an app of the matcher?
    fn matches(&self, pid: i32) -> Option<Found> {
        if self.pids.contains(&pid) {
            return None;
        }
        let Ok(Some((info, Ok(app)))) = self.matcher.as_ref()?.match_pid(&self.procfs, pid) else {
            return None;
        };
        Some(Found {
            pid,
            name: app.name.clone(),
            uid: info.uid,
            comm: info.comm,
        })
    }

    /// Configure `found` as an app owned by its process; its pidfd ends
    /// it. A process that exited already is passed over. A detected app
    /// is counted against its process's own uid (root's: system).
    fn start(
        &mut self,
        core: &mut Core,
        seats: &mut Seats,
        found: Found,
        now: Duration,
        out: &mut Started,
    ) {
        let Ok(pidfd) = PidFd::open(found.pid) else {
            return; // exited already
        };
        let uid = found.uid.unwrap_or(u32::MAX);
        let account = Identity {
            pid: found.pid,
            uid,
            gid: uid,
            exe: Some(found.comm.clone()),
            system: uid == 0,
        };
        let name = found.name.clone();
        let pid = found.pid;
        match self.start_with(core, seats, found, pidfd, &account, now, &mut out.log) {
            Ok(conn) => out.conns.push(conn),
            Err(Reply::Error { message, .. }) => out
                .log
                .push(format!("app {name} (pid {pid}) not configured: {message}")),
            Err(_) => {}
        }
    }

    /// Start app `found` counted against `account`: its seat first, then
    /// its configuration. `Err` is the refusal (nothing is left in place).
    #[allow(clippy::too_many_arguments)]
    fn start_with(
        &mut self,
        core: &mut Core,
        seats: &mut Seats,
        found: Found,
        pidfd: PidFd,
        account: &Identity,
        now: Duration,
        log: &mut Vec<String>,
    ) -> Result<u64, Reply> {
        if let Some(why) = seats.refusal(account.uid, account.system) {
            return Err(Reply::Error {
                code: ErrorCode::Limit,
                message: why,
            });
        }
        let conn = self.next;
        self.next += 1;
        let Found { pid, name, .. } = found;
        for problem in core.app_started(conn, pid, account, &name, now)? {
            log.push(format!("app {name} (pid {pid}): {problem}"));
        }
        log.push(format!("app {name} started: pid {pid}"));
        seats.take(account.uid, account.system);
        self.running.insert(
            conn,
            Running {
                what: format!("app {name}"),
                pidfd,
                uid: account.uid,
                system: account.system,
                app: true,
            },
        );
        self.pids.insert(pid);
        Ok(conn)
    }

    /// REGISTER from `client`: process `reg.pid` runs app `reg.app`.
    /// Returns the reply and, when it was started, its owner id (its pidfd
    /// goes into the epoll set) with lines for the log.
    ///
    /// A process already configured as that same app (detected at exec, or
    /// registered before) is DONE with nothing changed; as another app it
    /// is refused (ERROR 7).
    ///
    /// The app's configuration is the board's own, applied as for a
    /// detected app (system-low): registering a process grants nothing
    /// the connector would not have granted it at exec. Only a process of
    /// the client's own uid may be named, unless the client is system. It
    /// is counted against the client: a seat (its pidfd) and its requests,
    /// in the client's uid's share; a refusal of either is the reply.
    pub fn register(
        &mut self,
        core: &mut Core,
        seats: &mut Seats,
        client: &Client,
        reg: &Register,
        now: Duration,
    ) -> (Reply, Option<u64>, Vec<String>) {
        let refuse = |code, message: String| (Reply::Error { code, message }, None, Vec::new());
        if core.target().app(&reg.app).is_none() {
            let names: Vec<&str> = core
                .target()
                .apps
                .iter()
                .map(|a| a.pattern.name.as_str())
                .collect();
            return refuse(
                ErrorCode::UnknownApp,
                format!(
                    "no app named {:?} in target {} (its apps: {})",
                    reg.app,
                    core.target().name,
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            );
        }
        let mut log = Vec::new();
        let claimed = self.claim(core, seats, client, reg.pid.get(), "register", &mut log);
        let (pid, pidfd, info) = match claimed {
            Ok(c) => c,
            Err(reply) => return (reply, None, log),
        };
        if let Some(r) = self
            .running
            .values()
            .find(|r| r.app && r.pidfd.pid() == pid)
        {
            // Detected at exec (or registered before) as this very app:
            // what the client asks for is in place, so it is done — `lever
            // run` must not kill a command the daemon already configured.
            // The configuration stays the one it has (owned by the process,
            // counted where it was), and no second seat is taken.
            if r.what == format!("app {}", reg.app) {
                log.push(format!(
                    "app {} (pid {pid}) is already configured; register by pid {} uid {} is done",
                    reg.app, client.id.pid, client.id.uid
                ));
                return (Reply::Done, None, log);
            }
            return refuse(
                ErrorCode::Invalid,
                format!("process {pid} is already configured as {}", r.what),
            );
        }
        let found = Found {
            pid,
            name: reg.app.clone(),
            uid: info.uid,
            comm: info.comm,
        };
        match self.start_with(core, seats, found, pidfd, &client.id, now, &mut log) {
            Ok(conn) => {
                if let Some(line) = log.last_mut() {
                    line.push_str(&format!(
                        " (registered by pid {} uid {})",
                        client.id.pid, client.id.uid
                    ));
                }
                (Reply::Done, Some(conn), log)
            }
            Err(reply) => (reply, None, log),
        }
    }

    /// BIND from `client`: its use case for the life of process
    /// `bind.pid` (a GameMode game). Checked like a REGISTER (the pidfd
    /// first; only the client's own processes unless it is system; a seat
    /// for the pidfd), then triggered as the client's SIGNAL owned by the
    /// process. Returns the reply and, when granted, the owner id.
    pub fn bind(
        &mut self,
        core: &mut Core,
        seats: &mut Seats,
        client: &Client,
        bind: &Bind,
        now: Duration,
    ) -> (Reply, Option<u64>, Vec<String>) {
        let mut log = Vec::new();
        let (pid, pidfd, _) =
            match self.claim(core, seats, client, bind.pid.get(), "bind", &mut log) {
                Ok(c) => c,
                Err(reply) => return (reply, None, log),
            };
        let (uid, system) = (client.id.uid, client.id.system);
        if let Some(why) = seats.refusal(uid, system) {
            return (
                Reply::Error {
                    code: ErrorCode::Limit,
                    message: why,
                },
                None,
                log,
            );
        }
        let conn = self.next;
        self.next += 1;
        let usecase = bind.signal.usecase.clone();
        let reply = core.bind(client, conn, pid, bind.signal.clone(), now);
        if matches!(reply, Reply::Error { .. }) {
            return (reply, None, log);
        }
        seats.take(uid, system);
        self.running.insert(
            conn,
            Running {
                what: format!("use case {usecase}"),
                pidfd,
                uid,
                system,
                app: false,
            },
        );
        log.push(format!(
            "use case {usecase} bound to pid {pid} by pid {} uid {}",
            client.id.pid, uid
        ));
        (reply, Some(conn), log)
    }

    /// The pidfd of process `pid` and its owner, if `client` may name it:
    /// a process of its own uid, or any for a system client. The pidfd is
    /// opened first and checked still running after `/proc` was read, so
    /// what was read is that process, not a later one that reused its
    /// pid. An app whose exit waits in this very epoll turn is ended first.
    fn claim(
        &mut self,
        core: &mut Core,
        seats: &mut Seats,
        client: &Client,
        pid: u32,
        verb: &str,
        log: &mut Vec<String>,
    ) -> Result<(i32, PidFd, lever_procwatch::ProcessInfo), Reply> {
        let refuse = |code, message: String| Reply::Error { code, message };
        let Ok(pid) = i32::try_from(pid) else {
            return Err(refuse(
                ErrorCode::Invalid,
                format!("pid {pid} is out of range"),
            ));
        };
        let stale: Vec<u64> = self
            .running
            .iter()
            .filter(|(_, r)| {
                r.pidfd.pid() == pid && r.pidfd.wait_exit(Duration::ZERO).unwrap_or(false)
            })
            .map(|(c, _)| *c)
            .collect();
        for conn in stale {
            if let Some(r) = self.running.get(&conn) {
                log.push(format!(
                    "{} (pid {pid}) exited: its configuration is released",
                    r.what
                ));
            }
            if let Some(r) = self.end(core, conn) {
                seats.give_back(r.uid, r.system);
            }
        }
        let Ok(pidfd) = PidFd::open(pid) else {
            return Err(refuse(
                ErrorCode::Invalid,
                format!("no process {pid} is running"),
            ));
        };
        // A command that exited already (a zombie until `lever run` reaps
        // it) is accepted too: its pidfd is readable at once and ends it.
        let Some((info, zombie)) = owner_of(pid) else {
            return Err(refuse(
                ErrorCode::Invalid,
                format!("no process {pid} is running"),
            ));
        };
        // Exited and reaped since the pidfd was opened: what was read may
        // be a new process with the same pid (a zombie's pid is not reused).
        if !zombie && pidfd.wait_exit(Duration::ZERO).unwrap_or(true) {
            return Err(refuse(
                ErrorCode::Invalid,
                format!("no process {pid} is running"),
            ));
        }
        if !client.id.system && info.uid != Some(client.id.uid) {
            return Err(refuse(
                ErrorCode::NotPermitted,
                format!(
                    "process {pid} ({}) belongs to uid {}; uid {} may {verb} only its own processes",
                    info.comm,
                    info.uid.map_or("?".to_string(), |u| u.to_string()),
                    client.id.uid
                ),
            ));
        }
        Ok((pid, pidfd, info))
    }

    /// End process-owned configuration `conn`: its requests, its task
    /// settings, its seat is the caller's to give back.
    fn end(&mut self, core: &mut Core, conn: u64) -> Option<Running> {
        let gone = self.running.remove(&conn)?;
        if gone.app {
            self.pids.remove(&gone.pidfd.pid());
        }
        core.app_exited(conn);
        Some(gone)
    }

    /// Process-owned configuration `conn`'s process exited: end it, give
    /// its seat back. Returns what it was (`app NAME`, `use case NAME`) and
    /// its pidfd (to leave the epoll set).
    pub fn exited(
        &mut self,
        core: &mut Core,
        seats: &mut Seats,
        conn: u64,
    ) -> Option<(String, PidFd)> {
        let gone = self.end(core, conn)?;
        seats.give_back(gone.uid, gone.system);
        Some((gone.what, gone.pidfd))
    }
}

/// The name and real uid of process `pid` from the kernel's
/// `/proc/PID/status` (readable for zombies too, unlike `environ`), whose
/// lines are `Name:\tgst-launch-1.0` and `Uid:\t1000\t1000\t1000\t1000`
/// (real, effective, saved, filesystem).
fn owner_of(pid: i32) -> Option<(lever_procwatch::ProcessInfo, bool)> {
    let text = KernelFs::system()
        .read(&format!("/proc/{pid}/status"))
        .ok()?;
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().to_string())
    };
    let zombie = field("State:").is_some_and(|s| s.starts_with('Z'));
    let info = lever_procwatch::ProcessInfo {
        pid,
        comm: field("Name:")?,
        uid: field("Uid:")?.split_whitespace().next()?.parse().ok(),
        cmdline: String::new(),
        cgroup: None,
        tty: false,
        display: false,
    };
    Some((info, zombie))
}
