//! `lever latency`'s measurement flags: cyclictest's, parsed raw (no
//! side effects) and turned into a [`Config`] in a second step.

use anyhow::Context;
use clap::Args;
use lever_latency::config::{self, Affinity, Config, Policy, Threads};
use lever_latency::LatencyError;
use lever_text::{parse_duration, parse_int, TimeUnit};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(super) struct MeasureFlags {
    /// Pin threads round-robin to CPUSET (without a list: thread N on CPU N).
    #[arg(short = 'a', long = "affinity", value_name = "CPUSET", num_args = 0..=1, default_missing_value = "")]
    pub(super) affinity: Option<String>,
    /// Number of threads (without a number: one per CPU).
    #[arg(short = 't', long = "threads", value_name = "NUM", num_args = 0..=1, default_missing_value = "")]
    pub(super) threads: Option<String>,
    /// Standard SMP testing: -a -t and the same priority on every thread.
    #[arg(short = 'S', long = "smp")]
    pub(super) smp: bool,
    /// Priority of the measuring threads (1–99 makes them SCHED_FIFO).
    #[arg(short = 'p', long = "priority", value_name = "PRIO")]
    pub(super) priority: Option<String>,
    /// other, normal, batch, idle, fifo or rr.
    #[arg(long, value_name = "NAME")]
    pub(super) policy: Option<String>,
    /// Base interval (a bare number is µs; 500us, 1ms).
    #[arg(short = 'i', long = "interval", value_name = "US")]
    pub(super) interval: Option<String>,
    /// Distance between thread intervals (a bare number is µs); 0 with -h.
    #[arg(short = 'd', long = "distance", value_name = "US")]
    pub(super) distance: Option<String>,
    /// Number of loops per thread (default: until Ctrl-C or -D).
    #[arg(short = 'l', long = "loops", value_name = "LOOPS")]
    pub(super) loops: Option<String>,
    /// Run time: seconds, or with m/h/d (10, 5m, 2h, 1d, 500ms).
    #[arg(short = 'D', long = "duration", value_name = "TIME")]
    pub(super) duration: Option<String>,
    /// Lock current and future memory (mlockall).
    #[arg(short = 'm', long = "mlockall")]
    pub(super) mlockall: bool,
    /// Keep a histogram up to US µs and print it in cyclictest's format.
    #[arg(short = 'h', long = "histogram", value_name = "US")]
    pub(super) histogram: Option<String>,
    /// Write the histogram to PATH instead of stdout.
    #[arg(long, value_name = "PATH")]
    pub(super) histfile: Option<PathBuf>,
    /// No live status line; the summary only.
    #[arg(short = 'q', long = "quiet")]
    pub(super) quiet: bool,
    /// Record every sample above US µs (cyclictest's --spike).
    #[arg(long, value_name = "US")]
    pub(super) spike: Option<String>,
    /// Stop at the first sample above US µs.
    #[arg(short = 'b', long = "breaktrace", value_name = "US")]
    pub(super) breaktrace: Option<String>,
    /// Run the main (reporting) thread on CPUSET.
    #[arg(long, value_name = "CPUSET")]
    pub(super) mainaffinity: Option<String>,
    /// Trace the run (private tracefs instance) and explain every --spike:
    /// what the CPU did from the deadline to the wake-up.
    #[arg(long)]
    pub(super) analyze: bool,
    /// With -b: stop at the breach without tracing or analysing it.
    #[arg(long)]
    pub(super) no_trace: bool,
    /// Keep the trace of -b/--analyze in FILE (default: a file in the
    /// temporary directory; the path is printed).
    #[arg(long, value_name = "FILE")]
    pub(super) trace_out: Option<PathBuf>,
    /// Background load while measuring (repeatable): `cpu:N[:PCT][@CPUS]`,
    /// `mem:SIZE`, `io:N`, `msg:N`, `stress-ng:ARGS`, or a shell command.
    #[arg(long, value_name = "SPEC")]
    pub(super) load: Vec<String>,
    /// Write the histograms as an SVG chart to FILE (log count axis, one
    /// line per thread).
    #[arg(long, value_name = "FILE")]
    pub(super) plot: Option<PathBuf>,
    /// Do not hold /dev/cpu_dma_latency at 0 (C-states stay allowed).
    #[arg(long)]
    pub(super) laptop: bool,
    /// With FILE: cyclictest's JSON document to FILE; alone: Lever's report
    /// as JSON on stdout.
    #[arg(long, value_name = "FILE", num_args = 0..=1)]
    pub(super) json: Option<Option<PathBuf>>,
    /// Prefix for every kernel path (as the global --root).
    #[arg(long, value_name = "DIR")]
    pub(super) root: Option<PathBuf>,
}

