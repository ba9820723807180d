//! `compare` on real runs: a delay injected into a test is flagged, two
//! runs of the same body are not. The body spins to a deadline, so being
//! preempted on a busy machine does not lengthen it (only a preemption
//! across the deadline does) and the test does not depend on the load.

use lever_bench::catalog::{Section, TestDef};
use lever_bench::compare::{compare, Verdict};
use lever_bench::runner::timed;
use lever_bench::{run_defs, BenchReport, Options};
use std::time::{Duration, Instant};

fn spin(us: u64) -> TestDef {
    TestDef::us("spin", Section::Syscalls, 1.0, move |_| {
        Ok(Box::new(move |n| {
            timed(n, || {
                let end = Instant::now() + Duration::from_micros(us);
                while Instant::now() < end {
                    std::hint::spin_loop();
                }
                Ok(())
            })
        }))
    })
}

fn run(us: u64) -> BenchReport {
    let opts = Options {
        policy: lever_bench::stats::Policy {
            fixed: Some(31),
            ..Options::quick().policy
        },
        // A sample of two or three spins: a preemption spoils few samples,
        // and the median ignores them.
        sample_time: Duration::from_micros(100),
        passes: 2,
        ..Options::quick()
    };
    run_defs(&opts, vec![spin(us)], &mut |_, _, _| {}).unwrap()
}

// One test, so the runs never compete with each other for the CPUs.
#[test]
fn an_injected_delay_is_a_regression_and_the_same_body_is_not() {
    an_injected_delay_is_a_regression();
    two_runs_of_the_same_body_are_not();
}

/// The delay is flagged in at least two of three base/slow pairs. One
/// pair alone failed once in CI (armv7 under qemu, beside the URM suite
/// and other emulated tests: +26 % at p = 0.83, the samples of both runs
/// spread by preemptions past the deadline) and passed 18 times of 18 by
/// hand, idle and beside three busy loops; two misses in three pairs
/// would be a detector that cannot see +50 %.
fn an_injected_delay_is_a_regression() {
    let mut rows = Vec::new();
    for _ in 0..3 {
        let base = run(40);
        // Two passes: 16 and 15 of the 31 samples, a median each.
        let t = &base.tests[0];
        assert_eq!((t.samples.len(), t.pass_medians.len()), (31, 2), "{t:?}");
        let slow = run(60); // +20 µs injected: +50%
        let c = compare(&base, &slow, 25.0);
        let flagged = c.rows[0].verdict == Verdict::Regressed
            && c.regressions == ["spin"]
            && c.rows[0].p_value.is_some_and(|p| p < 0.01);
        rows.push((flagged, c.rows[0].clone()));
        if rows.iter().filter(|(f, _)| *f).count() == 2 {
            return;
        }
    }
    panic!("+50 % flagged in fewer than 2 of 3 pairs: {rows:#?}");
}

fn two_runs_of_the_same_body_are_not() {
    let a = run(40);
    let b = run(40);
    let c = compare(&a, &b, 25.0);
    assert_ne!(c.rows[0].verdict, Verdict::Regressed, "{:?}", c.rows[0]);
    assert!(c.regressions.is_empty());
    assert!(
        c.rows[0].change_pct.unwrap().abs() < 25.0,
        "{:?}",
        c.rows[0]
    );
}
