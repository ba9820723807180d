//! The C API against a scripted daemon that speaks the real protocol
//! (`lever_protocol`): what goes on the wire for each call, handle
//! mapping, retune, status buffers, and reconnecting after the daemon
//! closed the connection — without SIGPIPE killing the process.
//!
//! One test function on purpose: the library has one connection per
//! process, so the steps must not run in parallel.
use lever::*;
use lever_protocol::{decode_request, Acquire, ErrorCode, Handle, Lease, Priority, Reply, Request};
use std::collections::HashSet;
use std::ffi::{c_char, CStr};
use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::{Arc, Mutex};
use std::thread;

#[derive(Default)]
struct Mock {
    log: Vec<Request>,
    next: u32,
    conns: Vec<UnixStream>,
    accepted: usize,
}

fn serve(state: Arc<Mutex<Mock>>, mut stream: UnixStream) {
    let mut live = HashSet::new();
    let mut buf = Vec::new();
    loop {
        match decode_request(&buf) {
            Ok(Some((req, used))) => {
                buf.drain(..used);
                let mut st = state.lock().unwrap();
                st.log.push(req.clone());
                let reply = match req {
                    Request::Acquire(Acquire { handle: None, .. }) | Request::Signal(_) => {
                        st.next += 1;
                        live.insert(st.next);
                        Reply::Handle(st.next)
                    }
                    Request::Acquire(a) if live.contains(&Handle::to_wire(a.handle)) => {
                        Reply::Handle(Handle::to_wire(a.handle))
                    }
                    Request::Release { handle } if live.remove(&handle) => Reply::Done,
                    Request::Acquire(_) | Request::Release { .. } => Reply::Error {
                        code: ErrorCode::NoSuchRequest,
                        message: "no such request".into(),
                    },
                    Request::Status => Reply::Json(format!("{{\"live\":{}}}", live.len())),
                    Request::Explain { .. } => Reply::Json("{}".into()),
                    Request::Ping => Reply::Pong(1),
                    Request::Profile(_) | Request::ProfileOff => Reply::Error {
                        code: ErrorCode::Invalid,
                        message: "the mock daemon has no profiles".into(),
                    },
                    Request::Register(_) => Reply::Done,
                    Request::Behalf(_) | Request::Bind(_) => Reply::Error {
                        code: ErrorCode::NotPermitted,
                        message: "the mock daemon serves no D-Bus callers".into(),
                    },
                    Request::Urm => Reply::Error {
                        code: ErrorCode::Invalid,
                        message: "the mock daemon has no URM view".into(),
                    },
                };
                drop(st);
                if stream.write_all(&reply.encode()).is_err() {
                    return;
                }
            }
            Ok(None) => {
                let mut chunk = [0u8; 4096];
                match stream.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            Err(_) => return,
        }
    }
}

fn last_error() -> String {
    // SAFETY: lever_last_error returns a valid NUL-terminated string.
    unsafe { CStr::from_ptr(lever_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn take_log(state: &Arc<Mutex<Mock>>) -> Vec<Request> {
    std::mem::take(&mut state.lock().unwrap().log)
}

fn acq(handle: i32, duration: i32, list: &[i32]) -> i32 {
    // SAFETY: list.len() readable ints.
    unsafe { perf_lock_acq(handle, duration, list.as_ptr(), list.len() as i32) }
}

#[test]
fn c_api_against_a_scripted_daemon() {
    // A C program gets SIGPIPE's default action (death); make this test
    // process behave the same, so writing to the closed socket below would
    // kill it if the library did not send with MSG_NOSIGNAL.
    // SAFETY: setting a standard disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("lever.sock");
    std::env::set_var("LEVER_SOCKET", &sock);
    let listener = UnixListener::bind(&sock).unwrap();
    let state = Arc::new(Mutex::new(Mock {
        next: 0xdead_beef, // beyond i32::MAX: the library must alias it
        ..Mock::default()
    }));
    {
        let state = state.clone();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let stream = stream.unwrap();
                let mut st = state.lock().unwrap();
                st.accepted += 1;
                st.conns.push(stream.try_clone().unwrap());
                drop(st);
                let state = state.clone();
                thread::spawn(move || serve(state, stream));
            }
        });
    }

    // perf_lock_acq: new lock, third-party-low, the seed's pair.
    assert_eq!(lever_ping(), 1);
    take_log(&state);
    let h = acq(0, 0, &[0x44008100, 1958400]);
    assert!(h > 0, "{}", last_error());
    assert_eq!(h, (0xdead_bef0u32 & 0x7fff_ffff) as i32);
    let pairs = vec![(0x44008100, 1958400)];
    assert_eq!(
        take_log(&state),
        vec![Request::Acquire(Acquire {
            handle: None,
            lease: Lease::UntilReleased,
            priority: Priority::ThirdPartyLow,
            detach: false,
            report: false,
            pairs: pairs.clone(),
        })]
    );
    // Same handle again updates the lock (the daemon's handle is sent).
    assert_eq!(acq(h, 1500, &[0x44008100, 1000000]), h);
    assert_eq!(
        take_log(&state),
        vec![Request::Acquire(Acquire {
            handle: Handle::new(0xdead_bef0),
            lease: Lease::from_ms(1500),
            priority: Priority::ThirdPartyLow,
            detach: false,
            report: false,
            pairs: vec![(0x44008100, 1000000)],
        })]
    );
    // An unknown positive handle makes a new lock.
    let h_other = acq(777, 0, &[0x40C00000, 1]);
    assert!(h_other > 0 && h_other != h && h_other != 777);
    assert!(matches!(&take_log(&state)[..], [Request::Acquire(a)] if a.handle.is_none()));

    // lever_tune with priority, then retune re-sends the same pairs.
    let wide = [0x44008100i64, 1958400, 0x4400C100, -1];
    // SAFETY: 4 readable int64s.
    let t = unsafe { lever_tune(2000, 2, wide.as_ptr(), wide.len()) };
    assert!(t > 0, "{}", last_error());
    let tuned = vec![(0x44008100, 1958400), (0x4400C100, -1)];
    let d = match &take_log(&state)[..] {
        [Request::Acquire(a)] => {
            assert_eq!(
                (a.priority, a.lease.ms(), &a.pairs),
                (Priority::SystemLow, 2000, &tuned)
            );
            a.handle
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(d, None);
    assert_eq!(lever_retune(t, 0), t);
    match &take_log(&state)[..] {
        [Request::Acquire(a)] => {
            assert_eq!(
                (a.priority, a.lease.ms(), &a.pairs),
                (Priority::SystemLow, 0, &tuned)
            );
            assert!(a.handle.is_some());
        }
        other => panic!("{other:?}"),
    }
    // perf_lock_acq on a lever_tune handle keeps its priority.
    assert_eq!(acq(t, 0, &[0x44008100, 1]), t);
    assert!(
        matches!(&take_log(&state)[..], [Request::Acquire(a)] if a.priority == Priority::SystemLow)
    );

    // Status: snprintf-like.
    let mut small = [0x55 as c_char; 5];
    // SAFETY: NULL with len 0 is the sizing call; `small` has 5 bytes.
    let need = unsafe { lever_status(std::ptr::null_mut(), 0) };
    assert_eq!(need, "{\"live\":3}".len() as i32);
    assert_eq!(
        unsafe { lever_status(small.as_mut_ptr(), small.len()) },
        need
    );
    // SAFETY: lever_status NUL-terminated it.
    assert_eq!(
        unsafe { CStr::from_ptr(small.as_ptr()) }.to_str(),
        Ok("{\"li")
    );

    assert_eq!(take_log(&state), vec![Request::Status, Request::Status]);

    // Release: returns the handle; twice is an error with a message.
    assert_eq!(perf_lock_rel(h), h);
    assert!(matches!(
        &take_log(&state)[..],
        [Request::Release {
            handle: 0xdead_bef0
        }]
    ));
    assert_eq!(perf_lock_rel(h), -1);
    assert!(last_error().contains("no such request"), "{}", last_error());
    assert_eq!(lever_untune(h_other), 0);
    take_log(&state);

    // The daemon restarts: it closes every connection. The next call
    // reconnects once, without SIGPIPE; locks of the old connection are
    // gone, retune re-acquires from the remembered (latest) pairs.
    for c in state.lock().unwrap().conns.drain(..) {
        c.shutdown(std::net::Shutdown::Both).unwrap();
    }
    thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!(lever_retune(t, 100), t, "{}", last_error());
    match &take_log(&state)[..] {
        [Request::Acquire(a)] => assert_eq!(
            (a.handle, a.lease.ms(), &a.pairs),
            (None, 100, &vec![(0x44008100, 1)])
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(state.lock().unwrap().accepted, 2);
    assert_eq!(lever_untune(t), 0);

    // After fork, the child opens its own connection.
    // SAFETY: the child only calls the library (its mutex is free: no
    // other thread of this test holds it now) and _exit.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let ok = acq(0, 0, &[0x44008100, 5]) > 0;
        // SAFETY: leave the child without running the parent's destructors.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    assert_eq!(state.lock().unwrap().accepted, 3);
    assert_eq!(lever_ping(), 1, "the parent's connection still works");
    assert_eq!(state.lock().unwrap().accepted, 3);
}
