//! The critical path of one thread over an interval: what it waited on,
//! and recursively what that waited on.
//!
//! Each thread's time in the interval is cut into segments from
//! `sched_switch` and the wake-up events: **running** on a CPU,
//! **preempted** (runnable; the task the CPU switched to is the cause),
//! **waiting for a CPU** after a wake-up, and **sleeping**/**blocked**
//! (`D`) until a wake-up, whose waker ([`Waker`]: a task, a hard irq or a
//! softirq, see [`crate::wakeups`]) is what it waited on. The path
//! explains the target's time by kind and cause; for sleeps ended by a
//! task, it explains that task's time over the same intervals the same
//! way (what was the waker doing while we waited for it?), down to
//! [`MAX_DEPTH`] levels, never revisiting a thread already on the path.
//!
//! For the target itself, the interrupts its CPU served while it ran or
//! was runnable are broken out by irq line and softirq vector ([`CpuInterrupt`]),
//! and every item carries its share of the interval.
//!
//! Only segments and interrupt pieces overlapping the interval are kept,
//! so memory is bounded by the events inside it.

mod irq;

pub use irq::{CpuInterrupt, IrqSource};

use crate::stats::{pct, IdMap};
use crate::wakeups::Waker;
use lever_trace::{Event, EventKind};
use serde::Serialize;
use std::collections::BTreeMap;

/// How deep the chain of wakers is followed.
pub const MAX_DEPTH: usize = 4;

/// Which thread and interval (trace clock, ns; open ends = whole trace).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CriticalPathSpec {
    /// The thread.
    pub tid: i32,
    /// Interval start.
    pub from_ns: Option<u64>,
    /// Interval end.
    pub to_ns: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Running,
    Preempted(i32),
    WaitingCpu(Waker),
    Sleeping(Option<Waker>),
    Blocked(Option<Waker>),
}

/// Time, segments and the intervals of one (state, cause).
type Part = (u64, u64, Vec<(u64, u64)>);

#[derive(Debug, Clone, Copy)]
struct Seg {
    start: u64,
    end: u64,
    kind: Kind,
}

/// Builds per-thread segments for [`CriticalPathTracker::finish`].
#[derive(Debug)]
pub struct CriticalPathTracker {
    spec: CriticalPathSpec,
    segs: IdMap<i32, Vec<Seg>>,
    open: IdMap<i32, (u64, Kind)>,
    comms: IdMap<i32, String>,
    end_ts: u64,
    start_ts: Option<u64>,
    irq: irq::IrqTimeline,
}

impl CriticalPathTracker {
    /// A tracker for `spec`.
    pub fn new(spec: CriticalPathSpec) -> Self {
        CriticalPathTracker {
            spec,
            segs: IdMap::default(),
            open: IdMap::default(),
            comms: IdMap::default(),
            end_ts: 0,
            start_ts: None,
            irq: irq::IrqTimeline::new(spec.from_ns.unwrap_or(0), spec.to_ns.unwrap_or(u64::MAX)),
        }
    }

    fn close(&mut self, tid: i32, t: u64, kind: Option<Kind>) {
        let prev = match kind {
            Some(k) => self.open.insert(tid, (t, k)),
            None => self.open.remove(&tid),
        };
        if let Some((start, kind)) = prev {
            let (from, to) = (
                self.spec.from_ns.unwrap_or(0),
                self.spec.to_ns.unwrap_or(u64::MAX),
            );
            if t > from && start < to {
                self.segs.entry(tid).or_default().push(Seg {
                    start,
                    end: t,
                    kind,
                });
            }
        }
    }

    fn name(&mut self, tid: i32, comm: &str) {
        if tid != 0 && self.comms.get(&tid).is_none_or(|c| c != comm) {
            self.comms.insert(tid, comm.to_string());
        }
    }

