//! Pressure stall information, `/proc/pressure/memory` (PSI, kernel ≥ 4.20
//! with `CONFIG_PSI`):
//!
//! ```text
//! some avg10=0.00 avg60=0.00 avg300=0.00 total=147600
//! full avg10=0.00 avg60=0.00 avg300=0.00 total=61200
//! ```
//!
//! `avg*` are percentages of wall time over the last 10/60/300 s; `total` is
//! the cumulative stall time in microseconds. `some` = at least one task was
//! stalled on memory, `full` = all non-idle tasks were.

use crate::error::{parse_err, MeasureError};
use lever_kernel::KernelFs;
use serde::Serialize;

/// Kernel path of the memory pressure file.
pub const MEMORY: &str = "/proc/pressure/memory";

/// Kernel path of the I/O pressure file.
pub const IO: &str = "/proc/pressure/io";

/// One PSI line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PsiLine {
    /// Percent of the last 10 s.
    pub avg10: f64,
    /// Percent of the last 60 s.
    pub avg60: f64,
    /// Percent of the last 300 s.
    pub avg300: f64,
    /// Cumulative stall time, microseconds.
    pub total_us: u64,
}

/// A parsed PSI file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Pressure {
    /// Some tasks stalled.
    pub some: PsiLine,
    /// All non-idle tasks stalled (`None` on files without a `full` line,
    /// such as `/proc/pressure/cpu` on old kernels).
    pub full: Option<PsiLine>,
}

impl Pressure {
    /// Parse a PSI file's text.
    pub fn parse(path: &str, text: &str) -> Result<Self, MeasureError> {
        let mut some = None;
        let mut full = None;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = || {
                parse_err(
                    path,
                    i + 1,
                    line,
                    "`some|full avg10=… avg60=… avg300=… total=…`",
                )
            };
            let mut words = line.split_whitespace();
            let kind = words.next().ok_or_else(bad)?;
            let mut psi = PsiLine::default();
            for w in words {
                let (k, v) = w.split_once('=').ok_or_else(bad)?;
                match k {
                    "avg10" => psi.avg10 = v.parse().map_err(|_| bad())?,
                    "avg60" => psi.avg60 = v.parse().map_err(|_| bad())?,
                    "avg300" => psi.avg300 = v.parse().map_err(|_| bad())?,
                    "total" => psi.total_us = v.parse().map_err(|_| bad())?,
                    _ => {} // newer kernels may add fields
                }
            }
            match kind {
                "some" => some = Some(psi),
                "full" => full = Some(psi),
                _ => return Err(bad()),
            }
        }
        let some = some.ok_or_else(|| parse_err(path, 1, text, "a `some` line"))?;
        Ok(Pressure { some, full })
    }

    /// Read `/proc/pressure/memory`; `Ok(None)` when the kernel has no PSI.
    pub fn read_memory(fs: &KernelFs) -> Result<Option<Self>, MeasureError> {
        Self::read_path(fs, MEMORY)
    }

    /// Read `/proc/pressure/io`; `Ok(None)` when the kernel has no PSI.
    pub fn read_io(fs: &KernelFs) -> Result<Option<Self>, MeasureError> {
        Self::read_path(fs, IO)
    }

    /// Read any PSI file (`memory.pressure` of a cgroup too); `Ok(None)`
    /// when it does not exist.
    pub fn read_path(fs: &KernelFs, path: &str) -> Result<Option<Self>, MeasureError> {
        match fs.read_optional(path)? {
            Some(t) => Ok(Some(Self::parse(path, &t)?)),
            None => Ok(None),
        }
    }
}
