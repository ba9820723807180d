//! Example-based tests of the engine's rules.
mod common;

use common::*;
use lever_engine::*;
use std::time::Duration;

const SILVER_MIN: Opcode = Opcode(0x44008100);
const SILVER_MAX: Opcode = Opcode(0x4400C100);
const UCLAMP_MIN: Opcode = Opcode(0x44000000);
const SWAPPINESS: Opcode = Opcode(0x48800000);
const RATE_LIMIT: Opcode = Opcode(0x48004000);
const DMA_LATENCY: Opcode = Opcode(0x49800000);

fn req(id: u64, prio: PriorityClass, pairs: &[(Opcode, i64)]) -> Request {
    Request {
        id: RequestId(id),
        owner: OwnerId(id * 10),
        priority: prio,
        deadline: None,
        pairs: pairs.to_vec(),
    }
}

const TP: PriorityClass = PriorityClass::ThirdPartyLow;
fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn seed_example_sets_silver_min_and_restores() {
    let (mut k, mut e) = KernelModel::new(small_target());
    let silver_min = e.index_of(SILVER_MIN).unwrap();
    let plan = e
        .acquire(req(1, TP, &[(SILVER_MIN, 1958400)]), ms(0))
        .unwrap();
    k.apply(&plan).unwrap();
    assert_eq!(k.nodes[silver_min], 1958400);
    assert_eq!(e.winner(silver_min), Some(RequestId(1)));
    k.apply(&e.release(RequestId(1)).unwrap()).unwrap();
    assert_eq!(k.nodes, k.originals);
}

#[test]
fn floor_snaps_up_ceiling_snaps_down_and_clamps() {
    let (mut k, mut e) = KernelModel::new(small_target());
    let plan = e
        .acquire(
            req(1, TP, &[(SILVER_MIN, 1000000), (SILVER_MAX, 1700000)]),
            ms(0),
        )
        .unwrap();
    k.apply(&plan).unwrap();
    assert_eq!(k.nodes[e.index_of(SILVER_MIN).unwrap()], 1152000);
    assert_eq!(k.nodes[e.index_of(SILVER_MAX).unwrap()], 1651200);
    // Above the table: clamped to the highest step.
    let plan = e
        .acquire(req(2, TP, &[(SILVER_MIN, 2_100_000)]), ms(0))
        .unwrap();
    k.apply(&plan).unwrap();
    // Floor 1958400 > ceiling 1651200 of the same class: the ceiling wins.
    assert_eq!(k.nodes[e.index_of(SILVER_MIN).unwrap()], 1651200);
}

