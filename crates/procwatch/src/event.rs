//! The process connector's messages, built and parsed by hand (native byte
//! order, as the kernel writes them). One datagram is
//!
//! ```text
//! struct nlmsghdr   16 bytes  len u32, type u16, flags u16, seq u32, pid u32
//! struct cn_msg     20 bytes  id.idx u32 (CN_IDX_PROC = 1), id.val u32 (1),
//!                             seq u32, ack u32, len u16, flags u16
//! struct proc_event           what u32, cpu u32, timestamp_ns u64, then
//!   exec: process_pid u32, process_tgid u32
//!   exit: process_pid u32, process_tgid u32, exit_code u32, exit_signal u32
//!   fork: parent_pid, parent_tgid, child_pid, child_tgid (u32 each)
//! ```
//!
//! (include/uapi/linux/netlink.h, connector.h, cn_proc.h.) To subscribe
//! the client sends the same two headers around one u32:
//! `PROC_CN_MCAST_LISTEN` (1).

use serde::Serialize;

/// `CN_IDX_PROC` and `CN_VAL_PROC`: the process connector's id, and the
/// multicast group to bind to.
pub const CN_IDX_PROC: u32 = 1;
pub(crate) const CN_VAL_PROC: u32 = 1;
/// `NLMSG_DONE`: every connector message is one.
const NLMSG_DONE: u16 = 3;
pub(crate) const NLMSG_HDRLEN: usize = 16;
pub(crate) const CN_MSG_LEN: usize = 20;
/// `PROC_CN_MCAST_LISTEN` / `PROC_CN_MCAST_IGNORE`.
pub const PROC_CN_MCAST_LISTEN: u32 = 1;

pub(crate) const PROC_EVENT_FORK: u32 = 0x0000_0001;
pub(crate) const PROC_EVENT_EXEC: u32 = 0x0000_0002;
pub(crate) const PROC_EVENT_EXIT: u32 = 0x8000_0000;

/// One event Lever acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "event")]
pub enum ProcEvent {
    /// A thread called execve: `pid` is the thread, `tgid` its process.
    Exec {
        /// The thread id.
        pid: i32,
        /// The process id.
        tgid: i32,
        /// Kernel timestamp (CLOCK_MONOTONIC ns).
        timestamp_ns: u64,
    },
    /// A thread exited; the process is gone when `pid == tgid` (the only
    /// exits [`crate::Interest::ExecAndExit`] lets through).
    Exit {
        /// The thread id.
        pid: i32,
        /// The process id.
        tgid: i32,
        /// Its exit code (`wait` status).
        exit_code: u32,
        /// Kernel timestamp (CLOCK_MONOTONIC ns).
        timestamp_ns: u64,
    },
    /// A process or thread was created (only on a socket opened for
    /// [`crate::Interest::All`]).
    Fork {
        /// The parent's process id.
        parent_tgid: i32,
        /// The child's thread id.
        child_pid: i32,
        /// The child's process id.
        child_tgid: i32,
    },
}

/// The subscription message (`op` = [`PROC_CN_MCAST_LISTEN`]).
pub fn subscribe_message(op: u32) -> Vec<u8> {
    let total = NLMSG_HDRLEN + CN_MSG_LEN + 4;
    let mut m = Vec::with_capacity(total);
    m.extend_from_slice(&(total as u32).to_ne_bytes());
    m.extend_from_slice(&NLMSG_DONE.to_ne_bytes());
    m.extend_from_slice(&0u16.to_ne_bytes()); // flags
    m.extend_from_slice(&0u32.to_ne_bytes()); // seq
    m.extend_from_slice(&0u32.to_ne_bytes()); // pid: the kernel fills it in
    m.extend_from_slice(&CN_IDX_PROC.to_ne_bytes());
    m.extend_from_slice(&CN_VAL_PROC.to_ne_bytes());
    m.extend_from_slice(&0u32.to_ne_bytes()); // seq
    m.extend_from_slice(&0u32.to_ne_bytes()); // ack
    m.extend_from_slice(&4u16.to_ne_bytes()); // len of the payload
    m.extend_from_slice(&0u16.to_ne_bytes()); // flags
    m.extend_from_slice(&op.to_ne_bytes());
    m
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The events of one datagram (several netlink messages may share it);
/// anything short, foreign or of another kind is skipped.
pub fn parse(datagram: &[u8]) -> Vec<ProcEvent> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(len) = u32_at(datagram, at) {
        let len = len as usize;
        if len < NLMSG_HDRLEN || at + len > datagram.len() {
            break;
        }
        if let Some(e) = parse_one(&datagram[at + NLMSG_HDRLEN..at + len]) {
            out.push(e);
        }
        // Netlink messages are 4-byte aligned.
        at += (len + 3) & !3;
    }
    out
}

