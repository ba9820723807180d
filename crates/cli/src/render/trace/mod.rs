//! `lever trace`: the analysis report (one function per section, in
//! [`sched`] and [`events`]) and the one-line results of record, export
//! and bench.

mod causes;
mod events;
mod sched;
mod stacks;

use lever_trace_analysis::stats::fmt_ns;
use lever_trace_analysis::Report;
use serde::Serialize;
use std::path::PathBuf;

/// What `trace record` did.
#[derive(Serialize)]
pub struct RecordResult {
    /// The trace text file written.
    pub output: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// Where it was recorded (instance or top level).
    pub target: String,
    /// How long it recorded.
    pub seconds: f64,
    /// The command's exit code, when one ran.
    pub command_status: Option<i32>,
    /// The conditions of the recording (before and after it).
    pub conditions: Option<lever_conditions::Conditions>,
}

/// What `trace export` wrote.
#[derive(Serialize)]
pub struct ExportResult {
    /// The Chrome JSON or Perfetto file.
    pub output: PathBuf,
    /// Trace events written.
    pub trace_events: u64,
    /// Events of kinds the format does not carry (Perfetto: other than
    /// sched, irq, power and markers).
    pub left_out_events: u64,
    /// Lines the parser did not understand.
    pub malformed_lines: u64,
}

/// The analysis report, section by section. `auto` (no section flag
/// given) leaves out sections the trace has nothing for instead of saying
/// so.
pub fn analysis(r: &Report, top: usize, auto: bool) -> String {
    escape_controls(analysis_raw(r, top, auto))
}

/// Control characters from the trace (a task name, a marker, a
/// malformed line may hold an escape sequence) shown as `\x1b`, `\t`,
/// `\u{9b}`..., never sent to the terminal as they are; line breaks kept.
pub fn escape_controls(s: String) -> String {
    if !s.chars().any(|c| c.is_control() && c != '\n') {
        return s;
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '\n' => out.push(c),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x80 && c.is_control() => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn analysis_raw(r: &Report, top: usize, auto: bool) -> String {
    let mut out = summary(r);
    if let Some(s) = &r.sched {
        out += &sched::scheduling(s, top, auto);
    }
    if let Some(f) = &r.freq {
        out += &sched::frequency(f, auto);
    }
    if let Some(i) = &r.idle {
        out += &sched::idle(i, auto);
    }
    if let Some(m) = &r.markers {
        out += &events::markers(m, top, auto);
    }
    if let Some(fg) = &r.funcgraph {
        out += &events::funcgraph(fg, top, auto);
    }
    out += &events::latency(r, auto);
    if let Some(w) = &r.wakeups {
        out += &causes::wakeups(w, top);
    }
    if let Some(cp) = &r.critical_path {
        out += &causes::critical_path(cp);
    }
    if let Some(l) = &r.locks {
        out += &causes::locks(l, top);
    }
    if let Some(rp) = &r.ramp {
        out += &causes::ramp(rp, top);
    }
    if let Some(cs) = &r.callstack {
        out += &stacks::callstack(cs, top);
    }
    out
}

/// Lines, events, span; malformed samples; lost events.
fn summary(r: &Report) -> String {
    let s = &r.summary;
    let mut out = format!(
        "{} lines, {} events, {} function_graph lines, {} malformed{}\n",
        s.lines,
        s.events,
        s.funcgraph_lines,
        s.malformed,
        match (s.first_ts_ns, s.last_ts_ns) {
            (Some(a), Some(b)) => format!(", span {}", fmt_ns(b - a)),
            _ => String::new(),
        }
    );
    for m in s.malformed_samples.iter().take(5) {
        out += &format!("  line {}: {}: {}\n", m.line_no, m.reason, m.text);
    }
    if s.overwritten_events > 0 {
        out += &format!(
            "  overwritten events: {} (the ring buffer wrapped before they were read; per-CPU overrun at capture): CPUs {:?}; results near them are incomplete\n",
            s.overwritten_events, s.cpus_with_loss
        );
    }
    if s.lost_events > 0 || (!s.cpus_with_loss.is_empty() && s.overwritten_events == 0) {
        out += &format!(
            "  lost events: {} (CPUs {:?}): buffer too small; results near the loss are incomplete\n",
            s.lost_events, s.cpus_with_loss
        );
    }
    out
}

/// `trace record`'s result line.
pub fn record(r: &RecordResult) -> String {
    format!(
        "recorded {:.1} s into {}: {} bytes → {}\n{}",
        r.seconds,
        r.target,
        r.bytes,
        r.output.display(),
        r.conditions
            .as_ref()
            .map(crate::render::conditions::summary)
            .unwrap_or_default()
    )
}

/// `trace export`'s result line.
pub fn export(r: &ExportResult) -> String {
    let left_out = match r.left_out_events {
        0 => String::new(),
        n => format!(" ({n} events of other kinds left out)"),
    };
    format!(
        "{} trace events → {} (open in ui.perfetto.dev){left_out}\n",
        r.trace_events,
        r.output.display()
    )
}

/// `trace bench`: on-CPU figures (when known), then wall-clock ones.
pub fn bench(res: &lever_trace_analysis::bench::BenchResult) -> String {
    let mut out = String::new();
    if let (Some(pc), Some(sc)) = (res.parse_cpu_seconds, res.sched_cpu_seconds) {
        out += &format!(
            "on-CPU: parse {:.3} s = {:.0} MB/s, {:.2} M events/s; parse + sched analysis {:.3} s\n",
            pc,
            res.bytes as f64 / 1e6 / pc,
            res.events as f64 / pc / 1e6,
            sc
        );
    }
    out += &format!(
        "wall: {:.1} MB, {} events: parse {:.3} s = {:.0} MB/s, {:.2} M events/s; parse + sched analysis {:.3} s = {:.2} M events/s; peak RSS {} kB\n",
        res.bytes as f64 / 1e6,
        res.events,
        res.parse_seconds,
        res.parse_mb_per_s,
        res.parse_events_per_s / 1e6,
        res.sched_seconds,
        res.sched_events_per_s / 1e6,
        res.peak_rss_kb.map_or("?".into(), |k| k.to_string())
    );
    if let Some(p) = &res.parallel {
        out += &format!(
            "parse + sched analysis, {} parsing threads: wall {:.3} s = {:.2} M events/s, on-CPU {} (every thread)\n",
            p.threads,
            p.seconds,
            p.events_per_s / 1e6,
            p.cpu_seconds.map_or("?".into(), |c| format!("{c:.3} s"))
        );
    }
    if let (Some(w), Some(c)) = (res.process_seconds, res.process_cpu_seconds) {
        out += &format!(
            "whole command (open, warm-up and every pass): wall {w:.3} s, on-CPU {c:.3} s (every thread)\n"
        );
    }
    out
}
