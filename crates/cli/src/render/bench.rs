//! `lever bench`: the conditions, one table per seed 002 section with its
//! "value (min, max)" cell and the statistics behind it, `lat_mem_rd`'s
//! plateaus against the cache sizes; `lever bench compare`'s table.

use crate::render::num::{fixed, fixed_or_dash, or_dash};
use crate::render::Table;
use lever_bench::catalog::{Better, Section};
use lever_bench::compare::{Comparison, Verdict};
use lever_bench::stats::Stop;
use lever_bench::{BenchReport, TestResult};

/// The whole report, as aligned text or Markdown.
pub fn report(r: &BenchReport, markdown: bool) -> String {
    let mut out = header(r);
    let mut sections: Vec<Section> = r.tests.iter().map(|t| t.section).collect();
    sections.sort();
    sections.dedup();
    for s in sections {
        let tests: Vec<&TestResult> = r.tests.iter().filter(|t| t.section == s).collect();
        out += &section(s, &tests, markdown);
    }
    out += &dmips_per_mhz(r);
    out += &plateaus(r);
    out += &format!("\n{} tests in {:.1} s\n", r.tests.len(), r.elapsed_s);
    out
}

/// Dhrystone per MHz, saying where the clock came from.
fn dmips_per_mhz(r: &BenchReport) -> String {
    if !r.tests.iter().any(|t| t.name == "dhrystone") {
        return String::new();
    }
    match (r.dmips_per_mhz, &r.conditions.clock) {
        (Some(v), Some(c)) => format!(
            "DMIPS/MHz: {} (at {} MHz, from {})\n",
            fixed(v, 2),
            fixed(c.mhz, 0),
            c.source
        ),
        _ => "DMIPS/MHz: not available (no cpufreq clock and no \"cpu MHz\" in /proc/cpuinfo)\n"
            .into(),
    }
}

fn header(r: &BenchReport) -> String {
    let c = &r.conditions;
    let mut out = format!(
        "lever bench {} — {} ({} CPUs), kernel {}, built by {} {}\n",
        r.build.lever_version,
        c.cpu_model.as_deref().unwrap_or("CPU unknown"),
        c.cpus,
        c.kernel.as_deref().unwrap_or("unknown"),
        r.build.compiler,
        r.build.flags
    );
    let clocks: Vec<String> = c
        .clocks_before
        .iter()
        .map(|k| {
            format!(
                "{}: {} at {} kHz",
                k.name,
                k.governor.as_deref().unwrap_or("no governor"),
                or_dash(k.cur_khz)
            )
        })
        .collect();
    out += &format!(
        "load average {}, nice {}, boost {}, {}\n",
        fixed_or_dash(c.load_1m, 2),
        or_dash(c.nice),
        c.boost.map_or("unknown", |b| if b { "on" } else { "off" }),
        if clocks.is_empty() {
            "no cpufreq".to_string()
        } else {
            clocks.join("; ")
        }
    );
    if let Some(f) = &c.scratch {
        out += &format!("file tests in {}: {}\n", f.dir, f.describe());
    }
    if let Some(note) = &r.host_note {
        out += &format!("NOTE: {note}\n");
    }
    if let Some(run) = &c.run {
        out += &crate::render::conditions::summary(run);
    }
    for w in &c.warnings {
        out += &format!("warning: {w}\n");
    }
    out
}

/// Two decimals, or more for small values so 0.05 µs does not read 0.05.
fn value(v: f64) -> String {
    if v != 0.0 && v.abs() < 0.1 {
        fixed(v, 4)
    } else {
        fixed(v, 2)
    }
}

fn section(s: Section, tests: &[&TestResult], markdown: bool) -> String {
    let headers = [
        "test",
        "unit",
        "value (min, max)",
        "n",
        "mean",
        "stddev",
        "95% CI of median",
        "±%",
        "stopped",
    ];
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for r in tests {
        let Some(s) = &r.summary else {
            skipped.push(format!(
                "  {}: skipped: {}",
                r.name,
                r.skipped.as_deref().unwrap_or("no samples")
            ));
            continue;
        };
        let ci = match (&s.modes, s.ci_low, s.ci_high) {
            // No interval describes two clusters: both are the result.
            (Some(m), _, _) => format!("two modes: {}", m.describe()),
            (None, Some(lo), Some(hi)) => format!("{} … {}", value(lo), value(hi)),
            _ => "-".into(),
        };
        rows.push(vec![
            r.name.clone(),
            r.unit.clone(),
            format!(
                "{} (min {}, max {})",
                value(s.median),
                value(s.min),
                value(s.max)
            ),
            s.n.to_string(),
            value(s.mean),
            value(s.stddev),
            ci,
            fixed_or_dash(s.ci_half_width_pct(), 1),
            stop(r.stop).into(),
        ]);
    }
    let mut out = format!("\n{}\n", s.title());
    out += &if markdown {
        md(&headers, &rows)
    } else {
        let mut t = Table::new(&headers);
        rows.into_iter().for_each(|r| t.row(r));
        t.render()
    };
    for line in skipped {
        out += &line;
        out.push('\n');
    }
    out
}

