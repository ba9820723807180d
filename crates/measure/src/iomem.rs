//! `/proc/iomem`: the physical address map, one resource per line, children
//! indented by two spaces per level:
//!
//! ```text
//! 80000000-817fffff : System RAM
//!   9ae10000-9ca2ffff : Kernel code
//! 81800000-835fffff : reserved
//! ```
//!
//! Ranges are inclusive hexadecimal addresses. Since Linux 4.15 the kernel
//! prints every address as zero to readers without `CAP_SYS_ADMIN`; the
//! lines are still there, so such a file parses, and
//! [`Iomem::addresses_hidden`] says the sizes cannot be known.

use crate::error::{parse_err, MeasureError};
use lever_kernel::KernelFs;
use serde::Serialize;

/// Kernel path of the file.
pub const PATH: &str = "/proc/iomem";

/// One resource line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IomemEntry {
    /// First byte address.
    pub start: u64,
    /// Last byte address (inclusive).
    pub end: u64,
    /// Resource name (`System RAM`, `reserved`, `Kernel code`, a device).
    pub name: String,
    /// Nesting level: 0 for top-level resources.
    pub depth: usize,
}

impl IomemEntry {
    /// Size in bytes: `end − start + 1`.
    pub fn size_bytes(&self) -> u64 {
        self.end.saturating_sub(self.start).saturating_add(1)
    }
}

/// A parsed `/proc/iomem`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Iomem {
    /// Entries in file order.
    pub entries: Vec<IomemEntry>,
}

/// Total of the "System RAM" ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SystemRam {
    /// Bytes covered by the union of the top-level "System RAM" ranges.
    pub bytes: u64,
    /// Number of "System RAM" ranges.
    pub ranges: usize,
    /// Bytes that repeated or overlapping ranges would have counted twice
    /// (the seed's own listing repeats lines; a real file never overlaps).
    pub overlap_bytes: u64,
}

impl Iomem {
    /// Parse the text of `/proc/iomem`.
    pub fn parse(path: &str, text: &str) -> Result<Self, MeasureError> {
        let mut entries = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            //   9ae10000-9ca2ffff : Kernel code
            let bad = || parse_err(path, i + 1, line, "`start-end : name` (hex)");
            let indent = line.len() - line.trim_start_matches(' ').len();
            let (range, name) = line.trim_start().split_once(" : ").ok_or_else(bad)?;
            let (start, end) = range.split_once('-').ok_or_else(bad)?;
            let start = u64::from_str_radix(start.trim(), 16).map_err(|_| bad())?;
            let end = u64::from_str_radix(end.trim(), 16).map_err(|_| bad())?;
            entries.push(IomemEntry {
                start,
                end,
                name: name.trim().to_string(),
                depth: indent / 2,
            });
        }
        Ok(Iomem { entries })
    }

    /// Read and parse `/proc/iomem` below the root.
    pub fn read(fs: &KernelFs) -> Result<Self, MeasureError> {
        Self::parse(PATH, &fs.read(PATH)?)
    }

    /// True when the kernel hid the addresses (every range is `0-0`): the
    /// reader was not privileged. An empty file also counts as hidden.
    pub fn addresses_hidden(&self) -> bool {
        self.entries.iter().all(|e| e.start == 0 && e.end == 0)
    }

    /// Linux RAM: the top-level "System RAM" ranges, seed 000 §8.3 ("the sum
    /// of the differences in the system RAM addresses", each `end − start +
    /// 1`). Repeated or overlapping ranges are counted once. `None` when the
    /// addresses are hidden.
    pub fn system_ram(&self) -> Option<SystemRam> {
        if self.addresses_hidden() {
            return None;
        }
        let mut ranges: Vec<(u64, u64)> = self
            .entries
            .iter()
            .filter(|e| e.depth == 0 && e.name == "System RAM")
            .map(|e| (e.start, e.end))
            .collect();
        let count = ranges.len();
        let naive: u64 = ranges
            .iter()
            .map(|(s, e)| e.saturating_sub(*s).saturating_add(1))
            .sum();
        ranges.sort_unstable();
        let mut bytes = 0u64;
        let mut cur: Option<(u64, u64)> = None;
        for (s, e) in ranges {
            cur = match cur {
                Some((cs, ce)) if s <= ce.saturating_add(1) => Some((cs, ce.max(e))),
                Some((cs, ce)) => {
                    bytes += ce - cs + 1;
                    Some((s, e))
                }
                None => Some((s, e)),
            };
        }
        if let Some((cs, ce)) = cur {
            bytes += ce - cs + 1;
        }
        Some(SystemRam {
            bytes,
            ranges: count,
            overlap_bytes: naive - bytes,
        })
    }
}
