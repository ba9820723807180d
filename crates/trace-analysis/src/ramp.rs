//! Frequency ramp after a load step: for each time a CPU goes from idle
//! to busy (a sched_switch from the idle task after at least
//! [`MIN_IDLE_NS`] idle), how long until its `cpu_frequency` reaches the
//! highest frequency the trace shows for that CPU (the policy's highest
//! step reached). Steps at that frequency already ramp in 0; steps where
//! it is not reached before the CPU idles again count as not reached.
//! Without `cpu_frequency` events the report says so (`freq_events: 0`).
//!
//! Each step keeps the task that started it and its climb (every new
//! highest frequency during the step, with the time since the step), so
//! two runs can be compared against one common target ([`mod@compare`]): the
//! same task with and without a uclamp floor. The floor comes from a
//! marker (`lever trace mark 'uclamp min=512 comm=hackbench'`, parsed by
//! [`UclampMark::parse`]) and applies to the steps after it.
//!
//! ```text
//!  lever-2211 [000] ..... 18737.1: tracing_mark_write: uclamp min=512 comm=hackbench
//!  <idle>-0   [000] d..2. 18737.2: cpu_frequency: state=1800000 cpu_id=0
//! ```

pub mod compare;

use crate::stats::{Distribution, IdMap};
use lever_trace::{Event, EventKind, Marker};
use serde::Serialize;
use std::collections::HashMap;

pub use compare::{compare, RampComparison, RampRun};

/// Shorter idle gaps are not a load step.
pub const MIN_IDLE_NS: u64 = 1_000_000;

/// A uclamp floor announced by a marker: `uclamp min=512 [max=1024]
/// [pid=1234 | comm=hackbench]`; with neither pid nor comm it applies to
/// every task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UclampMark {
    /// `sched_util_min` (0–1024).
    pub min: u32,
    /// `sched_util_max`, when given.
    pub max: Option<u32>,
    /// Only this thread.
    pub pid: Option<i32>,
    /// Only threads of this name.
    pub comm: Option<String>,
}

impl UclampMark {
    /// Parse a marker's text; `None` when it is not a uclamp mark.
    pub fn parse(text: &str) -> Option<UclampMark> {
        let rest = text.trim().strip_prefix("uclamp ")?;
        let mut m = UclampMark {
            min: u32::MAX,
            max: None,
            pid: None,
            comm: None,
        };
        for kv in rest.split_whitespace() {
            let (k, v) = kv.split_once('=')?;
            match k {
                "min" => m.min = v.parse().ok().filter(|&n| n <= 1024)?,
                "max" => m.max = Some(v.parse().ok().filter(|&n| n <= 1024)?),
                "pid" => m.pid = Some(v.parse().ok()?),
                "comm" => m.comm = Some(v.to_string()),
                _ => return None,
            }
        }
        (m.min != u32::MAX).then_some(m)
    }
}

/// A step as recorded: start, end (the next switch to idle, filled in
/// later), the task that started it (tid, comm) and its uclamp floor.
type RawStep = (u64, Option<u64>, i32, String, Option<u32>);

#[derive(Debug, Default, Clone)]
struct Cpu {
    /// (time, kHz) of each change.
    freq: Vec<(u64, u64)>,
    /// Steps, their end (the next switch to idle) filled in later.
    steps: Vec<RawStep>,
    idle_since: Option<u64>,
}

/// Ramp tracker.
#[derive(Debug, Default)]
pub struct RampTracker {
    cpus: Vec<Cpu>,
    freq_events: u64,
    end_ts: u64,
    /// uclamp floors from markers: every task, per pid, per comm.
    floor_all: Option<u32>,
    floor_pid: IdMap<i32, u32>,
    floor_comm: HashMap<String, u32>,
}

impl RampTracker {
    /// A new tracker.
    pub fn new() -> Self {
        Self::default()
    }

