//! The netlink process connector socket: open, subscribe, receive.

use crate::event::{self, ProcEvent, CN_IDX_PROC, PROC_CN_MCAST_LISTEN};
use crate::WatchError;
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::io::Errno;
use rustix::net::netlink::{self, SocketAddrNetlink};
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType};
use std::time::Duration;

/// A subscribed process connector socket (`NETLINK_CONNECTOR`, group
/// `CN_IDX_PROC`). Its fd can go into the daemon's epoll set; it is
/// readable when events are queued.
#[derive(Debug)]
pub struct ProcConnector {
    fd: OwnedFd,
    buf: Vec<u8>,
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
    /// Open the socket, bind to the process events group and send
    /// `PROC_CN_MCAST_LISTEN`. Every failure is
    /// [`WatchError::Unavailable`] saying why.
    pub fn open() -> Result<ProcConnector, WatchError> {
        let fd = rustix::net::socket_with(
            AddressFamily::NETLINK,
            SocketType::DGRAM,
            SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
            Some(netlink::CONNECTOR),
        )
        .map_err(|e| unavailable("socket(NETLINK_CONNECTOR)", e))?;
        rustix::net::bind(&fd, &SocketAddrNetlink::new(0, CN_IDX_PROC))
            .map_err(|e| unavailable("bind(CN_IDX_PROC)", e))?;
        let msg = event::subscribe_message(PROC_CN_MCAST_LISTEN);
        rustix::net::send(&fd, &msg, SendFlags::empty())
            .map_err(|e| unavailable("send(PROC_CN_MCAST_LISTEN)", e))?;
        Ok(ProcConnector {
            fd,
            buf: vec![0; 8192],
        })
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
                Ok((n, _)) => out.extend(event::parse(&self.buf[..n])),
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
