//! `lever trace`: capture through tracefs, analyze, export, mark.

use crate::args::Global;
use crate::cmd::util::{spawn, Progress};
use crate::render::{print_json, Table};
use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use lever_kernel::KernelFs;
use lever_trace::capture::{Capture, CaptureConfig, Target, Tracefs};
use lever_trace_analysis::stats::{fmt_ns, pct};
use lever_trace_analysis::{analyze, export_chrome, FrameSpec, KpiSpec, Options, Report};
use serde::Serialize;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// `lever trace ...`
#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Record a trace through tracefs (seed 000 §4.1) into a private
    /// instance, leaving tracefs as found (also on Ctrl-C or a failing
    /// command).
    Record(RecordArgs),
    /// Analyze a saved `trace`/`trace_pipe` text file.
    Analyze(AnalyzeArgs),
    /// Convert a trace to Chrome trace JSON (opens in Perfetto UI).
    Export {
        /// Trace text file.
        file: PathBuf,
        /// Output JSON file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Write TEXT to trace_marker (e.g. `B Connect`, `E|1234`).
    Mark {
        /// Marker text.
        text: String,
    },
    /// Measure parser throughput and full analysis time on FILE.
    Bench {
        /// Trace text file.
        file: PathBuf,
    },
}

/// `lever trace record`
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Events, comma-separated: a system (`sched`), `sched:sched_switch`
    /// or a bare event name. Default: sched_switch, sched_waking,
    /// sched_wakeup, sched_wakeup_new, sched_migrate_task, cpu_frequency,
    /// cpu_idle, irq, and markers (always on).
    #[arg(short, long, value_delimiter = ',')]
    pub events: Vec<String>,
    /// Tracer (function, function_graph, irqsoff, preemptoff, ...).
    #[arg(long)]
    pub tracer: Option<String>,
    /// Per-CPU buffer size in KiB (seed 000 §4.1 uses 25600).
    #[arg(long, value_name = "N")]
    pub buffer_kb: Option<u64>,
    /// Record for this many seconds (default 5 without a command).
    #[arg(long, value_name = "S", conflicts_with = "command")]
    pub duration: Option<f64>,
    /// Record into the top-level buffer (state saved and restored) instead
    /// of a private instance.
    #[arg(long)]
    pub top_level: bool,
    /// Output file (the `trace` text).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Command to run while recording (after `--`).
    #[arg(last = true)]
    pub command: Vec<String>,
}

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
    /// (repeatable).
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

const DEFAULT_EVENTS: &[&str] = &[
    "sched:sched_switch",
    "sched:sched_waking",
    "sched:sched_wakeup",
    "sched:sched_wakeup_new",
    "sched:sched_migrate_task",
    "power:cpu_frequency",
    "power:cpu_idle",
    "irq",
];

/// Run a `lever trace` command.
pub fn run(global: &Global, cmd: TraceCommand) -> anyhow::Result<()> {
    match cmd {
        TraceCommand::Record(a) => record(global, a),
        TraceCommand::Analyze(a) => analyze_cmd(global, a),
        TraceCommand::Export { file, output } => export(global, &file, &output),
        TraceCommand::Mark { text } => {
            let fs = KernelFs::new(&global.root);
            let tfs = Tracefs::locate_or_mount(&fs)?;
            tfs.mark(&text)?;
            Ok(())
        }
        TraceCommand::Bench { file } => bench(global, &file),
    }
}

#[derive(Serialize)]
struct RecordResult {
    output: PathBuf,
    bytes: u64,
    target: String,
    seconds: f64,
    command_status: Option<i32>,
}

