//! Markdown tables for wikis and merge requests: the runs, the significant
//! changes, and per section its method (or why not) and its metrics. Text
//! from a run is escaped so that it cannot open a link, an image, inline
//! HTML or a new table cell.

use super::{condition_lines, hows, section_names, value, verdict};
use crate::compare::{self, Row};
use crate::model::Run;
use std::fmt::Write as _;

/// Escape run text for a Markdown table cell: HTML's entities (Markdown
/// passes inline HTML through), then backslashes before what would start
/// a cell, a link, an image, emphasis or code; newlines become spaces.
pub fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match (c, super::entity(c)) {
            ('\n' | '\r', _) => out.push(' '),
            (_, Some(e)) => out.push_str(e),
            ('|' | '\\' | '`' | '*' | '_' | '[' | ']' | '!' | '#', _) => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Render `runs` (base first) as Markdown.
pub fn markdown(runs: &[Run]) -> String {
    markdown_with(runs, false)
}

/// [`markdown`]; with `force`, changes are judged even against a run
/// taken under load or throttling.
pub fn markdown_with(runs: &[Run], force: bool) -> String {
    let (rows, conditions) = compare::compare_judged(runs, compare::THRESHOLD_PCT, force);
    let mut m = String::from(
        "# Lever report\n\n| run | board | SoC | kernel | collected at |\n|---|---|---|---|---|\n",
    );
    for (i, r) in runs.iter().enumerate() {
        let o = |v: &Option<String>| md(v.as_deref().unwrap_or("—"));
        let _ = writeln!(
            m,
            "| #{} | {} | {} | {} | {} |",
            i + 1,
            o(&r.device.board),
            o(&r.device.soc),
            o(&r.device.kernel_release),
            md(&r.collected_at)
        );
    }
    if runs.len() > 1 {
        m.push_str("\n## Conditions against #1\n");
        for (title, lines) in condition_lines(runs, &conditions) {
            let _ = writeln!(m, "\n{}\n", md(&title));
            for (warn, line) in lines {
                let _ = writeln!(
                    m,
                    "- {}{}",
                    if warn { "**" } else { "" },
                    md(&line) + if warn { "**" } else { "" }
                );
            }
        }
        m.push_str("\n## Significant changes against #1\n\n");
        let sig: Vec<&Row> = rows.iter().filter(|r| r.significant()).collect();
        if sig.is_empty() {
            m.push_str("None.\n");
        } else {
            m.push_str("| metric | change |\n|---|---|\n");
            for r in sig {
                let cells: Vec<String> = r
                    .vs_base
                    .iter()
                    .enumerate()
                    .filter_map(|(i, j)| {
                        j.as_ref()
                            .map(|j| format!("#{}: {}", i + 2, md(&verdict(j).1)))
                    })
                    .collect();
                let _ = writeln!(m, "| {} | **{}** |", md(&r.key()), cells.join("; "));
            }
        }
    }
    for name in section_names(runs) {
        let _ = writeln!(m, "\n## {}\n", md(&name));
        for (_, text) in hows(runs, &name) {
            let _ = writeln!(m, "- {}", md(&text));
        }
        let rows: Vec<&Row> = rows.iter().filter(|r| r.section == name).collect();
        if rows.is_empty() {
            continue;
        }
        m.push_str("\n| metric |");
        for i in 0..runs.len() {
            let _ = write!(m, " #{} |", i + 1);
            if i > 0 {
                let _ = write!(m, " #{} vs #1 |", i + 1);
            }
        }
        m.push_str("\n|---|");
        m.push_str(&"---:|".repeat(runs.len() * 2 - 1));
        m.push('\n');
        for row in rows {
            let _ = write!(m, "| {} |", md(&row.key()));
            for (i, v) in row.values.iter().enumerate() {
                let _ = write!(m, " {} |", md(&value(*v, &row.unit)));
                if i > 0 {
                    let text = row.vs_base[i - 1].as_ref().map_or("—".into(), |j| {
                        let (class, t) = verdict(j);
                        if matches!(class, "better" | "worse") {
                            format!("**{}**", md(&t))
                        } else {
                            md(&t)
                        }
                    });
                    let _ = write!(m, " {text} |");
                }
            }
            m.push('\n');
        }
    }
    m
}
