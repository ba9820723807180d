//! Opening a saved trace (`lever trace record -o FILE`, a copy of
//! `/sys/kernel/tracing/trace`) for the reader, with an error that names
//! the file.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// A trace file that could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("cannot open {}", path.display())]
pub struct OpenError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: io::Error,
}

/// Open a trace text file; also its length in bytes when known (for
/// progress).
pub fn open(path: &Path) -> Result<(File, Option<u64>), OpenError> {
    let file = File::open(path).map_err(|source| OpenError {
        path: path.to_path_buf(),
        source,
    })?;
    let len = file.metadata().ok().map(|m| m.len());
    Ok((file, len))
}
