//! `lever results list|show|trend|export|import`.

use crate::render::num::or_dash;
use crate::render::Table;
use lever_results::model::{Run, Status};
use lever_results::ops::{Shown, Stored};
use lever_results::{Exported, RunSummary, TrendPoint};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A figure as people read it: at most three decimals, no trailing zeros
/// (`--json` has the exact value).
fn figure(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// `k=v,k=v`, or `-`.
fn labels(l: &BTreeMap<String, String>) -> String {
    if l.is_empty() {
        return "-".into();
    }
    l.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// One row per stored run.
pub fn list(runs: &Vec<RunSummary>) -> String {
    if runs.is_empty() {
        return "no runs stored (lever results import RUN.json, or lever report collect)\n".into();
    }
    let mut t = Table::new(&["RUN", "BOARD", "COLLECTED", "KERNEL", "LEVER", "METRICS"]);
    for r in runs {
        t.row(vec![
            r.id.to_string(),
            r.board.clone(),
            r.collected_at.clone(),
            or_dash(r.kernel_release.as_deref()),
            r.lever_version.clone(),
            r.metrics.to_string(),
        ]);
    }
    t.render()
}

/// The device, then each section: how it was measured and its metrics, or
/// why it was not.
pub fn show(shown: &Shown) -> String {
    let run: &Run = &shown.run;
    let d = &run.device;
    let mut s = String::new();
    let _ = writeln!(s, "collected  {}", run.collected_at);
    for (k, v) in [
        ("board", &d.board),
        ("soc", &d.soc),
        ("host", &d.hostname),
        ("arch", &d.arch),
        ("kernel", &d.kernel_release),
        ("cmdline", &d.cmdline),
    ] {
        let _ = writeln!(s, "{k:<10} {}", or_dash(v.as_deref()));
    }
    let _ = writeln!(s, "{:<10} {}", "cpus", d.cpus.len());
    for section in &run.sections {
        match &section.status {
            Status::Measured => {
                let _ = writeln!(s, "\n{}: {}", section.name, section.method);
                if section.metrics.is_empty() {
                    continue;
                }
                let mut t = Table::new(&["METRIC", "VALUE", "UNIT", "LABELS", "SAMPLES"]);
                for m in &section.metrics {
                    t.row(vec![
                        m.name.clone(),
                        figure(m.value),
                        m.unit.clone(),
                        labels(&m.labels),
                        m.samples.len().to_string(),
                    ]);
                }
                s.push_str(&t.render());
            }
            Status::NotMeasured { why } => {
                let _ = writeln!(s, "\n{}: not measured: {why}", section.name);
            }
        }
    }
    s
}

/// The metric's values, oldest first.
pub fn trend(points: &Vec<TrendPoint>) -> String {
    if points.is_empty() {
        return "no stored run has this metric (with these filters)\n".into();
    }
    let mut t = Table::new(&["RUN", "BOARD", "COLLECTED", "VALUE", "UNIT", "LABELS"]);
    for p in points {
        t.row(vec![
            p.run.to_string(),
            p.board.clone(),
            p.collected_at.clone(),
            figure(p.value),
            p.unit.clone(),
            labels(&p.labels),
        ]);
    }
    t.render()
}

/// The files written.
pub fn exported(e: &Exported) -> String {
    let mut s = format!(
        "exported {} runs, {} metrics, {} samples to {}\n",
        e.runs,
        e.metrics,
        e.samples,
        e.dir.display()
    );
    for f in &e.files {
        let _ = writeln!(s, "  {}", f.display());
    }
    s
}

/// The stored run's id.
pub fn stored(s: &Stored) -> String {
    if s.already_stored {
        return format!(
            "run {} ({}, collected {}) is already in {}: nothing stored\n",
            s.id, s.board, s.collected_at, s.store
        );
    }
    format!(
        "stored run {} ({}, collected {}) in {}\n",
        s.id, s.board, s.collected_at, s.store
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_drop_trailing_zeros_but_keep_three_decimals() {
        assert_eq!(figure(0.1 + 0.2), "0.3");
        assert_eq!(figure(12_345.678_9), "12345.679");
        assert_eq!(figure(42.0), "42");
        assert_eq!(figure(-0.0001), "0");
    }
}
