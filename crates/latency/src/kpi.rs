//! The KPI table of seed 000 §3.6 ("RT Linux kernel KPIs"): the same
//! measurement without load and under load, one block per condition,
//! one column per RT core, rows minimum / maximum (and average, p99.9)
//! latency in µs; with seed 001's pass criterion (every latency under
//! 20 µs) as a verdict per thread when `--pass-us` is given.
//!
//! Seed 000's table, for comparison:
//!
//! ```text
//! KPIs for cyclictest with no-load
//! RT cores                             Core1 Core2 Core3
//! Minimum latencies (in microseconds)  8     9     9
//! Maximum latencies (in microseconds)  86    29    29
//! ```

use crate::config::Config;
use crate::error::LatencyError;
use crate::load::LoadSpec;
use crate::report::LatencyReport;
use crate::run::{self, Snapshot};
use crate::stats::Percentile;
use lever_kernel::KernelFs;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// The load of the second phase when none is given: 60 % on every
/// online CPU (seed 001's default `LOAD=60`, one stress-ng per core).
pub fn default_load(online: &[u32]) -> LoadSpec {
    LoadSpec::Cpu {
        workers: online.len().max(1),
        percent: 60,
        cpus: online.to_vec(),
    }
}

/// One thread's column in one block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KpiCell {
    /// The CPU (the column heading `Core N`).
    pub cpu: Option<u32>,
    /// Minimum latency, µs.
    pub min_us: Option<u64>,
    /// Average latency, µs.
    pub avg_us: Option<f64>,
    /// Maximum latency, µs.
    pub max_us: Option<u64>,
    /// 99.9th percentile.
    pub p99_9: Option<Percentile>,
    /// Samples.
    pub samples: u64,
    /// `max_us < pass_us`, when a criterion is given.
    pub pass: Option<bool>,
}

/// One block: a load condition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KpiBlock {
    /// `no load`, or the loads.
    pub condition: String,
    /// One per measuring thread.
    pub cells: Vec<KpiCell>,
    /// The full report of that phase.
    pub report: LatencyReport,
}

/// The whole table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KpiReport {
    /// The pass criterion, µs (`--pass-us`).
    pub pass_us: Option<u64>,
    /// No load first, then under load.
    pub blocks: Vec<KpiBlock>,
    /// Every thread of every block passed (`None` without a criterion).
    pub pass: Option<bool>,
}

impl KpiBlock {
    /// A block from a phase's report.
    pub fn new(condition: String, report: LatencyReport, pass_us: Option<u64>) -> KpiBlock {
        let cells = report
            .threads
            .iter()
            .map(|t| KpiCell {
                cpu: t.cpu,
                min_us: t.min_us,
                avg_us: t.avg_us,
                max_us: t.max_us,
                p99_9: t.percentiles.and_then(|p| p.p99_9),
                samples: t.cycles,
                pass: pass_us.map(|limit| t.cycles > 0 && t.max_us.is_some_and(|m| m < limit)),
            })
            .collect();
        KpiBlock {
            condition,
            cells,
            report,
        }
    }
}

impl KpiReport {
    /// The table from its blocks.
    pub fn new(pass_us: Option<u64>, blocks: Vec<KpiBlock>) -> KpiReport {
        let pass = pass_us.map(|_| {
            blocks
                .iter()
                .flat_map(|b| &b.cells)
                .all(|c| c.pass == Some(true))
        });
        KpiReport {
            pass_us,
            blocks,
            pass,
        }
    }
}

