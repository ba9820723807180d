//! `lever latency`: cyclictest's measurement with cyclictest's own flags
//! (so the seeds' command lines run unchanged), `lever latency import
//! FILE` (`lever rt check` is in `rt.rs`).
//!
//! cyclictest's flags collide with two of clap's conventions — `-h` is the
//! histogram, not help, and `--json FILE` names a file while Lever's global
//! `--json` is a switch — so the subcommand takes its words raw and parses
//! them here with a parser of its own.

mod flags;
mod kpi;

use crate::args::Global;
use crate::render::{self, emit};
use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use flags::MeasureFlags;
use lever_kernel::KernelFs;
use lever_latency::cyclictest::{self, SysInfo};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

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
    /// Seed 000 §3.6's KPI table: the measurement with no load, then under
    /// --load (default cpu load 60% on every CPU); --pass-us N for pass/fail.
    #[command(disable_help_flag = true)]
    Kpi(Box<kpi::KpiArgs>),
}

#[derive(Debug, Args)]
struct ImportArgs {
    /// The file.
    file: PathBuf,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
    /// Write its histograms as an SVG chart to FILE.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Print this help (`lever latency`'s parser has no automatic one:
    /// cyclictest's `-h` is the histogram).
    #[arg(short = 'h', long, action = clap::ArgAction::Help)]
    help: Option<bool>,
}

/// The kernel root: `--root` after `latency`, else the global one.
fn kernel_fs(global: &Global, flags: &MeasureFlags) -> anyhow::Result<KernelFs> {
    let root = flags.root.clone().unwrap_or_else(|| global.root.clone());
    Ok(if root == std::path::Path::new("/") {
        KernelFs::new(&root)
    } else {
        KernelFs::open(&root)?
    })
}

/// The last of SIGINT/SIGTERM received (0: none).
static SIGNAL: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

/// A flag that Ctrl-C and SIGTERM set, so the measurement ends with a report.
fn stop_on_signals() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let which = SIGNAL.get_or_init(|| Arc::new(AtomicUsize::new(0)));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).context("install Ctrl-C handler")?;
        signal_hook::flag::register_usize(sig, Arc::clone(which), sig as usize)
            .context("install Ctrl-C handler")?;
    }
    Ok(stop)
}

/// Which signal interrupted the run, for the report's notes.
fn interrupted_by() -> Option<&'static str> {
    match SIGNAL.get()?.load(Ordering::Relaxed) as i32 {
        signal_hook::consts::SIGINT => Some("interrupted by SIGINT (Ctrl-C)"),
        signal_hook::consts::SIGTERM => Some("interrupted by SIGTERM"),
        _ => None,
    }
}

/// `--plot FILE`: the chart, or a note on stderr when nothing has a
/// histogram to draw.
fn plot(
    path: Option<&std::path::Path>,
    report: &lever_latency::LatencyReport,
) -> anyhow::Result<()> {
    if let Some(p) = path {
        if !lever_latency::plot::write(p, report)? {
            eprintln!(
                "lever: --plot {}: no histogram with samples to plot",
                p.display()
            );
        }
    }
    Ok(())
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
            .is_some_and(|w| !w.starts_with('-') && w != "import" && w != "kpi")
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
        // clap's own message (one `error:`), exit 2 or 3 as for any
        // command line (`main` prints it).
        Err(e) => return Err(e.into()),
    };
    match cli.sub {
        Some(LatencySub::Import(a)) => {
            let report = lever_latency::import::import_file(&a.file)?;
            plot(a.plot.as_deref(), &report)?;
            return emit(global.json || a.json, &report, render::latency::report);
        }
        Some(LatencySub::Kpi(a)) => return kpi::run(global, *a, json_file),
        None => {}
    }
    let fs = kernel_fs(global, &cli.flags)?;
    let flags = cli.flags;
    let (stdout_json, json_file) = match (&flags.json, json_file) {
        (_, Some(f)) => (false, Some(f)),
        (Some(Some(f)), None) => (global.json, Some(f.clone())),
        (Some(None), None) => (true, None),
        (None, None) => (global.json, None),
    };
    let cfg = flags.config()?;

    let stop = stop_on_signals()?;
    let start = std::time::SystemTime::now();
    let status = render::latency::Status::new(!flags.quiet);
    let recorder = lever_measure::conditions::Recorder::start(
        &fs,
        env!("LEVER_VERSION"),
        Some(CONDITIONS_EVERY),
        "",
    );
    let mut report = lever_latency::run::measure(&fs, &cfg, &stop, |snaps| status.update(snaps))?;
    let conditions = recorder.finish();
    status.finish();
    if report.ended == lever_latency::report::Ended::Interrupted {
        report.notes.extend(interrupted_by().map(String::from));
    }
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
            cfg.smp,
        );
        lever_latency::cyclictest::write_json(path, &doc)?;
    }
    if let Some(path) = &flags.histfile {
        if let Some(text) = cyclictest::histogram_text(&report) {
            lever_latency::cyclictest::write_text(path, &text)?;
        }
    }
    plot(flags.plot.as_deref(), &report)?;
    if flags.histfile.is_none() && !stdout_json && report.histogram_us.is_some() {
        // `-h` on stdout: exactly what cyclictest prints there, for the
        // scripts that parse it; Lever's own report goes to stderr.
        eprint!("{}", render::latency::measured(&report));
        eprint!("{}", render::conditions::summary(&conditions));
        return render::out(&render::latency::cyclictest_stdout(&report, flags.quiet));
    }
    let measured = Measured {
        report: &report,
        conditions,
    };
    emit(stdout_json, &measured, |m| {
        render::latency::measured(m.report) + &render::conditions::summary(&m.conditions)
    })
}

/// How often the run's conditions are sampled while it measures (a
/// thread of ordinary priority reading a few dozen files: it does not
/// compete with the measuring threads, which are real-time).
const CONDITIONS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// What `lever latency` prints: the report and the run's conditions.
#[derive(serde::Serialize)]
struct Measured<'a> {
    #[serde(flatten)]
    report: &'a lever_latency::LatencyReport,
    conditions: lever_conditions::Conditions,
}
