//! The few system calls Lever needs that have no safe wrapper: one thin,
//! documented function each, with every `unsafe` block here and a
//! `// SAFETY:` line on it (STYLE.md: unsafe confined to one place).
//!
//! ```
//! // Ask the kernel to drop the resident pages of our own executable's
//! // code; they are faulted back in as they are used again.
//! let advised = lever_syscalls::page_out_own_code().unwrap();
//! assert!(advised > 0);
//! // Our own thread's scheduling policy (SCHED_OTHER needs no privilege).
//! lever_syscalls::set_scheduler(lever_syscalls::SchedPolicy::Other, 0).unwrap();
//! ```
#![warn(missing_docs)]

use std::io;

mod bench;
mod exec;
pub use bench::{
    caught_signals, fork_exit_wait, install_counting_handler, minor_faults, raise_signal,
    select_readable, MemoryMap, ProtectedPage, SysvSemaphore,
};
pub use exec::find_program;

/// One mapping of `/proc/self/maps`:
/// `55ac9cf8e000-55ac9d23e000 r-xp 000ba000 fe:00 5326124   /usr/bin/lever`
struct Mapping {
    start: usize,
    end: usize,
    perms: String,
    path: String,
}

fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (range, perms) = (f.next()?, f.next()?);
            let path = f.nth(3).unwrap_or("").to_string();
            let (a, b) = range.split_once('-')?;
            Some(Mapping {
                start: usize::from_str_radix(a, 16).ok()?,
                end: usize::from_str_radix(b, 16).ok()?,
                perms: perms.to_string(),
                path,
            })
        })
        .collect()
}

/// `madvise(MADV_PAGEOUT)` over the read-only mappings (code and constants)
/// of this process's own executable: the kernel reclaims those clean,
/// file-backed pages now instead of under memory pressure, and pages
/// fault back in as they are used. A long-running daemon calls this once
/// after start-up, so its resident set is what it actually runs, not the
/// one-time setup code (argument parsing, config loading) or the pages the
/// kernel's fault-around mapped next to it. Returns the bytes advised.
///
/// Needs Linux 5.4 (MADV_PAGEOUT); on older kernels the error is returned
/// and nothing changes.
pub fn page_out_own_code() -> io::Result<usize> {
    let exe = std::fs::read_link("/proc/self/exe")?;
    let exe = exe.to_string_lossy();
    let maps = std::fs::read_to_string("/proc/self/maps")?;
    let mut advised = 0;
    for m in parse_maps(&maps) {
        // Only private, non-writable mappings of our own file: nothing
        // whose contents would be lost by dropping the page.
        if m.path != exe || m.perms.contains('w') || !m.perms.ends_with('p') {
            continue;
        }
        let len = m.end - m.start;
        // SAFETY: the range is a whole mapping of this process taken from
        // /proc/self/maps; MADV_PAGEOUT on a clean, read-only, file-backed
        // private mapping only drops page-table entries and page-cache
        // pages, which are faulted back unchanged from the file, so no
        // memory Rust can observe changes.
        unsafe {
            rustix::mm::madvise(
                m.start as *mut std::ffi::c_void,
                len,
                rustix::mm::Advice::LinuxPageOut,
            )?;
        }
        advised += len;
    }
    Ok(advised)
}

/// A scheduling policy for [`set_scheduler`] (`sched(7)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedPolicy {
    /// `SCHED_OTHER` (CFS/EEVDF, priority 0).
    Other,
    /// `SCHED_BATCH` (priority 0).
    Batch,
    /// `SCHED_IDLE` (priority 0).
    Idle,
    /// `SCHED_FIFO` (real-time priority 1–99).
    Fifo,
    /// `SCHED_RR` (real-time priority 1–99).
    Rr,
}

impl SchedPolicy {
    fn raw(self) -> libc::c_int {
        match self {
            SchedPolicy::Other => libc::SCHED_OTHER,
            SchedPolicy::Batch => libc::SCHED_BATCH,
            SchedPolicy::Idle => libc::SCHED_IDLE,
            SchedPolicy::Fifo => libc::SCHED_FIFO,
            SchedPolicy::Rr => libc::SCHED_RR,
        }
    }
}

/// `sched_setscheduler(0, policy, {priority})`: set the calling thread's
/// scheduling policy and static priority. rustix has no wrapper for it.
///
/// The errno is kept: `EPERM` means the caller lacks `CAP_SYS_NICE` (and
/// `RLIMIT_RTPRIO` does not allow the priority), `EINVAL` a priority out of
/// the policy's range.
pub fn set_scheduler(policy: SchedPolicy, priority: u32) -> io::Result<()> {
    let priority =
        libc::c_int::try_from(priority).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // musl's sched_param has reserved fields besides the priority
    // (sched_ss_*), so it is built from zeroes rather than a literal.
    // SAFETY: sched_param holds only integers and timespecs, for which
    // all-zero bytes are a valid value.
    let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
    param.sched_priority = priority;
    // The raw system call, as glibc's wrapper makes it: musl's
    // sched_setscheduler() is a stub that always fails with ENOSYS.
    // SAFETY: `param` is a valid, initialised sched_param that lives across
    // the call; pid 0 names the calling thread; the kernel only reads it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_setscheduler,
            0 as libc::pid_t,
            policy.raw(),
            &param as *const libc::sched_param,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// One classic BPF instruction (`struct sock_filter`,
/// include/uapi/linux/filter.h): opcode, jump offsets if true and if
/// false, and the constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BpfInstruction {
    /// `BPF_LD | BPF_W | BPF_ABS`, `BPF_JMP | BPF_JEQ | BPF_K`, ...
    pub code: u16,
    /// Instructions to skip when a jump's condition holds.
    pub jt: u8,
    /// Instructions to skip when it does not.
    pub jf: u8,
    /// The constant (an offset, a value to compare, a return value).
    pub k: u32,
}

