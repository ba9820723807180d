//! Interrupt time on the target's CPU while it ran or waited for a CPU.
//!
//! Each CPU's time in hard irq handlers (`irq_handler_entry` →
//! `irq_handler_exit`) and softirqs (`softirq_entry` → `softirq_exit`) is
//! cut into disjoint pieces: a hard irq that arrives inside a softirq
//! pauses it, so nested time counts once, for the hard irq.
//!
//! ```text
//!  perf-8756 [001] d.h1. 18737.218245: irq_handler_entry: irq=36 name=virtio1-req.0
//!  perf-8756 [001] d.h1. 18737.218247: irq_handler_exit: irq=36 ret=handled
//!  perf-8756 [001] ..s1. 18737.218247: softirq_entry: vec=4 [action=BLOCK]
//!  perf-8756 [001] ..s1. 18737.218252: softirq_exit: vec=4 [action=BLOCK]
//! ```
//!
//! The target's CPU is followed over time: the CPU it runs on, the CPU it
//! was preempted on, the `target_cpu` of its wake-up, a
//! `sched_migrate_task`'s `dest_cpu`; none while it sleeps. Interrupt
//! pieces on that CPU while it was running or runnable are what delayed it
//! or stole its time, by irq number/handler and softirq vector.

use crate::stats::IdMap;
use serde::Serialize;
use std::collections::BTreeMap;

/// A hard irq or a softirq vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IrqSource {
    /// A hard irq line (`irq=36`).
    Irq(u32),
    /// A softirq vector (`vec=4`).
    Softirq(u32),
}

#[derive(Debug, Clone, Copy)]
struct Piece {
    start: u64,
    end: u64,
    source: IrqSource,
}

#[derive(Debug, Default)]
struct CpuState {
    /// Open hard irq: (since, irq).
    hard: Option<(u64, u32)>,
    /// Open softirq: (since this piece, vec); paused under a hard irq.
    soft: Option<(u64, u32)>,
    /// Closed pieces overlapping the interval, in time order.
    pieces: Vec<Piece>,
}

/// Per-CPU interrupt pieces and the target's CPU over time.
#[derive(Debug, Default)]
pub(super) struct IrqTimeline {
    cpus: IdMap<u32, CpuState>,
    names: BTreeMap<IrqSource, String>,
    /// (since, CPU the target is on or queued on; None = sleeping).
    target_cpu: Vec<(u64, Option<u32>)>,
    from: u64,
    to: u64,
}

impl IrqTimeline {
    pub(super) fn new(from: u64, to: u64) -> Self {
        IrqTimeline {
            from,
            to,
            ..Default::default()
        }
    }

    fn push(&mut self, cpu: u32, start: u64, end: u64, source: IrqSource) {
        if end > self.from && start < self.to && start < end {
            let c = self.cpus.entry(cpu).or_default();
            c.pieces.push(Piece { start, end, source });
        }
    }

    fn name(&mut self, source: IrqSource, name: &str) {
        if self.names.get(&source).is_none_or(|n| n != name) {
            self.names.insert(source, name.to_string());
        }
    }

    /// `irq_handler_entry` on `cpu` at `t`.
    pub(super) fn irq_entry(&mut self, cpu: u32, t: u64, irq: u32, name: &str) {
        self.name(IrqSource::Irq(irq), name);
        let c = self.cpus.entry(cpu).or_default();
        let paused = c.soft;
        c.hard = Some((t, irq));
        if let Some((since, vec)) = paused {
            self.push(cpu, since, t, IrqSource::Softirq(vec));
        }
    }

    /// `irq_handler_exit`.
    pub(super) fn irq_exit(&mut self, cpu: u32, t: u64) {
        let c = self.cpus.entry(cpu).or_default();
        let hard = c.hard.take();
        if let Some(s) = c.soft.as_mut() {
            s.0 = t; // the softirq resumes
        }
        if let Some((since, irq)) = hard {
            self.push(cpu, since, t, IrqSource::Irq(irq));
        }
    }

    /// `softirq_entry`.
    pub(super) fn softirq_entry(&mut self, cpu: u32, t: u64, vec: u32, action: &str) {
        self.name(IrqSource::Softirq(vec), action);
        self.cpus.entry(cpu).or_default().soft = Some((t, vec));
    }

    /// `softirq_exit`.
    pub(super) fn softirq_exit(&mut self, cpu: u32, t: u64) {
        let c = self.cpus.entry(cpu).or_default();
        if let Some((since, vec)) = c.soft.take() {
            self.push(cpu, since, t, IrqSource::Softirq(vec));
        }
    }

    /// The target is now on (or queued on) `cpu`, or sleeping (`None`).
    pub(super) fn target_on(&mut self, t: u64, cpu: Option<u32>) {
        if self.target_cpu.last().map(|l| l.1) != Some(cpu) {
            self.target_cpu.push((t, cpu));
        }
    }

    /// Close what is still open at the end of the trace.
    pub(super) fn finish(&mut self, end: u64) {
        let cpus: Vec<u32> = self.cpus.keys().copied().collect();
        for cpu in cpus {
            self.irq_exit(cpu, end);
            self.softirq_exit(cpu, end);
        }
        for c in self.cpus.values_mut() {
            c.pieces.sort_by_key(|p| p.start);
        }
    }

    /// Interrupt time on the target's CPU within `[a, b)` (an interval
    /// where the target ran or was runnable), added to `out` per source.
    pub(super) fn account(&self, a: u64, b: u64, out: &mut BTreeMap<IrqSource, (u64, u64)>) {
        // Where the target was over [a, b): the timeline entry in force at
        // `a`, then each change before `b`.
        let i = self.target_cpu.partition_point(|x| x.0 <= a);
        let mut pieces = Vec::new();
        let mut since = a;
        let mut cpu = i.checked_sub(1).and_then(|i| self.target_cpu[i].1);
        for &(t, next) in self.target_cpu[i..].iter().take_while(|x| x.0 < b) {
            pieces.push((since, t, cpu));
            (since, cpu) = (t, next);
        }
        pieces.push((since, b, cpu));
        for (s, e, cpu) in pieces {
            let Some(c) = cpu.and_then(|cpu| self.cpus.get(&cpu)) else {
                continue;
            };
            // Pieces on one CPU are disjoint, so sorted by start they are
            // sorted by end too.
            let first = c.pieces.partition_point(|p| p.end <= s);
            for p in c.pieces[first..].iter().take_while(|p| p.start < e) {
                let (ps, pe) = (p.start.max(s), p.end.min(e));
                if ps < pe {
                    let o = out.entry(p.source).or_default();
                    o.0 += pe - ps;
                    o.1 += 1;
                }
            }
        }
    }

    /// The handler (irq) or action (softirq) name.
    pub(super) fn name_of(&self, source: IrqSource) -> String {
        self.names.get(&source).cloned().unwrap_or_default()
    }
}

/// Interrupt time on the target's CPU while it ran or was runnable.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuInterrupt {
    /// `running` (the time was taken from its run) or `runnable` (it
    /// waited for the CPU meanwhile).
    pub during: &'static str,
    /// Which irq line or softirq vector.
    pub source: IrqSource,
    /// Handler name (`virtio1-req.0`) or softirq action (`BLOCK`).
    pub name: String,
    /// Time, ns.
    pub ns: u64,
    /// Interrupt pieces (a softirq paused by a hard irq counts twice).
    pub count: u64,
    /// Share of the interval explained, percent.
    pub share_pct: f64,
}
