//! One or more runs as a page (HTML), Markdown tables and JSON. The first
//! run is the base every other run is compared with ([`crate::compare`]).

mod benchmarks;
mod conditions;
mod html;
mod markdown;
pub mod names;
pub mod summary;
pub mod svg;
pub mod units;

use crate::compare::{self, Judging, Row};
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
    /// The base's reruns that gave the spread a change must leave
    /// (`--base-rerun`; 0 without).
    pub base_reruns: usize,
    /// Why each other rerun was left out of the spread.
    pub reruns_left_out: Vec<String>,
    /// Per later run, the caches it and the base reached differently.
    pub cache_reach: Vec<Vec<lever_bench::compare::CacheReach>>,
    /// Per later run, why its and the base's `lat_fs-*-create` depend on
    /// what ran before them (not judged unless forced).
    pub file_history: Vec<Option<String>>,
}

/// The runs and their comparison as JSON.
pub fn json(runs: &[Run]) -> String {
    json_with(runs, Judging::default())
}

/// [`json`], the later runs judged as `judging` says: `force` judges
/// changes even against a run taken under load or throttling, and the
/// base's reruns give the spread a change must leave.
pub fn json_with(runs: &[Run], judging: Judging<'_>) -> String {
    let judged = (runs.len() > 1).then(|| compare::judged(runs, compare::THRESHOLD_PCT, judging));
    let doc = match judged {
        Some(j) => Document {
            runs,
            threshold_pct: compare::THRESHOLD_PCT,
            comparison: j.rows,
            conditions: j.conditions,
            base_reruns: j.base_reruns,
            reruns_left_out: j.reruns_left_out,
            cache_reach: j.cache_reach,
            file_history: j.file_history,
        },
        None => Document {
            runs,
            threshold_pct: compare::THRESHOLD_PCT,
            comparison: Vec::new(),
            conditions: Vec::new(),
            base_reruns: 0,
            reruns_left_out: Vec::new(),
            cache_reach: Vec::new(),
            file_history: Vec::new(),
        },
    };
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

/// What the base's reruns did to the judgement, as lines of
/// [`condition_lines`]: how many counted, and each one left out.
fn rerun_lines(judged: &compare::Judged) -> Vec<(bool, String)> {
    let mut lines = Vec::new();
    if judged.base_reruns > 0 {
        let n = judged.base_reruns;
        lines.push((
            false,
            format!(
                "the base and {n} rerun{} of its build give the spread one more run is expected in: a change inside it is not called one",
                if n == 1 { "" } else { "s" }
            ),
        ));
    }
    lines.extend(
        judged
            .reruns_left_out
            .iter()
            .map(|why| (true, format!("WARNING: {why}"))),
    );
    lines
}

/// Per later run, its conditions against the base's as lines of text: a
/// heading line per run, then what differs and what disturbed a run.
fn condition_lines(runs: &[Run], judged: &compare::Judged) -> Vec<(String, Vec<(bool, String)>)> {
    judged
        .conditions
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut lines: Vec<(bool, String)> = c
                .disturbed
                .iter()
                .map(|d| (true, format!("WARNING: {d}")))
                .collect();
            if let Some(note) = c.judging_note() {
                lines.push((true, note));
            }
            lines.extend(
                judged
                    .cache_reach
                    .get(i)
                    .into_iter()
                    .flatten()
                    .map(|r| (true, r.warning(c.forced))),
            );
            if let Some(Some(why)) = judged.file_history.get(i) {
                lines.push((
                    true,
                    lever_bench::compare::file_history_warning(why, c.forced),
                ));
            }
            for d in &c.differences {
                lines.push((false, format!("{}: {} → {}", d.what, d.base, d.new)));
            }
            lines.extend(rerun_lines(judged));
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

/// The name a run is filed under, as `lever results list` shows it: the
/// board, else the host name, else `unknown`.
pub fn board_name(run: &Run) -> String {
    lever_results::store::board_name(run)
}

/// A run's short name: `#1 board (time)`.
fn run_label(i: usize, run: &Run) -> String {
    format!("#{} {} ({})", i + 1, board_name(run), run.collected_at)
}

/// A section's heading.
fn section_title(name: &str) -> String {
    match name {
        "device" => "Device".into(),
        "boot" => "Boot (seed 000 §8.3)".into(),
        "memory" => "Memory and CPU per use case (seed 000 §8.3, §7.1)".into(),
        "latency" => "RT latency (seed 000 §3.6)".into(),
        "bench" => "Benchmarks (seed 002)".into(),
        "markers" => "Trace marker KPIs".into(),
        "daemon" => "Resource manager daemon".into(),
        other => other.to_string(),
    }
}

/// The runs' conditions as rows (what, a warning?, one cell per run):
/// what disturbed any run first, then every run's lines in first-seen
/// order, `—` where a run lacks one,
/// `not recorded` for a run without conditions; `None` when no run has
/// any.
#[allow(clippy::type_complexity)]
fn conditions_table(runs: &[Run]) -> Option<Vec<(String, bool, Vec<String>)>> {
    if runs.iter().all(|r| r.conditions.is_none()) {
        return None;
    }
    let per_run: Vec<Option<Vec<conditions::Line>>> = runs
        .iter()
        .map(|r| r.conditions.as_ref().map(conditions::lines))
        .collect();
    let mut rows: Vec<(String, bool, Vec<String>)> = Vec::new();
    for (i, lines) in per_run.iter().enumerate() {
        for l in lines.iter().flatten() {
            let at = match rows.iter().position(|r| r.0 == l.what) {
                Some(at) => at,
                None => {
                    let cells = per_run
                        .iter()
                        .map(|p| match p {
                            Some(_) => "—".to_string(),
                            None => "not recorded (a Lever that kept no conditions)".to_string(),
                        })
                        .collect();
                    rows.push((l.what.clone(), false, cells));
                    rows.len() - 1
                }
            };
            rows[at].1 |= l.warn;
            rows[at].2[i] = l.value.clone();
        }
    }
    // What disturbed any run first.
    rows.sort_by_key(|r| !r.1);
    Some(rows)
}

/// A comparison row's readable name.
fn row_name(row: &Row) -> String {
    names::readable(&row.name, &row.labels)
}

/// Notes on daemon sections that did not come from this machine's
/// kernel: the daemon's status names its root, and a root other than `/`
/// is a simulated board (or a copied tree), whose figures are that tree's.
fn daemon_note(runs: &[Run]) -> Vec<String> {
    runs.iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let s = r.section("daemon")?;
            let root = s.detail.get("root")?.as_str()?;
            if root == "/" {
                return None;
            }
            let who = match s.detail.get("simulated_board").and_then(|v| v.as_str()) {
                Some(board) => format!("the simulated board {board} (lever sim) at {root}"),
                None => format!("the kernel files under {root} (a simulated board or a copied tree)"),
            };
            let prefix = if runs.len() > 1 {
                format!("{}: ", run_label(i, r))
            } else {
                String::new()
            };
            Some(format!(
                "{prefix}this daemon serves {who}, not this machine's /sys: its resources and requests are that tree's"
            ))
        })
        .collect()
}

