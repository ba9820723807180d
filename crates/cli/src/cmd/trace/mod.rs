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
    /// Convert a trace to Chrome trace JSON or a Perfetto protobuf trace
    /// (both open in ui.perfetto.dev).
    Export {
        /// Trace file: text, trace.dat, or either gzip/zstd-compressed; or
        /// a CTF directory (LTTng kernel/UST session, perf's CTF).
        file: PathBuf,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
        /// `json` (Chrome trace events: slices, counters, wake-up
        /// arrows) or `perfetto` (Perfetto's own ftrace protobuf, ~6×
        /// smaller). Default: `perfetto` for an output ending in
        /// `.pftrace` or `.perfetto-trace`, else `json`.
        #[arg(long, value_enum)]
        format: Option<analyze::ExportFormat>,
        /// Symbols of the traced binary (`nm` output, absolute addresses)
        /// naming cyg-profile function addresses in the call-stack
        /// slices; without it, the ELF files the trace's statedump names
        /// are read where they exist here.
        #[arg(long, value_name = "FILE")]
        symbols: Option<PathBuf>,
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
        /// Parsing threads of the extra parallel pass (default: every CPU
        /// for a file; 1 skips the pass).
        #[arg(long)]
        threads: Option<usize>,
    },
}
/// Run a `lever trace` command.
pub fn run(global: &Global, cmd: TraceCommand) -> anyhow::Result<()> {
    match cmd {
        TraceCommand::Record(a) => record::run(global, a),
        TraceCommand::Analyze(a) => analyze::analyze(global, a),
        TraceCommand::Export {
            file,
            output,
            format,
            symbols,
        } => analyze::export(global, &file, &output, format, symbols.as_deref()),
        TraceCommand::Mark { text } => {
            let fs = KernelFs::new(&global.root);
            let tfs = Tracefs::locate_or_mount(&fs)?;
            tfs.mark(&text)?;
            Ok(())
        }
        TraceCommand::Bench { file, threads } => analyze::bench(global, &file, threads),
    }
}
