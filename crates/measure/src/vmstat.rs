//! `/proc/vmstat`: one `name value` counter per line.
//!
//! Most counters are pages (`nr_*`) or event counts (`pgscan_*`,
//! `workingset_*`); `pgpgin`/`pgpgout` are kibibytes transferred to/from
//! block devices (the kernel counts them in 1 KiB units).

use crate::error::{parse_err, MeasureError};
use lever_kernel::KernelFs;
use serde::Serialize;
use std::collections::BTreeMap;

/// Kernel path of the file.
pub const PATH: &str = "/proc/vmstat";

/// A parsed `/proc/vmstat`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Vmstat {
    /// Counter name → value.
    pub counters: BTreeMap<String, u64>,
}

impl Vmstat {
    /// Parse the text of `/proc/vmstat` (`path` names it in errors).
    pub fn parse(path: &str, text: &str) -> Result<Self, MeasureError> {
        let mut counters = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            // nr_kernel_misc_reclaimable 16217
            let mut words = line.split_whitespace();
            let (Some(name), Some(value), None) = (words.next(), words.next(), words.next()) else {
                return Err(parse_err(path, i + 1, line, "`name value`"));
            };
            // Some counters (e.g. nr_dirty_threshold on odd configs) are
            // signed in the kernel; a negative value is clamped to 0 rather
            // than failing the whole file.
            let value = match value.parse::<u64>() {
                Ok(v) => v,
                Err(_) if value.parse::<i64>().is_ok() => 0,
                Err(_) => return Err(parse_err(path, i + 1, line, "`name value`")),
            };
            counters.insert(name.to_string(), value);
        }
        Ok(Vmstat { counters })
    }

    /// Read and parse `/proc/vmstat` below the root.
    pub fn read(fs: &KernelFs) -> Result<Self, MeasureError> {
        Self::parse(PATH, &fs.read(PATH)?)
    }

    /// A counter, `None` when this kernel does not have it.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.counters.get(name).copied()
    }
}
