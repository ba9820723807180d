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
        "command: {} (exit {}, {:.3} s){}\n",
        out.command.join(" "),
        or_dash(out.exit_code),
        out.elapsed_s.unwrap_or_default(),
        if report.user_space_only {
            "; user space only (perf_event_paranoid forbids kernel counts)"
        } else {
            ""
        }
    );
    let mut t = Table::new(&["EVENT", "COUNT"]);
    t.row(vec!["cycles".into(), count_cell(&report.cycles)]);
    t.row(vec![
        "instructions".into(),
        count_cell(&report.instructions),
    ]);
    text += &t.render();
    text += &match (report.ipc, report.reading) {
        (Some(v), Some(r)) => format!("IPC: {v:.2} — {}\n", r.advice()),
        _ => "IPC: not available because no cycles were counted\n".into(),
    };
    text + &miss_chain(report)
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

/// Why nothing was counted, and that the command did not run.
fn not_countable(out: &IpcOutput) -> String {
    format!(
        "IPC: not available here: {}\n(the command was not run: `{}`)\n",
        out.reason.as_deref().unwrap_or_default(),
        out.command.join(" ")
    )
}
