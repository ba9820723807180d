//! `lever io -- CMD`: the I/O-bound check of seed 000 §7.2 — `/proc/diskstats`
//! and `/proc/vmstat` before and after a command, per-device deltas, and a
//! verdict from the time the command was blocked on I/O (delay accounting,
//! PSI io) against its wall time.

use crate::args::Global;
use crate::render::io::Report;
use crate::render::{self, emit};
use anyhow::bail;
use clap::Args;
use lever_kernel::KernelFs;
use lever_measure::diskstats::{Diskstats, IoReport};
use lever_measure::iobound::{IoVerdict, IoWait};
use lever_measure::pressure::Pressure;
use lever_measure::sampling::run_command;
use lever_measure::vmstat::Vmstat;

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

pub fn run(global: &Global, args: IoArgs) -> anyhow::Result<()> {
    let fs = KernelFs::new(&global.root);
    let disks_before = Diskstats::read(&fs)?;
    let vm_before = Vmstat::read(&fs)?;
    let psi_before = Pressure::read_io(&fs)?;
    let outcome = run_command(&args.command)?;
    let psi_after = Pressure::read_io(&fs)?;
    let disks_after = Diskstats::read(&fs)?;
    let vm_after = Vmstat::read(&fs)?;
    // The blocked time is the real child's, so it only means something on
    // the running system; a file tree has no delay accounting to consult.
    let (blkio, delayacct) = if fs.is_system() {
        (outcome.blkio, IoWait::read_delayacct(&fs))
    } else {
        (None, IoWait::read_delayacct(&fs))
    };
    let wait = IoWait::new(
        outcome.elapsed,
        blkio,
        delayacct,
        psi_before.as_ref(),
        psi_after.as_ref(),
    );
    let verdict = IoVerdict::new(&wait);
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
        wait,
        verdict,
    };
    emit(global.json, &report, |r| {
        render::io::report(r, total_devices, args.all)
    })?;
    if !outcome.status.success() {
        bail!(
            "`{}` exited with {}",
            args.command.join(" "),
            outcome.status
        );
    }
    Ok(())
}
