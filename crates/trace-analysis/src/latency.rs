//! preemptoff / irqsoff / preemptirqsoff reports: the worst latency the
//! tracer recorded, where it started and ended, the task, the entries
//! (latency-format lines, times relative to the start in µs) and the
//! stack. A file may hold several reports (concatenated snapshots); the
//! worst one is reported.
//!
//! ```text
//! # latency: 46 us, #4/4, CPU#1 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:4)
//! #    | task: sshd-1991 (uid:0 nice:0 policy:0 rt_prio:0)
//! #  => started at: do_IRQ
//! #  => ended at:   do_IRQ
//!     sshd-1991    1d..1   46us : irq_exit <-do_IRQ
//!  => sub_preempt_count
//! ```

use lever_trace::{Event, Header, Line, TimeBase};
use serde::Serialize;

/// One latency-format entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyEntry {
    /// µs since the start of the section, as ns.
    pub at_ns: u64,
    /// Task.
    pub comm: String,
    /// Thread id.
    pub pid: i32,
    /// Function or event.
    pub name: String,
    /// Caller or event body.
    pub detail: String,
}

/// One latency report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LatencyReport {
    /// Tracer (`preemptoff`, `irqsoff`, ...).
    pub tracer: Option<String>,
    /// The latency.
    pub latency_us: u64,
    /// CPU.
    pub cpu: Option<u32>,
    /// Task (comm, pid).
    pub task: Option<(String, i32)>,
    /// Where the section started.
    pub started_at: Option<String>,
    /// Where it ended.
    pub ended_at: Option<String>,
    /// The entries (first 200).
    pub entries: Vec<LatencyEntry>,
    /// The stack (innermost first).
    pub stack: Vec<String>,
}

/// Latency-report tracker.
#[derive(Debug, Default)]
pub struct LatencyTracker {
    tracer: Option<String>,
    cur: Option<LatencyReport>,
    worst: Option<LatencyReport>,
    reports: u64,
}

impl LatencyTracker {
    /// A new tracker.
    pub fn new() -> Self {
        Self::default()
    }

    fn flush(&mut self) {
        if let Some(r) = self.cur.take() {
            self.reports += 1;
            if self
                .worst
                .as_ref()
                .is_none_or(|w| r.latency_us > w.latency_us)
            {
                self.worst = Some(r);
            }
        }
    }

    /// Feed one line.
    pub fn line(&mut self, line: &Line<'_>) {
        match line {
            Line::Header(Header::Tracer(t)) => {
                self.flush();
                self.tracer = Some(t.to_string());
            }
            Line::Header(Header::Latency { latency_us, cpu }) => {
                self.flush();
                self.cur = Some(LatencyReport {
                    tracer: self.tracer.clone(),
                    latency_us: *latency_us,
                    cpu: *cpu,
                    ..LatencyReport::default()
                });
            }
            Line::Header(h) => {
                if let Some(r) = self.cur.as_mut() {
                    match h {
                        Header::Task { comm, pid } => r.task = Some((comm.to_string(), *pid)),
                        Header::StartedAt(f) => r.started_at = Some(f.to_string()),
                        Header::EndedAt(f) => r.ended_at = Some(f.to_string()),
                        _ => {}
                    }
                }
            }
            Line::Event(e) => self.entry(e),
            Line::Stack(f) => {
                if let Some(r) = self.cur.as_mut() {
                    r.stack.push(f.to_string());
                }
            }
            _ => {}
        }
    }

    fn entry(&mut self, e: &Event<'_>) {
        let Some(r) = self.cur.as_mut() else { return };
        if e.time_base == TimeBase::Relative && r.entries.len() < 200 {
            r.entries.push(LatencyEntry {
                at_ns: e.ts_ns,
                comm: e.comm.to_string(),
                pid: e.pid,
                name: e.name.to_string(),
                detail: e.body.trim_start_matches("<-").to_string(),
            });
        }
    }

    /// The worst report and how many reports were seen.
    pub fn finish(mut self) -> (Option<LatencyReport>, u64) {
        self.flush();
        (self.worst, self.reports)
    }
}
