//! Marker, KPI, frame, function_graph and latency-report sections of the
//! trace report.

use crate::render::num::{ms_from_ns as ms, s_from_ns, us_from_ns as us};
use crate::render::Table;
use lever_trace_analysis::funcgraph::FuncGraphReport;
use lever_trace_analysis::markers::{FrameReport, KpiReport, MarkerReport};
use lever_trace_analysis::stats::fmt_ns;
use lever_trace_analysis::Report;

/// Marker counts and span statistics, then each KPI and frame check.
pub fn markers(m: &MarkerReport, top: usize, auto: bool) -> String {
    let anything = m.markers > 0 || m.text_markers > 0 || !m.kpis.is_empty();
    if auto && !anything {
        return String::new();
    }
    let mut out = format!(
        "\n== markers: {} named, {} text, {} spans, {} unmatched E\n",
        m.markers,
        m.text_markers,
        m.spans.len(),
        m.unmatched_ends
    );
    if !m.span_stats.is_empty() {
        let mut t = Table::new(&[
            "SPAN", "COUNT", "MIN ms", "AVG ms", "P90 ms", "MAX ms", "TOTAL ms",
        ]);
        for s in m.span_stats.iter().take(top) {
            let d = &s.durations;
            t.row(vec![
                s.name.clone(),
                d.count.to_string(),
                ms(d.min_ns),
                ms(d.avg_ns),
                ms(d.p90_ns),
                ms(d.max_ns),
                ms(s.total_ns),
            ]);
        }
        out += &t.render();
    }
    for k in &m.kpis {
        out += &kpi(k);
    }
    for f in &m.frames {
        out += &frames(f, top);
    }
    out
}

/// One KPI: a table of steps per occurrence, ending with their sum.
fn kpi(k: &KpiReport) -> String {
    let mut out = format!(
        "\n== KPI {} ({}..{}): {} occurrence(s)\n",
        k.name,
        k.from,
        k.to,
        k.occurrences.len()
    );
    for (i, o) in k.occurrences.iter().enumerate() {
        let mut t = Table::new(&["#", "STEP", "FROM s", "TO s", "DURATION s"]);
        for st in &o.steps {
            t.row(vec![
                (i + 1).to_string(),
                format!("{} to {}", st.from, st.to),
                s_from_ns(st.from_ns, 6),
                s_from_ns(st.to_ns, 6),
                s_from_ns(st.dur_ns, 3),
            ]);
        }
        t.row(vec![
            (i + 1).to_string(),
            format!("{} latency = sum", k.name),
            String::new(),
            String::new(),
            s_from_ns(o.total_ns, 3),
        ]);
        out += &t.render();
    }
    out
}

/// A periodic marker's deadline check and its worst misses.
fn frames(f: &FrameReport, top: usize) -> String {
    let mut out = format!(
        "\n== frames of {:?} at {} period: {} frames, interval p50 {} max {}, {} deadline misses, {} dropped frames, {} late spans\n",
        f.marker,
        fmt_ns(f.period_ns),
        f.frames,
        fmt_ns(f.intervals.p50_ns),
        fmt_ns(f.intervals.max_ns),
        f.deadline_misses,
        f.dropped_frames,
        f.late_spans
    );
    for miss in f.misses.iter().take(top) {
        out += &format!(
            "  at {} s: interval {} ({} dropped)\n",
            s_from_ns(miss.at_ns, 6),
            fmt_ns(miss.interval_ns),
            miss.dropped_frames
        );
    }
    out
}

/// function_graph per function (µs), then each one's slowest calls.
pub fn funcgraph(fg: &FuncGraphReport, top: usize, auto: bool) -> String {
    if fg.functions.is_empty() {
        return match auto {
            true => String::new(),
            false => "\nfunction_graph: no function_graph lines in this trace\n".into(),
        };
    }
    let mut t = Table::new(&[
        "FUNCTION",
        "CALLS",
        "MIN",
        "AVG",
        "MAX",
        "STDDEV",
        "TOTAL",
        "SELF",
        "OUTLIERS",
        "TOP CALLEES",
    ]);
    for f in fg.functions.iter().take(top) {
        t.row(vec![
            f.function.clone(),
            f.calls.to_string(),
            us(f.min_ns),
            us(f.avg_ns),
            us(f.max_ns),
            us(f.stddev_ns),
            us(f.total_ns),
            us(f.self_ns),
            f.outlier_count.to_string(),
            f.callees
                .iter()
                .take(3)
                .map(|c| format!("{}×{}", c.function, c.calls))
                .collect::<Vec<_>>()
                .join(" "),
        ]);
    }
    let mut out = format!(
        "\n== function_graph per function (us), by total time\n{}",
        t.render()
    );
    out += "\nslowest occurrences (line, time):\n";
    for f in fg.functions.iter().take(top.min(5)) {
        let occ: Vec<String> = f
            .slowest
            .iter()
            .map(|o| match o.ts_ns {
                Some(ts) => format!(
                    "{} us @{}s (line {})",
                    us(o.dur_ns),
                    s_from_ns(ts, 6),
                    o.line_no
                ),
                None => format!("{} us (line {})", us(o.dur_ns), o.line_no),
            })
            .collect();
        out += &format!("  {}: {}\n", f.function, occ.join(", "));
    }
    out
}

/// The worst preemptoff/irqsoff report: latency, task, where, stack.
pub fn latency(r: &Report, auto: bool) -> String {
    let Some(l) = &r.latency else {
        return match r.latency_reports == 0 && !auto {
            true => "\nlatency: no preemptoff/irqsoff report in this trace\n".into(),
            false => String::new(),
        };
    };
    let mut out = format!(
        "\n== worst {} latency: {} us on CPU {} ({} report(s))\n",
        l.tracer.as_deref().unwrap_or("latency"),
        l.latency_us,
        l.cpu.map_or("?".into(), |c| c.to_string()),
        r.latency_reports
    );
    if let Some((comm, pid)) = &l.task {
        out += &format!("  task: {comm}-{pid}\n");
    }
    out += &format!(
        "  started at: {}  ended at: {}\n",
        l.started_at.as_deref().unwrap_or("?"),
        l.ended_at.as_deref().unwrap_or("?")
    );
    for f in &l.stack {
        out += &format!("  => {f}\n");
    }
    out
}
