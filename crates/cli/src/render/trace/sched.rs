//! Scheduling, CPU, CPU-bound, frequency and idle sections of the trace
//! report (ms for residencies, µs for latencies).

use crate::render::num::{ms_from_ns as ms, pct, us_from_ns as us};
use crate::render::Table;
use lever_trace_analysis::freq::CpuFreqReport;
use lever_trace_analysis::idle::CpuIdleReport;
use lever_trace_analysis::sched::SchedReport;
use lever_trace_analysis::stats::{self, Distribution};

/// Per thread, per CPU, and the CPU-bound check; nothing in `auto` mode
/// when the trace has no sched_switch.
pub fn scheduling(sch: &SchedReport, top: usize, auto: bool) -> String {
    if auto && sch.switch_events == 0 {
        return String::new();
    }
    let mut out = threads(sch, top);
    out += &cpus(sch);
    out += &cpu_bound(sch, top, auto);
    out
}

fn threads(sch: &SchedReport, top: usize) -> String {
    let mut out = String::from("\n== scheduling per thread (ms; wake-up latency in us)\n");
    let mut t = Table::new(&[
        "TID",
        "COMM",
        "RUN",
        "RUNNABLE(PREEMPT)",
        "RUNNABLE(WAKE)",
        "SLEEP",
        "BLOCKED",
        "SW",
        "PREEMPT",
        "MIGR",
        "CPUS",
        "WAKEUPS",
        "P50",
        "P90",
        "P99",
        "MAX",
    ]);
    for th in sch.threads.iter().take(top) {
        let w = &th.wakeup_latency;
        t.row(vec![
            th.tid.to_string(),
            th.comm.clone(),
            ms(th.running_ns),
            ms(th.runnable_preempted_ns),
            ms(th.runnable_waking_ns),
            ms(th.sleeping_ns),
            ms(th.blocked_ns),
            th.switches.to_string(),
            th.preemptions.to_string(),
            th.migrations.to_string(),
            th.cpus
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(","),
            w.count.to_string(),
            us(w.p50_ns),
            us(w.p90_ns),
            us(w.p99_ns),
            us(w.max_ns),
        ]);
    }
    out += &t.render();
    if sch.missing_switch_ins > 0 {
        out += &format!(
            "({} sched_switch events had no recorded switch-in of their prev task; those runs are not counted)\n",
            sch.missing_switch_ins
        );
    }
    out
}

/// Busy per CPU; an UNKNOWN% column only when switches were lost.
fn cpus(sch: &SchedReport) -> String {
    let lost = sch.cpus.iter().any(|c| c.unknown_ns > 0);
    let mut head = vec!["CPU", "BUSY%"];
    if lost {
        head.push("UNKNOWN%");
    }
    head.extend(["BUSY ms", "WINDOW ms", "SWITCHES", "MAX kHz"]);
    let mut t = Table::new(&head);
    for c in &sch.cpus {
        let mut row = vec![c.cpu.to_string(), pct(c.busy_pct)];
        if lost {
            row.push(pct(c.unknown_pct));
        }
        row.extend([
            ms(c.busy_ns),
            ms(c.window_ns),
            c.switches.to_string(),
            c.max_khz_seen.map_or("-".into(), |k| k.to_string()),
        ]);
        t.row(row);
    }
    let mut out = format!("\n== CPUs\n{}", t.render());
    if lost {
        out += &format!(
            "UNKNOWN: {} sched_switch events were lost; who ran between a task's last event and the next task's first is not known (counted in neither busy nor idle)\n",
            sch.recovered_switch_ins
        );
    }
    out
}

