//! Analyses of ftrace text parsed by `lever-trace`: the trackers that turn
//! events into states, slices and statistics (parser → analyses → CLI
//! render, one direction).
//!
//! | module | input events | output |
//! |---|---|---|
//! | [`sched`] | sched_switch, sched_waking/wakeup(_new), cpu_frequency | per-thread running/runnable/sleeping, wake-up latency distribution, per-CPU busy %, CPU-bound check |
//! | [`freq`] | cpu_frequency | residency per CPU and frequency |
//! | [`idle`] | cpu_idle, power_start/power_end | idle vs active per CPU, residency per state, enter/exit latency (seed 004) |
//! | [`markers`] | tracing_mark_write | spans, KPI breakdowns (seed 000 §8.3), frame misses |
//! | [`funcgraph`] | function_graph lines | per-function statistics with self time (seed 003) |
//! | [`latency`] | preemptoff/irqsoff report | worst latency and its stack |
//! | [`wakeups`] | sched_waking/wakeup, sched_switch | waker → wakee edges with counts and latencies |
//! | [`critical`] | sched_switch, wake-ups | one thread's time by state and cause, recursively through its wakers |
//! | [`locks`] | lock:contention_begin/end, raw_syscalls futex | contended locks and futexes, per task |
//! | [`ramp`] | cpu_frequency, sched_switch | time from a load step to the highest frequency |
//! | [`export`] | all | Chrome trace JSON for Perfetto UI |
//!
//! All times are ns (`_ns` fields); one pass over the trace feeds every
//! selected tracker.
//!
//! ```
//! use lever_trace_analysis::{analyze, Options};
//! let trace = "\
//!   <idle>-0 [000] d..2. 1.000000: sched_waking: comm=a pid=7 prio=120 target_cpu=000
//!   <idle>-0 [000] d..2. 1.000050: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=7 next_prio=120
//!        a-7 [000] d..2. 1.001050: sched_switch: prev_comm=a prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
//! ";
//! let r = analyze(trace.as_bytes(), &Options::all(), |_| {}).unwrap();
//! let t = &r.sched.unwrap().threads[0];
//! assert_eq!((t.tid, t.running_ns, t.wakeup_latency.max_ns), (7, 1_000_000, 50_000));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bench;
pub mod callstack;
pub mod critical;
pub mod export;
pub mod freq;
pub mod funcgraph;
pub mod idle;
pub mod latency;
pub mod locks;
pub mod markers;
pub mod ramp;
pub mod sched;
pub mod stats;
pub mod wakeups;

use lever_trace::{Line, LineSource, Summary, Text};
use serde::Serialize;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

pub use markers::{FrameSpec, KpiSpec};

/// Which analyses to run.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Scheduling.
    pub sched: bool,
    /// Frequency residency.
    pub freq: bool,
    /// Idle residency and latencies.
    pub idle: bool,
    /// Markers (implied by `kpis`/`frames`).
    pub markers: bool,
    /// function_graph statistics.
    pub funcgraph: bool,
    /// Latency-tracer report.
    pub latency: bool,
    /// KPIs.
    pub kpis: Vec<KpiSpec>,
    /// Frame checks.
    pub frames: Vec<FrameSpec>,
    /// Slowest occurrences kept per function.
    pub top: usize,
    /// Outlier factor over the median.
    pub outlier_factor: f64,
    /// Waker → wakee edges.
    pub wakeups: bool,
    /// One thread's critical path.
    pub critical_path: Option<critical::CriticalPathSpec>,
    /// Lock and futex contention.
    pub locks: bool,
    /// Frequency ramp after load steps.
    pub ramp: bool,
    /// Per-thread call stacks from begin/end spans (cyg-profile
    /// function entries/exits, systrace `B`/`E`).
    pub callstack: bool,
    /// Threads that parse (0 or 1: parse on the calling thread). The
    /// trackers always run on the calling thread, in file order, so the
    /// report does not depend on it (see
    /// [`lever_trace::for_each_line_parallel`]).
    pub threads: usize,
}

impl Options {
    /// Everything.
    pub fn all() -> Self {
        Options {
            sched: true,
            freq: true,
            idle: true,
            markers: true,
            funcgraph: true,
            latency: true,
            top: 5,
            outlier_factor: 5.0,
            ..Options::default()
        }
    }

