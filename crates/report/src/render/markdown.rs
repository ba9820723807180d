//! Markdown tables for wikis and merge requests: the runs, the summary,
//! the significant changes, the conditions, and per section its method
//! (or why not) and its metrics (the benchmarks as seed 002's tables).
//! Text from a run is escaped so that it cannot open a link, an image,
//! inline HTML or a new table cell — with Markdown's backslash escapes,
//! not HTML entities (a wiki shows `&#39;` as it is).

use super::{
    benchmarks, board_name, condition_lines, daemon_note, hows, names, row_name, section_names,
    section_title, summary, units, usecases, value, verdict,
};
use crate::compare::{self, Judging, Row};
use crate::model::Run;
use std::fmt::Write as _;

/// Escape run text for a Markdown table cell: a backslash before what
/// would start a cell, a link, an image, emphasis, code, inline HTML
/// (`<`) or an entity (`&`); newlines become spaces. CommonMark (and
/// GitHub's, GitLab's Markdown) show a backslash-escaped character as
/// itself, so `lever-cpu's` stays `lever-cpu's`.
pub fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '!' | '#' | '<' | '>' | '&' => {
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
    markdown_with(runs, Judging::default())
}

/// [`markdown`], the later runs judged as `judging` says: `force` judges
/// changes even against a run taken under load or throttling, and the
/// base's reruns give the spread a change must leave.
pub fn markdown_with(runs: &[Run], judging: Judging<'_>) -> String {
    let judged = compare::judged(runs, compare::THRESHOLD_PCT, judging);
    let rows = &judged.rows;
    let title = match runs {
        [one] => format!("Lever report: {}", md(&board_name(one))),
        _ => format!("Lever report: {} runs compared", runs.len()),
    };
    let mut m = format!(
        "# {title}\n\n| run | board | SoC | kernel | collected at |\n|---|---|---|---|---|\n"
    );
    for (i, r) in runs.iter().enumerate() {
        let o = |v: &Option<String>| md(v.as_deref().unwrap_or("—"));
        let _ = writeln!(
            m,
            "| #{} | {} | {} | {} | {} |",
            i + 1,
            md(&board_name(r)),
            o(&r.device.soc),
            o(&r.device.kernel_release),
            md(&r.collected_at)
        );
    }
    if runs.len() > 1 {
        m.push_str("\n## Conditions against #1\n");
        for (title, lines) in condition_lines(runs, &judged) {
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
    }
    strip(&mut m, runs);
    if runs.len() > 1 {
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
                let _ = writeln!(m, "| {} | **{}** |", md(&row_name(r)), cells.join("; "));
            }
        }
    }
    conditions_panel(&mut m, runs);
    for name in section_names(runs) {
        let _ = writeln!(m, "\n## {}\n", md(&section_title(&name)));
        for (_, text) in hows(runs, &name) {
            let _ = writeln!(m, "- {}", md(&text));
        }
        match name.as_str() {
            "bench" => {
                bench(&mut m, runs, rows);
                continue;
            }
            "memory" => usecase_table(&mut m, runs),
            "daemon" => {
                for note in daemon_note(runs) {
                    let _ = writeln!(m, "\n> **Note:** {}", md(&note));
                }
            }
            _ => {}
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
        let mut negatives: Vec<&'static str> = Vec::new();
        for row in rows {
            let _ = write!(m, "| {} |", md(&row_name(row)));
            for (i, v) in row.values.iter().enumerate() {
                let why = names::why_negative(&row.name).filter(|_| v.is_some_and(|v| v < 0.0));
                if let Some(why) = why.filter(|w| !negatives.contains(w)) {
                    negatives.push(why);
                }
                let _ = write!(
                    m,
                    " {}{} |",
                    md(&value(*v, &row.unit)),
                    if why.is_some() { " \\*" } else { "" }
                );
                if i > 0 {
                    let _ = write!(m, " {} |", verdict_cell(row.vs_base[i - 1].as_ref()));
                }
            }
            m.push('\n');
        }
        for why in negatives {
            let _ = writeln!(m, "\n\\* {}", md(why));
        }
    }
    m
}

/// A comparison cell: the verdict, bold when significant; `—` when
/// there is none.
fn verdict_cell(j: Option<&lever_bench::compare::Judgement>) -> String {
    j.map_or("—".into(), |j| {
        let (class, t) = verdict(j);
        if matches!(class, "better" | "worse") {
            format!("**{}**", md(&t))
        } else {
            md(&t)
        }
    })
}

