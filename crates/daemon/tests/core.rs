//! The daemon's decisions with a fake clock and a fake tree: `Core` takes
//! `now` as an argument, so deadlines are checked to the millisecond
//! without sleeping, and every node lives in a `FakeTree`.

mod common;

use common::{client, fixture, freq_fixture, GOVERNOR, RT, SILVER_MAX, SILVER_MIN, UCLAMP};
use lever_daemon::core::{Client, Limits};
use lever_protocol::{
    Acquire, Acquired, Bound, Cause, Clamped, ErrorCode, Explain, Handle, Holder, Lease, PairRule,
    Priority, Reply, Request, SnapDirection, Snapped, Status,
};
use std::time::Duration;

fn app(conn: u64) -> Client {
    client(conn, 1000 + conn as u32, false)
}

fn root() -> Client {
    client(99, 0, true)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn ask(lease_ms: u32, priority: Priority, pairs: &[(u32, i64)]) -> Request {
    Request::Acquire(Acquire {
        handle: None,
        lease: Lease::from_ms(lease_ms),
        priority,
        detach: false,
        report: false,
        pairs: pairs.to_vec(),
    })
}

fn handle(reply: Reply) -> Handle {
    match reply {
        Reply::Handle(h) => Handle::new(h).expect("handles are > 0"),
        other => panic!("expected a handle, got {other:?}"),
    }
}

fn refusal(reply: Reply) -> (ErrorCode, String) {
    match reply {
        Reply::Error { code, message } => (code, message),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

trait Ask {
    fn status(&mut self, c: &Client, now: Duration) -> Status;
    fn explain(&mut self, c: &Client, res: &str, now: Duration) -> Explain;
}

impl Ask for common::Fixture {
    fn status(&mut self, c: &Client, now: Duration) -> Status {
        match self.core.handle(c, Request::Status, now) {
            Reply::Json(t) => serde_json::from_str(&t).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    fn explain(&mut self, c: &Client, res: &str, now: Duration) -> Explain {
        let req = Request::Explain {
            resource: res.into(),
        };
        match self.core.handle(c, req, now) {
            Reply::Json(t) => serde_json::from_str(&t).unwrap(),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_timed_request_holds_until_its_deadline_exactly() {
    let mut f = fixture(Limits::default());
    let t0 = ms(5_000);
    let h = handle(f.core.handle(
        &app(1),
        ask(300, Priority::ThirdPartyLow, &[(0x44000000, 512)]),
        t0,
    ));
    assert_eq!(f.node(UCLAMP), "512");
    assert_eq!(f.core.next_deadline(), Some(t0 + ms(300)));
    f.core.expire(t0 + ms(299));
    assert_eq!((f.node(UCLAMP).as_str(), f.core.live()), ("512", 1));
    let s = f.status(&app(1), t0 + ms(100));
    assert_eq!(s.requests[0].handle, h);
    assert_eq!(s.requests[0].expires_in_ms, Some(200));
    assert_eq!(s.requests[0].lease, Lease::from_ms(300));
    f.core.expire(t0 + ms(300));
    assert_eq!((f.node(UCLAMP).as_str(), f.core.live()), ("0", 0));
    assert_eq!(f.core.next_deadline(), None);
}

#[test]
fn release_and_a_closed_connection_restore_the_original() {
    let mut f = fixture(Limits::default());
    let now = ms(1);
    let h = handle(f.core.handle(
        &app(1),
        ask(
            0,
            Priority::ThirdPartyLow,
            &[(0x44000000, 700), (0x48000000, 2)],
        ),
        now,
    ));
    assert_eq!(
        (f.node(UCLAMP).as_str(), f.node(GOVERNOR).as_str()),
        ("700", "performance")
    );
    // No deadline: until released.
    assert_eq!(f.core.next_deadline(), None);
    // Another client cannot release it, nor learn that it exists.
    let (code, msg) = refusal(
        f.core
            .handle(&app(2), Request::Release { handle: h.get() }, now),
    );
    assert_eq!(code, ErrorCode::NoSuchRequest);
    assert_eq!(msg, format!("no request {h} of yours"));
    assert_eq!(
        f.core
            .handle(&app(1), Request::Release { handle: h.get() }, now),
        Reply::Done
    );
    assert_eq!(
        (f.node(UCLAMP).as_str(), f.node(GOVERNOR).as_str()),
        ("0", "schedutil")
    );

    handle(f.core.handle(
        &app(3),
        ask(0, Priority::ThirdPartyLow, &[(0x44000000, 64)]),
        now,
    ));
    assert_eq!(f.node(UCLAMP), "64");
    f.core.client_gone(3);
    assert_eq!((f.node(UCLAMP).as_str(), f.core.live()), ("0", 0));
}

#[test]
fn updating_a_handle_replaces_its_values() {
    let mut f = fixture(Limits::default());
    let h = handle(f.core.handle(
        &app(1),
        ask(0, Priority::ThirdPartyLow, &[(0x44000000, 100)]),
        ms(0),
    ));
    let update = Request::Acquire(Acquire {
        handle: Some(h),
        lease: Lease::UntilReleased,
        priority: Priority::ThirdPartyLow,
        detach: false,
        report: false,
        pairs: vec![(0x44000000, 300)],
    });
    assert_eq!(handle(f.core.handle(&app(1), update.clone(), ms(1))), h);
    assert_eq!((f.node(UCLAMP).as_str(), f.core.live()), ("300", 1));
    // Someone else's handle is an unknown handle: a new request (issue
    // 11 item 7; it used to be refused, which told the handle was live).
    assert_ne!(handle(f.core.handle(&app(2), update, ms(2))), h);
    assert_eq!((f.node(UCLAMP).as_str(), f.core.live()), ("300", 2));
}

#[test]
fn a_higher_value_beats_a_higher_class_on_a_floor() {
    let mut f = fixture(Limits::default());
    let now = ms(0);
    handle(f.core.handle(
        &app(1),
        ask(0, Priority::ThirdPartyHigh, &[(0x44000000, 900)]),
        now,
    ));
    let sys = handle(f.core.handle(
        &root(),
        ask(0, Priority::SystemLow, &[(0x44000000, 100)]),
        now,
    ));
    // Max aggregation: the higher floor wins whatever the class (issue
    // 27: a system client's lower value must not lower another's boost).
    assert_eq!(f.node(UCLAMP), "900");
    let e = f.explain(&root(), "sched_util_clamp_min", now);
    assert_eq!(e.votes[0].priority, Priority::ThirdPartyHigh);
    assert_eq!(e.votes[1].priority, Priority::SystemLow);
    assert_eq!(e.votes[1].handle, Holder::Handle(sys));
    assert_eq!(e.applied.as_deref(), Some("900"));
    f.core.client_gone(app(1).conn);
    assert_eq!(f.node(UCLAMP), "100");
}

#[test]
fn third_party_clients_get_neither_system_classes_nor_system_resources() {
    let mut f = fixture(Limits::default());
    let now = ms(0);
    for p in [Priority::SystemLow, Priority::SystemHigh] {
        let (code, msg) = refusal(f.core.handle(&app(1), ask(0, p, &[(0x44000000, 1)]), now));
        assert_eq!(code, ErrorCode::NotPermitted);
        assert!(
            msg.contains("needs a system client") && msg.contains("uid 1001"),
            "{msg}"
        );
    }
    let (code, msg) = refusal(f.core.handle(
        &app(1),
        ask(0, Priority::ThirdPartyLow, &[(0x48C04000, -1)]),
        now,
    ));
    assert_eq!(code, ErrorCode::NotPermitted);
    assert_eq!(
        msg,
        "sched_rt_runtime_us (0x48C04000) is system-only; uid 1001 is a third-party client"
    );
    assert_eq!((f.node(RT).as_str(), f.core.live()), ("950000", 0));
    // A system client may, whatever its class (issue 11 item 8: it used
    // to be refused at a third-party class).
    let low = handle(f.core.handle(
        &root(),
        ask(0, Priority::ThirdPartyLow, &[(0x48C04000, -1)]),
        now,
    ));
    f.core
        .handle(&root(), Request::Release { handle: low.get() }, now);
    handle(f.core.handle(
        &root(),
        ask(0, Priority::SystemLow, &[(0x48C04000, -1)]),
        now,
    ));
    assert_eq!(f.node(RT), "-1");
}

#[test]
fn invalid_requests_are_refused_before_any_write() {
    let mut f = fixture(Limits::default());
    let now = ms(0);
    let (code, _) = refusal(
        f.core
            .handle(&app(1), ask(0, Priority::ThirdPartyLow, &[]), now),
    );
    assert_eq!(code, ErrorCode::Invalid);
    let detach = Request::Acquire(Acquire {
        handle: None,
        lease: Lease::UntilReleased,
        priority: Priority::ThirdPartyLow,
        detach: true,
        report: false,
        pairs: vec![(0x44000000, 1)],
    });
    let (code, msg) = refusal(f.core.handle(&app(1), detach, now));
    assert_eq!(code, ErrorCode::Invalid);
    assert!(msg.starts_with("detach needs a duration"), "{msg}");
    let (code, msg) = refusal(f.core.handle(
        &app(1),
        ask(0, Priority::ThirdPartyLow, &[(0x4abc0000, 1)]),
        now,
    ));
    assert_eq!(code, ErrorCode::UnknownResource);
    assert_eq!(msg, "opcode 0x4ABC0000 is not a resource of target tiny");
    assert_eq!((f.node(UCLAMP).as_str(), f.core.live()), ("0", 0));
}

#[test]
fn per_client_limits() {
    let limits = Limits {
        third_party_requests: 2,
        third_party_pairs: 1,
        third_party_max_duration_ms: 1000,
        ..Limits::default()
    };
    let mut f = fixture(limits);
    let now = ms(0);
    let one = [(0x44000000, 1)];
    handle(
        f.core
            .handle(&app(1), ask(0, Priority::ThirdPartyLow, &one), now),
    );
    handle(
        f.core
            .handle(&app(1), ask(0, Priority::ThirdPartyLow, &one), now),
    );
    let (code, msg) = refusal(
        f.core
            .handle(&app(1), ask(0, Priority::ThirdPartyLow, &one), now),
    );
    assert_eq!(code, ErrorCode::Limit);
    assert_eq!(msg, "this client already holds 2 requests (limit 2)");
    // The limit is per client: another connection may still ask.
    handle(
        f.core
            .handle(&app(2), ask(0, Priority::ThirdPartyLow, &one), now),
    );
    let (code, msg) = refusal(f.core.handle(
        &app(3),
        ask(
            0,
            Priority::ThirdPartyLow,
            &[(0x44000000, 1), (0x48000000, 1)],
        ),
        now,
    ));
    assert_eq!(code, ErrorCode::Limit);
    assert_eq!(msg, "2 pairs in one request; third-party limit is 1");
    let (code, msg) = refusal(f.core.handle(
        &app(3),
        ask(1001, Priority::ThirdPartyLow, &one),
        now,
    ));
    assert_eq!(code, ErrorCode::Limit);
    assert_eq!(
        msg,
        "duration 1001 ms exceeds the third-party limit of 1000 ms"
    );
    // System clients are held to the system limits only.
    handle(f.core.handle(
        &root(),
        ask(
            5000,
            Priority::SystemHigh,
            &[(0x44000000, 1), (0x48000000, 1)],
        ),
        now,
    ));
}

#[test]
fn status_hides_other_clients_from_third_party_clients() {
    let mut f = fixture(Limits::default());
    let now = ms(0);
    let mine = handle(f.core.handle(
        &app(1),
        ask(0, Priority::ThirdPartyLow, &[(0x48000000, 0)]),
        now,
    ));
    let theirs = handle(f.core.handle(
        &app(2),
        ask(0, Priority::ThirdPartyLow, &[(0x44000000, 512)]),
        now,
    ));
    let s = f.status(&app(1), now);
    assert_eq!(s.live_requests, 2);
    assert_eq!(s.target, "tiny");
    assert_eq!(s.root, f.tree.root().display().to_string());
    assert_eq!(s.requests.len(), 1);
    let r = &s.requests[0];
    assert_eq!((r.handle, r.pid, r.uid), (mine, 1001, 1001));
    assert_eq!(
        (r.priority, r.detached, r.lease),
        (Priority::ThirdPartyLow, false, Lease::UntilReleased)
    );
    assert_eq!(r.exe.as_deref(), Some("/usr/bin/app1"));
    assert_eq!(r.pairs[0].name, "cpu_governor");
    assert_eq!(r.pairs[0].shown, "powersave");
    let by_name = |s: &Status, n: &str| s.resources.iter().find(|r| r.name == n).unwrap().clone();
    let uclamp = by_name(&s, "sched_util_clamp_min");
    assert_eq!(uclamp.winner, Some(Holder::AnotherClient));
    assert_eq!(
        (uclamp.current.as_deref(), uclamp.original.as_deref()),
        (Some("512"), Some("0"))
    );
    assert!(uclamp.held);
    assert_eq!(
        by_name(&s, "cpu_governor").winner,
        Some(Holder::Handle(mine))
    );
    assert_eq!(by_name(&s, "sched_rt_runtime_us").winner, None);
    assert!(!by_name(&s, "sched_rt_runtime_us").held);
    // Root sees everyone's.
    let s = f.status(&root(), now);
    assert_eq!(s.requests.len(), 2);
    assert_eq!(
        by_name(&s, "sched_util_clamp_min").winner,
        Some(Holder::Handle(theirs))
    );
}

#[test]
fn explain_gives_the_rule_the_votes_and_the_original() {
    let mut f = fixture(Limits::default());
    let now = ms(10_000);
    let e = f.explain(&app(1), "0x48000000", now);
    assert_eq!(e.resource.name, "cpu_governor");
    assert_eq!(
        e.spec.kind.values(),
        ["powersave", "schedutil", "performance"]
    );
    assert_eq!(
        e.rule,
        "the highest value wins, whatever the priority class (a profile's vote too)"
    );
    assert!(e.votes.is_empty() && e.applied.is_none() && e.pair.is_none());
    assert!(!e.resource.held);
    let mine = handle(f.core.handle(
        &app(1),
        ask(2000, Priority::ThirdPartyLow, &[(0x48000000, 1)]),
        now,
    ));
    handle(f.core.handle(
        &app(2),
        ask(0, Priority::ThirdPartyLow, &[(0x48000000, 2)]),
        now,
    ));
    let e = f.explain(&app(1), "cpu_governor", now + ms(500));
    assert_eq!(e.votes.len(), 2);
    assert_eq!(
        (e.votes[0].handle, e.votes[0].shown.as_str()),
        (Holder::AnotherClient, "performance")
    );
    assert_eq!(e.votes[0].expires_in_ms, None);
    assert_eq!(
        (e.votes[1].handle, e.votes[1].expires_in_ms),
        (Holder::Handle(mine), Some(1500))
    );
    assert_eq!(e.applied.as_deref(), Some("performance"));
    assert_eq!(e.resource.original.as_deref(), Some("schedutil"));
    assert_eq!(e.resource.winner, Some(Holder::AnotherClient));
    let newest = f.explain(&root(), "sched_rt_runtime_us", now);
    assert_eq!(
        newest.rule,
        "the newest vote of the highest priority class wins"
    );
    assert_eq!(newest.resource.permission, "system");
    let (code, msg) = refusal(f.core.handle(
        &app(1),
        Request::Explain {
            resource: "nope".into(),
        },
        now,
    ));
    assert_eq!(code, ErrorCode::UnknownResource);
    assert_eq!(msg, "no resource named or numbered \"nope\" in target tiny");
}

#[test]
fn shutdown_restores_every_node() {
    let mut f = fixture(Limits::default());
    let before = lever_testkit::snapshot(f.tree.root());
    handle(f.core.handle(
        &root(),
        ask(
            0,
            Priority::SystemHigh,
            &[(0x44000000, 1024), (0x48C04000, -1), (0x48000000, 2)],
        ),
        ms(0),
    ));
    assert_eq!(
        lever_testkit::changed(&before, &lever_testkit::snapshot(f.tree.root())).len(),
        3
    );
    f.core.shutdown();
    assert_eq!(
        lever_testkit::changed(&before, &lever_testkit::snapshot(f.tree.root())),
        Vec::<String>::new()
    );
    assert_eq!(f.core.live(), 0);
}

#[test]
fn ping_answers_the_protocol_version() {
    let mut f = fixture(Limits::default());
    assert_eq!(f.core.handle(&app(1), Request::Ping, ms(0)), Reply::Pong(1));
}

fn report(reply: Reply) -> Acquired {
    match reply {
        Reply::Json(t) => serde_json::from_str(&t).unwrap(),
        other => panic!("expected a report, got {other:?}"),
    }
}

fn reported(lease_ms: u32, priority: Priority, pairs: &[(u32, i64)]) -> Request {
    match ask(lease_ms, priority, pairs) {
        Request::Acquire(a) => Request::Acquire(Acquire { report: true, ..a }),
        _ => unreachable!(),
    }
}

#[test]
fn an_acquire_with_report_says_what_was_clamped_snapped_and_applied() {
    let mut f = freq_fixture();
    let now = ms(1);
    let r = report(f.core.handle(
        &app(1),
        reported(0, Priority::ThirdPartyLow, &[(0x44008100, 99_999_999)]),
        now,
    ));
    let silver = &r.resources[0];
    assert_eq!(
        (silver.name.as_str(), silver.unit.as_str()),
        ("cpu_min_freq_silver", "kHz")
    );
    assert_eq!((silver.asked, silver.held), (99_999_999, 1958400));
    assert_eq!(
        silver.clamped,
        Some(Clamped {
            bound: Bound::Max,
            to: 1958400
        })
    );
    assert_eq!(silver.snapped, None);
    assert_eq!(silver.applied, Some(1958400));
    assert!(
        matches!(&silver.cause, Cause::Vote { vote } if vote.handle == Holder::Handle(r.handle))
    );
    assert_eq!(f.node(SILVER_MIN), "1958400");
    // Off the table: a floor snaps up (the same request, updated).
    let r = report(f.core.handle(
        &app(1),
        Request::Acquire(Acquire {
            handle: Some(r.handle),
            ..match reported(0, Priority::ThirdPartyLow, &[(0x44008100, 1_000_000)]) {
                Request::Acquire(a) => a,
                _ => unreachable!(),
            }
        }),
        now,
    ));
    let silver = &r.resources[0];
    assert_eq!(silver.held, 1152000);
    assert_eq!(
        silver.snapped,
        Some(Snapped {
            direction: SnapDirection::Up,
            to: 1152000
        })
    );
    assert_eq!(silver.clamped, None);
    // Another client caps the cluster at 806400: a boost now reports the
    // ceiling that beat it, by class and value (the handle stays hidden).
    let cap = handle(f.core.handle(
        &app(2),
        ask(0, Priority::ThirdPartyLow, &[(0x4400C100, 806400)]),
        now,
    ));
    let r = report(f.core.handle(
        &app(3),
        reported(0, Priority::ThirdPartyLow, &[(0x44008100, 1958400)]),
        now,
    ));
    let silver = &r.resources[0];
    assert_eq!((silver.held, silver.applied), (1958400, Some(806400)));
    assert_eq!(f.node(SILVER_MIN), "806400");
    match &silver.cause {
        Cause::Pair {
            partner,
            rule,
            by: Some(by),
            overridden: Some(own),
        } => {
            assert_eq!(partner, "cpu_max_freq_silver");
            assert_eq!(*rule, PairRule::CeilingBeatsFloor);
            assert_eq!(
                (by.handle, by.value, by.priority),
                (Holder::AnotherClient, 806400, Priority::ThirdPartyLow)
            );
            assert_eq!((own.handle, own.value), (Holder::Handle(r.handle), 1958400));
        }
        other => panic!("{other:?}"),
    }
    // Root sees whose cap it is; explain names it too.
    let e = f.explain(&root(), "cpu_min_freq_silver", now);
    assert_eq!(e.applied.as_deref(), Some("806400"));
    match e.cause {
        Some(Cause::Pair {
            by: Some(by),
            rule: PairRule::CeilingBeatsFloor,
            ..
        }) => {
            assert_eq!((by.handle, by.value), (Holder::Handle(cap), 806400));
        }
        other => panic!("{other:?}"),
    }
    let e = f.explain(&root(), "cpu_max_freq_silver", now);
    assert!(matches!(e.cause, Some(Cause::Vote { vote }) if vote.handle == Holder::Handle(cap)));
    // A plain acquire still gets a bare HANDLE (perflock clients).
    handle(f.core.handle(
        &app(4),
        ask(0, Priority::ThirdPartyLow, &[(0x44008100, 1)]),
        now,
    ));
}

#[test]
fn a_higher_class_vote_is_named_as_the_winner() {
    let mut f = freq_fixture();
    let now = ms(1);
    let sys = handle(f.core.handle(
        &root(),
        ask(0, Priority::SystemLow, &[(0x4400C100, 1516800)]),
        now,
    ));
    let r = report(f.core.handle(
        &app(1),
        reported(0, Priority::ThirdPartyLow, &[(0x4400C100, 1958400)]),
        now,
    ));
    let max = &r.resources[0];
    assert_eq!((max.held, max.applied), (1958400, Some(1516800)));
    match &max.cause {
        Cause::Vote { vote } => {
            assert_eq!(
                (vote.handle, vote.priority, vote.value),
                (Holder::AnotherClient, Priority::SystemLow, 1516800)
            );
        }
        other => panic!("{other:?}"),
    }
    let e = f.explain(&root(), "cpu_max_freq_silver", now);
    assert!(matches!(e.cause, Some(Cause::Vote { vote }) if vote.handle == Holder::Handle(sys)));
}

fn detached(lease_ms: u32, pairs: &[(u32, i64)]) -> Request {
    match ask(lease_ms, Priority::ThirdPartyLow, pairs) {
        Request::Acquire(a) => Request::Acquire(Acquire { detach: true, ..a }),
        _ => unreachable!(),
    }
}

/// Attack 4 at the core: connections of one uid each make detached
/// requests and close. The uid's share counts them all; the third-party
/// share leaves a reserve for system clients; the total caps everyone.
#[test]
fn live_requests_are_capped_per_uid_detached_ones_included_with_a_system_reserve() {
    let limits = Limits {
        third_party_requests: 4,
        third_party_requests_per_uid: 10,
        live_requests: 24,
        system_reserve: 6,
        ..Limits::default()
    };
    let mut f = fixture(limits);
    let now = ms(0);
    let one = [(0x44000000, 1)];
    let nobody = |conn| client(conn, 65534, false);
    let (mut granted, mut refused) = (0, Vec::new());
    for conn in 1..=5 {
        for _ in 0..4 {
            match f.core.handle(&nobody(conn), detached(600_000, &one), now) {
                Reply::Handle(_) => granted += 1,
                other => refused.push(refusal(other)),
            }
        }
        f.core.client_gone(conn);
    }
    assert_eq!((granted, f.core.live()), (10, 10));
    assert_eq!(refused.len(), 10);
    assert!(refused.iter().all(|(code, msg)| *code == ErrorCode::Limit
        && msg == "uid 65534 already holds 10 live requests (limit 10 per uid, detached ones included)"));
    // Other uids have their own shares, up to the third-party share.
    for conn in 10..12 {
        for _ in 0..4 {
            handle(
                f.core
                    .handle(&app(conn), ask(0, Priority::ThirdPartyLow, &one), now),
            );
        }
    }
    let (code, msg) = refusal(
        f.core
            .handle(&app(12), ask(0, Priority::ThirdPartyLow, &one), now),
    );
    assert_eq!(code, ErrorCode::Limit);
    assert_eq!(
        msg,
        "third-party clients hold 18 live requests (limit 18; the rest is kept for system clients)"
    );
    // The reserve is root's (and the system group's), up to the total.
    for _ in 0..6 {
        handle(
            f.core
                .handle(&root(), ask(0, Priority::SystemHigh, &one), now),
        );
    }
    let (code, msg) = refusal(
        f.core
            .handle(&root(), ask(0, Priority::SystemHigh, &one), now),
    );
    assert_eq!(code, ErrorCode::Limit);
    assert_eq!(msg, "the daemon holds 24 live requests (limit 24)");
    // Requests that end give the share back.
    f.core.expire(ms(600_000));
    assert_eq!(f.core.live(), 14);
    handle(f.core.handle(&nobody(20), detached(1000, &one), now));
    // The uid's detached requests stay its own to see (and only those).
    let seen = f.status(&nobody(21), now).requests;
    assert_eq!(seen.len(), 1);
    assert!(seen[0].detached);
    assert_eq!(f.status(&app(10), now).requests.len(), 4);
    assert_eq!(f.status(&root(), now).requests.len(), 15);
}

/// Item 7: another client's live handle is, to ACQUIRE and RELEASE, an
/// unknown handle — same reply, same code and message.
#[test]
fn another_clients_handle_is_indistinguishable_from_an_unknown_one() {
    let mut f = fixture(Limits::default());
    let now = ms(0);
    let theirs = handle(f.core.handle(
        &app(1),
        ask(0, Priority::ThirdPartyLow, &[(0x44000000, 900)]),
        now,
    ));
    let unknown = (1..)
        .map(|n| theirs.get() ^ n)
        .find(|&h| h != 0 && h < 1 << 31)
        .unwrap();
    let with = |h: u32, lease: u32, value: i64| {
        Request::Acquire(Acquire {
            handle: Handle::new(h),
            ..match ask(lease, Priority::ThirdPartyLow, &[(0x44000000, value)]) {
                Request::Acquire(a) => a,
                _ => unreachable!(),
            }
        })
    };
    // Acquire and renew with either: a fresh request with a new handle.
    for (h, value) in [(theirs.get(), 100), (unknown, 200)] {
        let got = handle(f.core.handle(&app(2), with(h, 5000, value), now));
        assert_ne!(got.get(), h);
        assert_ne!(got, theirs);
    }
    // Their request is untouched: value, lease, winner.
    assert_eq!(f.node(UCLAMP), "900");
    let mine = f.status(&app(1), now).requests;
    assert_eq!(mine.len(), 1);
    assert_eq!((mine[0].handle, mine[0].expires_in_ms), (theirs, None));
    // Release: the same code and message, but for the number.
    let (c1, m1) = refusal(f.core.handle(
        &app(2),
        Request::Release {
            handle: theirs.get(),
        },
        now,
    ));
    let (c2, m2) = refusal(
        f.core
            .handle(&app(2), Request::Release { handle: unknown }, now),
    );
    assert_eq!(c1, c2);
    assert_eq!(
        m1.replace(&theirs.get().to_string(), "H"),
        m2.replace(&unknown.to_string(), "H")
    );
    assert_eq!(f.core.live(), 3);
}

/// Item 8: root asking at priority 0 (what `perf_lock_acq` sends) may use
/// system-only resources; its vote ranks third-party-low. A third-party
/// client at priority 0 is still refused.
#[test]
fn root_at_priority_zero_may_use_system_only_resources() {
    let mut f = fixture(Limits::default());
    let now = ms(0);
    let low = handle(f.core.handle(
        &root(),
        ask(0, Priority::ThirdPartyLow, &[(0x48C04000, -1)]),
        now,
    ));
    assert_eq!(f.node(RT), "-1");
    // A system-class vote of anyone beats it, whatever the value.
    let high = handle(f.core.handle(
        &root(),
        ask(0, Priority::SystemLow, &[(0x48C04000, 800000)]),
        now,
    ));
    assert_eq!(f.node(RT), "800000");
    f.core
        .handle(&root(), Request::Release { handle: high.get() }, now);
    assert_eq!(f.node(RT), "-1");
    f.core
        .handle(&root(), Request::Release { handle: low.get() }, now);
    assert_eq!(f.node(RT), "950000");
    let (code, _) = refusal(f.core.handle(
        &app(1),
        ask(0, Priority::ThirdPartyLow, &[(0x48C04000, -1)]),
        now,
    ));
    assert_eq!(code, ErrorCode::NotPermitted);
}

/// Item 8: someone else lowered `scaling_max_freq` after the daemon read
/// it; a boost of the min is capped at the max the node has now, never
/// written above it, and the report says the ceiling decided.
#[test]
fn a_floor_is_capped_at_the_ceiling_the_node_has_now() {
    let mut f = freq_fixture();
    let now = ms(0);
    f.tree.node(SILVER_MAX, "806400\n");
    let r = report(f.core.handle(
        &app(1),
        reported(0, Priority::ThirdPartyLow, &[(0x44008100, 1958400)]),
        now,
    ));
    assert_eq!(f.node(SILVER_MIN), "806400");
    assert_eq!(f.node(SILVER_MAX), "806400");
    let silver = &r.resources[0];
    assert_eq!((silver.held, silver.applied), (1958400, Some(806400)));
    match &silver.cause {
        Cause::Pair {
            partner,
            by: None,
            rule,
            ..
        } => {
            assert_eq!(partner, "cpu_max_freq_silver");
            assert_eq!(*rule, PairRule::CeilingBeatsFloor);
        }
        other => panic!("{other:?}"),
    }
    // Released: the min's own original comes back.
    f.core.client_gone(1);
    assert_eq!(f.node(SILVER_MIN), "300000");
    // The outside ceiling rises again: the next boost follows it.
    f.tree.node(SILVER_MAX, "1958400\n");
    handle(f.core.handle(
        &app(2),
        ask(0, Priority::ThirdPartyLow, &[(0x44008100, 1516800)]),
        now,
    ));
    assert_eq!(f.node(SILVER_MIN), "1516800");
}

/// Item 9: ten thousand deadlines at one instant end in bounded batches
/// (the event loop serves other clients between them), and every node
/// comes back.
#[test]
fn ten_thousand_deadlines_at_one_instant_end_in_bounded_batches() {
    let mut f = fixture(Limits::default());
    for i in 0..10_000u64 {
        let c = client(200 + i / 4000, 0, true);
        handle(f.core.handle(
            &c,
            ask(
                1000,
                Priority::SystemLow,
                &[(0x44000000, (i % 1000) as i64)],
            ),
            ms(0),
        ));
    }
    assert_eq!(f.node(UCLAMP), "999");
    let mut batches = 0;
    loop {
        let before = f.core.live();
        let more = f.core.expire_some(ms(1000), 256);
        assert!(before - f.core.live() <= 256);
        batches += 1;
        if !more {
            break;
        }
    }
    assert_eq!((batches, f.core.live()), (40, 0));
    assert_eq!(f.node(UCLAMP), "0");
}

/// A STATUS or EXPLAIN produced piece by piece (as the event loop does,
/// a frame at a time) is the same document as the whole one; a client
/// other than root sees its own votes and the winner, the rest counted.
#[test]
fn documents_in_pieces_are_the_whole_documents_and_others_votes_are_counted() {
    let mut f = fixture(Limits::default());
    let now = ms(1_000);
    let (a, b) = (app(1), app(2));
    for i in 0..20 {
        handle(f.core.handle(
            &a,
            ask(0, Priority::ThirdPartyLow, &[(0x44000000, 100 + i)]),
            now,
        ));
        handle(f.core.handle(
            &b,
            ask(60_000, Priority::ThirdPartyHigh, &[(0x44000000, 200 + i)]),
            now,
        ));
    }
    let top = handle(f.core.handle(
        &root(),
        ask(0, Priority::SystemLow, &[(0x44000000, 500)]),
        now,
    ));
    let pieces = |f: &common::Fixture, c: &Client, req: &Request| -> (String, usize) {
        let mut doc = f.core.open_doc(c, req).expect("a document");
        let (mut text, mut calls) = (Vec::new(), 0);
        loop {
            let want = text.len() + 64;
            if f.core.doc_next(c, &mut doc, &mut text, want, now) {
                break;
            }
            calls += 1;
        }
        (String::from_utf8(text).unwrap(), calls)
    };
    // Third-party: its 20 votes and the winner (root's, not named).
    let mine = f.core.explain(&a, "sched_util_clamp_min", now).unwrap();
    assert_eq!(mine.votes.len(), 21);
    assert_eq!(mine.other_votes, 20);
    assert_eq!(mine.votes[0].handle, Holder::AnotherClient);
    assert_eq!(mine.votes[0].value, 500);
    assert!(mine.votes[1..]
        .iter()
        .all(|v| v.priority == Priority::ThirdPartyLow && v.handle != Holder::AnotherClient));
    let req = Request::Explain {
        resource: "sched_util_clamp_min".into(),
    };
    let (text, calls) = pieces(&f, &a, &req);
    assert!(calls > 10, "{calls} pieces");
    assert_eq!(serde_json::from_str::<Explain>(&text).unwrap(), mine);
    // Root: every vote, none counted apart.
    let all = f.core.explain(&root(), "0x44000000", now).unwrap();
    assert_eq!((all.votes.len(), all.other_votes), (41, 0));
    assert_eq!(all.votes[0].handle, Holder::Handle(top));
    let (text, _) = pieces(&f, &root(), &req);
    assert_eq!(serde_json::from_str::<Explain>(&text).unwrap(), all);
    // STATUS: the same, whole or in pieces; a third party sees its own.
    for c in [root(), a.clone()] {
        let whole = f.core.status(&c, now);
        let (text, _) = pieces(&f, &c, &Request::Status);
        assert_eq!(serde_json::from_str::<Status>(&text).unwrap(), whole);
    }
    assert_eq!(f.core.status(&a, now).requests.len(), 20);
    assert_eq!(f.core.status(&root(), now).requests.len(), 41);
    // A request that ends while its document is produced is left out.
    let mut doc = f.core.open_doc(&b, &Request::Status).unwrap();
    f.core.client_gone(b.conn);
    let mut text = Vec::new();
    while !f.core.doc_next(&b, &mut doc, &mut text, usize::MAX, now) {}
    let st: Status = serde_json::from_slice(&text).unwrap();
    assert!(st.requests.is_empty());
    assert!(f.core.open_doc(&a, &Request::Ping).is_none());
    let unknown = Request::Explain {
        resource: "no_such".into(),
    };
    assert!(f.core.open_doc(&a, &unknown).is_none());
}
