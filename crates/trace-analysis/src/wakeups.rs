//! Who wakes whom: waker → wakee edges with counts and wake-up latency
//! (seed 000 §7.2 "who woke whom").
//!
//! The waker is the task in the wake-up event's TASK-PID column — the
//! task running on the CPU that called `try_to_wake_up` — unless the
//! irq-flags column says the event fired in interrupt context (`h`/`H`:
//! hard irq, `s`: softirq), when the waker is the interrupt, not the task
//! it interrupted:
//!
//! ```text
//!   perf-1200 [001] d..2.  10.000100: sched_waking: comm=perf pid=1201 prio=120 target_cpu=000
//!  <idle>-0   [000] d.h3.  10.000200: sched_waking: comm=kworker/0:1 pid=88 prio=120 target_cpu=000
//! ```
//!
//! The first wake-up event of an episode counts (`sched_waking`, then
//! `sched_wakeup` of the same task is the same wake-up); the latency is
//! from it to the wakee's next switch-in. A wake-up of a task that is on
//! a CPU counts as an edge without a latency.

use crate::stats::{Distribution, IdMap};
use lever_trace::{Event, EventKind};
use serde::Serialize;
use std::collections::HashMap;

/// What woke a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Waker {
    /// A task (thread id).
    Task(i32),
    /// A hard interrupt handler.
    HardIrq,
    /// A softirq.
    Softirq,
}

impl Waker {
    /// The waker of a wake-up event `e`, from its TASK-PID and flags.
    pub fn of(e: &Event<'_>) -> Waker {
        match e.flags.and_then(|f| f.as_bytes().get(2)) {
            Some(b'h' | b'H') => Waker::HardIrq,
            Some(b's') => Waker::Softirq,
            _ => Waker::Task(e.pid),
        }
    }
}

#[derive(Debug, Default)]
struct Edge {
    count: u64,
    latencies_ns: Vec<u64>,
}

/// Wake-up edge tracker.
#[derive(Debug, Default)]
pub struct WakeupTracker {
    edges: HashMap<(Waker, i32), Edge>,
    /// Wakee → (waker, time of the first wake-up event).
    pending: IdMap<i32, (Waker, u64)>,
    /// Task on each CPU.
    current: Vec<i32>,
    comms: IdMap<i32, String>,
}

impl WakeupTracker {
    /// A new tracker.
    pub fn new() -> Self {
        Self::default()
    }

    fn name(&mut self, tid: i32, comm: &str) {
        if tid != 0 && self.comms.get(&tid).is_none_or(|c| c != comm) {
            self.comms.insert(tid, comm.to_string());
        }
    }

    /// Feed one event.
    pub fn event(&mut self, e: &Event<'_>) {
        let t = e.ts_ns;
        match &e.kind {
            EventKind::SchedWakeup(w) if w.pid != 0 => {
                if self.pending.contains_key(&w.pid) {
                    return;
                }
                let waker = Waker::of(e);
                if let Waker::Task(tid) = waker {
                    self.name(tid, e.comm);
                }
                self.name(w.pid, w.comm);
                self.edges.entry((waker, w.pid)).or_default().count += 1;
                if !self.current.contains(&w.pid) {
                    self.pending.insert(w.pid, (waker, t));
                }
            }
            EventKind::SchedSwitch(sw) => {
                let cpu = e.cpu as usize;
                if cpu >= self.current.len() {
                    self.current.resize(cpu + 1, 0);
                }
                self.current[cpu] = sw.next_pid;
                self.pending.remove(&sw.prev_pid);
                self.name(sw.next_pid, sw.next_comm);
                if let Some((waker, t0)) = self.pending.remove(&sw.next_pid) {
                    if let Some(edge) = self.edges.get_mut(&(waker, sw.next_pid)) {
                        edge.latencies_ns.push(t.saturating_sub(t0));
                    }
                }
            }
            _ => {}
        }
    }

    /// Edges, most frequent first.
    pub fn finish(self) -> WakeupReport {
        let comm = |tid: i32| self.comms.get(&tid).cloned().unwrap_or_default();
        let mut edges: Vec<WakeEdge> = self
            .edges
            .into_iter()
            .map(|((waker, wakee), mut e)| WakeEdge {
                waker,
                waker_comm: match waker {
                    Waker::Task(tid) => comm(tid),
                    Waker::HardIrq => "[hardirq]".into(),
                    Waker::Softirq => "[softirq]".into(),
                },
                wakee_tid: wakee,
                wakee_comm: comm(wakee),
                count: e.count,
                latency: Distribution::from_samples(&mut e.latencies_ns),
            })
            .collect();
        edges.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then(a.waker.cmp(&b.waker))
                .then(a.wakee_tid.cmp(&b.wakee_tid))
        });
        WakeupReport { edges }
    }
}

/// One waker → wakee edge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WakeEdge {
    /// The waker.
    pub waker: Waker,
    /// Its name (`[hardirq]`, `[softirq]` for interrupts).
    pub waker_comm: String,
    /// The woken thread.
    pub wakee_tid: i32,
    /// Its name.
    pub wakee_comm: String,
    /// Wake-ups.
    pub count: u64,
    /// Wake-up → switch-in, for the wake-ups of a task not on a CPU.
    pub latency: Distribution,
}

/// All edges.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WakeupReport {
    /// Most frequent first.
    pub edges: Vec<WakeEdge>,
}
