//! `/proc/meminfo`: one `Name: value [kB]` per line.
//!
//! Values with a `kB` unit are kibibytes (the kernel prints
//! `pages << (PAGE_SHIFT - 10)`); the `HugePages_*` lines are counts. Both are
//! kept as the number the kernel printed; the field name says which.

use crate::error::{parse_err, MeasureError};
use lever_kernel::KernelFs;
use serde::Serialize;
use std::collections::BTreeMap;

/// Kernel path of the file.
pub const PATH: &str = "/proc/meminfo";

/// A parsed `/proc/meminfo`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Meminfo {
    /// Field name → value as printed (kB for most fields).
    pub fields: BTreeMap<String, u64>,
}

impl Meminfo {
    /// Parse the text of `/proc/meminfo` (`path` names it in errors).
    pub fn parse(path: &str, text: &str) -> Result<Self, MeasureError> {
        let mut fields = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            // MemTotal:        5634960 kB
            // HugePages_Total:       0
            let (name, rest) = line
                .split_once(':')
                .ok_or_else(|| parse_err(path, i + 1, line, "`Name: value [kB]`"))?;
            let value = rest
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| parse_err(path, i + 1, line, "`Name: value [kB]`"))?;
            fields.insert(name.trim().to_string(), value);
        }
        Ok(Meminfo { fields })
    }

    /// Read and parse `/proc/meminfo` below the root.
    pub fn read(fs: &KernelFs) -> Result<Self, MeasureError> {
        Self::parse(PATH, &fs.read(PATH)?)
    }

    /// A field's value (kB for `kB` fields), `None` when this kernel does not
    /// print it.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.fields.get(name).copied()
    }
}
