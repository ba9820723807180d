//! Decoder and encoder tests: round trips, every refusal, partial frames,
//! arbitrary bytes (proptest), and the shared test vectors that the C and
//! Python clients are checked against too (`testdata/vectors.json`).
use lever_protocol::*;
use proptest::prelude::*;

fn acquire(pairs: Vec<(u32, i64)>) -> Request {
    Request::Acquire(Acquire {
        handle: Handle::new(7),
        lease: Lease::from_ms(1000),
        priority: Priority::ThirdPartyHigh,
        detach: true,
        report: false,
        pairs,
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn partial_frames_wait_for_more_at_every_split() {
    let bytes = acquire(vec![(0x44008100, 1958400), (0x4400C100, 2100000)]).encode();
    for cut in 0..bytes.len() {
        assert_eq!(decode_request(&bytes[..cut]).unwrap(), None, "cut at {cut}");
    }
    // Two frames back to back: the first is taken, its length reported.
    let mut two = bytes.clone();
    two.extend(Request::Ping.encode());
    let (req, used) = decode_request(&two).unwrap().unwrap();
    assert_eq!(used, bytes.len());
    assert!(matches!(req, Request::Acquire(_)));
    assert_eq!(
        decode_request(&two[used..]).unwrap(),
        Some((Request::Ping, 8))
    );
}

#[test]
fn refusals_are_precise() {
    assert_eq!(
        decode_request(b"X").unwrap_err(),
        ProtocolError::BadMagic(b'X')
    );
    assert_eq!(
        decode_request(&[MAGIC, 2]).unwrap_err(),
        ProtocolError::Version(2)
    );
    assert_eq!(
        decode_request(&[MAGIC, 1, 0x42, 0, 0, 0, 0, 0]).unwrap_err(),
        ProtocolError::UnknownKind(0x42)
    );
    assert_eq!(
        decode_request(&[MAGIC, 1, kind::PING, 1, 0, 0, 0, 0]).unwrap_err(),
        ProtocolError::Flags(1)
    );
    // A huge declared length is refused at once, not buffered.
    assert_eq!(
        decode_request(&[MAGIC, 1, kind::ACQUIRE, 0, 0xff, 0xff, 0xff, 0x7f]).unwrap_err(),
        ProtocolError::TooLarge(0x7fffffff)
    );
    // Count says 2 pairs, body has 1.
    let mut b = acquire(vec![(1, 1)]).encode();
    b[HEADER_LEN + 10] = 2;
    let err = decode_request(&b).unwrap_err();
    assert_eq!(err.to_string(), "ACQUIRE body has 24 bytes, expected 36");
    let mut b = acquire(vec![(1, 1)]).encode();
    b[HEADER_LEN + 8] = 9;
    assert!(decode_request(&b)
        .unwrap_err()
        .to_string()
        .contains("priority 9"));
    // Bit 1 (report) is known; bit 2 is not.
    let mut b = acquire(vec![(1, 1)]).encode();
    b[HEADER_LEN + 9] = 0x03;
    assert!(
        matches!(decode_request(&b).unwrap().unwrap().0, Request::Acquire(a) if a.report && a.detach)
    );
    b[HEADER_LEN + 9] = 0x04;
    assert!(decode_request(&b)
        .unwrap_err()
        .to_string()
        .contains("flags 0x04"));
    let mut b = acquire(vec![(1, 1)]).encode();
    b[HEADER_LEN + 9] = 0x80;
    assert!(decode_request(&b)
        .unwrap_err()
        .to_string()
        .contains("flags 0x80"));
    let mut b = Request::Explain {
        resource: "x".into(),
    }
    .encode();
    b[HEADER_LEN] = 0xff;
    assert_eq!(
        decode_request(&b).unwrap_err(),
        ProtocolError::Utf8("EXPLAIN resource")
    );
    let b = [MAGIC, 1, kind::RELEASE, 0, 3, 0, 0, 0, 1, 2, 3];
    assert_eq!(
        decode_request(&b).unwrap_err().to_string(),
        "RELEASE body has 3 bytes, expected 4"
    );
    // Replies are not requests and vice versa.
    assert_eq!(
        decode_request(&Reply::Done.encode()).unwrap_err(),
        ProtocolError::UnknownKind(kind::DONE)
    );
    assert_eq!(
        decode_reply(&Request::Ping.encode()).unwrap_err(),
        ProtocolError::UnknownKind(kind::PING)
    );
}

#[test]
fn long_json_is_split_into_more_frames_at_char_boundaries() {
    let text = "é".repeat(MAX_BODY) + "x"; // 2 bytes each, + 1: three frames
    let bytes = Reply::Json(text.clone()).encode();
    let mut at = 0;
    let mut joined = String::new();
    let mut frames = 0;
    loop {
        let (reply, used) = decode_reply(&bytes[at..]).unwrap().unwrap();
        at += used;
        frames += 1;
        match reply {
            Reply::JsonMore(t) => joined.push_str(&t),
            Reply::Json(t) => {
                joined.push_str(&t);
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((frames, at, joined), (3, bytes.len(), text));
    // MORE is refused on anything but JSON replies, and on requests.
    let mut done = Reply::Done.encode();
    done[3] = FLAG_MORE;
    assert_eq!(decode_reply(&done).unwrap_err(), ProtocolError::Flags(1));
    // An error message longer than a frame is cut to one frame.
    let bytes = Reply::Error {
        code: ErrorCode::Invalid,
        message: "x".repeat(70000),
    }
    .encode();
    assert_eq!(bytes.len(), HEADER_LEN + MAX_BODY);
}

/// The shared vectors: each is a message and its exact bytes.
fn vectors() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (
            "acquire seed example: new handle, indefinite, silver min 1958400",
            Request::Acquire(Acquire {
                handle: None,
                lease: Lease::UntilReleased,
                priority: Priority::ThirdPartyLow,
                detach: false,
                report: false,
                pairs: vec![(0x44008100, 1958400)],
            })
            .encode(),
        ),
        (
            "acquire update handle 5, 30 s, system-high, detach, two pairs",
            Request::Acquire(Acquire {
                handle: Handle::new(5),
                lease: Lease::from_ms(30000),
                priority: Priority::SystemHigh,
                detach: true,
                report: false,
                pairs: vec![(0x44008100, 1958400), (0x4400C100, -1)],
            })
            .encode(),
        ),
        (
            "acquire with report flag: new handle, 10 s, silver min 99999999",
            Request::Acquire(Acquire {
                handle: None,
                lease: Lease::from_ms(10000),
                priority: Priority::ThirdPartyLow,
                detach: false,
                report: true,
                pairs: vec![(0x44008100, 99_999_999)],
            })
            .encode(),
        ),
        (
            "release handle 0x01020304",
            Request::Release { handle: 0x01020304 }.encode(),
        ),
        ("status", Request::Status.encode()),
        (
            "explain cpu_min_freq.silver",
            Request::Explain {
                resource: "cpu_min_freq.silver".into(),
            }
            .encode(),
        ),
        ("ping", Request::Ping.encode()),
        ("reply handle 1234567", Reply::Handle(1234567).encode()),
        ("reply done", Reply::Done.encode()),
        ("reply json", Reply::Json("{\"ok\":true}".into()).encode()),
        (
            "reply json piece (MORE flag)",
            Reply::JsonMore("{\"a\":".into()).encode(),
        ),
        ("reply pong", Reply::Pong(1).encode()),
        (
            "reply error not permitted",
            Reply::Error {
                code: ErrorCode::NotPermitted,
                message: "system-only".into(),
            }
            .encode(),
        ),
    ]
}

#[test]
fn shared_test_vectors_match() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/vectors.json");
    let rendered: Vec<serde_json::Value> = vectors()
        .into_iter()
        .map(|(name, bytes)| serde_json::json!({ "name": name, "hex": hex(&bytes) }))
        .collect();
    let text = serde_json::to_string_pretty(&rendered).unwrap() + "\n";
    if std::env::var_os("LEVER_UPDATE_GOLDEN").is_some() {
        std::fs::write(path, &text).unwrap();
    }
    let golden = std::fs::read_to_string(path).expect("testdata/vectors.json");
    assert_eq!(
        golden, text,
        "wire format changed: that needs a new protocol version"
    );
    // And every vector decodes back to itself.
    for (name, bytes) in vectors() {
        let ok = match decode_request(&bytes) {
            Ok(Some((r, n))) => r.encode() == bytes && n == bytes.len(),
            _ => {
                matches!(decode_reply(&bytes), Ok(Some((r, n))) if r.encode() == bytes && n == bytes.len())
            }
        };
        assert!(ok, "{name}");
    }
}

#[test]
fn seed_vector_bytes_by_hand() {
    // magic, version 1, ACQUIRE, flags 0, length 24; handle 0, duration 0,
    // priority 0, flags 0, count 1; opcode 0x44008100, value 1958400 (0x1DE200).
    let expected = "4c0101001800000000000000000000000000010000810044\
                    00e21d0000000000";
    assert_eq!(hex(&vectors()[0].1), expected.replace(' ', ""));
}

fn any_request() -> impl Strategy<Value = Request> {
    prop_oneof![
        (
            any::<u32>(),
            any::<u32>(),
            0u8..4,
            any::<(bool, bool)>(),
            prop::collection::vec(any::<(u32, i64)>(), 0..40)
        )
            .prop_map(|(handle, duration_ms, priority, (detach, report), pairs)| {
                Request::Acquire(Acquire {
                    handle: Handle::new(handle),
                    lease: Lease::from_ms(duration_ms),
                    priority: Priority::try_from(priority).unwrap(),
                    detach,
                    report,
                    pairs,
                })
            }),
        any::<u32>().prop_map(|handle| Request::Release { handle }),
        Just(Request::Status),
        Just(Request::Urm),
        ".{0,64}".prop_map(|resource| Request::Explain { resource }),
        Just(Request::Ping),
        any_signal(),
        (
            "[a-z0-9-]{1,40}",
            any::<bool>(),
            prop::option::of("[0-9,-]{1,20}")
        )
            .prop_map(|(name, hold, rt_cpus)| Request::Profile(Profile {
                name,
                hold,
                rt_cpus
            })),
        Just(Request::ProfileOff),
        (any::<u32>(), 1u32..).prop_map(|(uid, pid)| Request::Behalf(Behalf {
            uid,
            pid: std::num::NonZeroU32::new(pid).unwrap(),
        })),
        (1u32.., any_signal()).prop_map(|(pid, signal)| {
            let Request::Signal(mut signal) = signal else {
                unreachable!("any_signal makes signals")
            };
            signal.detach = false;
            Request::Bind(Bind {
                pid: std::num::NonZeroU32::new(pid).unwrap(),
                signal,
            })
        }),
    ]
}

fn any_signal() -> impl Strategy<Value = Request> {
    (
        "[a-z0-9-]{1,40}",
        prop_oneof![Just(0u32), Just(u32::MAX), 1u32..u32::MAX],
        0u8..4,
        any::<(bool, bool)>(),
        prop::array::uniform3(any::<u32>()),
    )
        .prop_map(
            |(usecase, ms, priority, (detach, report), [fps, width, height])| {
                Request::Signal(Signal {
                    usecase,
                    lease: SignalLease::from_wire(ms),
                    priority: Priority::try_from(priority).unwrap(),
                    detach,
                    report,
                    fps: std::num::NonZeroU32::new(fps),
                    width: std::num::NonZeroU32::new(width),
                    height: std::num::NonZeroU32::new(height),
                })
            },
        )
}

#[test]
fn profile_bytes_and_refusals() {
    let held = Request::Profile(Profile {
        name: "rt".into(),
        hold: true,
        rt_cpus: Some("2-3".into()),
    });
    // flags 01, reserved 00, rt_cpus length 3, "2-3", "rt".
    assert_eq!(
        hex(&held.encode()[8..]),
        "0100030032 2d33 7274".replace(' ', "")
    );
    let (back, _) = decode_request(&held.encode()).unwrap().unwrap();
    assert_eq!(back, held);
    let off = Request::ProfileOff.encode();
    assert_eq!(
        decode_request(&off).unwrap().unwrap().0,
        Request::ProfileOff
    );

    let frame = |body: &[u8]| {
        let mut f = vec![MAGIC, VERSION, kind::PROFILE, 0];
        f.extend_from_slice(&(body.len() as u32).to_le_bytes());
        f.extend_from_slice(body);
        f
    };
    let err = |body: &[u8]| decode_request(&frame(body)).unwrap_err().to_string();
    assert_eq!(err(&[0, 0, 0, 0]), "PROFILE body has 4 bytes, expected 5");
    // rt_cpus claims 9 bytes, leaving no name.
    assert_eq!(
        err(&[0, 0, 9, 0, b'1', b'2']),
        "PROFILE body has 6 bytes, expected 14"
    );
    assert_eq!(
        err(&[4, 0, 0, 0, b'r']),
        "PROFILE flags 0x04 has unknown bits"
    );
    assert_eq!(err(&[0, 1, 0, 0, b'r']), "PROFILE reserved byte must be 0");
    assert_eq!(err(&[0, 0, 0, 0, 0xff]), "PROFILE name is not valid UTF-8");
    let urm_body = [MAGIC, VERSION, kind::URM, 0, 1, 0, 0, 0, 0];
    assert_eq!(
        decode_request(&urm_body).unwrap_err().to_string(),
        "URM body has 1 bytes, expected 0"
    );
    assert_eq!(
        Request::Urm.encode(),
        [MAGIC, VERSION, kind::URM, 0, 0, 0, 0, 0]
    );
    let off_body = [MAGIC, VERSION, kind::PROFILE_OFF, 0, 1, 0, 0, 0, 0];
    assert_eq!(
        decode_request(&off_body).unwrap_err().to_string(),
        "PROFILE_OFF body has 1 bytes, expected 0"
    );
}

#[test]
fn signal_durations_and_refusals() {
    assert_eq!(SignalLease::from_wire(0), SignalLease::UseCaseDefault);
    assert_eq!(
        SignalLease::from_wire(u32::MAX),
        SignalLease::Given(Lease::UntilReleased)
    );
    assert_eq!(SignalLease::Given(Lease::from_ms(250)).to_wire(), 250);
    let sig = Signal {
        usecase: "camera-preview".into(),
        lease: SignalLease::UseCaseDefault,
        priority: Priority::ThirdPartyLow,
        detach: false,
        report: false,
        fps: std::num::NonZeroU32::new(30),
        width: None,
        height: None,
    };
    let bytes = Request::Signal(sig.clone()).encode();
    assert_eq!(bytes.len(), 8 + 20 + 14);
    assert_eq!(bytes[2], kind::SIGNAL);
    assert_eq!(&bytes[16..20], &30u32.to_le_bytes());
    // An empty key, a reserved byte, unknown flags and a bad priority are refused.
    let mut empty = Request::Signal(Signal {
        usecase: String::new(),
        ..sig.clone()
    })
    .encode();
    assert!(matches!(
        decode_request(&empty),
        Err(ProtocolError::Length { kind: "SIGNAL", .. })
    ));
    empty.clear();
    for (at, v, what) in [(14, 1u8, "reserved"), (13, 4, "flags"), (12, 4, "priority")] {
        let mut b = bytes.clone();
        b[at] = v;
        let err = decode_request(&b).unwrap_err().to_string();
        assert!(err.contains(what), "{err}");
    }
    let long = Request::Signal(Signal {
        usecase: "x".repeat(256),
        ..sig
    })
    .encode();
    assert!(matches!(
        decode_request(&long),
        Err(ProtocolError::Length { kind: "SIGNAL", .. })
    ));
    assert_eq!(ErrorCode::from_u16(9), ErrorCode::UnknownUseCase);
}

proptest! {
    #[test]
    fn requests_round_trip(req in any_request()) {
        let bytes = req.encode();
        prop_assert_eq!(decode_request(&bytes).unwrap(), Some((req, bytes.len())));
    }

    #[test]
    fn replies_round_trip(h in any::<u32>(), msg in ".{0,80}", code in 1u16..10) {
        for reply in [Reply::Handle(h), Reply::Json(msg.clone()), Reply::Done, Reply::Pong(1),
                      Reply::Error { code: ErrorCode::from_u16(code), message: msg.clone() }] {
            let bytes = reply.encode();
            prop_assert_eq!(decode_reply(&bytes).unwrap(), Some((reply, bytes.len())));
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200), valid_header in any::<bool>()) {
        let mut bytes = bytes;
        if valid_header && bytes.len() >= 2 {
            bytes[0] = MAGIC;
            bytes[1] = VERSION;
        }
        if let Ok(Some((_, used))) = decode_request(&bytes) {
            prop_assert!(used <= bytes.len());
        }
        if let Ok(Some((_, used))) = decode_reply(&bytes) {
            prop_assert!(used <= bytes.len());
        }
    }
}

#[test]
fn register_round_trips_and_refuses_a_zero_pid_or_a_bad_name() {
    let reg = Register {
        pid: std::num::NonZeroU32::new(4242).unwrap(),
        app: "gst-camera".into(),
    };
    let bytes = Request::Register(reg.clone()).encode();
    assert_eq!(bytes[2], kind::REGISTER);
    assert_eq!(bytes.len(), 8 + 4 + 10);
    assert_eq!(&bytes[8..12], &4242u32.to_le_bytes());
    assert_eq!(
        decode_request(&bytes).unwrap(),
        Some((Request::Register(reg.clone()), bytes.len()))
    );
    let mut zero = bytes.clone();
    zero[8..12].copy_from_slice(&0u32.to_le_bytes());
    assert!(decode_request(&zero)
        .unwrap_err()
        .to_string()
        .contains("pid"));
    for app in [String::new(), "x".repeat(256)] {
        let b = Request::Register(Register { app, ..reg.clone() }).encode();
        assert!(matches!(
            decode_request(&b),
            Err(ProtocolError::Length {
                kind: "REGISTER",
                ..
            })
        ));
    }
    let mut bad = bytes.clone();
    bad[12] = 0xFF;
    assert!(decode_request(&bad)
        .unwrap_err()
        .to_string()
        .contains("UTF-8"));
    assert_eq!(ErrorCode::from_u16(10), ErrorCode::UnknownApp);
    assert_eq!(ErrorCode::UnknownApp as u16, 10);
}

proptest! {
    #[test]
    fn registers_round_trip(pid in 1u32.., app in "[a-z0-9._-]{1,255}") {
        let req = Request::Register(Register { pid: std::num::NonZeroU32::new(pid).unwrap(), app });
        let bytes = req.encode();
        prop_assert_eq!(decode_request(&bytes).unwrap(), Some((req, bytes.len())));
    }
}

#[test]
fn behalf_and_bind_bytes_and_refusals() {
    let behalf = Request::Behalf(Behalf {
        uid: 65534,
        pid: std::num::NonZeroU32::new(4242).unwrap(),
    });
    let bytes = behalf.encode();
    // BEHALF, 8-byte body: uid 65534, pid 4242.
    assert_eq!(
        hex(&bytes),
        "4c010a0008000000feff0000921000 00".replace(' ', "")
    );
    assert_eq!(decode_request(&bytes).unwrap(), Some((behalf, bytes.len())));
    let mut zero = bytes.clone();
    zero[12..16].copy_from_slice(&0u32.to_le_bytes());
    assert!(decode_request(&zero)
        .unwrap_err()
        .to_string()
        .contains("pid"));
    let mut short = bytes[..15].to_vec();
    short[4] = 7;
    assert!(matches!(
        decode_request(&short),
        Err(ProtocolError::Length { kind: "BEHALF", .. })
    ));

    let signal = Signal::of("game", SignalLease::Given(Lease::UntilReleased));
    let bind = Request::Bind(Bind {
        pid: std::num::NonZeroU32::new(4242).unwrap(),
        signal: signal.clone(),
    });
    let bytes = bind.encode();
    assert_eq!(bytes[2], kind::BIND);
    // pid, then exactly a SIGNAL's body.
    assert_eq!(&bytes[8..12], &4242u32.to_le_bytes());
    assert_eq!(&bytes[12..], &Request::Signal(signal.clone()).encode()[8..]);
    assert_eq!(decode_request(&bytes).unwrap(), Some((bind, bytes.len())));
    let detached = Request::Bind(Bind {
        pid: std::num::NonZeroU32::new(4242).unwrap(),
        signal: Signal {
            detach: true,
            lease: SignalLease::Given(Lease::from_ms(1000)),
            ..signal
        },
    })
    .encode();
    assert!(decode_request(&detached)
        .unwrap_err()
        .to_string()
        .contains("cannot be detached"));
    let mut zero = bytes.clone();
    zero[8..12].copy_from_slice(&0u32.to_le_bytes());
    assert!(decode_request(&zero)
        .unwrap_err()
        .to_string()
        .contains("pid"));
}
