//! Two or more runs side by side: every metric of the first run (the
//! base) and of the others, matched by name and labels, each later run
//! judged against the base with `lever bench compare`'s significance test
//! ([`lever_bench::compare::judge_runs`]). The test needs samples: a metric
//! with fewer than two samples on either side shows its change but is
//! never called significant.

use crate::model::{Better, Metric, Run};
use lever_bench::compare::{
    cache_reach, creates_files, drift_rule, file_history, judge_runs, pass_medians,
    rerun_counts_for, rerun_left_out, CacheReach, DriftRule, Judgement, Reruns, Side, Verdict,
};
use lever_bench::stats::Summary;
use serde::Serialize;
use std::collections::BTreeMap;

/// `lever bench compare`'s default regression threshold, percent.
pub const THRESHOLD_PCT: f64 = lever_bench::compare::DEFAULT_THRESHOLD_PCT;

/// One metric across the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The section it belongs to.
    pub section: String,
    /// Metric name.
    pub name: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// Unit.
    pub unit: String,
    /// Which way is better, where known.
    pub better: Option<Better>,
    /// The value in each run (`None` where the run lacks it).
    pub values: Vec<Option<f64>>,
    /// Each run after the first against the first.
    pub vs_base: Vec<Option<Judgement>>,
    /// What the base and its reruns give for the metric, where reruns were
    /// given ([`Judging::base_reruns`]) and two or more runs have it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reruns: Option<Reruns>,
}

impl Row {
    /// `name{k=v,…}`, for people.
    pub fn key(&self) -> String {
        if self.labels.is_empty() {
            self.name.clone()
        } else {
            let l: Vec<String> = self
                .labels
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            format!("{}{{{}}}", self.name, l.join(","))
        }
    }

    /// True when some run differs significantly from the base.
    pub fn significant(&self) -> bool {
        self.vs_base
            .iter()
            .flatten()
            .any(|j| is_significant(j.verdict))
    }
}

/// Improved, regressed or worse within the threshold.
pub fn is_significant(v: Verdict) -> bool {
    matches!(
        v,
        Verdict::Improved | Verdict::Regressed | Verdict::WorseWithinThreshold
    )
}

/// Judge `new` against `base` as `lever bench compare` judges a test
/// ([`judge_runs`]): with the samples each pass took, a worse mode only
/// when it is a load's (in every pass, or alternating within one), and a
/// change within the runs' drift between their own passes (by `rule`)
/// not called one. `disturbed`: the new run's conditions recorded a load,
/// throttling or a change of its speed ([`Side::disturbed`]).
fn judge_metric(
    base: &Metric,
    new: &Metric,
    threshold_pct: f64,
    rule: DriftRule,
    disturbed: bool,
) -> Judgement {
    let change_pct =
        (base.value != 0.0).then(|| 100.0 * (new.value - base.value) / base.value.abs());
    let summaries = (Summary::new(&base.samples), Summary::new(&new.samples));
    match (base.better.or(new.better), summaries) {
        (Some(better), (Some(sb), Some(sn)))
            if base.samples.len() >= 2 && new.samples.len() >= 2 =>
        {
            let b = match better {
                Better::Lower => lever_bench::catalog::Better::Lower,
                Better::Higher => lever_bench::catalog::Better::Higher,
            };
            let (base_medians, new_medians) = (
                pass_medians(&base.samples, &base.pass_samples),
                pass_medians(&new.samples, &new.pass_samples),
            );
            let base = side(base, &sb, &base_medians, false);
            let new = side(new, &sn, &new_medians, disturbed);
            judge_runs(b, base, new, threshold_pct, rule).0
        }
        (better, _) => Judgement {
            change_pct,
            p_value: None,
            method: Some(
                if better.is_none() {
                    "no direction: not judged"
                } else {
                    "fewer than 2 samples: not judged"
                }
                .into(),
            ),
            verdict: Verdict::NotCompared,
        },
    }
}

/// A metric as one run's side of [`judge_runs`] (`disturbed`: its run's
/// conditions recorded a disturbance).
fn side<'a>(
    m: &'a Metric,
    summary: &'a Summary,
    pass_medians: &'a [f64],
    disturbed: bool,
) -> Side<'a> {
    Side {
        summary,
        samples: &m.samples,
        pass_samples: &m.pass_samples,
        pass_medians,
        disturbed,
    }
}

