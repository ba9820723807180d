//! Two runs side by side (`lever bench compare BASE NEW`): per test the
//! change of the median, whether it is an improvement or a regression
//! (each test knows which way is better), and whether it is significant —
//! Mann-Whitney U on the two sets of samples (p < 0.05), or, with too few
//! samples for that, confidence intervals that do not overlap. A
//! regression counts when it is significant *and* larger than the
//! threshold, so noise never fails a CI job and a tiny real change does
//! not either.

use crate::catalog::Better;
use crate::stats::{mann_whitney, Summary};
use crate::{BenchError, BenchReport, TestResult};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Significance level of the test.
pub const ALPHA: f64 = 0.05;

/// The regression threshold `lever bench compare` and `lever report
/// render` use unless told, percent. Not 5: between two quiet runs on a
/// shared 2-vCPU VM many tests move 5-8 % with tight intervals on both
/// sides (what differs is the run, not the samples), so 5 % failed quiet
/// runs; a board on a quiet bench can ask for `--threshold 5`.
pub const DEFAULT_THRESHOLD_PCT: f64 = 10.0;

/// What happened to one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Significantly better.
    Improved,
    /// Significantly worse, but within the threshold.
    WorseWithinThreshold,
    /// Significantly worse by more than the threshold.
    Regressed,
    /// No significant difference.
    Unchanged,
    /// Missing or skipped on one side.
    NotCompared,
    /// The test found a significant change, but it is not called one:
    /// either run was taken under load or throttling
    /// ([`Comparison::conditions`]), and `--force` was not given.
    NotJudged,
    /// The test found a significant change, but it is no larger than the
    /// drift the runs show between their own passes over the suite
    /// ([`Row::drift_pct`]): two runs of the same build differ that much.
    WithinDrift,
    /// The test found a significant change, but the new median lies where
    /// one more run of the base's build is expected (the 95 % prediction
    /// interval of the base's and its reruns' medians, [`Row::reruns`]):
    /// reruns of the same build on this machine differ that much.
    WithinReruns,
}

/// What the base's reruns give for one test (`lever bench compare BASE NEW
/// --base-rerun FILE…`): each run's median is one value, so the spread is
/// what a whole rerun moves the test by, not what its samples scatter by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reruns {
    /// Runs whose medians count: the base and each rerun that has the test.
    pub runs: usize,
    /// Lowest of their medians.
    pub low: f64,
    /// Highest of their medians.
    pub high: f64,
    /// The 95 % prediction interval of one more run's median
    /// ([`crate::stats::prediction_interval`]), lower end.
    pub expected_low: f64,
    /// Upper end of that interval.
    pub expected_high: f64,
}

impl Reruns {
    /// The spread of one test's `medians`, the base run's and each of its
    /// reruns'; `None` with fewer than two (no interval).
    pub fn of(medians: &[f64]) -> Option<Reruns> {
        let (expected_low, expected_high) = crate::stats::prediction_interval(medians)?;
        Some(Reruns {
            runs: medians.len(),
            low: medians.iter().copied().fold(f64::INFINITY, f64::min),
            high: medians.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            expected_low,
            expected_high,
        })
    }

    /// Whether `new` lies where one more run of the base's build is
    /// expected.
    pub fn expects(&self, new: f64) -> bool {
        (self.expected_low..=self.expected_high).contains(&new)
    }

    /// The verdict a change judged `verdict` (by `method`) to `new` gets
    /// against this spread: [`Verdict::WithinReruns`] when it is a change
    /// drift or reruns may excuse and `new` is where one more run is
    /// expected, else `verdict`. A worse mode (method `modes`, a load's
    /// signature inside the new run) is not excused, as drift does not
    /// excuse it.
    pub fn judge(&self, verdict: Verdict, method: Option<&str>, new: f64) -> Verdict {
        if excusable(verdict, method) && self.expects(new) {
            Verdict::WithinReruns
        } else {
            verdict
        }
    }
}

/// Why a run offered as a rerun of the base's build cannot widen the
/// spread, `None` when it can: its conditions were not recorded (it
/// cannot be vouched for), or they record a load or throttling (it would
/// widen the spread by what that did). A change of the machine's speed
/// during it leaves it out only for the tests that depend on the probe
/// that saw it ([`rerun_counts_for`]).
pub fn rerun_left_out(conditions: Option<&lever_conditions::Conditions>) -> Option<String> {
    match conditions {
        None => Some("its conditions were not recorded".to_string()),
        Some(run) => run
            .disturbances()
            .into_iter()
            .find(|d| d.probe.is_none())
            .map(|d| d.text),
    }
}

/// Whether a rerun that [`rerun_left_out`] kept counts for `test`: no
/// probe the test depends on saw the machine's speed change during it.
pub fn rerun_counts_for(conditions: Option<&lever_conditions::Conditions>, test: &str) -> bool {
    conditions.is_some_and(|c| !disturbs(&c.disturbances(), test))
}

/// One test in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Test name.
    pub name: String,
    /// Unit.
    pub unit: String,
    /// Which way is better.
    pub better: Better,
    /// Median of the base run.
    pub base: Option<f64>,
    /// Median of the new run.
    pub new: Option<f64>,
    /// (new - base) / base, percent.
    pub change_pct: Option<f64>,
    /// The runs' drift: how far apart a run's own passes over the suite
    /// put this test's median (highest pass median less lowest, percent of
    /// the test's median), the smaller of the two runs' or, when both were
    /// quiet, the larger ([`DriftRule`]). `None` for runs of one pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_pct: Option<f64>,
    /// The spread of the base's reruns for this test, when reruns were
    /// given ([`compare_reruns`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reruns: Option<Reruns>,
    /// Mann-Whitney two-sided p-value, when both sides have samples.
    pub p_value: Option<f64>,
    /// How significance was decided: `mann-whitney` or `intervals`.
    pub method: Option<String>,
    /// The outcome.
    pub verdict: Verdict,
}

/// The comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Regression threshold, percent.
    pub threshold_pct: f64,
    /// Every test of either run.
    pub rows: Vec<Row>,
    /// Tests that regressed past the threshold.
    pub regressions: Vec<String>,
    /// The two runs' conditions: what differs, and whether either was
    /// disturbed (then changes are [`Verdict::NotJudged`] unless forced).
    #[serde(default)]
    pub conditions: Option<lever_conditions::Comparison>,
    /// Significant changes left unjudged because a run was disturbed.
    #[serde(default)]
    pub withheld: usize,
    /// Of those, the tests that would have been regressions: the check
    /// could not be made for them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withheld_regressions: Vec<String>,
    /// Reruns of the base ([`compare_reruns`]) not used for the spread,
    /// each with why: taken under load or throttling (one during which a
    /// probe's speed changed is left out only for the tests that depend
    /// on it, [`rerun_counts_for`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reruns_left_out: Vec<String>,
    /// The caches the two runs' `lat_mem_rd` sweeps reached differently
    /// ([`cache_reach`]): the sizes between are not judged unless forced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_reach: Vec<CacheReach>,
    /// Why `lat_fs-*-create` depends on what ran before it in either run
    /// ([`file_history`]): it is not judged unless forced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_history: Option<String>,
}

