//! `lever bench`: LMBench's micro-benchmarks and the CPU benchmarks of
//! seed 002, with statistics (`lever_bench::run`); `lever bench compare
//! BASE NEW` for CI. The hidden `__helper` subcommand is the small helper
//! mode that `lat_proc-exec`/`-shell` exec and `lat_ctx` rings are made of,
//! so a board needs nothing but the `lever` binary.

use crate::args::Global;
use crate::render::{self, emit, Progress};
use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use lever_bench::{compare, Options};
use std::path::PathBuf;

/// `lever bench`
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub command: Option<BenchCommand>,
    /// Short samples and fewer sizes: the whole suite in about a minute.
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// Longer budget per test (may take many minutes).
    #[arg(long)]
    pub full: bool,
    /// Only tests whose name matches one of these comma-separated globs
    /// (`lat_syscall-*,bw_mem-*`).
    #[arg(long, value_name = "GLOB")]
    pub only: Option<String>,
    /// Pin the benchmark and its peer threads to this CPU.
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
    /// Take exactly N samples per test instead of sampling until the 95%
    /// interval of the median is within ±2%.
    #[arg(long, value_name = "N", value_parser = at_least_one)]
    pub repeat: Option<usize>,
    /// Passes over the suite, each in a process of its own with the
    /// two-ended tests on the next CPU: each test's samples taken in N
    /// parts, so the report shows how far a test drifts between them and
    /// `bench compare` does not call a change within that drift one
    /// (default 2; 1 with --quick, which keeps to its minute)
    #[arg(long, value_name = "N", value_parser = at_least_one)]
    pub passes: Option<usize>,
    /// Where the file tests make their scratch files (LMBench's FSDIR):
    /// their figures are this directory's file system (default: the
    /// system's temporary directory, `$TMPDIR` or /tmp).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Most sampling time per test (bare number: seconds; `500ms`, `2s`).
    #[arg(long, value_name = "TIME", value_parser = crate::cmd::util::positive_seconds)]
    pub max_time: Option<std::time::Duration>,
    /// Also write the report, samples included, as JSON to FILE (the
    /// input of `lever bench compare`).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the tables as Markdown.
    #[arg(long)]
    pub markdown: bool,
    /// List the selected tests without running them.
    #[arg(long)]
    pub list: bool,
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Compare two `lever bench -o FILE` reports: per-test change, direction
    /// and significance (Mann-Whitney U); exits 1 when a test got
    /// significantly worse by more than the threshold, 9 when what got
    /// worse could not be judged (a run under load or throttling, a
    /// machine whose own speed changed, caches that reached differently).
    Compare {
        /// The baseline report.
        base: PathBuf,
        /// The report to judge.
        new: PathBuf,
        /// Another run of the baseline's build on the same machine
        /// (repeatable): each test's medians over the baseline and its
        /// reruns give where one more run is expected (95 % prediction
        /// interval), and a new median inside it is not called a change:
        /// reruns of one build differ that much here.
        #[arg(long = "base-rerun", value_name = "FILE")]
        base_rerun: Vec<PathBuf>,
        /// Smallest significant worsening that fails, percent.
        #[arg(long, default_value_t = lever_bench::compare::DEFAULT_THRESHOLD_PCT, value_name = "PCT")]
        threshold: f64,
        /// Judge changes even when either run was taken under load or
        /// throttling (by default none is called significant then, and
        /// the command exits 9).
        #[arg(long)]
        force: bool,
    },
    /// The helper mode the benchmarks exec (not for people).
    #[command(name = "__helper", hide = true)]
    Helper {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

pub fn run(global: &Global, args: BenchArgs) -> anyhow::Result<()> {
    match args.command {
        Some(BenchCommand::Helper { args }) => Ok(lever_bench::helper_main(&args)?),
        Some(BenchCommand::Compare {
            base,
            new,
            base_rerun,
            threshold,
            force,
        }) => run_compare(global, &base, &base_rerun, &new, threshold, force),
        None => run_suite(global, args),
    }
}

/// `--repeat`'s parser: clap reports the error (bad input, exit 3).
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

fn options(global: &Global, args: &BenchArgs) -> anyhow::Result<Options> {
    let mut opts = if args.quick {
        Options::quick()
    } else {
        Options::standard()
    };
    if args.full {
        opts.policy.max_time *= 5;
        opts.policy.max_samples *= 5;
    }
    if let Some(t) = args.max_time {
        opts.policy.max_time = t;
    }
    if let Some(n) = args.repeat {
        opts.policy.fixed = Some(n);
    }
    if let Some(n) = args.passes {
        opts.passes = n;
    }
    opts.only = args.only.clone();
    if let Some(d) = &args.dir {
        if !d.is_dir() {
            return Err(crate::exit::bad_value(format!(
                "--dir {}: not a directory",
                d.display()
            )));
        }
        opts.dir = Some(d.clone());
    }
    opts.cpu = args.cpu;
    opts.root = global.root.clone();
    let exe =
        std::env::current_exe().context("cannot find the lever binary for the helper mode")?;
    opts.helper = Some(vec![exe.into(), "bench".into(), "__helper".into()]);
    Ok(opts)
}

fn run_suite(global: &Global, args: BenchArgs) -> anyhow::Result<()> {
    let opts = options(global, &args)?;
    if args.list {
        let tests = lever_bench::list(&opts);
        return emit(global.json, &tests, |t| render::bench::list(t));
    }
    let progress = Progress::new("lever bench");
    let report = lever_bench::run(&opts, &mut |done, total, name| {
        progress.update(done as u64, Some(total as u64), name)
    });
    progress.finish();
    let report = report?;
    if let Some(path) = &args.output {
        lever_bench::write_report(path, &report)?;
    }
    emit(global.json, &report, |r| {
        render::bench::report(r, args.markdown)
    })
}

fn run_compare(
    global: &Global,
    base: &std::path::Path,
    reruns: &[PathBuf],
    new: &std::path::Path,
    threshold: f64,
    force: bool,
) -> anyhow::Result<()> {
    let b = compare::read_report(base)?;
    let reruns = reruns
        .iter()
        .map(|r| compare::read_report(r))
        .collect::<Result<Vec<_>, _>>()?;
    let n = compare::read_report(new)?;
    let c = compare::compare_reruns(&b, &reruns, &n, threshold, force);
    emit(global.json, &c, render::bench::comparison)?;
    // The check could not be made (a run under load or throttling), or
    // the tests that got worse depend on a probe whose timing changed or
    // lie where the caches reached differently.
    let withheld = c
        .conditions
        .as_ref()
        .and_then(|cc| cc.withheld_reason())
        .or_else(|| c.withheld_reason());
    // What was judged and got worse fails the check (exit 1), whatever
    // else could not be judged.
    if !c.regressions.is_empty() {
        bail!(
            "{} test(s) significantly worse by more than {threshold}%: {}{}",
            c.regressions.len(),
            c.regressions.join(", "),
            withheld.map_or(String::new(), |why| format!("; and {why}"))
        );
    }
    // A CI job must not pass on a check it could not make, and can tell
    // it from a regression (exit 9).
    if let Some(why) = withheld {
        return Err(crate::exit::NotJudged(why).into());
    }
    Ok(())
}
