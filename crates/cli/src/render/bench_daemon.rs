//! How `lever bench-daemon` looks: what was measured, the latency table,
//! then memory and idle CPU.

use crate::render::Table;
use lever_bench_daemon::Report;
use std::fmt::Write as _;

/// The whole report as text.
pub fn report(report: &Report) -> String {
    let mut out = String::new();
    header(&mut out, report);
    out += &latency(report);
    memory_and_idle(&mut out, report);
    out
}

fn header(out: &mut String, report: &Report) {
    if report.ping {
        let _ = writeln!(
            out,
            "ping: PING -> PONG through Lever's loop, no node written"
        );
    } else {
        let _ = writeln!(out, "acquire: client call -> node written and read back -> reply; every acquire and release changes a node ({})",
            report.workload.join(", ")
        );
    }
    if report.rows.iter().any(|r| r.what == "floor") {
        let _ = writeln!(out, "floor: the same client threads and pattern against a bare epoll echo loop in a process of its own (32-byte messages, no work)");
    }
    let _ = writeln!(
        out,
        "daemon on simulated {}, tree on {}; {}",
        report.board,
        report.tree_on,
        if report.interval_us == 0 {
            "closed loop: each client sends its next request as soon as it has the reply"
                .to_string()
        } else {
            format!(
                "each client paced to one request every {} us",
                report.interval_us
            )
        }
    );
}

fn latency(report: &Report) -> String {
    let mut t = Table::new(&[
        "WHAT",
        "CLIENTS",
        "OPS",
        "P50_US",
        "P90_US",
        "P99_US",
        "MAX_US",
        "ACQ+REL/S",
    ]);
    for r in &report.rows {
        t.row(vec![
            r.what.to_string(),
            r.clients.to_string(),
            r.operations.to_string(),
            format!("{:.1}", r.p50_us),
            format!("{:.1}", r.p90_us),
            format!("{:.1}", r.p99_us),
            format!("{:.1}", r.max_us),
            format!("{:.0}", r.acquire_release_per_s),
        ]);
    }
    t.render()
}

fn memory_and_idle(out: &mut String, report: &Report) {
    let _ = writeln!(
        out,
        "daemon RSS: {} kB at start, {} kB after the load (VmRSS)",
        report.rss_kb_idle_start, report.rss_kb_after_load
    );
    if let Some(p) = report.pss_kb_after_load {
        let _ = writeln!(out, "  PSS after the load: {p} kB (shared library pages divided among the processes using them)");
    }
    if let Some(s) = &report.rss_after_load_split {
        let _ = writeln!(out, "  after the load: {} kB the lever executable's pages, {} kB shared libraries, {} kB anonymous (heap, stacks)",
            s.executable_kb, s.libraries_kb, s.anonymous_kb
        );
    }
    match report.idle_cpu_ticks {
        Some(t) => {
            let _ = writeln!(
                out,
                "daemon CPU while idle for {} s: {} clock ticks ({:.0} ms)",
                report.idle_secs,
                t,
                t as f64 * 1000.0 / report.clock_ticks_per_s as f64
            );
        }
        None => {
            let _ = writeln!(out, "idle CPU check skipped");
        }
    }
}