/// `setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, {len, prog})`: attach a
/// classic BPF program to a socket, replacing any attached before. The
/// kernel runs it on every packet before it is queued: a return of 0
/// drops the packet (nobody is woken), N keeps its first N bytes.
/// rustix has no wrapper for it.
///
/// The kernel checks the program (`EINVAL` for a bad opcode or a jump out
/// of it, or an empty or too long program: at most 4096 instructions).
pub fn attach_socket_filter(
    fd: std::os::fd::BorrowedFd<'_>,
    program: &[BpfInstruction],
) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // An empty program is refused here, as the kernel refuses it (EINVAL):
    // qemu-user would hand the kernel a null pointer and answer EFAULT.
    if program.is_empty() {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let len =
        u16::try_from(program.len()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let mut filters: Vec<libc::sock_filter> = program
        .iter()
        .map(|i| libc::sock_filter {
            code: i.code,
            jt: i.jt,
            jf: i.jf,
            k: i.k,
        })
        .collect();
    let fprog = libc::sock_fprog {
        len,
        filter: filters.as_mut_ptr(),
    };
    // SAFETY: `fprog` points at `len` initialised sock_filter values in
    // `filters`, which outlives the call; the option length is the size of
    // the sock_fprog passed; the kernel copies the program and keeps no
    // pointer into our memory; `fd` is a valid open descriptor for the
    // duration of the borrow.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_ATTACH_FILTER,
            &fprog as *const libc::sock_fprog as *const libc::c_void,
            std::mem::size_of::<libc::sock_fprog>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A 64-bit process's addresses; a 32-bit one's are below.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn parses_maps_lines() {
        let m = parse_maps(
            "55ac9ced3000-55ac9cf8e000 r--p 00000000 fe:00 5326124    /usr/bin/lever\n\
             7ffd1000-7ffd2000 rw-p 00000000 00:00 0                  [stack]\n\
             7f00-7f10 rw-p 00000000 00:00 0\n",
        );
        assert_eq!(m.len(), 3);
        assert_eq!((m[0].start, m[0].end), (0x55ac9ced3000, 0x55ac9cf8e000));
        assert_eq!(m[0].path, "/usr/bin/lever");
        assert_eq!(m[2].path, "");
    }

    #[test]
    fn parses_32_bit_maps_lines() {
        // /proc/self/maps of a 32-bit ARM process (AM437x).
        let m = parse_maps(
            "00400000-00d1c000 r-xp 00000000 b3:02 131212     /usr/bin/lever\n\
             bef5e000-bef7f000 rw-p 00000000 00:00 0          [stack]\n",
        );
        assert_eq!(m.len(), 2);
        assert_eq!((m[1].start, m[1].end), (0xbef5e000, 0xbef7f000));
        assert_eq!(m[0].path, "/usr/bin/lever");
    }

    #[test]
    fn setting_our_own_policy_to_other_always_works() {
        // SCHED_OTHER at priority 0 needs no privilege.
        set_scheduler(SchedPolicy::Other, 0).unwrap();
        let e = set_scheduler(SchedPolicy::Other, 5).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    }

    #[test]
    fn a_socket_filter_is_attached_or_refused_by_the_kernel() {
        use std::os::fd::AsFd;
        let (a, b) = std::os::unix::net::UnixDatagram::pair().unwrap();
        // `ret #0`: drop everything.
        let drop_all = [BpfInstruction {
            code: 0x06,
            jt: 0,
            jf: 0,
            k: 0,
        }];
        attach_socket_filter(b.as_fd(), &drop_all).unwrap();
        a.send(b"x").unwrap();
        b.set_nonblocking(true).unwrap();
        let mut buf = [0u8; 4];
        let e = b.recv(&mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock, "the filter dropped it");
        // An empty program and a jump past the end are refused.
        let e = attach_socket_filter(b.as_fd(), &[]).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
        let bad_jump = [BpfInstruction {
            code: 0x15, // BPF_JMP | BPF_JEQ | BPF_K
            jt: 5,
            jf: 5,
            k: 0,
        }];
        let e = attach_socket_filter(b.as_fd(), &bad_jump).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    }

    #[test]
    fn paging_out_our_code_keeps_us_running() {
        let n = page_out_own_code().expect("madvise");
        assert!(n > 0);
        // Code still runs after its pages were dropped.
        assert_eq!(parse_maps("1-2 r--p 0 0 0 /x")[0].end, 2);
    }
}
