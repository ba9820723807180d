//! `lever mem thrash [--duration TIME | -- CMD]`.

use crate::args::Global;
use crate::cmd::util::{interval, positive_seconds};
use crate::render::mem::thrash::ThrashReport;
use crate::render::{self, emit, Progress};
use anyhow::{bail, Context};
use clap::Args;
use lever_kernel::KernelFs;
use lever_measure::sampling::{sample_for, sample_while, spawn, Tick};
use lever_measure::thrash::{self, ThrashInterval, ThrashSample, Verdict};
use std::path::PathBuf;
use std::time::Duration;

/// `lever mem thrash`
#[derive(Debug, Args)]
pub struct ThrashArgs {
    /// Time between samples: `1s`, `500ms`; a bare number is seconds.
    #[arg(long, value_name = "TIME", value_parser = interval, default_value = "1")]
    pub interval: Duration,
    /// How long to sample: `10s`, `2m`; a bare number is seconds (default
    /// 10 s; not with `-- CMD`).
    #[arg(long, value_name = "TIME", value_parser = positive_seconds, conflicts_with = "command")]
    pub duration: Option<Duration>,
    /// Read this cgroup v2 directory's `memory.stat` and `memory.pressure`
    /// instead of /proc/vmstat and /proc/pressure/memory: reclaim inside a
    /// memory-limited cgroup does not show in the global counters. An
    /// absolute path (`/sys/fs/cgroup/app.slice`) or one relative to
    /// /sys/fs/cgroup (`app.slice`).
    #[arg(long, value_name = "PATH")]
    pub cgroup: Option<String>,
    /// Write thrash.csv, thrash.json and thrash.svg (the series and a plot)
    /// into this directory (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Sample while this command runs.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// `app.slice` → `/sys/fs/cgroup/app.slice`; absolute paths are kept.
fn cgroup_dir(path: &str) -> String {
    let path = path.trim_end_matches('/');
    if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/sys/fs/cgroup/{path}")
    }
}

pub fn run(global: &Global, fs: &KernelFs, a: ThrashArgs) -> anyhow::Result<()> {
    let interval = a.interval;
    let duration = match a.duration {
        Some(d) => Some(d),
        None if a.command.is_empty() => Some(Duration::from_secs(10)),
        None => None,
    };
    let cgroup = a.cgroup.as_deref().map(cgroup_dir);
    if let Some(dir) = &cgroup {
        let stat = format!("{dir}/memory.stat");
        if !fs.exists(&stat) {
            bail!("--cgroup: no {stat} (not a cgroup v2 directory with the memory controller)");
        }
    }
    let source = match &cgroup {
        Some(dir) => format!("{dir}/memory.stat"),
        None => "/proc/vmstat".to_string(),
    };
    let label = match duration {
        Some(d) => format!("sampling {source} for {:.0} s", d.as_secs_f64()),
        None => format!("sampling {source} during `{}`", a.command.join(" ")),
    };
    let progress = Progress::new(label);
    let total_ticks = duration.map(|d| (d.as_secs_f64() / interval.as_secs_f64()).ceil() as u64);
    let mut samples = Vec::new();
    let record = |tick: Tick| -> anyhow::Result<()> {
        let t = tick.elapsed.as_secs_f64();
        samples.push(match &cgroup {
            Some(dir) => ThrashSample::read_cgroup(fs, dir, t)?,
            None => ThrashSample::read(fs, t)?,
        });
        if tick.index > 0 {
            progress.update(tick.index, total_ticks, "intervals");
        }
        Ok(())
    };
    let exit_code = match duration {
        Some(d) => {
            sample_for(d, interval, record)?;
            None
        }
        None => {
            let mut child = spawn(&a.command)?;
            sample_while(&mut child, interval, record)?.code()
        }
    };
    progress.finish();
    let intervals: Vec<ThrashInterval> = samples
        .windows(2)
        .map(|w| ThrashInterval::new(&w[1], &w[0]))
        .collect();
    let verdict = Verdict::new(&intervals);
    let written = match &a.out {
        Some(dir) => thrash::write_series(dir, &intervals)
            .with_context(|| format!("writing the series into {}", dir.display()))?,
        None => Vec::new(),
    };
    let report = ThrashReport {
        cgroup,
        interval_s: interval.as_secs_f64(),
        command: a.command.clone(),
        exit_code,
        psi_available: samples[0].psi.is_some(),
        samples,
        intervals,
        verdict,
        written,
    };
    emit(global.json, &report, render::mem::thrash::report)?;
    if !a.command.is_empty() && report.exit_code != Some(0) {
        bail!("`{}` did not exit with status 0", a.command.join(" "));
    }
    Ok(())
}