impl Comparison {
    /// One line for the tests that would have regressed but were withheld
    /// ([`Comparison::withheld_regressions`]): because a probe they depend
    /// on changed speed, or because they lie where the caches reached
    /// differently. `None` when none was withheld.
    pub fn withheld_reason(&self) -> Option<String> {
        let (by_history, rest): (Vec<String>, Vec<String>) = self
            .withheld_regressions
            .iter()
            .cloned()
            .partition(|t| self.file_history.is_some() && creates_files(t));
        let (by_reach, by_speed): (Vec<String>, Vec<String>) = rest
            .into_iter()
            .partition(|t| self.cache_reach.iter().any(|c| c.covers(t)));
        let depends_on: Vec<&str> = by_speed
            .iter()
            .flat_map(|t| crate::speed::probes_for(t).iter().copied())
            .collect();
        let speed = self
            .conditions
            .as_ref()
            .and_then(|c| c.speed_reason(&by_speed, &depends_on));
        let reach = (!by_reach.is_empty()).then(|| {
            let tests = match &by_reach[..] {
                [one] => format!("{one} got worse by more than the threshold, but lies"),
                many => format!(
                    "{} tests got worse by more than the threshold ({}), but lie",
                    many.len(),
                    many.join(", ")
                ),
            };
            let reach: Vec<&str> = self.cache_reach.iter().map(|c| c.text.as_str()).collect();
            format!(
                "not judged: {tests} where the two runs' caches reached differently ({}); rerun, or pass --force to judge anyway",
                reach.join("; ")
            )
        });
        let history = self.file_history.as_ref().filter(|_| !by_history.is_empty()).map(|why| {
            format!(
                "not judged: {} got worse by more than the threshold, but {why}; rerun with --dir on a file system with a journal or a tmpfs, or pass --force to judge anyway",
                by_history.join(", ")
            )
        });
        let reasons: Vec<String> = [speed, reach, history].into_iter().flatten().collect();
        (!reasons.is_empty()).then(|| reasons.join("; "))
    }
}

/// Whether `test` is a file-creation rate (`lat_fs-*-create`).
pub fn creates_files(test: &str) -> bool {
    test.starts_with("lat_fs-") && test.ends_with("-create")
}

/// Why the file-creation rates of two runs whose file tests ran on `base`
/// and `new` depend on what ran before them: either is an ext4 without a
/// journal, where a create skips the inodes deleted there in the last
/// minute, six while their inode block is unwritten
/// (`lever_measure::mounts`), so a run's rates follow the deletes of its
/// own earlier pass and of whatever ran before it (on this VM both passes
/// of a run at 2,070 and 1,080 files/s, the next run's at 3,200 and
/// 1,360). `None` when neither is, or neither was recorded.
pub fn file_history(
    base: Option<&lever_measure::mounts::FileSystem>,
    new: Option<&lever_measure::mounts::FileSystem>,
) -> Option<String> {
    let sides: Vec<String> = [("base run", base), ("new run", new)]
        .into_iter()
        .filter_map(|(side, f)| {
            let f = f.filter(|f| f.journal == Some(false))?;
            Some(format!("{side}: {}, {}", f.dir, f.describe()))
        })
        .collect();
    (!sides.is_empty()).then(|| {
        format!(
            "the file tests ran on ext4 without a journal ({}), where a create skips the inodes deleted there in the minutes before, so lat_fs-*-create depends on what ran before it",
            sides.join("; ")
        )
    })
}

/// The warning at the top of a comparison for [`file_history`]'s reason.
pub fn file_history_warning(why: &str, forced: bool) -> String {
    format!(
        "WARNING: {why}{}",
        if forced {
            " (judged anyway: --force)"
        } else {
            "; not judged (--force judges)"
        }
    )
}

/// A cache whose end two runs' `lat_mem_rd` sweeps found at different
/// sizes ([`crate::memory::Plateau`]): on a shared host the last-level
/// cache a guest gets changes for minutes at a time (this VM's L3 plateau
/// ended at 8, 12 and 16 MiB in four quiet runs of one build), and a size
/// between the two ends is in that cache in one run and past it in the
/// other, 40–360 % apart, with both runs' passes agreeing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheReach {
    /// The cache: `L1`, `L2`, `L3`.
    pub level: String,
    /// The largest size on its plateau in the base run, KiB.
    pub base_to_kb: u64,
    /// The same in the new run, KiB.
    pub new_to_kb: u64,
    /// The sizes in one run's cache and past it in the other: above this,
    /// KiB (the smaller end) …
    pub above_kb: u64,
    /// … and below this, KiB (where both runs are past it: the later
    /// start of the next plateau).
    pub below_kb: u64,
    /// What it says, for people.
    pub text: String,
}

impl CacheReach {
    /// The warning a comparison puts at its top; `forced`: `--force` was
    /// given, so the sizes are judged anyway.
    pub fn warning(&self, forced: bool) -> String {
        format!(
            "WARNING: the caches reached differently: {}{}",
            self.text,
            if forced {
                " (judged anyway: --force)"
            } else {
                "; not judged there (--force judges)"
            }
        )
    }

    /// Whether `test` is a `lat_mem_rd` size between the two ends.
    pub fn covers(&self, test: &str) -> bool {
        crate::memory::lat_mem_rd_size_kb(test)
            .is_some_and(|kb| kb > self.above_kb && kb < self.below_kb)
    }
}

/// The caches `base`'s and `new`'s plateaus end at different sizes (a
/// level in both, not DRAM). The sizes judged unreliable run from the
/// smaller end (exclusive) to the later start of the next plateau
/// (exclusive), or to twice the larger end when a run found none.
pub fn cache_reach(
    base: &[crate::memory::Plateau],
    new: &[crate::memory::Plateau],
) -> Vec<CacheReach> {
    let next_from = |ps: &[crate::memory::Plateau], i: usize| ps.get(i + 1).map(|p| p.from_kb);
    let kib = |kb: u64| {
        if kb >= 1024 && kb % 1024 == 0 {
            format!("{} MiB", kb / 1024)
        } else {
            format!("{kb} KiB")
        }
    };
    base.iter()
        .enumerate()
        .filter(|(_, b)| b.level != "DRAM")
        .filter_map(|(i, b)| {
            let j = new.iter().position(|n| n.level == b.level)?;
            let n = &new[j];
            if b.to_kb == n.to_kb {
                return None;
            }
            let above_kb = b.to_kb.min(n.to_kb);
            let below_kb = match (next_from(base, i), next_from(new, j)) {
                (Some(x), Some(y)) => x.max(y),
                (x, y) => x
                    .or(y)
                    .unwrap_or(0)
                    .max(b.to_kb.max(n.to_kb).saturating_mul(2)),
            };
            Some(CacheReach {
                level: b.level.clone(),
                base_to_kb: b.to_kb,
                new_to_kb: n.to_kb,
                above_kb,
                below_kb,
                text: format!(
                    "{} to {} in the base run, to {} in the new, so lat_mem_rd above {} and below {} is in that cache in one run and past it in the other",
                    b.level,
                    kib(b.to_kb),
                    kib(n.to_kb),
                    kib(above_kb),
                    kib(below_kb)
                ),
            })
        })
        .collect()
}

/// Read a `--json` report.
pub fn read_report(path: &Path) -> Result<BenchReport, BenchError> {
    let text = std::fs::read_to_string(path).map_err(|source| BenchError::ReportFile {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| BenchError::Report {
        path: path.to_path_buf(),
        message: format!("not a `lever bench --json` report: {e}"),
    })
}

/// Which run's drift excuses a change ([`Row::drift_pct`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriftRule {
    /// The steadier run's (the smaller): used unless both runs are known
    /// to be quiet, so that a run whose load came and went does not
    /// excuse a change the other's drift would not.
    Steadier,
    /// The larger of the two: both runs were quiet, so either run's drift
    /// is what a rerun of the same build moves the test by; and no less
    /// than the margin the passes of both runs give as replicates
    /// ([`pass_margin_pct`]).
    Larger,
}

/// Compare `new` against `base`, a change within the steadier run's drift
/// not called one.
pub fn compare(base: &BenchReport, new: &BenchReport, threshold_pct: f64) -> Comparison {
    compare_with(base, new, threshold_pct, &|_| DriftRule::Steadier)
}

