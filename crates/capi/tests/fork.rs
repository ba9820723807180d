//! A program forks while one of its threads is inside a lever call (the
//! library's lock held, waiting on a daemon that does not answer). The
//! child must be able to use the library at once instead of deadlocking on
//! a lock whose owner thread did not survive the fork.
use lever::*;
use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

#[test]
fn child_of_a_fork_during_a_call_does_not_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("silent.sock");
    let listener = UnixListener::bind(&sock).unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            held.push(s); // accept, never answer
        }
    });
    std::env::set_var("LEVER_SOCKET", &sock);
    std::env::set_var("LEVER_TIMEOUT_MS", "3000");
    // A thread enters a call and blocks in it, holding the library's lock.
    let caller = std::thread::spawn(|| {
        let list = [0x44008100u32 as i32, 1958400];
        // SAFETY: list has list.len() readable ints.
        unsafe { perf_lock_acq(0, 0, list.as_ptr(), list.len() as i32) }
    });
    std::thread::sleep(Duration::from_millis(300));

    // SAFETY: the child only calls the library, then _exit()s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // Child: no daemon at this path, so a working library fails fast;
        // a deadlocked one never returns (the parent kills it).
        std::env::set_var("LEVER_SOCKET", "/nonexistent/lever.sock");
        let start = Instant::now();
        let list = [0x44008100u32 as i32, 1958400];
        // SAFETY: as above.
        let h = unsafe { perf_lock_acq(0, 0, list.as_ptr(), list.len() as i32) };
        let ok = h == -1 && start.elapsed() < Duration::from_secs(1);
        // SAFETY: leave without running the parent's atexit/test harness.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    // Parent: the child must finish well before the blocked call does.
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            break;
        }
        if Instant::now() > deadline {
            // SAFETY: killing our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            unsafe { libc::waitpid(pid, &mut status, 0) };
            panic!("the forked child deadlocked in perf_lock_acq");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child status {status}"
    );
    // The parent's blocked call times out normally.
    assert_eq!(caller.join().unwrap(), -1);
}
