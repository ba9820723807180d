//! Property tests of the engine (proptest):
//! - the values applied do not depend on the order requests arrive in, nor on
//!   the order they are released in;
//! - releasing every request restores every node to its exact original;
//! - min <= max holds after every single write of every sequence, checked by
//!   a kernel model that refuses (EINVAL) a write that would break it;
//! - `Engine::decision` (the "why" `explain` and acquire replies give)
//!   always names the level the plans left in place, and a live request;
//! - a new vote on floors only (a boost), of any class, never lowers a node
//!   Lever holds, whatever the profile and the other requests hold.
mod common;

use common::*;
use lever_engine::*;
use proptest::prelude::*;
use std::time::Duration;

const CLASSES: [PriorityClass; 4] = [
    PriorityClass::ThirdPartyLow,
    PriorityClass::ThirdPartyHigh,
    PriorityClass::SystemLow,
    PriorityClass::SystemHigh,
];

/// Requests over `specs`: each touches 1..4 distinct resources with values
/// drawn around and beyond the bounds.
fn requests(specs: Vec<ResourceSpec>, max: usize) -> impl Strategy<Value = Vec<Request>> {
    let n = specs.len();
    let pair = (0..n, -100_000i64..2_500_000);
    prop::collection::vec(
        (0..4usize, prop::collection::vec(pair, 1..4), any::<bool>()),
        1..max,
    )
    .prop_map(move |raw| {
        raw.into_iter()
            .enumerate()
            .map(|(i, (class, pairs, timed))| {
                let mut seen = Vec::new();
                let pairs = pairs
                    .into_iter()
                    .filter(|(r, _)| {
                        let fresh = !seen.contains(r);
                        seen.push(*r);
                        fresh
                    })
                    .map(|(r, v)| {
                        let s = &specs[r];
                        // Spread values over the resource's range.
                        let v = if s.high > 10_000 {
                            v
                        } else {
                            v.rem_euclid(s.high + 50) - 25
                        };
                        (s.opcode, v)
                    })
                    .collect();
                Request {
                    id: RequestId(i as u64 + 1),
                    owner: OwnerId(i as u64 % 3),
                    priority: CLASSES[class],
                    deadline: timed.then(|| Duration::from_millis(10 * (i as u64 % 7) + 10)),
                    pairs,
                }
            })
            .collect()
    })
}

/// Resources whose result is order-independent by definition (max/min).
fn commutative_target() -> Vec<ResourceSpec> {
    small_target()
        .into_iter()
        .filter(|s| matches!(s.aggregation, Aggregation::Max | Aggregation::Min))
        .collect()
}

fn apply_all(reqs: &[Request], order: &[usize]) -> Result<(KernelModel, Engine), String> {
    let (mut k, mut e) = KernelModel::new(commutative_target());
    for &i in order {
        // A refusal (e.g. system-only resource) depends only on the request.
        if let Ok(plan) = e.acquire(reqs[i].clone(), Duration::ZERO) {
            k.apply(&plan)?;
        }
    }
    Ok((k, e))
}

