//! The boot stage table of seed 000 §8.3 and its total.
//!
//! | stage | source | value |
//! |---|---|---|
//! | PBL+XBL | serial log | `UEFI Start` |
//! | Core UEFI | serial log | `UEFI Total` |
//! | Kernel loader | serial log | `Exit EBS` − (Core UEFI + PBL+XBL) |
//! | Kernel total | systemd-analyze | `(kernel)` |
//! | start marker (Kernel init) | journal | time of the start line |
//! | end marker (Recorder init) | journal | time of the end line |
//! | end − start | journal | |
//! | **Total until end** | | PBL+XBL + Core UEFI + Kernel loader + Kernel total + (end − start) |
//!
//! Seed 000 §8.3's example: 1.818 + 1.071 + 0.580 + 3.300 + (6.494 − 1.854)
//! = 11.409 s. When the journal markers are missing the total falls back to
//! "until userspace finished" (before kernel + systemd's kernel, initrd and
//! userspace); with the serial log alone it is the total before the kernel.

use serde::Serialize;

use crate::journalctl::Found;
use crate::serial::SerialTimes;
use crate::stage_markers::Markers;
use crate::systemd::SystemdTime;

/// What a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowKind {
    /// A duration.
    Stage,
    /// A point in time since the kernel started (journal markers).
    Mark,
    /// A sum of the stages above it.
    Subtotal,
    /// The overall total.
    Total,
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// Stage name.
    pub stage: String,
    /// `serial log`, `systemd-analyze`, `journal`, or empty for totals.
    pub source: String,
    /// The marker or formula the value comes from.
    pub calculation: String,
    /// The value, µs.
    pub us: u64,
    /// Stage, mark, subtotal or total.
    pub kind: RowKind,
}

/// The inputs that were available.
#[derive(Debug, Clone, Copy)]
pub struct Sources<'a> {
    /// Parsed serial log.
    pub serial: Option<&'a SerialTimes>,
    /// Parsed `systemd-analyze time`.
    pub time: Option<&'a SystemdTime>,
    /// Journal markers found (start, end), when a journal was read.
    pub journal: Option<(Option<&'a Found>, Option<&'a Found>)>,
    /// The markers that were searched for.
    pub markers: &'a Markers,
}

/// The stage table and what could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StageTable {
    /// Rows in boot order, the total last.
    pub rows: Vec<Row>,
    /// Why rows are missing.
    pub notes: Vec<String>,
}

impl StageTable {
    /// The total row, if one could be computed.
    pub fn total(&self) -> Option<&Row> {
        self.rows.iter().find(|r| r.kind == RowKind::Total)
    }

    /// The row named `stage`.
    pub fn get(&self, stage: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.stage == stage)
    }
}

fn row(stage: &str, source: &str, calculation: String, us: u64, kind: RowKind) -> Row {
    Row {
        stage: stage.to_string(),
        source: source.to_string(),
        calculation,
        us,
        kind,
    }
}

