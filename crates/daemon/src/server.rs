//! The event loop: one thread, one epoll set, no polling.
//!
//! Sources: the listening socket, every client socket (non-blocking, with
//! its own read and write buffers, so a silent or slow client never holds
//! up the others), one pidfd per client (readable when the client process
//! exits — its lease ends), one timerfd armed at the engine's next deadline,
//! one that ends a pause of the listener, and self-pipes for
//! SIGTERM/SIGINT and SIGHUP. When nothing is live the daemon sleeps in
//! `epoll_wait` with no timeout.
//!
//! Fairness: each turn a connection gets one read and at most
//! [`FRAMES_PER_TURN`] answers; frames left over wait for its next turn,
//! after everyone else's. A connection whose unsent replies pass
//! [`REPLY_BACKLOG`] is not read from until its client takes them
//! (back-pressure: its own socket buffer fills and its writes block), and
//! any one reply, however large, is streamed as the socket takes it (a
//! STATUS or EXPLAIN is produced a frame at a time as it is taken).
//! Reply bytes are also capped per uid and in all ([`ReplyBudget`]): a
//! uid's hundred unread connections do not get a hundred backlogs.
//! Connections are capped in all, per uid, and for third-party clients
//! together ([`ConnLimits`]); running out of descriptors rests the listener
//! instead of spinning on it.

use crate::core::{Client, Core, Doc};
use crate::identity;
use crate::log::Logger;
use crate::seats::Seats;
use lever_protocol::{decode_request, Reply, MAX_BODY};
use rustix::buffer::spare_capacity;
use rustix::event::epoll;
use rustix::fd::{AsFd, OwnedFd};
use rustix::time::{Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec};
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::{Duration, Instant};

mod replies;
pub use replies::ReplyBudget;

const LISTENER: u64 = 1;
const TIMER: u64 = 2;
const SIG_TERM: u64 = 3;
const SIG_HUP: u64 = 4;
const PAUSE: u64 = 5;
const RETRY: u64 = 6;
const JOURNAL: u64 = 7;
const APPS: u64 = 8;
const FIRST_CONN: u64 = 16;
/// Past this much unsent reply data a connection is not read from until
/// the client has taken some: back-pressure instead of buffering. One reply
/// may be larger (a STATUS of thousands of requests); it is streamed.
pub const REPLY_BACKLOG: usize = 64 << 10;
/// Frames of a STATUS or EXPLAIN produced per connection per loop turn
/// (the socket taking them all), so a huge document shares the loop.
const PIECES_PER_TURN: usize = 4;
/// A connection's read or write buffer larger than this is given back
/// once it is empty.
const SMALL_BUFFER: usize = 1 << 10;
/// Frames answered per connection per loop turn, so a client with a
/// thousand requests pipelined waits its turn like everyone else.
pub const FRAMES_PER_TURN: usize = 16;
/// Requests ended per loop turn when many deadlines fall at one instant
/// (the rest are ended on the following turns, between other clients).
pub const EXPIRIES_PER_TURN: usize = 256;
/// Connections accepted per loop turn (a connect flood shares the loop).
const ACCEPTS_PER_TURN: usize = 64;
/// How long the listener rests after the daemon ran out of descriptors.
pub const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// How often originals a node refused are tried again (only while some
/// are owed: otherwise this timer is off).
pub const RETRY_UNRESTORED: Duration = Duration::from_secs(2);

/// Caps on connections, derived from the descriptor limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnLimits {
    /// Connections in all (root included).
    pub total: usize,
    /// Connections kept for system clients (root and the system group):
    /// third-party clients together may hold `total - reserve`.
    pub reserve: usize,
    /// Connections one uid other than root may hold.
    pub per_uid: usize,
}

impl ConnLimits {
    /// The caps for a process allowed `nofile` descriptors. Each
    /// connection costs two (the socket and the client's pidfd); the rest
    /// is left for nodes, the journal and `/proc` reads, so that the caps,
    /// not the kernel's EMFILE, are what a flood of connections meets.
    pub fn for_nofile(nofile: u64) -> ConnLimits {
        let nofile = usize::try_from(nofile).unwrap_or(usize::MAX);
        let spare = 64 + nofile / 8;
        let total = (nofile.saturating_sub(spare) / 2).clamp(8, 4096);
        ConnLimits {
            total,
            reserve: (total / 8).max(2),
            per_uid: (total / 8).max(1),
        }
    }
}

/// Raise the soft descriptor limit to the hard one (systemd starts
/// services with a soft limit of 1024) and return what is allowed now.
pub fn raise_nofile() -> u64 {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut lim = getrlimit(Resource::Nofile);
    if lim.current != lim.maximum {
        lim.current = lim.maximum;
        let _ = setrlimit(Resource::Nofile, lim);
    }
    getrlimit(Resource::Nofile).current.unwrap_or(1 << 20)
}

