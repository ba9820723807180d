//! Getting `perf script` text: from a file (text, or a `perf.data` read
//! with `perf script -i`), or by recording a command with `perf record -g`.
//! Also writing the results (SVG, folded stacks) to files. Every error
//! names the file or says what to install.

use crate::{render_svg, FlameError};
use std::path::Path;
use std::process::{Command, Stdio};

/// `perf.data` files start with this magic.
const PERF_DATA_MAGIC: &[u8] = b"PERFILE2";

/// `perf script -i DATA`: the samples of a `perf.data` as text.
pub fn script(data: &Path) -> Result<String, FlameError> {
    let out = Command::new("perf")
        .args(["script", "-i"])
        .arg(data)
        .stderr(Stdio::piped())
        .output()
        .map_err(FlameError::NoPerfScript)?;
    if !out.status.success() {
        return Err(FlameError::PerfScript {
            path: data.to_path_buf(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `perf record -g -F FREQUENCY -- COMMAND` into a temporary file, then
/// [`script`] of it.
pub fn record(command: &[String], frequency_hz: u32) -> Result<String, FlameError> {
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("perf.data");
    let status = Command::new("perf")
        .args(["record", "-g", "-F", &frequency_hz.to_string(), "-o"])
        .arg(&data)
        .arg("--")
        .args(command)
        .status()
        .map_err(FlameError::NoPerf)?;
    // perf exits with the command's status; a failing command still
    // leaves a profile worth drawing.
    if !status.success() && !data.exists() {
        return Err(FlameError::PerfRecord(status));
    }
    script(&data)
}

/// The `perf script` text of a file: a `perf.data` is run through
/// [`script`], anything else is read as text.
pub fn read_input(path: &Path) -> Result<String, FlameError> {
    let bytes = std::fs::read(path).map_err(|source| FlameError::File {
        op: "read",
        path: path.to_path_buf(),
        source,
    })?;
    if bytes.starts_with(PERF_DATA_MAGIC) {
        return script(path);
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn write_err(path: &Path) -> impl FnOnce(std::io::Error) -> FlameError + '_ {
    move |source| FlameError::File {
        op: "write",
        path: path.to_path_buf(),
        source,
    }
}

/// [`render_svg`] into the file `path`.
pub fn write_svg(path: &Path, folded: &str, title: &str) -> Result<(), FlameError> {
    let file = std::fs::File::create(path).map_err(write_err(path))?;
    render_svg(folded, title, std::io::BufWriter::new(file))
}

/// Write folded stacks to `path`.
pub fn write_folded(path: &Path, folded: &str) -> Result<(), FlameError> {
    std::fs::write(path, folded).map_err(write_err(path))
}
