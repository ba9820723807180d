//! `lever latency kpi`: seed 000 §3.6's KPI table (no load, then under
//! load) with seed 001's pass criterion.

use super::flags::MeasureFlags;
use crate::args::Global;
use crate::render::{self, emit};
use clap::Args;
use std::path::PathBuf;

/// `lever latency kpi [cyclictest flags] [--load SPEC] [--pass-us N]`
#[derive(Debug, Args)]
pub struct KpiArgs {
    #[command(flatten)]
    flags: MeasureFlags,
    /// Pass when every thread's maximum stays under N µs (seed 001: 20).
    #[arg(long, value_name = "N")]
    pass_us: Option<u64>,
    /// Print Markdown tables.
    #[arg(long)]
    markdown: bool,
    /// Print this help.
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
}

/// Run both phases and print the table (`--json [FILE]`: the report as
/// JSON on stdout, or in FILE); exit status 1 when `--pass-us` fails.
pub fn run(global: &Global, a: KpiArgs, json_file: Option<PathBuf>) -> anyhow::Result<()> {
    let fs = super::kernel_fs(global, &a.flags)?;
    let cfg = a.flags.config()?;
    let stop = super::stop_on_signals()?;
    let status = render::latency::Status::new(!a.flags.quiet);
    let report = lever_latency::kpi::run(&fs, &cfg, a.pass_us, &stop, |_, s| status.update(s))?;
    status.finish();
    let file = json_file.or(a.flags.json.clone().flatten());
    if let Some(path) = &file {
        lever_latency::cyclictest::write_json(path, &serde_json::to_value(&report)?)?;
    }
    let stdout_json = global.json && file.is_none() || matches!(a.flags.json, Some(None));
    emit(stdout_json, &report, |k| {
        render::latency::kpi::report(k, a.markdown)
    })?;
    // A failed criterion is a failed command, for CI scripts.
    match (report.pass, a.pass_us) {
        (Some(false), Some(limit)) => Err(crate::exit::ChecksFailed(format!(
            "KPI failed: a latency reached {limit} µs or more"
        ))
        .into()),
        _ => Ok(()),
    }
}