struct Conn {
    stream: UnixStream,
    client: Client,
    rbuf: Vec<u8>,
    /// Replies not yet sent: `wbuf[wpos..]`.
    wbuf: Vec<u8>,
    wpos: usize,
    pidfd: Option<OwnedFd>,
    /// Events registered with epoll now.
    interest: epoll::EventFlags,
    /// `rbuf` may hold a complete frame not yet answered.
    pending: bool,
    /// Its next request waits for originals to become durable (the
    /// journal's ticket); everyone else is served meanwhile.
    parked: Option<u64>,
    closing: bool,
    /// A STATUS or EXPLAIN being produced as the client takes it: no other
    /// frame is answered until it is complete (replies stay in order).
    doc: Option<Box<Doc>>,
    /// Its text produced and not yet framed (less than a frame).
    text: Vec<u8>,
    /// What it holds, as charged to the reply budgets.
    charge: replies::Charge,
}

impl Conn {
    fn backlog(&self) -> usize {
        self.wbuf.len() - self.wpos
    }

    /// Reply bytes it holds: unsent replies (the buffer they take), a
    /// document's text not yet framed and the document's own state.
    fn queued(&self) -> usize {
        let unsent = if self.backlog() > 0 {
            self.wbuf.capacity()
        } else {
            0
        };
        unsent + self.text.capacity() + self.doc.as_ref().map_or(0, |d| d.size())
    }

    /// May frames be answered now (not closing, not waiting for the
    /// journal, no document in progress, replies being taken)?
    fn answerable(&self) -> bool {
        !self.closing
            && self.parked.is_none()
            && self.doc.is_none()
            && self.backlog() <= REPLY_BACKLOG
    }

    /// Should it have another turn without waiting for epoll: frames left
    /// to answer or a document to go on with while its socket takes it
    /// (unless it waits for the reply budget: it is woken when replies
    /// are taken), or events to change?
    fn wants_turn(&self) -> bool {
        let go_on =
            (self.pending && self.answerable()) || (self.doc.is_some() && self.backlog() == 0);
        (go_on && self.charge.waiting.is_none()) || self.interest != self.wanted()
    }

    /// The events this connection should wait for: input only while its
    /// replies are being taken and nothing is left to answer; output while
    /// replies wait.
    fn wanted(&self) -> epoll::EventFlags {
        let mut f = epoll::EventFlags::empty();
        if !self.closing
            && !self.pending
            && self.parked.is_none()
            && self.doc.is_none()
            && self.charge.waiting.is_none()
            && self.backlog() <= REPLY_BACKLOG
        {
            f |= epoll::EventFlags::IN | epoll::EventFlags::RDHUP;
        }
        if self.backlog() > 0 {
            f |= epoll::EventFlags::OUT;
        }
        f
    }
}

/// What stopped the loop.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    /// SIGTERM or SIGINT: everything was restored.
    Terminated,
}

/// Reload hook: called on SIGHUP; returns the new target or why not.
pub type Reload<'a> = dyn FnMut() -> Result<lever_targets::Target, String> + 'a;

/// The running server.
pub struct Server<'a> {
    core: Core,
    listener: UnixListener,
    epoll: OwnedFd,
    timer: OwnedFd,
    armed: Option<Duration>,
    /// Re-enables the listener after [`ACCEPT_PAUSE`].
    pause: OwnedFd,
    /// Ticks every [`RETRY_UNRESTORED`] while the journal owes originals.
    retry: OwnedFd,
    retrying: bool,
    paused: bool,
    term: (OwnedFd, OwnedFd),
    hup: (OwnedFd, OwnedFd),
    conns: HashMap<u64, Conn>,
    /// Connections with a complete frame left unanswered at the end of
    /// their turn (served again next turn, without waiting for input).
    ready: Vec<u64>,
    next_conn: u64,
    epoch: Instant,
    system_gid: Option<u32>,
    log: Logger,
    reload: Box<Reload<'a>>,
    busy_poll: Duration,
    /// Read buffer shared by all connections (not zeroed per read).
    scratch: Box<[u8]>,
    /// Connections and process-owned configurations, against the caps.
    seats: Seats,
    /// A descriptor kept free for the moment the table is full: closed to
    /// accept (and refuse) one pending connection, then reopened.
    spare: Option<std::fs::File>,
    /// Connections refused since the last log line about it, and when
    /// that line was written (one line per [`ACCEPT_PAUSE`] at most).
    refused: (u64, Option<Instant>),
    /// Connections waiting for a journal ticket.
    parked: HashMap<u64, Vec<u64>>,
    /// App detection, when it runs.
    apps: Option<crate::apps::AppWatch>,
    /// Reply bytes queued per uid and in all, against [`ReplyBudget`].
    replies: replies::Replies,
}

fn pipe_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = rustix::pipe::pipe_with(
        rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
    )?;
    Ok((r, w))
}

fn timerfd() -> io::Result<OwnedFd> {
    Ok(rustix::time::timerfd_create(
        TimerfdClockId::Monotonic,
        TimerfdFlags::CLOEXEC | TimerfdFlags::NONBLOCK,
    )?)
}

