//! `lever trace analyze|export|bench` on a saved trace file.

use crate::args::Global;
use crate::render::trace::ExportResult;
use crate::render::{self, emit, Progress};
use anyhow::Context;
use clap::Args;
use lever_kernel::KernelFs;
use lever_measure::process::{self, Pid};
use lever_trace_analysis::critical::CriticalPathSpec;
use lever_trace_analysis::export::perfetto::export_perfetto_file;
use lever_trace_analysis::ramp::compare::compare_runs;
use lever_trace_analysis::{analyze_source, export_chrome_file, FrameSpec, KpiSpec, Options};
use lever_trace_input::Input;
use std::path::{Path, PathBuf};

/// `lever trace analyze`
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Trace file (`-` for stdin): ftrace text, a trace-cmd trace.dat, or
    /// either compressed with gzip/zstd (told apart by their first bytes);
    /// or a CTF directory (LTTng kernel/UST, perf's CTF output; an LTTng
    /// session's traces below it are merged by time).
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
    #[arg(long, value_name = "NAME=FROM..TO", value_parser = crate::cmd::util::kpi_spec)]
    pub kpi: Vec<String>,
    /// Frame deadline check of a periodic marker: `frame@60hz`,
    /// `vsync@16.6ms` (repeatable).
    #[arg(long, value_name = "MARKER@PERIOD", value_parser = frame_spec)]
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
    /// Who woke whom: waker → wakee edges with counts and latencies.
    #[arg(long)]
    pub wakeups: bool,
    /// What thread TID waited on, recursively through its wakers.
    #[arg(long, value_name = "TID")]
    pub critical_path: Option<i32>,
    /// Start of the --critical-path interval (trace time, `8808.5`).
    #[arg(long, value_name = "T", requires = "critical_path", value_parser = trace_time)]
    pub from: Option<u64>,
    /// End of the --critical-path interval (trace time).
    #[arg(long, value_name = "T", requires = "critical_path", value_parser = trace_time)]
    pub to: Option<u64>,
    /// Lock contention (lock:contention_begin/end; futex from raw_syscalls).
    #[arg(long)]
    pub locks: bool,
    /// Frequency ramp after each idle → busy step (cpu_frequency).
    #[arg(long)]
    pub ramp: bool,
    /// Compare the ramps with another capture of the same load (e.g.
    /// without a uclamp floor), side by side against one target.
    #[arg(long, value_name = "FILE", requires = "ramp")]
    pub baseline: Option<PathBuf>,
    /// Only the ramp steps this task started (comm or TID), in the
    /// comparison.
    #[arg(long, value_name = "TASK", requires = "ramp")]
    pub ramp_task: Option<String>,
    /// Parsing threads (default: every CPU for a file, 1 for stdin).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Per-thread call stacks: function self/total time, calls, worst
    /// durations (LTTng-UST cyg-profile entries/exits, systrace B/E).
    #[arg(long)]
    pub callstack: bool,
    /// Symbols of the traced binary (`nm` output, absolute addresses)
    /// naming cyg-profile function addresses; without it, the ELF files
    /// the trace's statedump names are read where they exist here.
    #[arg(long, value_name = "FILE")]
    pub symbols: Option<PathBuf>,
    /// Write the call stacks' flame graph (SVG, self time) to FILE
    /// (implies --callstack).
    #[arg(long, value_name = "FILE")]
    pub flamegraph: Option<PathBuf>,
}

/// `--frames`' form, checked by clap.
fn frame_spec(text: &str) -> Result<String, String> {
    match FrameSpec::parse(text) {
        Some(_) => Ok(text.to_string()),
        None => Err("expected MARKER@60hz or MARKER@16.6ms".into()),
    }
}

/// A trace timestamp in seconds (`8808.445067`) → ns.
fn trace_time(s: &str) -> Result<u64, String> {
    lever_trace::line::parse_timestamp(s.trim())
        .map(|ns| {
            if s.contains('.') {
                ns
            } else {
                ns * 1_000_000_000
            }
        })
        .ok_or_else(|| format!("{s:?}: expected a trace time in seconds, e.g. 8808.445067"))
}

/// The trace file, or stdin for `-`, detected by its first bytes; with
/// its length when known.
fn open_input(file: &Path) -> anyhow::Result<(Input, Option<u64>)> {
    Ok(lever_trace_input::open_sized(file)?)
}

