//! `lever latency kpi`: seed 000 §3.6's KPI blocks (one column per RT
//! core), as a text table or Markdown, and the pass/fail verdict.

use crate::render::num::{fixed_or_dash, or_dash};
use crate::render::Table;
use lever_latency::kpi::{KpiBlock, KpiReport};
use lever_latency::stats::Percentile;

fn rows(b: &KpiBlock, pass_us: Option<u64>) -> Vec<Vec<String>> {
    let head = std::iter::once("RT cores".to_string())
        .chain(b.cells.iter().map(|c| match c.cpu {
            Some(cpu) => format!("Core{cpu}"),
            None => "unpinned".to_string(),
        }))
        .collect();
    let row = |name: &str, f: &dyn Fn(&lever_latency::kpi::KpiCell) -> String| {
        std::iter::once(name.to_string())
            .chain(b.cells.iter().map(f))
            .collect::<Vec<String>>()
    };
    let mut rows = vec![
        head,
        row("Minimum latencies (in microseconds)", &|c| {
            or_dash(c.min_us)
        }),
        row("Average latencies (in microseconds)", &|c| {
            fixed_or_dash(c.avg_us, 2)
        }),
        row("Maximum latencies (in microseconds)", &|c| {
            or_dash(c.max_us)
        }),
        row("p99.9 (in microseconds)", &|c| match c.p99_9 {
            Some(Percentile::Us(v)) => v.to_string(),
            Some(Percentile::AtLeastUs(v)) => format!(">={v}"),
            None => "-".into(),
        }),
        row("Samples", &|c| c.samples.to_string()),
    ];
    if let Some(limit) = pass_us {
        rows.push(row(&format!("Max < {limit} µs"), &|c| match c.pass {
            Some(true) => "PASS".into(),
            _ => "FAIL".into(),
        }));
    }
    rows
}

fn text_table(rows: &[Vec<String>]) -> String {
    // Table wants static headers; the first row is the heading here, so
    // the headers are blank and their line is dropped.
    let mut t = Table::new(&vec![""; rows[0].len()]);
    rows.iter().for_each(|r| t.row(r.clone()));
    let text = t.render();
    text.split_once('\n')
        .map_or(text.clone(), |(_, rest)| rest.to_string())
}

fn markdown_table(rows: &[Vec<String>]) -> String {
    let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
    let rule = format!("|{}\n", " --- |".repeat(rows[0].len()));
    rows.iter()
        .enumerate()
        .map(|(i, r)| if i == 0 { line(r) + &rule } else { line(r) })
        .collect()
}

/// The KPI report; `markdown` for a Markdown table per block.
pub fn report(k: &KpiReport, markdown: bool) -> String {
    let mut out = String::new();
    for b in &k.blocks {
        let title = format!("KPIs for lever latency with {}", b.condition);
        let rows = rows(b, k.pass_us);
        out += &if markdown {
            format!("### {title}\n\n{}\n", markdown_table(&rows))
        } else {
            format!("{title}\n{}\n", text_table(&rows))
        };
        if let lever_latency::report::Ended::Interrupted = b.report.ended {
            out += "(ended: interrupted)\n\n";
        }
        // -b/--analyze: that phase's explanations and trace file.
        let why = super::breach::all(&b.report);
        if !why.is_empty() {
            out += why.trim_start_matches('\n');
            out += "\n";
        }
    }
    match (k.pass, k.pass_us) {
        (Some(true), Some(l)) => out += &format!("PASS: every latency under {l} µs\n"),
        (Some(false), Some(l)) => out += &format!("FAIL: a latency of {l} µs or more\n"),
        _ => {}
    }
    out
}
