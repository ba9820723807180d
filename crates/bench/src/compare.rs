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

/// Compare `new` against `base`.
pub fn compare(base: &BenchReport, new: &BenchReport, threshold_pct: f64) -> Comparison {
    let mut rows: Vec<Row> = base
        .tests
        .iter()
        .map(|b| {
            row(
                Some(b),
                new.tests.iter().find(|n| n.name == b.name),
                threshold_pct,
            )
        })
        .collect();
    rows.extend(
        new.tests
            .iter()
            .filter(|n| !base.tests.iter().any(|b| b.name == n.name))
            .map(|n| row(None, Some(n), threshold_pct)),
    );
    let regressions = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Regressed)
        .map(|r| r.name.clone())
        .collect();
    Comparison {
        threshold_pct,
        rows,
        regressions,
        conditions: None,
        withheld: 0,
    }
}

/// [`compare`], then the runs' conditions: when either run was taken
/// under load or throttling (`lever_conditions::compare`), every change
/// the test calls significant becomes [`Verdict::NotJudged`] and no
/// regression is reported, unless `force`. Identical quiet conditions
/// leave the comparison as [`compare`] made it.
pub fn compare_runs(
    base: &BenchReport,
    new: &BenchReport,
    threshold_pct: f64,
    force: bool,
) -> Comparison {
    let mut c = compare(base, new, threshold_pct);
    let conditions = lever_conditions::compare(
        base.conditions.run.as_ref(),
        new.conditions.run.as_ref(),
        force,
    );
    if !conditions.judged {
        for r in &mut c.rows {
            if matches!(
                r.verdict,
                Verdict::Improved | Verdict::Regressed | Verdict::WorseWithinThreshold
            ) {
                r.verdict = Verdict::NotJudged;
                c.withheld += 1;
            }
        }
        c.regressions.clear();
    }
    c.conditions = Some(conditions);
    c
}

fn row(base: Option<&TestResult>, new: Option<&TestResult>, threshold_pct: f64) -> Row {
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
        p_value: None,
        method: None,
        verdict: Verdict::NotCompared,
    };
    let (Some(b), Some(n), Some(sb), Some(sn)) = (base, new, sb, sn) else {
        return r;
    };
    let j = judge(
        any.better,
        (sb, &b.samples),
        (sn, &n.samples),
        threshold_pct,
    );
    r.change_pct = j.change_pct;
    r.p_value = j.p_value;
    r.method = j.method;
    r.verdict = j.verdict;
    r
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
pub fn judge(
    better: Better,
    base: (&Summary, &[f64]),
    new: (&Summary, &[f64]),
    threshold_pct: f64,
) -> Judgement {
    let ((sb, b), (sn, n)) = (base, new);
    let change_pct = (sb.median != 0.0).then(|| 100.0 * (sn.median - sb.median) / sb.median.abs());
    let (significant, p_value, method) = match mann_whitney(b, n) {
        Some(mw) if b.len() >= 5 && n.len() >= 5 => (mw.p < ALPHA, Some(mw.p), "mann-whitney"),
        _ => (intervals_apart(sb, sn), None, "intervals"),
    };
    let change = change_pct.unwrap_or(0.0);
    let worse = match better {
        Better::Lower => change > 0.0,
        Better::Higher => change < 0.0,
    };
    let verdict = match (significant, worse) {
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

    #[test]
    fn few_samples_fall_back_to_intervals() {
        let a = result("t", Better::Lower, vec![1.0, 1.1, 1.0]);
        let b = result("t", Better::Lower, vec![2.0, 2.1, 2.0]);
        let r = row(Some(&a), Some(&b), 10.0);
        assert_eq!(
            (r.method.as_deref(), r.verdict),
            (Some("intervals"), Verdict::Regressed)
        );
    }
}
