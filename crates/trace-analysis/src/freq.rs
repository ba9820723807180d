//! CPU frequency residency per CPU from `cpu_frequency: state=KHZ cpu_id=N`.
//!
//! The frequency before a CPU's first `cpu_frequency` event is unknown and
//! not counted; the last frequency lasts to the end of the trace.

use crate::stats::pct;
use lever_trace::{Event, EventKind};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Default, Clone)]
struct Cpu {
    cur: Option<(u64, u64)>,
    residency: BTreeMap<u64, u64>,
    transitions: u64,
}

/// Frequency tracker.
#[derive(Debug, Default)]
pub struct FreqTracker {
    cpus: Vec<Cpu>,
    end_ts: u64,
}

impl FreqTracker {
    /// A new tracker.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed one event.
    pub fn event(&mut self, e: &Event<'_>) {
        self.end_ts = self.end_ts.max(e.ts_ns);
        if let EventKind::CpuFrequency { state_khz, cpu } = e.kind {
            let c = crate::stats::per_cpu(&mut self.cpus, cpu);
            if let Some((khz, since)) = c.cur {
                *c.residency.entry(khz).or_default() += e.ts_ns.saturating_sub(since);
                if khz != state_khz {
                    c.transitions += 1;
                }
            }
            c.cur = Some((state_khz, e.ts_ns));
        }
    }

    /// Build the report.
    pub fn finish(self) -> Vec<CpuFreqReport> {
        let end = self.end_ts;
        self.cpus
            .into_iter()
            .enumerate()
            .filter_map(|(i, mut c)| {
                let (khz, since) = c.cur?;
                *c.residency.entry(khz).or_default() += end.saturating_sub(since);
                let total: u64 = c.residency.values().sum();
                let avg = if total > 0 {
                    (c.residency
                        .iter()
                        .map(|(k, t)| *k as u128 * *t as u128)
                        .sum::<u128>()
                        / total as u128) as u64
                } else {
                    khz
                };
                Some(CpuFreqReport {
                    cpu: i as u32,
                    known_ns: total,
                    transitions: c.transitions,
                    avg_khz: avg,
                    residency: c
                        .residency
                        .into_iter()
                        .map(|(khz, ns)| FreqResidency {
                            khz,
                            ns,
                            pct: pct(ns, total),
                        })
                        .collect(),
                })
            })
            .collect()
    }
}

/// Time at one frequency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FreqResidency {
    /// Frequency.
    pub khz: u64,
    /// Time at it.
    pub ns: u64,
    /// Share of the time the frequency was known.
    pub pct: f64,
}

/// One CPU's frequency residency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuFreqReport {
    /// CPU.
    pub cpu: u32,
    /// Time with a known frequency (from its first event to the end).
    pub known_ns: u64,
    /// Frequency changes.
    pub transitions: u64,
    /// Time-weighted average frequency.
    pub avg_khz: u64,
    /// Per frequency, ascending.
    pub residency: Vec<FreqResidency>,
}
