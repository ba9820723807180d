//! `lever mem map [-- CMD]`.

use crate::args::Global;
use crate::cmd::util::interval;
use crate::render::mem::map::{During, MapReport};
use crate::render::{self, emit, Progress};
use anyhow::{bail, Context};
use clap::Args;
use lever_kernel::KernelFs;
use lever_measure::memmap::{MemSample, MemoryMap, PageSize, PageSizeSource, StaticMemory};
use lever_measure::sampling::{sample_while, spawn};
use std::path::PathBuf;
use std::time::Duration;

/// `lever mem map`
#[derive(Debug, Args)]
pub struct MapArgs {
    /// Total RAM, with a binary unit: 6G, 6144M, 6291456K. It wins over the
    /// device tree and the dmesg `Memory:` line (which leaves out firmware
    /// carve-outs), and the report says so.
    #[arg(long, value_name = "SIZE", value_parser = parse_size_kb)]
    pub total_ram: Option<u64>,
    /// A saved `dmesg` output to take the `Memory:` line from, instead of
    /// reading /dev/kmsg below --root.
    #[arg(long, value_name = "FILE")]
    pub dmesg: Option<PathBuf>,
    /// Page size in kB for the ION cache (default: derived from meminfo and
    /// vmstat, else 4).
    #[arg(long, value_name = "KB")]
    pub page_size_kb: Option<u64>,
    /// Sampling interval while CMD runs: `200ms`, `1s`; a bare number is
    /// seconds.
    #[arg(long, value_name = "TIME", value_parser = interval, default_value = "0.2")]
    pub interval: Duration,
    /// A use case to measure "during": the column shows the sample with the
    /// least free memory while it ran.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Parse `6G`, `6144M`, `6291456K`, `1T` (binary units, any case) into
/// kB. A unit is required: a bare `6144` could be MB or kB.
fn parse_size_kb(s: &str) -> Result<u64, String> {
    if s.trim().ends_with(|c: char| c.is_ascii_digit() || c == '.') {
        return Err(format!("{s:?}: give a unit, e.g. 6G, 6144M or 6291456K"));
    }
    lever_text::parse_size(s, 1)
        .map(|bytes| bytes / 1024)
        .map_err(|e| e.to_string())
}

pub fn run(global: &Global, fs: &KernelFs, a: MapArgs) -> anyhow::Result<()> {
    let log = match &a.dmesg {
        Some(p) => Some(lever_measure::dmesg::read_file(p)?),
        None => None,
    };
    let fixed = StaticMemory::read(fs, log, a.total_ram)?;
    let page = a.page_size_kb.map(|kb| PageSize {
        kb,
        source: PageSizeSource::Given,
    });
    let after_boot = MemoryMap::new(&fixed, &MemSample::read(fs)?, page)?;
    let during = if a.command.is_empty() {
        None
    } else {
        Some(during(fs, &fixed, page, &a)?)
    };
    let report = MapReport {
        root: global.root.clone(),
        fixed,
        after_boot,
        during,
    };
    emit(global.json, &report, render::mem::map::report)?;
    if let Some(d) = &report.during {
        if d.exit_code != Some(0) {
            bail!(
                "`{}` exited with {}",
                d.command.join(" "),
                d.exit_code
                    .map_or("a signal".to_string(), |c| format!("status {c}"))
            );
        }
    }
    Ok(())
}

/// Sample while the command runs; keep the sample with the least free memory.
fn during(
    fs: &KernelFs,
    fixed: &StaticMemory,
    page: Option<PageSize>,
    a: &MapArgs,
) -> anyhow::Result<During> {
    let interval = a.interval;
    let progress = Progress::new(format!("sampling memory during `{}`", a.command.join(" ")));
    let mut child = spawn(&a.command)?;
    let mut best: Option<(MemoryMap, f64)> = None;
    let mut samples = 0usize;
    let status = sample_while(&mut child, interval, |tick| -> anyhow::Result<()> {
        if tick.exited {
            // Only samples taken while it ran count.
            return Ok(());
        }
        let map = MemoryMap::new(fixed, &MemSample::read(fs)?, page)?;
        samples += 1;
        let t = tick.elapsed.as_secs_f64();
        if best
            .as_ref()
            .is_none_or(|(b, _)| map.free.free_kb < b.free.free_kb)
        {
            best = Some((map, t));
        }
        progress.update(samples as u64, None, "samples");
        Ok(())
    })?;
    progress.finish();
    let (map, peak_at_s) = best.context("no sample taken")?;
    Ok(During {
        command: a.command.clone(),
        exit_code: status.code(),
        samples,
        peak_at_s,
        map,
    })
}

#[cfg(test)]
mod tests {
    use super::parse_size_kb;

    #[test]
    fn sizes() {
        assert_eq!(parse_size_kb("6G"), Ok(6 * 1024 * 1024));
        assert_eq!(parse_size_kb("6144M"), Ok(6 * 1024 * 1024));
        assert_eq!(parse_size_kb("6291456kb"), Ok(6291456));
        assert_eq!(parse_size_kb("1T"), Ok(1024 * 1024 * 1024));
        assert_eq!(parse_size_kb("24g"), Ok(24 * 1024 * 1024));
        assert!(parse_size_kb("6144").is_err());
        assert!(parse_size_kb("xG").is_err());
    }
}