    /// Feed one event.
    pub fn event(&mut self, e: &Event<'_>) {
        let t = e.ts_ns;
        self.end_ts = self.end_ts.max(t);
        self.start_ts.get_or_insert(t);
        match &e.kind {
            EventKind::SchedSwitch(sw) => {
                if sw.prev_pid == self.spec.tid {
                    let queued = sw.prev_runnable().then_some(e.cpu);
                    self.irq.target_on(t, queued);
                }
                if sw.next_pid == self.spec.tid {
                    self.irq.target_on(t, Some(e.cpu));
                }
                if sw.prev_pid != 0 {
                    self.name(sw.prev_pid, sw.prev_comm);
                    let kind = match sw.prev_state.as_bytes().first() {
                        Some(b'R') => Some(Kind::Preempted(sw.next_pid)),
                        Some(b'X' | b'Z') => None,
                        Some(b'D') => Some(Kind::Blocked(None)),
                        _ => Some(Kind::Sleeping(None)),
                    };
                    self.close(sw.prev_pid, t, kind);
                }
                if sw.next_pid != 0 {
                    self.name(sw.next_pid, sw.next_comm);
                    self.close(sw.next_pid, t, Some(Kind::Running));
                }
            }
            EventKind::SchedWakeup(w) if w.pid != 0 => {
                let waker = Waker::of(e);
                let running = matches!(self.open.get(&w.pid), Some((_, Kind::Running)));
                if w.pid == self.spec.tid && !running {
                    if let Some(cpu) = w.target_cpu {
                        self.irq.target_on(t, Some(cpu));
                    }
                }
                if let Waker::Task(tid) = waker {
                    self.name(tid, e.comm);
                }
                match self.open.get(&w.pid).map(|o| o.1) {
                    Some(Kind::Sleeping(None)) | Some(Kind::Blocked(None)) => {
                        // The sleep ends here, and it was `waker` it waited on.
                        if let Some(o) = self.open.get_mut(&w.pid) {
                            o.1 = match o.1 {
                                Kind::Blocked(_) => Kind::Blocked(Some(waker)),
                                _ => Kind::Sleeping(Some(waker)),
                            };
                        }
                        self.close(w.pid, t, Some(Kind::WaitingCpu(waker)));
                    }
                    None => {
                        self.open.insert(w.pid, (t, Kind::WaitingCpu(waker)));
                    }
                    _ => {}
                }
            }
            EventKind::SchedMigrateTask(m)
                if m.pid == self.spec.tid
                    && !matches!(self.open.get(&m.pid), Some((_, Kind::Running)) | None) =>
            {
                self.irq.target_on(t, Some(m.dest_cpu));
            }
            EventKind::IrqEntry { irq, name } => self.irq.irq_entry(e.cpu, t, *irq, name),
            EventKind::IrqExit { .. } => self.irq.irq_exit(e.cpu, t),
            EventKind::SoftirqEntry { vec, action } => {
                self.irq.softirq_entry(e.cpu, t, *vec, action)
            }
            EventKind::SoftirqExit { .. } => self.irq.softirq_exit(e.cpu, t),
            _ => {}
        }
    }

    /// Explain the target's interval.
    pub fn finish(mut self) -> CriticalPath {
        let end = self.end_ts;
        let open: Vec<i32> = self.open.keys().copied().collect();
        for tid in open {
            self.close(tid, end, None);
        }
        for v in self.segs.values_mut() {
            v.sort_by_key(|s| s.start);
        }
        let from = self.spec.from_ns.unwrap_or(self.start_ts.unwrap_or(0));
        let to = self.spec.to_ns.unwrap_or(end);
        let mut stack = Vec::new();
        let root = self.explain(self.spec.tid, &[(from, to)], &mut stack);
        self.irq.finish(end);
        let cpu_interrupts = self.interrupts(from, to);
        CriticalPath {
            tid: self.spec.tid,
            from_ns: from,
            to_ns: to,
            root,
            cpu_interrupts,
        }
    }

