//! `lever latency` and `lever rt check`: the live status line, the
//! per-thread table, spikes, cyclictest's histogram, the RT checks.

pub mod breach;
pub mod kpi;

use crate::render::num::{fixed_or_dash, or_dash};
use crate::render::{Progress, Table};
use lever_latency::cyclictest;
use lever_latency::report::{Ended, LatencyReport, Source};
use lever_latency::rtcheck::{RtReport, Verdict};
use lever_latency::run::Snapshot;
use lever_latency::stats::{Percentile, PERCENTILES};

/// The live status line (stderr, on a terminal only).
pub struct Status {
    progress: Option<Progress>,
}

impl Status {
    /// A status line, or none with `-q`.
    pub fn new(enabled: bool) -> Status {
        Status {
            progress: enabled.then(|| Progress::new("latency")),
        }
    }

    /// One update: cyclictest's figures per thread, on one line.
    pub fn update(&self, snaps: &[Snapshot]) {
        let Some(p) = &self.progress else { return };
        let total: u64 = snaps.iter().map(|s| s.cycles).sum();
        let detail: Vec<String> = snaps
            .iter()
            .map(|s| {
                format!(
                    "T{} C:{} Min:{} Act:{} Avg:{} Max:{}",
                    s.plan.index, s.cycles, s.min_us, s.act_us, s.avg_us, s.max_us
                )
            })
            .collect();
        p.update(total, None, &format!("samples | {}", detail.join(" | ")));
    }

    /// Clear the line.
    pub fn finish(&self) {
        if let Some(p) = &self.progress {
            p.finish();
        }
    }
}

fn pct(p: Option<Percentile>) -> String {
    match p {
        Some(Percentile::Us(v)) => v.to_string(),
        Some(Percentile::AtLeastUs(v)) => format!(">={v}"),
        None => "-".into(),
    }
}

/// The per-thread table (µs).
pub fn threads(r: &LatencyReport) -> String {
    let mut head = vec![
        "T", "CPU", "prio", "interval", "samples", "min", "avg", "max",
    ];
    head.extend(PERCENTILES.iter().map(|(_, n)| *n));
    head.extend(["missed", "overflows", "CPU ms"]);
    let mut t = Table::new(&head);
    for th in &r.threads {
        let mut row = vec![
            th.index.to_string(),
            or_dash(th.cpu),
            or_dash(th.priority),
            or_dash(th.interval_us),
            th.cycles.to_string(),
            or_dash(th.min_us),
            fixed_or_dash(th.avg_us, 2),
            or_dash(th.max_us),
        ];
        match &th.percentiles {
            Some(p) => row.extend(p.list().into_iter().map(pct)),
            None => row.extend((0..PERCENTILES.len()).map(|_| "-".to_string())),
        }
        row.push(or_dash(th.missed_periods));
        row.push(th.overflows.to_string());
        row.push(fixed_or_dash(th.cpu_time_ms, 1));
        t.row(row);
    }
    t.render() + "latencies in µs; missed = periods skipped by a wake-up later than one interval; CPU ms = the measuring thread's CPU time\n"
}

/// Spikes in cyclictest's format.
pub fn spikes(r: &LatencyReport) -> String {
    if r.spike_count == 0 {
        return match r.spike_threshold_us {
            Some(t) => format!("no spike above {t} µs\n"),
            None => String::new(),
        };
    }
    let mut out = String::new();
    for s in &r.spikes {
        out += &format!(
            "T:{:2} Spike:{:8}: TS: {:12}\n",
            s.thread, s.latency_us, s.timestamp_us
        );
    }
    out + &format!("spikes = {}\n", r.spike_count)
}

fn header(r: &LatencyReport) -> String {
    let mut out = match &r.source {
        Source::Measured => format!(
            "measured {} thread(s), policy {}{}\n",
            r.threads.len(),
            r.policy.as_deref().unwrap_or("-"),
            r.elapsed_s.map_or(String::new(), |s| format!(", {s:.1} s"))
        ),
        Source::Imported { format, path } => format!("imported {format} output {path}\n"),
    };
    match &r.ended {
        Ended::Interrupted => out += "ended: interrupted\n",
        Ended::Breach {
            thread,
            cpu,
            latency_us,
            threshold_us,
            ..
        } => {
            out += &format!(
                "BREACH: thread {thread} (CPU {}) woke {latency_us} µs late, over -b {threshold_us} µs; measurement stopped\n",
                or_dash(*cpu)
            )
        }
        _ => {}
    }
    for l in &r.loads {
        out += &format!("load: {l}\n");
    }
    for n in &r.notes {
        out += &format!("note: {n}\n");
    }
    out
}

/// A measurement: header, table, spikes, explanations and cyclictest's
/// final status lines (with `-h` and no `--histfile` this goes to stderr
/// and [`cyclictest_stdout`] to stdout).
pub fn measured(r: &LatencyReport) -> String {
    let mut out = header(r) + "\n" + &threads(r) + &spikes(r);
    out += &breach::all(r);
    out += "\n";
    for t in &r.threads {
        out += &cyclictest::status_line(t);
        out += "\n";
    }
    out
}

/// What cyclictest prints on stdout with `-h` (and Lever with `-h` and no
/// `--histfile`): the PM QoS line when it was held, the final status lines
/// unless `-q`, then the histogram block.
pub fn cyclictest_stdout(r: &LatencyReport, quiet: bool) -> String {
    let mut out = String::new();
    if r.notes
        .iter()
        .any(|n| n.starts_with("/dev/cpu_dma_latency held at 0"))
    {
        out += "# /dev/cpu_dma_latency set to 0us\n";
    }
    if !quiet {
        for t in &r.threads {
            out += &cyclictest::status_line(t);
            out += "\n";
        }
    }
    out + &cyclictest::histogram_text(r).unwrap_or_default()
}

/// An imported report.
pub fn report(r: &LatencyReport) -> String {
    header(r) + "\n" + &threads(r) + &spikes(r)
}

/// `lever rt check`.
pub fn rt_check(r: &RtReport) -> String {
    let mut out = format!(
        "RT CPUs {} ({})\n\n",
        lever_kernel::format_cpu_list(&r.rt_cpus),
        r.rt_cpus_from
    );
    let mut t = Table::new(&["check", "verdict", "current", "recommended"]);
    for c in &r.checks {
        let v = match c.verdict {
            Verdict::Pass => "pass",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
            Verdict::Unknown => "?",
        };
        t.row(vec![
            c.name.into(),
            v.into(),
            c.current.clone(),
            c.recommended.clone(),
        ]);
    }
    out += &t.render();
    let fixes: Vec<_> = r.checks.iter().filter(|c| !c.fix.is_empty()).collect();
    if !fixes.is_empty() {
        out += "\nhow to fix:\n";
        for c in fixes {
            out += &format!("  {}: {}\n", c.name, c.fix);
        }
    }
    out + &format!(
        "\n{} pass, {} warn, {} fail, {} unknown\n",
        r.count(Verdict::Pass),
        r.count(Verdict::Warn),
        r.count(Verdict::Fail),
        r.count(Verdict::Unknown)
    )
}
