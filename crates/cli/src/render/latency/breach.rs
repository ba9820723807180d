//! The breach analysis: per late wake-up, the window cut into what the
//! CPU did, with shares, like rtla timerlat's auto-analysis.

use crate::render::Table;
use lever_latency::breach::{Analysis, PartKind};
use lever_latency::report::LatencyReport;

/// A kernel priority as the kernel and chrt say it: `39 (FIFO 60)`.
fn prio(p: Option<i32>) -> String {
    match p {
        Some(p) if p < 100 => format!("{p} (RT {})", 99 - p),
        Some(p) => format!("{p} (nice {})", p - 120),
        None => "-".into(),
    }
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

/// One analysis.
pub fn analysis(a: &Analysis) -> String {
    let w = &a.wakeup;
    let mut out = format!(
        "why thread {} (tid {}, CPU {}) woke {} µs late:\n",
        w.thread,
        w.tid,
        w.cpu,
        us(a.window_ns)
    );
    let at = |t: Option<u64>| t.map_or("not seen".to_string(), |t| format!("+{} µs", us(t)));
    out += &format!(
        "  deadline {}.{:06} s (CLOCK_MONOTONIC); woken {}; switched in {}; {} events on CPU {}\n",
        w.deadline_ns / 1_000_000_000,
        w.deadline_ns % 1_000_000_000 / 1000,
        at(a.woken_after_ns),
        at(a.switched_in_after_ns),
        a.events,
        w.cpu
    );
    if a.events == 0 && a.parts.iter().all(|p| p.kind == PartKind::Unexplained) {
        out += "  the trace no longer holds this window (overwritten, or before the trace began)\n";
        return out;
    }
    let mut t = Table::new(&["part", "which", "prio", "µs", "share"]);
    for p in &a.parts {
        t.row(vec![
            p.kind.label().into(),
            p.name.clone(),
            prio(p.prio),
            us(p.duration_ns),
            format!("{:.1}%", p.share_pct),
        ]);
    }
    out += &t.render();
    if let (Some(depth @ 1..), Some(flags)) = (a.preempt_depth_at_timer(), &a.timer_irq_flags) {
        out += &format!(
            "the timer interrupt found preempt depth {depth} ({flags}): the interrupted code was not preemptible\n"
        );
    }
    if let Some(c) = a.cause() {
        out += &format!(
            "cause: {} {} ({} µs, {:.1}% of the latency)\n",
            c.kind.label(),
            c.name,
            us(c.duration_ns),
            c.share_pct
        );
    }
    out
}

/// Every analysis of a report, and where the trace is.
pub fn all(r: &LatencyReport) -> String {
    let mut out = String::new();
    for a in &r.analyses {
        out += "\n";
        out += &analysis(a);
    }
    if let Some(f) = &r.trace_file {
        out += &format!("\ntrace kept: {f} (lever trace analyze {f})\n");
    }
    out
}