fn set_timer(timer: &OwnedFd, after: Option<Duration>) -> io::Result<()> {
    let zero = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let value = match after {
        None => zero,
        Some(rel) => {
            let rel = rel.max(Duration::from_micros(1));
            Timespec {
                tv_sec: rel.as_secs() as i64,
                tv_nsec: rel.subsec_nanos() as i64,
            }
        }
    };
    let spec = Itimerspec {
        it_interval: zero,
        it_value: value,
    };
    rustix::time::timerfd_settime(timer, TimerfdTimerFlags::empty(), &spec)?;
    Ok(())
}

fn spare_fd() -> Option<std::fs::File> {
    std::fs::File::open("/dev/null").ok()
}

fn refusal(message: String) -> Vec<u8> {
    Reply::Error {
        code: lever_protocol::ErrorCode::Limit,
        message,
    }
    .encode()
}

impl<'a> Server<'a> {
    /// Set up epoll, the timers and the signal pipes around a bound
    /// listener. Connection caps follow the descriptor limit in force
    /// ([`ConnLimits::for_nofile`]).
    pub fn new(
        core: Core,
        listener: UnixListener,
        system_gid: Option<u32>,
        log: Logger,
        reload: Box<Reload<'a>>,
    ) -> io::Result<Server<'a>> {
        listener.set_nonblocking(true)?;
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        let timer = timerfd()?;
        let pause = timerfd()?;
        let retry = timerfd()?;
        let term = pipe_pair()?;
        let hup = pipe_pair()?;
        for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
            signal_hook::low_level::pipe::register(sig, term.1.try_clone()?)?;
        }
        signal_hook::low_level::pipe::register(signal_hook::consts::SIGHUP, hup.1.try_clone()?)?;
        let ev = epoll::EventFlags::IN;
        epoll::add(&epoll, &listener, epoll::EventData::new_u64(LISTENER), ev)?;
        epoll::add(&epoll, &timer, epoll::EventData::new_u64(TIMER), ev)?;
        epoll::add(&epoll, &pause, epoll::EventData::new_u64(PAUSE), ev)?;
        epoll::add(&epoll, &retry, epoll::EventData::new_u64(RETRY), ev)?;
        epoll::add(&epoll, &term.0, epoll::EventData::new_u64(SIG_TERM), ev)?;
        epoll::add(&epoll, &hup.0, epoll::EventData::new_u64(SIG_HUP), ev)?;
        // First-boost syncs and compaction go to the journal's disk thread.
        let mut core = core;
        core.journal_mut().background()?;
        if let Some(fd) = core.journal_mut().wake_fd() {
            epoll::add(&epoll, fd, epoll::EventData::new_u64(JOURNAL), ev)?;
        }
        let nofile = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(1 << 20);
        Ok(Server {
            core,
            listener,
            epoll,
            timer,
            armed: None,
            pause,
            paused: false,
            retry,
            retrying: false,
            term,
            hup,
            conns: HashMap::new(),
            ready: Vec::new(),
            next_conn: FIRST_CONN,
            epoch: Instant::now(),
            system_gid,
            log,
            reload,
            busy_poll: Duration::ZERO,
            scratch: vec![0u8; 16384].into_boxed_slice(),
            seats: Seats::new(ConnLimits::for_nofile(nofile)),
            spare: spare_fd(),
            refused: (0, None),
            parked: HashMap::new(),
            apps: None,
            replies: replies::Replies::new(ReplyBudget::default()),
        })
    }

    /// Keep polling (without sleeping) for this long after the last event
    /// before blocking in `epoll_wait` again. Zero (the default) always
    /// blocks. A short window spares a burst of requests the wake-up of
    /// an idle CPU, at the price of that much CPU time after each burst;
    /// an idle daemon still sleeps.
    pub fn set_busy_poll(&mut self, window: Duration) {
        self.busy_poll = window;
    }

    /// Replace the connection caps (tests; the default follows the
    /// descriptor limit).
    pub fn set_conn_limits(&mut self, limits: ConnLimits) {
        self.seats.set_limits(limits);
    }

    /// Replace the reply budgets (tests; see [`ReplyBudget::default`]).
    pub fn set_reply_budget(&mut self, budget: ReplyBudget) {
        self.replies.set_budget(budget);
    }

    /// The reply budgets in force.
    pub fn reply_budget(&self) -> &ReplyBudget {
        self.replies.budget()
    }

    /// The connection caps in force.
    pub fn conn_limits(&self) -> &ConnLimits {
        self.seats.limits()
    }

    /// Start app detection (the target's `apps:`), reading processes
    /// under `procfs`. Where the process connector cannot be used, say so
    /// once in the log and in STATUS, and serve on without it.
    pub fn watch_apps(&mut self, procfs: lever_kernel::KernelFs) -> io::Result<()> {
        use crate::apps::{AppWatch, Detection};
        match AppWatch::open(&self.core, procfs.clone()) {
            Detection::On(w) => {
                if let Some(fd) = w.fd() {
                    epoll::add(
                        &self.epoll,
                        fd,
                        epoll::EventData::new_u64(APPS),
                        epoll::EventFlags::IN,
                    )?;
                }
                self.log.info(&format!(
                    "app detection on: {} app(s) of the target",
                    self.core.target().apps.len()
                ));
                self.core.set_app_detection("on".into());
                self.apps = Some(*w);
                self.scan_apps();
            }
            Detection::NoApps => {}
            Detection::Unavailable(why) => {
                self.log.warn(&format!(
                    "{why}; apps are not configured automatically (`lever signal` still works)"
                ));
                self.core.set_app_detection(format!("unavailable: {why}"));
                // Apps already running are still found once.
                if let Some(w) = AppWatch::matcher_only(&self.core, procfs) {
                    self.apps = Some(w);
                    self.scan_apps();
                }
            }
        }
        Ok(())
    }

    /// Configure the apps already running (the connector only reports
    /// processes that exec from now on).
    fn scan_apps(&mut self) {
        self.find_apps(true);
    }

    fn apps_readable(&mut self) {
        self.find_apps(false);
    }

    /// Start the apps found by a scan of `/proc` (`scan`) or in what the
    /// connector has, and watch their exits.
    fn find_apps(&mut self, scan: bool) {
        let Some(w) = self.apps.as_mut() else { return };
        let now = self.epoch.elapsed();
        let started = if scan {
            w.scan(&mut self.core, &mut self.seats, now)
        } else {
            w.on_readable(&mut self.core, &mut self.seats, now)
        };
        watch_started(
            &self.epoll,
            w,
            &mut self.core,
            &mut self.seats,
            &self.log,
            started,
        );
    }

    fn app_exited(&mut self, conn: u64) {
        let Some(w) = self.apps.as_mut() else { return };
        if let Some((name, pidfd)) = w.exited(&mut self.core, &mut self.seats, conn) {
            let _ = epoll::delete(&self.epoll, &pidfd);
            self.log.info(&format!(
                "{name} (pid {}) exited: its configuration is released",
                pidfd.pid()
            ));
        }
    }

    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }

    /// Serve until SIGTERM/SIGINT; then restore everything and return.
    pub fn run(&mut self) -> io::Result<Stop> {
        let mut events = Vec::with_capacity(256);
        let mut last_event: Option<Instant> = None;
        let zero = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        self.arm_timer()?;
        loop {
            events.clear();
            let polling = last_event.is_some_and(|t| t.elapsed() < self.busy_poll);
            // Frames left over from the last turn are served without
            // sleeping; epoll only says what is new.
            let timeout = if polling || !self.ready.is_empty() {
                Some(&zero)
            } else {
                None
            };
            match epoll::wait(&self.epoll, spare_capacity(&mut events), timeout) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
            if !events.is_empty() && !self.busy_poll.is_zero() {
                last_event = Some(Instant::now());
            }
            let mut served = Vec::new();
            for ev in events.iter() {
                let token = ev.data.u64();
                match token {
                    LISTENER => self.accept_some(),
                    TIMER => {
                        let mut b = [0u8; 8];
                        let _ = rustix::io::read(&self.timer, &mut b);
                        self.armed = None;
                        self.log.flush_due();
                        let now = self.now();
                        // More due: `arm_timer` fires the timer again at
                        // once, after this turn's clients are served.
                        self.core.expire_some(now, EXPIRIES_PER_TURN);
                    }
                    PAUSE => {
                        let mut b = [0u8; 8];
                        let _ = rustix::io::read(&self.pause, &mut b);
                        self.resume_listener();
                    }
                    JOURNAL => self.journal_done(),
                    RETRY => {
                        let mut b = [0u8; 8];
                        let _ = rustix::io::read(&self.retry, &mut b);
                        self.retry_unrestored();
                    }
                    SIG_TERM => {
                        drain(&self.term.0);
                        self.log.info("stopping: restoring every node");
                        self.core.shutdown();
                        return Ok(Stop::Terminated);
                    }
                    SIG_HUP => {
                        drain(&self.hup.0);
                        self.reload_config();
                    }
                    APPS => self.apps_readable(),
                    t if t & 1 == 1 && (t >> 1) >= crate::apps::APP_CONN_BASE => {
                        self.app_exited(t >> 1)
                    }
                    t if t & 1 == 1 => self.close(t >> 1, "process exited"),
                    t => {
                        served.push(t >> 1);
                        self.on_conn(t >> 1, ev.flags);
                    }
                }
            }
            // One more turn for connections that still had frames waiting
            // (those just served by an event had theirs).
            let ready = std::mem::take(&mut self.ready);
            for conn in ready {
                if !served.contains(&conn) {
                    self.on_conn(conn, epoll::EventFlags::empty());
                } else if self.conns.get(&conn).is_some_and(Conn::wants_turn) {
                    self.ready.push(conn);
                }
            }
            self.arm_timer()?;
        }
    }

    fn reload_config(&mut self) {
        match (self.reload)() {
            Err(e) => self.log.warn(&format!(
                "reload failed, keeping the current configuration: {e}"
            )),
            Ok(target) => {
                let name = target.name.clone();
                let now = self.now();
                match self.core.reload(target, now) {
                    Ok(()) => {
                        self.core.metrics().set_target(&name);
                        self.log.info(&format!("reloaded target {name}"))
                    }
                    Err(e) => self.log.warn(&format!(
                        "reload failed, keeping the current configuration: {e}"
                    )),
                }
            }
        }
    }

    /// Write back the originals the journal still owes (see
    /// [`crate::journal::Journal::unrestored`]).
    fn retry_unrestored(&mut self) {
        match self.core.journal_mut().retry_unrestored() {
            Ok(done) => {
                for u in done {
                    self.log.info(&format!(
                        "restored {} to {:?}, owed since it failed ({})",
                        u.node, u.original, u.error
                    ));
                }
            }
            Err(e) => self
                .log
                .warn(&format!("journal: could not record a restore: {e}")),
        }
    }

    fn arm_timer(&mut self) -> io::Result<()> {
        // The retry timer runs only while originals are owed.
        let owed = self.core.journal_mut().owes();
        if owed != self.retrying {
            self.retrying = owed;
            let every = owed.then_some(RETRY_UNRESTORED);
            let zero = Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            let every = every.map_or(zero, |d| Timespec {
                tv_sec: d.as_secs() as i64,
                tv_nsec: 0,
            });
            rustix::time::timerfd_settime(
                &self.retry,
                TimerfdTimerFlags::empty(),
                &Itimerspec {
                    it_interval: every,
                    it_value: every,
                },
            )?;
        }
        let mut next = self.core.next_deadline();
        // A `suppressed N …` log line falls due: the same timer.
        if let Some(due) = self.log.summary_due() {
            let due = due.saturating_duration_since(self.epoch);
            next = Some(next.map_or(due, |n| n.min(due)));
        }
        if next == self.armed {
            return Ok(());
        }
        set_timer(&self.timer, next.map(|d| d.saturating_sub(self.now())))?;
        self.armed = next;
        Ok(())
    }

    fn accept_some(&mut self) {
        for _ in 0..ACCEPTS_PER_TURN {
            let flags = rustix::net::SocketFlags::CLOEXEC | rustix::net::SocketFlags::NONBLOCK;
            match rustix::net::accept_with(&self.listener, flags) {
                Ok(fd) => self.admit(UnixStream::from(fd)),
                Err(rustix::io::Errno::AGAIN) => return,
                Err(rustix::io::Errno::INTR | rustix::io::Errno::CONNABORTED) => {}
                Err(e @ (rustix::io::Errno::MFILE | rustix::io::Errno::NFILE)) => {
                    self.out_of_descriptors(e.into());
                    return;
                }
                Err(e) => {
                    // Anything else (ENOMEM, ENOBUFS): rest the same way
                    // rather than retry at once.
                    self.pause_listener(&format!("accept failed: {}", io::Error::from(e)));
                    return;
                }
            }
        }
        // Budget spent: the listener is still readable and epoll (level-
        // triggered) reports it again next turn, after everyone else.
    }

    /// EMFILE/ENFILE: the pending connection would be reported again and
    /// again. Use the spare descriptor to take it and refuse it, then rest
    /// the listener for a moment instead of spinning.
    fn out_of_descriptors(&mut self, e: io::Error) {
        self.spare = None;
        let flags = rustix::net::SocketFlags::CLOEXEC | rustix::net::SocketFlags::NONBLOCK;
        if let Ok(fd) = rustix::net::accept_with(&self.listener, flags) {
            let _ = (&UnixStream::from(fd)).write(&refusal(
                "the daemon is out of file descriptors; try again later".into(),
            ));
            self.refused.0 += 1;
        }
        self.spare = spare_fd();
        self.pause_listener(&format!(
            "accept failed: {e} ({} connections open)",
            self.conns.len()
        ));
    }

    fn pause_listener(&mut self, why: &str) {
        if !self.paused {
            self.paused = true;
            let _ = epoll::modify(
                &self.epoll,
                &self.listener,
                epoll::EventData::new_u64(LISTENER),
                epoll::EventFlags::empty(),
            );
            let _ = set_timer(&self.pause, Some(ACCEPT_PAUSE));
        }
        self.note_refusal(why);
    }

    fn resume_listener(&mut self) {
        if self.paused {
            self.paused = false;
            let _ = epoll::modify(
                &self.epoll,
                &self.listener,
                epoll::EventData::new_u64(LISTENER),
                epoll::EventFlags::IN,
            );
        }
    }

    /// Log a refused connection, at most one line per [`ACCEPT_PAUSE`]
    /// (with how many were refused since the last line): a flood must not
    /// become a flood of log lines.
    fn note_refusal(&mut self, why: &str) {
        let quiet = self.refused.1.is_some_and(|t| t.elapsed() < ACCEPT_PAUSE);
        if quiet {
            return;
        }
        let n = std::mem::take(&mut self.refused.0);
        let more = if n > 1 {
            format!(" ({n} connections refused since the last report)")
        } else {
            String::new()
        };
        self.log.warn(&format!(
            "{why}{more}; pausing accept for {} ms",
            ACCEPT_PAUSE.as_millis()
        ));
        self.refused.1 = Some(Instant::now());
    }

    /// Take a connection within the caps, or refuse it with an ERROR
    /// (code Limit) saying which cap.
    fn admit(&mut self, stream: UnixStream) {
        let id = match identity::peer(&stream, self.system_gid) {
            Ok(id) => id,
            Err(e) => {
                let msg = format!("cannot take a connection: {e}");
                self.log.warn_peer(crate::log::UNKNOWN_UID, &msg);
                return;
            }
        };
        let refuse = self.seats.refusal(id.uid, id.system);
        if let Some(message) = refuse {
            let _ = (&stream).write(&refusal(message.clone()));
            self.refused.0 += 1;
            let quiet = self.refused.1.is_some_and(|t| t.elapsed() < ACCEPT_PAUSE);
            if !quiet {
                let n = std::mem::take(&mut self.refused.0);
                self.log.warn_peer(id.uid, &format!(
                    "refused a connection from pid {} uid {}: {message} ({n} refused since the last report)",
                    id.pid, id.uid
                ));
                self.refused.1 = Some(Instant::now());
            }
            return;
        }
        let uid = id.uid;
        if let Err(e) = self.add_conn(stream, id) {
            self.log
                .warn_peer(uid, &format!("cannot take a connection: {e}"));
        }
    }

    fn add_conn(&mut self, stream: UnixStream, id: identity::Identity) -> io::Result<()> {
        let conn = self.next_conn;
        self.next_conn += 1;
        let interest = epoll::EventFlags::IN | epoll::EventFlags::RDHUP;
        epoll::add(
            &self.epoll,
            &stream,
            epoll::EventData::new_u64(conn << 1),
            interest,
        )?;
        let pidfd = identity::pidfd(id.pid);
        if let Some(fd) = &pidfd {
            if let Err(e) = epoll::add(
                &self.epoll,
                fd,
                epoll::EventData::new_u64((conn << 1) | 1),
                epoll::EventFlags::IN,
            ) {
                let _ = epoll::delete(&self.epoll, &stream);
                return Err(e.into());
            }
        }
        self.seats.take(id.uid, id.system);
        self.conns.insert(
            conn,
            Conn {
                stream,
                client: Client::new(conn, id),
                rbuf: Vec::new(),
                wbuf: Vec::new(),
                wpos: 0,
                pidfd,
                interest,
                pending: false,
                parked: None,
                closing: false,
                doc: None,
                text: Vec::new(),
                charge: replies::Charge::default(),
            },
        );
        self.core.metrics().set_clients(self.conns.len());
        Ok(())
    }

    /// The journal's disk thread finished syncs: connections parked on
    /// them go on (next turn, in order).
    fn journal_done(&mut self) {
        let tickets = match self.core.journal_mut().on_wake() {
            Ok(t) => t,
            Err(e) => {
                self.log.warn(&format!("journal: {e}"));
                return;
            }
        };
        for t in tickets {
            for conn in self.parked.remove(&t).unwrap_or_default() {
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.parked = None;
                    self.ready.push(conn);
                }
            }
        }
    }

    /// One turn of a connection: send what waits, read at most one
    /// buffer, answer at most [`FRAMES_PER_TURN`] frames — none while its
    /// unsent replies pass [`REPLY_BACKLOG`].
    fn on_conn(&mut self, conn: u64, flags: epoll::EventFlags) {
        let now = self.now();
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        // What this turn logs as a warning is this peer's, within its
        // uid's rate limit.
        let _peer = self.log.peer(c.client.id.uid);
        let mut eof = flags.intersects(epoll::EventFlags::HUP | epoll::EventFlags::ERR);
        if flush(c).is_err() {
            eof = true;
        }
        self.replies.charge(c);
        // A document in progress goes on as its client takes it.
        if !eof && produce(&self.core, &mut self.replies, c, now).is_err() {
            eof = true;
        }
        let can_answer = Conn::answerable;
        let readable = !eof
            && !c.pending
            && can_answer(c)
            && flags.intersects(epoll::EventFlags::IN | epoll::EventFlags::RDHUP);
        // Over the reply budget: not read, not answered, until replies of
        // its uid (or of the pool) are taken.
        let budget = self
            .replies
            .allows_read(c.client.id.uid, c.client.id.system);
        if let (true, Err(why)) = (readable, budget) {
            self.replies.wait(conn, &mut c.charge, why);
        }
        if readable && budget.is_ok() {
            loop {
                match c.stream.read(&mut self.scratch) {
                    Ok(0) => eof = true,
                    Ok(n) => {
                        c.rbuf.extend_from_slice(&self.scratch[..n]);
                        c.pending = true;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => eof = true,
                }
                break;
            }
        }
        // Answer complete frames, in order, within this turn's budget.
        let mut used_total = 0;
        let mut answered = 0;
        while c.pending && can_answer(c) && answered < FRAMES_PER_TURN {
            // Checked before the reply is built: a cap is passed by one
            // reply at most (a document is produced a frame at a time).
            if let Err(why) = self.replies.allows(c.client.id.uid, c.client.id.system) {
                self.replies.wait(conn, &mut c.charge, why);
                break;
            }
            match decode_request(&c.rbuf[used_total..]) {
                Ok(None) => c.pending = false,
                Ok(Some((req, used))) => {
                    if let lever_protocol::Request::Acquire(a) = &req {
                        // Originals first recorded for this acquire are
                        // synced on the disk thread; this connection waits
                        // for that (its frame stays unread), no one else.
                        if let Some(ticket) = self.core.arm_originals(a) {
                            c.parked = Some(ticket);
                            self.parked.entry(ticket).or_default().push(conn);
                            break;
                        }
                    }
                    used_total += used;
                    answered += 1;
                    let kind = crate::metrics::Kind::of(&req);
                    let t0 = Instant::now();
                    // STATUS and EXPLAIN: produced as the client reads.
                    if let Some(doc) = self.core.open_doc(&c.client, &req) {
                        c.doc = Some(Box::new(doc));
                        self.core
                            .metrics()
                            .request(crate::metrics::Outcome::Answered, t0.elapsed());
                        self.replies.charge(c);
                        continue;
                    }
                    let reply = match &req {
                        lever_protocol::Request::Register(_) | lever_protocol::Request::Bind(_) => {
                            let apps = self.apps.get_or_insert_with(|| {
                                crate::apps::AppWatch::new(self.core.fs().clone())
                            });
                            let (reply, conn, log) = match &req {
                                lever_protocol::Request::Register(r) => apps.register(
                                    &mut self.core,
                                    &mut self.seats,
                                    &c.client,
                                    r,
                                    now,
                                ),
                                lever_protocol::Request::Bind(b) => {
                                    apps.bind(&mut self.core, &mut self.seats, &c.client, b, now)
                                }
                                _ => unreachable!("matched above"),
                            };
                            let started = crate::apps::Started {
                                conns: conn.into_iter().collect(),
                                log,
                            };
                            watch_started(
                                &self.epoll,
                                apps,
                                &mut self.core,
                                &mut self.seats,
                                &self.log,
                                started,
                            );
                            reply
                        }
                        lever_protocol::Request::Behalf(b) => {
                            behalf(c, &mut self.seats, &self.core, *b, self.system_gid)
                        }
                        _ => self.core.handle(&c.client, req, now),
                    };
                    let metrics = self.core.metrics();
                    metrics.request(kind.outcome(&reply), t0.elapsed());
                    metrics.set_live(self.core.live());
                    c.wbuf.extend_from_slice(&reply.encode());
                    self.replies.charge(c);
                }
                Err(e) => {
                    // The stream cannot be trusted past a bad frame.
                    self.log.warn(&format!(
                        "client pid {} uid {} sent a malformed frame: {e}; closing it",
                        c.client.id.pid, c.client.id.uid
                    ));
                    c.wbuf.extend_from_slice(
                        &Reply::Error {
                            code: e.code(),
                            message: e.to_string(),
                        }
                        .encode(),
                    );
                    c.closing = true;
                    c.pending = false;
                }
            }
        }
        c.rbuf.drain(..used_total);
        if c.rbuf.is_empty() && c.rbuf.capacity() > SMALL_BUFFER {
            // A pipelined burst is over: 16 KiB per idle connection add up.
            c.rbuf = Vec::new();
        }
        if answered > 0 && flush(c).is_err() {
            eof = true;
        }
        // A document opened this turn gets its first frames.
        if !eof && produce(&self.core, &mut self.replies, c, now).is_err() {
            eof = true;
        }
        self.replies.charge(c);
        if eof || (c.closing && c.backlog() == 0) {
            self.close(conn, "connection closed");
            return;
        }
        if c.wants_turn() {
            self.ready.push(conn);
        }
        let want = c.wanted();
        if want != c.interest {
            c.interest = want;
            let _ = epoll::modify(
                &self.epoll,
                &c.stream,
                epoll::EventData::new_u64(conn << 1),
                want,
            );
        }
        self.replies.nudge(c.client.id.uid, c.client.id.system);
        self.wake_waiters();
    }

    /// Connections that waited for the reply budget try again (a few per
    /// queue each time replies are taken).
    fn wake_waiters(&mut self) {
        for conn in self.replies.woken() {
            if let Some(c) = self.conns.get_mut(&conn) {
                c.charge.waiting = None;
                self.ready.push(conn);
            }
        }
    }

    fn close(&mut self, conn: u64, why: &str) {
        let Some(mut c) = self.conns.remove(&conn) else {
            return;
        };
        self.replies.forget(conn, &mut c.charge);
        self.replies.nudge(c.client.id.uid, c.client.id.system);
        self.wake_waiters();
        let _ = epoll::delete(&self.epoll, &c.stream);
        if let Some(fd) = &c.pidfd {
            let _ = epoll::delete(&self.epoll, fd);
        }
        self.core.metrics().set_clients(self.conns.len());
        self.seats.give_back(c.client.id.uid, c.client.id.system);
        if self.core.live() > 0 {
            let before = self.core.live();
            self.core.client_gone(conn);
            if self.core.live() != before {
                self.log.info(&format!(
                    "client pid {} ({why}): lease ended",
                    c.client.id.pid
                ));
            }
        }
    }
}

