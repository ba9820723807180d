//! The analyses, exports and benchmark over an [`Input`], as plain
//! (non-generic) functions.
//!
//! `lever_trace_analysis`'s entry points are generic over the input and
//! the progress callback, so Rust compiles them in the crate that calls
//! them with concrete types. Called from the CLI, that is the `lever`
//! crate, which the board profile optimises for size: its parser loop
//! would be built at opt-level "z" (nothing inlined, short string
//! comparisons left as `memcmp` calls), ~1.4× slower. Called through these
//! functions, the loops are built here, in a crate every profile
//! optimises for speed (root `Cargo.toml`, `[profile.board.package]`).

use crate::{open, Input};
use lever_trace::Summary;
use lever_trace_analysis::bench::BenchResult;
use lever_trace_analysis::{ExportError, Options, Report};
use std::io;
use std::path::Path;

/// [`lever_trace_analysis::analyze_source`] over `input`.
pub fn analyze(input: Input, opts: &Options, progress: &mut dyn FnMut(u64)) -> io::Result<Report> {
    lever_trace_analysis::analyze_source(input, opts, progress)
}

/// [`lever_trace_analysis::export_chrome_file`] of `input` to `output`:
/// (trace events written, what the reader saw).
pub fn export_chrome(
    input: Input,
    output: &Path,
    progress: &mut dyn FnMut(u64),
) -> Result<(u64, Summary), ExportError> {
    lever_trace_analysis::export_chrome_file(input, output, progress)
}

/// [`lever_trace_analysis::export::perfetto::export_perfetto_file`] of
/// `input` to `output`: (packets written, events left out, what the
/// reader saw).
pub fn export_perfetto(
    input: Input,
    output: &Path,
    progress: &mut dyn FnMut(u64),
) -> Result<(u64, u64, Summary), ExportError> {
    lever_trace_analysis::export::perfetto::export_perfetto_file(input, output, progress)
}

/// [`lever_trace_analysis::bench::bench`] of the trace at `path`, opened
/// again for every pass.
pub fn bench(path: &Path, threads: usize) -> io::Result<BenchResult> {
    lever_trace_analysis::bench::bench(|| open(path).map_err(io::Error::other), threads)
}
