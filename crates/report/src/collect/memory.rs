//! The `memory` section: seed 000 §8.3's memory map after boot and during
//! each use case, a column each, computed by `lever-measure` exactly as
//! `lever mem map` does; while a use case runs the map is sampled every
//! interval and the column is the sample with the least free memory (the
//! whole series is kept for the page's time series).

use super::{not_this_machine, skipped};
use crate::model::{Better, Metric, Section};
use crate::ReportError;
use lever_kernel::KernelFs;
use lever_measure::memmap::{sample_command, MemSample, MemoryMap, StaticMemory};
use std::time::Duration;

/// One `--usecase NAME=CMD`: the command runs with `sh -c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UseCase {
    /// Column name.
    pub name: String,
    /// The shell command.
    pub command: String,
}

impl UseCase {
    /// Parse `NAME=CMD`.
    pub fn parse(arg: &str) -> Result<UseCase, ReportError> {
        match arg.split_once('=') {
            Some((name, cmd)) if !name.trim().is_empty() && !cmd.trim().is_empty() => Ok(UseCase {
                name: name.trim().to_string(),
                command: cmd.to_string(),
            }),
            _ => Err(ReportError::BadOption {
                option: "--usecase",
                value: arg.to_string(),
                expected: "NAME=CMD, e.g. camera='gst-launch-1.0 ...'".into(),
            }),
        }
    }
}

/// The column name of the map after boot.
pub const AFTER_BOOT: &str = "after boot";

/// The rows of §8.3's table as metrics of one column.
fn metrics(map: &MemoryMap, column: &str, out: &mut Vec<Metric>) {
    let mut push = |name: &str, kb: Option<f64>, better: Option<Better>| {
        if let Some(kb) = kb {
            let mut m = Metric::new(&format!("memory.{name}"), "kB", kb).label("usecase", column);
            m.better = better;
            out.push(m);
        }
    };
    push(
        "total_ram",
        map.total_ram.value().map(|t| t.kb as f64),
        None,
    );
    push(
        "non_linux",
        map.non_linux_kb.value().map(|&v| v as f64),
        None,
    );
    push(
        "linux_ram",
        map.linux_ram_kb.value().map(|&v| v as f64),
        None,
    );
    push(
        "kernel_static",
        map.kernel_static_kb.value().map(|&v| v as f64),
        None,
    );
    push("mem_total", Some(map.mem_total_kb as f64), None);
    push(
        "apps_framework",
        Some(map.apps_framework_kb as f64),
        Some(Better::Lower),
    );
    push("free", Some(map.free.free_kb as f64), Some(Better::Higher));
    for item in &map.kernel_dynamic {
        if let Some(&kb) = item.kb.value() {
            let mut m = Metric::new("memory.kernel_dynamic", "kB", kb as f64)
                .label("usecase", column)
                .label("item", item.name);
            m.better = Some(Better::Lower);
            out.push(m);
        }
    }
}

/// What is unknown in a map, and why.
fn unknowns(map: &MemoryMap) -> Vec<String> {
    let mut why = Vec::new();
    if let lever_measure::avail::Avail::Unavailable(r) = &map.total_ram {
        why.push(format!("total RAM: {r}"));
    }
    if let lever_measure::avail::Avail::Unavailable(r) = &map.linux_ram_kb {
        why.push(format!("Linux RAM: {r}"));
    }
    why
}

/// The map after boot, then one column per use case.
pub fn collect(fs: &KernelFs, usecases: &[UseCase], interval: Duration) -> Section {
    let fixed = match StaticMemory::read(fs, None, None) {
        Ok(f) => f,
        Err(e) => {
            return skipped(
                "memory",
                format!("cannot read the static memory facts: {e}"),
            )
        }
    };
    let after = match MemSample::read(fs).and_then(|s| MemoryMap::new(&fixed, &s, None)) {
        Ok(m) => m,
        Err(e) => return skipped("memory", format!("cannot read the memory map: {e}")),
    };
    let method = format!(
        "lever-measure's memory map (seed 000 §8.3, as `lever mem map`) from files under {0}: /proc/meminfo, /proc/vmstat, /proc/iomem, the device tree and the kernel log; \
         during a use case: `sh -c CMD`, sampled every {1} s, the sample with the least free memory",
        fs.root().display(),
        interval.as_secs_f64()
    );
    let mut section = Section::measured("memory", &method);
    metrics(&after, AFTER_BOOT, &mut section.metrics);
    let mut columns = vec![serde_json::json!({
        "usecase": AFTER_BOOT, "unknown": unknowns(&after),
        "page_size_kb": after.page_size.kb,
    })];
    let mut series = Vec::new();
    for uc in usecases {
        if let Some(why) = not_this_machine(fs) {
            columns.push(serde_json::json!({ "usecase": uc.name, "command": uc.command, "not_measured": why }));
            continue;
        }
        let argv = ["sh".to_string(), "-c".to_string(), uc.command.clone()];
        match sample_command(fs, &fixed, None, &argv, interval, |_| {}) {
            Ok(run) => match run.peak() {
                Some((at, map)) => {
                    metrics(map, &uc.name, &mut section.metrics);
                    columns.push(serde_json::json!({
                        "usecase": uc.name, "command": uc.command, "exit_code": run.status.code(),
                        "samples": run.samples.len(), "peak_at_s": at, "unknown": unknowns(map),
                    }));
                    series.push(serde_json::json!({
                        "usecase": uc.name,
                        "t_s": run.samples.iter().map(|(t, _)| *t).collect::<Vec<_>>(),
                        "free_kb": run.samples.iter().map(|(_, m)| m.free.free_kb).collect::<Vec<_>>(),
                        "apps_framework_kb": run.samples.iter().map(|(_, m)| m.apps_framework_kb).collect::<Vec<_>>(),
                    }));
                }
                None => columns.push(serde_json::json!({
                    "usecase": uc.name, "command": uc.command, "exit_code": run.status.code(),
                    "not_measured": "it ended before the first sample was taken",
                })),
            },
            Err(e) => columns.push(serde_json::json!({
                "usecase": uc.name, "command": uc.command, "not_measured": e.to_string(),
            })),
        }
    }
    section.detail = serde_json::json!({ "columns": columns, "series": series });
    section
}
