//! The client against a scripted daemon: a Unix socket server thread in the
//! test that reads each request with the protocol's decoder and answers
//! with frames from the protocol's encoder.

use lever_client::{Client, ClientError, Code, Lease, Priority};
use lever_protocol::{decode_request, ErrorCode, Reply, Request};
use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

/// A daemon that answers the n-th request with `answers[n]` (`None`:
/// close the connection instead) and reports every request it decoded.
struct Scripted {
    _dir: tempfile::TempDir,
    path: PathBuf,
    seen: mpsc::Receiver<Request>,
}

fn scripted(answers: Vec<Option<Vec<u8>>>) -> Scripted {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lever.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let (tx, seen) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut buf = Vec::new();
        let mut answers = answers.into_iter();
        loop {
            match decode_request(&buf).unwrap() {
                Some((req, used)) => {
                    buf.drain(..used);
                    let _ = tx.send(req);
                    match answers.next().flatten() {
                        Some(bytes) => stream.write_all(&bytes).unwrap(),
                        None => return, // drops the stream: the client sees EOF
                    }
                }
                None => {
                    let mut chunk = [0u8; 1024];
                    match stream.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
            }
        }
    });
    Scripted {
        _dir: dir,
        path,
        seen,
    }
}

/// A new request of one pair, until released.
fn acquire_one(c: &mut Client) -> Result<lever_client::Handle, ClientError> {
    c.acquire(
        None,
        Lease::UntilReleased,
        Priority::ThirdPartyLow,
        &[(1, 1)],
    )
}

fn next(d: &Scripted) -> Request {
    d.seen.recv_timeout(Duration::from_secs(5)).unwrap()
}

#[test]
fn acquire_sends_typed_fields_as_wire_values_and_returns_the_handle() {
    let d = scripted(vec![
        Some(Reply::Handle(77).encode()),
        Some(Reply::Handle(77).encode()),
        Some(Reply::Done.encode()),
    ]);
    let mut c = Client::connect(&d.path).unwrap();
    let lease = Lease::timed(Duration::from_secs(2)).unwrap();
    let h = c
        .acquire(None, lease, Priority::SystemLow, &[(0x44008100, 1958400)])
        .unwrap();
    assert_eq!(h.get(), 77);
    let Request::Acquire(a) = next(&d) else {
        panic!("not an acquire")
    };
    // The encoder wrote handle 0 and 2000 ms; the decoder read them back.
    assert_eq!((a.handle, a.lease.ms()), (None, 2000));
    assert_eq!(a.priority, Priority::SystemLow);
    assert_eq!(a.pairs, vec![(0x44008100, 1958400)]);

    c.acquire(
        Some(h),
        Lease::UntilReleased,
        Priority::ThirdPartyLow,
        &[(1, 2)],
    )
    .unwrap();
    let Request::Acquire(a) = next(&d) else {
        panic!("not an acquire")
    };
    assert_eq!((a.handle, a.lease), (Some(h), Lease::UntilReleased));

    c.release(h).unwrap();
    assert_eq!(next(&d), Request::Release { handle: 77 });
}

#[test]
fn a_handle_of_zero_is_not_a_handle() {
    let d = scripted(vec![Some(Reply::Handle(0).encode())]);
    let mut c = Client::connect(&d.path).unwrap();
    let err = acquire_one(&mut c).unwrap_err();
    assert!(
        matches!(err, ClientError::Unexpected(Reply::Handle(0))),
        "{err}"
    );
}