/// Run the no-load phase (`cfg` without its loads), then the load phase
/// (`cfg.loads`, or [`default_load`]), and build the table. `stop`
/// (Ctrl-C) ends the current phase and skips the rest.
pub fn run(
    fs: &KernelFs,
    cfg: &Config,
    pass_us: Option<u64>,
    stop: &AtomicBool,
    mut status: impl FnMut(&str, &[Snapshot]),
) -> Result<KpiReport, LatencyError> {
    if pass_us == Some(0) {
        return Err(LatencyError::BadOption {
            option: "--pass-us",
            value: "0".into(),
            expected: "a threshold of at least 1 µs",
        });
    }
    let loads = if cfg.loads.is_empty() {
        vec![default_load(&run::online_cpus(fs)?)]
    } else {
        cfg.loads.clone()
    };
    let phases = [
        ("no load".to_string(), Vec::new()),
        (
            loads
                .iter()
                .map(LoadSpec::describe)
                .collect::<Vec<_>>()
                .join("; "),
            loads,
        ),
    ];
    let mut blocks = Vec::new();
    for (i, (condition, loads)) in phases.into_iter().enumerate() {
        if stop.load(Relaxed) {
            break;
        }
        // With -b/--analyze each phase keeps its own trace.
        let trace_out = cfg.trace_reason().map(|_| {
            let base = cfg
                .trace_out
                .clone()
                .unwrap_or_else(crate::tracing::default_out);
            phase_trace(&base, if i == 0 { "no-load" } else { "load" })
        });
        let phase_cfg = Config {
            loads,
            trace_out,
            ..cfg.clone()
        };
        let report = run::measure(fs, &phase_cfg, stop, |s| status(&condition, s))?;
        blocks.push(KpiBlock::new(condition, report, pass_us));
    }
    Ok(KpiReport::new(pass_us, blocks))
}

/// `run.trace` → `run.no-load.trace` / `run.load.trace`.
fn phase_trace(base: &std::path::Path, phase: &str) -> std::path::PathBuf {
    let stem = base.file_stem().unwrap_or_default().to_string_lossy();
    let name = match base.extension() {
        Some(ext) => format!("{stem}.{phase}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{phase}"),
    };
    base.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Ended, Source, ThreadReport};

    fn report(maxes: &[u64]) -> LatencyReport {
        LatencyReport {
            source: Source::Measured,
            policy: None,
            threads: maxes
                .iter()
                .enumerate()
                .map(|(i, &m)| ThreadReport {
                    cpu: Some(i as u32 + 1),
                    cycles: 10,
                    min_us: Some(8),
                    max_us: Some(m),
                    ..ThreadReport::empty(i)
                })
                .collect(),
            histogram_us: None,
            spike_threshold_us: None,
            spikes: Vec::new(),
            spike_count: 0,
            ended: Ended::Loops,
            elapsed_s: None,
            notes: Vec::new(),
            loads: Vec::new(),
            trace_file: None,
            analyses: Vec::new(),
        }
    }

    #[test]
    fn each_phase_keeps_its_own_trace() {
        use std::path::Path;
        assert_eq!(
            phase_trace(Path::new("/tmp/run.trace"), "load"),
            Path::new("/tmp/run.load.trace")
        );
        assert_eq!(
            phase_trace(Path::new("out"), "no-load"),
            Path::new("out.no-load")
        );
    }

    #[test]
    fn seed_000_no_load_block_fails_a_20_us_criterion_on_core1() {
        // Seed 000 §3.6 no-load maxima 86, 29, 29 µs; under load 53, 37, 28.
        let k = KpiReport::new(
            Some(20),
            vec![
                KpiBlock::new("no load".into(), report(&[86, 29, 29]), Some(20)),
                KpiBlock::new("stress-ng".into(), report(&[53, 37, 28]), Some(20)),
            ],
        );
        assert_eq!(k.pass, Some(false));
        assert_eq!(k.blocks[0].cells[0].pass, Some(false));
        // Seed 001's QCS6490 (max 5 and 10 µs) passes.
        let k = KpiReport::new(
            Some(20),
            vec![KpiBlock::new("no load".into(), report(&[5]), Some(20))],
        );
        assert_eq!(k.pass, Some(true));
        assert_eq!(KpiReport::new(None, Vec::new()).pass, None);
    }
}
