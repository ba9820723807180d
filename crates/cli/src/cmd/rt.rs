//! `lever rt check`: seed 000 §3.6 / seed 001's real-time tuning steps as
//! checks against `--root`.

use crate::args::Global;
use crate::render::{self, emit};
use clap::{Args, Subcommand};
use lever_kernel::KernelFs;
use lever_latency::config;

/// `lever rt ...`
#[derive(Debug, Subcommand)]
pub enum RtCommand {
    /// Check the kernel and tunables against seed 000 §3.6 / seed 001.
    Check(RtCheckArgs),
}

/// `lever rt check`
#[derive(Debug, Args)]
pub struct RtCheckArgs {
    /// The CPUs that run real-time work (default: isolcpus from the
    /// command line, else the last CPU).
    #[arg(long, value_name = "LIST", value_parser = crate::cmd::util::cpu_list)]
    pub rt_cpus: Option<String>,
}

/// Run `lever rt ...`.
pub fn run_rt(global: &Global, cmd: RtCommand) -> anyhow::Result<()> {
    let RtCommand::Check(args) = cmd;
    let fs = KernelFs::new(&global.root);
    let rt_cpus = args
        .rt_cpus
        .as_deref()
        .map(|l| config::parse_cpu_list("--rt-cpus", l))
        .transpose()?;
    let report = lever_latency::rtcheck::check(&fs, rt_cpus.as_deref())?;
    emit(global.json, &report, render::latency::rt_check)?;
    // A failed check fails the command (exit 1), like `latency kpi`;
    // warnings do not.
    let failed = report.count(lever_latency::rtcheck::Verdict::Fail);
    if failed > 0 {
        return Err(crate::exit::ChecksFailed(format!(
            "rt check: {failed} of {} checks failed",
            report.checks.len()
        ))
        .into());
    }
    Ok(())
}