/// [`compare`] with the drift that excuses a change chosen by `rule` for
/// each test (by name).
pub fn compare_with(
    base: &BenchReport,
    new: &BenchReport,
    threshold_pct: f64,
    rule: &dyn Fn(&str) -> DriftRule,
) -> Comparison {
    let disturbances = new
        .conditions
        .run
        .as_ref()
        .map(lever_conditions::Conditions::disturbances)
        .unwrap_or_default();
    let judging = Judging {
        threshold_pct,
        rule,
        disturbances: &disturbances,
    };
    let mut rows: Vec<Row> = base
        .tests
        .iter()
        .map(|b| {
            row(
                Some(b),
                new.tests.iter().find(|n| n.name == b.name),
                judging,
            )
        })
        .collect();
    rows.extend(
        new.tests
            .iter()
            .filter(|n| !base.tests.iter().any(|b| b.name == n.name))
            .map(|n| row(None, Some(n), judging)),
    );
    let regressions = regressions(&rows);
    Comparison {
        threshold_pct,
        rows,
        regressions,
        conditions: None,
        withheld: 0,
        withheld_regressions: Vec::new(),
        reruns_left_out: Vec::new(),
        cache_reach: Vec::new(),
        file_history: None,
    }
}

/// [`compare`], then the runs' conditions: when either run was taken
/// under load or throttling (`lever_conditions::compare`), every change
/// the test calls significant becomes [`Verdict::NotJudged`] and no
/// regression is reported, unless `force`. When both runs' conditions
/// were recorded and neither was disturbed as far as a test goes, a
/// change within the larger of their drifts, or within what their passes
/// give as replicates, is not called one ([`drift_rule`],
/// [`DriftRule::Larger`]); otherwise the steadier run's drift is the
/// measure, as in [`compare`].
pub fn compare_runs(
    base: &BenchReport,
    new: &BenchReport,
    threshold_pct: f64,
    force: bool,
) -> Comparison {
    compare_reruns(base, &[], new, threshold_pct, force)
}

/// [`compare_runs`] with the base given with its reruns: other runs of the
/// base's build on the same machine (`--base-rerun FILE…`), which bring
/// the variance *between* runs that one run's samples and passes cannot
/// show. Each test's medians over the base and its reruns (run medians as
/// the unit, so a run's hundreds of samples do not outweigh the others)
/// give the 95 % prediction interval of one more run ([`Reruns`]); a
/// significant change whose new median lies inside it is
/// [`Verdict::WithinReruns`]. The base run's samples still decide
/// significance and the change. A rerun taken under load or throttling,
/// or during which the machine's own speed changed, is left out of the
/// spread ([`Comparison::reruns_left_out`]).
pub fn compare_reruns(
    base: &BenchReport,
    reruns: &[BenchReport],
    new: &BenchReport,
    threshold_pct: f64,
    force: bool,
) -> Comparison {
    let mut conditions = lever_conditions::compare(
        base.conditions.run.as_ref(),
        new.conditions.run.as_ref(),
        force,
    );
    // The file tests measure the file system they ran on.
    if let (Some(b), Some(n)) = (&base.conditions.scratch, &new.conditions.scratch) {
        if b.describe() != n.describe() {
            conditions.differences.push(lever_conditions::Difference {
                what: "file tests' file system".into(),
                base: b.describe(),
                new: n.describe(),
            });
        }
    }
    // A rerun taken under load, or whose machine changed speed during it,
    // would widen the spread by what the load did: it is left out, and
    // said so. One without recorded conditions cannot be vouched for.
    let mut left_out = Vec::new();
    let quiet_reruns: Vec<&BenchReport> = (1..)
        .zip(reruns)
        .filter_map(|(i, b)| match rerun_left_out(b.conditions.run.as_ref()) {
            Some(why) => {
                left_out.push(format!("base rerun {i} left out of the spread: {why}"));
                None
            }
            None => Some(b),
        })
        .collect();
    let reruns = quiet_reruns.as_slice();
    let both_recorded = base.conditions.run.is_some() && new.conditions.run.is_some();
    let mut c = compare_with(base, new, threshold_pct, &|test| {
        drift_rule(both_recorded, &conditions, test)
    });
    if !reruns.is_empty() {
        for r in &mut c.rows {
            within_reruns(r, base, reruns);
        }
        c.regressions = regressions(&c.rows);
    }
    let reach = cache_reach(&base.plateaus, &new.plateaus);
    // Said only where there is a file-creation rate to withhold.
    let history = file_history(
        base.conditions.scratch.as_ref(),
        new.conditions.scratch.as_ref(),
    )
    .filter(|_| c.rows.iter().any(|r| creates_files(&r.name)));
    for r in &mut c.rows {
        let past_reach = !force && reach.iter().any(|c| c.covers(&r.name));
        let after_deletes = !force && history.is_some() && creates_files(&r.name);
        if (past_reach || after_deletes || !conditions.judges(crate::speed::probes_for(&r.name)))
            && matches!(
                r.verdict,
                Verdict::Improved | Verdict::Regressed | Verdict::WorseWithinThreshold
            )
        {
            if r.verdict == Verdict::Regressed {
                c.withheld_regressions.push(r.name.clone());
            }
            r.verdict = Verdict::NotJudged;
            c.withheld += 1;
        }
    }
    c.regressions = regressions(&c.rows);
    c.conditions = Some(conditions);
    c.reruns_left_out = left_out;
    c.cache_reach = reach;
    c.file_history = history;
    c
}

/// The drift rule for `test` between two runs: [`DriftRule::Larger`]
/// when both runs' conditions were recorded and both were quiet as far as
/// the test goes (no load or throttling, and no change of the speed of a
/// probe it depends on: `lever_conditions::Comparison::quiet_for`), else
/// [`DriftRule::Steadier`]. A memory latency probe that moved in one run
/// does not make the syscall tests of the same runs unquiet.
pub fn drift_rule(
    both_recorded: bool,
    conditions: &lever_conditions::Comparison,
    test: &str,
) -> DriftRule {
    if both_recorded && conditions.quiet_for(crate::speed::probes_for(test)) {
        DriftRule::Larger
    } else {
        DriftRule::Steadier
    }
}

/// Fill `r.reruns` from the base's and its reruns' medians of the test,
/// and call a significant change inside their prediction interval
/// [`Verdict::WithinReruns`] ([`Reruns::judge`]).
fn within_reruns(r: &mut Row, base: &BenchReport, reruns: &[&BenchReport]) {
    let counted = reruns
        .iter()
        .copied()
        .filter(|run| rerun_counts_for(run.conditions.run.as_ref(), &r.name));
    let medians: Vec<f64> = std::iter::once(base)
        .chain(counted)
        .filter_map(|run| run.tests.iter().find(|t| t.name == r.name))
        .filter(|t| t.skipped.is_none())
        .filter_map(|t| t.summary.as_ref().map(|s| s.median))
        .collect();
    let Some(spread) = Reruns::of(&medians) else {
        return;
    };
    if let Some(new) = r.new {
        r.verdict = spread.judge(r.verdict, r.method.as_deref(), new);
    }
    r.reruns = Some(spread);
}

/// How [`row`] judges: the threshold, the drift rule, and what the new
/// run's conditions recorded ([`Side::disturbed`]).
#[derive(Clone, Copy)]
struct Judging<'a> {
    threshold_pct: f64,
    rule: &'a dyn Fn(&str) -> DriftRule,
    disturbances: &'a [lever_conditions::Disturbance],
}

/// Whether `disturbances` of a run disturb `test`: load or throttling, or
/// a change of the speed of a probe the test depends on
/// ([`crate::speed::probes_for`]).
pub fn disturbs(disturbances: &[lever_conditions::Disturbance], test: &str) -> bool {
    disturbances.iter().any(|d| {
        d.probe
            .as_deref()
            .is_none_or(|p| crate::speed::probes_for(test).contains(&p))
    })
}

