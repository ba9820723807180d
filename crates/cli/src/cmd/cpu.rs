//! `lever cpu`: topology, clusters, caches, cpufreq residency, cpuidle and
//! GPU (seed 000 §1.1, §5.1; seed 004); `lever cpu ipc -- CMD`: cycles,
//! instructions, IPC and the cache-miss chain (seed 000 §7.1, §7.2).

use clap::{Args, Subcommand};
use lever_cpu::counters::{NotCountable, Session};
use lever_cpu::{cpufreq, cpuidle, gpu, topology};
use lever_kernel::KernelFs;
use lever_measure::sampling::{run_command, RunOutcome};
use std::process::ExitStatus;

use crate::args::Global;
use crate::render::cpu::ipc::IpcOutput;
use crate::render::cpu::Inventory;
use crate::render::{self, emit};

/// `lever cpu [ipc -- CMD]`.
#[derive(Debug, Args)]
pub struct CpuArgs {
    #[command(subcommand)]
    pub command: Option<CpuCommand>,
}

#[derive(Debug, Subcommand)]
pub enum CpuCommand {
    /// Count cycles, instructions and the seed's cache-miss events while
    /// CMD runs (perf_event_open), and read the IPC as seed 000 §7.1 does.
    /// Without a PMU, say which hardware counters are missing and count
    /// the software ones (task-clock, context switches, CPU migrations,
    /// page faults). Exits with CMD's exit status, like `perf stat`.
    Ipc {
        /// The command to count, after `--`.
        #[arg(last = true, required = true, value_name = "CMD")]
        cmd: Vec<String>,
    },
}

pub fn run(global: &Global, args: CpuArgs) -> anyhow::Result<()> {
    let fs = KernelFs::new(&global.root);
    match args.command {
        None => inventory(global, &fs),
        Some(CpuCommand::Ipc { cmd }) => ipc(global, &fs, &cmd),
    }
}

fn read_inventory(fs: &KernelFs) -> anyhow::Result<Inventory> {
    let topology = topology::read(fs)?;
    let (cpufreq, cpufreq_note) = cpufreq::read(fs)?;
    let cpuidle = cpuidle::read(fs, &topology.online)?;
    let gpu = gpu::read(fs)?;
    Ok(Inventory {
        topology,
        cpufreq,
        cpufreq_note,
        cpuidle,
        gpu,
    })
}

fn inventory(global: &Global, fs: &KernelFs) -> anyhow::Result<()> {
    emit(global.json, &read_inventory(fs)?, render::cpu::inventory)
}

/// Count CMD and exit with its status, as `perf stat` does: the command
/// runs even when nothing can be counted here.
fn ipc(global: &Global, fs: &KernelFs, cmd: &[String]) -> anyhow::Result<()> {
    let (outcome, out) = match Session::open(fs) {
        Ok(mut session) => {
            session.start()?;
            let outcome = run_command(cmd);
            let report = session.finish()?;
            let outcome = outcome?;
            let out = IpcOutput {
                command: cmd.to_vec(),
                available: true,
                reason: None,
                exit_code: outcome.status.code(),
                elapsed_s: Some(outcome.elapsed.as_secs_f64()),
                report: Some(report),
            };
            (outcome, out)
        }
        Err(e) => {
            let outcome = run_command(cmd)?;
            let out = not_countable(cmd, &e, &outcome);
            (outcome, out)
        }
    };
    emit(global.json, &out, render::cpu::ipc::report)?;
    exit_like(&outcome.status)
}

fn not_countable(cmd: &[String], e: &NotCountable, outcome: &RunOutcome) -> IpcOutput {
    IpcOutput {
        command: cmd.to_vec(),
        available: false,
        reason: Some(e.to_string()),
        exit_code: outcome.status.code(),
        elapsed_s: Some(outcome.elapsed.as_secs_f64()),
        report: None,
    }
}

/// Pass the command's exit status through (128 + signal when killed, as a
/// shell reports it), like `perf stat`; `main` ends with it.
pub(crate) fn exit_like(status: &ExitStatus) -> anyhow::Result<()> {
    use std::os::unix::process::ExitStatusExt;
    if status.success() {
        return Ok(());
    }
    let code = status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    Err(crate::exit::CommandExit(code.clamp(1, 255) as u8).into())
}
