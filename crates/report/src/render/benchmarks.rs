//! The benchmark section as seed 002 lays it out and `lever bench`
//! prints it: one table per category (LMBench's sections, the CPU
//! benchmarks with Dhrystone's DMIPS/MHz, NBench), each test with its
//! value as "median (min, max)", the number of samples and the 95 %
//! confidence interval of the median — all from the samples the run
//! keeps ([`lever_bench::stats::Summary`], the code `lever bench` uses).
//!
//! A test's category is the one `lever report collect` recorded
//! (`detail.categories`); for runs without it, the catalog's
//! ([`lever_bench::catalog::all`]) by the test's name, else by its
//! family (the name before the first `-`), else "Other".

use crate::model::{Metric, Run};
use lever_bench::catalog::Section as Category;
use lever_bench::stats::Summary;
use std::collections::BTreeMap;

/// One test in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The run's value (the median).
    pub value: f64,
    /// Statistics of the samples; `None` without samples.
    pub summary: Option<Summary>,
}

impl Cell {
    /// Seed 002's cell: `437.26 (min 199.52, max 674.99)`, or the value
    /// alone without samples.
    pub fn text(&self) -> String {
        use super::units::bench as b;
        match &self.summary {
            Some(s) if s.n > 1 => format!("{} (min {}, max {})", b(self.value), b(s.min), b(s.max)),
            _ => b(self.value),
        }
    }

    /// `lo … hi (±x.x %)`, both modes where the samples form two
    /// clusters (then no interval describes them), or why there is no
    /// interval.
    pub fn ci(&self) -> String {
        use super::units::bench as b;
        match &self.summary {
            Some(s) => match (&s.modes, s.ci_low, s.ci_high) {
                (Some(m), _, _) => format!(
                    "two modes: {} ×{} | {} ×{} (no interval of the median)",
                    b(m.low),
                    m.low_n,
                    b(m.high),
                    m.high_n
                ),
                (None, Some(lo), Some(hi)) => format!(
                    "{} … {} (±{:.1} %)",
                    b(lo),
                    b(hi),
                    s.ci_half_width_pct().unwrap_or(0.0)
                ),
                _ => format!("— ({} samples: 6 needed)", s.n),
            },
            None => "— (no samples)".into(),
        }
    }

    /// Number of samples.
    pub fn n(&self) -> usize {
        self.summary.as_ref().map_or(0, |s| s.n)
    }
}

/// One test across the runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Test {
    /// LMBench's name (`lat_syscall-null`).
    pub name: String,
    /// The metric's id (`bench.lat_syscall-null`).
    pub id: String,
    /// Unit.
    pub unit: String,
    /// Per run.
    pub cells: Vec<Option<Cell>>,
}

/// One category's table.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Seed 002's heading.
    pub title: String,
    /// Its tests, in the order of the first run.
    pub tests: Vec<Test>,
}

/// The catalog's category of every test name it has (quick and full).
fn catalog() -> BTreeMap<String, Category> {
    let mut m = BTreeMap::new();
    for quick in [false, true] {
        for t in lever_bench::catalog::all(quick, None) {
            m.insert(t.name, t.section);
        }
    }
    m
}

/// The category of test `name`: as recorded, else the catalog's by name,
/// else by family.
fn category_of(
    name: &str,
    recorded: &BTreeMap<String, Category>,
    catalog: &BTreeMap<String, Category>,
) -> Option<Category> {
    if let Some(c) = recorded.get(name).or_else(|| catalog.get(name)) {
        return Some(*c);
    }
    let family = name.split('-').next().unwrap_or(name);
    catalog
        .iter()
        .find(|(n, _)| n.split('-').next() == Some(family))
        .map(|(_, c)| *c)
}

/// The `detail.categories` of a run's bench section.
fn recorded(run: &Run) -> BTreeMap<String, Category> {
    run.section("bench")
        .and_then(|s| s.detail.get("categories"))
        .and_then(|v| serde_json::from_str(&v.to_string()).ok())
        .unwrap_or_default()
}

fn cell(m: &Metric) -> Cell {
    Cell {
        value: m.value,
        summary: Summary::new(&m.samples),
    }
}

