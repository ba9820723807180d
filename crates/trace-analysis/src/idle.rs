//! Idle-state residency, idle vs active time per CPU, and C-state
//! enter/exit latencies (seed 004).
//!
//! Sources:
//!
//! * `cpu_idle: state=N cpu_id=C` enters state N; `state=4294967295`
//!   exits. An **idle period** runs from entry to exit, an **active
//!   period** from an exit to the next entry (seed 004's "Idle us /
//!   Active us" table averages both).
//! * The legacy events of seed 004's OMAP instrumentation:
//!   `power_start: type=1 state=S` (idle start, state S),
//!   `type=4 state=k` (suspend trace point k), `type=5 state=k` (resume
//!   trace point k) and `power_end` (idle end). From those, per idle
//!   period, the **sleep (enter) latency** is last suspend point − idle
//!   start, and the **wake-up (exit) latency** is idle end − first resume
//!   point. Plain `cpu_idle` events carry no such points, so enter/exit
//!   latencies are reported only when the trace has them.
//!
//! Every CPU the trace names is listed, also one without idle events
//! (`idle_events: 0`: its split is unknown, not "never idle"). For a CPU
//! with idle events, idle + active covers the whole span of the trace:
//! before its first idle event the CPU was active (first event an entry)
//! or idle (first event an exit), and after its last exit active. Those
//! edge pieces count in the totals, not in the per-period averages.

use crate::stats::Distribution;
use lever_trace::{Event, EventKind};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Default, Clone)]
struct Period {
    state: u32,
    start: u64,
    last_suspend: Option<u64>,
    first_resume: Option<u64>,
}

#[derive(Debug, Default, Clone)]
struct Cpu {
    idle: Option<Period>,
    last_exit: Option<u64>,
    idle_ns: Vec<u64>,
    active_ns: Vec<u64>,
    residency: BTreeMap<u32, (u64, u64)>,
    enter_lat: BTreeMap<u32, Vec<u64>>,
    exit_lat: BTreeMap<u32, Vec<u64>>,
    seen: bool,
    idle_events: u64,
    /// Idle before the first exit / active before the first entry and
    /// after the last exit (see the module doc).
    idle_edge_ns: u64,
    active_edge_ns: u64,
}

/// Idle tracker.
#[derive(Debug, Default)]
pub struct IdleTracker {
    cpus: Vec<Cpu>,
    start_ts: Option<u64>,
    end_ts: u64,
}

impl IdleTracker {
    /// A new tracker.
    pub fn new() -> Self {
        Self::default()
    }

    fn cpu(&mut self, cpu: u32) -> &mut Cpu {
        crate::stats::per_cpu(&mut self.cpus, cpu)
    }

    /// Feed one event.
    pub fn event(&mut self, e: &Event<'_>) {
        self.end_ts = self.end_ts.max(e.ts_ns);
        let t = e.ts_ns;
        let start = *self.start_ts.get_or_insert(t);
        self.cpu(e.cpu).seen = true;
        let idle_cpu = match e.kind {
            EventKind::CpuIdle { cpu, .. }
            | EventKind::PowerStart { kind: 1, cpu, .. }
            | EventKind::PowerEnd { cpu } => Some(cpu),
            _ => None,
        };
        if let Some(cpu) = idle_cpu {
            let c = self.cpu(cpu);
            c.seen = true;
            if c.idle_events == 0 {
                // The first idle event says what the CPU was before it.
                let entry = !matches!(
                    e.kind,
                    EventKind::CpuIdle { state: None, .. } | EventKind::PowerEnd { .. }
                );
                if entry {
                    c.active_edge_ns += t.saturating_sub(start);
                } else {
                    c.idle_edge_ns += t.saturating_sub(start);
                    c.last_exit = Some(t);
                }
            }
            c.idle_events += 1;
        }
        match e.kind {
            EventKind::CpuIdle {
                state: Some(state),
                cpu,
            }
            | EventKind::PowerStart {
                kind: 1,
                state,
                cpu,
            } => {
                let c = self.cpu(cpu);
                if let Some(exit) = c.last_exit.take() {
                    c.active_ns.push(t.saturating_sub(exit));
                }
                // A second entry without exit (state change): close the
                // first as if it exited now.
                if c.idle.is_some() {
                    Self::exit(c, t);
                    c.last_exit = None;
                }
                c.idle = Some(Period {
                    state,
                    start: t,
                    ..Period::default()
                });
            }
            EventKind::PowerStart { kind: 4, cpu, .. } => {
                if let Some(p) = self.cpu(cpu).idle.as_mut() {
                    p.last_suspend = Some(t);
                }
            }
            EventKind::PowerStart { kind: 5, cpu, .. } => {
                if let Some(p) = self.cpu(cpu).idle.as_mut() {
                    p.first_resume.get_or_insert(t);
                }
            }
            EventKind::CpuIdle { state: None, cpu } | EventKind::PowerEnd { cpu } => {
                let c = self.cpu(cpu);
                Self::exit(c, t);
            }
            _ => {}
        }
    }

