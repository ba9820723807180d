//! The event loop over a real socket, with the core on a fake tree: a
//! lease ends with its connection, a bad frame is answered and closed
//! without harming anyone, and SIGTERM restores every node.
//!
//! One test function: SIGTERM goes to the whole test process, whose
//! handler (registered by `Server::new`) only the server listens to.

mod common;

use common::{fixture, GOVERNOR, UCLAMP};
use lever_client::{Client, Lease, Priority};
use lever_daemon::core::Limits;
use lever_daemon::log::Logger;
use lever_daemon::server::{Server, Stop};
use lever_protocol::{decode_reply, Reply};
use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::{Duration, Instant};

fn wait_until(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn leases_bad_frames_expiry_and_sigterm() {
    let f = fixture(Limits::default());
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("lever.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    let core = f.core;
    let server = std::thread::spawn(move || {
        let reload = Box::new(|| Err("no reload in this test".to_string()));
        let mut server = Server::new(core, listener, None, Logger::quiet(), reload).unwrap();
        server.run().unwrap()
    });
    let node = |path: &str| f.tree.read(path).trim().to_string();

    // A lease: the node holds while the connection lives.
    let mut a = Client::connect(&socket).unwrap();
    a.acquire(
        None,
        Lease::UntilReleased,
        Priority::ThirdPartyLow,
        &[(0x44000000, 512)],
    )
    .unwrap();
    assert_eq!(node(UCLAMP), "512");
    drop(a);
    wait_until("the closed connection's lease ends", || node(UCLAMP) == "0");

    // A timed request ends on the timer, with no client traffic.
    let mut b = Client::connect(&socket).unwrap();
    b.acquire(
        None,
        Lease::from_ms(30),
        Priority::ThirdPartyLow,
        &[(0x48000000, 2)],
    )
    .unwrap();
    assert_eq!(node(GOVERNOR), "performance");
    wait_until("the timed request expires", || {
        node(GOVERNOR) == "schedutil"
    });

    // A bad frame gets an ERROR and the connection is closed; others go on.
    b.acquire(
        None,
        Lease::UntilReleased,
        Priority::ThirdPartyLow,
        &[(0x44000000, 64)],
    )
    .unwrap();
    let mut bad = UnixStream::connect(&socket).unwrap();
    bad.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    bad.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let mut reply = Vec::new();
    bad.read_to_end(&mut reply).unwrap();
    let (r, _) = decode_reply(&reply).unwrap().unwrap();
    assert!(matches!(r, Reply::Error { .. }), "{r:?}");
    assert_eq!(b.ping().unwrap(), 1);
    assert_eq!(node(UCLAMP), "64");

    // SIGTERM: every node restored, the loop returns.
    signal_hook::low_level::raise(signal_hook::consts::SIGTERM).unwrap();
    assert_eq!(server.join().unwrap(), Stop::Terminated);
    assert_eq!(
        (node(UCLAMP).as_str(), node(GOVERNOR).as_str()),
        ("0", "schedutil")
    );
}
