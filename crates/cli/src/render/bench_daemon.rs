//! How `lever bench-daemon` looks: what was measured, the latency table,
//! then memory and idle CPU.

use crate::render::{print_json, Table};
use lever_bench_daemon::Report;

/// The whole report.
pub fn report(report: &Report, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(report);
    }
    header(report);
    latency(report)?;
    memory_and_idle(report);
    Ok(())
}

fn header(report: &Report) {
    if report.ping {
        println!("ping: PING -> PONG through Lever's loop, no node written");
    } else {
        println!(
            "acquire: client call -> node written and read back -> reply; every acquire and release changes a node ({})",
            report.workload.join(", ")
        );
    }
    if report.rows.iter().any(|r| r.what == "floor") {
        println!("floor: the same client threads and pattern against a bare epoll echo loop in a process of its own (32-byte messages, no work)");
    }
    println!(
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

fn latency(report: &Report) -> anyhow::Result<()> {
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
    Ok(t.print()?)
}

fn memory_and_idle(report: &Report) {
    println!(
        "daemon RSS: {} kB at start, {} kB after the load (VmRSS)",
        report.rss_kb_idle_start, report.rss_kb_after_load
    );
    if let Some(p) = report.pss_kb_after_load {
        println!("  PSS after the load: {p} kB (shared library pages divided among the processes using them)");
    }
    if let Some(s) = &report.rss_after_load_split {
        println!(
            "  after the load: {} kB the lever executable's pages, {} kB shared libraries, {} kB anonymous (heap, stacks)",
            s.executable_kb, s.libraries_kb, s.anonymous_kb
        );
    }
    match report.idle_cpu_ticks {
        Some(t) => println!(
            "daemon CPU while idle for {} s: {} clock ticks ({:.0} ms)",
            report.idle_secs,
            t,
            t as f64 * 1000.0 / report.clock_ticks_per_s as f64
        ),
        None => println!("idle CPU check skipped"),
    }
}