/// Log what starting apps said and put the new apps' pidfds into the
/// epoll set (an app whose exit cannot be watched is ended at once).
fn watch_started(
    ep: &OwnedFd,
    w: &mut crate::apps::AppWatch,
    core: &mut Core,
    seats: &mut Seats,
    log: &Logger,
    started: crate::apps::Started,
) {
    for line in started.log {
        log.info(&line);
    }
    for conn in started.conns {
        let Some(fd) = w.pidfd(conn) else { continue };
        if let Err(e) = epoll::add(
            ep,
            fd,
            epoll::EventData::new_u64((conn << 1) | 1),
            epoll::EventFlags::IN,
        ) {
            log.warn(&format!("cannot watch an app's exit: {e}"));
            w.exited(core, seats, conn);
        }
    }
}

/// BEHALF on connection `c`: from now on it speaks for the D-Bus caller
/// `b` — that caller's class (root or the system group: system), its
/// seat, its caps and its view. Only the daemon's own process (its D-Bus
/// service, which learned the caller from the bus) may ask, and only on a
/// connection that holds nothing yet; anyone else is refused (ERROR 4).
fn behalf(
    c: &mut Conn,
    seats: &mut Seats,
    core: &Core,
    b: lever_protocol::Behalf,
    system_gid: Option<u32>,
) -> Reply {
    let refuse = |code, message: String| Reply::Error { code, message };
    let own = i32::try_from(std::process::id()).unwrap_or(-1);
    if c.client.id.pid != own || c.client.id.uid != 0 {
        return refuse(
            lever_protocol::ErrorCode::NotPermitted,
            "BEHALF is only for the daemon's own D-Bus service".into(),
        );
    }
    if core.holds_anything(c.client.conn) {
        return refuse(
            lever_protocol::ErrorCode::Invalid,
            "BEHALF must come before any request on the connection".into(),
        );
    }
    let pid = i32::try_from(b.pid.get()).unwrap_or(i32::MAX);
    let caller = identity::of_caller(b.uid, pid, system_gid);
    if let Some(why) = seats.refusal(caller.uid, caller.system) {
        c.closing = true;
        return refuse(lever_protocol::ErrorCode::Limit, why);
    }
    seats.give_back(c.client.id.uid, c.client.id.system);
    seats.take(caller.uid, caller.system);
    c.client.id = caller;
    Reply::Done
}

