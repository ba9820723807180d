//! The `boot` section: seed 000 §8.3's boot stages from the logs the user
//! gives, through `lever-boot` (the same parsers and stage table as
//! `lever boot`).
//!
//! `--boot-log serial=F`, `journal=F` (`journalctl
//! --output=short-monotonic -b`, searched for seed 000 §8.3's markers),
//! `time=F` (`systemd-analyze time`), `blame=F` (`systemd-analyze
//! blame`); a bare `F` is a `systemd-analyze time` output when it says
//! `Startup finished`, else a serial console log.

use super::{skipped, slug};
use crate::model::{Better, Metric, Section};
use crate::ReportError;
use lever_boot::stage_markers::Markers;
use lever_boot::stages::{self, RowKind, Sources};
use lever_boot::{journalctl, serial, systemd, BootError};
use std::path::{Path, PathBuf};

/// What a boot log is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    /// Serial console log (Qualcomm UEFI, U-Boot, printk).
    Serial,
    /// `journalctl --output=short-monotonic -b`.
    Journal,
    /// `systemd-analyze time`.
    Time,
    /// `systemd-analyze blame`.
    Blame,
    /// Decided by the content (see the module docs).
    Guess,
}

/// One `--boot-log`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootLog {
    /// What it is.
    pub kind: LogKind,
    /// The file.
    pub path: PathBuf,
}

impl BootLog {
    /// Parse `KIND=FILE` or `FILE`.
    pub fn parse(arg: &str) -> BootLog {
        let kinds = [
            ("serial=", LogKind::Serial),
            ("journal=", LogKind::Journal),
            ("time=", LogKind::Time),
            ("blame=", LogKind::Blame),
        ];
        for (prefix, kind) in kinds {
            if let Some(p) = arg.strip_prefix(prefix) {
                return BootLog {
                    kind,
                    path: p.into(),
                };
            }
        }
        BootLog {
            kind: LogKind::Guess,
            path: arg.into(),
        }
    }
}

fn bad(path: &Path, e: BootError) -> ReportError {
    ReportError::BadFile {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Parse the logs and build the stage table.
pub fn collect(logs: &[BootLog]) -> Result<Section, ReportError> {
    if logs.is_empty() {
        return Ok(skipped(
            "boot",
            "no --boot-log given (serial=F, journal=F, time=F or blame=F)",
        ));
    }
    let markers = Markers::default();
    let (mut serial_log, mut time, mut journal, mut blame) = (None, None, None, Vec::new());
    let mut used = Vec::new();
    for log in logs {
        let name = log.path.display().to_string();
        let text = lever_boot::read_file(&log.path).map_err(|e| bad(&log.path, e))?;
        let kind = match log.kind {
            LogKind::Guess if text.contains("Startup finished") => LogKind::Time,
            LogKind::Guess => LogKind::Serial,
            k => k,
        };
        let parsed = match kind {
            LogKind::Serial => serial::parse(&name, &text).map(|s| serial_log = Some(s)),
            LogKind::Time => systemd::parse_time(&name, &text).map(|t| time = Some(t)),
            LogKind::Blame => systemd::parse_blame(&name, &text).map(|b| blame = b),
            LogKind::Journal | LogKind::Guess => {
                journalctl::find(&name, &text, &[&markers.start, &markers.end]).map(|mut f| {
                    let end = f.pop().flatten();
                    let start = f.pop().flatten();
                    journal = Some((start, end));
                })
            }
        };
        parsed.map_err(|e| bad(&log.path, e))?;
        used.push(format!("{kind:?} {name}").to_lowercase());
    }
    let table = stages::build(Sources {
        serial: serial_log.as_ref(),
        time: time.as_ref(),
        journal: journal.as_ref().map(|(s, e)| (s.as_ref(), e.as_ref())),
        markers: &markers,
    });
    let method = format!(
        "lever-boot's stage table (seed 000 §8.3, as `lever boot`) from {}; journal markers `{}` → `{}`",
        used.join(", "),
        markers.start.pattern,
        markers.end.pattern
    );
    let mut section = Section::measured("boot", &method);
    for row in &table.rows {
        let mut m = Metric::new(
            &format!("boot.{}", slug(&row.stage)),
            "ms",
            row.us as f64 / 1000.0,
        )
        .label("stage", &row.stage);
        m.better = Some(Better::Lower);
        section.metrics.push(m);
    }
    let kind = |k: RowKind| match k {
        RowKind::Stage => "stage",
        RowKind::Mark => "mark",
        RowKind::Subtotal => "subtotal",
        RowKind::Total => "total",
    };
    section.detail = serde_json::json!({
        "stages": table.rows.iter().map(|r| serde_json::json!({
            "stage": r.stage, "source": r.source, "calculation": r.calculation,
            "ms": r.us as f64 / 1000.0, "kind": kind(r.kind),
        })).collect::<Vec<_>>(),
        "notes": table.notes,
        "warnings": table.warnings,
        "blame": blame.iter().take(10).map(|b| serde_json::to_value(b).unwrap_or_default()).collect::<Vec<_>>(),
    });
    if table.rows.is_empty() {
        section.status = crate::model::Status::NotMeasured {
            why: format!("the logs gave no boot stage: {}", table.notes.join("; ")),
        };
    }
    Ok(section)
}