#[test]
fn status_and_explain_are_typed_and_split_documents_are_joined() {
    let status = r#"{"protocol":1,"target":"qcs6490","source":"built-in","root":"/r",
        "live_requests":0,"requests":[],"resources":[{"opcode":"0x44008100",
        "name":"cpu_min_freq.silver","node":"/sys/x","unit":"kHz","aggregation":"max",
        "permission":"third-party","current":"300000","error":null,"original":null,
        "held":false,"winner":null}]}"#;
    // The status arrives in two frames, the first with the MORE flag.
    let (a, b) = status.split_at(40);
    let mut frames = Reply::JsonMore(a.into()).encode();
    frames.extend(Reply::Json(b.into()).encode());
    let explain = r#"{"opcode":"0x44008100","name":"cpu_min_freq.silver","node":"/sys/x",
        "unit":"kHz","aggregation":"max","permission":"third-party","current":"300000",
        "error":null,"original":null,"held":false,"winner":"another client",
        "spec":{"name":"cpu_min_freq.silver","opcode":"0x44008100","node":"/sys/x","unit":"kHz",
          "low":300000,"high":1958400,"steps":[300000,1958400],"aggregation":"max",
          "permission":"third-party","kind":{"type":"pair-min","max":"0x44004100"},
          "description":"floor"},
        "rule":"the highest value wins","pair":"cpu_max_freq.silver","applied":"1958400",
        "votes":[{"handle":"another client","value":1958400,"shown":"1958400",
          "priority":"third-party-low","expires_in_ms":null}]}"#;
    let d = scripted(vec![
        Some(frames.clone()),
        Some(frames),
        Some(Reply::Json(explain.into()).encode()),
    ]);
    let mut c = Client::connect(&d.path).unwrap();
    let s = c.status().unwrap();
    assert_eq!((s.target.as_str(), s.root.as_str()), ("qcs6490", "/r"));
    assert_eq!(s.resources[0].current.as_deref(), Some("300000"));
    assert_eq!(next(&d), Request::Status);
    // The raw text, for the C API: the joined document, as sent.
    assert_eq!(c.status_json().unwrap(), status);
    assert_eq!(next(&d), Request::Status);
    let e = c.explain("cpu_min_freq.silver").unwrap();
    assert_eq!(
        next(&d),
        Request::Explain {
            resource: "cpu_min_freq.silver".into()
        }
    );
    assert_eq!(e.resource.winner, Some(lever_client::Holder::AnotherClient));
    assert_eq!(e.spec.kind.as_str(), "pair-min");
    assert_eq!(e.votes[0].priority, Priority::ThirdPartyLow);
    assert_eq!(e.pair.as_deref(), Some("cpu_max_freq.silver"));
}

#[test]
fn a_document_that_does_not_parse_names_the_request() {
    let d = scripted(vec![Some(Reply::Json("{\"live\":1}".into()).encode())]);
    let mut c = Client::connect(&d.path).unwrap();
    let err = c.status().unwrap_err();
    assert!(matches!(err, ClientError::Document { what: "status", .. }));
    assert!(err.to_string().starts_with("bad status document"), "{err}");
}

#[test]
fn a_refusal_carries_the_code_and_the_message() {
    let d = scripted(vec![Some(
        Reply::Error {
            code: ErrorCode::NotPermitted,
            message: "cpu_online.1 (0x41000100) is system-only".into(),
        }
        .encode(),
    )]);
    let mut c = Client::connect(&d.path).unwrap();
    let err = acquire_one(&mut c).unwrap_err();
    match &err {
        ClientError::Refused { code, message } => {
            assert_eq!(*code, Code::NotPermitted);
            assert_eq!(message, "cpu_online.1 (0x41000100) is system-only");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "lever daemon refused: cpu_online.1 (0x41000100) is system-only"
    );
}

#[test]
fn a_closed_connection_is_closed() {
    let d = scripted(vec![Some(Reply::Pong(1).encode()), None]);
    let mut c = Client::connect(&d.path).unwrap();
    assert_eq!(c.ping().unwrap(), 1);
    assert!(matches!(c.ping().unwrap_err(), ClientError::Closed));
}

#[test]
fn a_reply_of_the_wrong_kind_is_unexpected() {
    let d = scripted(vec![Some(Reply::Done.encode())]);
    let mut c = Client::connect(&d.path).unwrap();
    assert!(matches!(
        c.ping().unwrap_err(),
        ClientError::Unexpected(Reply::Done)
    ));
}

#[test]
fn connect_failure_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-daemon.sock");
    let err = Client::connect(&path).unwrap_err();
    match &err {
        ClientError::Connect { path: p, source } => {
            assert_eq!(p, &path);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("expected Connect, got {other:?}"),
    }
    let text = err.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains("LEVER_SOCKET"), "{text}");
}

#[test]
fn acquire_report_sets_the_flag_and_reads_the_document() {
    let doc = r#"{"handle":77,"resources":[{"opcode":"0x44008100","name":"cpu_min_freq.silver",
        "unit":"kHz","asked":1000000,"held":1152000,"clamped":null,
        "snapped":{"direction":"up","to":1152000},"applied":1152000,"shown":"1152000",
        "cause":{"type":"vote","vote":{"handle":77,"priority":"third-party-low",
        "value":1152000,"shown":"1152000"}}}]}"#;
    let s = scripted(vec![Some(Reply::Json(doc.into()).encode())]);
    let mut c = Client::connect(&s.path).unwrap();
    let report = c
        .acquire_report(lever_client::Acquire {
            handle: None,
            lease: Lease::UntilReleased,
            priority: Priority::ThirdPartyLow,
            detach: false,
            report: false,
            pairs: vec![(0x44008100, 1000000)],
        })
        .unwrap();
    assert_eq!(report.handle.get(), 77);
    assert_eq!(report.resources[0].held, 1152000);
    match s.seen.recv().unwrap() {
        Request::Acquire(a) => assert!(a.report, "the report flag is set"),
        other => panic!("{other:?}"),
    }
}
