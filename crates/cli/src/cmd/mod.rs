//! One module per command; `run` dispatches.

mod resources;
mod sim;
mod target;

use crate::args::{Cli, Command};

/// Run the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Sim(cmd) => sim::run(&cli.global, cmd),
        Command::Resources(args) => resources::run(&cli.global, args),
        Command::Target(cmd) => target::run(&cli.global, cmd),
    }
}