/// The column headings of a category table over `runs` runs, as the page
/// and the Markdown print them: test, unit, then per run its value (min,
/// max), n and interval, and each later run's verdict against the first.
pub fn columns(runs: usize) -> Vec<String> {
    let mut v = vec!["test".to_string(), "unit".to_string()];
    for i in 0..runs {
        let run = if runs > 1 {
            format!("#{} ", i + 1)
        } else {
            String::new()
        };
        v.push(format!("{run}value (min, max)"));
        v.push(format!("{run}n"));
        v.push(format!("{run}95 % CI of the median"));
        if i > 0 {
            v.push(format!("#{} vs #1", i + 1));
        }
    }
    v
}

/// The benchmark tables of `runs`, in seed 002's order of categories,
/// "Other" last.
pub fn tables(runs: &[Run]) -> Vec<Table> {
    let catalog = catalog();
    let mut by: BTreeMap<Option<Category>, Vec<Test>> = BTreeMap::new();
    for (i, run) in runs.iter().enumerate() {
        let rec = recorded(run);
        let Some(section) = run.section("bench") else {
            continue;
        };
        for m in section
            .metrics
            .iter()
            .filter(|m| m.name.starts_with("bench."))
        {
            let name = &m.name["bench.".len()..];
            let cat = category_of(name, &rec, &catalog);
            let tests = by.entry(cat).or_default();
            let at = match tests.iter().position(|t| t.id == m.name) {
                Some(at) => at,
                None => {
                    tests.push(Test {
                        name: name.to_string(),
                        id: m.name.clone(),
                        unit: m.unit.clone(),
                        cells: vec![None; runs.len()],
                    });
                    tests.len() - 1
                }
            };
            tests[at].cells[i] = Some(cell(m));
        }
    }
    // `None` sorts first in a BTreeMap: put "Other" last.
    let mut out: Vec<Table> = Vec::new();
    let mut other = None;
    for (cat, tests) in by {
        match cat {
            Some(c) => out.push(Table {
                title: c.title().to_string(),
                tests,
            }),
            None => {
                other = Some(Table {
                    title: "Other tests".into(),
                    tests,
                })
            }
        }
    }
    out.extend(other);
    out
}

/// Rows derived from Dhrystone for the CPU table (seed 002's
/// `dhrystone_per_second`, `cpu_clock`, `dhrystone_per_mhz`): name, unit
/// and value text per run.
pub fn dhrystone_rows(runs: &[Run]) -> Vec<(String, String, Vec<String>)> {
    if !runs
        .iter()
        .any(|r| r.metrics().any(|m| m.name == "bench.dhrystone"))
    {
        return Vec::new();
    }
    let per_run = |f: &dyn Fn(&Run) -> String| runs.iter().map(f).collect::<Vec<_>>();
    let dmips = |r: &Run| r.metrics().find(|m| m.name == "bench.dhrystone").cloned();
    let figure = |r: &Run, label: &str| {
        super::summary::figures(r)
            .into_iter()
            .find(|f| f.label == label)
    };
    vec![
        (
            "dhrystone_per_second".into(),
            "Dhrystones/s".into(),
            per_run(&|r| {
                dmips(r).map_or("—".into(), |m| {
                    let mut c = cell(&m);
                    c.value *= DHRYSTONES_PER_DMIPS;
                    c.summary = Summary::new(
                        &m.samples
                            .iter()
                            .map(|v| v * DHRYSTONES_PER_DMIPS)
                            .collect::<Vec<_>>(),
                    );
                    c.text()
                })
            }),
        ),
        (
            "dhrystone_per_mhz".into(),
            "DMIPS/MHz".into(),
            per_run(
                &|r| match figure(r, "DMIPS/MHz").map(|f| (f.value, f.detail)) {
                    Some((Ok(v), detail)) => format!("{v} ({detail})"),
                    Some((Err(why), _)) => why,
                    None => "—".into(),
                },
            ),
        ),
    ]
}

/// Dhrystone 2.1 runs per second of the VAX 11/780, the 1 DMIPS machine.
pub const DHRYSTONES_PER_DMIPS: f64 = 1757.0;
