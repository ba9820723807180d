//! `lever report collect|render`: one run of a board (`lever_report::collect`)
//! and its page, Markdown and JSON (`lever_report::render`).

use crate::args::Global;
use crate::cmd::util::{positive_seconds, seconds};
use crate::render::report as show;
use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use lever_report::collect::{self, BenchSource, BootLog, Options, UseCase};
use std::path::PathBuf;
use std::time::Duration;

/// `lever report …`
#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Collect one run of the board into RUN.json: device and kernel, boot
    /// KPIs (--boot-log), the memory map after boot and during each
    /// --usecase, RT latency KPIs (--latency), benchmarks (--bench), marker
    /// KPIs (--trace --kpi), the daemon's status; every section says how it
    /// was measured or why not.
    Collect(CollectArgs),
    /// Render runs (the first is the base) as a self-contained HTML page
    /// (--html), Markdown (--md) or JSON (--json FILE); two or more runs
    /// side by side with significant changes marked.
    Render(RenderArgs),
}

/// `lever report collect`
#[derive(Debug, Args)]
pub struct CollectArgs {
    /// Where to write the run document.
    #[arg(short = 'o', long, value_name = "RUN.json")]
    pub output: PathBuf,
    /// A use case: NAME=CMD (run with `sh -c`); the memory map is sampled
    /// while it runs. Repeat for more columns.
    #[arg(long = "usecase", value_name = "NAME=CMD", value_parser = usecase)]
    pub usecases: Vec<String>,
    /// A boot log: serial=F, journal=F, time=F (systemd-analyze time),
    /// blame=F, or a bare F (guessed). Repeatable.
    #[arg(long = "boot-log", value_name = "[KIND=]FILE")]
    pub boot_logs: Vec<String>,
    /// Measure RT latency for SECS (default 10: half without load, half
    /// under load).
    #[arg(long, value_name = "SECS", num_args = 0..=1, require_equals = true, default_missing_value = "10", value_parser = seconds)]
    pub latency: Option<Duration>,
    /// Benchmarks: `quick` (run `lever bench --quick` now, the default) or
    /// an existing `lever bench -o FILE.json` report.
    #[arg(long, value_name = "quick|FILE.json", num_args = 0..=1, require_equals = true, default_missing_value = "quick")]
    pub bench: Option<String>,
    /// A trace file to take marker KPIs from.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// A marker KPI: NAME=FROM..TO (with --trace). Repeatable.
    #[arg(long, value_name = "NAME=FROM..TO", requires = "trace", value_parser = crate::cmd::util::kpi_spec)]
    pub kpi: Vec<String>,
    /// The daemon's socket (default: $LEVER_SOCKET, else /run/lever/lever.sock).
    #[arg(long, value_name = "PATH")]
    pub daemon_socket: Option<PathBuf>,
    /// Memory sampling interval while a use case runs.
    #[arg(long, value_name = "TIME", value_parser = positive_seconds, default_value = "0.2")]
    pub interval: Duration,
    /// The results store that keeps the run (`lever results`): an SQLite
    /// file (default under the user's data dir) or `postgres://...`.
    #[arg(long, value_name = "PATH|URL", value_parser = crate::cmd::results::db)]
    pub db: Option<String>,
    /// Only write RUN.json; keep nothing in the results store.
    #[arg(long, conflicts_with = "db")]
    pub no_store: bool,
}

/// `--usecase NAME=CMD`'s form, checked by clap.
fn usecase(text: &str) -> Result<String, String> {
    UseCase::parse(text).map_err(|e| e.to_string())?;
    Ok(text.to_string())
}

/// `lever report render`
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Run documents; the first is the base of the comparison.
    #[arg(required = true, value_name = "RUN.json")]
    pub runs: Vec<PathBuf>,
    /// Write the HTML page here.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write Markdown here.
    #[arg(long, value_name = "FILE")]
    pub md: Option<PathBuf>,
    /// Write the runs and their comparison as JSON here. `--json FILE`
    /// does the same (the global `--json` switch takes FILE as its own);
    /// `--json` alone prints it on stdout.
    #[arg(long = "json-out", value_name = "FILE")]
    pub json_out: Option<PathBuf>,
    /// Judge changes even against a run taken under load or throttling
    /// (by default none is called significant then; the conditions that
    /// differ are at the top either way).
    #[arg(long)]
    pub force: bool,
    /// Another run of the base's build on the same machine (repeatable),
    /// as `lever bench compare --base-rerun` takes one: each metric's
    /// values over the base and its reruns give where one more run is
    /// expected (95 % prediction interval), and a change to inside it is
    /// not called one. A rerun taken under load or throttling, or without
    /// recorded conditions, is left out and the page says why.
    #[arg(long = "base-rerun", value_name = "RUN.json")]
    pub base_rerun: Vec<PathBuf>,
    /// Take the base's reruns from the results store as well: every stored
    /// run of the base's board, kernel release and Lever version other
    /// than the runs given (`lever report collect` keeps each run there).
    #[arg(long)]
    pub base_reruns_from_store: bool,
    /// The results store for `--base-reruns-from-store`: an SQLite file
    /// (default under the user's data dir) or `postgres://...`.
    #[arg(long, value_name = "PATH|URL", value_parser = crate::cmd::results::db, requires = "base_reruns_from_store")]
    pub db: Option<String>,
}