#[test]
fn max_wins_for_floors_min_wins_for_ceilings() {
    let (mut k, mut e) = KernelModel::new(small_target());
    let u = e.index_of(UCLAMP_MIN).unwrap();
    k.apply(&e.acquire(req(1, TP, &[(UCLAMP_MIN, 300)]), ms(0)).unwrap())
        .unwrap();
    k.apply(&e.acquire(req(2, TP, &[(UCLAMP_MIN, 700)]), ms(0)).unwrap())
        .unwrap();
    k.apply(&e.acquire(req(3, TP, &[(UCLAMP_MIN, 500)]), ms(0)).unwrap())
        .unwrap();
    assert_eq!(k.nodes[u], 700);
    k.apply(&e.release(RequestId(2)).unwrap()).unwrap();
    assert_eq!(k.nodes[u], 500);
    let silver_max = e.index_of(SILVER_MAX).unwrap();
    k.apply(
        &e.acquire(req(4, TP, &[(SILVER_MAX, 1516800)]), ms(0))
            .unwrap(),
    )
    .unwrap();
    k.apply(
        &e.acquire(req(5, TP, &[(SILVER_MAX, 1152000)]), ms(0))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(k.nodes[silver_max], 1152000);
}

#[test]
fn the_value_decides_a_floor_whatever_the_class_and_the_class_decides_newest() {
    let (mut k, mut e) = KernelModel::new(small_target());
    let u = e.index_of(UCLAMP_MIN).unwrap();
    k.apply(
        &e.acquire(
            req(1, PriorityClass::ThirdPartyHigh, &[(UCLAMP_MIN, 1024)]),
            ms(0),
        )
        .unwrap(),
    )
    .unwrap();
    // A system client's lower floor does not lower the third-party one.
    k.apply(
        &e.acquire(
            req(2, PriorityClass::SystemLow, &[(UCLAMP_MIN, 128)]),
            ms(0),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(k.nodes[u], 1024);
    assert_eq!(e.winner(u), Some(RequestId(1)));
    let order: Vec<RequestId> = e.votes(u).map(|v| v.0).collect();
    assert_eq!(order, [RequestId(1), RequestId(2)], "strongest first");
    k.apply(&e.release(RequestId(1)).unwrap()).unwrap();
    assert_eq!(k.nodes[u], 128);
    // Swappiness has no better direction (newest): there the class
    // decides, so a newer third-party vote loses to the system one.
    let sw = e.index_of(SWAPPINESS).unwrap();
    k.apply(
        &e.acquire(req(3, PriorityClass::SystemLow, &[(SWAPPINESS, 10)]), ms(0))
            .unwrap(),
    )
    .unwrap();
    k.apply(&e.acquire(req(4, TP, &[(SWAPPINESS, 90)]), ms(0)).unwrap())
        .unwrap();
    assert_eq!(k.nodes[sw], 10);
    assert_eq!(e.winner(sw), Some(RequestId(3)));
}

#[test]
fn higher_class_floor_beats_lower_class_ceiling() {
    let (mut k, mut e) = KernelModel::new(small_target());
    let (lo, hi) = (
        e.index_of(SILVER_MIN).unwrap(),
        e.index_of(SILVER_MAX).unwrap(),
    );
    k.apply(
        &e.acquire(req(1, TP, &[(SILVER_MAX, 806400)]), ms(0))
            .unwrap(),
    )
    .unwrap();
    let plan = e
        .acquire(
            req(2, PriorityClass::SystemHigh, &[(SILVER_MIN, 1516800)]),
            ms(0),
        )
        .unwrap();
    // The ceiling must move first, or the kernel refuses the floor.
    assert_eq!(plan.writes[0].resource, hi);
    k.apply(&plan).unwrap();
    assert_eq!((k.nodes[lo], k.nodes[hi]), (1516800, 1516800));
    k.apply(&e.release(RequestId(2)).unwrap()).unwrap();
    assert_eq!((k.nodes[lo], k.nodes[hi]), (300000, 806400));
    k.apply(&e.release(RequestId(1)).unwrap()).unwrap();
    assert_eq!(k.nodes, k.originals);
}

#[test]
fn newest_and_oldest_writer() {
    let (mut k, mut e) = KernelModel::new(small_target());
    let (sw, rl) = (
        e.index_of(SWAPPINESS).unwrap(),
        e.index_of(RATE_LIMIT).unwrap(),
    );
    k.apply(
        &e.acquire(req(1, TP, &[(SWAPPINESS, 10), (RATE_LIMIT, 10)]), ms(0))
            .unwrap(),
    )
    .unwrap();
    k.apply(
        &e.acquire(req(2, TP, &[(SWAPPINESS, 90), (RATE_LIMIT, 90)]), ms(0))
            .unwrap(),
    )
    .unwrap();
    assert_eq!((k.nodes[sw], k.nodes[rl]), (90, 10));
    // Re-acquiring request 1 makes it the newest and the youngest.
    k.apply(
        &e.acquire(req(1, TP, &[(SWAPPINESS, 20), (RATE_LIMIT, 20)]), ms(0))
            .unwrap(),
    )
    .unwrap();
    assert_eq!((k.nodes[sw], k.nodes[rl]), (20, 90));
}

#[test]
fn deadlines_expire_in_order_and_report_next() {
    let (mut k, mut e) = KernelModel::new(small_target());
    let u = e.index_of(UCLAMP_MIN).unwrap();
    let mut r1 = req(1, TP, &[(UCLAMP_MIN, 900)]);
    r1.deadline = Some(ms(1000));
    let mut r2 = req(2, TP, &[(UCLAMP_MIN, 400)]);
    r2.deadline = Some(ms(3000));
    k.apply(&e.acquire(r1, ms(0)).unwrap()).unwrap();
    let plan = e.acquire(r2, ms(0)).unwrap();
    assert_eq!(plan.next_deadline, Some(ms(1000)));
    assert!(e.expire(ms(999)).writes.is_empty());
    let plan = e.expire(ms(1000));
    assert_eq!(plan.ended, vec![RequestId(1)]);
    assert_eq!(plan.next_deadline, Some(ms(3000)));
    k.apply(&plan).unwrap();
    assert_eq!(k.nodes[u], 400);
    let plan = e.expire(ms(10_000));
    k.apply(&plan).unwrap();
    assert_eq!(plan.next_deadline, None);
    assert_eq!(k.nodes, k.originals);
}

#[test]
fn update_with_existing_handle_replaces_values_and_deadline() {
    let (mut k, mut e) = KernelModel::new(small_target());
    let u = e.index_of(UCLAMP_MIN).unwrap();
    let mut r = req(1, TP, &[(UCLAMP_MIN, 900)]);
    r.deadline = Some(ms(100));
    k.apply(&e.acquire(r.clone(), ms(0)).unwrap()).unwrap();
    r.deadline = None;
    r.pairs = vec![(UCLAMP_MIN, 200)];
    k.apply(&e.acquire(r, ms(50)).unwrap()).unwrap();
    assert_eq!(k.nodes[u], 200);
    assert_eq!(e.next_deadline(), None);
    assert_eq!(e.live_count(), 1);
    assert!(e.expire(ms(1_000_000)).writes.is_empty());
}

#[test]
fn refusals_change_nothing() {
    let (_k, mut e) = KernelModel::new(small_target());
    let plan = e.acquire(req(1, TP, &[(UCLAMP_MIN, 900)]), ms(0)).unwrap();
    assert_eq!(plan.writes.len(), 1);
    let err = e
        .acquire(req(2, TP, &[(Opcode(0x4abcdef0), 1)]), ms(0))
        .unwrap_err();
    assert_eq!(err, EngineError::UnknownOpcode(Opcode(0x4abcdef0)));
    let err = e
        .acquire(req(2, TP, &[(UCLAMP_MIN, 1), (UCLAMP_MIN, 2)]), ms(0))
        .unwrap_err();
    assert_eq!(err, EngineError::RepeatedOpcode(UCLAMP_MIN));
    let err = e
        .acquire(req(2, TP, &[(UCLAMP_MIN, 1), (DMA_LATENCY, 2)]), ms(0))
        .unwrap_err();
    assert!(matches!(err, EngineError::NotPermitted { .. }), "{err}");
    assert_eq!(
        e.acquire(req(2, TP, &[]), ms(0)).unwrap_err(),
        EngineError::Empty
    );
    // Someone else's handle.
    let mut steal = req(1, TP, &[(UCLAMP_MIN, 5)]);
    steal.owner = OwnerId(999);
    assert_eq!(
        e.acquire(steal, ms(0)).unwrap_err(),
        EngineError::NotOwner(RequestId(1))
    );
    assert_eq!(
        e.release_owned(RequestId(1), OwnerId(999)).unwrap_err(),
        EngineError::NotOwner(RequestId(1))
    );
    assert_eq!(
        e.release(RequestId(42)).unwrap_err(),
        EngineError::NoSuchRequest(RequestId(42))
    );
    assert_eq!(e.live_count(), 1);
    assert_eq!(e.applied(e.index_of(UCLAMP_MIN).unwrap()), Some(900));
    // A system client may use the system-only resource.
    e.acquire(req(3, PriorityClass::SystemLow, &[(DMA_LATENCY, 0)]), ms(0))
        .unwrap();
}

#[test]
fn release_owner_drops_everything_it_held() {
    let (mut k, mut e) = KernelModel::new(small_target());
    let mut a = req(1, TP, &[(UCLAMP_MIN, 900)]);
    a.owner = OwnerId(5);
    let mut b = req(2, TP, &[(SILVER_MIN, 1516800)]);
    b.owner = OwnerId(5);
    let c = req(3, TP, &[(UCLAMP_MIN, 100)]);
    for r in [a, b, c] {
        k.apply(&e.acquire(r, ms(0)).unwrap()).unwrap();
    }
    let plan = e.release_owner(OwnerId(5));
    assert_eq!(plan.ended, vec![RequestId(1), RequestId(2)]);
    k.apply(&plan).unwrap();
    assert_eq!(k.nodes[e.index_of(UCLAMP_MIN).unwrap()], 100);
    assert_eq!(k.nodes[e.index_of(SILVER_MIN).unwrap()], 300000);
}

#[test]
fn bad_specs_are_refused() {
    let mut specs = small_target();
    specs[3].opcode = specs[0].opcode;
    assert!(matches!(
        Engine::new(specs),
        Err(EngineError::DuplicateOpcode { .. })
    ));
    let mut specs = small_target();
    specs[0].kind = ResourceKind::PairMin {
        max: Opcode(0x4400C000),
    }; // the gold max
    assert!(matches!(
        Engine::new(specs),
        Err(EngineError::BadPair { .. })
    ));
}

#[test]
fn an_acquire_reports_what_it_did_to_each_value() {
    let (_, mut e) = KernelModel::new(small_target());
    let plan = e
        .acquire(
            req(1, TP, &[(SILVER_MIN, 99_999_999), (SILVER_MAX, 1700000)]),
            ms(0),
        )
        .unwrap();
    let [(min_idx, clamp), (max_idx, snap)] = plan.adjustments[..] else {
        panic!("{:?}", plan.adjustments)
    };
    assert_eq!(min_idx, e.index_of(SILVER_MIN).unwrap());
    assert_eq!(max_idx, e.index_of(SILVER_MAX).unwrap());
    assert_eq!((clamp.asked, clamp.held), (99_999_999, 1958400));
    assert_eq!(clamp.clamped, Some(Clamp::ToHigh(1958400)));
    assert_eq!((snap.held, snap.snapped), (1651200, Some(Snap::Down)));
    assert!(e.release(RequestId(1)).unwrap().adjustments.is_empty());
}

#[test]
fn decision_names_the_ceiling_that_capped_a_boost() {
    let (mut k, mut e) = KernelModel::new(small_target());
    let min = e.index_of(SILVER_MIN).unwrap();
    let max = e.index_of(SILVER_MAX).unwrap();
    k.apply(
        &e.acquire(req(1, TP, &[(SILVER_MAX, 806400)]), ms(0))
            .unwrap(),
    )
    .unwrap();
    k.apply(
        &e.acquire(req(2, TP, &[(SILVER_MIN, 1958400)]), ms(0))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(k.nodes[min], 806400);
    let d = e.decision(min).unwrap();
    assert_eq!(d.level, Some(806400));
    let cap = VoteRef {
        id: RequestId(1),
        class: TP,
        value: 806400,
    };
    let boost = VoteRef {
        id: RequestId(2),
        class: TP,
        value: 1958400,
    };
    assert_eq!(
        d.cause,
        Cause::Pair {
            partner: max,
            by: Some(cap),
            overridden: Some(boost)
        }
    );
    assert_eq!(e.decision(max).unwrap().cause, Cause::Vote(cap));
    // A floor of a higher class raises the ceiling instead.
    let sys = PriorityClass::SystemLow;
    k.apply(
        &e.acquire(req(3, sys, &[(SILVER_MIN, 1958400)]), ms(0))
            .unwrap(),
    )
    .unwrap();
    let d = e.decision(max).unwrap();
    assert_eq!(d.level, Some(1958400));
    assert!(
        matches!(d.cause, Cause::Pair { by: Some(v), overridden: Some(c), .. }
        if v.id == RequestId(3) && c == cap),
        "{d:?}"
    );
    // Nothing held: the original.
    k.apply(&e.release_all()).unwrap();
    assert_eq!(
        e.decision(min).unwrap(),
        Decision {
            level: None,
            cause: Cause::Original
        }
    );
    // On the resource itself the value wins, whatever the class.
    k.apply(&e.acquire(req(4, TP, &[(UCLAMP_MIN, 900)]), ms(0)).unwrap())
        .unwrap();
    k.apply(&e.acquire(req(5, sys, &[(UCLAMP_MIN, 100)]), ms(0)).unwrap())
        .unwrap();
    let u = e.index_of(UCLAMP_MIN).unwrap();
    assert_eq!(
        e.decision(u).unwrap().cause,
        Cause::Vote(VoteRef {
            id: RequestId(4),
            class: TP,
            value: 900
        })
    );
}

#[test]
fn a_lease_without_pairs_lives_expires_and_ends_with_its_owner() {
    let (_k, mut e) = KernelModel::new(small_target());
    let mut lease = req(1, TP, &[]);
    assert_eq!(
        e.acquire(lease.clone(), ms(0)).unwrap_err(),
        EngineError::Empty
    );
    lease.deadline = Some(ms(100));
    let plan = e.acquire_lease(lease.clone(), ms(0), false).unwrap();
    assert!(plan.writes.is_empty());
    assert_eq!((e.live_count(), plan.next_deadline), (1, Some(ms(100))));
    let plan = e.expire(ms(100));
    assert_eq!((plan.ended, e.live_count()), (vec![RequestId(1)], 0));
    lease.deadline = None;
    e.acquire_lease(lease, ms(0), false).unwrap();
    assert_eq!(e.release_owner(OwnerId(10)).ended, vec![RequestId(1)]);
}

#[test]
fn owners_are_indexed_through_replacement_and_release() {
    let (_k, mut e) = KernelModel::new(small_target());
    let mut a = req(1, TP, &[(UCLAMP_MIN, 900)]);
    a.owner = OwnerId(5);
    e.acquire(a.clone(), ms(0)).unwrap();
    a.pairs = vec![(UCLAMP_MIN, 300)];
    e.acquire(a, ms(0)).unwrap();
    assert_eq!(e.owned_count(OwnerId(5)), 1);
    e.release(RequestId(1)).unwrap();
    assert_eq!(e.owned_count(OwnerId(5)), 0);
    assert!(e.release_owner(OwnerId(5)).ended.is_empty());
}

#[test]
fn expire_some_ends_due_requests_in_bounded_steps() {
    let (mut k, mut e) = KernelModel::new(small_target());
    for id in 1..=10 {
        let mut r = req(id, TP, &[(UCLAMP_MIN, id as i64)]);
        r.deadline = Some(ms(100));
        k.apply(&e.acquire(r, ms(0)).unwrap()).unwrap();
    }
    let mut later = req(11, TP, &[(SWAPPINESS, 20)]);
    later.deadline = Some(ms(500));
    k.apply(&e.acquire(later, ms(0)).unwrap()).unwrap();
    let plan = e.expire_some(ms(100), 4);
    assert_eq!(plan.ended.len(), 4);
    // More are due: the next deadline is still now.
    assert_eq!(plan.next_deadline, Some(ms(100)));
    k.apply(&plan).unwrap();
    let plan = e.expire_some(ms(100), 4);
    k.apply(&plan).unwrap();
    let plan = e.expire_some(ms(100), 4);
    assert_eq!(plan.ended.len(), 2);
    assert_eq!(plan.next_deadline, Some(ms(500)));
    k.apply(&plan).unwrap();
    let u = e.index_of(UCLAMP_MIN).unwrap();
    assert_eq!(k.nodes[u], k.originals[u]);
    assert_eq!(e.live_count(), 1);
}

#[test]
fn a_trusted_client_at_a_third_party_class_may_use_system_resources() {
    let (_k, mut e) = KernelModel::new(small_target());
    let r = req(1, TP, &[(DMA_LATENCY, 0)]);
    assert!(matches!(
        e.acquire(r.clone(), ms(0)).unwrap_err(),
        EngineError::NotPermitted { .. }
    ));
    e.acquire_as(r, ms(0), true).unwrap();
    // Its vote still ranks as third-party-low.
    let dma = e.index_of(DMA_LATENCY).unwrap();
    assert_eq!(e.votes(dma).next().map(|v| v.2), Some(TP));
    assert!(matches!(
        e.acquire_as(req(2, TP, &[(DMA_LATENCY, 5)]), ms(0), false)
            .unwrap_err(),
        EngineError::NotPermitted { .. }
    ));
}

#[test]
fn a_profile_floor_is_a_vote_a_lower_boost_cannot_lower() {
    // Issue 27: the performance profile holds Silver's floor at the top
    // step; a game asking 1152000 (or 300000) must not lower it, one
    // asking more wins until it ends, and the node goes back to the
    // profile's value, not the original.
    for class in [
        PriorityClass::ThirdPartyLow,
        PriorityClass::ThirdPartyHigh,
        PriorityClass::SystemLow,
        PriorityClass::SystemHigh,
    ] {
        let (mut k, mut e) = KernelModel::new(small_target());
        let (lo, hi) = (
            e.index_of(SILVER_MIN).unwrap(),
            e.index_of(SILVER_MAX).unwrap(),
        );
        let u = e.index_of(UCLAMP_MIN).unwrap();
        let profile = req(
            1,
            PriorityClass::Profile,
            &[
                (SILVER_MIN, 1651200),
                (SILVER_MAX, 1958400),
                (UCLAMP_MIN, 512),
            ],
        );
        k.apply(&e.acquire_as(profile, ms(0), true).unwrap())
            .unwrap();
        for low in [1152000, 300000] {
            let plan = e
                .acquire(req(2, class, &[(SILVER_MIN, low), (UCLAMP_MIN, 64)]), ms(0))
                .unwrap();
            assert!(plan.writes.is_empty(), "{class:?}: {plan:?}");
            k.apply(&plan).unwrap();
            assert_eq!((k.nodes[lo], k.nodes[u]), (1651200, 512), "{class:?}");
            assert_eq!(e.winner(lo), Some(RequestId(1)));
        }
        k.apply(
            &e.acquire(
                req(2, class, &[(SILVER_MIN, 1958400), (UCLAMP_MIN, 1024)]),
                ms(0),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!((k.nodes[lo], k.nodes[u]), (1958400, 1024), "{class:?}");
        // A client's ceiling below the profile's floor still caps it: the
        // class decides a floor/ceiling conflict, and the profile's is the
        // lowest.
        k.apply(
            &e.acquire(req(3, class, &[(SILVER_MAX, 1152000)]), ms(0))
                .unwrap(),
        )
        .unwrap();
        assert_eq!((k.nodes[lo], k.nodes[hi]), (1152000, 1152000), "{class:?}");
        k.apply(&e.release(RequestId(3)).unwrap()).unwrap();
        k.apply(&e.release(RequestId(2)).unwrap()).unwrap();
        assert_eq!(
            (k.nodes[lo], k.nodes[hi], k.nodes[u]),
            (1651200, 1958400, 512),
            "back to the profile's values, not the originals"
        );
        k.apply(&e.release(RequestId(1)).unwrap()).unwrap();
        assert_eq!(k.nodes, k.originals);
    }
    assert!(!PriorityClass::Profile.is_system());
}

#[test]
fn a_higher_class_floor_raises_every_lower_class_ceiling_it_crosses() {
    // Ceilings: third-party 1152000, system-low 1516800. A system-high
    // floor of 1651200 crosses both: the pair ends at 1651200. With a
    // system-low floor instead, only the third-party ceiling is raised and
    // the system-low one caps the floor at 1516800.
    for (class, want) in [
        (PriorityClass::SystemHigh, 1651200),
        (PriorityClass::SystemLow, 1516800),
    ] {
        let (mut k, mut e) = KernelModel::new(small_target());
        let (lo, hi) = (
            e.index_of(SILVER_MIN).unwrap(),
            e.index_of(SILVER_MAX).unwrap(),
        );
        k.apply(
            &e.acquire(req(1, TP, &[(SILVER_MAX, 1152000)]), ms(0))
                .unwrap(),
        )
        .unwrap();
        k.apply(
            &e.acquire(
                req(2, PriorityClass::SystemLow, &[(SILVER_MAX, 1516800)]),
                ms(0),
            )
            .unwrap(),
        )
        .unwrap();
        // A profile floor above all of them changes nothing: its class is
        // the lowest.
        k.apply(
            &e.acquire_as(
                req(3, PriorityClass::Profile, &[(SILVER_MIN, 1958400)]),
                ms(0),
                true,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!((k.nodes[lo], k.nodes[hi]), (1152000, 1152000));
        k.apply(
            &e.acquire(req(4, class, &[(SILVER_MIN, 1651200)]), ms(0))
                .unwrap(),
        )
        .unwrap();
        assert_eq!((k.nodes[lo], k.nodes[hi]), (want, want), "{class:?}");
        let d = e.decision(hi).unwrap();
        assert!(
            matches!(d.cause, Cause::Pair { by: Some(v), .. } if v.id == RequestId(4)),
            "{class:?}: {d:?}"
        );
        k.apply(&e.release_all()).unwrap();
        assert_eq!(k.nodes, k.originals);
    }
}
