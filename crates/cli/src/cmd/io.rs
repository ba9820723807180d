//! `lever io -- CMD`: the I/O-bound check of seed 000 §7.2 — `/proc/diskstats`
//! and `/proc/vmstat` before and after a command, per-device deltas.

use crate::args::Global;
use crate::cmd::util::run_command;
use crate::render::{print_json, Table};
use anyhow::bail;
use clap::Args;
use lever_kernel::KernelFs;
use lever_measure::diskstats::{Diskstats, IoReport};
use lever_measure::vmstat::Vmstat;
use serde::Serialize;

/// `lever io`
#[derive(Debug, Args)]
pub struct IoArgs {
    /// Show every device, also those that did no I/O.
    #[arg(long)]
    pub all: bool,
    /// The use case to measure.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Serialize)]
struct Report {
    command: Vec<String>,
    exit_code: Option<i32>,
    #[serde(flatten)]
    io: IoReport,
}

pub fn run(global: &Global, args: IoArgs) -> anyhow::Result<()> {
    let fs = KernelFs::new(&global.root);
    let disks_before = Diskstats::read(&fs)?;
    let vm_before = Vmstat::read(&fs)?;
    let outcome = run_command(&args.command)?;
    let disks_after = Diskstats::read(&fs)?;
    let vm_after = Vmstat::read(&fs)?;
    let mut io = IoReport::new(
        (&disks_before, &vm_before),
        (&disks_after, &vm_after),
        outcome.elapsed.as_secs_f64(),
    );
    let total_devices = io.devices.len();
    if !args.all {
        io.devices.retain(|d| d.is_active());
    }
    let report = Report {
        command: args.command.clone(),
        exit_code: outcome.status.code(),
        io,
    };
    if global.json {
        print_json(&report)?;
    } else {
        print!("{}", render(&report, total_devices, args.all));
    }
    if !outcome.status.success() {
        bail!(
            "`{}` exited with {}",
            args.command.join(" "),
            outcome.status
        );
    }
    Ok(())
}

fn mib(bytes: f64) -> String {
    format!("{:.1}", bytes / (1024.0 * 1024.0))
}

fn render(r: &Report, total_devices: usize, all: bool) -> String {
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
                format!("{:.1}", d.utilization_pct),
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
    out
}
