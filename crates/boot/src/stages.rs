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
//!
//! The loader rows come from whichever loader wrote the serial log
//! ([`crate::serial`]: Qualcomm XBL/UEFI, U-Boot). Without a serial log,
//! systemd's own `(firmware)` and `(loader)` parts (UEFI machines) are the
//! rows before the kernel, so the rows add up to the total. Without
//! systemd's `(kernel)`, the kernel's printk times in the serial log give
//! the kernel stage ([`crate::printk`]); the total is then "until init".
//! Totals that add systemd parts are the sum of the rows shown; systemd's
//! own `= …` figure (each part rounded to the ms) is quoted beside it.

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
    /// Log lines that were skipped as garbled (`file:line: skipped garbled
    /// line `…`: why`); the rows were computed without them.
    pub warnings: Vec<String>,
    /// The boot loader the serial log was written by (`Qualcomm
    /// XBL/UEFI`, `U-Boot 2024.04-…`), when one was read.
    pub loader: Option<String>,
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

/// Add up a row's `us` under `name`, as a `+`-joined formula.
fn joined(names: &[String]) -> String {
    names.join(" + ")
}

/// Build the table from whatever sources are present.
pub fn build(src: Sources<'_>) -> StageTable {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut warnings = Vec::new();
    let mut loader = None;

    // Before the kernel: the serial log's loader stages, else systemd's
    // (firmware) and (loader) parts.
    let mut before_kernel = None;
    let mut before_names: Vec<String> = Vec::new();
    // How the before-kernel part is named inside a total's formula.
    let mut before_label = String::from("Total before kernel");
    if let Some(s) = src.serial {
        warnings.extend(s.warnings.iter().map(ToString::to_string));
        loader = s.loader_name();
        let bk = s.before_kernel();
        for st in &bk.stages {
            rows.push(row(
                &st.stage,
                &st.source,
                st.calculation.clone(),
                st.us,
                RowKind::Stage,
            ));
            before_names.push(st.stage.clone());
        }
        if let Some(t) = &bk.total {
            rows.push(row(
                &t.stage,
                &t.source,
                t.calculation.clone(),
                t.us,
                RowKind::Subtotal,
            ));
            before_kernel = Some(t.us);
        }
        notes.extend(bk.notes);
    }
    let systemd_before: Vec<(&str, u64)> = src
        .time
        .map(|t| {
            [("Firmware", t.firmware_us), ("Loader", t.loader_us)]
                .into_iter()
                .filter_map(|(n, us)| us.map(|us| (n, us)))
                .collect()
        })
        .unwrap_or_default();
    if before_names.is_empty() && before_kernel.is_none() && !systemd_before.is_empty() {
        // A UEFI machine: systemd reads the firmware's and the boot
        // loader's times from EFI variables; they are rows like any other.
        for (name, us) in &systemd_before {
            rows.push(row(
                name,
                "systemd-analyze",
                format!("{} s ({})", crate::format_s(*us), name.to_ascii_lowercase()),
                *us,
                RowKind::Stage,
            ));
            before_names.push(name.to_string());
        }
        before_kernel = Some(systemd_before.iter().map(|(_, us)| us).sum());
        before_label = joined(&before_names);
    } else if !systemd_before.is_empty() {
        notes.push(
            "systemd-analyze (firmware)/(loader) not used: the serial log measures the time before the kernel"
                .into(),
        );
    } else if src.serial.is_none() {
        notes.push("no serial log (--serial LOG): boot loader stages not measured".into());
    }

    let (mut kernel, mut after_kernel) = (None, None);
    let mut after_names: Vec<String> = Vec::new();
    match src.time {
        Some(t) => {
            for (name, part, value) in [
                ("Kernel total", "kernel", t.kernel_us),
                ("Initrd", "initrd", t.initrd_us),
                ("Userspace", "userspace", t.userspace_us),
            ] {
                if let Some(us) = value {
                    rows.push(row(
                        name,
                        "systemd-analyze",
                        format!("{} s ({part})", crate::format_s(us)),
                        us,
                        RowKind::Stage,
                    ));
                    after_names.push(name.to_string());
                }
            }
            kernel = t.kernel_us;
            if let (Some(k), Some(u)) = (t.kernel_us, t.userspace_us) {
                after_kernel = Some(k + t.initrd_us.unwrap_or(0) + u);
            }
        }
        None => {
            notes.push("no systemd-analyze time: kernel and userspace times not measured".into())
        }
    }
    // Without systemd's (kernel), the kernel's own printk times give it.
    if kernel.is_none() {
        if let Some(k) = src.serial.and_then(|s| s.kernel.as_ref()) {
            match (k.kernel_us(), &k.init) {
                (Some(us), Some(init)) => {
                    rows.push(row(
                        "Kernel total",
                        "kernel printk",
                        format!(
                            "`{}` [{}] (line {}) − first printk [{}] (line {})",
                            init.text,
                            crate::format_s(init.us),
                            init.line,
                            crate::format_s(k.first.us),
                            k.first.line
                        ),
                        us,
                        RowKind::Stage,
                    ));
                    kernel = Some(us);
                }
                _ => notes.push(
                    "kernel printk: no `Run /sbin/init as init process` or `Freeing unused kernel memory` line: kernel stage not measured"
                        .into(),
                ),
            }
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

    let systemd_total = src
        .time
        .and_then(|t| t.total_us)
        .map(|us| {
            format!(
                "; systemd prints {} s, each part rounded",
                crate::format_s(us)
            )
        })
        .unwrap_or_default();
    let total = match (before_kernel, kernel, span, after_kernel) {
        (Some(b), Some(k), Some(d), _) => Some((
            format!("Total until {}", src.markers.end.name),
            format!("{} + Kernel total + (end − start)", joined(&before_names)),
            b + k + d,
        )),
        (Some(b), _, _, Some(a)) => Some((
            "Total until userspace finished".to_string(),
            format!("{before_label} + {}{systemd_total}", joined(&after_names)),
            b + a,
        )),
        (Some(b), Some(k), _, None) => Some((
            "Total until init".to_string(),
            format!("{before_label} + Kernel total"),
            b + k,
        )),
        (Some(b), None, _, None) => {
            Some(("Total before kernel".to_string(), before_label.clone(), b))
        }
        (None, _, _, Some(a)) => Some((
            "Total (systemd-analyze)".to_string(),
            format!(
                "{} (no boot loader stages{systemd_total})",
                joined(&after_names)
            ),
            a,
        )),
        (None, _, _, None) => None,
    };
    if let Some((stage, calc, us)) = total {
        match rows.iter_mut().find(|r| r.kind == RowKind::Subtotal) {
            Some(r) if stage == "Total before kernel" => r.kind = RowKind::Total,
            _ => rows.push(row(&stage, "", calc, us, RowKind::Total)),
        }
    }
    StageTable {
        rows,
        notes,
        warnings,
        loader,
    }
}