/// Each later run's conditions against the base's
/// (`lever_conditions::compare`), one per run after the first.
pub fn conditions(runs: &[Run], force: bool) -> Vec<lever_conditions::Comparison> {
    let base = runs.first().and_then(|r| r.conditions.as_ref());
    runs.iter()
        .skip(1)
        .map(|r| lever_conditions::compare(base, r.conditions.as_ref(), force))
        .collect()
}

/// How the runs after the first are judged against it (`lever report
/// render`'s options).
#[derive(Debug, Clone, Copy, Default)]
pub struct Judging<'a> {
    /// Judge changes even against a run taken under load or throttling
    /// (`--force`).
    pub force: bool,
    /// Other runs of the base's build on the same machine (`--base-rerun
    /// RUN.json`), as `lever bench compare --base-rerun` takes them: each
    /// run's value of a metric is one value, and a significant change to
    /// where one more run of the base's build is expected (the 95 %
    /// prediction interval, [`Reruns`]) is [`Verdict::WithinReruns`]. A
    /// rerun whose conditions were not recorded, or record a disturbance,
    /// is left out ([`rerun_left_out`]).
    pub base_reruns: &'a [Run],
}

/// Runs compared and judged ([`judged`]).
#[derive(Debug, Clone)]
pub struct Judged {
    /// Every metric across the runs.
    pub rows: Vec<Row>,
    /// Each later run's conditions against the base's.
    pub conditions: Vec<lever_conditions::Comparison>,
    /// The base's reruns that count.
    pub base_reruns: usize,
    /// Why each other rerun was left out (`base rerun 2 left out of the
    /// spread: …`).
    pub reruns_left_out: Vec<String>,
    /// Per later run, the caches its `lat_mem_rd` sweep and the base's
    /// reached differently (`lever_bench::compare::cache_reach`): the
    /// sizes between are not judged unless forced.
    pub cache_reach: Vec<Vec<CacheReach>>,
    /// Per later run, why its and the base's `lat_fs-*-create` depend on
    /// what ran before them (`lever_bench::compare::file_history`): not
    /// judged unless forced.
    pub file_history: Vec<Option<String>>,
}

/// The field `key` of a run's bench section's detail, if it kept one.
fn bench_detail<'a>(run: &'a Run, key: &str) -> Option<&'a serde_json::Value> {
    run.section("bench").and_then(|s| s.detail.get(key))
}

/// The `lat_mem_rd` plateaus a run's bench section kept (none for runs
/// collected before they were kept, or without a sweep), or why they do
/// not read as plateaus (the field and serde's reason).
pub fn bench_plateaus(run: &Run) -> Result<Vec<lever_bench::memory::Plateau>, String> {
    match bench_detail(run, "plateaus") {
        None => Ok(Vec::new()),
        Some(p) => serde_json::from_str(&p.to_string()).map_err(|e| {
            format!("the bench section's detail.plateaus is not a list of lat_mem_rd plateaus: {e}")
        }),
    }
}

/// [`bench_plateaus`], none for a run whose plateaus do not read (a run
/// read by [`crate::read_run`] has been checked already).
fn plateaus(run: &Run) -> Vec<lever_bench::memory::Plateau> {
    bench_plateaus(run).unwrap_or_default()
}

/// The file system a run's file tests ran on, as its bench section kept
/// it (none for runs collected before it was kept), or why it does not
/// read.
pub fn bench_file_system(run: &Run) -> Result<Option<lever_measure::mounts::FileSystem>, String> {
    match bench_detail(run, "file_system") {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(f) => serde_json::from_str(&f.to_string()).map(Some).map_err(|e| {
            format!("the bench section's detail.file_system is not a file system: {e}")
        }),
    }
}

/// What a comparison reads out of a run's bench section's free-form
/// detail reads: the plateaus and the file system, or why not (the
/// field and serde's reason).
pub fn check_bench_detail(run: &Run) -> Result<(), String> {
    bench_plateaus(run)?;
    bench_file_system(run)?;
    Ok(())
}

