//! A daemon that accepts but never answers must not hang the caller: calls
//! give up after LEVER_TIMEOUT_MS with -1 and a message, and the next call
//! starts on a fresh connection. (Own test binary: one session per process.)
use lever::*;
use std::ffi::CStr;
use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

#[test]
fn a_silent_daemon_times_out_instead_of_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("silent.sock");
    let listener = UnixListener::bind(&sock).unwrap();
    let held = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = held.clone();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            keep.lock().unwrap().push(s); // accept, never read or reply
        }
    });
    std::env::set_var("LEVER_SOCKET", &sock);
    std::env::set_var("LEVER_TIMEOUT_MS", "200");
    let list = [0x44008100u32 as i32, 1958400];
    for attempt in 1..=2 {
        let start = Instant::now();
        // SAFETY: list has list.len() readable ints.
        let h = unsafe { perf_lock_acq(0, 0, list.as_ptr(), list.len() as i32) };
        let took = start.elapsed();
        assert_eq!(h, -1);
        assert!(
            took >= Duration::from_millis(180) && took < Duration::from_secs(3),
            "{took:?}"
        );
        // SAFETY: lever_last_error returns a valid NUL-terminated string.
        let msg = unsafe { CStr::from_ptr(lever_last_error()) }
            .to_string_lossy()
            .into_owned();
        assert!(!msg.is_empty());
        // Each attempt used a new connection: the timed-out one was dropped.
        assert_eq!(held.lock().unwrap().len(), attempt, "{msg}");
    }
}
