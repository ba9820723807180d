//! Is the use case waiting on I/O? (seed 000 §7.2, "Identify I/O bound use
//! cases"). Two measures of time spent blocked on I/O, set against the
//! command's wall time:
//!
//! - the command's own `delayacct_blkio_ticks` (`/proc/PID/stat` field 42,
//!   read by [`crate::sampling::run_command`]): time its main task waited
//!   for block I/O. Needs delay accounting (`kernel.task_delayacct=1`, or
//!   the `delayacct` boot parameter); without it the field is always 0,
//!   so a 0 with accounting off is "unknown", not "no I/O". It does not
//!   include the command's children.
//! - PSI io `some` over the run (`/proc/pressure/io` `total` before and
//!   after): share of wall time at least one task on the system stalled on
//!   I/O. System-wide: other processes count too, which the verdict says.
//!
//! [`IoVerdict::new`] judges with no I/O; the thresholds are in
//! [`thresholds`] and docs/measure-memory.md.

use crate::pressure::Pressure;
use lever_kernel::KernelFs;
use serde::Serialize;
use std::time::Duration;

/// Kernel path of the delay-accounting switch.
pub const TASK_DELAYACCT: &str = "/proc/sys/kernel/task_delayacct";

/// Lever's thresholds, percent of the command's wall time.
pub mod thresholds {
    /// Blocked at least this share: I/O-bound.
    pub const IO_BOUND_PCT: f64 = 50.0;
    /// Blocked at least this share: I/O is a noticeable part.
    pub const PARTLY_PCT: f64 = 10.0;
}

/// What the I/O-bound check measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IoWait {
    /// Wall time of the command, seconds.
    pub wall_s: f64,
    /// The command's blocked-on-I/O time, seconds (`None` when unknown:
    /// delay accounting off, or not readable).
    pub blkio_s: Option<f64>,
    /// `kernel.task_delayacct`: `None` when the file is missing (kernel
    /// older than 5.14, where only the boot parameter exists).
    pub delayacct_enabled: Option<bool>,
    /// PSI io `some` stall over the run, seconds (`None` without PSI).
    pub psi_some_s: Option<f64>,
    /// PSI io `full` stall over the run, seconds.
    pub psi_full_s: Option<f64>,
}

impl IoWait {
    /// Assemble from the readings. A `blkio` of 0 while delay accounting is
    /// off is unknown, not zero.
    pub fn new(
        wall: Duration,
        blkio: Option<Duration>,
        delayacct_enabled: Option<bool>,
        psi_before: Option<&Pressure>,
        psi_after: Option<&Pressure>,
    ) -> IoWait {
        let blkio_s = match (blkio, delayacct_enabled) {
            (Some(d), Some(false)) if d.is_zero() => None,
            (b, _) => b.map(|d| d.as_secs_f64()),
        };
        let delta = |pick: fn(&Pressure) -> Option<u64>| -> Option<f64> {
            let d = pick(psi_after?)?.checked_sub(pick(psi_before?)?)?;
            Some(d as f64 / 1e6)
        };
        IoWait {
            wall_s: wall.as_secs_f64(),
            blkio_s,
            delayacct_enabled,
            psi_some_s: delta(|p| Some(p.some.total_us)),
            psi_full_s: delta(|p| p.full.map(|f| f.total_us)),
        }
    }

    /// Read `kernel.task_delayacct` below the root (`None` when missing).
    pub fn read_delayacct(fs: &KernelFs) -> Option<bool> {
        // 0 or 1
        let text = fs.read_optional(TASK_DELAYACCT).ok().flatten()?;
        Some(text.trim() != "0")
    }
}

/// The judgement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IoLevel {
    /// Blocked on I/O for at least half the wall time.
    IoBound,
    /// Blocked for a noticeable share (10–50%).
    PartlyIo,
    /// Blocked for less than 10%.
    NotIoBound,
    /// Neither measure is available.
    Unknown,
}

/// A level and the facts that led to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IoVerdict {
    /// The judgement.
    pub level: IoLevel,
    /// The share of wall time the judgement rests on, percent.
    pub blocked_pct: Option<f64>,
    /// One sentence per fact, with numbers.
    pub reasons: Vec<String>,
}

impl IoVerdict {
    /// Judge: the command's own blocked time when known, else PSI io some.
    /// No I/O.
    pub fn new(w: &IoWait) -> IoVerdict {
        use thresholds::*;
        let wall = w.wall_s.max(f64::MIN_POSITIVE);
        let pct = |s: f64| (s / wall * 100.0).min(100.0);
        let mut reasons = Vec::new();
        let own = w.blkio_s.map(pct);
        let psi = w.psi_some_s.map(pct);
        match (w.blkio_s, own) {
            (Some(s), Some(p)) => reasons.push(format!(
                "the command was blocked on block I/O {s:.3} s of its {:.3} s wall time ({p:.1}%, /proc/PID/stat delayacct_blkio_ticks; its children not included)",
                w.wall_s
            )),
            _ => reasons.push(match w.delayacct_enabled {
                Some(false) => format!(
                    "the command's own blocked time is unknown: delay accounting is off ({TASK_DELAYACCT} is 0, so /proc/PID/stat delayacct_blkio_ticks reads 0); enable it with `sysctl kernel.task_delayacct=1` or the `delayacct` boot parameter"
                ),
                None => format!(
                    "the command's own blocked time is unknown: no {TASK_DELAYACCT} (kernel older than 5.14: boot with `delayacct`)"
                ),
                Some(true) => "the command's own blocked time could not be read from /proc/PID/stat".into(),
            }),
        }
        match (w.psi_some_s, psi) {
            (Some(s), Some(p)) => reasons.push(format!(
                "some task on the system stalled on I/O {s:.3} s of the {:.3} s ({p:.1}%, PSI io some{}; system-wide, other processes included)",
                w.wall_s,
                w.psi_full_s
                    .map(|f| format!(", all tasks {:.1}% (full)", pct(f)))
                    .unwrap_or_default()
            )),
            _ => reasons.push(
                "no PSI io (/proc/pressure/io missing: kernel without CONFIG_PSI, or psi=0)".into(),
            ),
        }
        let blocked_pct = own.or(psi);
        let level = match blocked_pct {
            None => IoLevel::Unknown,
            Some(p) if p >= IO_BOUND_PCT => IoLevel::IoBound,
            Some(p) if p >= PARTLY_PCT => IoLevel::PartlyIo,
            Some(_) => IoLevel::NotIoBound,
        };
        let basis = if own.is_some() {
            "the command's own blocked time"
        } else {
            "PSI io some"
        };
        if let Some(p) = blocked_pct {
            reasons.push(format!(
                "judged on {basis}: {p:.1}% (I/O-bound ≥ {IO_BOUND_PCT}%, partly ≥ {PARTLY_PCT}%)"
            ));
        }
        IoVerdict {
            level,
            blocked_pct,
            reasons,
        }
    }
}
