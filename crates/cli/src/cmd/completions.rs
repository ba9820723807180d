//! `lever completions SHELL`: the completion script on stdout.

use crate::args::Global;
use clap::Args;

/// `lever completions SHELL`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish (also elvish, powershell).
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn run(_global: &Global, args: CompletionsArgs) -> anyhow::Result<()> {
    crate::render::out(&crate::manual::completions(args.shell))
}
