//! `lever latency`: cyclictest's measurement with cyclictest's own flags
//! (so the seeds' command lines run unchanged), `lever latency import
//! FILE` (`lever rt check` is in `rt.rs`).
//!
//! cyclictest's flags collide with two of clap's conventions — `-h` is the
//! histogram, not help, and `--json FILE` names a file while Lever's global
//! `--json` is a switch — so the subcommand takes its words raw and parses
//! them here with a parser of its own.

use crate::args::Global;
use crate::render::{self, emit};
use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use lever_kernel::KernelFs;
use lever_latency::config::{self, Affinity, Config, Policy, Threads};
use lever_latency::cyclictest::{self, SysInfo};
use lever_latency::LatencyError;
use lever_text::{parse_duration, parse_int, TimeUnit};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// `lever latency ...`: the words after `latency`, parsed by [`LatencyCli`].
#[derive(Debug, Args)]
pub struct LatencyArgs {
    /// cyclictest's flags (see `lever latency --help`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub words: Vec<String>,
}

/// Measure scheduling latency like cyclictest 2.4, with its flags.
///
/// Examples (seed 000 §3.6 and seed 001, shorter -l):
///   lever latency -a 1-3 -t 3 -m -l 10000 -i 1000 -p 90 -h 800 --mainaffinity 4 --spike 100
///   lever latency -a 7 -t 1 -m -l 10000 -i 1000 -p 99 -h 100
///   lever latency import cyclictest-output.txt
#[derive(Debug, Parser)]
#[command(
    name = "lever latency",
    disable_help_flag = true,
    args_conflicts_with_subcommands = true
)]
struct LatencyCli {
    #[command(subcommand)]
    sub: Option<LatencySub>,
    #[command(flatten)]
    flags: MeasureFlags,
    /// Print this help.
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
}

#[derive(Debug, Subcommand)]
enum LatencySub {
    /// Read a cyclictest (stdout with -h, or --json), stress-ng --cyclic or
    /// rtla timerlat hist output into the same report.
    Import(ImportArgs),
}

