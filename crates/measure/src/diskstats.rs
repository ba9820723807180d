//! `/proc/diskstats` and the I/O-bound check of seed 000 §7.2.
//!
//! One line per block device (Documentation/admin-guide/iostats.rst):
//!
//! ```text
//!    8      10 sda10 715 544 15056 250 4394 413 4199944 135729 0 5508 135979 0 0 0 0 0
//! ```
//!
//! major minor name, then: reads completed, reads merged, sectors read, ms
//! reading, writes completed, writes merged, sectors written, ms writing,
//! I/Os in flight, ms doing I/O, weighted ms; since 4.18 discards (4
//! fields), since 5.5 flushes (2 fields). Sectors are always 512 bytes here,
//! whatever the device's real sector size.
//!
//! [`DiskDelta::new`] subtracts two samples; [`IoReport::new`] adds the
//! `pgpgin`/`pgpgout` deltas (kB) of `/proc/vmstat`.

use crate::error::{parse_err, MeasureError};
use crate::vmstat::Vmstat;
use lever_kernel::KernelFs;
use serde::Serialize;

/// Kernel path of the file.
pub const PATH: &str = "/proc/diskstats";

/// Bytes per diskstats sector.
pub const SECTOR_BYTES: u64 = 512;

/// One device's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DiskStat {
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
    /// Device name (`sda10`).
    pub name: String,
    /// Reads completed.
    pub reads: u64,
    /// Sectors read.
    pub sectors_read: u64,
    /// Milliseconds spent reading.
    pub read_ms: u64,
    /// Writes completed.
    pub writes: u64,
    /// Sectors written.
    pub sectors_written: u64,
    /// Milliseconds spent writing.
    pub write_ms: u64,
    /// Milliseconds spent doing I/O (device busy).
    pub io_ms: u64,
}

/// A parsed `/proc/diskstats`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Diskstats {
    /// Devices in file order.
    pub devices: Vec<DiskStat>,
}

impl Diskstats {
    /// Parse the text of `/proc/diskstats`.
    pub fn parse(path: &str, text: &str) -> Result<Self, MeasureError> {
        let mut devices = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = || parse_err(path, i + 1, line, "`major minor name` and ≥ 11 counters");
            let w: Vec<&str> = line.split_whitespace().collect();
            if w.len() < 14 {
                return Err(bad());
            }
            let n = |k: usize| w[k].parse::<u64>().map_err(|_| bad());
            devices.push(DiskStat {
                major: w[0].parse().map_err(|_| bad())?,
                minor: w[1].parse().map_err(|_| bad())?,
                name: w[2].to_string(),
                reads: n(3)?,
                sectors_read: n(5)?,
                read_ms: n(6)?,
                writes: n(7)?,
                sectors_written: n(9)?,
                write_ms: n(10)?,
                io_ms: n(12)?,
            });
        }
        Ok(Diskstats { devices })
    }

    /// Read and parse `/proc/diskstats` below the root.
    pub fn read(fs: &KernelFs) -> Result<Self, MeasureError> {
        Self::parse(PATH, &fs.read(PATH)?)
    }
}

/// What one device did between two samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiskDelta {
    /// Device name.
    pub name: String,
    /// Reads completed.
    pub reads: u64,
    /// Sectors read.
    pub sectors_read: u64,
    /// Bytes read (sectors × 512).
    pub bytes_read: u64,
    /// Milliseconds spent reading (summed over requests, may exceed wall time).
    pub read_ms: u64,
    /// Writes completed.
    pub writes: u64,
    /// Sectors written.
    pub sectors_written: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Milliseconds spent writing.
    pub write_ms: u64,
    /// Milliseconds the device was busy.
    pub io_ms: u64,
    /// Read throughput over the wall time, bytes/s.
    pub read_bytes_per_s: f64,
    /// Write throughput over the wall time, bytes/s.
    pub write_bytes_per_s: f64,
    /// Busy time ÷ wall time, percent.
    pub utilization_pct: f64,
}

impl DiskDelta {
    /// Subtract `before` from `after` over `elapsed_s` of wall time. A
    /// counter that went backwards (device re-added) counts as 0. No I/O.
    pub fn new(before: &DiskStat, after: &DiskStat, elapsed_s: f64) -> DiskDelta {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        let sectors_read = d(after.sectors_read, before.sectors_read);
        let sectors_written = d(after.sectors_written, before.sectors_written);
        let io_ms = d(after.io_ms, before.io_ms);
        let per_s = |x: u64| {
            if elapsed_s > 0.0 {
                x as f64 / elapsed_s
            } else {
                0.0
            }
        };
        DiskDelta {
            name: after.name.clone(),
            reads: d(after.reads, before.reads),
            sectors_read,
            bytes_read: sectors_read * SECTOR_BYTES,
            read_ms: d(after.read_ms, before.read_ms),
            writes: d(after.writes, before.writes),
            sectors_written,
            bytes_written: sectors_written * SECTOR_BYTES,
            write_ms: d(after.write_ms, before.write_ms),
            io_ms,
            read_bytes_per_s: per_s(sectors_read * SECTOR_BYTES),
            write_bytes_per_s: per_s(sectors_written * SECTOR_BYTES),
            utilization_pct: per_s(io_ms) / 10.0, // ms/s ÷ 1000 × 100
        }
    }

    /// True when the device did anything.
    pub fn is_active(&self) -> bool {
        self.reads + self.writes + self.sectors_read + self.sectors_written + self.io_ms > 0
    }
}

/// The I/O-bound check: per-device deltas and vmstat paging deltas.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IoReport {
    /// Wall time between the samples, seconds.
    pub elapsed_s: f64,
    /// Every device present in both samples, file order.
    pub devices: Vec<DiskDelta>,
    /// Devices in only one of the samples (appeared or vanished).
    pub changed_devices: Vec<String>,
    /// `pgpgin` delta, kB read from block devices.
    pub pgpgin_kb: Option<u64>,
    /// `pgpgout` delta, kB written.
    pub pgpgout_kb: Option<u64>,
}

impl IoReport {
    /// Compare two samples. No I/O.
    pub fn new(
        before: (&Diskstats, &Vmstat),
        after: (&Diskstats, &Vmstat),
        elapsed_s: f64,
    ) -> IoReport {
        let mut devices = Vec::new();
        let mut changed_devices = Vec::new();
        for a in &after.0.devices {
            match before.0.devices.iter().find(|b| b.name == a.name) {
                Some(b) => devices.push(DiskDelta::new(b, a, elapsed_s)),
                None => changed_devices.push(a.name.clone()),
            }
        }
        for b in &before.0.devices {
            if !after.0.devices.iter().any(|a| a.name == b.name) {
                changed_devices.push(b.name.clone());
            }
        }
        let d = |name: &str| after.1.get(name)?.checked_sub(before.1.get(name)?);
        IoReport {
            elapsed_s,
            devices,
            changed_devices,
            pgpgin_kb: d("pgpgin"),
            pgpgout_kb: d("pgpgout"),
        }
    }
}
