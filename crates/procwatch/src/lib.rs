//! App detection: which processes start and stop, and which of them are
//! apps a target configures.
//!
//! - [`ProcConnector`] listens to the kernel's netlink process connector
//!   (`NETLINK_CONNECTOR`, group `CN_IDX_PROC`, `PROC_CN_MCAST_LISTEN`)
//!   and returns [`ProcEvent`]s: exec (and, with
//!   [`Interest::ExecAndExit`], process exit) with pid and tgid. A
//!   classic BPF socket filter makes the kernel drop every other event
//!   (forks, thread exits, uid and comm changes) before it is queued, so
//!   fork churn on the machine wakes nobody. Where the connector is not
//!   available (no CAP_NET_ADMIN, a kernel without CONFIG_PROC_EVENTS)
//!   opening it is [`WatchError::Unavailable`], which says why.
//! - [`AppMatcher`] decides from `/proc/PID` (below a root, so tests use
//!   fake trees) whether a process is one of the `apps:` entries
//!   ([`AppPattern`]: executable name, optional cmdline regex and cgroup)
//!   and passes URM's filter ([`AppFilter`]: tty or display, uid,
//!   blocklist).
//! - [`PidFd`] (`pidfd_open`) watches a matched process until it exits,
//!   without the pid-reuse race.
//!
//! ```
//! use lever_kernel::KernelFs;
//! use lever_procwatch::{AppFilter, AppMatcher, AppPattern, PidFd, ProcConnector, WatchError};
//! use std::time::Duration;
//!
//! let matcher = AppMatcher::new(
//!     vec![AppPattern { name: "sleeper".into(), exec: "sleep".into(), cmdline: None, cgroup: None }],
//!     AppFilter::default(),
//! ).unwrap();
//! match ProcConnector::open() {
//!     Ok(mut conn) => {
//!         let mut child = std::process::Command::new("sleep").arg("0.2").spawn().unwrap();
//!         let pid = child.id() as i32;
//!         // Wait for the exec event of our child (other processes exec too).
//!         let fs = KernelFs::system();
//!         'wait: for _ in 0..100 {
//!             for e in conn.recv(Some(Duration::from_millis(50))).unwrap() {
//!                 if let lever_procwatch::ProcEvent::Exec { tgid, .. } = e {
//!                     if tgid == pid {
//!                         let (_, app) = matcher.match_pid(&fs, pid).unwrap().unwrap();
//!                         assert_eq!(app.unwrap().name, "sleeper");
//!                         break 'wait;
//!                     }
//!                 }
//!             }
//!         }
//!         let pidfd = PidFd::open(pid).unwrap();
//!         assert!(pidfd.wait_exit(Duration::from_secs(5)).unwrap());
//!         child.wait().unwrap();
//!     }
//!     // Not root, or no connector here: the error says which.
//!     Err(e @ WatchError::Unavailable { .. }) => println!("{e}"),
//!     Err(e) => panic!("{e}"),
//! }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod connector;
pub mod event;
mod filter;
mod matcher;
mod pidfd;

pub use connector::ProcConnector;
pub use event::ProcEvent;
pub use filter::Interest;
pub use matcher::{
    check_regex, process_info, AppFilter, AppMatcher, AppPattern, Matched, ProcessInfo, Skip,
    COMM_LEN,
};
pub use pidfd::PidFd;

/// Now on CLOCK_MONOTONIC, in ns: the clock of [`ProcEvent`] timestamps,
/// so `monotonic_ns() - timestamp_ns` is how long ago the kernel saw it.
pub fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Everything that can go wrong watching processes.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The process connector (or pidfd) cannot be used here, and why.
    #[error("app detection is not available: {step} failed: {why} ({source})")]
    Unavailable {
        /// The step that failed, e.g. `send(PROC_CN_MCAST_LISTEN)`.
        step: &'static str,
        /// Why, in words.
        why: &'static str,
        /// The kernel's answer.
        source: std::io::Error,
    },
    /// The kernel dropped events (the socket's queue was full); rescan
    /// `/proc` to catch up.
    #[error("process events were lost (netlink queue overrun); rescan /proc")]
    Overrun,
    /// The process does not exist.
    #[error("process {pid} does not exist")]
    Gone {
        /// The pid.
        pid: i32,
    },
    /// An `apps:` entry's cmdline is not a regular expression.
    #[error("app {app}: cmdline is not a regular expression: {message}")]
    BadPattern {
        /// The entry.
        app: String,
        /// The regex crate's explanation.
        message: String,
    },
    /// Reading `/proc/PID` failed (other than the process being gone).
    #[error(transparent)]
    Proc(#[from] lever_kernel::KernelError),
    /// A socket or poll call failed.
    #[error("process connector: {0}")]
    Io(#[from] std::io::Error),
}
