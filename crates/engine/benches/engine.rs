//! Engine cost: acquire + release of one request while 1,000 requests are
//! live over 50 resources (issue target: under 2 µs per operation).
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use lever_engine::*;
use std::hint::black_box;
use std::time::Duration;

#[path = "../tests/common/mod.rs"]
mod common;

const CLASSES: [PriorityClass; 4] = [
    PriorityClass::ThirdPartyLow,
    PriorityClass::ThirdPartyHigh,
    PriorityClass::SystemLow,
    PriorityClass::SystemHigh,
];

/// An engine over 50 resources holding 1,000 live requests of 1-3 pairs each.
fn loaded_engine() -> (Engine, Vec<Opcode>) {
    let specs = common::wide_target(50);
    let opcodes: Vec<Opcode> = specs.iter().map(|s| s.opcode).collect();
    let (_, mut engine) = common::KernelModel::new(specs);
    let mut x: u64 = 0x9e3779b97f4a7c15;
    let mut rand = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for id in 1..=1000u64 {
        let n = 1 + (rand() % 3) as usize;
        let mut pairs = Vec::new();
        while pairs.len() < n {
            let op = opcodes[(rand() % 50) as usize];
            if !pairs.iter().any(|&(o, _)| o == op) {
                pairs.push((op, (rand() % 2_000_000) as i64));
            }
        }
        let req = Request {
            id: RequestId(id),
            owner: OwnerId(id % 64),
            priority: CLASSES[(rand() % 4) as usize],
            deadline: (id % 2 == 0).then(|| Duration::from_millis(rand() % 60_000)),
            pairs,
        };
        engine.acquire(req, Duration::ZERO).expect("valid request");
    }
    assert_eq!(engine.live_count(), 1000);
    (engine, opcodes)
}

fn bench(c: &mut Criterion) {
    let (mut engine, opcodes) = loaded_engine();
    let mut g = c.benchmark_group("engine_1000_live_50_resources");
    let mut i = 0usize;
    g.bench_function("acquire+release_2_pairs", |b| {
        b.iter(|| {
            i = (i + 7) % 50;
            let req = Request {
                id: RequestId(1_000_000),
                owner: OwnerId(1),
                priority: PriorityClass::SystemLow,
                deadline: Some(Duration::from_millis(5000)),
                pairs: vec![(opcodes[i], 1_500_000), (opcodes[(i + 13) % 50], 700)],
            };
            let p1 = engine.acquire(black_box(req), Duration::ZERO).unwrap();
            let p2 = engine.release(RequestId(1_000_000)).unwrap();
            black_box((p1, p2));
        })
    });
    g.bench_function("expire_one_of_1000", |b| {
        b.iter_batched(
            loaded_engine,
            |(mut e, _)| {
                let plan = e.expire(Duration::from_millis(1));
                (e, plan) // dropped outside the timing
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
