//! Client threads in a closed or paced loop, and the latency figures of
//! what they measured.

use serde::Serialize;
use std::time::{Duration, Instant};

/// Run `n` client threads, each doing `per_client` steps; a step returns its
/// measured latency. `connect(i)` makes client `i`'s step function. Returns
/// every latency in µs, sorted, and the wall time in s from the moment every
/// client was connected.
pub fn measure<F, S, E>(
    n: usize,
    per_client: usize,
    interval: Duration,
    connect: F,
) -> Result<(Vec<f64>, f64), E>
where
    F: Fn(usize) -> Result<S, E> + Sync,
    S: FnMut() -> Result<Duration, E>,
    E: Send + From<std::io::Error>,
{
    let ready = std::sync::Barrier::new(n + 1);
    let mut start = Instant::now();
    let per_thread = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..n)
            .map(|i| {
                let connect = &connect;
                let ready = &ready;
                scope.spawn(move || -> Result<Vec<f64>, E> {
                    let step = connect(i);
                    ready.wait();
                    let mut step = step?;
                    let mut lat = Vec::with_capacity(per_client);
                    // Paced clients are spread evenly over the interval, so
                    // requests arrive one every interval/n, not in bursts
                    // of n.
                    let begin = Instant::now() + interval * i as u32 / n as u32;
                    for k in 0..per_client {
                        if !interval.is_zero() {
                            let due = begin + interval * k as u32;
                            let now = Instant::now();
                            if due > now {
                                std::thread::sleep(due - now);
                            }
                        }
                        lat.push(step()?.as_secs_f64() * 1e6);
                    }
                    Ok(lat)
                })
            })
            .collect();
        // Every client is connected: the clock starts now.
        ready.wait();
        start = Instant::now();
        threads
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("client thread panicked").into()))
            })
            .collect::<Result<Vec<Vec<f64>>, E>>()
    })?;
    let secs = start.elapsed().as_secs_f64();
    let mut all: Vec<f64> = per_thread.into_iter().flatten().collect();
    all.sort_by(|a, b| a.total_cmp(b));
    Ok((all, secs))
}

/// The `pct` percentile of the sorted samples by nearest rank
/// ([`lever_text::nearest_rank`], as every Lever percentile); 0 for no
/// samples.
pub fn percentile(sorted: &[f64], pct: f64) -> f64 {
    lever_text::percentile_sorted(sorted, pct).unwrap_or(0.0)
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// `acquire` (client call -> node written -> reply), `ping` or `floor`.
    pub what: &'static str,
    /// Client threads.
    pub clients: usize,
    /// Pacing of each client, µs (0 = closed loop).
    pub interval_us: u64,
    /// Steps measured.
    pub operations: usize,
    /// Median latency, µs.
    pub p50_us: f64,
    /// 90th percentile, µs.
    pub p90_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Slowest, µs.
    pub max_us: f64,
    /// Acquire + release pairs (or round trips, for ping and floor) per s.
    pub acquire_release_per_s: f64,
}

impl Row {
    /// The figures of sorted latencies `lat` (µs) measured over `secs`.
    pub fn new(
        what: &'static str,
        clients: usize,
        interval_us: u64,
        lat: &[f64],
        secs: f64,
    ) -> Row {
        Row {
            what,
            clients,
            interval_us,
            operations: lat.len(),
            p50_us: percentile(lat, 50.0),
            p90_us: percentile(lat, 90.0),
            p99_us: percentile(lat, 99.0),
            max_us: lat.last().copied().unwrap_or(0.0),
            acquire_release_per_s: lat.len() as f64 / secs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let lat: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&lat, 50.0), 50.0);
        assert_eq!(percentile(&lat, 99.0), 99.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
        let row = Row::new("floor", 2, 0, &lat, 2.0);
        assert_eq!(
            (row.operations, row.max_us, row.acquire_release_per_s),
            (100, 100.0, 50.0)
        );
    }

    #[test]
    fn every_client_runs_every_step() {
        let (lat, secs) = measure::<_, _, std::io::Error>(3, 4, Duration::ZERO, |i| {
            Ok(move || Ok(Duration::from_micros(10 * (i as u64 + 1))))
        })
        .unwrap();
        assert_eq!(lat.len(), 12);
        assert_eq!((lat[0], lat[11]), (10.0, 30.0));
        assert!(secs >= 0.0);
    }
}
