//! Command-line arguments (parsing only; no side effects).

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;

/// Lever: a vendor-neutral performance toolkit for embedded Linux.
///
/// Resource manager (boost or cap tunables such as CPU min frequency or
/// uclamp, aggregated over all clients and restored afterwards) and
/// measurement toolkit. Every kernel path goes through --root, so Lever runs
/// the same against a device, this machine, or a simulated board.
#[derive(Debug, Parser)]
#[command(name = "lever", version = env!("LEVER_VERSION"), propagate_version = true)]
#[command(after_help = "Examples:\n  \
    lever sim create qcs6490 /tmp/board     write a simulated QCS6490 /sys + /proc tree\n  \
    lever --root /tmp/board resources       list its tunables with their current values\n  \
    lever resources --json                  the same for this machine, as JSON")]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// The commands that only talk to the daemon, which has its own root: the
/// global `--root` means nothing for them, so their help and completion
/// do not offer it (given anyway, it is refused: exit 3).
pub const CLIENT_COMMANDS: &[&str] = &[
    "acquire", "release", "status", "explain", "perflock", "signal", "unsignal", "run",
];

/// The command line as parsed, completed and documented: [`Cli`]'s
/// definitions, built (globals on every subcommand), with `--root` hidden
/// on the [`CLIENT_COMMANDS`].
pub fn command() -> clap::Command {
    let mut cmd = Cli::command();
    let root = cmd
        .get_arguments()
        .find(|a| a.get_id() == "root")
        .expect("the global --root")
        .clone()
        .hide(true);
    // A subcommand that has the global's id keeps its own copy when
    // clap propagates globals at build time; the value still reaches
    // `Global::root`.
    for name in CLIENT_COMMANDS {
        cmd = cmd.mut_subcommand(name, |s| s.arg(root.clone()));
    }
    cmd.build();
    cmd
}

/// Parse `args` (the first is the program name) with [`command`].
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut cmd = command();
    let matches = cmd.try_get_matches_from_mut(args)?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

