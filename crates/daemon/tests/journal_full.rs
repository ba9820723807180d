//! A journal that cannot be written makes an acquire fail with ERROR 8
//! (internal), as docs/protocol.md says — not 7, which would blame the
//! value. The write is made to fail for root too: RLIMIT_FSIZE at the
//! journal's size (the kernel answers EFBIG, with SIGXFSZ, which this test
//! catches). One test in its own binary, since the limit is per process.

mod common;

use common::{fixture, UCLAMP};
use lever_daemon::core::{Client, Limits};
use lever_daemon::identity::Identity;
use lever_protocol::{Acquire, ErrorCode, Lease, Priority, Reply, Request};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

#[test]
fn an_unwritable_journal_is_error_8_and_the_node_is_not_written() {
    let mut f = fixture(Limits::default());
    let journal = lever_daemon::journal::Journal::path_in(f.state.path());
    let size = std::fs::metadata(&journal).unwrap().len();
    signal_hook::flag::register(
        signal_hook::consts::SIGXFSZ,
        Arc::new(AtomicBool::new(false)),
    )
    .unwrap();
    use rustix::process::{getrlimit, setrlimit, Resource};
    let before = getrlimit(Resource::Fsize);
    setrlimit(
        Resource::Fsize,
        rustix::process::Rlimit {
            current: Some(size),
            maximum: before.maximum,
        },
    )
    .unwrap();
    let app = Client::new(
        1,
        Identity {
            pid: 1,
            uid: 1000,
            gid: 1000,
            exe: None,
            system: false,
        },
    );
    let reply = f.core.handle(
        &app,
        Request::Acquire(Acquire {
            handle: None,
            lease: Lease::UntilReleased,
            priority: Priority::ThirdPartyLow,
            detach: false,
            report: false,
            pairs: vec![(0x44000000, 512)],
        }),
        Duration::ZERO,
    );
    setrlimit(Resource::Fsize, before).unwrap();
    match reply {
        Reply::Error { code, message } => {
            assert_eq!(code, ErrorCode::Internal, "{message}");
            assert!(message.contains("journal"), "{message}");
        }
        other => panic!("expected ERROR 8, got {other:?}"),
    }
    assert_eq!(f.node(UCLAMP), "0");
}
