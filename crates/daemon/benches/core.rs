//! Cost of one acquire + release through the daemon's core (limits,
//! bookkeeping, engine, journal, node writes) at 100 and at 10,000 live
//! requests: issue 11 asks for the second within 1.5× of the first.
//!
//! `cargo bench -p lever-daemon --bench core`
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use lever_daemon::core::Limits;
use lever_protocol::{Acquire, Lease, Priority, Reply, Request};
use std::hint::black_box;
use std::time::Duration;

#[path = "../tests/common/mod.rs"]
mod common;
use common::client;

const UCLAMP_OP: u32 = 0x44000000;

fn acquire(lease_ms: u32, value: i64) -> Request {
    Request::Acquire(Acquire {
        handle: None,
        lease: Lease::from_ms(lease_ms),
        priority: Priority::ThirdPartyLow,
        detach: false,
        report: false,
        pairs: vec![(UCLAMP_OP, value)],
    })
}

/// A core holding `live` requests of 100 connections (half of them timed,
/// so the deadline index holds `live / 2`), all voting `held` on the
/// clamp floor.
fn loaded(live: usize, held: i64) -> common::Fixture {
    let mut f = common::fixture(Limits::default());
    for i in 0..live {
        let conn = 100 + (i % 100) as u64;
        let lease = if i % 2 == 0 { 600_000 } else { 0 };
        let c = client(conn, 2000 + conn as u32 % 8, false);
        match f.core.handle(&c, acquire(lease, held), Duration::ZERO) {
            Reply::Handle(_) => {}
            // Past the third-party shares: the rest as root.
            _ => {
                let reply =
                    f.core
                        .handle(&client(conn, 0, true), acquire(lease, held), Duration::ZERO);
                assert!(matches!(reply, Reply::Handle(_)), "{reply:?}");
            }
        }
    }
    assert_eq!(f.core.live(), live);
    f
}

fn bench(c: &mut Criterion) {
    let me = client(1, 1000, false);
    let mut g = c.benchmark_group("core_acquire_release");
    // `held` 1000 beats the bench's vote of 5 (max wins): no node write,
    // the bookkeeping alone; `held` 1 loses to 900: a write and a restore.
    for (what, held, value) in [("no_write", 1000, 5), ("write_restore", 1, 900)] {
        for live in [100usize, 10_000] {
            let mut f = loaded(live, held);
            let now = Duration::from_millis(1);
            g.bench_with_input(BenchmarkId::new(what, live), &live, |b, _| {
                b.iter(|| {
                    let Reply::Handle(h) = f.core.handle(&me, acquire(5000, value), now) else {
                        panic!("refused");
                    };
                    let done = f.core.handle(&me, Request::Release { handle: h }, now);
                    black_box(done);
                })
            });
        }
    }
    g.finish();
    // One owner's close, and one expiry, among 10,000 live.
    let mut g = c.benchmark_group("core_close_expire");
    for live in [100usize, 10_000] {
        let mut f = loaded(live, 1000);
        let mut conn = 1_000_000u64;
        g.bench_with_input(BenchmarkId::new("acquire+close", live), &live, |b, _| {
            b.iter(|| {
                conn += 1;
                let c = client(conn, 1000, false);
                f.core.handle(&c, acquire(0, 5), Duration::ZERO);
                f.core.client_gone(conn);
            })
        });
        // Microsecond steps: the loaded requests' 10-minute leases stay.
        let mut t = 1_000u64;
        g.bench_with_input(BenchmarkId::new("acquire+expire", live), &live, |b, _| {
            b.iter(|| {
                t += 1;
                let now = Duration::from_micros(t);
                f.core.handle(&me, acquire(1, 5), now);
                f.core.expire(now + Duration::from_millis(1));
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