fn row(base: Option<&TestResult>, new: Option<&TestResult>, judging: Judging) -> Row {
    let any = base.or(new).expect("one side exists");
    let sb = base.and_then(|t| t.summary.as_ref());
    let sn = new.and_then(|t| t.summary.as_ref());
    let mut r = Row {
        name: any.name.clone(),
        unit: any.unit.clone(),
        better: any.better,
        base: sb.map(|s| s.median),
        new: sn.map(|s| s.median),
        change_pct: None,
        drift_pct: None,
        reruns: None,
        p_value: None,
        method: None,
        verdict: Verdict::NotCompared,
    };
    let (Some(b), Some(n), Some(_), Some(_)) = (base, new, sb, sn) else {
        return r;
    };
    let new = Side {
        disturbed: disturbs(judging.disturbances, &n.name),
        ..Side::of(n)
    };
    let (j, drift) = judge_runs(
        any.better,
        Side::of(b),
        new,
        judging.threshold_pct,
        (judging.rule)(&n.name),
    );
    r.change_pct = j.change_pct;
    r.p_value = j.p_value;
    r.method = j.method;
    r.verdict = j.verdict;
    r.drift_pct = drift;
    r
}

/// One run's side of a test for [`judge_runs`]: its summary and samples,
/// and how its passes over the suite took them (both empty for one pass
/// or a report that does not say).
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// The summary of all its samples.
    pub summary: &'a Summary,
    /// The samples, in the order taken.
    pub samples: &'a [f64],
    /// How many of `samples` each pass took, in order
    /// ([`TestResult::pass_samples`]).
    pub pass_samples: &'a [usize],
    /// Each pass's median ([`TestResult::pass_medians`]).
    pub pass_medians: &'a [f64],
    /// The run's conditions recorded a disturbance (load, throttling, its
    /// own speed changing during it: `lever_conditions::Conditions::
    /// disturbances`), so it is judged only under `--force`; a worse mode
    /// of its samples is then the disturbance's wherever it falls
    /// ([`worse_mode_is_a_load`]).
    pub disturbed: bool,
}

impl<'a> Side<'a> {
    /// A test of a `lever bench` report. Panics without a summary: only
    /// for tests that have one.
    pub fn of(t: &'a TestResult) -> Side<'a> {
        Side {
            summary: t.summary.as_ref().expect("a test with a summary"),
            samples: &t.samples,
            pass_samples: &t.pass_samples,
            pass_medians: &t.pass_medians,
            disturbed: false,
        }
    }
}

/// The medians of each pass's samples: `samples` cut by `pass_samples`
/// (for runs stored without their pass medians, as `lever report` keeps
/// them). Empty when the counts do not add up to the samples.
pub fn pass_medians(samples: &[f64], pass_samples: &[usize]) -> Vec<f64> {
    if !passes_fit(pass_samples, samples.len()) {
        return Vec::new();
    }
    let mut rest = samples;
    pass_samples
        .iter()
        .filter_map(|&k| {
            let (pass, next) = rest.split_at(k);
            rest = next;
            Summary::new(pass).map(|s| s.median)
        })
        .collect()
}

/// Whether the counts of samples each pass took add up to `n` samples
/// (without overflowing: a report is input, and a count near `usize::MAX`
/// must not wrap round to a plausible total).
pub fn passes_fit(pass_samples: &[usize], n: usize) -> bool {
    pass_samples
        .iter()
        .try_fold(0usize, |sum, &k| sum.checked_add(k))
        == Some(n)
}

/// One test judged between two runs as `lever bench compare` judges it
/// (and `lever report render A B` after it): [`judge_with`], its
/// worse-mode rule only when the new run's slow mode is a load's (in
/// every pass, or alternating within one: [`worse_mode_is_a_load`]), and
/// a significant change no larger than the runs' drift between their own
/// passes ([`drift_pct`], the steadier run's or the larger, by `rule`)
/// called [`Verdict::WithinDrift`]. Returns the judgement and that drift.
pub fn judge_runs(
    better: Better,
    base: Side<'_>,
    new: Side<'_>,
    threshold_pct: f64,
    rule: DriftRule,
) -> (Judgement, Option<f64>) {
    let mut j = judge_with(
        better,
        (base.summary, base.samples),
        (new.summary, new.samples),
        threshold_pct,
        worse_mode_is_a_load(better, new),
    );
    let drift = match (drift_pct(base), drift_pct(new), rule) {
        (Some(x), Some(y), DriftRule::Steadier) => Some(x.min(y)),
        (Some(x), Some(y), DriftRule::Larger) => {
            Some(x.max(y).max(pass_margin_pct(base, new).unwrap_or(0.0)))
        }
        (x, y, _) => x.or(y),
    };
    if let (true, Some(change), Some(drift)) = (
        excusable(j.verdict, j.method.as_deref()),
        j.change_pct,
        drift,
    ) {
        if change.abs() <= drift {
            j.verdict = Verdict::WithinDrift;
        }
    }
    (j, drift)
}

/// Whether the new run's worse mode ([`judge`]'s method `modes`) is a
/// load's: the run's conditions recorded one ([`Side::disturbed`]: the
/// slow samples are the load's wherever they fall, judged only under
/// `--force`), it shows in every pass (at least a tenth of each pass's
/// samples), or some pass alternates between the modes (at least
/// [`LOAD_SWITCHES`] times from one to the other in the order taken). A
/// load sharing the CPU alternates with the test all the time; a slow
/// spell of the machine puts one pass, or one stretch of a pass, in the
/// slow mode and the rest in the fast one, and that is drift
/// ([`drift_pct`]), not a load. (A pass that happened to take few
/// samples, all between the load's slices, does not hide the load the
/// other pass alternates with: a pinned stress-ng gave a 6-sample pass
/// all fast and a 19-sample pass switching six times. Nor does a pass the
/// load happened to leave alone: under the same stress-ng a pass of
/// `lat_syscall-read` took 12 samples at 0.25 µs and the next 25 at
/// 0.14 µs, as quiet, between rare 1 ms slices; the run's load, recorded
/// in its conditions, says whose the slow pass is.) `true` when the
/// run does not say which samples each pass took (one pass, or reports
/// written before [`TestResult::pass_samples`]): then the mode is judged
/// as before.
pub fn worse_mode_is_a_load(better: Better, t: Side<'_>) -> bool {
    let Some(modes) = t.summary.modes.as_ref() else {
        return true;
    };
    if t.disturbed {
        return true;
    }
    if t.pass_samples.len() < 2 || !passes_fit(t.pass_samples, t.samples.len()) {
        return true;
    }
    let split = modes.split();
    let worse = |v: &f64| match better {
        Better::Lower => *v >= split,
        Better::Higher => *v < split,
    };
    let mut rest = t.samples;
    let passes: Vec<&[f64]> = t
        .pass_samples
        .iter()
        .map(|&k| {
            let (pass, next) = rest.split_at(k);
            rest = next;
            pass
        })
        .collect();
    let in_every_pass = passes.iter().all(|pass| {
        let w = pass.iter().filter(|v| worse(v)).count();
        w > 0 && 10 * w >= pass.len()
    });
    let alternates = passes.iter().any(|pass| {
        let switches = pass
            .windows(2)
            .filter(|p| worse(&p[0]) != worse(&p[1]))
            .count();
        switches >= LOAD_SWITCHES
    });
    in_every_pass || alternates
}

/// Switches between the modes within one pass that make a worse mode a
/// load's ([`worse_mode_is_a_load`]): fast, slow, fast, slow. A slow
/// spell that starts and ends inside a pass switches twice.
pub const LOAD_SWITCHES: usize = 3;

/// A significant change that drift or reruns may show to be no change. A
/// worse mode (method `modes`) is a load's signature inside one run,
/// judged on its own samples: neither excuses it.
pub fn excusable(verdict: Verdict, method: Option<&str>) -> bool {
    matches!(
        verdict,
        Verdict::Improved | Verdict::Regressed | Verdict::WorseWithinThreshold
    ) && method != Some("modes")
}

/// The tests of `rows` that regressed past the threshold.
fn regressions(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .filter(|r| r.verdict == Verdict::Regressed)
        .map(|r| r.name.clone())
        .collect()
}

/// How far apart a run's passes put a test's median: the highest pass
/// median less the lowest, percent of the median of all its samples.
/// `None` with fewer than two passes.
pub fn drift_pct(t: Side<'_>) -> Option<f64> {
    let m = t.summary.median;
    if t.pass_medians.len() < 2 || m == 0.0 {
        return None;
    }
    let hi = t.pass_medians.iter().copied().fold(f64::MIN, f64::max);
    let lo = t.pass_medians.iter().copied().fold(f64::MAX, f64::min);
    Some(100.0 * (hi - lo) / m.abs())
}

/// How far the passes of two quiet runs say one more run of the same
/// build may move a test: each pass is a replicate of the run (its own
/// process, at its own time), so the difference of the runs' mean pass
/// medians must clear `t(na + nb - 2) · s · √(1/na + 1/nb)`, with `s` the
/// pooled standard deviation of the pass medians within each run, to be
/// more than the variance *between* runs (percent of the base's median).
/// The samples of one pass cannot show that variance: on this VM a quiet
/// run's `lat_proc-fork` passes were 973 and 790 µs, the next run's 818
/// and 774 µs, each pass ±1 %. `None` unless both runs have two passes or
/// more.
pub fn pass_margin_pct(base: Side<'_>, new: Side<'_>) -> Option<f64> {
    let (a, b) = (base.pass_medians, new.pass_medians);
    let m = base.summary.median;
    if a.len() < 2 || b.len() < 2 || m == 0.0 {
        return None;
    }
    let ss = |v: &[f64]| {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
    };
    let df = a.len() + b.len() - 2;
    let s = ((ss(a) + ss(b)) / df as f64).sqrt();
    let se = s * (1.0 / a.len() as f64 + 1.0 / b.len() as f64).sqrt();
    Some(100.0 * crate::stats::t_975(df) * se / m.abs())
}

/// What the significance test of [`compare`] says about one figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// (new - base) / base of the medians, percent; `None` when base is 0.
    pub change_pct: Option<f64>,
    /// Mann-Whitney two-sided p-value, when it was used.
    pub p_value: Option<f64>,
    /// How significance was decided: `mann-whitney` or `intervals`.
    pub method: Option<String>,
    /// The outcome.
    pub verdict: Verdict,
}