/// [`compare`], then the base's reruns and the conditions: a significant
/// change within what the base's reruns give is not called one
/// ([`Judging::base_reruns`]); against a run whose conditions (or the
/// base's) were disturbed — load, throttling — no change is called
/// significant ([`Verdict::NotJudged`]) unless `force`. Where both runs'
/// conditions were recorded and neither was disturbed as far as the
/// metric goes, a change within the larger of their drifts, or within
/// what their passes give as replicates, is not called one, as `lever
/// bench compare` does ([`drift_rule`], [`DriftRule::Larger`]).
pub fn judged(runs: &[Run], threshold_pct: f64, judging: Judging<'_>) -> Judged {
    let conditions = conditions(runs, judging.force);
    let base_recorded = runs.first().is_some_and(|r| r.conditions.is_some());
    let rule = |j: usize, test: &str| match (runs.get(j + 1), conditions.get(j)) {
        (Some(run), Some(c)) => drift_rule(base_recorded && run.conditions.is_some(), c, test),
        _ => DriftRule::Steadier,
    };
    let mut rows = compare_with(runs, threshold_pct, &rule);
    let mut reruns_left_out = Vec::new();
    let reruns: Vec<&Run> = (1..)
        .zip(judging.base_reruns)
        .filter(|(i, r)| match rerun_left_out(r.conditions.as_ref()) {
            Some(why) => {
                reruns_left_out.push(format!("base rerun {i} left out of the spread: {why}"));
                false
            }
            None => true,
        })
        .map(|(_, r)| r)
        .collect();
    if !reruns.is_empty() {
        for row in &mut rows {
            within_reruns(row, &reruns);
        }
    }
    let base_plateaus = runs.first().map(plateaus).unwrap_or_default();
    let cache_reach: Vec<Vec<CacheReach>> = runs
        .iter()
        .skip(1)
        .map(|r| cache_reach(&base_plateaus, &plateaus(r)))
        .collect();
    let base_fs = runs
        .first()
        .and_then(|r| bench_file_system(r).ok().flatten());
    // Said only where there is a file-creation rate to withhold.
    let creates = rows.iter().any(|r| creates_files(test_of(&r.name)));
    let file_history: Vec<Option<String>> = runs
        .iter()
        .skip(1)
        .map(|r| {
            file_history(
                base_fs.as_ref(),
                bench_file_system(r).ok().flatten().as_ref(),
            )
            .filter(|_| creates)
        })
        .collect();
    for row in &mut rows {
        let test = test_of(&row.name);
        let probes = lever_bench::speed::probes_for(test);
        for (((j, c), reach), history) in row
            .vs_base
            .iter_mut()
            .zip(&conditions)
            .zip(&cache_reach)
            .zip(&file_history)
        {
            let past_reach = !judging.force && reach.iter().any(|r| r.covers(test));
            let after_deletes = !judging.force && history.is_some() && creates_files(test);
            if let Some(j) = j.as_mut().filter(|j| {
                (past_reach || after_deletes || !c.judges(probes)) && is_significant(j.verdict)
            }) {
                j.verdict = Verdict::NotJudged;
            }
        }
    }
    Judged {
        rows,
        conditions,
        base_reruns: reruns.len(),
        reruns_left_out,
        cache_reach,
        file_history,
    }
}

/// The `lever bench` test a metric is (`bench.lat_mem_rd-…` →
/// `lat_mem_rd-…`), or the metric's own name: what the machine-speed
/// probes it depends on are looked up by
/// ([`lever_bench::speed::probes_for`]).
fn test_of(metric: &str) -> &str {
    metric.strip_prefix("bench.").unwrap_or(metric)
}

/// [`judged`] without reruns: the rows and the conditions.
pub fn compare_judged(
    runs: &[Run],
    threshold_pct: f64,
    force: bool,
) -> (Vec<Row>, Vec<lever_conditions::Comparison>) {
    let j = judged(
        runs,
        threshold_pct,
        Judging {
            force,
            base_reruns: &[],
        },
    );
    (j.rows, j.conditions)
}