fn shuffled(n: usize, seed: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    for (i, &s) in seed.iter().enumerate().take(n) {
        order.swap(i, s % n);
    }
    order
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn arrival_order_does_not_matter(
        reqs in requests(commutative_target(), 12),
        seed in prop::collection::vec(any::<usize>(), 12),
    ) {
        let forward: Vec<usize> = (0..reqs.len()).collect();
        let (k1, e1) = apply_all(&reqs, &forward).map_err(TestCaseError::fail)?;
        let (k2, e2) = apply_all(&reqs, &shuffled(reqs.len(), &seed)).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&k1.nodes, &k2.nodes);
        for i in 0..e1.specs().len() {
            prop_assert_eq!(e1.applied(i), e2.applied(i));
        }
    }

    #[test]
    fn release_order_does_not_matter_and_everything_restores(
        reqs in requests(small_target(), 14),
        seed in prop::collection::vec(any::<usize>(), 14),
        cut in 0usize..14,
    ) {
        let (mut k, mut e) = KernelModel::new(small_target());
        let mut accepted = Vec::new();
        for r in &reqs {
            if let Ok(plan) = e.acquire(r.clone(), Duration::ZERO) {
                k.apply(&plan).map_err(TestCaseError::fail)?;
                accepted.push(r.id);
            }
        }
        // Release some in two different orders: same result.
        let order = shuffled(accepted.len(), &seed);
        let cut = cut.min(accepted.len());
        let (mut k2, mut e2) = KernelModel::new(small_target());
        for r in &reqs {
            if let Ok(plan) = e2.acquire(r.clone(), Duration::ZERO) {
                k2.apply(&plan).map_err(TestCaseError::fail)?;
            }
        }
        for &i in &order[..cut] {
            k.apply(&e.release(accepted[i]).unwrap()).map_err(TestCaseError::fail)?;
        }
        for &i in order[..cut].iter().rev() {
            k2.apply(&e2.release(accepted[i]).unwrap()).map_err(TestCaseError::fail)?;
        }
        // Newest/oldest depend on arrival, which was the same in both runs.
        prop_assert_eq!(&k.nodes, &k2.nodes);
        // Release the rest: every node back to its exact original.
        for &i in &order[cut..] {
            k.apply(&e.release(accepted[i]).unwrap()).map_err(TestCaseError::fail)?;
        }
        prop_assert_eq!(&k.nodes, &k.originals);
        prop_assert_eq!(e.live_count(), 0);
        for i in 0..e.specs().len() {
            prop_assert_eq!(e.applied(i), None);
        }
    }

    #[test]
    fn min_le_max_after_every_write_in_any_sequence(
        reqs in requests(small_target(), 16),
        ops in prop::collection::vec((0u8..4, any::<usize>(), 0u64..100), 1..40),
    ) {
        // Interleave acquires, updates, releases, owner deaths and expiries.
        let (mut k, mut e) = KernelModel::new(small_target());
        let mut next = 0usize;
        for (op, pick, t) in ops {
            let now = Duration::from_millis(t);
            let plan = match op {
                0 | 1 if !reqs.is_empty() => {
                    let r = reqs[if op == 0 { next % reqs.len() } else { pick % reqs.len() }].clone();
                    next += 1;
                    match e.acquire(r, now) { Ok(p) => p, Err(_) => continue }
                }
                2 => {
                    let live = e.requests();
                    if live.is_empty() { continue }
                    let id = live[pick % live.len()].id;
                    e.release(id).unwrap()
                }
                _ if pick % 2 == 0 => e.expire(now),
                _ => e.release_owner(OwnerId(pick as u64 % 3)),
            };
            k.apply(&plan).map_err(TestCaseError::fail)?;
            for i in 0..e.specs().len() {
                let d = e.decision(i).unwrap();
                prop_assert_eq!(d.level, e.applied(i));
                let named = match d.cause {
                    Cause::Original => vec![],
                    Cause::Vote(v) => vec![v],
                    Cause::Pair { by, overridden, .. } => by.into_iter().chain(overridden).collect(),
                };
                for v in named {
                    prop_assert!(e.request(v.id).is_some(), "{:?} names a dead request", d);
                }
            }
        }
        k.apply(&e.release_all()).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&k.nodes, &k.originals);
    }

    #[test]
    fn a_boost_never_lowers_a_node_lever_holds(
        reqs in requests(small_target(), 12),
        profile in prop::collection::vec(any::<bool>(), 12),
        boost in prop::collection::vec((any::<usize>(), 0i64..2_500_000), 1..4),
        class in 0..4usize,
    ) {
        let (mut k, mut e) = KernelModel::new(small_target());
        // Some of the requests are a profile's votes (the lowest class).
        for (r, &p) in reqs.iter().zip(&profile) {
            let mut r = r.clone();
            if p {
                r.priority = PriorityClass::Profile;
            }
            if let Ok(plan) = e.acquire_as(r, Duration::ZERO, true) {
                k.apply(&plan).map_err(TestCaseError::fail)?;
            }
        }
        let floors: Vec<ResourceSpec> = e
            .specs()
            .filter(|s| s.aggregation == Aggregation::Max)
            .cloned()
            .collect();
        let mut pairs: Vec<(Opcode, i64)> = Vec::new();
        for (pick, v) in boost {
            let s = &floors[pick % floors.len()];
            if pairs.iter().all(|p| p.0 != s.opcode) {
                pairs.push((s.opcode, v.rem_euclid(s.high.max(1) + 1)));
            }
        }
        let before: Vec<Option<i64>> = (0..k.nodes.len()).map(|i| e.applied(i)).collect();
        let boost = Request {
            id: RequestId(1000),
            owner: OwnerId(9),
            priority: CLASSES[class],
            deadline: None,
            pairs,
        };
        let plan = e.acquire_as(boost, Duration::ZERO, true).map_err(|e| TestCaseError::fail(e.to_string()))?;
        k.apply(&plan).map_err(TestCaseError::fail)?;
        for (i, was) in before.iter().enumerate() {
            if let Some(was) = *was {
                prop_assert!(k.nodes[i] >= was, "node {} lowered from {} to {}", i, was, k.nodes[i]);
            }
        }
    }
}
