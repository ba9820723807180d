//! `lever io -- CMD`: per-device I/O deltas and vmstat paging around the
//! command.

use crate::render::num::{mib_from_bytes as mib, pct};
use crate::render::Table;
use lever_measure::diskstats::IoReport;
use lever_measure::iobound::{IoLevel, IoVerdict, IoWait};
use serde::Serialize;

/// What `lever io` prints (`--json` flattens the I/O figures).
#[derive(Serialize)]
pub struct Report {
    pub command: Vec<String>,
    pub exit_code: Option<i32>,
    #[serde(flatten)]
    pub io: IoReport,
    /// Blocked-on-I/O times.
    pub wait: IoWait,
    /// Is the command waiting on I/O?
    pub verdict: IoVerdict,
}

/// The I/O report: per-device deltas, then vmstat paging.
pub fn report(r: &Report, total_devices: usize, all: bool) -> String {
    let io = &r.io;
    let mut out = format!("`{}` ran {:.3} s\n\n", r.command.join(" "), io.elapsed_s);
    if io.devices.is_empty() {
        out.push_str(&format!(
            "no block device did I/O during the command ({total_devices} devices in /proc/diskstats){}\n",
            if all { "" } else { "; --all lists them" }
        ));
    } else {
        let mut t = Table::new(&[
            "device",
            "reads",
            "sectors read",
            "MiB read",
            "ms reading",
            "writes",
            "sectors written",
            "MiB written",
            "ms writing",
            "ms doing I/O",
            "read MiB/s",
            "write MiB/s",
            "busy %",
        ]);
        for d in &io.devices {
            t.row(vec![
                d.name.clone(),
                d.reads.to_string(),
                d.sectors_read.to_string(),
                mib(d.bytes_read as f64),
                d.read_ms.to_string(),
                d.writes.to_string(),
                d.sectors_written.to_string(),
                mib(d.bytes_written as f64),
                d.write_ms.to_string(),
                d.io_ms.to_string(),
                mib(d.read_bytes_per_s),
                mib(d.write_bytes_per_s),
                pct(d.utilization_pct),
            ]);
        }
        out.push_str(&t.render());
        out.push_str("sectors are 512 bytes; ms reading/writing add up over concurrent requests; busy % = ms doing I/O ÷ wall time; partitions are also counted in their disk\n");
    }
    let kb = |v: Option<u64>, name: &str| match v {
        Some(v) => format!("{name} +{v} kB ({} MiB)", mib(v as f64 * 1024.0)),
        None => format!("{name}: not available here because /proc/vmstat lacks it"),
    };
    out.push_str(&format!(
        "\nvmstat: {}, {}\n",
        kb(io.pgpgin_kb, "pgpgin"),
        kb(io.pgpgout_kb, "pgpgout")
    ));
    if !io.changed_devices.is_empty() {
        out.push_str(&format!(
            "devices that appeared or vanished meanwhile (not compared): {}\n",
            io.changed_devices.join(", ")
        ));
    }
    out + &verdict(&r.verdict)
}

/// Seed 000 §7.2's question: is the use case waiting on I/O?
fn verdict(v: &IoVerdict) -> String {
    let level = match v.level {
        IoLevel::IoBound => "I/O-BOUND: the command spends most of its time waiting on I/O",
        IoLevel::PartlyIo => "partly I/O-bound: waiting on I/O is a noticeable share of the run",
        IoLevel::NotIoBound => "not I/O-bound: the command seldom waits on I/O",
        IoLevel::Unknown => "unknown: neither delay accounting nor PSI io is available here",
    };
    let mut out = format!("\nverdict: {level}\n");
    for reason in &v.reasons {
        out += &format!("  - {reason}\n");
    }
    out
}