fn us(option: &'static str, text: &str) -> anyhow::Result<u64> {
    let d = parse_duration(text, TimeUnit::Micros).with_context(|| format!("{option} {text:?}"))?;
    Ok(d.as_micros() as u64)
}

fn int(option: &'static str, text: &str, expected: &'static str) -> Result<u64, LatencyError> {
    parse_int(text)
        .and_then(|v| u64::try_from(v).ok())
        .ok_or_else(|| LatencyError::BadOption {
            option,
            value: text.to_string(),
            expected,
        })
}

impl MeasureFlags {
    #[allow(clippy::field_reassign_with_default)] // one flag per statement reads best
    pub(super) fn config(&self) -> anyhow::Result<Config> {
        let mut cfg = Config::default();
        cfg.affinity = match self.affinity.as_deref() {
            None if self.smp => Affinity::OneEach,
            None => Affinity::Unpinned,
            Some("") => Affinity::OneEach,
            Some(list) => Affinity::Cpus(config::parse_cpu_list("-a/--affinity", list)?),
        };
        cfg.threads = match self.threads.as_deref() {
            None if self.smp => Threads::PerCpu,
            None => Threads::Count(1),
            Some("") => Threads::PerCpu,
            Some(n) => Threads::Count(int("-t/--threads", n, "a number of threads")? as usize),
        };
        if let Some(p) = &self.priority {
            cfg.priority = int("-p/--priority", p, "a priority from 0 to 99")?.min(1000) as u32;
        }
        cfg.policy = self.policy.as_deref().map(Policy::parse).transpose()?;
        if let Some(i) = &self.interval {
            cfg.interval_us = us("-i/--interval", i)?;
        }
        if let Some(d) = &self.distance {
            cfg.distance_us = us("-d/--distance", d)?;
        }
        cfg.loops = self
            .loops
            .as_deref()
            .map(|l| int("-l/--loops", l, "a number of loops"))
            .transpose()?;
        cfg.duration = self
            .duration
            .as_deref()
            .map(config::parse_run_duration)
            .transpose()?;
        cfg.mlock = self.mlockall;
        cfg.histogram_us = self
            .histogram
            .as_deref()
            .map(|h| {
                int("-h/--histogram", h, "a histogram size in µs")
                    .map(|v| v.min(u32::MAX as u64) as u32)
            })
            .transpose()?;
        cfg.spike_us = self
            .spike
            .as_deref()
            .map(|s| us("--spike", s))
            .transpose()?;
        cfg.breach_us = self
            .breaktrace
            .as_deref()
            .map(|s| us("-b/--breaktrace", s))
            .transpose()?;
        cfg.main_affinity = self
            .mainaffinity
            .as_deref()
            .map(|l| config::parse_cpu_list("--mainaffinity", l))
            .transpose()?;
        cfg.laptop = self.laptop;
        cfg.analyze = self.analyze;
        cfg.no_trace = self.no_trace;
        cfg.trace_out = self.trace_out.clone();
        cfg.loads = self
            .load
            .iter()
            .map(|s| lever_latency::load::LoadSpec::parse(s))
            .collect::<Result<_, _>>()?;
        cfg.smp = self.smp;
        Ok(cfg)
    }
}