/// The test [`compare`] applies to one figure, for other callers that
/// compare runs (`lever report render`): each side is its summary and its
/// samples; significant is Mann-Whitney U at [`ALPHA`] with 5 samples or
/// more on each side, else non-overlapping intervals; a significant
/// worsening past `threshold_pct` is a regression.
///
/// A new run whose samples fall in two modes ([`crate::stats::Modes`]) is
/// judged by its worse mode when that holds at least a third of them
/// (method `modes`, the change is that mode's against the base median):
/// its samples alternated fast and slow, as under a load sharing the CPU,
/// and the median can sit in either cluster while Mann-Whitney on the
/// interleaved samples misses a change most reruns show (Whetstone 61 %
/// slower under a pinned stress-ng was p = 0.13, "unchanged").
pub fn judge(
    better: Better,
    base: (&Summary, &[f64]),
    new: (&Summary, &[f64]),
    threshold_pct: f64,
) -> Judgement {
    judge_with(better, base, new, threshold_pct, true)
}

/// [`judge`], with its worse-mode rule only when `modes` (see
/// [`worse_mode_is_a_load`]).
pub fn judge_with(
    better: Better,
    base: (&Summary, &[f64]),
    new: (&Summary, &[f64]),
    threshold_pct: f64,
    modes: bool,
) -> Judgement {
    let ((sb, b), (sn, n)) = (base, new);
    let pct = |v: f64| (sb.median != 0.0).then(|| 100.0 * (v - sb.median) / sb.median.abs());
    let is_worse = |change: f64| match better {
        Better::Lower => change > 0.0,
        Better::Higher => change < 0.0,
    };
    let worse_mode = sn.modes.as_ref().and_then(|m| {
        let (v, k) = match better {
            Better::Lower => (m.high, m.high_n),
            Better::Higher => (m.low, m.low_n),
        };
        (modes && 3 * k >= sn.n).then_some(v)
    });
    if let Some(change) = worse_mode.and_then(pct) {
        if is_worse(change) && change.abs() > threshold_pct {
            return Judgement {
                change_pct: Some(change),
                p_value: None,
                method: Some("modes".into()),
                verdict: Verdict::Regressed,
            };
        }
    }
    let change_pct = pct(sn.median);
    let (significant, p_value, method) = match mann_whitney(b, n) {
        Some(mw) if b.len() >= 5 && n.len() >= 5 => (mw.p < ALPHA, Some(mw.p), "mann-whitney"),
        _ => (intervals_apart(sb, sn), None, "intervals"),
    };
    let change = change_pct.unwrap_or(0.0);
    let verdict = match (significant, is_worse(change)) {
        (false, _) => Verdict::Unchanged,
        (true, false) => Verdict::Improved,
        (true, true) if change.abs() > threshold_pct => Verdict::Regressed,
        (true, true) => Verdict::WorseWithinThreshold,
    };
    Judgement {
        change_pct,
        p_value,
        method: Some(method.to_string()),
        verdict,
    }
}

