//! The same load's ramps in two runs: with and without a uclamp floor.
//!
//! A run is the steps of one capture with one uclamp floor (from a
//! marker, or none). Two captures (`--ramp --baseline OTHER`) give at
//! least two runs; one capture with uclamp marks that change the floor
//! gives one run per floor. Every run is measured against one common
//! target per CPU, the highest frequency seen on that CPU in either
//! capture, so a run that never reached the other's top is "not reached",
//! not a short ramp to a lower top. Differences are against the first run
//! (the baseline, or no floor).

use super::{RampReport, RampStep};
use crate::stats::Distribution;
use lever_trace::LineSource;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io;

/// One run: a capture's steps with one uclamp floor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RampRun {
    /// `baseline` or `this` (the capture analyzed).
    pub run: &'static str,
    /// The floor of its steps (`None`: no uclamp mark).
    pub uclamp_min: Option<u32>,
    /// Idle → busy steps.
    pub steps: u64,
    /// Steps that idled before reaching the target.
    pub not_reached: u64,
    /// Step → target, for the steps that reached it.
    pub ramp: Distribution,
    /// Median ramp minus the first run's (ns; negative = faster).
    pub p50_diff_ns: i64,
    /// p90 ramp minus the first run's.
    pub p90_diff_ns: i64,
    /// Longest ramp minus the first run's.
    pub max_diff_ns: i64,
}

/// Runs side by side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RampComparison {
    /// The baseline capture, when one was given.
    pub baseline_file: Option<String>,
    /// Only steps started by this task (comm or tid), when given.
    pub task: Option<String>,
    /// (CPU, kHz): the common target of each CPU.
    pub target_khz: Vec<(u32, u64)>,
    /// The first is the reference of the differences.
    pub runs: Vec<RampRun>,
}

fn targets(reports: &[&RampReport]) -> BTreeMap<u32, u64> {
    let mut t = BTreeMap::new();
    for r in reports {
        for c in &r.cpus {
            let k = t.entry(c.cpu).or_insert(0);
            *k = (*k).max(c.max_khz);
        }
    }
    t
}

fn runs_of(
    run: &'static str,
    steps: &[RampStep],
    task: Option<&str>,
    target: &BTreeMap<u32, u64>,
) -> Vec<RampRun> {
    let mut by_floor: BTreeMap<Option<u32>, Vec<&RampStep>> = BTreeMap::new();
    for s in steps {
        if task.is_none_or(|t| t == s.comm || t.parse() == Ok(s.tid)) {
            by_floor.entry(s.uclamp_min).or_default().push(s);
        }
    }
    by_floor
        .into_iter()
        .map(|(floor, steps)| {
            let mut ramps: Vec<u64> = steps
                .iter()
                .filter_map(|s| s.time_to(target.get(&s.cpu).copied().unwrap_or(u64::MAX)))
                .collect();
            RampRun {
                run,
                uclamp_min: floor,
                steps: steps.len() as u64,
                not_reached: (steps.len() - ramps.len()) as u64,
                ramp: Distribution::from_samples(&mut ramps),
                p50_diff_ns: 0,
                p90_diff_ns: 0,
                max_diff_ns: 0,
            }
        })
        .collect()
}

fn with_diffs(
    baseline_file: Option<String>,
    task: Option<&str>,
    target: BTreeMap<u32, u64>,
    mut runs: Vec<RampRun>,
) -> RampComparison {
    if let Some(first) = runs.first().map(|r| r.ramp.clone()) {
        let d = |a: u64, b: u64| a as i64 - b as i64;
        for r in &mut runs {
            r.p50_diff_ns = d(r.ramp.p50_ns, first.p50_ns);
            r.p90_diff_ns = d(r.ramp.p90_ns, first.p90_ns);
            r.max_diff_ns = d(r.ramp.max_ns, first.max_ns);
        }
    }
    RampComparison {
        baseline_file,
        task: task.map(str::to_string),
        target_khz: target.into_iter().collect(),
        runs,
    }
}

/// One run per uclamp floor in `report` (steps of `task` only, when
/// given); `None` when the steps have fewer than two floors.
pub fn by_floor(report: &RampReport, task: Option<&str>) -> Option<RampComparison> {
    let target = targets(&[report]);
    let runs = runs_of("this", &report.steps, task, &target);
    (runs.len() >= 2).then(|| with_diffs(None, task, target, runs))
}

/// `this` against `baseline` (a capture of the same load, typically
/// without the floor): the baseline's runs first.
pub fn compare(
    this: &RampReport,
    baseline: &RampReport,
    baseline_file: &str,
    task: Option<&str>,
) -> RampComparison {
    let target = targets(&[this, baseline]);
    let mut runs = runs_of("baseline", &baseline.steps, task, &target);
    runs.extend(runs_of("this", &this.steps, task, &target));
    with_diffs(Some(baseline_file.to_string()), task, target, runs)
}

/// Fill `report.comparison`: against a baseline capture when one is
/// given (read with the ramp analysis only), else between the uclamp
/// floors inside `report`; `task` keeps only the steps it started.
pub fn compare_runs<S: LineSource>(
    report: &mut RampReport,
    baseline: Option<(S, &str)>,
    task: Option<&str>,
    threads: usize,
) -> io::Result<()> {
    report.comparison = match baseline {
        Some((input, name)) => {
            let opts = crate::Options {
                ramp: true,
                threads,
                ..crate::Options::default()
            };
            let other = crate::analyze_source(input, &opts, |_| {})?;
            let other = other
                .ramp
                .unwrap_or_else(|| super::RampTracker::new().finish());
            Some(compare(report, &other, name, task))
        }
        None => by_floor(report, task),
    };
    Ok(())
}
