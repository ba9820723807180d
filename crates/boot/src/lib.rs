//! Boot time from logs, as seed 000 §7.2 and §8.3 measure it by hand.
//!
//! The boot is cut into stages, each read from a different log:
//!
//! | stage | log | module |
//! |---|---|---|
//! | PBL + XBL, Core UEFI, kernel loader, total before kernel | Qualcomm serial console log (`UEFI Start [ms]`, `UEFI Total : N ms`, `Exit EBS [ms]`) | [`serial`] |
//! | SPL, U-Boot, total before kernel | U-Boot serial log (banners, bootstage report, terminal timestamps) | [`uboot`] |
//! | kernel (without systemd) | the kernel's `[    1.234567]` printk lines in the serial log | [`printk`] |
//! | kernel, (initrd,) userspace | `systemd-analyze time` | [`systemd`] |
//! | slowest units | `systemd-analyze blame` | [`systemd`] |
//! | kernel init → use case ready | `journalctl --output=short-monotonic` with start/end markers | [`journalctl`], [`stage_markers`] |
//!
//! [`stages::build`] puts them together into the §8.3 stage table and the
//! total. Everything here is pure text parsing: the only I/O is reading
//! the files the caller names ([`read_file`]). Errors name `file:line`.
//!
//! Times are kept as integer microseconds (`_us`), so seed figures such as
//! 1.818 + 1.071 + 0.580 s add up exactly.
//!
//! ```
//! use lever_boot::{serial, systemd};
//! // Seed 000 §7.2's serial log, shortened.
//! let log = "[2024-02-06 15:26:06.978] UEFI Start\n                 [ 1547]\n\
//!            [2024-02-06 15:26:08.543] UEFI Total : 1015 ms\n\
//!            [2024-02-06 15:26:08.593] Exit EBS\n                 [ 3136] UEFI End\n";
//! let s = serial::parse("serial.log", log).unwrap();
//! assert_eq!(s.kernel_loader_us(), Some(574_000));
//! let t = systemd::parse_time("time.txt", "Startup finished in 4.238s (kernel) + 15.620s (userspace) = 19.859s\n").unwrap();
//! assert_eq!(t.kernel_us, Some(4_238_000));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod journalctl;
pub mod printk;
pub mod serial;
pub mod stage_markers;
pub mod stages;
pub mod systemd;
pub mod uboot;

pub use stage_markers::{Marker, Markers};

use std::path::Path;

/// Errors from reading and parsing boot logs and marker files.
#[derive(Debug, thiserror::Error)]
pub enum BootError {
    /// A file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A line is not in the expected format.
    #[error("{file}:{line}: {message}")]
    Parse {
        /// The file (as given).
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong and what was expected.
        message: String,
    },
    /// The file holds none of what it should.
    #[error("{file}: {message}")]
    Empty {
        /// The file.
        file: String,
        /// What was looked for.
        message: String,
    },
    /// A marker file is not valid.
    #[error("{file}:{line}:{col}: {message}")]
    Config {
        /// The marker file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What is wrong.
        message: String,
    },
}

/// Read a log or marker file as text (lossy: serial logs often carry
/// stray bytes from the UART).
pub fn read_file(path: &Path) -> Result<String, BootError> {
    std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|source| BootError::Io {
            path: path.display().to_string(),
            source,
        })
}

/// Format microseconds as seconds with three decimals (seed §8.3's unit).
pub fn format_s(us: u64) -> String {
    let ms = (us + 500) / 1000;
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// Format microseconds as whole milliseconds (seed §7.2's unit).
pub fn format_ms(us: u64) -> String {
    format!("{}", (us + 500) / 1000)
}

/// Parse a decimal number of `unit_us` units (`6.300` s → 6,300,000 µs)
/// without going through floating point.
pub(crate) fn decimal_us(text: &str, unit_us: u64) -> Option<u64> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.chars().all(|c| c.is_ascii_digit()) || !frac.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let int: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut us = int.checked_mul(unit_us)?;
    let mut scale = unit_us;
    for d in frac.chars() {
        scale /= 10;
        if scale == 0 {
            break;
        }
        us += u64::from(d.to_digit(10)?) * scale;
    }
    Some(us)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_exact() {
        assert_eq!(decimal_us("6.300", 1_000_000), Some(6_300_000));
        assert_eq!(decimal_us("1.854242", 1_000_000), Some(1_854_242));
        assert_eq!(decimal_us("1547", 1000), Some(1_547_000));
        assert_eq!(decimal_us(".5", 1000), Some(500));
        assert_eq!(decimal_us("1.2.3", 1000), None);
        assert_eq!(decimal_us("", 1000), None);
        assert_eq!(decimal_us("x", 1000), None);
    }

    #[test]
    fn formats_round_half_up() {
        assert_eq!(format_s(11_408_539), "11.409");
        assert_eq!(format_s(580_000), "0.580");
        assert_eq!(format_ms(574_000), "574");
    }
}