/// The summary figures: one row per figure, one column per run.
fn strip(m: &mut String, runs: &[Run]) {
    let per_run: Vec<Vec<summary::Figure>> = runs.iter().map(summary::figures).collect();
    let Some(first) = per_run.first() else {
        return;
    };
    m.push_str("\n## Summary\n\n| figure |");
    for i in 0..runs.len() {
        let _ = write!(m, " #{} |", i + 1);
    }
    m.push_str("\n|---|");
    m.push_str(&"---|".repeat(runs.len()));
    m.push('\n');
    for (k, f) in first.iter().enumerate() {
        let _ = write!(m, "| {} |", md(f.label));
        for figs in &per_run {
            let cell = match &figs[k].value {
                Ok(v) => format!("**{}**", md(v)),
                Err(why) => md(why),
            };
            let _ = write!(m, " {cell} |");
        }
        m.push('\n');
    }
}

/// Each run's conditions: one table, a column per run.
fn conditions_panel(m: &mut String, runs: &[Run]) {
    m.push_str("\n## Conditions\n");
    let Some(table) = super::conditions_table(runs) else {
        m.push_str("\nnot recorded: the runs were collected by a Lever that kept no conditions\n");
        return;
    };
    m.push_str("\n| condition |");
    for i in 0..runs.len() {
        let _ = write!(m, " #{} |", i + 1);
    }
    m.push_str("\n|---|");
    m.push_str(&"---|".repeat(runs.len()));
    m.push('\n');
    for (what, warn, cells) in table {
        let (a, b) = if warn { ("**", "**") } else { ("", "") };
        let _ = write!(m, "| {a}{}{b} |", md(&what));
        for c in cells {
            let _ = write!(m, " {} |", md(&c));
        }
        m.push('\n');
    }
}

/// Each use case's memory and CPU.
fn usecase_table(m: &mut String, runs: &[Run]) {
    for (i, r) in runs.iter().enumerate() {
        let ucs = usecases(r);
        if ucs.is_empty() {
            continue;
        }
        let _ = writeln!(
            m,
            "\nUse cases of {}: memory at the sample with the least free, CPU over the use case\n\n\
             | use case | apps + framework | free | CPU of its processes | all cores | busiest processes |\n|---|---:|---:|---:|---:|---|",
            md(&super::run_label(i, r))
        );
        for u in ucs {
            let cells: Vec<String> = u.cells().iter().map(|c| md(c)).collect();
            let _ = writeln!(m, "| {} |", cells.join(" | "));
        }
    }
}

/// Seed 002's tables, one per category.
fn bench(m: &mut String, runs: &[Run], rows: &[Row]) {
    for t in benchmarks::tables(runs) {
        let _ = writeln!(m, "\n### {}\n", md(&t.title));
        m.push('|');
        for c in benchmarks::columns(runs.len()) {
            let _ = write!(m, " {c} |");
        }
        m.push_str("\n|---|---|");
        m.push_str(&"---:|".repeat(runs.len() * 4 - 1));
        m.push('\n');
        for test in &t.tests {
            let row = rows
                .iter()
                .find(|r| r.name == test.id && r.labels.is_empty());
            let _ = write!(
                m,
                "| {} | {} |",
                md(&test.name),
                md(units::unit(&test.unit))
            );
            for (i, c) in test.cells.iter().enumerate() {
                match c {
                    Some(c) => {
                        let _ = write!(m, " {} | {} | {} |", md(&c.text()), c.n(), md(&c.ci()));
                    }
                    None => m.push_str(" — | | |"),
                }
                if i > 0 {
                    let _ = write!(
                        m,
                        " {} |",
                        verdict_cell(row.and_then(|r| r.vs_base[i - 1].as_ref()))
                    );
                }
            }
            m.push('\n');
        }
        if t.tests.iter().any(|t| t.id == "bench.dhrystone") {
            for (name, unit, cells) in benchmarks::dhrystone_rows(runs) {
                let _ = write!(m, "| {} | {} |", md(&name), md(&unit));
                for (i, c) in cells.iter().enumerate() {
                    let _ = write!(m, " {} | | |", md(c));
                    if i > 0 {
                        m.push_str(" — |");
                    }
                }
                m.push('\n');
            }
        }
    }
    for (i, r) in runs.iter().enumerate() {
        let skipped = r
            .section("bench")
            .and_then(|s| s.detail.get("skipped"))
            .and_then(|v| v.as_array());
        for t in skipped.into_iter().flatten() {
            let _ = writeln!(
                m,
                "\n- {}{} skipped: {}",
                if runs.len() > 1 {
                    format!("#{} ", i + 1)
                } else {
                    String::new()
                },
                md(t["test"].as_str().unwrap_or("?")),
                md(t["why"].as_str().unwrap_or("?"))
            );
        }
    }
}
