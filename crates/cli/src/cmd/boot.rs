//! `lever boot`: boot time stages from a serial log, `systemd-analyze`
//! and journal markers (seed 000 §7.2, §8.3).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;
use clap::Args;
use lever_boot::journalctl as journal;
use lever_boot::read_file;
use lever_boot::serial;
use lever_boot::stage_markers::{self as markers, Markers};
use lever_boot::stages::{self, Sources};
use lever_boot::systemd;
use lever_kernel::KernelFs;

use crate::args::Global;
use crate::render::boot::BootReport;
use crate::render::{self, emit};

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
    emit(global.json, &report, render::boot::report)
}
