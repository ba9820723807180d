//! Small statistics helpers shared by the analyses.

use serde::Serialize;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A fast hasher for small integer keys (pids, CPUs, interned ids).
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_i32(&mut self, n: i32) {
        self.write_u64(n as u32 as u64);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// HashMap keyed by small integers.
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// Distribution of durations, in ns.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Distribution {
    /// Number of samples.
    pub count: u64,
    /// Smallest.
    pub min_ns: u64,
    /// Mean.
    pub avg_ns: u64,
    /// Median (nearest rank).
    pub p50_ns: u64,
    /// 90th percentile (nearest rank).
    pub p90_ns: u64,
    /// 99th percentile (nearest rank).
    pub p99_ns: u64,
    /// Largest.
    pub max_ns: u64,
}

impl Distribution {
    /// From samples (sorted in place). Percentiles use the nearest-rank
    /// definition ([`lever_text::nearest_rank`]): the smallest sample with
    /// at least p % of samples ≤ it.
    pub fn from_samples(samples: &mut [u64]) -> Distribution {
        if samples.is_empty() {
            return Distribution::default();
        }
        samples.sort_unstable();
        let n = samples.len();
        let rank = |p: f64| lever_text::percentile_sorted(&*samples, p).unwrap_or(0);
        let sum: u128 = samples.iter().map(|&s| s as u128).sum();
        Distribution {
            count: n as u64,
            min_ns: samples[0],
            avg_ns: (sum / n as u128) as u64,
            p50_ns: rank(50.0),
            p90_ns: rank(90.0),
            p99_ns: rank(99.0),
            max_ns: samples[n - 1],
        }
    }
}

/// ns → "12.345 ms" style text for tables.
pub fn fmt_ns(ns: u64) -> String {
    if ns >= 1_000_000_000 {
        format!("{:.3} s", ns as f64 / 1e9)
    } else if ns >= 1_000_000 {
        format!("{:.3} ms", ns as f64 / 1e6)
    } else {
        format!("{:.3} us", ns as f64 / 1e3)
    }
}

/// Percentage `part / whole` (0 when whole is 0).
pub fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// The slot for CPU `cpu` in a per-CPU table, growing the table with
/// defaults when a higher CPU number shows up (traces name CPUs as they
/// come; the count is not known up front).
pub fn per_cpu<T: Default + Clone>(table: &mut Vec<T>, cpu: u32) -> &mut T {
    let i = cpu as usize;
    if i >= table.len() {
        table.resize(i + 1, T::default());
    }
    &mut table[i]
}
