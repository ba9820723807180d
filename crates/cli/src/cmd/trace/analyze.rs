//! `lever trace analyze|export|bench` on a saved trace file.

use crate::args::Global;
use crate::render::trace::{BenchResult, ExportResult};
use crate::render::{self, emit, Progress};
use anyhow::{bail, Context};
use clap::Args;
use lever_kernel::KernelFs;
use lever_trace_analysis::{
    analyze as analyze_trace, export_chrome_file, FrameSpec, KpiSpec, Options,
};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `lever trace analyze`
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Trace text file (`-` for stdin).
    pub file: PathBuf,
    /// Scheduling per thread and per CPU.
    #[arg(long)]
    pub sched: bool,
    /// CPU frequency residency.
    #[arg(long)]
    pub freq: bool,
    /// Idle residency, idle vs active, C-state latencies.
    #[arg(long)]
    pub idle: bool,
    /// Trace markers and spans.
    #[arg(long)]
    pub markers: bool,
    /// KPI from one marker to another: `record=Connect..FirstVidFrame`
    /// (repeatable). FROM/TO are marker names (`B Connect`, `B|pid|Connect`,
    /// `S Connect`) or the exact text of a plain marker (`lever trace mark
    /// start` … `mark stop`: `load=start..stop`).
    #[arg(long, value_name = "NAME=FROM..TO")]
    pub kpi: Vec<String>,
    /// Frame deadline check of a periodic marker: `frame@60hz`,
    /// `vsync@16.6ms` (repeatable).
    #[arg(long, value_name = "MARKER@PERIOD")]
    pub frames: Vec<String>,
    /// function_graph statistics.
    #[arg(long)]
    pub funcgraph: bool,
    /// preemptoff/irqsoff report.
    #[arg(long)]
    pub latency: bool,
    /// Rows per table.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// function_graph outliers: occurrences above this × median.
    #[arg(long, default_value_t = 5.0)]
    pub outlier_factor: f64,
}

/// The trace file, or stdin for `-`; with its length when known.
fn open_input(file: &Path) -> anyhow::Result<(Box<dyn Read>, Option<u64>)> {
    if file == Path::new("-") {
        return Ok((Box::new(std::io::stdin().lock()), None));
    }
    let (f, len) = lever_trace::open(file)?;
    Ok((Box::new(f), len))
}

/// Analyze a trace file.
pub fn analyze(global: &Global, a: AnalyzeArgs) -> anyhow::Result<()> {
    let mut opts = Options {
        sched: a.sched,
        freq: a.freq,
        idle: a.idle,
        markers: a.markers,
        funcgraph: a.funcgraph,
        latency: a.latency,
        top: a.top,
        outlier_factor: a.outlier_factor,
        ..Options::default()
    };
    for k in &a.kpi {
        opts.kpis.push(KpiSpec::parse(k).with_context(|| {
            format!("--kpi {k:?}: expected NAME=FROM..TO, e.g. record=Connect..FirstVidFrame or load=start..stop")
        })?);
    }
    for f in &a.frames {
        opts.frames.push(
            FrameSpec::parse(f).with_context(|| {
                format!("--frames {f:?}: expected MARKER@60hz or MARKER@16.6ms")
            })?,
        );
    }
    let nothing = !(opts.sched
        || opts.freq
        || opts.idle
        || opts.markers
        || opts.funcgraph
        || opts.latency
        || !opts.kpis.is_empty()
        || !opts.frames.is_empty());
    if nothing {
        opts = Options {
            kpis: opts.kpis,
            frames: opts.frames,
            top: a.top,
            outlier_factor: a.outlier_factor,
            ..Options::all()
        };
    }
    let (input, len) = open_input(&a.file)?;
    let progress = Progress::new(format!("parsing {}", a.file.display()));
    let report = analyze_trace(input, &opts, |b| {
        progress.update(b >> 20, len.map(|l| l >> 20), "MiB")
    })
    .with_context(|| format!("reading {}", a.file.display()))?;
    progress.finish();
    emit(global.json, &report, |r| {
        render::trace::analysis(r, a.top, nothing)
    })
}

/// Export a trace to Chrome JSON.
pub fn export(global: &Global, file: &Path, output: &Path) -> anyhow::Result<()> {
    let (input, len) = open_input(file)?;
    let progress = Progress::new(format!("exporting {}", file.display()));
    let (n, summary) = export_chrome_file(input, output, |b| {
        progress.update(b >> 20, len.map(|l| l >> 20), "MiB")
    })?;
    progress.finish();
    let r = ExportResult {
        output: output.to_path_buf(),
        trace_events: n,
        malformed_lines: summary.malformed,
    };
    emit(global.json, &r, render::trace::export)
}

/// Time the parser and the sched analysis on a trace file.
pub fn bench(global: &Global, file: &Path) -> anyhow::Result<()> {
    let open = || lever_trace::open(file).map(|(f, _)| f);
    // Warm the page cache so the figure is the parser's, not the disk's.
    std::io::copy(&mut open()?, &mut std::io::sink())?;
    let fs = KernelFs::new(&global.root);
    // On-CPU time of this thread (ns), so a loaded machine does not skew
    // the figure: /proc/thread-self/schedstat's first field.
    let cpu_ns = || -> Option<u64> {
        fs.read_optional("/proc/thread-self/schedstat")
            .ok()
            .flatten()?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    let c0 = cpu_ns();
    let t0 = Instant::now();
    let summary = lever_trace::for_each_line(open()?, |_, _| {}, |_| {})?;
    let parse = t0.elapsed().as_secs_f64();
    let c1 = cpu_ns();
    let t1 = Instant::now();
    let opts = Options {
        sched: true,
        ..Options::default()
    };
    let r = analyze_trace(open()?, &opts, |_| {})?;
    let sched = t1.elapsed().as_secs_f64();
    let c2 = cpu_ns();
    let parse_cpu = c0.zip(c1).map(|(a, b)| b.saturating_sub(a) as f64 / 1e9);
    let sched_cpu = c1.zip(c2).map(|(a, b)| b.saturating_sub(a) as f64 / 1e9);
    if r.summary.events == 0 {
        bail!("{}: no events", file.display());
    }
    let peak_rss_kb = fs
        .read_optional("/proc/self/status")
        .ok()
        .flatten()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        });
    let res = BenchResult {
        bytes: summary.bytes,
        lines: summary.lines,
        events: summary.events,
        parse_seconds: parse,
        parse_cpu_seconds: parse_cpu,
        parse_mb_per_cpu_s: parse_cpu.map(|c| summary.bytes as f64 / 1e6 / c),
        sched_cpu_seconds: sched_cpu,
        parse_mb_per_s: summary.bytes as f64 / 1e6 / parse,
        parse_events_per_s: summary.events as f64 / parse,
        sched_seconds: sched,
        sched_events_per_s: r.summary.events as f64 / sched,
        peak_rss_kb,
    };
    emit(global.json, &res, render::trace::bench)
}
