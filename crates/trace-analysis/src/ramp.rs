//! Frequency ramp after a load step: for each time a CPU goes from idle
//! to busy (a sched_switch from the idle task after at least
//! [`MIN_IDLE_NS`] idle), how long until its `cpu_frequency` reaches the
//! highest frequency the trace shows for that CPU (the policy's highest
//! step reached). Steps at that frequency already ramp in 0; steps where
//! it is not reached before the CPU idles again count as not reached.
//! Without `cpu_frequency` events the report says so (`freq_events: 0`).

use crate::stats::Distribution;
use lever_trace::{Event, EventKind};
use serde::Serialize;

/// Shorter idle gaps are not a load step.
pub const MIN_IDLE_NS: u64 = 1_000_000;

#[derive(Debug, Default, Clone)]
struct Cpu {
    /// (time, kHz) of each change.
    freq: Vec<(u64, u64)>,
    /// (step start, its end: the next switch to idle or the trace end).
    steps: Vec<(u64, Option<u64>)>,
    idle_since: Option<u64>,
    seen_switch: bool,
}

/// Ramp tracker.
#[derive(Debug, Default)]
pub struct RampTracker {
    cpus: Vec<Cpu>,
    freq_events: u64,
    end_ts: u64,
}

impl RampTracker {
    /// A new tracker.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed one event.
    pub fn event(&mut self, e: &Event<'_>) {
        let t = e.ts_ns;
        self.end_ts = self.end_ts.max(t);
        match &e.kind {
            EventKind::CpuFrequency { state_khz, cpu } => {
                self.freq_events += 1;
                crate::stats::per_cpu(&mut self.cpus, *cpu)
                    .freq
                    .push((t, *state_khz));
            }
            EventKind::SchedSwitch(sw) => {
                let c = crate::stats::per_cpu(&mut self.cpus, e.cpu);
                if sw.next_pid == 0 {
                    c.idle_since = Some(t);
                    if let Some(last) = c.steps.last_mut() {
                        last.1.get_or_insert(t);
                    }
                } else if sw.prev_pid == 0 {
                    if let Some(since) = c.idle_since.take() {
                        if t.saturating_sub(since) >= MIN_IDLE_NS {
                            c.steps.push((t, None));
                        }
                    }
                }
                c.seen_switch = true;
            }
            _ => {}
        }
    }

    /// Per CPU with cpu_frequency events.
    pub fn finish(self) -> RampReport {
        let mut cpus = Vec::new();
        for (i, c) in self.cpus.iter().enumerate() {
            let Some(max_khz) = c.freq.iter().map(|f| f.1).max() else {
                continue;
            };
            let mut ramps = Vec::new();
            let mut not_reached = 0;
            for &(t0, end) in &c.steps {
                let end = end.unwrap_or(self.end_ts);
                // Frequency at the step: the last change at or before it.
                let at = c.freq.iter().rev().find(|f| f.0 <= t0).map(|f| f.1);
                if at == Some(max_khz) {
                    ramps.push(0);
                    continue;
                }
                match c
                    .freq
                    .iter()
                    .find(|f| f.0 > t0 && f.0 <= end && f.1 == max_khz)
                {
                    Some(f) => ramps.push(f.0 - t0),
                    None => not_reached += 1,
                }
            }
            cpus.push(CpuRamp {
                cpu: i as u32,
                max_khz,
                steps: c.steps.len() as u64,
                not_reached,
                ramp: Distribution::from_samples(&mut ramps),
            });
        }
        RampReport {
            freq_events: self.freq_events,
            cpus,
        }
    }
}

/// One CPU's ramps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuRamp {
    /// CPU.
    pub cpu: u32,
    /// Highest frequency seen on it.
    pub max_khz: u64,
    /// Idle → busy steps.
    pub steps: u64,
    /// Steps that idled again before reaching `max_khz`.
    pub not_reached: u64,
    /// Step → `max_khz`, for the steps that reached it.
    pub ramp: Distribution,
}

/// Frequency ramp report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RampReport {
    /// cpu_frequency events (0: nothing to say).
    pub freq_events: u64,
    /// CPUs with cpu_frequency events.
    pub cpus: Vec<CpuRamp>,
}
