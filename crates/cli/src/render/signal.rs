//! How `lever signal` looks: the use case, its handle and how long it is
//! held, then per resource what was asked and what the node has (as
//! `lever acquire` shows it), then what of the use case was not applied
//! and why.

use crate::render::client::report_lines;
use crate::render::{out, outln, print_json};
use lever_client::{Acquired, Priority};

/// A use case triggered and held by this process.
pub fn signalled(report: &Acquired, priority: Priority, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(report);
    }
    let usecase = report.usecase.as_deref().unwrap_or("?");
    let handle = report.handle;
    match report.lease.and_then(|l| l.duration()) {
        Some(d) => outln!(
            "use case {usecase}: handle {handle}; holding for {} ms (Ctrl-C ends it)",
            d.as_millis()
        )?,
        None => outln!("use case {usecase}: handle {handle}; holding until Ctrl-C")?,
    }
    out(&report_lines(report, priority))?;
    out(&not_applied_lines(report))?;
    Ok(())
}

/// The task settings made and, one a line, what was not applied and why
/// (empty for a use case without a task part).
pub fn not_applied_lines(report: &Acquired) -> String {
    let mut text = String::new();
    if report.not_applied.is_empty() {
        if let Some(n) = report.tasks_applied {
            text.push_str(&format!("  task settings: {n} applied\n"));
        }
        return text;
    }
    text.push_str(&format!(
        "  not applied ({}; the request holds the rest, --strict makes this an error):\n",
        report.not_applied.len()
    ));
    for n in &report.not_applied {
        text.push_str(&format!("    {}: {}\n", n.what, n.why));
    }
    text
}

/// A use case left with the daemon: the report on stderr, the handle alone
/// on stdout (for `H=$(lever signal --detach ...)`).
pub fn detached(report: &Acquired, priority: Priority, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(report);
    }
    eprint!("{}", report_lines(report, priority));
    eprint!("{}", not_applied_lines(report));
    outln!("{}", report.handle)?;
    Ok(())
}
