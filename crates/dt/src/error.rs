//! The one error type of the crate: every variant names what it failed on
//! (a byte offset and the node path reached so far, or the node and
//! property, or the file).

use std::path::PathBuf;

/// What went wrong reading or interpreting a device tree.
#[derive(Debug, thiserror::Error)]
pub enum DtError {
    /// The blob ends before something it declares (a header field, a block,
    /// a token, a property value).
    #[error(
        "truncated DTB: {what} at byte {offset} runs past the end ({len} bytes), in node {path}"
    )]
    Truncated {
        /// What was being read.
        what: String,
        /// Byte offset where it starts.
        offset: usize,
        /// Length of the data available.
        len: usize,
        /// Node path being read (`/` before the first node).
        path: String,
    },
    /// The blob is not a well-formed flattened device tree.
    #[error("corrupt DTB at byte {offset}, in node {path}: {reason}")]
    Corrupt {
        /// Byte offset of the bad item.
        offset: usize,
        /// Node path being read.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A property refers to a phandle that no node carries.
    #[error("{path}: property {property} refers to phandle {phandle:#x}, which no node has")]
    DanglingPhandle {
        /// Node holding the property.
        path: String,
        /// Property name.
        property: String,
        /// The phandle value.
        phandle: u32,
    },
    /// A property's length does not fit the cell counts that govern it.
    #[error("{path}: property {property} is {len_bytes} bytes, not a whole number of {entry_cells}-cell entries{why}")]
    CellMismatch {
        /// Node holding the property.
        path: String,
        /// Property name.
        property: String,
        /// The property's length in bytes.
        len_bytes: usize,
        /// Cells per entry expected.
        entry_cells: usize,
        /// Where the cell count comes from (`" (#address-cells 2 + #size-cells 2 of /soc)"`).
        why: String,
    },
    /// A property has a value that cannot be read as what it must be.
    #[error("{path}: property {property}: {reason}")]
    BadProperty {
        /// Node holding the property.
        path: String,
        /// Property name.
        property: String,
        /// What is wrong.
        reason: String,
    },
    /// A file or directory could not be read.
    #[error("cannot read {path}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// `dtc` or `cpp` could not be run or refused the source.
    #[error("{tool} failed on {path}: {message}")]
    Tool {
        /// `dtc` or `cpp`.
        tool: &'static str,
        /// The source file.
        path: PathBuf,
        /// Its stderr, or why it could not start.
        message: String,
    },
}

/// Result with [`DtError`].
pub type Result<T> = std::result::Result<T, DtError>;
