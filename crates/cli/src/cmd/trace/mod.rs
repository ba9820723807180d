//! `lever trace`: capture through tracefs ([`record`]), analyze, export,
//! bench ([`analyze`]), mark.

mod analyze;
mod record;

use crate::args::Global;
use clap::Subcommand;
use lever_kernel::KernelFs;
use lever_tracefs::Tracefs;
use std::path::PathBuf;

pub use analyze::AnalyzeArgs;
pub use record::RecordArgs;

/// `lever trace ...`
#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Record a trace through tracefs (seed 000 §4.1) into a private
    /// instance, leaving tracefs as found (also on Ctrl-C or a failing
    /// command).
    Record(RecordArgs),
    /// Analyze a saved trace: `trace`/`trace_pipe` text, a trace-cmd
    /// trace.dat (v6/v7), or either compressed with gzip/zstd.
    Analyze(AnalyzeArgs),
    /// Convert a trace to Chrome trace JSON (opens in Perfetto UI).
    Export {
        /// Trace file: text, trace.dat, or either gzip/zstd-compressed.
        file: PathBuf,
        /// Output JSON file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Write TEXT to trace_marker (e.g. `B Connect`, `E|1234`).
    Mark {
        /// Marker text.
        text: String,
    },
    /// Measure parser throughput and full analysis time on FILE.
    Bench {
        /// Trace file: text, trace.dat, or either gzip/zstd-compressed.
        file: PathBuf,
    },
}
/// Run a `lever trace` command.
pub fn run(global: &Global, cmd: TraceCommand) -> anyhow::Result<()> {
    match cmd {
        TraceCommand::Record(a) => record::run(global, a),
        TraceCommand::Analyze(a) => analyze::analyze(global, a),
        TraceCommand::Export { file, output } => analyze::export(global, &file, &output),
        TraceCommand::Mark { text } => {
            let fs = KernelFs::new(&global.root);
            let tfs = Tracefs::locate_or_mount(&fs)?;
            tfs.mark(&text)?;
            Ok(())
        }
        TraceCommand::Bench { file } => analyze::bench(global, &file),
    }
}
