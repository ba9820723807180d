//! Per-thread statistics: min/avg/max, a 1 µs histogram with overflows,
//! percentiles read from it, spikes and missed periods.
//!
//! Latencies are whole microseconds, truncated, exactly as cyclictest
//! computes them (`calcdiff`), so that the two tools' figures compare and a
//! cyclictest histogram imports into the same type. A sample lands in
//! bucket `latency_us` when it is below the histogram size, else it is an
//! overflow whose cycle number is kept (up to the histogram size, as
//! cyclictest does).

use serde::{Deserialize, Serialize};

/// A latency histogram in 1 µs buckets: `buckets[i]` counts samples of
/// exactly `i` µs; samples of `buckets.len()` µs or more are overflows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Histogram {
    /// Counts per microsecond.
    pub buckets: Vec<u64>,
    /// Samples at or above the histogram size.
    pub overflows: u64,
}

/// A percentile read from a histogram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Percentile {
    /// The sample at this rank was this many µs.
    Us(u64),
    /// The sample at this rank overflowed the histogram: at least this many µs.
    AtLeastUs(u64),
}

/// The percentiles every report carries.
pub const PERCENTILES: [(f64, &str); 5] = [
    (50.0, "p50"),
    (90.0, "p90"),
    (99.0, "p99"),
    (99.9, "p99.9"),
    (99.99, "p99.99"),
];

impl Histogram {
    /// An empty histogram of `size_us` buckets.
    pub fn new(size_us: usize) -> Histogram {
        Histogram {
            buckets: vec![0; size_us],
            overflows: 0,
        }
    }

    /// Count one sample; false when it overflowed.
    pub fn add(&mut self, latency_us: u64) -> bool {
        match self.buckets.get_mut(latency_us as usize) {
            Some(b) => {
                *b += 1;
                true
            }
            None => {
                self.overflows += 1;
                false
            }
        }
    }

    /// Samples inside the buckets (cyclictest's `# Total:`).
    pub fn in_range(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// All samples, overflows included.
    pub fn total(&self) -> u64 {
        self.in_range() + self.overflows
    }

    /// The `pct` percentile (nearest rank over every sample, overflows
    /// included); `None` without samples.
    pub fn percentile(&self, pct: f64) -> Option<Percentile> {
        let rank = lever_text::nearest_rank(self.total(), pct)?;
        let mut seen = 0;
        for (us, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(Percentile::Us(us as u64));
            }
        }
        Some(Percentile::AtLeastUs(self.buckets.len() as u64))
    }

    /// The smallest and largest bucket holding a sample.
    pub fn range_us(&self) -> Option<(u64, u64)> {
        let lo = self.buckets.iter().position(|&n| n > 0)?;
        let hi = self.buckets.iter().rposition(|&n| n > 0)?;
        Some((lo as u64, hi as u64))
    }
}

/// One recorded spike (`--spike`): cyclictest's `T: 0 Spike: 120: TS: …`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Spike {
    /// Thread number.
    pub thread: usize,
    /// Its latency, µs.
    pub latency_us: u64,
    /// When it woke, µs on CLOCK_MONOTONIC.
    pub timestamp_us: u64,
}

/// Everything one measuring thread counted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadStats {
    /// Samples taken (cyclictest's `C:`).
    pub cycles: u64,
    /// Smallest latency, µs (`None` before the first sample).
    pub min_us: Option<u64>,
    /// Largest latency, µs.
    pub max_us: Option<u64>,
    /// Sum of all latencies, µs (for the average).
    pub sum_us: u64,
    /// The last latency (cyclictest's `Act:`).
    pub act_us: u64,
    /// Periods that passed without a wake-up: a sample later than one
    /// interval skips the periods it overran, which cyclictest does silently.
    pub missed_periods: u64,
    /// The histogram (1 µs buckets).
    pub histogram: Histogram,
    /// Cycle numbers of the first overflows (up to the histogram size).
    pub overflow_cycles: Vec<u64>,
}

impl ThreadStats {
    /// Empty statistics with a histogram of `hist_size_us` buckets.
    pub fn new(hist_size_us: usize) -> ThreadStats {
        ThreadStats {
            cycles: 0,
            min_us: None,
            max_us: None,
            sum_us: 0,
            act_us: 0,
            missed_periods: 0,
            histogram: Histogram::new(hist_size_us),
            overflow_cycles: Vec::new(),
        }
    }

    /// Count one sample of `latency_us`.
    pub fn record(&mut self, latency_us: u64) {
        self.min_us = Some(self.min_us.map_or(latency_us, |m| m.min(latency_us)));
        self.max_us = Some(self.max_us.map_or(latency_us, |m| m.max(latency_us)));
        self.sum_us += latency_us;
        self.act_us = latency_us;
        if !self.histogram.add(latency_us)
            && self.overflow_cycles.len() < self.histogram.buckets.len()
        {
            self.overflow_cycles.push(self.cycles);
        }
        self.cycles += 1;
    }

    /// The mean latency, µs.
    pub fn avg_us(&self) -> Option<f64> {
        (self.cycles > 0).then(|| self.sum_us as f64 / self.cycles as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflows_and_percentiles_like_cyclictest() {
        let mut s = ThreadStats::new(10);
        for us in [3, 4, 4, 5, 9, 10, 250] {
            s.record(us);
        }
        assert_eq!((s.min_us, s.max_us, s.cycles), (Some(3), Some(250), 7));
        // 10 µs is already an overflow of a 10-bucket histogram (`diff >= histogram`).
        assert_eq!(s.histogram.overflows, 2);
        assert_eq!(s.histogram.in_range(), 5);
        assert_eq!(s.overflow_cycles, [5, 6]);
        assert_eq!(s.histogram.percentile(50.0), Some(Percentile::Us(5)));
        assert_eq!(
            s.histogram.percentile(99.0),
            Some(Percentile::AtLeastUs(10))
        );
        assert_eq!(s.avg_us().unwrap(), 285.0 / 7.0);
        assert_eq!(s.histogram.range_us(), Some((3, 9)));
    }

    #[test]
    fn empty_has_no_percentile() {
        assert_eq!(Histogram::new(5).percentile(50.0), None);
        assert_eq!(ThreadStats::new(5).avg_us(), None);
    }
}
