//! `lever thermal [--watch [--interval TIME] [--duration TIME | -- CMD]]`:
//! thermal zones, their trip points, cooling devices and which zone binds
//! which device (`lever_measure::thermal`); with `--watch`, temperatures
//! and cooling states over time and each zone's peak.

use crate::args::Global;
use crate::cmd::util::{interval, positive_seconds};
use crate::render::thermal::{Report, WatchReport};
use crate::render::{self, emit, Progress};
use anyhow::{bail, Context};
use clap::Args;
use lever_kernel::{paths, KernelError, KernelFs};
use lever_measure::sampling::{sample_for, sample_while, spawn, Tick};
use lever_measure::thermal::{Thermal, ThermalSample, Watch};
use std::time::Duration;

/// `lever thermal`
#[derive(Debug, Args)]
pub struct ThermalArgs {
    /// Sample temperatures and cooling states over time and show each
    /// zone's peak (also implied by --interval, --duration and -- CMD).
    #[arg(long)]
    pub watch: bool,
    /// Time between samples with --watch: `1s`, `500ms`; a bare number is
    /// seconds (default 1 s).
    #[arg(long, value_name = "TIME", value_parser = interval)]
    pub interval: Option<Duration>,
    /// How long to watch: `10s`, `2m`; a bare number is seconds (default
    /// 10 s; not with -- CMD).
    #[arg(long, value_name = "TIME", value_parser = positive_seconds, conflicts_with = "command")]
    pub duration: Option<Duration>,
    /// Watch while this command runs.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

pub fn run(global: &Global, a: ThermalArgs) -> anyhow::Result<()> {
    let fs = KernelFs::new(&global.root);
    let thermal = Thermal::read(&fs)?;
    let zones_missing = thermal.zones_missing(&fs);
    if let (Some(why), true) = (&zones_missing, thermal.cooling.is_empty()) {
        // Nothing to show at all: a kernel feature that is not there (exit 4).
        return Err(KernelError::Missing {
            path: format!("{}/thermal_zone0", paths::THERMAL),
        })
        .context(format!(
            "thermal zones are not available here because {why}"
        ));
    }
    let watching = a.watch || a.interval.is_some() || a.duration.is_some() || !a.command.is_empty();
    let watch = if watching {
        Some(watch(&fs, &thermal, &a)?)
    } else {
        None
    };
    let report = Report {
        simulated: (!fs.is_system()).then(|| {
            format!(
                "--root {}: temperatures and states are that tree's fixed values, not live readings",
                global.root.display()
            )
        }),
        zones_missing,
        thermal,
        watch,
    };
    emit(global.json, &report, render::thermal::report)?;
    if let Some(w) = &report.watch {
        if !a.command.is_empty() && w.exit_code != Some(0) {
            bail!("`{}` did not exit with status 0", a.command.join(" "));
        }
    }
    Ok(())
}

fn watch(fs: &KernelFs, thermal: &Thermal, a: &ThermalArgs) -> anyhow::Result<WatchReport> {
    let every = a.interval.unwrap_or(Duration::from_secs(1));
    let duration = match a.duration {
        Some(d) => Some(d),
        None if a.command.is_empty() => Some(Duration::from_secs(10)),
        None => None,
    };
    let label = match duration {
        Some(d) => format!("watching {} for {:.0} s", paths::THERMAL, d.as_secs_f64()),
        None => format!(
            "watching {} during `{}`",
            paths::THERMAL,
            a.command.join(" ")
        ),
    };
    let progress = Progress::new(label);
    let total = duration.map(|d| (d.as_secs_f64() / every.as_secs_f64()).ceil() as u64);
    let mut samples = Vec::new();
    let record = |tick: Tick| -> anyhow::Result<()> {
        samples.push(ThermalSample::read(
            fs,
            thermal,
            tick.elapsed.as_secs_f64(),
        )?);
        if tick.index > 0 {
            progress.update(tick.index, total, "samples");
        }
        Ok(())
    };
    let exit_code = match duration {
        Some(d) => {
            sample_for(d, every, record)?;
            None
        }
        None => {
            let mut child = spawn(&a.command)?;
            sample_while(&mut child, every, record)?.code()
        }
    };
    progress.finish();
    Ok(WatchReport {
        interval_s: every.as_secs_f64(),
        command: a.command.clone(),
        exit_code,
        watch: Watch::new(thermal, samples),
    })
}
