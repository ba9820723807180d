//! `lever man [-o DIR]`: lever(1) on stdout, or every page into DIR.

use crate::args::Global;
use crate::render::{self, emit};
use clap::Args;
use std::path::PathBuf;

/// `lever man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write lever.1 and one page per subcommand (lever-sim-create.1, ...)
    /// into DIR instead of printing lever.1.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

pub fn run(global: &Global, args: ManArgs) -> anyhow::Result<()> {
    match args.out_dir {
        Some(dir) => {
            let written = crate::manual::write_pages(&dir)?;
            emit(global.json, &written, |p| render::man::written(p))
        }
        None => {
            let page = crate::manual::pages().swap_remove(0);
            render::out(&page.roff)
        }
    }
}