    fn floor(&self, pid: i32, comm: &str) -> Option<u32> {
        self.floor_pid
            .get(&pid)
            .or_else(|| self.floor_comm.get(comm))
            .copied()
            .or(self.floor_all)
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
                let floor = self.floor(sw.next_pid, sw.next_comm);
                let c = crate::stats::per_cpu(&mut self.cpus, e.cpu);
                if sw.next_pid == 0 {
                    c.idle_since = Some(t);
                    if let Some(last) = c.steps.last_mut() {
                        last.1.get_or_insert(t);
                    }
                } else if sw.prev_pid == 0 {
                    if let Some(since) = c.idle_since.take() {
                        if t.saturating_sub(since) >= MIN_IDLE_NS {
                            let comm = sw.next_comm.to_string();
                            c.steps.push((t, None, sw.next_pid, comm, floor));
                        }
                    }
                }
            }
            EventKind::Marker(Marker::Text(text)) => {
                if let Some(m) = UclampMark::parse(text) {
                    match (m.pid, m.comm) {
                        (Some(pid), _) => {
                            self.floor_pid.insert(pid, m.min);
                        }
                        (None, Some(comm)) => {
                            self.floor_comm.insert(comm, m.min);
                        }
                        (None, None) => self.floor_all = Some(m.min),
                    }
                }
            }
            _ => {}
        }
    }

    /// Per CPU with cpu_frequency events.
    pub fn finish(self) -> RampReport {
        let mut cpus = Vec::new();
        let mut steps = Vec::new();
        for (i, c) in self.cpus.iter().enumerate() {
            let Some(max_khz) = c.freq.iter().map(|f| f.1).max() else {
                continue;
            };
            let first = steps.len();
            for (t0, end, tid, comm, floor) in &c.steps {
                let (t0, end) = (*t0, end.unwrap_or(self.end_ts));
                // Frequency at the step: the last change at or before it.
                let start_khz = c.freq.iter().rev().find(|f| f.0 <= t0).map(|f| f.1);
                let mut climb: Vec<(u64, u64)> = start_khz.map(|k| (0, k)).into_iter().collect();
                for &(ft, khz) in c.freq.iter().filter(|f| f.0 > t0 && f.0 <= end) {
                    if climb.last().is_none_or(|l| khz > l.1) {
                        climb.push((ft - t0, khz));
                    }
                }
                steps.push(RampStep {
                    cpu: i as u32,
                    start_ns: t0,
                    busy_ns: end - t0,
                    tid: *tid,
                    comm: comm.clone(),
                    uclamp_min: *floor,
                    start_khz,
                    climb,
                    ramp_ns: None,
                });
            }
            for s in &mut steps[first..] {
                s.ramp_ns = s.time_to(max_khz);
            }
            let mut ramps: Vec<u64> = steps[first..].iter().filter_map(|s| s.ramp_ns).collect();
            cpus.push(CpuRamp {
                cpu: i as u32,
                max_khz,
                steps: c.steps.len() as u64,
                not_reached: (c.steps.len() - ramps.len()) as u64,
                ramp: Distribution::from_samples(&mut ramps),
            });
        }
        steps.sort_by_key(|s| (s.start_ns, s.cpu));
        let mut report = RampReport {
            freq_events: self.freq_events,
            cpus,
            steps,
            comparison: None,
        };
        // Runs labelled by uclamp marks within this capture: compare them.
        report.comparison = compare::by_floor(&report, None);
        report
    }
}

/// One idle → busy step of a CPU.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RampStep {
    /// The CPU.
    pub cpu: u32,
    /// When the idle task switched out (trace clock, ns).
    pub start_ns: u64,
    /// Until the CPU idled again (or the trace ended).
    pub busy_ns: u64,
    /// The task that started the step.
    pub tid: i32,
    /// Its name.
    pub comm: String,
    /// Its uclamp floor from a marker, if any.
    pub uclamp_min: Option<u32>,
    /// Frequency when the step began (unknown before the CPU's first
    /// cpu_frequency event).
    pub start_khz: Option<u64>,
    /// (ns after the start, kHz): each new highest frequency of the step.
    pub climb: Vec<(u64, u64)>,
    /// Time to the CPU's highest frequency seen; `None`: not reached.
    pub ramp_ns: Option<u64>,
}

impl RampStep {
    /// Time from the start until the frequency was at least `khz`.
    pub fn time_to(&self, khz: u64) -> Option<u64> {
        self.climb.iter().find(|c| c.1 >= khz).map(|c| c.0)
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
    /// Every step on those CPUs, in time order.
    pub steps: Vec<RampStep>,
    /// Runs compared: with and without a uclamp floor (marks in this
    /// capture, or a baseline capture, see [`mod@compare`]).
    pub comparison: Option<RampComparison>,
}
