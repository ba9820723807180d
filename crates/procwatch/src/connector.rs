//! The netlink process connector socket: open, subscribe, receive.

use crate::event::{self, ProcEvent, CN_IDX_PROC, PROC_CN_MCAST_LISTEN};
use crate::filter::{self, Interest};
use crate::WatchError;
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::io::Errno;
use rustix::net::netlink::{self, SocketAddrNetlink};
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType};
use std::time::Duration;

/// A subscribed process connector socket (`NETLINK_CONNECTOR`, group
/// `CN_IDX_PROC`). Its fd can go into the daemon's epoll set; it is
/// readable when events are queued — only events of its [`Interest`]: a
/// socket filter makes the kernel drop the rest before queueing them.
#[derive(Debug)]
pub struct ProcConnector {
    fd: OwnedFd,
    buf: Vec<u8>,
    datagrams: u64,
}

/// Why the connector cannot be used, from the errno of the step that
/// failed.
fn unavailable(step: &'static str, e: Errno) -> WatchError {
    let why = match e {
        Errno::PERM | Errno::ACCESS => {
            "listening to process events needs CAP_NET_ADMIN (run the daemon as root)"
        }
        Errno::PROTONOSUPPORT | Errno::AFNOSUPPORT | Errno::NOENT => {
            "this kernel has no netlink process connector (CONFIG_CONNECTOR and CONFIG_PROC_EVENTS)"
        }
        Errno::CONNREFUSED => {
            "the process connector only answers in the initial network namespace (a container?)"
        }
        _ => "the netlink socket failed",
    };
    WatchError::Unavailable {
        step,
        why,
        source: e.into(),
    }
}

impl ProcConnector {
    /// [`ProcConnector::open_for`] [`Interest::Exec`]: exec events only,
    /// what the daemon needs. Forks, exits, and every other event of every
    /// thread on the machine are dropped by the kernel and wake nothing.
    pub fn open() -> Result<ProcConnector, WatchError> {
        ProcConnector::open_for(Interest::Exec)
    }

    /// Open the socket, attach the socket filter of `interest` (none for
    /// [`Interest::All`]), bind to the process events group and send
    /// `PROC_CN_MCAST_LISTEN`. The filter is attached before the bind, so
    /// no event outside `interest` is ever queued. Every failure is
    /// [`WatchError::Unavailable`] saying why.
    pub fn open_for(interest: Interest) -> Result<ProcConnector, WatchError> {
        let fd = rustix::net::socket_with(
            AddressFamily::NETLINK,
            SocketType::DGRAM,
            SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
            Some(netlink::CONNECTOR),
        )
        .map_err(|e| unavailable("socket(NETLINK_CONNECTOR)", e))?;
        if let Some(program) = filter::program(interest) {
            lever_syscalls::attach_socket_filter(fd.as_fd(), &program).map_err(|source| {
                WatchError::Unavailable {
                    step: "setsockopt(SO_ATTACH_FILTER)",
                    why: "the kernel refused the socket filter that keeps fork and exit events out",
                    source,
                }
            })?;
        }
        rustix::net::bind(&fd, &SocketAddrNetlink::new(0, CN_IDX_PROC))
            .map_err(|e| unavailable("bind(CN_IDX_PROC)", e))?;
        let msg = event::subscribe_message(PROC_CN_MCAST_LISTEN);
        rustix::net::send(&fd, &msg, SendFlags::empty())
            .map_err(|e| unavailable("send(PROC_CN_MCAST_LISTEN)", e))?;
        Ok(ProcConnector {
            fd,
            buf: vec![0; 8192],
            datagrams: 0,
        })
    }

    /// Datagrams read from the socket so far, whatever they held (the
    /// events [`ProcConnector::recv`] returned, and messages it skipped):
    /// each one was a wake-up's worth of work.
    pub fn datagrams(&self) -> u64 {
        self.datagrams
    }

    /// Events queued now, waiting up to `timeout` for the first (`None` =
    /// don't wait). An empty list means none came in time.
    /// [`WatchError::Overrun`] means the kernel dropped events because the
    /// queue was full: the caller should rescan `/proc`.
    pub fn recv(&mut self, timeout: Option<Duration>) -> Result<Vec<ProcEvent>, WatchError> {
        if let Some(t) = timeout {
            let ts = Timespec::try_from(t).unwrap_or(Timespec {
                tv_sec: i64::MAX,
                tv_nsec: 0,
            });
            let mut fds = [PollFd::new(&self.fd, PollFlags::IN)];
            match poll(&mut fds, Some(&ts)) {
                Ok(_) | Err(Errno::INTR) => {}
                Err(e) => return Err(WatchError::Io(e.into())),
            }
        }
        let mut out = Vec::new();
        loop {
            match rustix::net::recv(&self.fd, &mut self.buf[..], RecvFlags::DONTWAIT) {
                Ok((n, _)) => {
                    self.datagrams += 1;
                    out.extend(event::parse(&self.buf[..n]));
                }
                Err(Errno::AGAIN) => return Ok(out),
                Err(Errno::INTR) => continue,
                Err(Errno::NOBUFS) => return Err(WatchError::Overrun),
                Err(e) => return Err(WatchError::Io(e.into())),
            }
        }
    }
}

impl AsFd for ProcConnector {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