    /// Every analysis there is: [`Options::all`], wake-ups, locks, the
    /// frequency ramp, and the critical path of thread `tid` over the
    /// whole trace.
    pub fn every_analysis(tid: i32) -> Self {
        Options {
            wakeups: true,
            locks: true,
            ramp: true,
            critical_path: Some(critical::CriticalPathSpec {
                tid,
                from_ns: None,
                to_ns: None,
            }),
            ..Options::all()
        }
    }
}

/// The results of one pass.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// What the reader saw (lines, malformed lines, lost events).
    pub summary: Summary,
    /// Scheduling.
    pub sched: Option<sched::SchedReport>,
    /// Frequency residency.
    pub freq: Option<Vec<freq::CpuFreqReport>>,
    /// Idle.
    pub idle: Option<Vec<idle::CpuIdleReport>>,
    /// Markers.
    pub markers: Option<markers::MarkerReport>,
    /// function_graph.
    pub funcgraph: Option<funcgraph::FuncGraphReport>,
    /// Worst latency-tracer report.
    pub latency: Option<latency::LatencyReport>,
    /// Latency reports seen.
    pub latency_reports: u64,
    /// Waker → wakee edges.
    pub wakeups: Option<wakeups::WakeupReport>,
    /// The critical path asked for.
    pub critical_path: Option<critical::CriticalPath>,
    /// Lock contention.
    pub locks: Option<locks::LockReport>,
    /// Frequency ramps.
    pub ramp: Option<ramp::RampReport>,
    /// Call stacks.
    pub callstack: Option<callstack::CallStackReport>,
}

/// Run the selected analyses over a trace text in one streaming pass.
/// `progress(bytes_read)` is called every few MiB.
pub fn analyze<R: Read>(input: R, opts: &Options, progress: impl FnMut(u64)) -> io::Result<Report> {
    analyze_source(Text(input), opts, progress)
}

/// [`analyze`] over any [`LineSource`]: text, or a decoded trace.dat
/// (`lever-trace-input`).
pub fn analyze_source<S: LineSource>(
    input: S,
    opts: &Options,
    progress: impl FnMut(u64),
) -> io::Result<Report> {
    let mut sched = opts.sched.then(sched::SchedTracker::new);
    let mut freq = opts.freq.then(freq::FreqTracker::new);
    let mut idle = opts.idle.then(idle::IdleTracker::new);
    let want_markers = opts.markers || !opts.kpis.is_empty() || !opts.frames.is_empty();
    let mut markers = want_markers.then(markers::MarkerTracker::new);
    let mut fg = opts.funcgraph.then(funcgraph::FuncGraphTracker::new);
    let mut lat = opts.latency.then(latency::LatencyTracker::new);
    let mut stacks = opts.callstack.then(callstack::CallStackTracker::new);
    let mut causes = Causes {
        wakeups: opts.wakeups.then(wakeups::WakeupTracker::new),
        critical: opts.critical_path.map(critical::CriticalPathTracker::new),
        locks: opts.locks.then(locks::LockTracker::new),
        ramp: opts.ramp.then(ramp::RampTracker::new),
    };
    let any_causes = causes.wakeups.is_some()
        || causes.critical.is_some()
        || causes.locks.is_some()
        || causes.ramp.is_some();
    // The trace's CPU count (`#P:N` in the kernel's text header; a
    // trace.dat's events are checked against its own as they decode):
    // an event naming a CPU past it is damaged and counted as malformed.
    let mut ncpus = lever_trace::MAX_CPUS;
    let mut out_of_range: Vec<lever_trace::Malformed> = Vec::new();
    let mut out_of_range_n = 0u64;
    let mut summary = input.for_each_line_threaded(
        opts.threads,
        |no, line| {
            match line {
                Line::Header(lever_trace::Header::Entries {
                    cpus: Some(n @ 1..),
                    ..
                }) => ncpus = (*n).min(ncpus),
                // (Without a count the parser's own cap holds: no check.)
                Line::Event(e) if ncpus < lever_trace::MAX_CPUS && !e.kind.cpus_below(ncpus) => {
                    out_of_range_n += 1;
                    if out_of_range.len() < lever_trace::reader::MALFORMED_KEPT {
                        out_of_range.push(lever_trace::Malformed {
                            line_no: no,
                            reason: "CPU number out of the trace's CPUs",
                            text: format!("{}: {:?}", e.name, e.kind),
                        });
                    }
                    return;
                }
                Line::Event(e) => {
                    if let Some(t) = sched.as_mut() {
                        t.event(e);
                    }
                    if let Some(t) = freq.as_mut() {
                        t.event(e);
                    }
                    if let Some(t) = idle.as_mut() {
                        t.event(e);
                    }
                    if let Some(t) = markers.as_mut() {
                        t.event(e);
                    }
                    if let Some(t) = stacks.as_mut() {
                        t.event(e);
                    }
                    if any_causes && e.time_base == lever_trace::TimeBase::Clock {
                        causes.event(e);
                    }
                }
                Line::FuncGraph(f) => {
                    if let Some(t) = fg.as_mut() {
                        t.line(no, f);
                    }
                }
                _ => {}
            }
            if let Some(t) = lat.as_mut() {
                t.line(line);
            }
        },
        progress,
    )?;
    if out_of_range_n > 0 {
        summary.events = summary.events.saturating_sub(out_of_range_n);
        summary.malformed += out_of_range_n;
        summary.malformed_samples.extend(out_of_range);
        summary.malformed_samples.sort_by_key(|m| m.line_no);
        summary
            .malformed_samples
            .truncate(lever_trace::reader::MALFORMED_KEPT);
    }
    let (latency, latency_reports) = lat.map(|l| l.finish()).unwrap_or((None, 0));
    Ok(Report {
        summary,
        sched: sched.map(|t| t.finish()),
        freq: freq.map(|t| t.finish()),
        idle: idle.map(|t| t.finish()),
        markers: markers.map(|t| t.finish(&opts.kpis, &opts.frames)),
        funcgraph: fg.map(|t| t.finish(opts.top.max(1), opts.outlier_factor)),
        latency,
        latency_reports,
        wakeups: causes.wakeups.map(|t| t.finish()),
        critical_path: causes.critical.map(|t| t.finish()),
        locks: causes.locks.map(|t| t.finish()),
        ramp: causes.ramp.map(|t| t.finish()),
        callstack: stacks.map(|t| t.finish(opts.top.max(1))),
    })
}

