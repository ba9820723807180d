//! The event loop: one thread, one epoll set, no polling.
//!
//! Sources: the listening socket, every client socket (non-blocking, with
//! its own read and write buffers, so a silent or slow client never holds
//! up the others), one pidfd per client (readable when the client process
//! exits — its lease ends), one timerfd armed at the engine's next deadline,
//! and self-pipes for SIGTERM/SIGINT and SIGHUP. When nothing is live the
//! daemon sleeps in `epoll_wait` with no timeout.

use crate::core::{Client, Core};
use crate::identity;
use crate::log::Logger;
use lever_protocol::{decode_request, Reply};
use rustix::buffer::spare_capacity;
use rustix::event::epoll;
use rustix::fd::{AsFd, OwnedFd};
use rustix::time::{Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec};
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::{Duration, Instant};

const LISTENER: u64 = 1;
const TIMER: u64 = 2;
const SIG_TERM: u64 = 3;
const SIG_HUP: u64 = 4;
const FIRST_CONN: u64 = 16;
/// A client that stops reading its replies is dropped past this backlog.
const MAX_WRITE_BACKLOG: usize = 1 << 20;
/// Connections beyond this are refused at accept.
const MAX_CONNECTIONS: usize = 4096;

struct Conn {
    stream: UnixStream,
    client: Client,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    pidfd: Option<OwnedFd>,
    want_write: bool,
    closing: bool,
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
    term: (OwnedFd, OwnedFd),
    hup: (OwnedFd, OwnedFd),
    conns: HashMap<u64, Conn>,
    next_conn: u64,
    epoch: Instant,
    system_gid: Option<u32>,
    log: Logger,
    reload: Box<Reload<'a>>,
    busy_poll: Duration,
    /// Read buffer shared by all connections (not zeroed per read).
    scratch: Box<[u8]>,
}

fn pipe_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = rustix::pipe::pipe_with(
        rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
    )?;
    Ok((r, w))
}