fn record(global: &Global, a: RecordArgs) -> anyhow::Result<()> {
    let fs = KernelFs::new(&global.root);
    let tfs = Tracefs::locate_or_mount(&fs)?;
    let events: Vec<String> = if a.events.is_empty() {
        DEFAULT_EVENTS
            .iter()
            .map(|e| e.to_string())
            .filter(|e| {
                // Defaults the kernel lacks are skipped, not errors.
                let p = e.replace(':', "/");
                fs.exists(&format!("{}/events/{p}/enable", tfs.dir()))
            })
            .collect()
    } else {
        a.events.clone()
    };
    let cfg = CaptureConfig {
        events,
        tracer: a.tracer.clone(),
        buffer_kb: a.buffer_kb,
        top_level: a.top_level,
    };
    // Ctrl-C and SIGTERM become a message instead of killing us, so the
    // capture is saved and tracefs restored; the command (same process
    // group) gets the terminal's SIGINT itself.
    let (tx, rx) = mpsc::channel::<i32>();
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
    ])
    .context("installing the signal handler")?;
    let handle = signals.handle();
    let sig_thread = std::thread::spawn(move || {
        for s in signals.forever() {
            if tx.send(s).is_err() {
                break;
            }
        }
    });
    let result = (|| -> anyhow::Result<RecordResult> {
        let cap = Capture::start(&tfs, &cfg)?;
        let target = match cap.target() {
            Target::Instance(d) => format!("instance {d}"),
            Target::TopLevel(_) => "top-level buffer (state saved)".to_string(),
        };
        let start = Instant::now();
        let mut status = None;
        if a.command.is_empty() {
            let d = Duration::from_secs_f64(a.duration.unwrap_or(5.0).max(0.0));
            if rx.recv_timeout(d).is_ok() {
                eprintln!("lever: interrupted; saving the trace and restoring tracefs");
            }
        } else {
            // The instance name, so the command can use it (e.g.
            // `trace-cmd extract -B $LEVER_TRACE_INSTANCE`).
            if let Target::Instance(d) = cap.target() {
                let name = d.rsplit('/').next().unwrap_or(d);
                std::env::set_var("LEVER_TRACE_INSTANCE", name);
            }
            let mut child = spawn(&a.command)?;
            let st = child.wait().context("waiting for the command")?;
            status = st.code();
            if !st.success() {
                eprintln!("lever: command exited with {st}; trace saved anyway");
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        let bytes = cap.finish(&a.output)?;
        Ok(RecordResult {
            output: a.output.clone(),
            bytes,
            target,
            seconds,
            command_status: status,
        })
    })();
    handle.close();
    let _ = sig_thread.join();
    let r = result?;
    if global.json {
        print_json(&r)?;
    } else {
        println!(
            "recorded {:.1} s into {}: {} bytes → {}",
            r.seconds,
            r.target,
            r.bytes,
            r.output.display()
        );
    }
    Ok(())
}

fn open_input(file: &Path) -> anyhow::Result<(Box<dyn std::io::Read>, Option<u64>)> {
    if file == Path::new("-") {
        return Ok((Box::new(std::io::stdin().lock()), None));
    }
    let f = File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
    let len = f.metadata().ok().map(|m| m.len());
    Ok((Box::new(f), len))
}

fn analyze_cmd(global: &Global, a: AnalyzeArgs) -> anyhow::Result<()> {
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
            format!("--kpi {k:?}: expected NAME=FROM..TO, e.g. record=Connect..FirstVidFrame")
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
    let report = analyze(input, &opts, |b| {
        progress.update(b >> 20, len.map(|l| l >> 20), "MiB")
    })
    .with_context(|| format!("reading {}", a.file.display()))?;
    progress.finish();
    if global.json {
        return print_json(&report);
    }
    render(&report, a.top, nothing);
    Ok(())
}

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

fn render(r: &Report, top: usize, auto: bool) {
    let s = &r.summary;
    println!(
        "{} lines, {} events, {} function_graph lines, {} malformed{}",
        s.lines,
        s.events,
        s.funcgraph_lines,
        s.malformed,
        match (s.first_ts_ns, s.last_ts_ns) {
            (Some(a), Some(b)) => format!(", span {}", fmt_ns(b - a)),
            _ => String::new(),
        }
    );
    for m in s.malformed_samples.iter().take(5) {
        println!("  line {}: {}: {}", m.line_no, m.reason, m.text);
    }
    if s.lost_events > 0 || !s.cpus_with_loss.is_empty() {
        println!(
            "  lost events: {} (CPUs {:?}): buffer too small; results near the loss are incomplete",
            s.lost_events, s.cpus_with_loss
        );
    }
    if let Some(sch) = &r.sched {
        if !(auto && sch.switch_events == 0) {
            println!("\n== scheduling per thread (ms; wake-up latency in us)");
            let mut t = Table::new(&[
                "TID",
                "COMM",
                "RUN",
                "RUNNABLE(PREEMPT)",
                "RUNNABLE(WAKE)",
                "SLEEP",
                "BLOCKED",
                "SW",
                "PREEMPT",
                "MIGR",
                "CPUS",
                "WAKEUPS",
                "P50",
                "P90",
                "P99",
                "MAX",
            ]);
            for th in sch.threads.iter().take(top) {
                let w = &th.wakeup_latency;
                t.row(vec![
                    th.tid.to_string(),
                    th.comm.clone(),
                    ms(th.running_ns),
                    ms(th.runnable_preempted_ns),
                    ms(th.runnable_waking_ns),
                    ms(th.sleeping_ns),
                    ms(th.blocked_ns),
                    th.switches.to_string(),
                    th.preemptions.to_string(),
                    th.migrations.to_string(),
                    th.cpus
                        .iter()
                        .map(|c| c.to_string())
                        .collect::<Vec<_>>()
                        .join(","),
                    w.count.to_string(),
                    us(w.p50_ns),
                    us(w.p90_ns),
                    us(w.p99_ns),
                    us(w.max_ns),
                ]);
            }
            print!("{}", t.render());
            if sch.missing_switch_ins > 0 {
                println!(
                    "({} sched_switch events had no recorded switch-in of their prev task; those runs are not counted)",
                    sch.missing_switch_ins
                );
            }
            println!("\n== CPUs");
            let mut t = Table::new(&[
                "CPU",
                "BUSY%",
                "BUSY ms",
                "WINDOW ms",
                "SWITCHES",
                "MAX kHz",
            ]);
            for c in &sch.cpus {
                t.row(vec![
                    c.cpu.to_string(),
                    format!("{:.1}", c.busy_pct),
                    ms(c.busy_ns),
                    ms(c.window_ns),
                    c.switches.to_string(),
                    c.max_khz_seen.map_or("-".into(), |k| k.to_string()),
                ]);
            }
            print!("{}", t.render());
            if sch.freq_events > 0 {
                println!("\n== CPU-bound check (seed 000 §7.2): on the most capable CPU at its highest frequency?");
                let mut t = Table::new(&[
                    "TID",
                    "COMM",
                    "RUN ms",
                    "ON TOP CPU %",
                    "AT MAX FREQ %",
                    "VERDICT",
                ]);
                for th in sch.threads.iter().take(top.min(10)) {
                    if let Some(cb) = &th.cpu_bound {
                        t.row(vec![
                            th.tid.to_string(),
                            th.comm.clone(),
                            ms(th.running_ns),
                            format!("{:.1}", cb.on_most_capable_pct),
                            format!("{:.1}", cb.at_max_freq_on_most_capable_pct),
                            if cb.verdict { "yes" } else { "no" }.to_string(),
                        ]);
                    }
                }
                print!("{}", t.render());
            } else if !auto {
                println!(
                    "\nCPU-bound check: not available (no cpu_frequency events in this trace)"
                );
            }
        }
    }
    if let Some(freq) = &r.freq {
        if !freq.is_empty() {
            println!("\n== frequency residency");
            let mut t = Table::new(&["CPU", "kHz", "TIME ms", "%", "TRANSITIONS", "AVG kHz"]);
            for c in freq {
                for (i, f) in c.residency.iter().enumerate() {
                    t.row(vec![
                        c.cpu.to_string(),
                        f.khz.to_string(),
                        ms(f.ns),
                        format!("{:.1}", f.pct),
                        if i == 0 {
                            c.transitions.to_string()
                        } else {
                            String::new()
                        },
                        if i == 0 {
                            c.avg_khz.to_string()
                        } else {
                            String::new()
                        },
                    ]);
                }
            }
            print!("{}", t.render());
        } else if !auto {
            println!("\nfrequency: no cpu_frequency events in this trace");
        }
    }
    if let Some(idle) = &r.idle {
        if !idle.is_empty() {
            println!("\n== idle vs active (seed 004; us)");
            let mut t = Table::new(&[
                "CPU",
                "PERIODS",
                "IDLE ms",
                "ACTIVE ms",
                "IDLE%",
                "AVG IDLE",
                "AVG ACTIVE",
            ]);
            for c in idle {
                t.row(vec![
                    c.cpu.to_string(),
                    c.idle_periods.to_string(),
                    ms(c.idle_ns),
                    ms(c.active_ns),
                    format!("{:.1}", pct(c.idle_ns, c.idle_ns + c.active_ns)),
                    us(c.avg_idle_ns),
                    us(c.avg_active_ns),
                ]);
            }
            print!("{}", t.render());
            println!("\n== idle states");
            let mut t = Table::new(&[
                "CPU",
                "STATE",
                "ENTRIES",
                "RESIDENCY ms",
                "ENTER LAT us (avg/max)",
                "EXIT LAT us (avg/max)",
            ]);
            for c in idle {
                for st in &c.states {
                    let lat = |d: &Option<lever_trace_analysis::stats::Distribution>| {
                        d.as_ref().map_or("n/a".to_string(), |d| {
                            format!("{}/{}", us(d.avg_ns), us(d.max_ns))
                        })
                    };
                    t.row(vec![
                        c.cpu.to_string(),
                        st.state.to_string(),
                        st.entries.to_string(),
                        ms(st.residency_ns),
                        lat(&st.enter_latency),
                        lat(&st.exit_latency),
                    ]);
                }
            }
            print!("{}", t.render());
            if idle
                .iter()
                .all(|c| c.states.iter().all(|s| s.exit_latency.is_none()))
            {
                println!("(enter/exit latencies need seed 004's power_start type=4/5 trace points; cpu_idle alone does not carry them)");
            }
        } else if !auto {
            println!("\nidle: no cpu_idle or power_start/power_end events in this trace");
        }
    }
    if let Some(m) = &r.markers {
        if m.markers > 0 || m.text_markers > 0 || !m.kpis.is_empty() || !auto {
            println!(
                "\n== markers: {} named, {} text, {} spans, {} unmatched E",
                m.markers,
                m.text_markers,
                m.spans.len(),
                m.unmatched_ends
            );
            if !m.span_stats.is_empty() {
                let mut t = Table::new(&[
                    "SPAN", "COUNT", "MIN ms", "AVG ms", "P90 ms", "MAX ms", "TOTAL ms",
                ]);
                for s in m.span_stats.iter().take(top) {
                    let d = &s.durations;
                    t.row(vec![
                        s.name.clone(),
                        d.count.to_string(),
                        ms(d.min_ns),
                        ms(d.avg_ns),
                        ms(d.p90_ns),
                        ms(d.max_ns),
                        ms(s.total_ns),
                    ]);
                }
                print!("{}", t.render());
            }
            for k in &m.kpis {
                println!(
                    "\n== KPI {} ({}..{}): {} occurrence(s)",
                    k.name,
                    k.from,
                    k.to,
                    k.occurrences.len()
                );
                for (i, o) in k.occurrences.iter().enumerate() {
                    let mut t = Table::new(&["#", "STEP", "FROM s", "TO s", "DURATION s"]);
                    for st in &o.steps {
                        t.row(vec![
                            (i + 1).to_string(),
                            format!("{} to {}", st.from, st.to),
                            format!("{:.6}", st.from_ns as f64 / 1e9),
                            format!("{:.6}", st.to_ns as f64 / 1e9),
                            format!("{:.3}", st.dur_ns as f64 / 1e9),
                        ]);
                    }
                    t.row(vec![
                        (i + 1).to_string(),
                        format!("{} latency = sum", k.name),
                        String::new(),
                        String::new(),
                        format!("{:.3}", o.total_ns as f64 / 1e9),
                    ]);
                    print!("{}", t.render());
                }
            }
            for f in &m.frames {
                println!(
                    "\n== frames of {:?} at {} period: {} frames, interval p50 {} max {}, {} deadline misses, {} dropped frames, {} late spans",
                    f.marker,
                    fmt_ns(f.period_ns),
                    f.frames,
                    fmt_ns(f.intervals.p50_ns),
                    fmt_ns(f.intervals.max_ns),
                    f.deadline_misses,
                    f.dropped_frames,
                    f.late_spans
                );
                for miss in f.misses.iter().take(top) {
                    println!(
                        "  at {:.6} s: interval {} ({} dropped)",
                        miss.at_ns as f64 / 1e9,
                        fmt_ns(miss.interval_ns),
                        miss.dropped_frames
                    );
                }
            }
        }
    }
    if let Some(fg) = &r.funcgraph {
        if !fg.functions.is_empty() {
            println!("\n== function_graph per function (us), by total time");
            let mut t = Table::new(&[
                "FUNCTION",
                "CALLS",
                "MIN",
                "AVG",
                "MAX",
                "STDDEV",
                "TOTAL",
                "SELF",
                "OUTLIERS",
                "TOP CALLEES",
            ]);
            for f in fg.functions.iter().take(top) {
                t.row(vec![
                    f.function.clone(),
                    f.calls.to_string(),
                    us(f.min_ns),
                    us(f.avg_ns),
                    us(f.max_ns),
                    us(f.stddev_ns),
                    us(f.total_ns),
                    us(f.self_ns),
                    f.outlier_count.to_string(),
                    f.callees
                        .iter()
                        .take(3)
                        .map(|c| format!("{}×{}", c.function, c.calls))
                        .collect::<Vec<_>>()
                        .join(" "),
                ]);
            }
            print!("{}", t.render());
            println!("\nslowest occurrences (line, time):");
            for f in fg.functions.iter().take(top.min(5)) {
                let occ: Vec<String> = f
                    .slowest
                    .iter()
                    .map(|o| match o.ts_ns {
                        Some(ts) => format!(
                            "{} us @{:.6}s (line {})",
                            us(o.dur_ns),
                            ts as f64 / 1e9,
                            o.line_no
                        ),
                        None => format!("{} us (line {})", us(o.dur_ns), o.line_no),
                    })
                    .collect();
                println!("  {}: {}", f.function, occ.join(", "));
            }
        } else if !auto {
            println!("\nfunction_graph: no function_graph lines in this trace");
        }
    }
    if let Some(l) = &r.latency {
        println!(
            "\n== worst {} latency: {} us on CPU {} ({} report(s))",
            l.tracer.as_deref().unwrap_or("latency"),
            l.latency_us,
            l.cpu.map_or("?".into(), |c| c.to_string()),
            r.latency_reports
        );
        if let Some((comm, pid)) = &l.task {
            println!("  task: {comm}-{pid}");
        }
        println!(
            "  started at: {}  ended at: {}",
            l.started_at.as_deref().unwrap_or("?"),
            l.ended_at.as_deref().unwrap_or("?")
        );
        for f in &l.stack {
            println!("  => {f}");
        }
    } else if r.latency_reports == 0 && !auto {
        println!("\nlatency: no preemptoff/irqsoff report in this trace");
    }
}

#[derive(Serialize)]
struct ExportResult {
    output: PathBuf,
    trace_events: u64,
    malformed_lines: u64,
}

fn export(global: &Global, file: &Path, output: &Path) -> anyhow::Result<()> {
    let (input, len) = open_input(file)?;
    let out =
        File::create(output).with_context(|| format!("cannot create {}", output.display()))?;
    let progress = Progress::new(format!("exporting {}", file.display()));
    let (n, summary) = export_chrome(input, std::io::BufWriter::new(out), |b| {
        progress.update(b >> 20, len.map(|l| l >> 20), "MiB")
    })?;
    progress.finish();
    let r = ExportResult {
        output: output.to_path_buf(),
        trace_events: n,
        malformed_lines: summary.malformed,
    };
    if global.json {
        print_json(&r)
    } else {
        println!(
            "{} trace events → {} (open in ui.perfetto.dev)",
            n,
            output.display()
        );
        Ok(())
    }
}

#[derive(Serialize)]
struct BenchResult {
    bytes: u64,
    lines: u64,
    events: u64,
    parse_seconds: f64,
    parse_cpu_seconds: Option<f64>,
    parse_mb_per_cpu_s: Option<f64>,
    sched_cpu_seconds: Option<f64>,
    parse_mb_per_s: f64,
    parse_events_per_s: f64,
    sched_seconds: f64,
    sched_events_per_s: f64,
    peak_rss_kb: Option<u64>,
}

fn bench(global: &Global, file: &Path) -> anyhow::Result<()> {
    let open = || File::open(file).with_context(|| format!("cannot open {}", file.display()));
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
    let r = analyze(open()?, &opts, |_| {})?;
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
    if global.json {
        return print_json(&res);
    }
    if let (Some(pc), Some(sc)) = (res.parse_cpu_seconds, res.sched_cpu_seconds) {
        println!(
            "on-CPU: parse {:.3} s = {:.0} MB/s, {:.2} M events/s; parse + sched analysis {:.3} s",
            pc,
            res.bytes as f64 / 1e6 / pc,
            res.events as f64 / pc / 1e6,
            sc
        );
    }
    println!(
        "wall: {:.1} MB, {} events: parse {:.3} s = {:.0} MB/s, {:.2} M events/s; parse + sched analysis {:.3} s = {:.2} M events/s; peak RSS {} kB",
        res.bytes as f64 / 1e6,
        res.events,
        res.parse_seconds,
        res.parse_mb_per_s,
        res.parse_events_per_s / 1e6,
        res.sched_seconds,
        res.sched_events_per_s / 1e6,
        res.peak_rss_kb.map_or("?".into(), |k| k.to_string())
    );
    Ok(())
}