/// Fill `row.reruns` from the base's value of the metric and each rerun's,
/// and call a significant change of a later run inside their prediction
/// interval [`Verdict::WithinReruns`] ([`Reruns::judge`]).
fn within_reruns(row: &mut Row, reruns: &[&Run]) {
    let Some(base) = row.values.first().copied().flatten() else {
        return;
    };
    let test = test_of(&row.name);
    let values: Vec<f64> = std::iter::once(base)
        .chain(reruns.iter().filter_map(|run| {
            if !rerun_counts_for(run.conditions.as_ref(), test) {
                return None;
            }
            run.metrics()
                .find(|m| m.name == row.name && m.labels == row.labels)
                .map(|m| m.value)
        }))
        .collect();
    let Some(spread) = Reruns::of(&values) else {
        return;
    };
    for (j, new) in row.vs_base.iter_mut().zip(row.values.iter().skip(1)) {
        if let (Some(j), Some(new)) = (j.as_mut(), new) {
            j.verdict = spread.judge(j.verdict, j.method.as_deref(), *new);
        }
    }
    row.reruns = Some(spread);
}

/// Every metric of every run, in the order first seen; a change within
/// the steadier run's drift between its passes is not called one.
pub fn compare(runs: &[Run], threshold_pct: f64) -> Vec<Row> {
    compare_with(runs, threshold_pct, &|_, _| DriftRule::Steadier)
}

