//! `lever boot`: boot time stages from a serial log, `systemd-analyze`
//! and journal markers (seed 000 §7.2, §8.3).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;
use clap::Args;
use lever_boot::journalctl::{self as journal, Found};
use lever_boot::serial::{self, SerialTimes};
use lever_boot::stage_markers::{self as markers, Markers};
use lever_boot::stages::{self, RowKind, Sources, StageTable};
use lever_boot::systemd::{self, BlameEntry, SystemdTime};
use lever_boot::{format_ms, format_s, read_file};
use lever_kernel::KernelFs;
use serde::Serialize;

use crate::args::Global;
use crate::render::{print_json, Table};

/// `lever boot [--serial LOG] [--journal FILE] [--systemd-time FILE] ...`.
#[derive(Debug, Args)]
pub struct BootArgs {
    /// Serial console log of the boot (UEFI Start / UEFI Total / Exit EBS).
    #[arg(long, value_name = "LOG")]
    pub serial: Option<PathBuf>,
    /// Journal saved with `journalctl --output=short-monotonic -b`.
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// Saved `systemd-analyze time` output. Without it, `systemd-analyze
    /// time` runs live when systemd is PID 1 and --root is /.
    #[arg(long = "systemd-time", value_name = "FILE")]
    pub systemd_time: Option<PathBuf>,
    /// Saved `systemd-analyze blame` output (else live, as for --systemd-time).
    #[arg(long, value_name = "FILE")]
    pub blame: Option<PathBuf>,
    /// Start/end journal markers for this board (YAML); default: seed 000
    /// §8.3's SELinux `enforcing=1 old_enforcing=0` → `Spectra camera driver
    /// initialized`.
    #[arg(long, value_name = "FILE")]
    pub markers: Option<PathBuf>,
    /// How many `blame` entries to show.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,
}

#[derive(Debug, Serialize)]
struct BootReport {
    serial: Option<SerialTimes>,
    systemd_time: Option<SystemdTime>,
    systemd_source: Option<String>,
    markers: Markers,
    journal_start: Option<Found>,
    journal_end: Option<Found>,
    stages: StageTable,
    blame: Vec<BlameEntry>,
    notes: Vec<String>,
}

/// Why `systemd-analyze` cannot run live here, or `None` when it can.
fn live_systemd_blocker(global: &Global, fs: &KernelFs) -> Option<String> {
    if !fs.is_system() {
        return Some(format!(
            "--root {} is a file tree; live systemd-analyze only describes the running system",
            global.root.display()
        ));
    }
    match fs.read_optional("/proc/1/comm") {
        Ok(Some(comm)) if comm.trim() == "systemd" => None,
        Ok(Some(comm)) => Some(format!(
            "PID 1 is `{}`, not systemd (from /proc/1/comm), so there is no systemd boot record",
            comm.trim()
        )),
        Ok(None) => Some("/proc/1/comm is missing: cannot tell whether systemd is PID 1".into()),
        Err(e) => Some(format!("cannot tell whether systemd is PID 1: {e}")),
    }
}

/// Run `systemd-analyze <what>` and return its stdout.
fn systemd_analyze(what: &str) -> Result<String, String> {
    let out = Command::new("systemd-analyze")
        .arg(what)
        .output()
        .map_err(|e| format!("cannot run `systemd-analyze {what}`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`systemd-analyze {what}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn name(p: &Path) -> String {
    p.display().to_string()
}

pub fn run(global: &Global, args: BootArgs) -> anyhow::Result<()> {
    let fs = KernelFs::new(&global.root);
    let mut notes = Vec::new();

    let markers = match &args.markers {
        Some(p) => markers::parse(&name(p), &read_file(p)?)?,
        None => Markers::default(),
    };
    let serial = match &args.serial {
        Some(p) => Some(serial::parse(&name(p), &read_file(p)?)?),
        None => None,
    };

    let live_blocker = live_systemd_blocker(global, &fs);
    let (systemd_time, systemd_source) = match &args.systemd_time {
        Some(p) => (
            Some(systemd::parse_time(&name(p), &read_file(p)?)?),
            Some(name(p)),
        ),
        None => match &live_blocker {
            Some(why) => {
                notes.push(format!(
                    "systemd-analyze time not run: {why}; pass --systemd-time FILE"
                ));
                (None, None)
            }
            None => match systemd_analyze("time") {
                Ok(text) => (
                    Some(systemd::parse_time("systemd-analyze time", &text)?),
                    Some("systemd-analyze time (live)".into()),
                ),
                Err(e) => {
                    notes.push(e);
                    (None, None)
                }
            },
        },
    };

    let blame = match &args.blame {
        Some(p) => systemd::parse_blame(&name(p), &read_file(p)?)?,
        None => match &live_blocker {
            Some(why) => {
                notes.push(format!(
                    "systemd-analyze blame not run: {why}; pass --blame FILE"
                ));
                Vec::new()
            }
            None => match systemd_analyze("blame") {
                Ok(text) => systemd::parse_blame("systemd-analyze blame", &text)?,
                Err(e) => {
                    notes.push(e);
                    Vec::new()
                }
            },
        },
    };

    let (journal_start, journal_end, have_journal) = match &args.journal {
        Some(p) => {
            let text = read_file(p)?;
            let mut found = journal::find(&name(p), &text, &[&markers.start, &markers.end])
                .with_context(|| format!("reading markers from {}", name(p)))?;
            let end = found.pop().flatten();
            let start = found.pop().flatten();
            (start, end, true)
        }
        None => (None, None, false),
    };

    let table = stages::build(Sources {
        serial: serial.as_ref(),
        time: systemd_time.as_ref(),
        journal: have_journal.then_some((journal_start.as_ref(), journal_end.as_ref())),
        markers: &markers,
    });
    notes.splice(0..0, table.notes.iter().cloned());

    let report = BootReport {
        serial,
        systemd_time,
        systemd_source,
        markers,
        journal_start,
        journal_end,
        blame: blame.into_iter().take(args.top).collect(),
        stages: table,
        notes,
    };
    if global.json {
        return print_json(&report);
    }
    print!("{}", render(&report));
    Ok(())
}

fn render(r: &BootReport) -> String {
    let mut out = String::new();
    if r.stages.rows.is_empty() {
        out.push_str("Boot stages: none measured (no serial log, systemd-analyze output or journal markers)\n");
    } else {
        out.push_str("Boot stages (seed 000 §7.2, §8.3)\n");
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
        out.push_str(&t.render());
    }
    if let Some((target, us)) = r.systemd_time.as_ref().and_then(|t| t.target.as_ref()) {
        out.push_str(&format!(
            "{target} reached after {} s in userspace\n",
            format_s(*us)
        ));
    }
    if r.journal_start.is_some() || r.journal_end.is_some() {
        out.push_str(&format!("markers: {}\n", r.markers.source));
    }
    if !r.blame.is_empty() {
        out.push_str(&format!(
            "\nsystemd-analyze blame (top {})\n",
            r.blame.len()
        ));
        let mut t = Table::new(&["SECONDS", "UNIT"]);
        for b in &r.blame {
            t.row(vec![format_s(b.us), b.unit.clone()]);
        }
        out.push_str(&t.render());
    }
    if !r.notes.is_empty() {
        out.push_str("\nnot measured:\n");
        for n in &r.notes {
            out.push_str(&format!("  - {n}\n"));
        }
    }
    out
}
