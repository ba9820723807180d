//! How `lever signal` looks: the use case, its handle and how long it is
//! held, then per resource what was asked and what the node has (as
//! `lever acquire` shows it).

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
    Ok(())
}

/// A use case left with the daemon: the report on stderr, the handle alone
/// on stdout (for `H=$(lever signal --detach ...)`).
pub fn detached(report: &Acquired, priority: Priority, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(report);
    }
    eprint!("{}", report_lines(report, priority));
    outln!("{}", report.handle)?;
    Ok(())
}
