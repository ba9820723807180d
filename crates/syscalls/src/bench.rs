//! The calls `lever-bench` times that have no safe wrapper: fork, signal
//! handlers, a protection fault, `select`, SysV semaphores and `mmap`.
//! Each is one thin function (or a type whose `Drop` undoes it) with the
//! `unsafe` here and a `// SAFETY:` line on every block.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// `fork()` a child that calls `_exit(0)` at once, and `waitpid` for it:
/// LMBench's `lat_proc fork`. The child runs no Rust code at all (only
/// `_exit`, which is async-signal-safe), so forking a process with other
/// threads is sound.
pub fn fork_exit_wait() -> io::Result<()> {
    // SAFETY: the child calls only `_exit`, which touches no lock or
    // allocator state copied from the parent.
    let pid = check(unsafe { libc::fork() })?;
    if pid == 0 {
        // SAFETY: ends the child immediately without running destructors
        // or atexit handlers that belong to the parent.
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    // SAFETY: `status` is a valid out-pointer; `pid` is our own child.
    check(unsafe { libc::waitpid(pid, &mut status, 0) })?;
    Ok(())
}

static CAUGHT: AtomicU64 = AtomicU64::new(0);

extern "C" fn count_signal(_: libc::c_int) {
    // Only an atomic add: async-signal-safe.
    CAUGHT.fetch_add(1, Ordering::Relaxed);
}

/// `sigaction(signal, handler)` with a handler that only counts
/// ([`caught_signals`]): LMBench's `lat_sig install` times this call, and
/// `lat_sig catch` delivers signals to it.
pub fn install_counting_handler(signal: i32) -> io::Result<()> {
    // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value.
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    act.sa_sigaction = count_signal as extern "C" fn(libc::c_int) as usize;
    // SAFETY: `act` is initialised; the handler only does an atomic add.
    check(unsafe { libc::sigaction(signal, &act, std::ptr::null_mut()) })?;
    Ok(())
}

/// `raise(signal)`: deliver `signal` to the calling thread (LMBench's
/// `lat_sig catch` sends `kill(getpid())`; in a process with threads that
/// could wake another thread, so the calling thread is named).
pub fn raise_signal(signal: i32) -> io::Result<()> {
    // SAFETY: plain call; the handler installed for `signal` decides what
    // happens, and callers install one first.
    check(unsafe { libc::raise(signal) })?;
    Ok(())
}

/// How many signals the handler of [`install_counting_handler`] has seen.
pub fn caught_signals() -> u64 {
    CAUGHT.load(Ordering::Relaxed)
}

/// `select()` for readability on `fds` with a zero timeout; the number of
/// ready descriptors. LMBench's `lat_select` times this on 200 fds.
/// Descriptors at or above `FD_SETSIZE` are refused with `EINVAL`.
pub fn select_readable(fds: &[BorrowedFd<'_>]) -> io::Result<usize> {
    // SAFETY: a zeroed fd_set is the empty set.
    let mut set: libc::fd_set = unsafe { std::mem::zeroed() };
    let mut max = -1;
    for fd in fds {
        let raw = fd.as_raw_fd();
        if raw < 0 || raw as usize >= libc::FD_SETSIZE {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: `raw` is below FD_SETSIZE (checked above).
        unsafe { libc::FD_SET(raw, &mut set) };
        max = max.max(raw);
    }
    let mut timeout = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    // SAFETY: `set` and `timeout` are valid for the call; `max + 1` bounds
    // the descriptors in the set.
    let n = check(unsafe {
        libc::select(
            max + 1,
            &mut set,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut timeout,
        )
    })?;
    Ok(n as usize)
}

/// A private SysV semaphore set of one semaphore, removed on drop
/// (LMBench's `lat_sem`).
#[derive(Debug)]
pub struct SysvSemaphore {
    id: libc::c_int,
}

impl SysvSemaphore {
    /// `semget(IPC_PRIVATE, 1, 0600)`; its value starts at 0.
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain syscall with constant arguments.
        let id = check(unsafe { libc::semget(libc::IPC_PRIVATE, 1, 0o600) })?;
        Ok(SysvSemaphore { id })
    }

    /// `semop` adding `delta` (+1 posts, -1 waits until it can take one).
    pub fn op(&self, delta: i16) -> io::Result<()> {
        let mut op = libc::sembuf {
            sem_num: 0,
            sem_op: delta,
            sem_flg: 0,
        };
        // SAFETY: one valid sembuf for a set we own.
        check(unsafe { libc::semop(self.id, &mut op, 1) })?;
        Ok(())
    }
}

impl Drop for SysvSemaphore {
    fn drop(&mut self) {
        // SAFETY: removes the set we created; IPC_RMID takes no argument.
        unsafe { libc::semctl(self.id, 0, libc::IPC_RMID) };
    }
}

/// Minor page faults the calling thread has taken (`getrusage(RUSAGE_THREAD)`'s
/// `ru_minflt`): `lat_pagefault` counts the faults its touches really
/// cause, since the kernel's fault-around maps several pages per fault.
pub fn minor_faults() -> io::Result<u64> {
    // SAFETY: getrusage writes one plain-data struct we own; zeroed is a
    // valid value of it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to that struct.
    check(unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) })?;
    Ok(usage.ru_minflt as u64)
}