/// `render … --json FILE`: the global `--json` is a switch, so clap took
/// FILE as one more run. The word right after `--json` on the command line
/// is the output when it is among the runs.
fn json_file_after_switch(runs: &mut Vec<PathBuf>) -> Option<PathBuf> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let word = args
        .windows(2)
        .find(|w| w[0] == "--json")
        .map(|w| PathBuf::from(&w[1]))?;
    let at = runs.iter().rposition(|r| *r == word)?;
    Some(runs.remove(at))
}

pub fn run(global: &Global, cmd: ReportCommand) -> anyhow::Result<()> {
    match cmd {
        ReportCommand::Collect(a) => run_collect(global, a),
        ReportCommand::Render(a) => run_render(global, a),
    }
}

fn run_collect(global: &Global, a: CollectArgs) -> anyhow::Result<()> {
    let mut opts = Options::new(&global.root);
    opts.usecases = a
        .usecases
        .iter()
        .map(|u| UseCase::parse(u))
        .collect::<Result<_, _>>()?;
    opts.boot_logs = a.boot_logs.iter().map(|b| BootLog::parse(b)).collect();
    opts.latency = a.latency;
    opts.bench = a.bench.map(|b| match b.as_str() {
        "quick" => BenchSource::Quick,
        file => BenchSource::File(file.into()),
    });
    if opts.bench == Some(BenchSource::Quick) {
        let exe = std::env::current_exe()
            .context("cannot find the lever binary for the benchmarks' helper mode")?;
        opts.bench_helper = Some(vec![exe.into(), "bench".into(), "__helper".into()]);
    }
    opts.trace = a.trace;
    opts.kpis = a.kpi;
    if let Some(s) = a.daemon_socket {
        opts.daemon_socket = s;
    }
    opts.interval = a.interval;
    opts.lever_version = env!("LEVER_VERSION").to_string();
    let progress = crate::render::Progress::new("lever report collect");
    let total = collect::SECTIONS.len() as u64;
    let run = collect::collect(&opts, &collect::now_rfc3339(), &mut |i, name| {
        progress.update(i as u64, Some(total), name)
    });
    progress.finish();
    let run = run?;
    let text = serde_json::to_string_pretty(&run)? + "\n";
    lever_report::write_file(&a.output, &text)?;
    let stored = if a.no_store {
        None
    } else {
        Some(
            lever_results::ops::save(a.db.as_deref(), &run).with_context(|| {
                format!(
                    "{} written, but the run is not in the results store",
                    a.output.display()
                )
            })?,
        )
    };
    show::collected(global.json, &run, &a.output, stored.as_ref())
}

fn run_render(global: &Global, mut a: RenderArgs) -> anyhow::Result<()> {
    // A board's build writes Markdown and JSON; the page with its SVG
    // charts is the `html` feature's (the lab host's build).
    #[cfg(not(feature = "html"))]
    if a.html.is_some() {
        return Err(crate::exit::not_in_this_build(
            "lever report render --html",
            "html",
        ));
    }
    if global.json && a.json_out.is_none() {
        a.json_out = json_file_after_switch(&mut a.runs);
    }
    if a.runs.is_empty() {
        bail!("no run document given: lever report render RUN.json [RUN2.json ...]");
    }
    let runs = a
        .runs
        .iter()
        .map(|p| lever_report::read_run(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut reruns = a
        .base_rerun
        .iter()
        .map(|p| lever_report::read_run(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut from_store = None;
    if a.base_reruns_from_store {
        let stored = lever_results::ops::reruns_of(a.db.as_deref(), &runs[0], &runs)?;
        for (id, run) in &stored {
            lever_report::compare::check_bench_detail(run).map_err(|why| {
                crate::exit::bad_value(format!("run {id} in the results store: {why}"))
            })?;
        }
        let ids: Vec<String> = stored.iter().map(|(id, _)| id.to_string()).collect();
        from_store = Some(if ids.is_empty() {
            "base reruns from the results store: none of the base's board, kernel and Lever version"
                .to_string()
        } else {
            format!(
                "base reruns from the results store: {} (runs {})",
                ids.len(),
                ids.join(", ")
            )
        });
        reruns.extend(stored.into_iter().map(|(_, run)| run));
    }
    let judging = lever_report::compare::Judging {
        force: a.force,
        base_reruns: &reruns,
    };
    let mut written = Vec::new();
    #[cfg(feature = "html")]
    if let Some(p) = &a.html {
        lever_report::write_file(p, &lever_report::render::html_with(&runs, judging))?;
        written.push(p.clone());
    }
    if let Some(p) = &a.md {
        lever_report::write_file(p, &lever_report::render::markdown_with(&runs, judging))?;
        written.push(p.clone());
    }
    if let Some(p) = &a.json_out {
        lever_report::write_file(p, &lever_report::render::json_with(&runs, judging))?;
        written.push(p.clone());
    }
    // `--json` alone: the document on stdout.
    let stdout_json = global.json && a.json_out.is_none();
    show::rendered(stdout_json, &runs, &written, judging, from_store)
}