/// The trackers that explain causes, fed together.
struct Causes {
    wakeups: Option<wakeups::WakeupTracker>,
    critical: Option<critical::CriticalPathTracker>,
    locks: Option<locks::LockTracker>,
    ramp: Option<ramp::RampTracker>,
}

impl Causes {
    fn event(&mut self, e: &lever_trace::Event<'_>) {
        if let Some(t) = self.wakeups.as_mut() {
            t.event(e);
        }
        if let Some(t) = self.critical.as_mut() {
            t.event(e);
        }
        if let Some(t) = self.locks.as_mut() {
            t.event(e);
        }
        if let Some(t) = self.ramp.as_mut() {
            t.event(e);
        }
    }
}

/// Exporting to a file failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The output file could not be created.
    #[error("cannot create {}", path.display())]
    Create {
        /// The output file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Reading the trace or writing the JSON failed.
    #[error("exporting to {}", path.display())]
    Write {
        /// The output file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// [`export_chrome`] into the file `output` (created or truncated).
pub fn export_chrome_file<S: LineSource>(
    input: S,
    output: &Path,
    progress: impl FnMut(u64),
) -> Result<(u64, Summary), ExportError> {
    let file = std::fs::File::create(output).map_err(|source| ExportError::Create {
        path: output.to_path_buf(),
        source,
    })?;
    export_chrome(input, io::BufWriter::new(file), progress).map_err(|source| ExportError::Write {
        path: output.to_path_buf(),
        source,
    })
}

/// Export a trace to Chrome JSON (see [`export`]); returns the number of
/// trace events written and the reader's summary.
pub fn export_chrome<S: LineSource, W: io::Write>(
    input: S,
    out: W,
    progress: impl FnMut(u64),
) -> io::Result<(u64, Summary)> {
    let mut ex = export::ChromeExporter::new(out)?;
    let mut err = None;
    let mut end = 0;
    let summary = input.for_each_line(
        |_, line| {
            if let (Line::Event(e), None) = (line, &err) {
                end = end.max(e.ts_ns);
                if let Err(e) = ex.event(e) {
                    err = Some(e);
                }
            }
        },
        progress,
    )?;
    if let Some(e) = err {
        return Err(e);
    }
    let n = ex.finish(end)?;
    Ok((n, summary))
}