impl<'a> Server<'a> {
    /// Set up epoll, the timer and the signal pipes around a bound listener.
    pub fn new(
        core: Core,
        listener: UnixListener,
        system_gid: Option<u32>,
        log: Logger,
        reload: Box<Reload<'a>>,
    ) -> io::Result<Server<'a>> {
        listener.set_nonblocking(true)?;
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        let timer = rustix::time::timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::CLOEXEC | TimerfdFlags::NONBLOCK,
        )?;
        let term = pipe_pair()?;
        let hup = pipe_pair()?;
        for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
            signal_hook::low_level::pipe::register(sig, term.1.try_clone()?)?;
        }
        signal_hook::low_level::pipe::register(signal_hook::consts::SIGHUP, hup.1.try_clone()?)?;
        let ev = epoll::EventFlags::IN;
        epoll::add(&epoll, &listener, epoll::EventData::new_u64(LISTENER), ev)?;
        epoll::add(&epoll, &timer, epoll::EventData::new_u64(TIMER), ev)?;
        epoll::add(&epoll, &term.0, epoll::EventData::new_u64(SIG_TERM), ev)?;
        epoll::add(&epoll, &hup.0, epoll::EventData::new_u64(SIG_HUP), ev)?;
        Ok(Server {
            core,
            listener,
            epoll,
            timer,
            armed: None,
            term,
            hup,
            conns: HashMap::new(),
            next_conn: FIRST_CONN,
            epoch: Instant::now(),
            system_gid,
            log,
            reload,
            busy_poll: Duration::ZERO,
            scratch: vec![0u8; 16384].into_boxed_slice(),
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
        loop {
            events.clear();
            let polling = last_event.is_some_and(|t| t.elapsed() < self.busy_poll);
            let timeout = if polling { Some(&zero) } else { None };
            match epoll::wait(&self.epoll, spare_capacity(&mut events), timeout) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
            if events.is_empty() {
                continue;
            }
            if !self.busy_poll.is_zero() {
                last_event = Some(Instant::now());
            }
            for ev in events.iter() {
                let token = ev.data.u64();
                match token {
                    LISTENER => self.accept_all(),
                    TIMER => {
                        let mut b = [0u8; 8];
                        let _ = rustix::io::read(&self.timer, &mut b);
                        self.armed = None;
                        let now = self.now();
                        self.core.expire(now);
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
                    t if t & 1 == 1 => self.close(t >> 1, "process exited"),
                    t => self.on_conn(t >> 1, ev.flags),
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
                    Ok(()) => self.log.info(&format!("reloaded target {name}")),
                    Err(e) => self.log.warn(&format!(
                        "reload failed, keeping the current configuration: {e}"
                    )),
                }
            }
        }
    }

    fn arm_timer(&mut self) -> io::Result<()> {
        let next = self.core.next_deadline();
        if next == self.armed {
            return Ok(());
        }
        let value = match next {
            None => Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            Some(d) => {
                let rel = d.saturating_sub(self.now()).max(Duration::from_micros(1));
                Timespec {
                    tv_sec: rel.as_secs() as i64,
                    tv_nsec: rel.subsec_nanos() as i64,
                }
            }
        };
        let spec = Itimerspec {
            it_interval: Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: value,
        };
        rustix::time::timerfd_settime(&self.timer, TimerfdTimerFlags::empty(), &spec)?;
        self.armed = next;
        Ok(())
    }

    fn accept_all(&mut self) {
        loop {
            let stream = match self.listener.accept() {
                Ok((s, _)) => s,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    self.log.warn(&format!("accept failed: {e}"));
                    return;
                }
            };
            if self.conns.len() >= MAX_CONNECTIONS {
                let mut s = stream;
                let _ = s.write_all(
                    &Reply::Error {
                        code: lever_protocol::ErrorCode::Limit,
                        message: format!("too many connections (limit {MAX_CONNECTIONS})"),
                    }
                    .encode(),
                );
                continue;
            }
            if let Err(e) = self.add_conn(stream) {
                self.log.warn(&format!("cannot take a connection: {e}"));
            }
        }
    }

    fn add_conn(&mut self, stream: UnixStream) -> io::Result<()> {
        stream.set_nonblocking(true)?;
        let id = identity::peer(&stream, self.system_gid)?;
        let conn = self.next_conn;
        self.next_conn += 1;
        epoll::add(
            &self.epoll,
            &stream,
            epoll::EventData::new_u64(conn << 1),
            epoll::EventFlags::IN | epoll::EventFlags::RDHUP,
        )?;
        let pidfd = identity::pidfd(id.pid);
        if let Some(fd) = &pidfd {
            epoll::add(
                &self.epoll,
                fd,
                epoll::EventData::new_u64((conn << 1) | 1),
                epoll::EventFlags::IN,
            )?;
        }
        self.conns.insert(
            conn,
            Conn {
                stream,
                client: Client { conn, id },
                rbuf: Vec::new(),
                wbuf: Vec::new(),
                pidfd,
                want_write: false,
                closing: false,
            },
        );
        Ok(())
    }

    fn on_conn(&mut self, conn: u64, flags: epoll::EventFlags) {
        let now = self.now();
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let mut eof = flags.intersects(epoll::EventFlags::HUP | epoll::EventFlags::ERR);
        if flags.contains(epoll::EventFlags::IN) || flags.contains(epoll::EventFlags::RDHUP) {
            let chunk = &mut self.scratch;
            loop {
                match c.stream.read(chunk) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(n) => {
                        c.rbuf.extend_from_slice(&chunk[..n]);
                        // A short read drained the socket for now; epoll
                        // (level-triggered) reports more when it comes.
                        if n < chunk.len() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => {
                        eof = true;
                        break;
                    }
                }
            }
            // Answer every complete frame, in order.
            let mut used_total = 0;
            while !c.closing {
                match decode_request(&c.rbuf[used_total..]) {
                    Ok(None) => break,
                    Ok(Some((req, used))) => {
                        used_total += used;
                        let reply = self.core.handle(&c.client, req, now);
                        c.wbuf.extend_from_slice(&reply.encode());
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
                    }
                }
            }
            c.rbuf.drain(..used_total);
        }
        if !c.wbuf.is_empty() {
            loop {
                match c.stream.write(&c.wbuf) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(n) => {
                        c.wbuf.drain(..n);
                        if c.wbuf.is_empty() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => {
                        eof = true;
                        break;
                    }
                }
            }
        }
        if c.wbuf.len() > MAX_WRITE_BACKLOG {
            self.close(conn, "client does not read its replies");
            return;
        }
        if eof || (c.closing && c.wbuf.is_empty()) {
            self.close(conn, "connection closed");
            return;
        }
        let want = !c.wbuf.is_empty();
        if want != c.want_write {
            c.want_write = want;
            let mut f = epoll::EventFlags::IN | epoll::EventFlags::RDHUP;
            if want {
                f |= epoll::EventFlags::OUT;
            }
            let _ = epoll::modify(
                &self.epoll,
                &c.stream,
                epoll::EventData::new_u64(conn << 1),
                f,
            );
        }
    }

    fn close(&mut self, conn: u64, why: &str) {
        let Some(c) = self.conns.remove(&conn) else {
            return;
        };
        let _ = epoll::delete(&self.epoll, &c.stream);
        if let Some(fd) = &c.pidfd {
            let _ = epoll::delete(&self.epoll, fd);
        }
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

fn drain(fd: impl AsFd) {
    let mut b = [0u8; 64];
    while matches!(rustix::io::read(&fd, &mut b), Ok(n) if n > 0) {}
}
