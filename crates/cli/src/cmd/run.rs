//! `lever run --app NAME -- CMD`: start CMD registered as app NAME of the
//! daemon's target (for machines where the daemon cannot detect apps: no
//! process connector). Parsing and calling `lever_client::run_app` only;
//! it prints nothing of its own and exits with CMD's status.

use crate::args::Global;
use crate::cmd::client::SocketArg;
use anyhow::bail;
use clap::Args;

/// `lever run` flags.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The `apps:` entry of the daemon's target whose configuration the
    /// command gets while it runs.
    #[arg(long, value_name = "NAME", value_parser = crate::cmd::util::app_name(), hide_possible_values = true)]
    pub app: String,
    #[command(flatten)]
    pub socket: SocketArg,
    /// The command and its arguments (after `--`).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<String>,
}

pub fn run(global: &Global, args: RunArgs) -> anyhow::Result<()> {
    let Some((program, rest)) = args.command.split_first() else {
        bail!("no command given: `lever run --app NAME -- CMD [ARGS...]`");
    };
    let mut client = args.socket.connect(global, "run")?;
    let mut command = std::process::Command::new(program);
    command.args(rest);
    let status = lever_client::run_app(&mut client, &args.app, &mut command)?;
    crate::cmd::cpu::exit_like(&status)
}
