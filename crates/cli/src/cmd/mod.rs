//! One module per command; `run` dispatches.

pub mod boot;
pub mod cpu;
pub mod io;
pub mod mem;
mod resources;
mod sim;
mod target;
pub mod trace;
#[allow(dead_code)] // remove once every helper is used by a command
pub mod util;

use crate::args::{Cli, Command};

/// Run the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Sim(cmd) => sim::run(&cli.global, cmd),
        Command::Resources(args) => resources::run(&cli.global, args),
        Command::Target(cmd) => target::run(&cli.global, cmd),
        Command::Cpu(args) => cpu::run(&cli.global, args),
        Command::Boot(args) => boot::run(&cli.global, args),
        Command::Mem(cmd) => mem::run(&cli.global, cmd),
        Command::Io(args) => io::run(&cli.global, args),
        Command::Trace(cmd) => trace::run(&cli.global, cmd),
    }
}