/// [`compare`], the drift of later run `j` (0 for the first after the
/// base) on a test judged by `rule(j, test)`.
fn compare_with(
    runs: &[Run],
    threshold_pct: f64,
    rule: &dyn Fn(usize, &str) -> DriftRule,
) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    let mut index: BTreeMap<(String, BTreeMap<String, String>), usize> = BTreeMap::new();
    for (i, run) in runs.iter().enumerate() {
        for section in &run.sections {
            for m in &section.metrics {
                let key = (m.name.clone(), m.labels.clone());
                let at = *index.entry(key).or_insert_with(|| {
                    rows.push(Row {
                        section: section.name.clone(),
                        name: m.name.clone(),
                        labels: m.labels.clone(),
                        unit: m.unit.clone(),
                        better: m.better,
                        values: vec![None; runs.len()],
                        vs_base: vec![None; runs.len().saturating_sub(1)],
                        reruns: None,
                    });
                    rows.len() - 1
                });
                rows[at].values[i] = Some(m.value);
            }
        }
    }
    // Judge with the metrics themselves (their samples).
    let find = |run: &Run, row: &Row| -> Option<Metric> {
        run.metrics()
            .find(|m| m.name == row.name && m.labels == row.labels)
            .cloned()
    };
    for row in &mut rows {
        let Some(base) = runs.first().and_then(|r| find(r, row)) else {
            continue;
        };
        for (j, run) in runs.iter().enumerate().skip(1) {
            if let Some(new) = find(run, row) {
                let rule = rule(j - 1, test_of(&row.name));
                let disturbed = run.conditions.as_ref().is_some_and(|c| {
                    lever_bench::compare::disturbs(&c.disturbances(), test_of(&row.name))
                });
                row.vs_base[j - 1] =
                    Some(judge_metric(&base, &new, threshold_pct, rule, disturbed));
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Device, Section};

    fn run_with(samples: Vec<f64>, single: f64) -> Run {
        let mut r = Run::new("2026-11-23T14:00:00Z", Device::default());
        let mut s = Section::measured("bench", "test");
        let mut m = Metric::new("bench.lat_syscall-null", "us", samples[samples.len() / 2]);
        m.samples = samples;
        m.better = Some(Better::Lower);
        s.metrics.push(m);
        let mut one = Metric::new("memory.free", "kB", single);
        one.better = Some(Better::Higher);
        s.metrics.push(one);
        r.sections.push(s);
        r
    }

    /// Conditions recorded with nothing readable in them: recorded, and
    /// no disturbance.
    fn recorded_quiet() -> lever_conditions::Conditions {
        use lever_conditions::{Avail, Conditions, Fixed, Snapshot};
        let snap = Snapshot {
            elapsed_s: 0.0,
            load: Avail::Unavailable("not read".into()),
            cpufreq: Avail::Unavailable("not read".into()),
            thermal: Avail::Unavailable("not read".into()),
        };
        Conditions::new(
            Fixed::unknown("t", 2),
            &snap,
            Avail::Unavailable("not read".into()),
            &snap,
        )
    }

    /// A bench metric taken in two passes of 20 samples.
    fn two_passes(samples: Vec<f64>) -> Run {
        let mut r = run_with(samples, 1.0);
        r.sections[0].metrics[0].pass_samples = vec![20, 20];
        r
    }

    #[test]
    fn two_runs_are_judged_as_bench_compare_judges_them() {
        let base_samples =
            || -> Vec<f64> { (0..40).map(|i| 10.0 + f64::from(i % 4) * 0.01).collect() };
        let base = base_samples();
        // Fast and slow alternating in both passes (a load sharing the
        // CPU): a regression by the worse mode.
        let loaded: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 10.0 } else { 20.0 } + f64::from(i) * 0.001)
            .collect();
        // The same values, the first pass slow and the second fast (a slow
        // spell of the machine): the passes' drift, not a load.
        let spell: Vec<f64> = (0..40)
            .map(|i| if i < 20 { 20.0 } else { 10.0 } + f64::from(i) * 0.001)
            .collect();
        let rows = compare(
            &[
                two_passes(base),
                two_passes(loaded),
                two_passes(spell.clone()),
            ],
            THRESHOLD_PCT,
        );
        let bench = rows
            .iter()
            .find(|r| r.name == "bench.lat_syscall-null")
            .unwrap();
        let j = bench.vs_base[0].as_ref().unwrap();
        assert_eq!(
            (j.verdict, j.method.as_deref()),
            (Verdict::Regressed, Some("modes"))
        );
        let j = bench.vs_base[1].as_ref().unwrap();
        assert_ne!(j.method.as_deref(), Some("modes"), "{j:?}");
        // Without recorded conditions the steadier run's drift (the base's,
        // ~0.3 %) is the measure: 50 % is still a regression...
        assert_eq!(j.verdict, Verdict::Regressed, "{j:?}");
        // ...and with both runs recorded quiet, the larger drift is (the
        // spell's own 100 %): within it.
        let quiet = recorded_quiet();
        let mut runs = [two_passes(base_samples()), two_passes(spell.clone())];
        for r in &mut runs {
            r.conditions = Some(quiet.clone());
        }
        let (rows, _) = compare_judged(&runs, THRESHOLD_PCT, false);
        let j = rows[0].vs_base[0].as_ref().unwrap();
        assert_eq!(j.verdict, Verdict::WithinDrift, "{j:?}");
        // The new run recorded loaded before it started (judged only under
        // `--force`): its slow pass is the load's, a regression by the
        // worse mode, as `lever bench compare` calls it.
        let mut loaded = quiet.clone();
        loaded.load_before = lever_conditions::Avail::Value(lever_conditions::Load {
            load_1m: 6.8,
            load_5m: 6.0,
            load_15m: 5.0,
            runnable: 7,
            tasks: 300,
        });
        runs[1].conditions = Some(loaded);
        let (rows, c) = compare_judged(&runs, THRESHOLD_PCT, true);
        assert!(!c[0].disturbed.is_empty(), "{c:?}");
        let j = rows[0].vs_base[0].as_ref().unwrap();
        assert_eq!(
            (j.verdict, j.method.as_deref()),
            (Verdict::Regressed, Some("modes")),
            "{j:?}"
        );
        // Stored without the passes (a run of an older Lever), the spell
        // is judged by its worse mode as before.
        let rows = compare(
            &[two_passes(vec![10.0; 40]), run_with(spell, 1.0)],
            THRESHOLD_PCT,
        );
        let j = rows[0].vs_base[0].as_ref().unwrap();
        assert_eq!(
            (j.verdict, j.method.as_deref()),
            (Verdict::Regressed, Some("modes"))
        );
    }

    /// `--base-rerun`: a change the base's reruns also show is not called
    /// one, a change past them still is; a rerun that cannot be vouched
    /// for is left out and said so.
    #[test]
    fn the_bases_reruns_give_the_spread_a_change_must_leave() {
        let quiet = recorded_quiet();
        let around = |center: f64| -> Run {
            let samples = (0..40).map(|i| center + f64::from(i % 4) * 0.01).collect();
            let mut r = two_passes(samples);
            r.sections[0].metrics[0].value = center + 0.015;
            r.conditions = Some(quiet.clone());
            r
        };
        // The base at 10, its reruns at 11.5 and 12.5; new runs at 12
        // (+20 %, what a rerun gives) and at 20 (past any rerun).
        let runs = [around(10.0), around(12.0), around(20.0)];
        let reruns = [around(11.5), around(12.5), {
            let mut r = around(12.0);
            r.conditions = None;
            r
        }];
        let plain = judged(&runs, THRESHOLD_PCT, Judging::default());
        let verdicts = |j: &Judged| -> Vec<Verdict> {
            j.rows[0]
                .vs_base
                .iter()
                .map(|v| v.as_ref().unwrap().verdict)
                .collect()
        };
        assert_eq!(
            verdicts(&plain),
            [Verdict::Regressed, Verdict::Regressed],
            "{:?}",
            plain.rows[0]
        );
        assert!(plain.rows[0].reruns.is_none());
        let with = judged(
            &runs,
            THRESHOLD_PCT,
            Judging {
                force: false,
                base_reruns: &reruns,
            },
        );
        assert_eq!(
            verdicts(&with),
            [Verdict::WithinReruns, Verdict::Regressed],
            "{:?}",
            with.rows[0]
        );
        let spread = with.rows[0].reruns.as_ref().unwrap();
        assert_eq!(spread.runs, 3);
        assert!(
            spread.expects(12.015) && !spread.expects(20.015),
            "{spread:?}"
        );
        assert_eq!(with.base_reruns, 2);
        assert_eq!(
            with.reruns_left_out,
            ["base rerun 3 left out of the spread: its conditions were not recorded"]
        );
        // A metric of one value is not judged, reruns or not.
        let free = with.rows.iter().find(|r| r.name == "memory.free").unwrap();
        assert_eq!(
            free.vs_base[0].as_ref().unwrap().verdict,
            Verdict::NotCompared
        );
    }

    #[test]
    fn a_planted_shift_is_significant_and_noise_is_not() {
        let base: Vec<f64> = (0..12).map(|i| 1.0 + (i % 4) as f64 * 0.01).collect();
        let slower: Vec<f64> = base.iter().map(|v| v * 1.5).collect();
        let same: Vec<f64> = base.iter().rev().copied().collect();
        let rows = compare(
            &[
                run_with(base, 100.0),
                run_with(slower, 50.0),
                run_with(same, 100.0),
            ],
            THRESHOLD_PCT,
        );
        let bench = rows
            .iter()
            .find(|r| r.name == "bench.lat_syscall-null")
            .unwrap();
        assert_eq!(
            bench.vs_base[0].as_ref().unwrap().verdict,
            Verdict::Regressed
        );
        assert_eq!(
            bench.vs_base[1].as_ref().unwrap().verdict,
            Verdict::Unchanged
        );
        assert!(bench.significant());
        // A single value halves: its change shows, but it is not judged.
        let free = rows.iter().find(|r| r.name == "memory.free").unwrap();
        let j = free.vs_base[0].as_ref().unwrap();
        assert_eq!(j.verdict, Verdict::NotCompared);
        assert_eq!(j.change_pct, Some(-50.0));
        assert!(!free.significant());
    }

    /// `report render A B` withholds the `lat_mem_rd` sizes between two
    /// runs' cache ends as `bench compare` does: the bench section keeps
    /// the sweep's plateaus.
    #[test]
    fn sizes_where_the_caches_reached_differently_are_not_judged() {
        let name = |kb| format!("bench.{}", lever_bench::memory::lat_mem_rd_name(kb));
        let run = |l3_to: u64, dram_from: u64, slow: f64| {
            let mut r = Run::new("2026-11-23T14:00:00Z", Device::default());
            let mut s = Section::measured("bench", "test");
            for (kb, ns) in [(8192u64, 13.0), (24576, 30.0)] {
                let ns = if kb == 24576 { ns * slow } else { ns };
                let mut m = Metric::new(&name(kb), "ns", ns);
                m.samples = (0..12).map(|i| ns + 0.01 * f64::from(i)).collect();
                m.better = Some(Better::Lower);
                s.metrics.push(m);
            }
            let plateau = |level: &str, from_kb: u64, to_kb: u64| {
                serde_json::json!({"level": level, "latency_ns": 1.0, "from_kb": from_kb,
                    "to_kb": to_kb, "cache_kb": null, "matches_cache": null})
            };
            s.detail = serde_json::json!({"plateaus": [
                plateau("L3", 1536, l3_to), plateau("DRAM", dram_from, 131072)]});
            r.sections.push(s);
            r
        };
        let runs = [run(16384, 49152, 1.0), run(12288, 24576, 4.6)];
        let j = judged(&runs, THRESHOLD_PCT, Judging::default());
        assert_eq!(j.cache_reach[0].len(), 1, "{:?}", j.cache_reach);
        let verdict = |j: &Judged, kb| {
            j.rows.iter().find(|r| r.name == name(kb)).unwrap().vs_base[0]
                .as_ref()
                .unwrap()
                .verdict
        };
        assert_eq!(verdict(&j, 24576), Verdict::NotJudged);
        assert_eq!(verdict(&j, 8192), Verdict::Unchanged);
        let forced = judged(
            &runs,
            THRESHOLD_PCT,
            Judging {
                force: true,
                ..Judging::default()
            },
        );
        assert_eq!(verdict(&forced, 24576), Verdict::Regressed);
        // The same runs without plateaus (collected before they were
        // kept): judged as before.
        let mut bare = runs.clone();
        for r in &mut bare {
            r.sections[0].detail = serde_json::Value::Null;
        }
        let j = judged(&bare, THRESHOLD_PCT, Judging::default());
        assert_eq!(verdict(&j, 24576), Verdict::Regressed);

        // Plateaus that do not read are refused when the run is read,
        // naming the field, rather than comparing as if there were none.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        let mut broken = runs[1].clone();
        broken.sections[0].detail["plateaus"][0]["to_kb"] = serde_json::json!("12 MiB");
        std::fs::write(&path, serde_json::to_string(&broken).unwrap()).unwrap();
        let err = crate::read_run(&path).unwrap_err().to_string();
        assert!(
            err.contains("run.json: the bench section's detail.plateaus is not a list of lat_mem_rd plateaus: invalid type: string \"12 MiB\""),
            "{err}"
        );
        std::fs::write(&path, serde_json::to_string(&runs[1]).unwrap()).unwrap();
        assert_eq!(plateaus(&crate::read_run(&path).unwrap()).len(), 2);
    }

    /// `report render A B` withholds `lat_fs-*-create` as `bench compare`
    /// does when a run's file tests ran on ext4 without a journal (the
    /// bench section keeps the file system), and refuses one that does not
    /// read.
    #[test]
    fn creates_on_ext4_without_a_journal_are_not_judged() {
        let run = |journal: bool, rate: f64| {
            let mut r = Run::new("2026-11-28T01:00:00Z", Device::default());
            let mut s = Section::measured("bench", "test");
            let mut m = Metric::new("bench.lat_fs-4k-create", "files/s", rate);
            m.samples = (0..12).map(|i| rate + f64::from(i)).collect();
            m.better = Some(Better::Higher);
            s.metrics.push(m);
            s.detail = serde_json::json!({"file_system": {"dir": "/tmp", "mount_point": "/",
                "fs_type": "ext4", "source": "/dev/vda", "options": "rw", "journal": journal}});
            r.sections.push(s);
            r
        };
        let verdict = |j: &Judged| j.rows[0].vs_base[0].as_ref().unwrap().verdict;
        let runs = [run(false, 2000.0), run(false, 1000.0)];
        let j = judged(&runs, THRESHOLD_PCT, Judging::default());
        assert_eq!(verdict(&j), Verdict::NotJudged);
        assert!(j.file_history[0]
            .as_deref()
            .unwrap()
            .starts_with("the file tests ran on ext4 without a journal (base run: /tmp"));
        let forced = Judging {
            force: true,
            ..Judging::default()
        };
        assert_eq!(
            verdict(&judged(&runs, THRESHOLD_PCT, forced)),
            Verdict::Regressed
        );
        let journaled = [run(true, 2000.0), run(true, 1000.0)];
        let j = judged(&journaled, THRESHOLD_PCT, Judging::default());
        assert_eq!(verdict(&j), Verdict::Regressed);
        assert_eq!(j.file_history, [None]);
        // Without a file-creation rate there is nothing to say.
        let mut deletes = runs.clone();
        for r in &mut deletes {
            r.sections[0].metrics[0].name = "bench.lat_fs-4k-delete".into();
        }
        let j = judged(&deletes, THRESHOLD_PCT, Judging::default());
        assert_eq!(j.file_history, [None]);

        let mut broken = runs[0].clone();
        broken.sections[0].detail["file_system"]["journal"] = serde_json::json!("no");
        assert!(check_bench_detail(&broken)
            .unwrap_err()
            .starts_with("the bench section's detail.file_system is not a file system: "));
    }
}
