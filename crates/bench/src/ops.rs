//! `lat_ops-*`: the latency of one arithmetic operation, ns. Each test is
//! a chain where every operation needs the previous result, so the time
//! per operation is its latency, not its throughput. Integer chains
//! alternate two variables (`a = a op b; b = b op a`) so the compiler
//! cannot reassociate ten operations into one; `mod` adds a constant to
//! keep the divisor large (one extra add per operation, ~1 cycle).

use crate::catalog::{Section, TestDef};
use crate::runner::Bench;
use std::hint::black_box;
use std::time::Instant;

/// Operations per inner iteration.
const OPS: u64 = 100;

fn chain<T: Copy + 'static>(name: &str, seed: (T, T), step: fn(T, T) -> (T, T)) -> TestDef {
    TestDef::ns(
        format!("lat_ops-{name}"),
        Section::Operations,
        OPS as f64,
        move |_| {
            let b: Box<dyn Bench> = Box::new(move |n: u64| {
                let (mut a, mut b) = black_box(seed);
                let start = Instant::now();
                for _ in 0..n {
                    // Two operations per step.
                    for _ in 0..OPS / 2 {
                        (a, b) = step(a, b);
                    }
                }
                let d = start.elapsed();
                black_box((a, b));
                Ok(d)
            });
            Ok(b)
        },
    )
}

/// The operation tests.
pub fn tests() -> Vec<TestDef> {
    vec![
        chain::<u32>("int-add", (1, 3), |a, b| {
            let a = a.wrapping_add(b);
            (a, b.wrapping_add(a))
        }),
        chain::<u32>("int-bit", (0x5555, 0x3333), |a, b| {
            let a = a ^ b.rotate_left(1);
            (a, b ^ a.rotate_left(1))
        }),
        chain::<u32>("int-mul", (3, 5), |a, b| {
            let a = a.wrapping_mul(b);
            (a, b.wrapping_mul(a))
        }),
        chain::<u32>("int-div", (7, 1_000_000_007), |a, b| {
            let a = b / a.max(1);
            (b / a.max(1), b)
        }),
        chain::<u32>("int-mod", (1_000_003, 4_000_000_007), |a, b| {
            let a = (b % a) + 1_000_003;
            ((b % a) + 1_000_003, b)
        }),
        chain::<u64>("int64-add", (1, 3), |a, b| {
            let a = a.wrapping_add(b);
            (a, b.wrapping_add(a))
        }),
        chain::<u64>("int64-bit", (0x5555, 0x3333), |a, b| {
            let a = a ^ b.rotate_left(1);
            (a, b ^ a.rotate_left(1))
        }),
        chain::<u64>("int64-mul", (3, 5), |a, b| {
            let a = a.wrapping_mul(b);
            (a, b.wrapping_mul(a))
        }),
        chain::<u64>("int64-div", (7, 1_000_000_000_007), |a, b| {
            let a = b / a.max(1);
            (b / a.max(1), b)
        }),
        chain::<u64>("int64-mod", (1_000_003, 4_000_000_000_007), |a, b| {
            let a = (b % a) + 1_000_003;
            ((b % a) + 1_000_003, b)
        }),
        // Floats are not reassociated (no fast-math), so `a = a op b`
        // with b fixed is already a chain.
        chain::<f32>("float-add", (1.0, 1e-7), |a, b| (a + b + b, b)),
        chain::<f32>("float-mul", (1.0, 1.000_000_1), |a, b| (a * b * b, b)),
        chain::<f32>("float-div", (1.0, 1.000_000_1), |a, b| (a / b / b, b)),
        chain::<f64>("double-add", (1.0, 1e-12), |a, b| (a + b + b, b)),
        chain::<f64>("double-mul", (1.0, 1.000_000_000_1), |a, b| (a * b * b, b)),
        chain::<f64>("double-div", (1.0, 1.000_000_000_1), |a, b| (a / b / b, b)),
    ]
}
