//! The page: one self-contained HTML document, inline CSS and inline SVG,
//! no script and no external resource, so it opens from `file://`, from a
//! board's web server and from a mail attachment alike.

use super::svg::{self, Bar, Group, Histogram, Stack, Step};
use super::{
    benchmarks, board_name, condition_lines, daemon_note, esc, hows, names, row_name, run_label,
    section_names, summary, units, usecases, value, verdict,
};
use crate::compare::{self, Judging, Row};
use crate::model::Run;
use std::fmt::Write as _;

const CSS: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:24px;color:#222;max-width:1200px}\
h1{font-size:24px}h2{font-size:19px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}\
table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}\
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}\
.method{color:#555;font-size:13px;margin:4px 0}.not{color:#a33;font-size:13px;margin:4px 0}\
.worse{background:#fbd5d5}.better{background:#d5f5dc}.same{color:#666}.nc{color:#999}\
svg.chart{display:block;margin:10px 0;font:11px sans-serif;background:#fff}svg .t{font-size:13px;font-weight:bold}\
svg .grid{stroke:#e5e5e5}svg .axis{fill:none;stroke:#333}svg .whisker{stroke:#222;fill:none}svg .in{fill:#fff}\
code{font-size:12px;background:#f6f6f6;padding:1px 3px}\
.strip{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}.fig{border:1px solid #ddd;border-radius:6px;padding:8px 12px;min-width:150px;max-width:260px;background:#fafafa}\
.fig .k{font-size:12px;color:#555}.fig .v{font-size:22px;font-weight:600;font-variant-numeric:tabular-nums}.fig .na{font-size:12px;color:#a33;max-height:4.4em;overflow:hidden}\
.note{background:#fff6d5;border-left:4px solid #e0b000;padding:4px 8px;font-size:13px}.warn{color:#a33;font-weight:600}\
td.neg{color:#a33}h3{font-size:15px;margin:18px 0 4px}";

/// Render `runs` (base first) as one HTML page.
pub fn html(runs: &[Run]) -> String {
    html_with(runs, Judging::default())
}

/// [`html`], the later runs judged as `judging` says: `force` judges
/// changes even against a run taken under load or throttling, and the
/// base's reruns give the spread a change must leave.
pub fn html_with(runs: &[Run], judging: Judging<'_>) -> String {
    let title = match runs {
        [one] => format!("Lever report: {}", board_name(one)),
        _ => format!("Lever report: {} runs compared", runs.len()),
    };
    let judged = compare::judged(runs, compare::THRESHOLD_PCT, judging);
    let rows = &judged.rows;
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
         <title>{}</title><style>{CSS}</style></head><body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    runs_table(&mut h, runs);
    if runs.len() > 1 {
        h.push_str("<h2>Conditions against #1</h2>\n");
        for (title, lines) in condition_lines(runs, &judged) {
            let _ = writeln!(
                h,
                "<p class=\"method\"><b>{}</b></p><ul class=\"conditions\">",
                esc(&title)
            );
            for (warn, line) in lines {
                let class = if warn { "not" } else { "method" };
                let _ = writeln!(h, "<li class=\"{class}\">{}</li>", esc(&line));
            }
            h.push_str("</ul>\n");
        }
    }
    strip(&mut h, runs);
    if runs.len() > 1 {
        significant(&mut h, rows);
    }
    conditions_panel(&mut h, runs);
    for name in section_names(runs) {
        let _ = writeln!(
            h,
            "<section id=\"{}\"><h2>{}</h2>",
            esc(&name),
            esc(&super::section_title(&name))
        );
        for (ok, text) in hows(runs, &name) {
            let class = if ok { "method" } else { "not" };
            let _ = writeln!(h, "<p class=\"{class}\">{}</p>", esc(&text));
        }
        match name.as_str() {
            "device" => cpus(&mut h, runs),
            "boot" => boot(&mut h, runs),
            "memory" => memory(&mut h, runs),
            "latency" => latency(&mut h, runs),
            "markers" => bars(&mut h, runs, &name),
            "daemon" => {
                for note in daemon_note(runs) {
                    let _ = writeln!(h, "<p class=\"note\">{}</p>", esc(&note));
                }
            }
            _ => {}
        }
        if name == "bench" {
            bench(&mut h, runs, rows);
        } else {
            metrics(&mut h, runs, rows, &name);
        }
        h.push_str("</section>\n");
    }
    h.push_str("<p class=\"method\">Written by <code>lever report render</code>. Changes are judged as <code>lever bench compare</code> does (Mann-Whitney U, p &lt; 0.05, or non-overlapping intervals; regression past 5 %); a figure with fewer than 2 samples is not judged.</p>\n</body></html>\n");
    h
}

fn runs_table(h: &mut String, runs: &[Run]) {
    h.push_str("<table class=\"runs\"><tr><th>run</th><th>board</th><th>SoC</th><th>kernel</th><th>collected at</th><th>Lever</th></tr>\n");
    for (i, r) in runs.iter().enumerate() {
        let d = &r.device;
        let o = |v: &Option<String>| esc(v.as_deref().unwrap_or("—"));
        let _ = writeln!(
            h,
            "<tr><td>#{}{}</td><td>{}</td><td>{}</td><td>{} {}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            if i == 0 && runs.len() > 1 {
                " (base)"
            } else {
                ""
            },
            o(&d.board),
            o(&d.soc),
            o(&d.kernel_release),
            o(&d.arch),
            esc(&r.collected_at),
            esc(&r.lever_version)
        );
    }
    h.push_str("</table>\n");
    if let Some(c) = runs.first().and_then(|r| r.device.cmdline.as_ref()) {
        let _ = writeln!(
            h,
            "<p class=\"method\">Kernel command line (#1): <code>{}</code></p>",
            esc(c)
        );
    }
}

fn significant(h: &mut String, rows: &[Row]) {
    let sig: Vec<&Row> = rows.iter().filter(|r| r.significant()).collect();
    let _ = writeln!(h, "<h2>Significant changes against #1</h2>");
    if sig.is_empty() {
        h.push_str("<p class=\"method\">None.</p>\n");
        return;
    }
    h.push_str("<table class=\"changes\"><tr><th>metric</th><th>change</th></tr>\n");
    for r in sig {
        let cells: Vec<String> = r
            .vs_base
            .iter()
            .enumerate()
            .filter_map(|(i, j)| j.as_ref().map(|j| (i, verdict(j))))
            .map(|(i, (class, text))| {
                format!("<span class=\"{class}\">#{}: {}</span>", i + 2, esc(&text))
            })
            .collect();
        let _ = writeln!(
            h,
            "<tr class=\"sig\"><td title=\"{}\">{}</td><td>{}</td></tr>",
            esc(&r.key()),
            esc(&row_name(r)),
            cells.join("<br>")
        );
    }
    h.push_str("</table>\n");
}

fn cpus(h: &mut String, runs: &[Run]) {
    for (i, r) in runs.iter().enumerate() {
        if r.device.cpus.is_empty() {
            continue;
        }
        if i > 0 && r.device.cpus == runs[0].device.cpus {
            let _ = writeln!(
                h,
                "<p class=\"method\">CPUs of {}: the same as #1's</p>",
                esc(&run_label(i, r))
            );
            continue;
        }
        let _ = writeln!(h, "<table class=\"cpus\"><tr><th colspan=\"5\">CPUs of {}</th></tr><tr><th>CPU</th><th>cluster</th><th>model</th><th>max MHz</th><th>capacity</th></tr>", esc(&run_label(i, r)));
        for c in &r.device.cpus {
            let o = |v: Option<String>| esc(&v.unwrap_or_else(|| "—".into()));
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                c.cpu,
                o(c.cluster.map(|v| v.to_string())),
                o(c.model.clone()),
                o(c.max_khz.map(|v| (v / 1000).to_string())),
                o(c.capacity.map(|v| v.to_string()))
            );
        }
        h.push_str("</table>\n");
    }
}

fn detail<'a>(run: &'a Run, section: &str, key: &str) -> Option<&'a Vec<serde_json::Value>> {
    run.section(section)?.detail.get(key)?.as_array()
}

fn boot(h: &mut String, runs: &[Run]) {
    for (i, r) in runs.iter().enumerate() {
        let Some(stages) = detail(r, "boot", "stages") else {
            continue;
        };
        let ms = |st: &serde_json::Value| st["ms"].as_f64().unwrap_or(0.0);
        let name = |st: &serde_json::Value| st["stage"].as_str().unwrap_or("?").to_string();
        // Marks count from the kernel's start, which is where the
        // before-kernel stages end (x = 0 is power on).
        let kernel_start = stages
            .iter()
            .find(|st| name(st) == "Total before kernel")
            .map_or(0.0, ms);
        let mark = |m: &str| {
            stages
                .iter()
                .find(|st| st["kind"] == "mark" && name(st) == m)
                .map(|st| kernel_start + ms(st))
        };
        let mut at = 0.0;
        let mut steps = Vec::new();
        for st in stages {
            let (label, len) = (name(st), ms(st));
            let step = match st["kind"].as_str() {
                // `Recorder init − Kernel init` starts at its second mark.
                Some("stage") => match label.split_once(" − ").and_then(|(_, from)| mark(from)) {
                    Some(start) => Step {
                        label,
                        start,
                        len,
                        total: false,
                        shown: len,
                    },
                    None => {
                        at += len;
                        Step {
                            label,
                            start: at - len,
                            len,
                            total: false,
                            shown: len,
                        }
                    }
                },
                Some("mark") => Step {
                    label,
                    start: kernel_start + len,
                    len: 0.0,
                    total: false,
                    shown: len,
                },
                _ => Step {
                    label,
                    start: 0.0,
                    len,
                    total: true,
                    shown: len,
                },
            };
            steps.push(step);
        }
        if !steps.is_empty() {
            h.push_str(&svg::waterfall(
                &format!("Boot stages, {}", run_label(i, r)),
                &steps,
            ));
        }
    }
}

fn memory(h: &mut String, runs: &[Run]) {
    let parts = [
        ("memory.non_linux", "non-Linux"),
        ("memory.kernel_static", "kernel static"),
        ("memory.apps_framework", "apps + framework"),
        ("memory.free", "free"),
    ];
    let mut bars = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let Some(cols) = detail(r, "memory", "columns") else {
            continue;
        };
        for col in cols {
            let Some(uc) = col["usecase"].as_str() else {
                continue;
            };
            let value = |name: &str| {
                r.metrics()
                    .find(|m| {
                        m.name == name && m.labels.get("usecase").map(String::as_str) == Some(uc)
                    })
                    .map(|m| m.value)
            };
            let stack: Vec<(String, f64)> = parts
                .iter()
                .filter_map(|(n, label)| value(n).map(|v| (label.to_string(), v)))
                .collect();
            if stack.is_empty() {
                continue;
            }
            let label = if runs.len() > 1 {
                format!("#{} {uc}", i + 1)
            } else {
                uc.to_string()
            };
            bars.push(Stack {
                label,
                parts: stack,
            });
        }
    }
    if !bars.is_empty() {
        h.push_str(&svg::stacked(
            "Memory map (seed 000 §8.3)",
            &bars,
            &units::kib,
        ));
    }
    usecase_table(h, runs);
    for (i, r) in runs.iter().enumerate() {
        let Some(series) = detail(r, "memory", "series") else {
            continue;
        };
        let lines: Vec<lever_measure::svg::Series> = series
            .iter()
            .map(|s| {
                let t = s["t_s"].as_array().cloned().unwrap_or_default();
                let free = s["free_kb"].as_array().cloned().unwrap_or_default();
                lever_measure::svg::Series {
                    name: format!("free during {}", s["usecase"].as_str().unwrap_or("?")),
                    points: t
                        .iter()
                        .zip(&free)
                        .filter_map(|(t, f)| Some((t.as_f64()?, f.as_f64()? / 1024.0 / 1024.0)))
                        .collect(),
                }
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        if lines.is_empty() {
            continue;
        }
        let plot = lever_measure::svg::LinePlot {
            title: format!("Free memory while each use case ran, {}", run_label(i, r)),
            x_label: "seconds".into(),
            y_label: "free (GiB)".into(),
            series: lines,
        };
        let _ = writeln!(h, "<div class=\"chart series\">{}</div>", plot.render());
    }
}

/// Each use case's memory and CPU side by side.
fn usecase_table(h: &mut String, runs: &[Run]) {
    for (i, r) in runs.iter().enumerate() {
        let ucs = usecases(r);
        if ucs.is_empty() {
            continue;
        }
        let _ = writeln!(
            h,
            "<table class=\"usecases\"><tr><th colspan=\"6\">Use cases of {}: memory at the sample with the least free, CPU over the use case</th></tr>\
             <tr><th>use case</th><th>apps + framework</th><th>free</th><th>CPU of its processes</th><th>all cores</th><th>busiest processes</th></tr>",
            esc(&run_label(i, r))
        );
        for u in ucs {
            let [name, apps, free, mine, total, procs] = u.cells();
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                esc(&name),
                esc(&apps),
                esc(&free),
                esc(&mine),
                esc(&total),
                esc(&procs)
            );
        }
        h.push_str("</table>\n");
    }
}

fn latency(h: &mut String, runs: &[Run]) {
    for (i, r) in runs.iter().enumerate() {
        let Some(hists) = detail(r, "latency", "histograms") else {
            continue;
        };
        let mut conditions: Vec<&str> = Vec::new();
        for x in hists {
            let c = x["condition"].as_str().unwrap_or("");
            if !conditions.contains(&c) {
                conditions.push(c);
            }
        }
        for c in conditions {
            let counts: Vec<(String, Vec<u64>, f64)> = hists
                .iter()
                .filter(|x| x["condition"].as_str() == Some(c))
                .map(|x| {
                    let cpu = x["cpu"].as_u64().map_or("-".into(), |v| v.to_string());
                    let counts = x["counts"]
                        .as_array()
                        .map(|a| a.iter().filter_map(|v| v.as_u64()).collect())
                        .unwrap_or_default();
                    (
                        format!("CPU {cpu}"),
                        counts,
                        x["bucket_us"].as_f64().unwrap_or(1.0),
                    )
                })
                .collect();
            let series: Vec<Histogram> = counts
                .iter()
                .map(|(name, c, b)| Histogram {
                    name: name.clone(),
                    counts: c,
                    bucket: *b,
                })
                .collect();
            h.push_str(&svg::histogram(
                &format!("Latency, {c}, {}", run_label(i, r)),
                "latency (µs)",
                &series,
            ));
        }
    }
}

fn bars(h: &mut String, runs: &[Run], section: &str) {
    let mut groups: Vec<Group> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let Some(s) = r.section(section) else {
            continue;
        };
        for m in s
            .metrics
            .iter()
            .filter(|m| !m.samples.is_empty() || section == "markers")
        {
            let label = match m.labels.get("kpi") {
                Some(k) => k.clone(),
                None => m.name.trim_start_matches("bench.").to_string(),
            };
            if m.name == "markers.count" {
                continue;
            }
            let range = (!m.samples.is_empty()).then(|| {
                m.samples
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                        (lo.min(v), hi.max(v))
                    })
            });
            let bar = Bar {
                run: run_label(i, r),
                value: m.value,
                range,
            };
            match groups.iter_mut().find(|g| g.label == label) {
                Some(g) => g.bars.push(bar),
                None => groups.push(Group {
                    label,
                    unit: m.unit.clone(),
                    bars: vec![bar],
                }),
            }
        }
    }
    if !groups.is_empty() {
        let title = if section == "bench" {
            "Benchmarks: median, whiskers min..max of the samples"
        } else {
            "Marker KPIs: mean, whiskers min..max of the occurrences, one scale"
        };
        let unit = groups[0].unit.clone();
        h.push_str(&svg::whiskers(title, &groups, &|v| units::value(v, &unit)));
    }
}

fn metrics(h: &mut String, runs: &[Run], rows: &[Row], section: &str) {
    let rows: Vec<&Row> = rows.iter().filter(|r| r.section == section).collect();
    if rows.is_empty() {
        return;
    }
    h.push_str("<table class=\"metrics\"><tr><th>metric</th>");
    for (i, r) in runs.iter().enumerate() {
        let _ = write!(h, "<th>{}</th>", esc(&run_label(i, r)));
        if i > 0 {
            let _ = write!(h, "<th>#{} vs #1</th>", i + 1);
        }
    }
    h.push_str("</tr>\n");
    let mut negatives: Vec<&'static str> = Vec::new();
    for row in rows {
        let class = if row.significant() {
            " class=\"sig\""
        } else {
            ""
        };
        let _ = write!(
            h,
            "<tr{class}><td title=\"{}\">{}</td>",
            esc(&row.key()),
            esc(&row_name(row))
        );
        for (i, v) in row.values.iter().enumerate() {
            match (v, names::why_negative(&row.name)) {
                (Some(v), Some(why)) if *v < 0.0 => {
                    if !negatives.contains(&why) {
                        negatives.push(why);
                    }
                    let _ = write!(
                        h,
                        "<td class=\"num neg\" title=\"{}\">{}*</td>",
                        esc(why),
                        esc(&value(Some(*v), &row.unit))
                    );
                }
                _ => {
                    let _ = write!(h, "<td class=\"num\">{}</td>", esc(&value(*v, &row.unit)));
                }
            }
            if i > 0 {
                match &row.vs_base[i - 1] {
                    Some(j) => {
                        let (class, text) = verdict(j);
                        let _ = write!(h, "<td class=\"{class}\">{}</td>", esc(&text));
                    }
                    None => h.push_str("<td class=\"nc\">—</td>"),
                }
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    for why in negatives {
        let _ = writeln!(h, "<p class=\"method\">* {}</p>", esc(why));
    }
}

/// The figures people look for first, per run.
fn strip(h: &mut String, runs: &[Run]) {
    let per_run: Vec<Vec<summary::Figure>> = runs.iter().map(summary::figures).collect();
    let Some(first) = per_run.first() else {
        return;
    };
    h.push_str("<h2>Summary</h2>\n<div class=\"strip\">\n");
    for (k, f) in first.iter().enumerate() {
        let _ = write!(
            h,
            "<div class=\"fig\"><div class=\"k\">{}</div>",
            esc(f.label)
        );
        let same_why = per_run.len() > 1
            && per_run
                .iter()
                .all(|figs| figs[k].value.is_err() && figs[k].value == per_run[0][k].value);
        if same_why {
            if let Err(why) = &f.value {
                let _ = writeln!(
                    h,
                    "<div class=\"na\" title=\"{0}\">every run: {0}</div></div>",
                    esc(why)
                );
            }
            continue;
        }
        for (i, figs) in per_run.iter().enumerate() {
            let f = &figs[k];
            let run = if runs.len() > 1 {
                format!("#{} ", i + 1)
            } else {
                String::new()
            };
            match &f.value {
                Ok(v) => {
                    let _ = write!(
                        h,
                        "<div class=\"v\" title=\"{}\">{}{}</div>",
                        esc(&f.detail),
                        esc(&run),
                        esc(v)
                    );
                }
                Err(why) => {
                    let _ = write!(
                        h,
                        "<div class=\"na\" title=\"{1}\">{0}{1}</div>",
                        esc(&run),
                        esc(why)
                    );
                }
            }
        }
        h.push_str("</div>\n");
    }
    h.push_str("</div>\n");
}

/// Each run's conditions: one table, a column per run.
fn conditions_panel(h: &mut String, runs: &[Run]) {
    h.push_str("<section id=\"conditions\"><h2>Conditions</h2>\n");
    let Some(table) = super::conditions_table(runs) else {
        h.push_str("<p class=\"not\">not recorded: the runs were collected by a Lever that kept no conditions</p>\n</section>\n");
        return;
    };
    h.push_str("<table class=\"conditions\">");
    if runs.len() > 1 {
        h.push_str("<tr><th></th>");
        for (i, r) in runs.iter().enumerate() {
            let _ = write!(h, "<th>{}</th>", esc(&run_label(i, r)));
        }
        h.push_str("</tr>");
    }
    h.push('\n');
    for (what, warn, cells) in table {
        let class = if warn { " class=\"warn\"" } else { "" };
        let _ = write!(h, "<tr{class}><th>{}</th>", esc(&what));
        for c in cells {
            let _ = write!(h, "<td>{}</td>", esc(&c));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n</section>\n");
}

/// Seed 002's tables, one per category, each with its chart.
fn bench(h: &mut String, runs: &[Run], rows: &[Row]) {
    let tables = benchmarks::tables(runs);
    let skipped: Vec<(usize, &serde_json::Value)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some((i, r.section("bench")?.detail.get("skipped")?)))
        .collect();
    for t in &tables {
        let _ = writeln!(h, "<h3>{}</h3>", esc(&t.title));
        h.push_str("<table class=\"bench\"><tr>");
        for c in benchmarks::columns(runs.len()) {
            let _ = write!(h, "<th>{}</th>", esc(&c));
        }
        h.push_str("</tr>\n");
        for test in &t.tests {
            let row = rows
                .iter()
                .find(|r| r.name == test.id && r.labels.is_empty());
            let sig = row.is_some_and(Row::significant);
            let _ = write!(
                h,
                "<tr{}><td title=\"{}\">{}</td><td>{}</td>",
                if sig { " class=\"sig\"" } else { "" },
                esc(&test.id),
                esc(&test.name),
                esc(units::unit(&test.unit))
            );
            for (i, c) in test.cells.iter().enumerate() {
                match c {
                    Some(c) => {
                        let _ = write!(
                            h,
                            "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
                            esc(&c.text()),
                            c.n(),
                            esc(&c.ci())
                        );
                    }
                    None => h.push_str("<td class=\"nc\">—</td><td></td><td></td>"),
                }
                if i > 0 {
                    match row.and_then(|r| r.vs_base[i - 1].as_ref()) {
                        Some(j) => {
                            let (class, text) = verdict(j);
                            let _ = write!(h, "<td class=\"{class}\">{}</td>", esc(&text));
                        }
                        None => h.push_str("<td class=\"nc\">—</td>"),
                    }
                }
            }
            h.push_str("</tr>\n");
        }
        if t.tests.iter().any(|t| t.id == "bench.dhrystone") {
            for (name, unit, cells) in benchmarks::dhrystone_rows(runs) {
                let _ = write!(h, "<tr><td>{}</td><td>{}</td>", esc(&name), esc(&unit));
                for (i, c) in cells.iter().enumerate() {
                    let _ = write!(h, "<td colspan=\"3\">{}</td>", esc(c));
                    if i > 0 {
                        h.push_str("<td class=\"nc\">—</td>");
                    }
                }
                h.push_str("</tr>\n");
            }
        }
        h.push_str("</table>\n");
        // One chart per unit, every test of it on one scale.
        let mut units_seen: Vec<&str> = Vec::new();
        for test in &t.tests {
            if !units_seen.contains(&test.unit.as_str()) {
                units_seen.push(&test.unit);
            }
        }
        for unit in units_seen {
            let groups: Vec<Group> = t
                .tests
                .iter()
                .filter(|x| x.unit == unit)
                .map(|x| Group {
                    label: x.name.clone(),
                    unit: x.unit.clone(),
                    bars: x
                        .cells
                        .iter()
                        .enumerate()
                        .filter_map(|(i, c)| {
                            let c = c.as_ref()?;
                            Some(Bar {
                                run: run_label(i, &runs[i]),
                                value: c.value,
                                range: c.summary.as_ref().map(|s| (s.min, s.max)),
                            })
                        })
                        .collect(),
                })
                .collect();
            let title = format!(
                "{} ({}): median, whiskers min..max of the samples",
                t.title,
                units::unit(unit)
            );
            h.push_str(&svg::whiskers(&title, &groups, &|v| units::value(v, unit)));
        }
    }
    for (i, s) in skipped {
        for t in s.as_array().into_iter().flatten() {
            let _ = writeln!(
                h,
                "<p class=\"not\">{}{} skipped: {}</p>",
                if runs.len() > 1 {
                    format!("#{} ", i + 1)
                } else {
                    String::new()
                },
                esc(t["test"].as_str().unwrap_or("?")),
                esc(t["why"].as_str().unwrap_or("?"))
            );
        }
    }
}
