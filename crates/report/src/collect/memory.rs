//! The `memory` section: seed 000 §8.3's memory map after boot and during
//! each use case, a column each, computed by `lever-measure` exactly as
//! `lever mem map` does; while a use case runs the map is sampled every
//! interval and the column is the sample with the least free memory (the
//! whole series is kept for the page's time series).
//!
//! Beside each use case's memory, its CPU (seed 000 §7.1, as `lever top --
//! CMD` measures it, in the same sampling loop): the use case's processes
//! together and each by name (`cpu.usecase`, `cpu.process`, % of one
//! core), each core's busy % (`cpu.core`) and the machine's total
//! (`cpu.total`, 0–N×100 %), each a mean over the use case with the
//! intervals as its samples.

use super::{not_this_machine, skipped};
use crate::model::{Better, Metric, Section};
use crate::ReportError;
use lever_kernel::KernelFs;
use lever_measure::memmap::{
    sample_command, CommandSamples, MemSample, MemoryMap, SampleCommandError, StaticMemory,
};
use lever_measure::top::{self, ReadOptions, TopInterval, TopRun, TopWatcher};
use std::collections::BTreeMap;
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

/// Run `argv`, sampling the memory map (while it runs) and the CPU (also
/// right after it exits, when its /proc/PID still has its final times).
fn sample_usecase(
    fs: &KernelFs,
    fixed: &StaticMemory,
    argv: &[String],
    interval: Duration,
) -> Result<(CommandSamples, Option<TopRun>), SampleCommandError> {
    let mut cpu: Option<TopWatcher> = None;
    let run = sample_command(fs, fixed, None, argv, interval, |pid, tick| {
        let watcher = cpu.get_or_insert_with(|| {
            TopWatcher::new(fs, ReadOptions::default(), top::user_hz(), Some(pid))
        });
        watcher.sample(tick.elapsed.as_secs_f64()).map(|_| ())
    })?;
    Ok((run, cpu.map(TopWatcher::finish)))
}

/// A mean with its intervals as samples, % (whiskers and the comparison's
/// significance test).
fn cpu_metric(name: &str, usecase: &str, mean: f64, samples: Vec<f64>) -> Metric {
    let mut m = Metric::new(name, "%", mean).label("usecase", usecase);
    m.samples = samples;
    m
}

/// The use case's CPU as metrics, and its column and series details.
fn cpu_metrics(
    run: &TopRun,
    usecase: &str,
    out: &mut Vec<Metric>,
) -> (serde_json::Value, serde_json::Value) {
    let s = &run.summary;
    let series = |f: &dyn Fn(&TopInterval) -> f64| run.series.iter().map(f).collect::<Vec<f64>>();
    out.push(cpu_metric(
        "cpu.total",
        usecase,
        s.total_pct,
        series(&|i| i.total_pct),
    ));
    let mut mine = cpu_metric(
        "cpu.usecase",
        usecase,
        s.command_pct.unwrap_or(0.0),
        series(&TopInterval::command_pct),
    );
    mine.better = Some(Better::Lower);
    out.push(mine);
    for core in &s.cores {
        let busy = series(&|i| {
            i.cores
                .iter()
                .find(|c| c.cpu == core.cpu)
                .map_or(0.0, |c| c.busy_pct)
        });
        out.push(
            cpu_metric("cpu.core", usecase, core.busy_pct, busy)
                .label("cpu", &core.cpu.to_string()),
        );
    }
    // The use case's processes by name: names stay the same across runs,
    // pids do not. Each with the CPU of its children that ended between
    // two samples and showed in no row, as the use case's figure has it.
    let mut by_name: BTreeMap<&str, f64> = BTreeMap::new();
    for t in s.tasks.iter().filter(|t| t.in_command) {
        *by_name.entry(t.comm.as_str()).or_default() += t.cpu_pct + t.children_pct;
    }
    for (name, pct) in by_name {
        let per_interval = series(&|i| {
            i.tasks
                .iter()
                .filter(|t| t.in_command && t.comm == name)
                .map(|t| t.cpu_pct() + t.children_pct)
                .sum()
        });
        let mut m = cpu_metric("cpu.process", usecase, pct, per_interval).label("process", name);
        m.better = Some(Better::Lower);
        out.push(m);
    }
    let processes: Vec<serde_json::Value> = s
        .tasks
        .iter()
        .filter(|t| t.in_command)
        .map(|t| {
            serde_json::json!({
                "pid": t.id, "comm": t.comm, "cpu_pct": t.cpu_pct, "user_pct": t.user_pct,
                "system_pct": t.system_pct, "max_pct": t.max_pct, "cpu_s": t.cpu_s,
                "voluntary_ctxt_switches": t.voluntary_ctxt_switches,
                "nonvoluntary_ctxt_switches": t.nonvoluntary_ctxt_switches,
                "processor": t.processor,
            })
        })
        .collect();
    let column = serde_json::json!({
        "window_s": s.window_s, "intervals": s.intervals, "capacity_pct": s.capacity_pct,
        "total_pct": s.total_pct, "usecase_pct": s.command_pct, "cores": s.cores,
        "processes": processes,
    });
    let series = serde_json::json!({
        "t_s": series(&|i| i.t_s),
        "total_pct": series(&|i| i.total_pct),
        "usecase_pct": series(&TopInterval::command_pct),
    });
    (column, series)
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
         during a use case: `sh -c CMD`, sampled every {1} s, the sample with the least free memory; \
         beside it the use case's CPU as `lever top -- CMD` measures it (/proc/PID/stat utime+stime of `sh` and its descendants, \
         /proc/stat per core; % of one core, the total up to N×100 %), the mean over the use case",
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
        match sample_usecase(fs, &fixed, &argv, interval) {
            Ok((run, cpu)) => match run.peak() {
                Some((at, map)) => {
                    metrics(map, &uc.name, &mut section.metrics);
                    // The first tick always samples, so the CPU is there
                    // whenever the memory is.
                    let (cpu_column, cpu_series) = match &cpu {
                        Some(cpu) => cpu_metrics(cpu, &uc.name, &mut section.metrics),
                        None => (serde_json::Value::Null, serde_json::Value::Null),
                    };
                    columns.push(serde_json::json!({
                        "usecase": uc.name, "command": uc.command, "exit_code": run.status.code(),
                        "samples": run.samples.len(), "peak_at_s": at, "unknown": unknowns(map),
                        "cpu": cpu_column,
                    }));
                    series.push(serde_json::json!({
                        "usecase": uc.name,
                        "t_s": run.samples.iter().map(|(t, _)| *t).collect::<Vec<_>>(),
                        "free_kb": run.samples.iter().map(|(_, m)| m.free.free_kb).collect::<Vec<_>>(),
                        "apps_framework_kb": run.samples.iter().map(|(_, m)| m.apps_framework_kb).collect::<Vec<_>>(),
                        "cpu": cpu_series,
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