fn stop(s: Option<Stop>) -> &'static str {
    match s {
        Some(Stop::Converged) => "±2% reached",
        Some(Stop::MaxTime) => "time budget",
        Some(Stop::MaxSamples) => "sample limit",
        Some(Stop::Repeat) => "--repeat",
        None => "-",
    }
}

/// A Markdown table of `rows`.
fn md(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        headers.join(" | "),
        "---|".repeat(headers.len())
    );
    for row in rows {
        out += &format!("| {} |\n", row.join(" | "));
    }
    out
}

fn plateaus(r: &BenchReport) -> String {
    if r.plateaus.is_empty() {
        return String::new();
    }
    let mut t = Table::new(&[
        "level",
        "latency ns",
        "sizes",
        "cache size (lever cpu)",
        "break matches cache",
    ]);
    for p in &r.plateaus {
        t.row(vec![
            p.level.clone(),
            fixed(p.latency_ns, 2),
            format!("{} … {} KiB", p.from_kb, p.to_kb),
            p.cache_kb.map_or("-".into(), |k| format!("{k} KiB")),
            p.matches_cache
                .map_or("-", |m| if m { "yes" } else { "NO" })
                .into(),
        ]);
    }
    format!(
        "\nlat_mem_rd plateaus (stride {} bytes, shuffled)\n{}",
        lever_bench::memory::STRIDE,
        t.render()
    )
}

/// `lever bench --list`.
pub fn list(tests: &[(String, Section, &'static str)]) -> String {
    let mut t = Table::new(&["test", "section", "unit"]);
    for (name, s, unit) in tests {
        t.row(vec![name.clone(), s.title().into(), (*unit).into()]);
    }
    t.render()
}

/// `lever bench compare`: the conditions first, then the tests.
pub fn comparison(c: &Comparison) -> String {
    let mut out = match &c.conditions {
        Some(cc) => crate::render::conditions::comparison(cc),
        None => String::new(),
    };
    let forced = c.conditions.as_ref().is_some_and(|cc| cc.forced);
    for reach in &c.cache_reach {
        out += &reach.warning(forced);
        out.push('\n');
    }
    if let Some(why) = &c.file_history {
        out += &lever_bench::compare::file_history_warning(why, forced);
        out.push('\n');
    }
    let mut t = Table::new(&[
        "test",
        "unit",
        "base",
        "new",
        "change %",
        "better when",
        "p",
        "verdict",
    ]);
    for r in &c.rows {
        t.row(vec![
            r.name.clone(),
            r.unit.clone(),
            r.base.map_or("-".into(), value),
            r.new.map_or("-".into(), value),
            r.change_pct.map_or("-".into(), |p| format!("{p:+.1}")),
            match r.better {
                Better::Lower => "lower",
                Better::Higher => "higher",
            }
            .into(),
            r.p_value.map_or_else(
                || r.method.clone().unwrap_or("-".into()),
                |p| format!("{p:.3}"),
            ),
            match r.verdict {
                Verdict::Improved => "improved",
                Verdict::Regressed => "REGRESSED",
                Verdict::WorseWithinThreshold => "worse, within threshold",
                Verdict::Unchanged => "no significant change",
                Verdict::NotCompared => "not in both runs",
                Verdict::NotJudged => "not judged (conditions)",
                Verdict::WithinDrift => "within the runs' drift",
                Verdict::WithinReruns => "within the base's reruns",
            }
            .into(),
        ]);
    }
    out += &format!(
        "{}significant: Mann-Whitney U p < 0.05 (intervals when fewer than 5 samples); regression: significant and worse by more than {}%\n",
        t.render(),
        c.threshold_pct
    );
    if c.withheld > 0 {
        out += &format!(
            "{} change(s) the test finds significant are not judged: a run was taken under load or throttling, the machine's own speed changed, or the caches reached differently (above)\n",
            c.withheld
        );
    }
    let drifted = c
        .rows
        .iter()
        .filter(|r| r.verdict == Verdict::WithinDrift)
        .count();
    if drifted > 0 {
        out += &format!(
            "{drifted} change(s) the test finds significant are no larger than the drift a run shows between its own two passes over the suite: not called a change\n"
        );
    }
    for why in &c.reruns_left_out {
        out += &format!("{why}\n");
    }
    let reruns = c
        .rows
        .iter()
        .filter_map(|r| r.reruns.as_ref())
        .map(|r| r.runs)
        .max();
    if let Some(runs) = reruns {
        let within = c
            .rows
            .iter()
            .filter(|r| r.verdict == Verdict::WithinReruns)
            .count();
        out += &format!(
            "{within} change(s) the test finds significant put the new median where one more run of the base's build is expected (95 % prediction interval of {runs} runs' medians: the base and its reruns): not called a change\n"
        );
    }
    out
}