/// A memory mapping, unmapped on drop: anonymous (read-write) or a whole
/// file read-only. LMBench's `lat_mmap`, `lat_pagefault` and
/// `bw_mmap_rd` time creating and touching these.
#[derive(Debug)]
pub struct MemoryMap {
    addr: *mut libc::c_void,
    len: usize,
    writable: bool,
}

// SAFETY: the mapping is plain memory owned by this value.
unsafe impl Send for MemoryMap {}

impl MemoryMap {
    /// `mmap(len, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS)`.
    pub fn anonymous(len: usize) -> io::Result<Self> {
        // SAFETY: a fresh anonymous mapping aliases no Rust memory.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len.max(1),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        Self::checked(addr, len.max(1), true)
    }

    /// `mmap(len, PROT_READ, MAP_SHARED, fd, 0)`: the first `len` bytes of
    /// a file. The caller owns the file and must not shrink it while the
    /// mapping lives (a truncated file would fault with SIGBUS).
    pub fn file_read_only(fd: BorrowedFd<'_>, len: usize) -> io::Result<Self> {
        // SAFETY: a read-only shared mapping of a file the caller keeps at
        // its size; nothing in Rust aliases it.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len.max(1),
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        Self::checked(addr, len.max(1), false)
    }

    fn checked(addr: *mut libc::c_void, len: usize, writable: bool) -> io::Result<Self> {
        if addr == libc::MAP_FAILED {
            Err(io::Error::last_os_error())
        } else {
            Ok(MemoryMap {
                addr,
                len,
                writable,
            })
        }
    }

