//! Who is on the other end of a connection — from the kernel, never from
//! the message.
//!
//! `SO_PEERCRED` gives the peer's pid, uid and gid at `connect()` time; a
//! pidfd pins that process so its exit wakes the daemon (the lease) even if
//! the pid is reused later. A client is a **system** client when it runs as
//! root, or when the system group (default `lever`) is its primary group or
//! one of its supplementary groups.

use lever_kernel::KernelFs;
use rustix::fd::{AsFd, OwnedFd};
use serde::Serialize;

/// A connected client's identity.
#[derive(Debug, Clone, Serialize)]
pub struct Identity {
    /// Process id at connect time.
    pub pid: i32,
    /// User id.
    pub uid: u32,
    /// Primary group id.
    pub gid: u32,
    /// Executable, when readable.
    pub exe: Option<String>,
    /// May use system resources and system priority classes.
    pub system: bool,
}

/// Read the peer credentials of a connected Unix socket.
pub fn peer(sock: impl AsFd, system_gid: Option<u32>) -> std::io::Result<Identity> {
    let cred = rustix::net::sockopt::socket_peercred(sock)?;
    let pid = cred.pid.as_raw_nonzero().get();
    let uid = cred.uid.as_raw();
    let gid = cred.gid.as_raw();
    // Peers are real processes: their /proc is the host's, whatever --root.
    let proc_fs = KernelFs::system();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .map(|p| p.display().to_string());
    let groups = proc_fs
        .read(&format!("/proc/{pid}/status"))
        .ok()
        .map(|s| supplementary_groups(&s))
        .unwrap_or_default();
    let system = uid == 0 || system_gid.is_some_and(|g| g == gid || groups.contains(&g));
    Ok(Identity {
        pid,
        uid,
        gid,
        exe,
        system,
    })
}

/// The identity of a D-Bus caller, from what the bus daemon reported
/// (`uid`, `pid`): its groups are read from the kernel's
/// `/proc/PID/status` (`Gid:` and `Groups:`), so it is a system client
/// exactly when a socket peer of that uid and those groups would be. A
/// process that is gone (or whose real uid is not `uid` any more) gets no
/// group: a third-party client unless `uid` is root.
pub fn of_caller(uid: u32, pid: i32, system_gid: Option<u32>) -> Identity {
    let status = KernelFs::system()
        .read(&format!("/proc/{pid}/status"))
        .unwrap_or_default();
    let ids = |key: &str| -> Vec<u32> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| {
                v.split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    };
    let same_user = ids("Uid:").first() == Some(&uid);
    let gid = if same_user {
        ids("Gid:").first().copied()
    } else {
        None
    };
    let groups = if same_user {
        supplementary_groups(&status)
    } else {
        Vec::new()
    };
    let system = uid == 0 || system_gid.is_some_and(|g| gid == Some(g) || groups.contains(&g));
    Identity {
        pid,
        uid,
        gid: gid.unwrap_or(u32::MAX),
        exe: std::fs::read_link(format!("/proc/{pid}/exe"))
            .ok()
            .map(|p| p.display().to_string()),
        system,
    }
}

/// A pidfd for `pid`, readable once the process exits; `None` where the
/// kernel has no pidfd_open (before 5.3) or the process is already gone.
pub fn pidfd(pid: i32) -> Option<OwnedFd> {
    let pid = rustix::process::Pid::from_raw(pid)?;
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
}

/// The `Groups:` line of `/proc/PID/status`:
/// `Groups:\t4 24 27 30 46 100 118 1000 `
fn supplementary_groups(status: &str) -> Vec<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Groups:"))
        .map(|g| {
            g.split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Look a group name up in `/etc/group` (`lever:x:998:alice,bob`).
pub fn group_id(name: &str) -> Option<u32> {
    let text = std::fs::read_to_string("/etc/group").ok()?;
    text.lines().find_map(|l| {
        let mut f = l.split(':');
        (f.next()? == name).then_some(())?;
        f.nth(1)?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_groups_line() {
        let status =
            "Name:\tbash\nUid:\t1000\t1000\t1000\t1000\nGroups:\t4 24 27 1000 \nNgid:\t0\n";
        assert_eq!(supplementary_groups(status), vec![4, 24, 27, 1000]);
        assert!(supplementary_groups("Name:\tx\n").is_empty());
    }

    #[test]
    fn a_caller_is_system_by_uid_or_group_as_a_peer_would_be() {
        let me = std::process::id() as i32;
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        let id = of_caller(uid, me, None);
        assert_eq!((id.uid, id.gid, id.system), (uid, gid, uid == 0));
        // In the system group by its primary group.
        assert!(of_caller(uid, me, Some(gid)).system);
        // Another uid than the process's: no groups are believed.
        let other = of_caller(uid.wrapping_add(12345), me, Some(gid));
        assert!(!other.system);
        assert_eq!(other.gid, u32::MAX);
    }

    #[test]
    fn peer_of_a_socketpair_is_us() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let id = peer(&a, None).unwrap();
        assert_eq!(id.pid as u32, std::process::id());
        assert_eq!(id.uid, rustix::process::getuid().as_raw());
        assert_eq!(id.system, id.uid == 0);
        if pidfd(id.pid).is_none() {
            eprintln!(
                "note: pidfd_open is not available on this kernel; leases rely on the socket"
            );
        }
    }
}
