//! The one report every source ends in: a measurement, or an imported
//! cyclictest / stress-ng / rtla output. Units are in the field names.

use crate::stats::{Histogram, Percentile, Spike, ThreadStats, PERCENTILES};
use serde::Serialize;

/// Where the figures come from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Source {
    /// Measured by Lever here.
    Measured,
    /// Read from a file.
    Imported {
        /// `cyclictest`, `cyclictest-json`, `stress-ng-cyclic` or `rtla-timerlat-hist`.
        format: String,
        /// The file.
        path: String,
    },
}

/// Why the measurement ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "reason")]
pub enum Ended {
    /// Every thread did its `-l` loops.
    Loops,
    /// `-D` elapsed.
    Duration,
    /// Ctrl-C (or SIGTERM).
    Interrupted,
    /// `-b`: a sample went over the threshold.
    Breach {
        /// Thread number.
        thread: usize,
        /// Its CPU.
        cpu: Option<u32>,
        /// The latency, µs.
        latency_us: u64,
        /// The threshold, µs.
        threshold_us: u64,
        /// When it woke, µs on CLOCK_MONOTONIC.
        timestamp_us: u64,
    },
    /// Not known (imports).
    Unknown,
}

/// The percentiles of one thread, from its histogram.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Percentiles {
    /// Median.
    pub p50: Option<Percentile>,
    /// 90th.
    pub p90: Option<Percentile>,
    /// 99th.
    pub p99: Option<Percentile>,
    /// 99.9th.
    #[serde(rename = "p99.9")]
    pub p99_9: Option<Percentile>,
    /// 99.99th.
    #[serde(rename = "p99.99")]
    pub p99_99: Option<Percentile>,
}

impl Percentiles {
    /// Read from a histogram.
    pub fn of(h: &Histogram) -> Percentiles {
        let p = |i: usize| h.percentile(PERCENTILES[i].0);
        Percentiles {
            p50: p(0),
            p90: p(1),
            p99: p(2),
            p99_9: p(3),
            p99_99: p(4),
        }
    }

    /// In [`PERCENTILES`] order.
    pub fn list(&self) -> [Option<Percentile>; 5] {
        [self.p50, self.p90, self.p99, self.p99_9, self.p99_99]
    }
}

/// One measuring thread's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadReport {
    /// Thread number (cyclictest's `T:`).
    pub index: usize,
    /// Its thread id.
    pub tid: Option<u32>,
    /// The CPU it ran on.
    pub cpu: Option<u32>,
    /// Its scheduling priority.
    pub priority: Option<u32>,
    /// Its period, µs.
    pub interval_us: Option<u64>,
    /// Samples.
    pub cycles: u64,
    /// Smallest latency, µs.
    pub min_us: Option<u64>,
    /// Mean latency, µs.
    pub avg_us: Option<f64>,
    /// Largest latency, µs.
    pub max_us: Option<u64>,
    /// The last sample, µs.
    pub act_us: Option<u64>,
    /// From the histogram (`None` when the source has none).
    pub percentiles: Option<Percentiles>,
    /// Periods skipped by late wake-ups (only Lever counts these).
    pub missed_periods: Option<u64>,
    /// Samples beyond the histogram.
    pub overflows: u64,
    /// Cycle numbers of the first overflows.
    pub overflow_cycles: Vec<u64>,
    /// The histogram, 1 µs buckets.
    pub histogram: Option<Histogram>,
    /// CPU time the measuring thread used, ms.
    pub cpu_time_ms: Option<f64>,
}

impl ThreadReport {
    /// Thread `index` with nothing known yet (imports fill what they find).
    pub fn empty(index: usize) -> ThreadReport {
        ThreadReport {
            index,
            tid: None,
            cpu: None,
            priority: None,
            interval_us: None,
            cycles: 0,
            min_us: None,
            avg_us: None,
            max_us: None,
            act_us: None,
            percentiles: None,
            missed_periods: None,
            overflows: 0,
            overflow_cycles: Vec::new(),
            histogram: None,
            cpu_time_ms: None,
        }
    }

    /// From a measuring thread's statistics.
    pub fn from_stats(index: usize, stats: &ThreadStats) -> ThreadReport {
        ThreadReport {
            cycles: stats.cycles,
            min_us: stats.min_us,
            avg_us: stats.avg_us(),
            max_us: stats.max_us,
            act_us: (stats.cycles > 0).then_some(stats.act_us),
            percentiles: Some(Percentiles::of(&stats.histogram)),
            missed_periods: Some(stats.missed_periods),
            overflows: stats.histogram.overflows,
            overflow_cycles: stats.overflow_cycles.clone(),
            histogram: Some(stats.histogram.clone()),
            ..ThreadReport::empty(index)
        }
    }
}

/// What `lever latency` (or an import) found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyReport {
    /// Measured or imported.
    pub source: Source,
    /// The policy the threads ran with (`fifo`, `other`, ...).
    pub policy: Option<String>,
    /// Per thread.
    pub threads: Vec<ThreadReport>,
    /// The histogram size asked for (`-h`), µs; the report's histograms
    /// are this long.
    pub histogram_us: Option<u32>,
    /// `--spike` threshold, µs.
    pub spike_threshold_us: Option<u64>,
    /// The first spikes (up to 1024), in order.
    pub spikes: Vec<Spike>,
    /// Every spike counted.
    pub spike_count: u64,
    /// Why it ended.
    pub ended: Ended,
    /// Wall time of the measurement, s.
    pub elapsed_s: Option<f64>,
    /// What was held or changed while measuring, and warnings.
    pub notes: Vec<String>,
    /// The background loads that ran (`--load`), described.
    pub loads: Vec<String>,
    /// The trace kept for `lever trace` (`-b`, `--analyze`).
    pub trace_file: Option<String>,
    /// Why the breach (or each analysed spike) was late.
    pub analyses: Vec<crate::breach::Analysis>,
}

impl LatencyReport {
    /// The largest latency over all threads.
    pub fn max_us(&self) -> Option<u64> {
        self.threads.iter().filter_map(|t| t.max_us).max()
    }
}
