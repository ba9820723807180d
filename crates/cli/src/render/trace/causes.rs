//! Causes sections of the trace report: who woke whom, a thread's
//! critical path, lock contention, frequency ramps.

use crate::render::num::{ms_from_ns as ms, pct, us_from_ns as us};
use crate::render::Table;
use lever_trace_analysis::critical::{CriticalPath, IrqSource, PathNode};
use lever_trace_analysis::locks::{LockReport, LockRow};
use lever_trace_analysis::ramp::{RampComparison, RampReport};
use lever_trace_analysis::stats::fmt_ns;
use lever_trace_analysis::wakeups::{Waker, WakeupReport};

fn who(w: &Waker, comm: &str) -> String {
    match w {
        Waker::Task(tid) => format!("{comm}-{tid}"),
        _ => comm.to_string(),
    }
}

/// Waker → wakee edges, most frequent first.
pub fn wakeups(r: &WakeupReport, top: usize) -> String {
    if r.edges.is_empty() {
        return "\nwake-ups: no sched_waking/sched_wakeup events in this trace\n".into();
    }
    let mut t = Table::new(&[
        "WAKER",
        "WAKEE",
        "COUNT",
        "LAT P50 us",
        "LAT P99 us",
        "LAT MAX us",
    ]);
    for e in r.edges.iter().take(top) {
        t.row(vec![
            who(&e.waker, &e.waker_comm),
            format!("{}-{}", e.wakee_comm, e.wakee_tid),
            e.count.to_string(),
            us(e.latency.p50_ns),
            us(e.latency.p99_ns),
            us(e.latency.max_ns),
        ]);
    }
    format!(
        "\n== who woke whom ({} edges; latency = wake-up → switch-in)\n{}",
        r.edges.len(),
        t.render()
    )
}

/// The critical path as an indented tree.
pub fn critical_path(cp: &CriticalPath) -> String {
    let mut out = format!(
        "\n== critical path of {}-{} from {} to {} ({})\n",
        cp.root.comm,
        cp.tid,
        secs(cp.from_ns),
        secs(cp.to_ns),
        fmt_ns(cp.to_ns.saturating_sub(cp.from_ns))
    );
    node(&cp.root, 0, &mut out);
    if !cp.cpu_interrupts.is_empty() {
        let mut t = Table::new(&["WHILE", "SOURCE", "NAME", "TIME us", "COUNT", "SHARE %"]);
        for i in &cp.cpu_interrupts {
            t.row(vec![
                i.during.to_string(),
                match i.source {
                    IrqSource::Irq(n) => format!("irq {n}"),
                    IrqSource::Softirq(v) => format!("softirq {v}"),
                },
                i.name.clone(),
                us(i.ns),
                i.count.to_string(),
                pct(i.share_pct),
            ]);
        }
        out += &format!(
            "\n== interrupts on its CPU while it ran or was runnable\n{}",
            t.render()
        );
    }
    out
}

fn secs(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000)
}

fn node(n: &PathNode, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    for p in &n.parts {
        let cause = match (&p.cause, &p.cause_comm) {
            (Some(w), Some(c)) => match p.state {
                "preempted" => format!(" by {}", who(w, c)),
                _ => format!(" (woken by {})", who(w, c)),
            },
            _ => String::new(),
        };
        out.push_str(&format!(
            "{pad}{:>12} {:>5}%  {}{} ×{}\n",
            fmt_ns(p.ns),
            pct(p.share_pct),
            p.state,
            cause,
            p.count
        ));
        if let Some(b) = &p.because {
            out.push_str(&format!("{pad}  meanwhile {}-{}:\n", b.comm, b.tid));
            node(b, depth + 2, out);
        }
    }
    if n.unknown_ns > 0 {
        out.push_str(&format!(
            "{pad}{:>12} {:>5}%  unknown (no event)\n",
            fmt_ns(n.unknown_ns),
            pct(100.0 * n.unknown_ns as f64 / n.total_ns.max(1) as f64)
        ));
    }
}

