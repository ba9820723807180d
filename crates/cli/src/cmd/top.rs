//! `lever top [-d TIME | -- CMD]`: CPU per process, per thread and per
//! core, and the total, sampled from procfs (seed 000 §7.1's top and htop)
//! by `lever_measure::top`.

use crate::args::Global;
use crate::cmd::util::{interval, positive_seconds};
use crate::render::top::TopReport;
use crate::render::{self, emit, Progress};
use anyhow::Context;
use clap::Args;
use lever_kernel::KernelFs;
use lever_measure::sampling::{sample_for, sample_while, spawn, Tick};
use lever_measure::top::{ReadOptions, TopWatcher, Which};
use std::path::PathBuf;
use std::time::Duration;

/// `lever top`
#[derive(Debug, Args)]
pub struct TopArgs {
    /// How long to watch: `10s`, `2m`; a bare number is seconds (default
    /// 5 s; not with `-- CMD`, which is watched until it exits).
    #[arg(short = 'd', long, value_name = "TIME", value_parser = positive_seconds, conflicts_with = "command")]
    pub duration: Option<Duration>,
    /// Time between samples: `1s`, `500ms`; a bare number is seconds.
    #[arg(short = 'i', long, value_name = "TIME", value_parser = interval, default_value = "1")]
    pub interval: Duration,
    /// Only these processes: `-p 42 -p 43` or `-p 42,43` (not with `-- CMD`).
    #[arg(short = 'p', long = "pid", value_name = "PID", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..), conflicts_with = "command")]
    pub pids: Vec<u32>,
    /// Also each process's threads (/proc/PID/task/TID).
    #[arg(long)]
    pub threads: bool,
    /// How many processes to list, most CPU first (0: all).
    #[arg(short = 'n', long = "top", value_name = "N", default_value = "15")]
    pub rows: usize,
    /// Write the per-core, total and top processes' CPU over time as an SVG
    /// plot.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Watch while this command runs, then exit with its status.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

pub fn run(global: &Global, a: TopArgs) -> anyhow::Result<()> {
    let fs = KernelFs::new(&global.root);
    let opts = ReadOptions {
        which: if a.pids.is_empty() {
            Which::All
        } else {
            Which::Pids(a.pids.iter().copied().collect())
        },
        threads: a.threads,
    };
    let hz = lever_measure::top::user_hz();
    let duration = match (a.duration, a.command.is_empty()) {
        (Some(d), _) => Some(d),
        (None, true) => Some(Duration::from_secs(5)),
        (None, false) => None,
    };
    let label = match duration {
        Some(d) => format!("sampling /proc for {:.1} s", d.as_secs_f64()),
        None => format!("sampling /proc during `{}`", a.command.join(" ")),
    };
    let progress = Progress::new(label);
    let total_ticks = duration.map(|d| (d.as_secs_f64() / a.interval.as_secs_f64()).ceil() as u64);
    let (watcher, status) = match duration {
        Some(d) => {
            let mut w = TopWatcher::new(&fs, opts, hz, None);
            sample_for(d, a.interval, |tick: Tick| -> anyhow::Result<()> {
                w.sample(tick.elapsed.as_secs_f64())?;
                progress.update(tick.index, total_ticks, "intervals");
                Ok(())
            })?;
            (w, None)
        }
        None => {
            let mut child = spawn(&a.command)?;
            let mut w = TopWatcher::new(&fs, opts, hz, Some(child.id()));
            let status =
                sample_while(&mut child, a.interval, |tick: Tick| -> anyhow::Result<()> {
                    w.sample(tick.elapsed.as_secs_f64())?;
                    progress.update(tick.index, None, "intervals");
                    Ok(())
                })?;
            (w, Some(status))
        }
    };
    progress.finish();
    let run = watcher.finish();
    if let Some(path) = &a.svg {
        let svg = render::top::svg(&run, a.rows);
        std::fs::write(path, svg)
            .with_context(|| format!("writing the SVG to {}", path.display()))?;
    }
    let report = TopReport {
        interval_s: a.interval.as_secs_f64(),
        pids: a.pids.clone(),
        command: a.command.clone(),
        exit_code: status.and_then(|s| s.code()),
        svg: a.svg.clone(),
        run,
    };
    emit(global.json, &report, |r| render::top::report(r, a.rows))?;
    match status {
        Some(s) => crate::cmd::cpu::exit_like(&s),
        None => Ok(()),
    }
}