    /// The mapped bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `addr..addr+len` is mapped readable for our lifetime.
        unsafe { std::slice::from_raw_parts(self.addr as *const u8, self.len) }
    }

    /// `madvise(MADV_DONTNEED)` over the whole pages in the first `len`
    /// bytes of a read-only file mapping: drops them from this process's
    /// resident set (they stay in the page cache and fault back in with
    /// the same bytes if read again), so reading a large file front to
    /// back keeps the RSS small. A no-op for a writable mapping, whose
    /// pages would come back zeroed.
    pub fn release_front(&self, len: usize) -> io::Result<()> {
        self.release(0, len)
    }

    /// [`MemoryMap::release_front`] for the whole pages inside
    /// `start..end` only (a reader that releases as it goes passes what it
    /// read since the last call).
    pub fn release(&self, start: usize, end: usize) -> io::Result<()> {
        let page = 4096usize;
        let start = start.div_ceil(page) * page;
        let end = end.min(self.len) / page * page;
        if self.writable || end <= start {
            return Ok(());
        }
        // SAFETY: the range lies in our read-only shared file mapping;
        // its contents after the call are the file's, as before.
        let rc = unsafe {
            libc::madvise(
                (self.addr as *mut u8).add(start) as *mut libc::c_void,
                end - start,
                libc::MADV_DONTNEED,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// The mapped bytes, writable (anonymous mappings only; a read-only
    /// file mapping returns `None`).
    pub fn as_mut_slice(&mut self) -> Option<&mut [u8]> {
        let (addr, len) = (self.addr as *mut u8, self.len);
        // SAFETY: mapped writable for our lifetime (checked by the flag);
        // `&mut self` makes the borrow exclusive.
        self.writable
            .then(|| unsafe { std::slice::from_raw_parts_mut(addr, len) })
    }
}

impl Drop for MemoryMap {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `mmap` returned.
        unsafe { libc::munmap(self.addr, self.len) };
    }
}

static PROT_PAGE: AtomicUsize = AtomicUsize::new(0);
static PROT_LEN: AtomicUsize = AtomicUsize::new(0);

extern "C" fn unprotect(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let addr = PROT_PAGE.load(Ordering::Relaxed);
    // SAFETY: mprotect is async-signal-safe; the page is ours
    // (ProtectedPage), making it writable lets the faulting store retry.
    unsafe {
        libc::mprotect(
            addr as *mut libc::c_void,
            PROT_LEN.load(Ordering::Relaxed),
            libc::PROT_READ | libc::PROT_WRITE,
        )
    };
}

/// One page that [`ProtectedPage::fault_once`] makes read-only and then
/// writes, so the store faults, the kernel delivers SIGSEGV, and the
/// handler makes the page writable again: LMBench's `lat_sig prot`
/// (protection fault → signal → return). One per process at a time; the
/// SIGSEGV handler it installs stays (it only touches this page; any
/// other SIGSEGV would loop, so the page must be the only expected one).
#[derive(Debug)]
pub struct ProtectedPage {
    map: MemoryMap,
}

impl ProtectedPage {
    /// Map the page and install the SIGSEGV handler.
    pub fn new() -> io::Result<Self> {
        let map = MemoryMap::anonymous(4096)?;
        PROT_PAGE.store(map.addr as usize, Ordering::Relaxed);
        PROT_LEN.store(map.len, Ordering::Relaxed);
        // SAFETY: a zeroed sigaction is valid; SA_SIGINFO matches the
        // three-argument handler.
        let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
        act.sa_sigaction = unprotect
            as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
            as usize;
        act.sa_flags = libc::SA_SIGINFO;
        // SAFETY: a valid sigaction struct for the call.
        check(unsafe { libc::sigaction(libc::SIGSEGV, &act, std::ptr::null_mut()) })?;
        Ok(ProtectedPage { map })
    }

    /// Protect the page read-only, then store to it: one fault, one signal
    /// delivery and one `mprotect` in the handler.
    pub fn fault_once(&mut self) -> io::Result<()> {
        // SAFETY: our own mapping.
        check(unsafe { libc::mprotect(self.map.addr, self.map.len, libc::PROT_READ) })?;
        // SAFETY: volatile store into our mapping; the fault it raises is
        // handled by `unprotect`, which makes the page writable, and the
        // store then completes.
        unsafe { std::ptr::write_volatile(self.map.addr as *mut u8, 1) };
        Ok(())
    }
}

impl Drop for ProtectedPage {
    fn drop(&mut self) {
        // Back to the default action, so a later real SIGSEGV crashes.
        // SAFETY: restoring SIG_DFL is always valid.
        unsafe { libc::signal(libc::SIGSEGV, libc::SIG_DFL) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fork_and_signals_and_faults_work() {
        fork_exit_wait().unwrap();
        install_counting_handler(libc::SIGUSR2).unwrap();
        let before = caught_signals();
        // SAFETY: test only: sending ourselves a handled signal.
        unsafe { libc::raise(libc::SIGUSR2) };
        assert!(caught_signals() > before);
        let mut p = ProtectedPage::new().unwrap();
        p.fault_once().unwrap();
        p.fault_once().unwrap();
        let mut m = MemoryMap::anonymous(8192).unwrap();
        m.as_mut_slice().unwrap()[8191] = 3;
        assert_eq!(m.as_slice()[8191], 3);
        let sem = SysvSemaphore::new().unwrap();
        sem.op(1).unwrap();
        sem.op(-1).unwrap();
        let (r, _w) = std::io::pipe().unwrap();
        use std::os::fd::AsFd;
        assert_eq!(select_readable(&[r.as_fd()]).unwrap(), 0);
    }
}
