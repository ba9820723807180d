//! One module per command; `run` dispatches.

pub mod bench_daemon;
pub mod client;
pub mod daemon;
mod resources;
mod sim;
mod target;
#[allow(dead_code)] // remove once every helper is used by a command
pub mod util;

use crate::args::{Cli, Command};

/// Run the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Sim(cmd) => sim::run(&cli.global, cmd),
        Command::Resources(args) => resources::run(&cli.global, args),
        Command::Target(cmd) => target::run(&cli.global, cmd),
        Command::Daemon(args) => daemon::run_daemon(&cli.global, args),
        Command::Restore(args) => daemon::run_restore(&cli.global, args),
        Command::Acquire(args) => client::acquire(&cli.global, args),
        Command::Release(args) => client::release(&cli.global, args),
        Command::Status(args) => client::status(&cli.global, args),
        Command::Explain(args) => client::explain(&cli.global, args),
        Command::Perflock(args) => client::perflock(&cli.global, args),
        Command::BenchDaemon(args) => bench_daemon::run(&cli.global, args),
    }
}