    fn exit(c: &mut Cpu, t: u64) {
        let Some(p) = c.idle.take() else {
            // A second exit: active since the first.
            c.last_exit.get_or_insert(t);
            return;
        };
        let d = t.saturating_sub(p.start);
        c.idle_ns.push(d);
        let r = c.residency.entry(p.state).or_default();
        r.0 += 1;
        r.1 += d;
        if let Some(s) = p.last_suspend {
            c.enter_lat
                .entry(p.state)
                .or_default()
                .push(s.saturating_sub(p.start));
        }
        if let Some(r) = p.first_resume {
            c.exit_lat
                .entry(p.state)
                .or_default()
                .push(t.saturating_sub(r));
        }
        c.last_exit = Some(t);
    }

    /// Build the report (an idle period still open at the end counts up to
    /// the last event).
    pub fn finish(mut self) -> Vec<CpuIdleReport> {
        let end = self.end_ts;
        let mut out = Vec::new();
        for (i, c) in self.cpus.iter_mut().enumerate() {
            if c.idle.is_some() {
                Self::exit(c, end);
            } else if let Some(exit) = c.last_exit {
                c.active_edge_ns += end.saturating_sub(exit);
            }
            if !c.seen {
                continue;
            }
            let idle_total: u64 = c.idle_ns.iter().sum();
            let active_total: u64 = c.active_ns.iter().sum();
            let span = end.saturating_sub(self.start_ts.unwrap_or(end));
            let mut states: BTreeMap<u32, StateReport> = BTreeMap::new();
            for (&state, &(count, ns)) in &c.residency {
                states.insert(
                    state,
                    StateReport {
                        state,
                        entries: count,
                        residency_ns: ns,
                        enter_latency: None,
                        exit_latency: None,
                    },
                );
            }
            for (state, v) in c.enter_lat.iter_mut() {
                if let Some(s) = states.get_mut(state) {
                    s.enter_latency = Some(Distribution::from_samples(v));
                }
            }
            for (state, v) in c.exit_lat.iter_mut() {
                if let Some(s) = states.get_mut(state) {
                    s.exit_latency = Some(Distribution::from_samples(v));
                }
            }
            out.push(CpuIdleReport {
                cpu: i as u32,
                idle_events: c.idle_events,
                span_ns: span,
                idle_periods: c.idle_ns.len() as u64,
                idle_ns: idle_total + c.idle_edge_ns,
                active_ns: active_total + c.active_edge_ns,
                avg_idle_ns: idle_total / (c.idle_ns.len().max(1) as u64),
                avg_active_ns: active_total / (c.active_ns.len().max(1) as u64),
                states: states.into_values().collect(),
            });
        }
        out
    }
}

/// One idle state of one CPU.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StateReport {
    /// State index (`cpuidle/stateN`).
    pub state: u32,
    /// Entries.
    pub entries: u64,
    /// Time in it.
    pub residency_ns: u64,
    /// Sleep latency (idle start → last suspend point), seed 004 events.
    pub enter_latency: Option<Distribution>,
    /// Wake-up latency (first resume point → idle end), seed 004 events.
    pub exit_latency: Option<Distribution>,
}

/// One CPU's idle behaviour.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuIdleReport {
    /// CPU.
    pub cpu: u32,
    /// cpu_idle / power_start type=1 / power_end events for this CPU;
    /// 0 means its idle time is not known (the rest is then 0).
    pub idle_events: u64,
    /// The trace's span (first to last event); idle + active = span when
    /// `idle_events > 0`.
    pub span_ns: u64,
    /// Completed idle periods.
    pub idle_periods: u64,
    /// Total idle time, including before the CPU's first exit when that
    /// comes first.
    pub idle_ns: u64,
    /// Total active time: between an idle exit and the next entry, and
    /// before the first entry / after the last exit.
    pub active_ns: u64,
    /// Mean idle period (seed 004 "Idle us").
    pub avg_idle_ns: u64,
    /// Mean active period (seed 004 "Active us").
    pub avg_active_ns: u64,
    /// Per idle state.
    pub states: Vec<StateReport>,
}