/// Flags accepted before or after any subcommand.
#[derive(Debug, Args)]
pub struct Global {
    /// Prefix for every kernel path (/sys, /proc, /dev): a simulated board or
    /// a tree copied off a device.
    #[arg(long, global = true, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
    /// Print machine-readable JSON instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Simulated boards: realistic fake /sys + /proc trees for --root.
    #[command(subcommand)]
    Sim(SimCommand),
    /// List the tunable resources of a target with their current values.
    Resources(ResourcesArgs),
    /// Target files: built-in resource sets, and checking your own.
    #[command(subcommand)]
    Target(TargetCommand),
    /// Use cases of a target (`lever signal NAME` triggers one): id,
    /// duration, permission, variants, what each sets.
    Usecases(crate::cmd::target::UsecasesArgs),
    /// Run the resource manager daemon.
    Daemon(crate::cmd::daemon::DaemonArgs),
    /// Write back every original value a crashed daemon left changed.
    Restore(crate::cmd::daemon::RestoreArgs),
    /// Ask the daemon for resource values and hold them (lease).
    Acquire(crate::cmd::client::AcquireArgs),
    /// Release a request by handle.
    Release(crate::cmd::client::ReleaseArgs),
    /// The daemon's resources and live requests.
    Status(crate::cmd::client::StatusArgs),
    /// Why a resource holds its value: rule, votes, original.
    Explain(crate::cmd::client::ExplainArgs),
    /// perflock_native_test form: `--acq <handle> <duration> <opcode,value,...>`
    Perflock(crate::cmd::client::PerflockArgs),
    /// Trigger a use case (`lever usecases` lists them) and hold it until
    /// Ctrl-C or its duration; --attr fps=30,... picks the variant.
    Signal(crate::cmd::signal::SignalArgs),
    /// End a use case `lever signal --detach` left with the daemon.
    Unsignal(crate::cmd::signal::UnsignalArgs),
    /// Start a command registered as an app of the daemon's target
    /// (`--app NAME -- CMD`); exits with its status.
    Run(crate::cmd::run::RunArgs),
    /// LMBench's micro-benchmarks and Dhrystone/Whetstone/Linpack, with
    /// statistics; `bench compare BASE NEW` for CI.
    Bench(crate::cmd::bench::BenchArgs),
    /// Benchmark a daemon on a simulated board: latency, throughput, RSS, idle CPU.
    BenchDaemon(crate::cmd::bench_daemon::BenchDaemonArgs),
    /// CPU inventory (clusters, caches, cpufreq residency, cpuidle, GPU); `cpu ipc -- CMD`.
    Cpu(crate::cmd::cpu::CpuArgs),
    /// Boot time stages from a serial log, systemd-analyze and journal markers.
    Boot(crate::cmd::boot::BootArgs),
    /// Memory: the seed's memory map, per-process memory, thrashing check.
    #[command(subcommand)]
    Mem(crate::cmd::mem::MemCommand),
    /// I/O-bound check: /proc/diskstats and vmstat deltas around a command.
    Io(crate::cmd::io::IoArgs),
    /// Thermal zones, trip points, cooling devices and their states;
    /// `--watch` (or `-- CMD`) for temperatures over time and each peak.
    Thermal(crate::cmd::thermal::ThermalArgs),
    /// CPU per process, thread and core, and the total (0–N×100 %), from
    /// /proc for `-d TIME` or while `-- CMD` runs; table, JSON, SVG.
    Top(crate::cmd::top::TopArgs),
    /// Ftrace: record through tracefs, analyze, export to Perfetto, mark.
    #[command(subcommand)]
    Trace(crate::cmd::trace::TraceCommand),
    /// Flame graph (SVG) from perf script output, perf.data, or `-- CMD`.
    Flamegraph(crate::cmd::flamegraph::FlamegraphArgs),
    /// Real-time latency with cyclictest's flags; `latency import FILE`
    /// (`lever latency --help` lists the flags).
    #[command(disable_help_flag = true)]
    Latency(crate::cmd::latency::LatencyArgs),
    /// Real-time readiness: seed 000 §3.6 / seed 001's tuning as checks.
    #[command(subcommand)]
    Rt(crate::cmd::rt::RtCommand),
    /// Profiles: named sets of tunable values from the seeds (performance,
    /// rt, ...): list, show, diff, verify, apply (through the daemon, or
    /// --direct), off, hold, import-tuned.
    #[command(subcommand)]
    Profile(crate::cmd::profile::ProfileCommand),
    /// Stored runs (SQLite by default, or PostgreSQL with --db): list,
    /// show, trend METRIC, export --parquet DIR, import RUN.json.
    Results(crate::cmd::results::ResultsArgs),
    /// Shell completion script (bash, zsh, fish): `source <(lever completions bash)`.
    Completions(crate::cmd::completions::CompletionsArgs),
    /// Man pages: lever(1) on stdout, or every page into -o DIR.
    Man(crate::cmd::man::ManArgs),
    /// One run of the board (collect RUN.json) and its page: HTML with
    /// inline SVG plots, Markdown, JSON; runs compared side by side.
    #[command(subcommand)]
    Report(crate::cmd::report::ReportCommand),
    /// Device tree (live, .dtb or .dts): DVFS maps with the L3/LLCC/DDR
    /// frequencies CPU frequencies imply, memory carveouts, nodes.
    #[command(subcommand)]
    Dt(crate::cmd::dt::DtCommand),
}

#[derive(Debug, Subcommand)]
pub enum SimCommand {
    /// Name the boards that can be simulated.
    List,
    /// Write a simulated board's tree into DIR (created if missing; must be
    /// empty or hold the same simulated board).
    Create {
        /// Board name (see `lever sim list`).
        #[arg(value_parser = crate::cmd::util::sim_board())]
        board: String,
        /// Directory to create the tree in; then use `--root DIR`.
        dir: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct ResourcesArgs {
    /// Built-in target name or path to a target YAML file. Default: the
    /// built-in target whose `compatible` matches the device tree under
    /// --root, else `generic` (discovered from what the kernel exposes).
    #[arg(long, short = 't', value_name = "TARGET", value_parser = crate::cmd::util::target_name(), hide_possible_values = true)]
    pub target: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum TargetCommand {
    /// List the built-in targets.
    List,
    /// Check a target (built-in name or YAML file) against --root: parse,
    /// expand and bind every node; errors name file:line:column and field.
    Check {
        /// Built-in target name or path to a YAML file.
        #[arg(value_parser = crate::cmd::util::target_name(), hide_possible_values = true)]
        target: String,
    },
    /// Convert a URM configuration directory (ResourcesConfig.yaml,
    /// SignalsConfig.yaml, PerApp.yaml, InitConfig.yaml; flat or in
    /// common/, target/, custom/ layers) into a Lever target file with use
    /// cases and apps, for the board under --root.
    ImportUrm(crate::cmd::target::ImportUrmArgs),
}
#[cfg(test)]
mod tests;