/// Every CPU for a file; stdin (often a live `trace_pipe`) is parsed on
/// one thread, line by line as it arrives.
fn default_threads(file: &Path) -> usize {
    if file == Path::new("-") {
        return 1;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The input as errors name it (`-` is stdin).
fn input_name(file: &Path) -> PathBuf {
    if file == Path::new("-") {
        PathBuf::from("stdin")
    } else {
        file.to_path_buf()
    }
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
        wakeups: a.wakeups,
        critical_path: a.critical_path.map(|tid| CriticalPathSpec {
            tid,
            from_ns: a.from,
            to_ns: a.to,
        }),
        locks: a.locks,
        ramp: a.ramp,
        callstack: a.callstack || a.flamegraph.is_some(),
        threads: a.threads.unwrap_or_else(|| default_threads(&a.file)),
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
        || opts.wakeups
        || opts.critical_path.is_some()
        || opts.locks
        || opts.ramp
        || opts.callstack
        || !opts.kpis.is_empty()
        || !opts.frames.is_empty());
    if nothing {
        opts = Options {
            kpis: opts.kpis,
            frames: opts.frames,
            top: a.top,
            outlier_factor: a.outlier_factor,
            threads: opts.threads,
            ..Options::all()
        };
    }
    let (input, len) = lever_trace_input::open_sized_with_symbols(&a.file, a.symbols.as_deref())?;
    let progress = Progress::new(format!("parsing {}", a.file.display()));
    let mut report = analyze_source(input, &opts, |b| {
        progress.update(b >> 20, len.map(|l| l >> 20), "MiB")
    })
    .with_context(|| format!("reading {}", a.file.display()))?;
    progress.finish();
    report.summary.require_events(&input_name(&a.file))?;
    if let (Some(ramp), true) = (
        report.ramp.as_mut(),
        a.baseline.is_some() || a.ramp_task.is_some(),
    ) {
        let name = a.baseline.as_ref().map(|b| b.display().to_string());
        let baseline = match &a.baseline {
            Some(b) => Some(open_input(b)?.0),
            None => None,
        };
        let baseline = baseline.zip(name.as_deref());
        compare_runs(ramp, baseline, a.ramp_task.as_deref(), opts.threads)
            .with_context(|| format!("reading {}", name.as_deref().unwrap_or("-")))?;
    }
    if let (Some(svg), Some(cs)) = (&a.flamegraph, &report.callstack) {
        write_flamegraph(svg, &cs.folded, &a.file)?;
    }
    emit(global.json, &report, |r| {
        render::trace::analysis(r, a.top, nothing)
    })
}

/// The call stacks' flame graph (self time in µs per folded stack).
#[cfg(feature = "flamegraph")]
fn write_flamegraph(svg: &Path, folded: &str, trace: &Path) -> anyhow::Result<()> {
    let title = format!("{} (self time, µs)", trace.display());
    lever_flamegraph::perf::write_svg(svg, folded, &title)
        .with_context(|| format!("writing {}", svg.display()))
}

#[cfg(not(feature = "flamegraph"))]
fn write_flamegraph(_svg: &Path, _folded: &str, _trace: &Path) -> anyhow::Result<()> {
    Err(crate::exit::not_in_this_build(
        "lever trace analyze --flamegraph",
        "flamegraph",
    ))
}

/// `lever trace export --format`
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// Chrome trace-event JSON.
    Json,
    /// Perfetto protobuf (ftrace events).
    Perfetto,
}

/// Export a trace to Chrome JSON or a Perfetto trace.
pub fn export(
    global: &Global,
    file: &Path,
    output: &Path,
    format: Option<ExportFormat>,
    symbols: Option<&Path>,
) -> anyhow::Result<()> {
    let format = format.unwrap_or_else(|| {
        let name = output.to_string_lossy();
        if name.ends_with(".pftrace") || name.ends_with(".perfetto-trace") {
            ExportFormat::Perfetto
        } else {
            ExportFormat::Json
        }
    });
    let (input, len) = lever_trace_input::open_sized_with_symbols(file, symbols)?;
    let progress = Progress::new(format!("exporting {}", file.display()));
    let tick = |b: u64| progress.update(b >> 20, len.map(|l| l >> 20), "MiB");
    let (n, left_out, summary) = match format {
        ExportFormat::Json => {
            let (n, summary) = export_chrome_file(input, output, tick)?;
            (n, 0, summary)
        }
        ExportFormat::Perfetto => export_perfetto_file(input, output, tick)?,
    };
    progress.finish();
    summary.require_events(&input_name(file))?;
    let r = ExportResult {
        output: output.to_path_buf(),
        trace_events: n,
        left_out_events: left_out,
        malformed_lines: summary.malformed,
    };
    emit(global.json, &r, render::trace::export)
}

/// Time the parser and the sched analysis on a trace file. Peak RSS is
/// this process's own, from the real `/proc/self` (not `--root`, which may
/// be a simulated board).
pub fn bench(global: &Global, file: &Path, threads: Option<usize>) -> anyhow::Result<()> {
    let start = std::time::Instant::now();
    // Open errors name the path already (checked once here so they keep
    // their type for the exit code); "no events" needs it added.
    lever_trace_input::open(file)?;
    let threads = threads.unwrap_or_else(|| default_threads(file));
    let mut res = lever_trace_analysis::bench::bench(
        || lever_trace_input::open(file).map_err(std::io::Error::other),
        threads,
    )
    .map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidData => anyhow::anyhow!("{}: {e}", file.display()),
        _ => anyhow::Error::new(e),
    })?;
    res.peak_rss_kb = process::status(&KernelFs::system(), Pid::Current)
        .ok()
        .and_then(|s| s.vm_hwm_kb);
    res.process_seconds = Some(start.elapsed().as_secs_f64());
    res.process_cpu_seconds = lever_trace_analysis::bench::process_cpu();
    emit(global.json, &res, render::trace::bench)
}
