//! A pidfd (`pidfd_open(2)`): a handle on one process that becomes
//! readable when it exits, so the daemon's epoll learns of the exit even
//! if the connector's event was lost, and a recycled pid never aliases.

use crate::WatchError;
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::io::Errno;
use rustix::process::{Pid, PidfdFlags};
use std::time::Duration;

/// An open pidfd.
#[derive(Debug)]
pub struct PidFd {
    pid: i32,
    fd: OwnedFd,
}

impl PidFd {
    /// Open a pidfd for process `pid`. A pid that is gone is
    /// [`WatchError::Gone`]; a kernel before 5.3 is
    /// [`WatchError::Unavailable`].
    pub fn open(pid: i32) -> Result<PidFd, WatchError> {
        let p = Pid::from_raw(pid).ok_or(WatchError::Gone { pid })?;
        let fd = rustix::process::pidfd_open(p, PidfdFlags::empty()).map_err(|e| match e {
            Errno::SRCH => WatchError::Gone { pid },
            Errno::NOSYS => WatchError::Unavailable {
                step: "pidfd_open",
                why: "this kernel has no pidfd_open (Linux 5.3 or later is needed)",
                source: e.into(),
            },
            e => WatchError::Io(e.into()),
        })?;
        Ok(PidFd { pid, fd })
    }

    /// The process id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Wait up to `timeout` for the process to exit; true if it has.
    pub fn wait_exit(&self, timeout: Duration) -> Result<bool, WatchError> {
        let ts = Timespec::try_from(timeout).unwrap_or(Timespec {
            tv_sec: i64::MAX,
            tv_nsec: 0,
        });
        let mut fds = [PollFd::new(&self.fd, PollFlags::IN)];
        match poll(&mut fds, Some(&ts)) {
            Ok(n) => Ok(n > 0),
            Err(Errno::INTR) => Ok(false),
            Err(e) => Err(WatchError::Io(e.into())),
        }
    }
}

impl AsFd for PidFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
