//! `lever flamegraph`: an SVG flame graph from `perf script` output, from a
//! `perf.data` file, or by profiling a command with `perf record -g`.

//!
//! A host extra (the `flamegraph` feature, inferno): a board's build keeps
//! the command and its flags and says which feature draws the graph.

use crate::args::Global;
#[cfg(feature = "flamegraph")]
use crate::render::flamegraph::FlameReport;
#[cfg(feature = "flamegraph")]
use crate::render::{self, emit};
#[cfg(feature = "flamegraph")]
use anyhow::{bail, Context};
use clap::Args;
#[cfg(feature = "flamegraph")]
use lever_flamegraph::{collapse_perf_script, perf, read_folded, Profile};
#[cfg(feature = "flamegraph")]
use std::io::Read;
#[cfg(feature = "flamegraph")]
use std::path::Path;
use std::path::PathBuf;

/// `lever flamegraph` flags.
#[derive(Debug, Args)]
pub struct FlamegraphArgs {
    /// Input: `perf script` text, a `perf.data` file (read with `perf
    /// script`), or folded stacks with --folded; `-` for stdin. Without it,
    /// profile the command after `--`.
    #[arg(short, long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// The input is already folded (`a;b;c COUNT` per line).
    #[arg(long)]
    pub folded: bool,
    /// Output SVG.
    #[arg(short, long, value_name = "SVG", default_value = "flamegraph.svg")]
    pub output: PathBuf,
    /// Also write the folded stacks here.
    #[arg(long, value_name = "FILE")]
    pub folded_out: Option<PathBuf>,
    /// Title of the graph (default: the input or the command).
    #[arg(long)]
    pub title: Option<String>,
    /// Sampling frequency for `perf record`, in Hz.
    #[arg(short = 'F', long, default_value_t = 999)]
    pub frequency: u32,
    /// How many hot functions to list.
    #[arg(long, default_value_t = 15)]
    pub top: usize,
    /// Command to profile (after `--`).
    #[arg(last = true)]
    pub command: Vec<String>,
}

#[cfg(not(feature = "flamegraph"))]
pub fn run(_global: &Global, _args: FlamegraphArgs) -> anyhow::Result<()> {
    Err(crate::exit::not_in_this_build(
        "lever flamegraph",
        "flamegraph",
    ))
}

#[cfg(feature = "flamegraph")]
pub fn run(global: &Global, args: FlamegraphArgs) -> anyhow::Result<()> {
    let (text, source) = match (&args.input, args.command.is_empty()) {
        (Some(_), false) => bail!("give either -i FILE or a command after `--`, not both"),
        (None, true) => bail!("nothing to draw: give -i FILE (perf script output or perf.data) or a command after `--`"),
        (None, false) => (
            perf::record(&args.command, args.frequency)?,
            args.command.join(" "),
        ),
        (Some(p), true) if p == Path::new("-") => {
            let mut t = String::new();
            std::io::stdin().read_to_string(&mut t)?;
            (t, "stdin".to_string())
        }
        (Some(p), true) => (perf::read_input(p)?, p.display().to_string()),
    };
    let folded = if args.folded {
        read_folded(text.as_bytes())?
    } else {
        collapse_perf_script(text.as_bytes()).with_context(|| format!("folding {source}"))?
    };
    let profile = Profile::from_folded(&folded)?;
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("lever flamegraph: {source}"));
    perf::write_svg(&args.output, &folded, &title)?;
    if let Some(p) = &args.folded_out {
        perf::write_folded(p, &folded)?;
    }
    let report = FlameReport {
        hottest: profile.hottest(args.top).to_vec(),
        source,
        stacks: profile.stacks,
        svg: args.output.clone(),
        weight: profile.weight,
    };
    emit(global.json, &report, render::flamegraph::report)
}