/// A use case's CPU, from `lever top`'s figures the collector kept.
#[derive(Debug, Clone, PartialEq)]
struct UseCaseCpu {
    /// Its processes together, % of one core.
    usecase_pct: f64,
    /// Every core together, %.
    total_pct: f64,
    /// What every core together can give, % (N × 100).
    capacity_pct: Option<f64>,
    /// Its busiest processes by name, % of one core (at most five).
    processes: Vec<(String, f64)>,
}

/// One use case's memory and CPU.
#[derive(Debug, Clone, PartialEq)]
struct UseCase {
    name: String,
    apps_framework_kb: Option<f64>,
    free_kb: Option<f64>,
    cpu: Result<UseCaseCpu, String>,
}

impl UseCase {
    /// The table's cells: use case, apps + framework, free, its CPU, all
    /// cores, its busiest processes.
    fn cells(&self) -> [String; 6] {
        let (mine, total, procs) = match &self.cpu {
            Ok(c) => (
                format!("{} % of one core", units::percent(c.usecase_pct)),
                match c.capacity_pct {
                    Some(cap) => format!(
                        "{} % of {} %",
                        units::percent(c.total_pct),
                        units::number(cap)
                    ),
                    None => format!("{} %", units::percent(c.total_pct)),
                },
                c.processes
                    .iter()
                    .map(|(n, p)| format!("{n} {} %", units::percent(*p)))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            Err(why) => (why.clone(), String::new(), String::new()),
        };
        [
            self.name.clone(),
            units::value_or_dash(self.apps_framework_kb, "kB"),
            units::value_or_dash(self.free_kb, "kB"),
            mine,
            total,
            procs,
        ]
    }
}

/// The use cases of a run's memory section (`after boot` left out: no
/// command ran), with their CPU where the run has it.
fn usecases(run: &Run) -> Vec<UseCase> {
    let Some(section) = run.section("memory") else {
        return Vec::new();
    };
    let Some(columns) = section.detail.get("columns").and_then(|c| c.as_array()) else {
        return Vec::new();
    };
    let metric = |name: &str, uc: &str| {
        section
            .metrics
            .iter()
            .find(|m| m.name == name && m.labels.get("usecase").map(String::as_str) == Some(uc))
    };
    columns
        .iter()
        .filter_map(|col| {
            let name = col["usecase"].as_str()?;
            if name == "after boot" {
                return None;
            }
            if let Some(why) = col.get("not_measured").and_then(|v| v.as_str()) {
                return Some(UseCase {
                    name: name.into(),
                    apps_framework_kb: None,
                    free_kb: None,
                    cpu: Err(format!("not measured: {why}")),
                });
            }
            let cpu = match (metric("cpu.usecase", name), metric("cpu.total", name)) {
                (Some(mine), Some(total)) => {
                    let mut processes: Vec<(String, f64)> = section
                        .metrics
                        .iter()
                        .filter(|m| {
                            m.name == "cpu.process"
                                && m.labels.get("usecase").map(String::as_str) == Some(name)
                        })
                        .map(|m| {
                            (
                                m.labels.get("process").cloned().unwrap_or_default(),
                                m.value,
                            )
                        })
                        .collect();
                    processes.sort_by(|a, b| b.1.total_cmp(&a.1));
                    processes.truncate(5);
                    Ok(UseCaseCpu {
                        usecase_pct: mine.value,
                        total_pct: total.value,
                        capacity_pct: col["cpu"]["capacity_pct"].as_f64(),
                        processes,
                    })
                }
                _ => Err("no CPU figures in this run (collected by a Lever without `lever top` in report collect)".into()),
            };
            Some(UseCase {
                name: name.into(),
                apps_framework_kb: metric("memory.apps_framework", name).map(|m| m.value),
                free_kb: metric("memory.free", name).map(|m| m.value),
                cpu,
            })
        })
        .collect()
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
    let each: Vec<(bool, String)> = runs.iter().map(|r| how(r, section)).collect();
    // The same for every run: said once.
    if runs.len() > 1 && each.windows(2).all(|w| w[0] == w[1]) {
        let (ok, text) = each[0].clone();
        return vec![(ok, format!("every run: {text}"))];
    }
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
        Verdict::NotJudged => ("nc", "not judged: a run was taken under load or throttling, or the machine's own speed changed"),
        Verdict::WithinDrift => ("same", "within the drift between a run's own passes"),
        Verdict::WithinReruns => ("same", "within what reruns of the base's build give"),
    };
    let p = j.p_value.map_or(String::new(), |p| format!(", p={p:.3}"));
    (class, format!("{pct} {word}{p}").trim().to_string())
}

/// A value with its unit for tables, in human units.
fn value(v: Option<f64>, unit: &str) -> String {
    units::value_or_dash(v, unit)
}