fn parse_one(cn: &[u8]) -> Option<ProcEvent> {
    if u32_at(cn, 0)? != CN_IDX_PROC || u32_at(cn, 4)? != CN_VAL_PROC {
        return None;
    }
    let ev = cn.get(CN_MSG_LEN..)?;
    let what = u32_at(ev, 0)?;
    let timestamp_ns = u64_at(ev, 8)?;
    let d = 16;
    let i = |k: usize| u32_at(ev, d + 4 * k).map(|v| v as i32);
    match what {
        PROC_EVENT_EXEC => Some(ProcEvent::Exec {
            pid: i(0)?,
            tgid: i(1)?,
            timestamp_ns,
        }),
        PROC_EVENT_EXIT => Some(ProcEvent::Exit {
            pid: i(0)?,
            tgid: i(1)?,
            exit_code: i(2)? as u32,
            timestamp_ns,
        }),
        PROC_EVENT_FORK => Some(ProcEvent::Fork {
            parent_tgid: i(1)?,
            child_pid: i(2)?,
            child_tgid: i(3)?,
        }),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A datagram as the kernel sends it for one event.
    pub fn datagram(what: u32, data: &[u32]) -> Vec<u8> {
        let mut ev = Vec::new();
        ev.extend_from_slice(&what.to_ne_bytes());
        ev.extend_from_slice(&1u32.to_ne_bytes()); // cpu
        ev.extend_from_slice(&123_456_789u64.to_ne_bytes());
        for v in data {
            ev.extend_from_slice(&v.to_ne_bytes());
        }
        let mut m = subscribe_message(0);
        m.truncate(NLMSG_HDRLEN + CN_MSG_LEN);
        m[NLMSG_HDRLEN + 16..NLMSG_HDRLEN + 18].copy_from_slice(&(ev.len() as u16).to_ne_bytes());
        m.extend_from_slice(&ev);
        let total = m.len() as u32;
        m[0..4].copy_from_slice(&total.to_ne_bytes());
        m
    }

    #[test]
    fn exec_exit_fork_parse() {
        let exec = datagram(PROC_EVENT_EXEC, &[4242, 4242]);
        assert_eq!(
            parse(&exec),
            vec![ProcEvent::Exec {
                pid: 4242,
                tgid: 4242,
                timestamp_ns: 123_456_789
            }]
        );
        let exit = datagram(PROC_EVENT_EXIT, &[4243, 4242, 9, 17, 1, 1]);
        assert_eq!(
            parse(&exit),
            vec![ProcEvent::Exit {
                pid: 4243,
                tgid: 4242,
                exit_code: 9,
                timestamp_ns: 123_456_789
            }]
        );
        let fork = datagram(PROC_EVENT_FORK, &[1, 1, 50, 50]);
        assert_eq!(
            parse(&fork),
            vec![ProcEvent::Fork {
                parent_tgid: 1,
                child_pid: 50,
                child_tgid: 50
            }]
        );
        // Two messages in one datagram.
        let both = [exec.clone(), exit].concat();
        assert_eq!(parse(&both).len(), 2);
    }

    #[test]
    fn junk_is_skipped_not_a_panic() {
        assert!(parse(&[]).is_empty());
        assert!(parse(&[1, 2, 3]).is_empty());
        let mut exec = datagram(PROC_EVENT_EXEC, &[1, 1]);
        exec[NLMSG_HDRLEN] = 9; // another connector
        assert!(parse(&exec).is_empty());
        let comm = datagram(0x200, &[1, 1, 0, 0, 0, 0]);
        assert!(parse(&comm).is_empty());
        let mut short = datagram(PROC_EVENT_EXEC, &[1, 1]);
        short[0] = 200; // claims more than there is
        assert!(parse(&short).is_empty());
        for cut in 0..exec.len() {
            let _ = parse(&exec[..cut]);
        }
    }

    #[test]
    fn subscription_layout() {
        let m = subscribe_message(PROC_CN_MCAST_LISTEN);
        assert_eq!(m.len(), 40);
        assert_eq!(u32_at(&m, 0), Some(40));
        assert_eq!(u32_at(&m, 16), Some(CN_IDX_PROC));
        assert_eq!(u32_at(&m, 36), Some(PROC_CN_MCAST_LISTEN));
    }
}