/// Build the table from whatever sources are present.
pub fn build(src: Sources<'_>) -> StageTable {
    let ms = |us: u64| crate::format_ms(us);
    let mut rows = Vec::new();
    let mut notes = Vec::new();

    let mut before_kernel = None;
    match src.serial {
        Some(s) => {
            if let Some(us) = s.pbl_xbl_us() {
                rows.push(row(
                    "PBL+XBL",
                    "serial log",
                    format!("UEFI Start [{}]", ms(us)),
                    us,
                    RowKind::Stage,
                ));
            }
            if let Some(us) = s.core_uefi_us() {
                rows.push(row(
                    "Core UEFI",
                    "serial log",
                    format!("UEFI Total : {} ms", ms(us)),
                    us,
                    RowKind::Stage,
                ));
            }
            match (s.kernel_loader_us(), s.exit_ebs) {
                (Some(us), Some(ebs)) => {
                    rows.push(row(
                        "Kernel loader",
                        "serial log",
                        format!("Exit EBS [{}] − (Core UEFI + PBL+XBL)", ms(ebs.us)),
                        us,
                        RowKind::Stage,
                    ));
                    rows.push(row(
                        "Total before kernel",
                        "serial log",
                        format!("Exit EBS [{}]", ms(ebs.us)),
                        ebs.us,
                        RowKind::Subtotal,
                    ));
                    before_kernel = Some(ebs.us);
                }
                _ => notes.push(
                    "serial log: kernel loader needs `UEFI Start`, `UEFI Total` and `Exit EBS`; some are missing".into(),
                ),
            }
        }
        None => notes.push("no serial log (--serial LOG): boot loader stages not measured".into()),
    }

    let (mut kernel, mut after_kernel) = (None, None);
    match src.time {
        Some(t) => {
            if let Some(us) = t.kernel_us {
                rows.push(row(
                    "Kernel total",
                    "systemd-analyze",
                    format!("{} s (kernel)", crate::format_s(us)),
                    us,
                    RowKind::Stage,
                ));
                kernel = Some(us);
            }
            if let Some(us) = t.initrd_us {
                rows.push(row(
                    "Initrd",
                    "systemd-analyze",
                    format!("{} s (initrd)", crate::format_s(us)),
                    us,
                    RowKind::Stage,
                ));
            }
            if let Some(us) = t.userspace_us {
                rows.push(row(
                    "Userspace",
                    "systemd-analyze",
                    format!("{} s (userspace)", crate::format_s(us)),
                    us,
                    RowKind::Stage,
                ));
            }
            if let (Some(k), Some(u)) = (t.kernel_us, t.userspace_us) {
                after_kernel = Some(k + t.initrd_us.unwrap_or(0) + u);
            }
        }
        None => {
            notes.push("no systemd-analyze time: kernel and userspace times not measured".into())
        }
    }

    let mut span = None;
    match src.journal {
        Some((start, end)) => {
            for (found, marker) in [(start, &src.markers.start), (end, &src.markers.end)] {
                match found {
                    Some(f) => rows.push(row(
                        &f.name,
                        "journal",
                        format!(
                            "`{}` at [{}] (line {})",
                            f.pattern,
                            crate::format_s(f.us),
                            f.line
                        ),
                        f.us,
                        RowKind::Mark,
                    )),
                    None => notes.push(format!(
                        "journal: marker `{}` (`{}`) not found",
                        marker.name, marker.pattern
                    )),
                }
            }
            if let (Some(s), Some(e)) = (start, end) {
                match e.us.checked_sub(s.us) {
                    Some(d) => {
                        rows.push(row(
                            &format!("{} − {}", e.name, s.name),
                            "journal",
                            format!("{} − {}", crate::format_s(e.us), crate::format_s(s.us)),
                            d,
                            RowKind::Stage,
                        ));
                        span = Some(d);
                    }
                    None => notes.push(format!(
                        "journal: end marker `{}` ({} s) comes before start marker `{}` ({} s)",
                        e.name,
                        crate::format_s(e.us),
                        s.name,
                        crate::format_s(s.us)
                    )),
                }
            }
        }
        None => notes.push("no journal (--journal FILE): start/end markers not measured".into()),
    }

    let total = match (before_kernel, kernel, span, after_kernel) {
        (Some(b), Some(k), Some(d), _) => Some((
            format!("Total until {}", src.markers.end.name),
            "PBL+XBL + Core UEFI + Kernel loader + Kernel total + (end − start)".to_string(),
            b + k + d,
        )),
        (Some(b), _, _, Some(a)) => Some((
            "Total until userspace finished".to_string(),
            "Total before kernel + kernel + initrd + userspace".to_string(),
            b + a,
        )),
        (Some(b), _, _, None) => {
            Some(("Total before kernel".to_string(), "Exit EBS".to_string(), b))
        }
        (None, _, _, _) => src.time.and_then(|t| t.total_us).map(|us| {
            (
                "Total (systemd-analyze)".to_string(),
                "systemd's own total (no boot loader stages)".to_string(),
                us,
            )
        }),
    };
    if let Some((stage, calc, us)) = total {
        if !(stage == "Total before kernel" && rows.iter().any(|r| r.kind == RowKind::Subtotal)) {
            rows.push(row(&stage, "", calc, us, RowKind::Total));
        } else if let Some(r) = rows.iter_mut().find(|r| r.kind == RowKind::Subtotal) {
            r.kind = RowKind::Total;
        }
    }
    StageTable { rows, notes }
}
