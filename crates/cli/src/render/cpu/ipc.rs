//! `lever cpu ipc -- CMD`: counts, the IPC reading, the cache-miss chain.

use crate::render::num::{fixed_or_dash, or_dash};
use crate::render::Table;
use lever_cpu::ipc::{EventCount, IpcReport};
use serde::Serialize;

/// What `lever cpu ipc` reports, for `--json`.
#[derive(Debug, Serialize)]
pub struct IpcOutput {
    pub command: Vec<String>,
    pub available: bool,
    /// Why nothing was counted, when nothing was.
    pub reason: Option<String>,
    pub exit_code: Option<i32>,
    pub elapsed_s: Option<f64>,
    pub report: Option<IpcReport>,
}

fn count_cell(c: &EventCount) -> String {
    let cell = count_only(c);
    match &c.via {
        Some(via) => format!("{cell} (as {via})"),
        None => cell,
    }
}

fn count_only(c: &EventCount) -> String {
    match c.count {
        Some(n) if c.running_percent() < 99.95 => {
            format!("{n} (scaled, ran {:.1}%)", c.running_percent())
        }
        Some(n) => n.to_string(),
        None => "not counted (never got a PMU counter)".into(),
    }
}

/// `cpu ipc`: the command, counts, IPC reading, cache-miss chain.
pub fn report(out: &IpcOutput) -> String {
    let Some(report) = &out.report else {
        return not_countable(out);
    };
    let mut text = format!(
        "{}{}\n",
        command_line(out),
        if report.user_space_only {
            "; user space only (perf_event_paranoid forbids kernel counts)"
        } else {
            ""
        }
    );
    let mut t = Table::new(&["EVENT", "COUNT"]);
    for (name, c) in [
        ("cycles", &report.cycles),
        ("instructions", &report.instructions),
    ] {
        let cell = c
            .as_ref()
            .map_or("not available here (why: below)".into(), count_cell);
        t.row(vec![name.into(), cell]);
    }
    for c in &report.software {
        let cell = match (c.name.as_str(), c.count) {
            // task-clock counts nanoseconds on a CPU, as perf stat shows it.
            ("task-clock", Some(ns)) => format!("{:.3} ms on a CPU", ns as f64 / 1e6),
            _ => count_cell(c),
        };
        t.row(vec![c.name.clone(), cell]);
    }
    text += &t.render();
    if let Some(note) = &report.hardware_note {
        text += &format!("hardware counters: {note}\n");
    }
    text += &match (report.ipc, report.reading) {
        (Some(v), Some(r)) => format!("IPC: {v:.2} — {}\n", r.advice()),
        _ if report.cycles.is_none() && report.instructions.is_none() => {
            "IPC: not available here because cycles and instructions need hardware counters; the software counters above are what this machine can count\n".into()
        }
        _ if report.instructions.is_none() => {
            "IPC: not available here because instructions could not be counted (above); cycles were\n".into()
        }
        _ if report.cycles.is_none() => {
            "IPC: not available here because cycles could not be counted (above); instructions were\n".into()
        }
        _ => "IPC: not available because no cycles were counted\n".into(),
    };
    text + &miss_chain(report)
}

/// `command: CMD (exit N, T s)`.
fn command_line(out: &IpcOutput) -> String {
    format!(
        "command: {} (exit {}, {:.3} s)",
        out.command.join(" "),
        or_dash(out.exit_code),
        out.elapsed_s.unwrap_or_default(),
    )
}

/// Seed 000 §7.2: L1 → L2 → L3 → LLCC → DDR, per 1000 instructions.
fn miss_chain(report: &IpcReport) -> String {
    let mut out = String::from("\ncache-miss chain (seed 000 §7.2: L1 → L2 → L3 → LLCC → DDR)\n");
    if !report.chain.is_empty() {
        let mut t = Table::new(&["EVENT", "COUNT", "PER 1000 INSTR", "MEANING"]);
        for s in &report.chain {
            t.row(vec![
                s.event.name.into(),
                count_cell(&s.count),
                fixed_or_dash(s.per_kilo_instructions, 2),
                s.event.meaning.into(),
            ]);
        }
        out += &t.render();
    }
    if let Some(note) = &report.chain_note {
        out += &format!("not available here because {note}\n");
    }
    out
}

/// Why nothing was counted; the command ran all the same.
fn not_countable(out: &IpcOutput) -> String {
    format!(
        "{}\nIPC: not available here: {}\n",
        command_line(out),
        out.reason.as_deref().unwrap_or_default(),
    )
}
