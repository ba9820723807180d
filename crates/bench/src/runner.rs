//! Running one test: calibrate how many iterations make a sample long
//! enough to time, warm up, then sample until the statistics are good
//! enough ([`crate::stats::collect`]).

use crate::stats::{collect, Policy, Stop};
use crate::BenchError;
use std::time::{Duration, Instant};

/// A benchmark body: `run(iters)` does `iters` iterations and returns the
/// time they took (setup outside the timed part is not counted).
pub trait Bench {
    /// Run `iters` iterations; the elapsed time of the measured part.
    fn run(&mut self, iters: u64) -> Result<Duration, BenchError>;
}

impl<F: FnMut(u64) -> Result<Duration, BenchError>> Bench for F {
    fn run(&mut self, iters: u64) -> Result<Duration, BenchError> {
        self(iters)
    }
}

/// A benchmark body as the catalog's `make` functions return it.
pub fn boxed(b: impl Bench + 'static) -> Result<Box<dyn Bench>, BenchError> {
    Ok(Box::new(b))
}

/// Time `iters` runs of `op` (for benches whose every iteration is timed).
pub fn timed(
    iters: u64,
    mut op: impl FnMut() -> Result<(), BenchError>,
) -> Result<Duration, BenchError> {
    let start = Instant::now();
    for _ in 0..iters {
        op()?;
    }
    Ok(start.elapsed())
}

/// The iteration count whose run lasts at least `target` (doubling, then
/// scaled), capped so a pathological test cannot run forever.
///
/// A body may report much less than its wall time (untimed setup, or
/// `lat_ctx` taking off a measured overhead, which on a loaded machine
/// can leave nothing): growth also stops once the wall time of one run
/// passes four targets, or such a body would grow without bound.
pub fn calibrate(bench: &mut dyn Bench, target: Duration) -> Result<u64, BenchError> {
    let mut iters = 1u64;
    loop {
        let t0 = Instant::now();
        let d = bench.run(iters)?;
        let wall = t0.elapsed();
        if d >= target || wall >= target * 4 || iters >= 1 << 40 {
            return Ok(iters);
        }
        let basis = d.max(wall / 4);
        let grow = if basis.is_zero() {
            16.0
        } else {
            (target.as_secs_f64() / basis.as_secs_f64() * 1.2).clamp(1.5, 16.0)
        };
        iters = ((iters as f64) * grow).ceil() as u64;
    }
}

/// What a sample's value is, from iterations and time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// Microseconds per operation (`ops` operations per iteration).
    Us {
        /// Operations per iteration.
        ops: f64,
    },
    /// Nanoseconds per operation.
    Ns {
        /// Operations per iteration.
        ops: f64,
    },
    /// `amount` per iteration, per second, divided by `divisor` (bytes
    /// and 2^20 for LMBench's MB/s; files and 1 for files/s).
    Rate {
        /// Bytes, files, … per iteration.
        amount: f64,
        /// Unit divisor (2^20 for MB/s).
        divisor: f64,
    },
}

impl Metric {
    /// The value of one sample.
    pub fn value(self, iters: u64, elapsed: Duration) -> f64 {
        let s = elapsed.as_secs_f64().max(1e-12);
        let n = iters as f64;
        match self {
            Metric::Us { ops } => s * 1e6 / (n * ops),
            Metric::Ns { ops } => s * 1e9 / (n * ops),
            Metric::Rate { amount, divisor } => n * amount / s / divisor,
        }
    }
}

/// Samples of one test and how the loop ended.
pub struct Sampled {
    /// Sample values in the metric's unit.
    pub samples: Vec<f64>,
    /// Why sampling stopped.
    pub stop: Stop,
    /// Iterations per sample.
    pub iterations: u64,
}

/// Calibrate, warm up and sample `bench`.
pub fn sample(
    bench: &mut dyn Bench,
    metric: Metric,
    policy: &Policy,
    sample_time: Duration,
) -> Result<Sampled, BenchError> {
    let iterations = calibrate(bench, sample_time)?;
    let start = Instant::now();
    let (samples, stop) = collect(
        policy,
        || start.elapsed(),
        || bench.run(iterations).map(|d| metric.value(iterations, d)),
    )?;
    Ok(Sampled {
        samples,
        stop,
        iterations,
    })
}

/// `--only` patterns: comma-separated globs with `*` and `?`.
pub fn matches_any(patterns: &str, name: &str) -> bool {
    patterns
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .any(|p| glob(p.as_bytes(), name.as_bytes()))
}

fn glob(p: &[u8], s: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => glob(&p[1..], s) || (!s.is_empty() && glob(p, &s[1..])),
        (Some(b'?'), Some(_)) => glob(&p[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => glob(&p[1..], &s[1..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_convert_units() {
        let one_s = Duration::from_secs(1);
        assert_eq!(Metric::Us { ops: 1.0 }.value(1_000_000, one_s), 1.0);
        assert_eq!(Metric::Ns { ops: 2.0 }.value(500_000_000, one_s), 1.0);
        let mb = Metric::Rate {
            amount: 1048576.0,
            divisor: 1048576.0,
        };
        assert_eq!(mb.value(300, Duration::from_millis(500)), 600.0);
    }

    #[test]
    fn calibration_reaches_the_target_on_a_fake_clock() {
        // Each iteration "takes" 1 µs.
        let mut fake = |iters: u64| Ok(Duration::from_micros(iters));
        let n = calibrate(&mut fake, Duration::from_millis(5)).unwrap();
        assert!((5_000..=20_000).contains(&n), "{n}");
    }

    #[test]
    fn calibration_stops_on_wall_time_when_the_body_reports_nothing() {
        // A body that reports zero (all of its time taken off) but takes
        // real time: calibration must end, on the wall clock.
        let mut zero = |iters: u64| {
            std::thread::sleep(Duration::from_micros(iters.min(10_000)));
            Ok(Duration::ZERO)
        };
        let n = calibrate(&mut zero, Duration::from_millis(1)).unwrap();
        assert!(n < 1 << 20, "{n}");
    }

    #[test]
    fn globs() {
        assert!(matches_any("lat_syscall-*", "lat_syscall-null"));
        assert!(matches_any(
            "bw_pipe, lat_mem_rd*",
            "lat_mem_rd-stride128-sz32k"
        ));
        assert!(matches_any("lat_?tx*", "lat_ctx-2-0k"));
        assert!(!matches_any("lat_syscall-*", "lat_sig-catch"));
        assert!(matches_any("*", "anything"));
    }
}