/// The 95% intervals of the medians do not overlap (min..max when a side
/// has too few samples for an interval).
fn intervals_apart(a: &Summary, b: &Summary) -> bool {
    let lo_hi = |s: &Summary| (s.ci_low.unwrap_or(s.min), s.ci_high.unwrap_or(s.max));
    let (a, b) = (lo_hi(a), lo_hi(b));
    a.1 < b.0 || b.1 < a.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Section;

    pub(crate) fn result(name: &str, better: Better, samples: Vec<f64>) -> TestResult {
        TestResult {
            name: name.into(),
            section: Section::Syscalls,
            unit: "us".into(),
            better,
            summary: Summary::new(&samples),
            samples,
            stop: None,
            iterations: 1,
            elapsed_s: 0.0,
            skipped: None,
            pinned_cpu: None,
            pass_cpus: Vec::new(),
            pass_medians: Vec::new(),
            pass_samples: Vec::new(),
        }
    }

    /// The default threshold and `rule`, the new run not disturbed.
    fn judging(rule: DriftRule) -> Judging<'static> {
        Judging {
            threshold_pct: 10.0,
            rule: match rule {
                DriftRule::Larger => &|_| DriftRule::Larger,
                DriftRule::Steadier => &|_| DriftRule::Steadier,
            },
            disturbances: &[],
        }
    }

    fn noisy(center: f64, n: usize, seed: u64) -> Vec<f64> {
        // Deterministic ±3% jitter.
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                center * (1.0 + ((x % 6001) as f64 / 100_000.0 - 0.03))
            })
            .collect()
    }

    #[test]
    fn pass_medians_cut_the_samples_by_pass() {
        let samples = [1.0, 3.0, 2.0, 10.0, 30.0];
        assert_eq!(pass_medians(&samples, &[3, 2]), vec![2.0, 20.0]);
        // Counts that do not add up to the samples say nothing.
        assert!(pass_medians(&samples, &[3, 3]).is_empty());
        assert!(pass_medians(&samples, &[]).is_empty());
    }

    #[test]
    fn a_worse_mode_in_one_pass_only_is_drift_not_load() {
        let base = result("t", Better::Lower, noisy(10.0, 40, 1));
        // A load sharing the CPU: fast and slow samples alternate in both
        // passes. Judged by the worse mode: a regression.
        let mixed: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 10.0 } else { 20.0 } + f64::from(i) * 0.001)
            .collect();
        let mut loaded = result("t", Better::Lower, mixed);
        loaded.pass_samples = vec![20, 20];
        loaded.pass_medians = vec![15.0, 15.0];
        assert!(worse_mode_is_a_load(Better::Lower, Side::of(&loaded)));
        let r = row(Some(&base), Some(&loaded), judging(DriftRule::Larger));
        assert_eq!(
            (r.verdict, r.method.as_deref()),
            (Verdict::Regressed, Some("modes"))
        );
        // A slow spell: the first pass all slow, the second all fast. The
        // same samples, but the modes are the passes: their drift.
        let spell: Vec<f64> = (0..40)
            .map(|i| if i < 20 { 20.0 } else { 10.0 } + f64::from(i) * 0.001)
            .collect();
        let mut drifted = result("t", Better::Lower, spell);
        drifted.pass_samples = vec![20, 20];
        drifted.pass_medians = vec![20.0, 10.0];
        assert!(!worse_mode_is_a_load(Better::Lower, Side::of(&drifted)));
        let r = row(Some(&base), Some(&drifted), judging(DriftRule::Larger));
        assert_ne!(r.method.as_deref(), Some("modes"), "{r:?}");
        assert_ne!(r.verdict, Verdict::Regressed, "{r:?}");
        // The same samples from a run whose conditions recorded a load
        // (judged under `--force`): the slow pass is the load's.
        let r = row(
            Some(&base),
            Some(&drifted),
            Judging {
                disturbances: &[lever_conditions::Disturbance {
                    kind: "load".into(),
                    phase: lever_conditions::Phase::Before,
                    text: "loaded before the run".into(),
                    probe: None,
                }],
                ..judging(DriftRule::Steadier)
            },
        );
        assert_eq!(
            (r.verdict, r.method.as_deref()),
            (Verdict::Regressed, Some("modes")),
            "{r:?}"
        );
        // A slow spell that starts and ends inside the second pass
        // (fast, slow, fast: two switches) is drift too.
        let inside: Vec<f64> = (0..40)
            .map(|i| if (25..35).contains(&i) { 20.0 } else { 10.0 } + f64::from(i) * 0.001)
            .collect();
        let mut spell_in_pass = result("t", Better::Lower, inside);
        spell_in_pass.pass_samples = vec![20, 20];
        assert!(!worse_mode_is_a_load(
            Better::Lower,
            Side::of(&spell_in_pass)
        ));
        // A pinned stress-ng (measured: `lat_ops-int-add`): the first pass
        // took 6 samples, all between the load's slices; the second 19,
        // switching between the modes six times. The load shows in one
        // pass only, but it alternates there: a load, and a regression.
        let stress = [
            0.464, 0.464, 0.463, 0.463, 0.463, 0.463, // pass 1
            1.094, 1.077, 1.085, 1.077, 0.46, 1.173, 1.093, 1.077, 0.458, 1.177, 1.138, 1.126,
            1.103, 1.073, 0.456, 1.116, 1.12, 1.132, 1.066,
        ];
        let quiet = [
            0.469, 0.468, 0.47, 0.469, 0.466, 0.466, 0.467, 0.47, 0.466, 0.473, 0.466, 0.47,
        ];
        let mut loaded = result("lat_ops-int-add", Better::Lower, stress.to_vec());
        loaded.pass_samples = vec![6, 19];
        assert!(worse_mode_is_a_load(Better::Lower, Side::of(&loaded)));
        let base = result("lat_ops-int-add", Better::Lower, quiet.to_vec());
        let r = row(Some(&base), Some(&loaded), judging(DriftRule::Larger));
        assert_eq!(
            (r.verdict, r.method.as_deref()),
            (Verdict::Regressed, Some("modes")),
            "{r:?}"
        );
        // Without per-pass counts (one pass, older reports) the mode is
        // judged as before.
        drifted.pass_samples.clear();
        assert!(worse_mode_is_a_load(Better::Lower, Side::of(&drifted)));
    }

    #[test]
    fn reruns_excuse_what_one_more_run_would_give_and_no_more() {
        use lever_conditions::{Avail, Conditions, Fixed, Snapshot};
        // Runs whose conditions were recorded, with nothing readable in
        // them: no disturbance, so every rerun counts.
        fn none<T>() -> Avail<T> {
            Avail::Unavailable("not read".to_string())
        }
        let snap = Snapshot {
            elapsed_s: 0.0,
            load: none(),
            cpufreq: none(),
            thermal: none(),
        };
        let recorded = Conditions::new(Fixed::unknown("t", 2), &snap, none(), &snap);
        let report = |center: f64, seed: u64| {
            let mut r = BenchReport {
                tests: vec![result("t", Better::Lower, noisy(center, 20, seed))],
                ..crate::tests::empty_report()
            };
            r.conditions.run = Some(recorded.clone());
            r
        };
        let (base, new) = (report(10.0, 1), report(12.0, 2));
        let reruns = [report(11.0, 3), report(10.5, 4)];
        // Alone: 20 % slower is a regression.
        let c = compare_reruns(&base, &[], &new, 10.0, false);
        assert_eq!(c.rows[0].verdict, Verdict::Regressed);
        assert!(c.rows[0].reruns.is_none());
        // Medians about 10, 11 and 10.5: one more run is expected within
        // about 10.5 ± 2.5, so 12 is not a change.
        let c = compare_reruns(&base, &reruns, &new, 10.0, false);
        let r = &c.rows[0];
        assert_eq!(r.verdict, Verdict::WithinReruns, "{r:?}");
        let x = r.reruns.as_ref().unwrap();
        assert_eq!(x.runs, 3);
        assert!(x.low < 10.2 && x.high > 10.8, "{x:?}");
        assert!(
            x.expected_low < 9.0 && (12.0..14.0).contains(&x.expected_high),
            "{x:?}"
        );
        assert!(c.regressions.is_empty());
        // 15 is outside: still a regression, and listed as one.
        let c = compare_reruns(&base, &reruns, &report(15.0, 5), 10.0, false);
        assert_eq!(c.rows[0].verdict, Verdict::Regressed);
        assert_eq!(c.regressions, vec!["t".to_string()]);
        // A rerun whose conditions were not recorded cannot be vouched
        // for: left out, and said so; with one rerun left, 12 is outside.
        let mut unknown = report(11.0, 3);
        unknown.conditions.run = None;
        let c = compare_reruns(&base, &[unknown, report(10.5, 4)], &new, 10.0, false);
        assert_eq!(
            c.reruns_left_out,
            vec!["base rerun 1 left out of the spread: its conditions were not recorded"]
        );
        assert_eq!(c.rows[0].reruns.as_ref().unwrap().runs, 2);
    }

    #[test]
    fn verdicts_on_known_samples() {
        let base = [
            result("slower", Better::Lower, noisy(10.0, 20, 1)),
            result("faster-bw", Better::Higher, noisy(100.0, 20, 2)),
            result("same", Better::Lower, noisy(5.0, 20, 3)),
            result("slightly", Better::Lower, noisy(5.0, 40, 4)),
            result("gone", Better::Lower, noisy(5.0, 20, 5)),
        ];
        let new = [
            result("slower", Better::Lower, noisy(12.0, 20, 6)),
            result("faster-bw", Better::Higher, noisy(130.0, 20, 7)),
            result("same", Better::Lower, noisy(5.0, 20, 8)),
            result("slightly", Better::Lower, noisy(5.2, 40, 9)),
            result("added", Better::Lower, noisy(5.0, 20, 10)),
        ];
        let report = |tests: &[TestResult]| BenchReport {
            tests: tests.to_vec(),
            ..crate::tests::empty_report()
        };
        let c = compare(&report(&base), &report(&new), 10.0);
        let v: Vec<_> = c
            .rows
            .iter()
            .map(|r| (r.name.as_str(), r.verdict))
            .collect();
        assert_eq!(
            v,
            [
                ("slower", Verdict::Regressed),
                ("faster-bw", Verdict::Improved),
                ("same", Verdict::Unchanged),
                ("slightly", Verdict::WorseWithinThreshold),
                ("gone", Verdict::NotCompared),
                ("added", Verdict::NotCompared),
            ]
        );
        assert_eq!(c.regressions, ["slower"]);
        assert!((c.rows[0].change_pct.unwrap() - 20.0).abs() < 3.0);
        assert_eq!(c.rows[0].method.as_deref(), Some("mann-whitney"));
    }

    /// Two runs whose passes are 20-30 % apart (the machine drifted
    /// between minutes): a 17 % change between them is significant on the
    /// samples but within that drift, so not called a change; against a
    /// steady run the same change is (the steadier run's drift counts),
    /// and a 60 % one always is.
    #[test]
    fn a_change_within_the_runs_own_drift_is_not_called_one() {
        let with_passes = |first: f64, second: f64, seed: u64| {
            let mut samples = noisy(first, 10, seed);
            samples.extend(noisy(second, 10, seed + 1));
            let mut t = result("t", Better::Lower, samples);
            t.pass_medians = vec![first, second];
            t
        };
        let base = with_passes(10.0, 13.0, 1);
        let drift = drift_pct(Side::of(&base)).unwrap();
        assert!((drift - 100.0 * 3.0 / base.summary.as_ref().unwrap().median).abs() < 1e-9);
        let r = row(
            Some(&base),
            Some(&with_passes(12.0, 15.0, 3)),
            judging(DriftRule::Steadier),
        );
        assert_eq!(r.verdict, Verdict::WithinDrift, "{r:?}");
        assert!(r.change_pct.unwrap() > 10.0, "{r:?}");
        assert!(r.drift_pct.unwrap() >= r.change_pct.unwrap(), "{r:?}");
        let r = row(
            Some(&base),
            Some(&with_passes(13.5, 13.6, 5)),
            judging(DriftRule::Steadier),
        );
        assert_eq!(r.verdict, Verdict::Regressed, "{r:?}");
        let r = row(
            Some(&base),
            Some(&with_passes(18.0, 22.0, 7)),
            judging(DriftRule::Steadier),
        );
        assert_eq!(r.verdict, Verdict::Regressed, "{r:?}");
        // Both runs quiet: the larger drift is what a rerun moves the
        // test by, so a steady base does not make the other run's drift
        // a regression; the steadier run's drift would.
        let steady = with_passes(10.0, 10.2, 11);
        let drifting = with_passes(10.5, 16.0, 13);
        let r = row(Some(&steady), Some(&drifting), judging(DriftRule::Larger));
        assert_eq!(r.verdict, Verdict::WithinDrift, "{r:?}");
        assert!(r.change_pct.unwrap() > 20.0, "{r:?}");
        let r = row(Some(&steady), Some(&drifting), judging(DriftRule::Steadier));
        assert_eq!(r.verdict, Verdict::Regressed, "{r:?}");
        // Runs of one pass have no drift: judged as before.
        let one = result("t", Better::Lower, noisy(10.0, 20, 9));
        assert_eq!(drift_pct(Side::of(&one)), None);
    }

    /// Two quiet runs of one build on this VM put `lat_proc-fork`'s passes
    /// at 818 and 774 µs, then 973 and 790 µs, each pass within ±3 %: the
    /// second run's median is 20 % above the first's, and the samples call
    /// it significant. The passes are the replicates that show how far a
    /// run moves, and by them it is not a change; a 20 % change that every
    /// pass shows is.
    #[test]
    fn passes_are_replicates_of_a_run_when_both_are_quiet() {
        let passes = |passes: &[&[f64]]| {
            let mut t = result("lat_proc-fork", Better::Lower, passes.concat());
            t.pass_samples = passes.iter().map(|p| p.len()).collect();
            t.pass_medians = pass_medians(&t.samples, &t.pass_samples);
            t
        };
        // The two runs' samples, µs, as measured (release build, 19:33
        // and 19:36, nothing else running).
        let first = passes(&[
            &[823.0, 811.2, 818.6, 804.3, 817.6, 825.9],
            &[765.5, 771.9, 768.7, 775.7, 778.1, 788.6],
        ]);
        let second = passes(&[
            &[
                1004.0, 983.3, 972.6, 971.1, 960.5, 975.7, 965.1, 973.4, 969.1,
            ],
            &[788.9, 790.1, 795.6, 781.5, 792.9, 790.3],
        ]);
        let r = row(Some(&first), Some(&second), judging(DriftRule::Steadier));
        assert_eq!(r.verdict, Verdict::Regressed, "{r:?}");
        assert!(r.change_pct.unwrap() > 15.0, "{r:?}");
        let r = row(Some(&first), Some(&second), judging(DriftRule::Larger));
        assert_eq!(r.verdict, Verdict::WithinDrift, "{r:?}");
        // The margin: t(2) · pooled s of the pass medians · √(1/2 + 1/2).
        let (a, b) = (&first.pass_medians, &second.pass_medians);
        let ss = |v: &[f64]| (v[0] - v[1]).powi(2) / 2.0;
        let expect =
            100.0 * 4.303 * ((ss(a) + ss(b)) / 2.0).sqrt() / first.summary.as_ref().unwrap().median;
        let margin = pass_margin_pct(Side::of(&first), Side::of(&second)).unwrap();
        assert!((margin - expect).abs() < 1e-6, "{margin} {expect}");
        assert_eq!(r.drift_pct, Some(margin), "the margin is the larger drift");
        // Every pass 20 % slower: a change whatever the rule.
        let slower: Vec<f64> = first.samples.iter().map(|v| v * 1.2).collect();
        let slower = passes(&[&slower[..6], &slower[6..]]);
        let r = row(Some(&first), Some(&slower), judging(DriftRule::Larger));
        assert_eq!(r.verdict, Verdict::Regressed, "{r:?}");
        // One pass each: no replicates, no margin.
        let one = result("t", Better::Lower, noisy(800.0, 10, 27));
        assert_eq!(pass_margin_pct(Side::of(&one), Side::of(&second)), None);
    }

    /// Quiet is per test: a run whose latency probe moved is not quiet for
    /// the memory tests that depend on it, and still is for the syscall
    /// tests; load or throttling, or a run without conditions, makes it
    /// unquiet for all.
    #[test]
    fn the_drift_rule_is_chosen_per_test() {
        let mut c = lever_conditions::compare(None, None, false);
        c.speed_changed = vec!["latency".into()];
        let rule = |recorded, c: &lever_conditions::Comparison, t| drift_rule(recorded, c, t);
        assert_eq!(rule(true, &c, "lat_syscall-null"), DriftRule::Larger);
        assert_eq!(
            rule(true, &c, "lat_mem_rd-stride128-sz1024k"),
            DriftRule::Steadier
        );
        assert_eq!(rule(false, &c, "lat_syscall-null"), DriftRule::Steadier);
        c.machine_wide = true;
        assert_eq!(rule(true, &c, "lat_syscall-null"), DriftRule::Steadier);
    }

    /// A report is input: pass counts that would wrap round to the number
    /// of samples are counts that do not fit, not a panic.
    #[test]
    fn pass_counts_that_overflow_do_not_fit() {
        assert!(passes_fit(&[5, 7], 12));
        assert!(!passes_fit(&[usize::MAX, 13], 12));
        assert!(pass_medians(&[1.0; 12], &[usize::MAX, 13]).is_empty());
        let mut t = result(
            "t",
            Better::Lower,
            vec![1.0, 9.0, 1.0, 9.0, 1.0, 9.0, 1.0, 9.0],
        );
        t.pass_samples = vec![usize::MAX, 9];
        assert!(worse_mode_is_a_load(Better::Lower, Side::of(&t)));
    }

    #[test]
    fn few_samples_fall_back_to_intervals() {
        let a = result("t", Better::Lower, vec![1.0, 1.1, 1.0]);
        let b = result("t", Better::Lower, vec![2.0, 2.1, 2.0]);
        let r = row(Some(&a), Some(&b), judging(DriftRule::Steadier));
        assert_eq!(
            (r.method.as_deref(), r.verdict),
            (Some("intervals"), Verdict::Regressed)
        );
    }

    #[test]
    fn a_worse_mode_holding_a_third_of_the_samples_is_a_regression() {
        // Base: steady 100 µs. New: alternating 100 and 260 µs, as under a
        // load pinned to the benchmark's CPU; the median lands in the fast
        // cluster and Mann-Whitney on interleaved samples may miss it.
        let base = result(
            "whetstone",
            Better::Lower,
            vec![100.0, 101.0, 99.0, 100.5, 99.5, 100.0, 100.2, 99.8, 100.1],
        );
        let slow = result(
            "whetstone",
            Better::Lower,
            vec![100.0, 260.0, 101.0, 255.0, 99.0, 100.4, 262.0, 100.2, 99.9],
        );
        let sn = slow.summary.clone().unwrap();
        assert!(sn.modes.is_some(), "{sn:?}");
        let report = |tests| BenchReport {
            tests,
            ..crate::tests::empty_report()
        };
        let c = compare(&report(vec![base.clone()]), &report(vec![slow]), 10.0);
        let r = &c.rows[0];
        assert_eq!(r.verdict, Verdict::Regressed, "{r:?}");
        assert_eq!(r.method.as_deref(), Some("modes"));
        assert!(r.change_pct.unwrap() > 150.0, "{r:?}");
        // A fast mode is not a regression.
        let fast = result(
            "whetstone",
            Better::Lower,
            vec![100.0, 40.0, 101.0, 41.0, 99.0, 100.4, 39.0, 100.2, 99.9],
        );
        let c = compare(&report(vec![base]), &report(vec![fast]), 10.0);
        assert_ne!(c.rows[0].verdict, Verdict::Regressed, "{:?}", c.rows[0]);
    }

    /// Two quiet runs of one build (2026-11-27 22:08 and 22:13): the L3
    /// plateau ended at 16 MiB in one and at 12 MiB in the other, and
    /// `lat_mem_rd` at 16–32 MiB was 40–360 % slower in the second with
    /// both passes agreeing. Those sizes are not judged, and say why; the
    /// sizes both runs had in the same place still are.
    #[test]
    fn sizes_where_the_caches_reached_differently_are_not_judged() {
        let plateau = |level: &str, from_kb, to_kb| crate::memory::Plateau {
            level: level.into(),
            latency_ns: 1.0,
            from_kb,
            to_kb,
            cache_kb: None,
            matches_cache: None,
        };
        let far = vec![
            plateau("L2", 64, 768),
            plateau("L3", 1536, 16384),
            plateau("DRAM", 49152, 131072),
        ];
        let near = vec![
            plateau("L2", 64, 768),
            plateau("L3", 1536, 12288),
            plateau("DRAM", 24576, 131072),
        ];
        let reach = cache_reach(&far, &near);
        assert_eq!(reach.len(), 1, "{reach:?}");
        let r = &reach[0];
        assert_eq!((r.above_kb, r.below_kb), (12288, 49152), "{r:?}");
        assert!(
            r.text
                .starts_with("L3 to 16 MiB in the base run, to 12 MiB in the new"),
            "{}",
            r.text
        );
        let name = crate::memory::lat_mem_rd_name;
        for kb in [16384, 24576, 32768] {
            assert!(r.covers(&name(kb)), "{kb}");
        }
        for kb in [8192, 12288, 49152] {
            assert!(!r.covers(&name(kb)), "{kb}");
        }
        assert!(!r.covers("bw_mem-rd-16mb"));
        assert!(cache_reach(&far, &far).is_empty());
        // As `bench compare` judges: the 24 MiB point 4.6× slower is not
        // judged and named; the 8 MiB one, 30 % slower, is a regression.
        let test = |kb, ns: f64| {
            result(
                &name(kb),
                Better::Lower,
                (0..12).map(|i| ns + 0.01 * f64::from(i)).collect(),
            )
        };
        // ns at 8 MiB and at 24 MiB.
        let run = |plateaus: &Vec<crate::memory::Plateau>, at_8m: f64, at_24m: f64| BenchReport {
            tests: vec![test(8192, at_8m), test(24576, at_24m)],
            plateaus: plateaus.clone(),
            ..crate::tests::empty_report()
        };
        let (base, new) = (run(&far, 13.0, 30.0), run(&near, 16.9, 138.0));
        let c = compare_runs(&base, &new, 10.0, false);
        let verdicts: Vec<_> = c
            .rows
            .iter()
            .map(|r| (r.name.as_str(), r.verdict))
            .collect();
        assert_eq!(
            verdicts,
            [
                (name(8192).as_str(), Verdict::Regressed),
                (name(24576).as_str(), Verdict::NotJudged)
            ]
        );
        assert_eq!(c.withheld_regressions, [name(24576)]);
        let why = c.withheld_reason().unwrap();
        assert!(
            why.contains("but lies where the two runs' caches reached differently (L3 to 16 MiB"),
            "{why}"
        );
        let forced = compare_runs(&base, &new, 10.0, true);
        assert_eq!(forced.rows[1].verdict, Verdict::Regressed);
    }

    /// A run whose file tests ran on ext4 without a journal: its
    /// file-creation rates follow the deletes before them, so a slower
    /// `lat_fs-4k-create` is not judged (and named), while `lat_fs-4k-delete`
    /// and the other tests are; with a journal, or forced, it is judged.
    #[test]
    fn creates_on_ext4_without_a_journal_are_not_judged() {
        let fs = |journal| lever_measure::mounts::FileSystem {
            dir: "/tmp".into(),
            mount_point: "/".into(),
            fs_type: "ext4".into(),
            source: "/dev/vda".into(),
            options: "rw,discard".into(),
            journal,
        };
        assert_eq!(file_history(None, None), None);
        assert_eq!(file_history(Some(&fs(Some(true))), Some(&fs(None))), None);
        let why = file_history(Some(&fs(Some(true))), Some(&fs(Some(false)))).unwrap();
        assert_eq!(
            why,
            "the file tests ran on ext4 without a journal (new run: /tmp, ext4 /dev/vda at / (no journal)), where a create skips the inodes deleted there in the minutes before, so lat_fs-*-create depends on what ran before it"
        );
        assert!(creates_files("lat_fs-0k-create"));
        assert!(!creates_files("lat_fs-0k-delete"));
        // files/s: the new run's creates and deletes half as fast.
        let run = |journal, rate: f64| {
            let mut r = BenchReport {
                tests: ["lat_fs-4k-create", "lat_fs-4k-delete"]
                    .iter()
                    .map(|n| {
                        result(
                            n,
                            Better::Higher,
                            (0..12).map(|i| rate + f64::from(i)).collect(),
                        )
                    })
                    .collect(),
                ..crate::tests::empty_report()
            };
            r.conditions.scratch = Some(fs(journal));
            r
        };
        let (base, new) = (run(Some(false), 2000.0), run(Some(false), 1000.0));
        let c = compare_runs(&base, &new, 10.0, false);
        let verdicts: Vec<_> = c.rows.iter().map(|r| r.verdict).collect();
        assert_eq!(verdicts, [Verdict::NotJudged, Verdict::Regressed]);
        assert_eq!(c.withheld_regressions, ["lat_fs-4k-create"]);
        let why = c.withheld_reason().unwrap();
        assert!(
            why.starts_with("not judged: lat_fs-4k-create got worse by more than the threshold, but the file tests ran on ext4 without a journal (base run: /tmp, ext4 /dev/vda at / (no journal); new run: "),
            "{why}"
        );
        assert!(
            file_history_warning(c.file_history.as_deref().unwrap(), false)
                .ends_with("depends on what ran before it; not judged (--force judges)")
        );
        let forced = compare_runs(&base, &new, 10.0, true);
        assert_eq!(forced.rows[0].verdict, Verdict::Regressed);
        let journaled = compare_runs(
            &run(Some(true), 2000.0),
            &run(Some(true), 1000.0),
            10.0,
            false,
        );
        assert_eq!(journaled.rows[0].verdict, Verdict::Regressed);
        assert_eq!(journaled.file_history, None);
        // Without a file-creation rate there is nothing to say.
        let (mut b, mut n) = (base.clone(), new.clone());
        b.tests.remove(0);
        n.tests.remove(0);
        assert_eq!(compare_runs(&b, &n, 10.0, false).file_history, None);
    }
}