/// Produce more of `c`'s document, if it has one, while nothing of it
/// waits unsent and the reply budget allows: a frame at a time, at most
/// [`PIECES_PER_TURN`] frames a turn. The daemon never holds more than
/// about a frame of a document, whatever its size.
fn produce(
    core: &Core,
    replies: &mut replies::Replies,
    c: &mut Conn,
    now: Duration,
) -> io::Result<()> {
    for _ in 0..PIECES_PER_TURN {
        if c.doc.is_none() || c.backlog() > 0 {
            break;
        }
        if let Err(why) = replies.allows(c.client.id.uid, c.client.id.system) {
            replies.wait(c.client.conn, &mut c.charge, why);
            break;
        }
        let Some(doc) = c.doc.as_mut() else { break };
        let done = core.doc_next(&c.client, doc, &mut c.text, MAX_BODY + 1, now);
        frame_text(&mut c.text, &mut c.wbuf, done);
        if done {
            c.doc = None;
            c.text = Vec::new();
        }
        replies.charge(c);
        flush(c)?;
        replies.charge(c);
    }
    Ok(())
}

/// Move JSON text into JSON frames: whole frames while more than a frame
/// waits (flag MORE: more follows), and everything once the document is
/// `done` (its last frame without MORE). Cut at UTF-8 boundaries, as
/// readers decode each frame.
fn frame_text(text: &mut Vec<u8>, wbuf: &mut Vec<u8>, done: bool) {
    while text.len() > MAX_BODY || (done && !text.is_empty()) {
        let mut cut = text.len().min(MAX_BODY);
        while cut > 0 && cut < text.len() && text[cut] & 0xC0 == 0x80 {
            cut -= 1;
        }
        let piece: Vec<u8> = text.drain(..cut).collect();
        let piece = String::from_utf8(piece)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        let reply = if done && text.is_empty() {
            Reply::Json(piece)
        } else {
            Reply::JsonMore(piece)
        };
        wbuf.extend_from_slice(&reply.encode());
    }
}

/// Send as much of `c`'s replies as the socket takes now; the rest waits
/// for EPOLLOUT. Keeps a small buffer's allocation once it is empty, and
/// returns a larger one once drained (after a big reply): idle
/// connections by the thousand hold almost nothing.
fn flush(c: &mut Conn) -> io::Result<()> {
    while c.backlog() > 0 {
        match c.stream.write(&c.wbuf[c.wpos..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => c.wpos += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if c.backlog() == 0 {
        c.wbuf.clear();
        c.wpos = 0;
        if c.wbuf.capacity() > SMALL_BUFFER {
            c.wbuf = Vec::new();
        }
    } else if c.wpos > REPLY_BACKLOG {
        c.wbuf.drain(..c.wpos);
        c.wpos = 0;
    }
    Ok(())
}

fn drain(fd: impl AsFd) {
    let mut b = [0u8; 64];
    while matches!(rustix::io::read(&fd, &mut b), Ok(n) if n > 0) {}
}
