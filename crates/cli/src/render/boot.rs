//! `lever boot`: the stage table, `systemd-analyze blame` top units, and
//! what could not be measured.

use crate::render::Table;
use lever_boot::journalctl::Found;
use lever_boot::serial::SerialTimes;
use lever_boot::stage_markers::Markers;
use lever_boot::stages::{RowKind, StageTable};
use lever_boot::systemd::{BlameEntry, SystemdTime};
use lever_boot::{format_ms, format_s};
use serde::Serialize;

/// What `lever boot` found, for `--json` and the text report.
#[derive(Debug, Serialize)]
pub struct BootReport {
    pub serial: Option<SerialTimes>,
    pub systemd_time: Option<SystemdTime>,
    pub systemd_source: Option<String>,
    pub markers: Markers,
    pub journal_start: Option<Found>,
    pub journal_end: Option<Found>,
    pub stages: StageTable,
    pub blame: Vec<BlameEntry>,
    pub notes: Vec<String>,
}

/// Stage table, userspace target, blame top, what was not measured.
pub fn report(r: &BootReport) -> String {
    let mut out = stages(r);
    if let Some((target, us)) = r.systemd_time.as_ref().and_then(|t| t.target.as_ref()) {
        out += &format!("{target} reached after {} s in userspace\n", format_s(*us));
    }
    if r.journal_start.is_some() || r.journal_end.is_some() {
        out += &format!("markers: {}\n", r.markers.source);
    }
    out += &blame(&r.blame);
    out += &notes(&r.notes);
    out
}

/// Seed 000 §7.2, §8.3: one row per stage, with where it came from.
fn stages(r: &BootReport) -> String {
    if r.stages.rows.is_empty() {
        return "Boot stages: none measured (no serial log, systemd-analyze output or journal markers)\n".into();
    }
    let mut t = Table::new(&["STAGE", "SOURCE", "FROM", "SECONDS", "MS"]);
    for row in &r.stages.rows {
        let stage = match row.kind {
            RowKind::Mark => format!("{} (at)", row.stage),
            _ => row.stage.clone(),
        };
        t.row(vec![
            stage,
            if row.source.is_empty() {
                "-".into()
            } else {
                row.source.clone()
            },
            row.calculation.clone(),
            format_s(row.us),
            format_ms(row.us),
        ]);
    }
    format!("Boot stages (seed 000 §7.2, §8.3)\n{}", t.render())
}

/// The slowest units of `systemd-analyze blame`.
fn blame(blame: &[BlameEntry]) -> String {
    if blame.is_empty() {
        return String::new();
    }
    let mut t = Table::new(&["SECONDS", "UNIT"]);
    for b in blame {
        t.row(vec![format_s(b.us), b.unit.clone()]);
    }
    format!(
        "\nsystemd-analyze blame (top {})\n{}",
        blame.len(),
        t.render()
    )
}

/// What could not be measured, and why.
fn notes(notes: &[String]) -> String {
    if notes.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nnot measured:\n");
    for n in notes {
        out += &format!("  - {n}\n");
    }
    out
}
