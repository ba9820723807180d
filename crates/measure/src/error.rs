//! The error type of this crate.

use lever_kernel::KernelError;
use lever_text::ParseError;

/// Errors from collecting or parsing a measurement. Every variant names the
/// kernel path (or file) it is about.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// Reading a kernel node failed (missing, not allowed, I/O).
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// A line of a kernel text file did not have the expected shape
    /// (`path:line`, the line, what it should look like).
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// A binary node (device tree property) had an unexpected length.
    #[error("{path}: {len} bytes is not a whole number of {cells}-cell entries")]
    BadCells {
        /// Kernel path of the property.
        path: String,
        /// Its length in bytes.
        len: usize,
        /// 32-bit cells per entry.
        cells: u32,
    },
    /// A field every Linux kernel prints is missing from a file.
    #[error("{path}: no `{field}` field")]
    MissingField {
        /// Kernel path of the file.
        path: String,
        /// The field.
        field: &'static str,
    },
    /// Reading a file given on the command line (not a kernel node) failed.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl MeasureError {
    /// True when the error means "this kernel/tree does not have the node".
    pub fn is_missing(&self) -> bool {
        matches!(self, MeasureError::Kernel(e) if e.is_missing())
    }
}

pub(crate) fn parse_err(
    path: &str,
    line: usize,
    content: &str,
    expected: &'static str,
) -> MeasureError {
    ParseError::new(path, line, content, expected).into()
}