/// Seed 000 §7.2: on the most capable CPU at its highest frequency?
fn cpu_bound(sch: &SchedReport, top: usize, auto: bool) -> String {
    if sch.freq_events == 0 {
        return match auto {
            true => String::new(),
            false => {
                "\nCPU-bound check: not available (no cpu_frequency events in this trace)\n".into()
            }
        };
    }
    let mut t = Table::new(&[
        "TID",
        "COMM",
        "RUN ms",
        "ON TOP CPU %",
        "AT MAX FREQ %",
        "VERDICT",
    ]);
    for th in sch.threads.iter().take(top.min(10)) {
        if let Some(cb) = &th.cpu_bound {
            t.row(vec![
                th.tid.to_string(),
                th.comm.clone(),
                ms(th.running_ns),
                pct(cb.on_most_capable_pct),
                pct(cb.at_max_freq_on_most_capable_pct),
                if cb.verdict { "yes" } else { "no" }.to_string(),
            ]);
        }
    }
    format!(
        "\n== CPU-bound check (seed 000 §7.2): on the most capable CPU at its highest frequency?\n{}",
        t.render()
    )
}

/// Frequency residency per CPU.
pub fn frequency(freq: &[CpuFreqReport], auto: bool) -> String {
    if freq.is_empty() {
        return match auto {
            true => String::new(),
            false => "\nfrequency: no cpu_frequency events in this trace\n".into(),
        };
    }
    let mut t = Table::new(&["CPU", "kHz", "TIME ms", "%", "TRANSITIONS", "AVG kHz"]);
    for c in freq {
        for (i, f) in c.residency.iter().enumerate() {
            // Per-CPU figures on the CPU's first row only.
            let first = |v: u64| if i == 0 { v.to_string() } else { String::new() };
            t.row(vec![
                c.cpu.to_string(),
                f.khz.to_string(),
                ms(f.ns),
                pct(f.pct),
                first(c.transitions),
                first(c.avg_khz),
            ]);
        }
    }
    format!("\n== frequency residency\n{}", t.render())
}

/// Idle vs active (seed 004) and the idle states.
pub fn idle(idle: &[CpuIdleReport], auto: bool) -> String {
    if idle.iter().all(|c| c.idle_events == 0) {
        return match auto {
            true => String::new(),
            false => "\nidle: no cpu_idle or power_start/power_end events in this trace\n".into(),
        };
    }
    let mut out = idle_vs_active(idle);
    let silent: Vec<String> = idle
        .iter()
        .filter(|c| c.idle_events == 0)
        .map(|c| c.cpu.to_string())
        .collect();
    if !silent.is_empty() {
        out += &format!(
            "CPU {}: no idle events in this trace (never idle, or its idle events were not captured)\n",
            silent.join(", ")
        );
    }
    out + &idle_states(idle)
}

fn idle_vs_active(idle: &[CpuIdleReport]) -> String {
    let mut t = Table::new(&[
        "CPU",
        "PERIODS",
        "IDLE ms",
        "ACTIVE ms",
        "IDLE%",
        "AVG IDLE",
        "AVG ACTIVE",
    ]);
    for c in idle.iter().filter(|c| c.idle_events > 0) {
        t.row(vec![
            c.cpu.to_string(),
            c.idle_periods.to_string(),
            ms(c.idle_ns),
            ms(c.active_ns),
            pct(stats::pct(c.idle_ns, c.idle_ns + c.active_ns)),
            us(c.avg_idle_ns),
            us(c.avg_active_ns),
        ]);
    }
    format!("\n== idle vs active (seed 004; us)\n{}", t.render())
}

fn idle_states(idle: &[CpuIdleReport]) -> String {
    let mut t = Table::new(&[
        "CPU",
        "STATE",
        "ENTRIES",
        "RESIDENCY ms",
        "ENTER LAT us (avg/max)",
        "EXIT LAT us (avg/max)",
    ]);
    let lat = |d: &Option<Distribution>| {
        d.as_ref().map_or("n/a".to_string(), |d| {
            format!("{}/{}", us(d.avg_ns), us(d.max_ns))
        })
    };
    for c in idle {
        for st in &c.states {
            t.row(vec![
                c.cpu.to_string(),
                st.state.to_string(),
                st.entries.to_string(),
                ms(st.residency_ns),
                lat(&st.enter_latency),
                lat(&st.exit_latency),
            ]);
        }
    }
    let mut out = format!("\n== idle states\n{}", t.render());
    if idle
        .iter()
        .all(|c| c.states.iter().all(|s| s.exit_latency.is_none()))
    {
        out += "(enter/exit latencies need seed 004's power_start type=4/5 trace points; cpu_idle alone does not carry them)\n";
    }
    out
}
