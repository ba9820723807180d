//! One run of a board, collected from Lever's measurements, and its page.
//!
//! Two halves, one direction (collection → run document → rendering):
//!
//! - [`collect`]: `lever report collect` — the device and kernel, boot
//!   KPIs from logs, seed 000 §8's memory map after boot and during each
//!   use case, the RT KPI table, benchmark results, marker KPIs from a
//!   trace and the daemon's status, each by calling the library that
//!   measures it (`lever-cpu`, `lever-boot`, `lever-measure`,
//!   `lever-latency`, `lever-bench`, `lever-trace-analysis`,
//!   `lever-client`). Every section says how it was measured, or why it
//!   was not. The result is a [`lever_results::model::Run`].
//! - [`render`]: one or more runs as a self-contained HTML page (inline CSS
//!   and inline SVG only: no script, no network), as Markdown tables, and
//!   as JSON; two or more runs side by side with every change judged by
//!   the significance test `lever bench compare` uses
//!   ([`lever_bench::compare::judge_runs`]).
//!
//! Text from a run is untrusted (a board name is whatever the device tree
//! says): every string is escaped where it is written.
//!
//! ```
//! use lever_results::model::{Device, Metric, Run, Section};
//! let mut run = Run::new("2026-11-23T14:00:00Z", Device {
//!     board: Some("<script>alert(1)</script>".into()),
//!     ..Device::default()
//! });
//! let mut s = Section::measured("boot", "systemd-analyze time");
//! s.metrics.push(Metric::new("boot.total", "ms", 19859.0));
//! run.sections.push(s);
//! let html = lever_report::render::html(&[run]);
//! assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
//! assert!(!html.contains("<script"));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod collect;
pub mod compare;
pub mod render;

pub use lever_results::model;

use std::path::PathBuf;

/// Errors of collection and rendering. Measurements that cannot be taken
/// on this board are not errors (their section says why); these are bad
/// input — a file the user named that cannot be read or parsed, a
/// malformed option — and failed writes.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A file is not what it should be (a run document, a bench report,
    /// a boot log, a trace).
    #[error("{path}: {message}")]
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// An option's value is malformed.
    #[error("{option} {value:?}: {expected}")]
    BadOption {
        /// The option (`--usecase`).
        option: &'static str,
        /// What was given.
        value: String,
        /// What it should look like.
        expected: String,
    },
}

/// Read a run document (`RUN.json`).
pub fn read_run(path: &std::path::Path) -> Result<model::Run, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let run = serde_json::from_str(&text).map_err(|e| ReportError::BadFile {
        path: path.to_path_buf(),
        message: format!("not a `lever report collect` run document: {e}"),
    })?;
    // What a comparison reads out of a section's free-form detail.
    compare::check_bench_detail(&run).map_err(|message| ReportError::BadFile {
        path: path.to_path_buf(),
        message,
    })?;
    Ok(run)
}

/// Write `text` to `path`.
pub fn write_file(path: &std::path::Path, text: &str) -> Result<(), ReportError> {
    std::fs::write(path, text).map_err(|source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    })
}