/// Contended kernel locks, futexes and tasks.
pub fn locks(r: &LockReport, top: usize) -> String {
    if r.lock_events == 0 && r.futex_calls == 0 {
        return "\nlocks: no lock:contention_begin/end or raw_syscalls futex events in this trace\n"
            .into();
    }
    let table = |rows: &[LockRow]| {
        let mut t = Table::new(&[
            "ADDRESS", "KIND", "WAITS", "TOTAL ms", "AVG us", "MAX us", "TASKS",
        ]);
        for l in rows.iter().take(top) {
            t.row(vec![
                l.addr.clone(),
                l.kind.clone(),
                l.wait.count.to_string(),
                ms(l.total_wait_ns),
                us(l.wait.avg_ns),
                us(l.wait.max_ns),
                l.tasks.to_string(),
            ]);
        }
        t.render()
    };
    let mut out = String::new();
    if r.lock_events > 0 {
        // A UST trace's pthread mutexes (liblttng-ust-pthread-wrapper)
        // record every lock, free or not; the kernel's only contentions.
        let n = r.locks.len();
        let title = if r.locks.iter().any(|l| l.kind == "pthread_mutex") {
            format!("locks waited for ({n} locks; a pthread_mutex's WAITS count every lock, free or not)")
        } else {
            format!("contended kernel locks ({n} locks)")
        };
        out += &format!("\n== {title}\n{}", table(&r.locks));
    }
    if r.futex_calls > 0 {
        out += &format!(
            "\n== futex waits ({} addresses)\n{}",
            r.futexes.len(),
            table(&r.futexes)
        );
    }
    let mut t = Table::new(&[
        "TID",
        "COMM",
        "LOCK WAITS",
        "LOCK ms",
        "FUTEX WAITS",
        "FUTEX ms",
    ]);
    for task in r.tasks.iter().take(top) {
        t.row(vec![
            task.tid.to_string(),
            task.comm.clone(),
            task.lock_waits.to_string(),
            ms(task.lock_wait_ns),
            task.futex_waits.to_string(),
            ms(task.futex_wait_ns),
        ]);
    }
    out + &format!("\n== waits per task\n{}", t.render())
}

/// Ramp per CPU and the first `top` steps, or why there is none.
pub fn ramp(r: &RampReport, top: usize) -> String {
    if r.freq_events == 0 {
        return "\nfrequency ramp: no cpu_frequency events were captured (enable power:cpu_frequency; a machine without cpufreq has none)\n".into();
    }
    let mut t = Table::new(&[
        "CPU",
        "MAX kHz",
        "STEPS",
        "NOT REACHED",
        "RAMP P50 us",
        "RAMP MAX us",
    ]);
    for c in &r.cpus {
        t.row(vec![
            c.cpu.to_string(),
            c.max_khz.to_string(),
            c.steps.to_string(),
            c.not_reached.to_string(),
            us(c.ramp.p50_ns),
            us(c.ramp.max_ns),
        ]);
    }
    let mut out = format!(
        "\n== frequency ramp (idle → busy step → highest frequency seen)\n{}",
        t.render()
    );
    let mut t = Table::new(&["AT s", "CPU", "TASK", "UCLAMP MIN", "START kHz", "RAMP us"]);
    for s in r.steps.iter().take(top) {
        t.row(vec![
            secs(s.start_ns),
            s.cpu.to_string(),
            format!("{}-{}", s.comm, s.tid),
            s.uclamp_min.map_or("-".into(), |m| m.to_string()),
            s.start_khz.map_or("-".into(), |k| k.to_string()),
            s.ramp_ns.map_or("not reached".into(), us),
        ]);
    }
    if !r.steps.is_empty() {
        out += &format!(
            "\n== load steps ({} of {})\n{}",
            r.steps.len().min(top),
            r.steps.len(),
            t.render()
        );
    }
    if let Some(c) = &r.comparison {
        out += &ramp_comparison(c);
    }
    out
}

/// Runs side by side, with the difference to the first.
fn ramp_comparison(c: &RampComparison) -> String {
    let mut t = Table::new(&[
        "RUN",
        "UCLAMP MIN",
        "STEPS",
        "NOT REACHED",
        "RAMP P50 us",
        "RAMP P90 us",
        "RAMP MAX us",
        "Δ P50 us",
        "Δ MAX us",
    ]);
    let signed = |ns: i64| format!("{:+.1}", ns as f64 / 1e3);
    for r in &c.runs {
        t.row(vec![
            r.run.to_string(),
            r.uclamp_min.map_or("-".into(), |m| m.to_string()),
            r.steps.to_string(),
            r.not_reached.to_string(),
            us(r.ramp.p50_ns),
            us(r.ramp.p90_ns),
            us(r.ramp.max_ns),
            signed(r.p50_diff_ns),
            signed(r.max_diff_ns),
        ]);
    }
    let target: Vec<String> = c
        .target_khz
        .iter()
        .map(|(cpu, khz)| format!("CPU {cpu} {khz} kHz"))
        .collect();
    format!(
        "\n== ramp with and without a uclamp floor{}{} (target: {})\n{}",
        c.baseline_file
            .as_ref()
            .map_or(String::new(), |b| format!(", baseline {b}")),
        c.task
            .as_ref()
            .map_or(String::new(), |t| format!(", steps started by {t}")),
        target.join(", "),
        if c.runs.is_empty() {
            "no load steps on CPUs with cpu_frequency events\n".into()
        } else {
            t.render()
        }
    )
}
