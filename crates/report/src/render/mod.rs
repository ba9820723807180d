//! One or more runs as a page (HTML), Markdown tables and JSON. The first
//! run is the base every other run is compared with ([`crate::compare`]).

mod html;
mod markdown;
pub mod svg;

use crate::compare::{self, Row};
use crate::model::{Run, Status};
use lever_bench::compare::Verdict;
use serde::Serialize;

pub use html::{html, html_with};
pub use markdown::{markdown, markdown_with};

/// The entity of a character that HTML/SVG text must not hold raw.
fn entity(c: char) -> Option<&'static str> {
    Some(match c {
        '&' => "&amp;",
        '<' => "&lt;",
        '>' => "&gt;",
        '"' => "&quot;",
        '\'' => "&#39;",
        _ => return None,
    })
}

/// Escape text for HTML and SVG (element content and quoted attributes).
pub fn esc(s: &str) -> String {
    s.chars()
        .fold(String::with_capacity(s.len()), |mut out, c| {
            match entity(c) {
                Some(e) => out.push_str(e),
                None => out.push(c),
            }
            out
        })
}

/// What the JSON output holds: the runs and their comparison.
#[derive(Debug, Serialize)]
pub struct Document<'a> {
    /// The runs, base first.
    pub runs: &'a [Run],
    /// Regression threshold of the comparison, percent.
    pub threshold_pct: f64,
    /// Every metric across the runs (empty for one run).
    pub comparison: Vec<Row>,
    /// Each later run's conditions against the base's (empty for one run):
    /// what differs, and whether changes were judged.
    pub conditions: Vec<lever_conditions::Comparison>,
}

/// The runs and their comparison as JSON.
pub fn json(runs: &[Run]) -> String {
    json_with(runs, false)
}

/// [`json`]; with `force`, changes are judged even against a run taken
/// under load or throttling.
pub fn json_with(runs: &[Run], force: bool) -> String {
    let (comparison, conditions) = if runs.len() > 1 {
        compare::compare_judged(runs, compare::THRESHOLD_PCT, force)
    } else {
        (Vec::new(), Vec::new())
    };
    let doc = Document {
        runs,
        threshold_pct: compare::THRESHOLD_PCT,
        comparison,
        conditions,
    };
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

/// Per later run, its conditions against the base's as lines of text: a
/// heading line per run, then what differs and what disturbed a run.
fn condition_lines(
    runs: &[Run],
    conditions: &[lever_conditions::Comparison],
) -> Vec<(String, Vec<(bool, String)>)> {
    conditions
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut lines: Vec<(bool, String)> = c
                .disturbed
                .iter()
                .map(|d| (true, format!("WARNING: {d}")))
                .collect();
            if !c.disturbed.is_empty() {
                lines.push((
                    true,
                    if c.forced {
                        "changes are judged anyway (--force): they may come from these conditions"
                            .into()
                    } else {
                        "no change is called significant (--force judges anyway)".into()
                    },
                ));
            }
            for d in &c.differences {
                lines.push((false, format!("{}: {} → {}", d.what, d.base, d.new)));
            }
            if lines.is_empty() {
                lines.push((false, "the same conditions as #1".into()));
            }
            (
                format!(
                    "{} against {}",
                    run_label(i + 1, &runs[i + 1]),
                    run_label(0, &runs[0])
                ),
                lines,
            )
        })
        .collect()
}

/// A run's short name: `#1 board (time)`.
fn run_label(i: usize, run: &Run) -> String {
    format!(
        "#{} {} ({})",
        i + 1,
        run.device.board.as_deref().unwrap_or("unknown board"),
        run.collected_at
    )
}

/// Section names across the runs, in first-seen order.
fn section_names(runs: &[Run]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in runs {
        for s in &r.sections {
            if !names.contains(&s.name) {
                names.push(s.name.clone());
            }
        }
    }
    names
}

/// "measured: METHOD" or "not measured: WHY" or "not collected".
fn how(run: &Run, section: &str) -> (bool, String) {
    match run.section(section) {
        Some(s) => match &s.status {
            Status::Measured => (true, s.method.clone()),
            Status::NotMeasured { why } => (false, format!("not measured: {why}")),
        },
        None => (false, "not measured: this run has no such section".into()),
    }
}

/// Per run, whether `section` was measured and how (or why not), prefixed
/// with the run's name when there are several.
fn hows(runs: &[Run], section: &str) -> Vec<(bool, String)> {
    runs.iter()
        .enumerate()
        .map(|(i, run)| {
            let (ok, text) = how(run, section);
            match runs.len() {
                1 => (ok, text),
                _ => (ok, format!("{}: {text}", run_label(i, run))),
            }
        })
        .collect()
}

/// The comparison cell text and its class.
fn verdict(j: &lever_bench::compare::Judgement) -> (&'static str, String) {
    let pct = j.change_pct.map_or(String::new(), |p| format!("{p:+.1} %"));
    let (class, word) = match j.verdict {
        Verdict::Improved => ("better", "significantly better"),
        Verdict::Regressed => ("worse", "significantly worse (regression)"),
        Verdict::WorseWithinThreshold => ("worse", "significantly worse, within threshold"),
        Verdict::Unchanged => ("same", "no significant change"),
        Verdict::NotCompared => ("nc", "not judged"),
        Verdict::NotJudged => ("nc", "not judged: a run was taken under load or throttling"),
    };
    let p = j.p_value.map_or(String::new(), |p| format!(", p={p:.3}"));
    (class, format!("{pct} {word}{p}").trim().to_string())
}

/// A value with its unit for tables.
fn value(v: Option<f64>, unit: &str) -> String {
    v.map_or("—".into(), |v| format!("{} {unit}", svg::short(v)))
}
