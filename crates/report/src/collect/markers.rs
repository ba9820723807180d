//! The `markers` section: use-case KPIs from trace markers
//! (`lever trace analyze --kpi NAME=FROM..TO`, `lever-trace-analysis`):
//! one metric per KPI, the mean of its occurrences with every occurrence
//! as a sample.

use super::skipped;
use crate::model::{Better, Metric, Section};
use crate::ReportError;
use lever_trace_analysis::{analyze_source, KpiSpec, Options};
use std::path::Path;

/// Analyze `trace` for `kpis`, if a trace is given.
pub fn collect(trace: Option<&Path>, kpis: &[String]) -> Result<Section, ReportError> {
    let Some(path) = trace else {
        return Ok(skipped("markers", "no --trace FILE given"));
    };
    let bad = |message: String| ReportError::BadFile {
        path: path.to_path_buf(),
        message,
    };
    let mut opts = Options {
        markers: true,
        threads: 1,
        ..Options::default()
    };
    for k in kpis {
        opts.kpis
            .push(KpiSpec::parse(k).ok_or_else(|| ReportError::BadOption {
                option: "--kpi",
                value: k.clone(),
                expected: "NAME=FROM..TO, e.g. record=Connect..FirstVidFrame".into(),
            })?);
    }
    let input = lever_trace_input::open(path).map_err(|e| bad(e.to_string()))?;
    let report = analyze_source(input, &opts, |_| {}).map_err(|e| bad(e.to_string()))?;
    let Some(markers) = report.markers else {
        return Ok(skipped(
            "markers",
            "the trace analysis returned no marker report",
        ));
    };
    let method = format!(
        "lever-trace-analysis on {} (`lever trace analyze --markers{}`): a KPI is the time from its first marker to its last, per occurrence",
        path.display(),
        kpis.iter().map(|k| format!(" --kpi {k}")).collect::<String>()
    );
    let mut s = Section::measured("markers", &method);
    s.metrics.push(Metric::new(
        "markers.count",
        "markers",
        markers.markers as f64,
    ));
    let mut missing = Vec::new();
    for k in &markers.kpis {
        let ms: Vec<f64> = k
            .occurrences
            .iter()
            .map(|o| o.total_ns as f64 / 1e6)
            .collect();
        if ms.is_empty() {
            missing.push(format!(
                "{}: no occurrence of {} .. {}",
                k.name, k.from, k.to
            ));
            continue;
        }
        let mut m = Metric::new(
            "markers.kpi",
            "ms",
            ms.iter().sum::<f64>() / ms.len() as f64,
        )
        .label("kpi", &k.name);
        m.better = Some(Better::Lower);
        if ms.len() > 1 {
            m.samples = ms;
        }
        s.metrics.push(m);
    }
    s.detail = serde_json::json!({ "kpis_without_occurrence": missing, "malformed_lines": report.summary.malformed });
    Ok(s)
}
