//! One module per command; `run` dispatches.

pub mod bench;
pub mod bench_daemon;
pub mod boot;
pub mod client;
pub mod completions;
pub mod cpu;
pub mod daemon;
pub mod dt;
pub mod flamegraph;
pub mod io;
pub mod latency;
pub mod man;
pub mod mem;
pub mod profile;
pub mod report;
mod resources;
pub mod results;
pub mod rt;
pub mod run;
pub mod signal;
mod sim;
pub mod target;
pub mod thermal;
pub mod top;
pub mod trace;
pub mod util;

use crate::args::{Cli, Command};

/// Run the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    // A --root that is not a kernel tree is a typo, not an empty machine:
    // refuse it here, once, for every command.
    if cli.global.root != std::path::Path::new("/") {
        lever_kernel::KernelFs::open(&cli.global.root)?;
    }
    match cli.command {
        Command::Sim(cmd) => sim::run(&cli.global, cmd),
        Command::Resources(args) => resources::run(&cli.global, args),
        Command::Target(cmd) => target::run(&cli.global, cmd),
        Command::Usecases(args) => target::usecases(&cli.global, args),
        Command::Daemon(args) => daemon::run_daemon(&cli.global, args),
        Command::Restore(args) => daemon::run_restore(&cli.global, args),
        Command::Acquire(args) => client::acquire(&cli.global, args),
        Command::Release(args) => client::release(&cli.global, args),
        Command::Status(args) => client::status(&cli.global, args),
        Command::Explain(args) => client::explain(&cli.global, args),
        Command::Perflock(args) => client::perflock(&cli.global, args),
        Command::Signal(args) => signal::signal(&cli.global, args),
        Command::Unsignal(args) => signal::unsignal(&cli.global, args),
        Command::Run(args) => run::run(&cli.global, args),
        Command::Bench(args) => bench::run(&cli.global, args),
        Command::BenchDaemon(args) => bench_daemon::run(&cli.global, args),
        Command::Cpu(args) => cpu::run(&cli.global, args),
        Command::Boot(args) => boot::run(&cli.global, args),
        Command::Mem(cmd) => mem::run(&cli.global, cmd),
        Command::Io(args) => io::run(&cli.global, args),
        Command::Thermal(args) => thermal::run(&cli.global, args),
        Command::Top(args) => top::run(&cli.global, args),
        Command::Trace(cmd) => trace::run(&cli.global, cmd),
        Command::Flamegraph(args) => flamegraph::run(&cli.global, args),
        Command::Latency(args) => latency::run(&cli.global, args),
        Command::Rt(cmd) => rt::run_rt(&cli.global, cmd),
        Command::Profile(cmd) => profile::run(&cli.global, cmd),
        Command::Results(args) => results::run(&cli.global, args),
        Command::Completions(args) => completions::run(&cli.global, args),
        Command::Man(args) => man::run(&cli.global, args),
        Command::Report(cmd) => report::run(&cli.global, cmd),
        Command::Dt(cmd) => dt::run(&cli.global, cmd),
    }
}