#[derive(Debug, Args)]
struct ImportArgs {
    /// The file.
    file: PathBuf,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct MeasureFlags {
    /// Pin threads round-robin to CPUSET (without a list: thread N on CPU N).
    #[arg(short = 'a', long = "affinity", value_name = "CPUSET", num_args = 0..=1, default_missing_value = "")]
    affinity: Option<String>,
    /// Number of threads (without a number: one per CPU).
    #[arg(short = 't', long = "threads", value_name = "NUM", num_args = 0..=1, default_missing_value = "")]
    threads: Option<String>,
    /// Standard SMP testing: -a -t and the same priority on every thread.
    #[arg(short = 'S', long = "smp")]
    smp: bool,
    /// Priority of the measuring threads (1–99 makes them SCHED_FIFO).
    #[arg(short = 'p', long = "priority", value_name = "PRIO")]
    priority: Option<String>,
    /// other, normal, batch, idle, fifo or rr.
    #[arg(long, value_name = "NAME")]
    policy: Option<String>,
    /// Base interval (a bare number is µs; 500us, 1ms).
    #[arg(short = 'i', long = "interval", value_name = "US")]
    interval: Option<String>,
    /// Distance between thread intervals (a bare number is µs); 0 with -h.
    #[arg(short = 'd', long = "distance", value_name = "US")]
    distance: Option<String>,
    /// Number of loops per thread (default: until Ctrl-C or -D).
    #[arg(short = 'l', long = "loops", value_name = "LOOPS")]
    loops: Option<String>,
    /// Run time: seconds, or with m/h/d (10, 5m, 2h, 1d, 500ms).
    #[arg(short = 'D', long = "duration", value_name = "TIME")]
    duration: Option<String>,
    /// Lock current and future memory (mlockall).
    #[arg(short = 'm', long = "mlockall")]
    mlockall: bool,
    /// Keep a histogram up to US µs and print it in cyclictest's format.
    #[arg(short = 'h', long = "histogram", value_name = "US")]
    histogram: Option<String>,
    /// Write the histogram to PATH instead of stdout.
    #[arg(long, value_name = "PATH")]
    histfile: Option<PathBuf>,
    /// No live status line; the summary only.
    #[arg(short = 'q', long = "quiet")]
    quiet: bool,
    /// Record every sample above US µs (cyclictest's --spike).
    #[arg(long, value_name = "US")]
    spike: Option<String>,
    /// Stop at the first sample above US µs.
    #[arg(short = 'b', long = "breaktrace", value_name = "US")]
    breaktrace: Option<String>,
    /// Run the main (reporting) thread on CPUSET.
    #[arg(long, value_name = "CPUSET")]
    mainaffinity: Option<String>,
    /// Do not hold /dev/cpu_dma_latency at 0 (C-states stay allowed).
    #[arg(long)]
    laptop: bool,
    /// With FILE: cyclictest's JSON document to FILE; alone: Lever's report
    /// as JSON on stdout.
    #[arg(long, value_name = "FILE", num_args = 0..=1)]
    json: Option<Option<PathBuf>>,
    /// Prefix for every kernel path (as the global --root).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
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
    fn config(&self) -> anyhow::Result<Config> {
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
        Ok(cfg)
    }
}

/// Run `lever latency ...`.
pub fn run(global: &Global, args: LatencyArgs) -> anyhow::Result<()> {
    let mut words = args.words;
    // `lever latency --json out.json -a 1`: the global parser took `--json`
    // as its switch and left the file name first among our words.
    let mut json_file = None;
    if global.json
        && words
            .first()
            .is_some_and(|w| !w.starts_with('-') && w != "import")
    {
        json_file = Some(PathBuf::from(words.remove(0)));
    }
    let cli = match LatencyCli::try_parse_from(
        std::iter::once("lever latency".to_string()).chain(words.iter().cloned()),
    ) {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {
            return render::out(&e.render().to_string());
        }
        Err(e) => return Err(anyhow::anyhow!("{}", e.render().to_string().trim_end())),
    };
    let root = cli
        .flags
        .root
        .clone()
        .unwrap_or_else(|| global.root.clone());
    let fs = if root == std::path::Path::new("/") {
        KernelFs::new(&root)
    } else {
        KernelFs::open(&root)?
    };
    if let Some(LatencySub::Import(a)) = cli.sub {
        let report = lever_latency::import::import_file(&a.file)?;
        return emit(global.json || a.json, &report, render::latency::report);
    }
    let flags = cli.flags;
    let (stdout_json, json_file) = match (&flags.json, json_file) {
        (_, Some(f)) => (false, Some(f)),
        (Some(Some(f)), None) => (global.json, Some(f.clone())),
        (Some(None), None) => (true, None),
        (None, None) => (global.json, None),
    };
    let cfg = flags.config()?;

    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).context("install Ctrl-C handler")?;
    }
    let start = std::time::SystemTime::now();
    let status = render::latency::Status::new(!flags.quiet);
    let report = lever_latency::run::measure(&fs, &cfg, &stop, |snaps| status.update(snaps))?;
    status.finish();
    let end = std::time::SystemTime::now();

    if let Some(path) = &json_file {
        let secs = |t: std::time::SystemTime| {
            t.duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        };
        let cmdline = std::env::args().collect::<Vec<_>>().join(" ");
        let doc = cyclictest::json_document(
            &report,
            &cmdline,
            &cyclictest::rfc2822_utc(secs(start)),
            &cyclictest::rfc2822_utc(secs(end)),
            &SysInfo::here(&fs),
        );
        lever_latency::cyclictest::write_json(path, &doc)?;
    }
    if let Some(path) = &flags.histfile {
        if let Some(text) = cyclictest::histogram_text(&report) {
            lever_latency::cyclictest::write_text(path, &text)?;
        }
    }
    let with_histogram = flags.histfile.is_none();
    emit(stdout_json, &report, |r| {
        render::latency::measured(r, with_histogram)
    })
}