    /// Interrupt time on the target's CPU while it ran or was runnable
    /// within `[from, to)`, largest first.
    fn interrupts(&self, from: u64, to: u64) -> Vec<CpuInterrupt> {
        let (mut running, mut runnable) = (BTreeMap::new(), BTreeMap::new());
        for seg in self
            .segs
            .get(&self.spec.tid)
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            let (a, b) = (seg.start.max(from), seg.end.min(to));
            if a >= b {
                continue;
            }
            match seg.kind {
                Kind::Running => self.irq.account(a, b, &mut running),
                Kind::Preempted(_) | Kind::WaitingCpu(_) => self.irq.account(a, b, &mut runnable),
                Kind::Sleeping(_) | Kind::Blocked(_) => {}
            }
        }
        let total = to.saturating_sub(from);
        let mut out: Vec<CpuInterrupt> = [("running", running), ("runnable", runnable)]
            .into_iter()
            .flat_map(|(during, m)| {
                m.into_iter()
                    .map(move |(source, (ns, count))| (during, source, ns, count))
            })
            .map(|(during, source, ns, count)| CpuInterrupt {
                during,
                source,
                name: self.irq.name_of(source),
                ns,
                count,
                share_pct: pct(ns, total),
            })
            .collect();
        out.sort_by_key(|i| std::cmp::Reverse(i.ns));
        out
    }

    fn explain(&self, tid: i32, intervals: &[(u64, u64)], stack: &mut Vec<i32>) -> PathNode {
        // (kind) → (ns, count, intervals)
        let mut parts: BTreeMap<Kind, Part> = BTreeMap::new();
        let mut covered = 0;
        for seg in self.segs.get(&tid).map(Vec::as_slice).unwrap_or(&[]) {
            for &(a, b) in intervals {
                let (s, e) = (seg.start.max(a), seg.end.min(b));
                if s < e {
                    let p = parts.entry(seg.kind).or_default();
                    p.0 += e - s;
                    p.1 += 1;
                    p.2.push((s, e));
                    covered += e - s;
                }
            }
        }
        let total: u64 = intervals.iter().map(|(a, b)| b - a).sum();
        stack.push(tid);
        let comm = |t: i32| self.comms.get(&t).cloned().unwrap_or_default();
        let mut out: Vec<PathPart> = parts
            .into_iter()
            .map(|(kind, (ns, count, ivs))| {
                let (state, cause) = match kind {
                    Kind::Running => ("running", None),
                    Kind::Preempted(by) => ("preempted", Some(Waker::Task(by))),
                    Kind::WaitingCpu(w) => ("waiting for a CPU", Some(w)),
                    Kind::Sleeping(w) => ("sleeping", w),
                    Kind::Blocked(w) => ("blocked", w),
                };
                let because = match (kind, cause) {
                    (Kind::Sleeping(_) | Kind::Blocked(_), Some(Waker::Task(w)))
                        if stack.len() < MAX_DEPTH && !stack.contains(&w) && w != 0 =>
                    {
                        Some(Box::new(self.explain(w, &ivs, stack)))
                    }
                    _ => None,
                };
                PathPart {
                    state,
                    share_pct: pct(ns, total),
                    cause,
                    cause_comm: cause.map(|c| match c {
                        Waker::Task(0) => "[idle]".into(),
                        Waker::Task(t) => comm(t),
                        Waker::HardIrq => "[hardirq]".into(),
                        Waker::Softirq => "[softirq]".into(),
                    }),
                    ns,
                    count,
                    because,
                }
            })
            .collect();
        stack.pop();
        out.sort_by_key(|p| std::cmp::Reverse(p.ns));
        PathNode {
            tid,
            comm: comm(tid),
            total_ns: total,
            unknown_ns: total.saturating_sub(covered),
            parts: out,
        }
    }
}

/// One thread's time over some intervals, by state and cause.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathNode {
    /// The thread.
    pub tid: i32,
    /// Its name.
    pub comm: String,
    /// Length of the intervals explained.
    pub total_ns: u64,
    /// Time with no known state (before its first event).
    pub unknown_ns: u64,
    /// Largest first.
    pub parts: Vec<PathPart>,
}

/// Time in one state with one cause.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathPart {
    /// `running`, `preempted`, `waiting for a CPU`, `sleeping`, `blocked`.
    pub state: &'static str,
    /// Share of the node's intervals, percent.
    pub share_pct: f64,
    /// Who preempted it, or who woke it (what it waited on).
    pub cause: Option<Waker>,
    /// The cause's name.
    pub cause_comm: Option<String>,
    /// Time.
    pub ns: u64,
    /// Segments.
    pub count: u64,
    /// For a sleep ended by a task: that task over the same intervals.
    pub because: Option<Box<PathNode>>,
}

/// The critical path of one thread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriticalPath {
    /// The thread.
    pub tid: i32,
    /// Interval start (ns, trace clock).
    pub from_ns: u64,
    /// Interval end.
    pub to_ns: u64,
    /// The explanation.
    pub root: PathNode,
    /// Hard irq and softirq time on the target's CPU while it ran or was
    /// runnable, per source, largest first (empty without `irq` events).
    pub cpu_interrupts: Vec<CpuInterrupt>,
}
