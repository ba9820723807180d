//! How the client commands look: `lever acquire`, `release`, `status`,
//! `explain`. A function per output; `--json` prints the daemon's typed
//! documents as they are.

use crate::render::{print_json, Table};
use lever_client::{Explain, Handle, Lease, Status};
use serde::Serialize;
use std::io::Write;

/// `--json` form of an acquire: the handle and the wire duration.
#[derive(Serialize)]
struct Acquired {
    handle: Handle,
    duration_ms: Lease,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    detached: bool,
}

/// A request acquired and held by this process.
pub fn acquired(handle: Handle, lease: Lease, json: bool) -> anyhow::Result<()> {
    if json {
        print_json(&Acquired {
            handle,
            duration_ms: lease,
            detached: false,
        })?;
    } else if let Some(d) = lease.duration() {
        println!(
            "acquired handle {handle}; holding for {} ms (Ctrl-C releases it)",
            d.as_millis()
        );
    } else {
        println!("acquired handle {handle}; holding until Ctrl-C");
    }
    // Shown before the process sleeps on the lease.
    std::io::stdout().flush()?;
    Ok(())
}

/// A detached request left with the daemon: its handle alone, for scripts.
pub fn detached(handle: Handle, lease: Lease, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(&Acquired {
            handle,
            duration_ms: lease,
            detached: true,
        });
    }
    println!("{handle}");
    Ok(())
}

/// A released request.
pub fn released(handle: Handle, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(&serde_json::json!({ "released": handle }));
    }
    println!("released {handle}");
    Ok(())
}

fn or_dash(v: Option<impl ToString>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

fn expires(ms: Option<u64>) -> String {
    ms.map_or_else(|| "never".into(), |ms| ms.to_string())
}

/// `lever status`: the target, the resources (all, or only those held or
/// voted for), and the requests this client may see.
pub fn status(doc: &Status, held_only: bool, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(doc);
    }
    println!(
        "target {} ({}), root {}, {} live request(s)",
        doc.target, doc.source, doc.root, doc.live_requests
    );
    let mut t = Table::new(&["OPCODE", "NAME", "CURRENT", "ORIGINAL", "WINNER", "NODE"]);
    let shown = doc
        .resources
        .iter()
        .filter(|r| !held_only || r.held || r.winner.is_some());
    let mut any = false;
    for r in shown {
        any = true;
        t.row(vec![
            r.opcode.clone(),
            r.name.clone(),
            r.current.clone().unwrap_or_else(|| "(unreadable)".into()),
            or_dash(r.original.as_ref()),
            or_dash(r.winner),
            r.node.clone(),
        ]);
    }
    if any {
        t.print()?;
    } else {
        println!("no resource is held");
    }
    if doc.requests.is_empty() {
        return Ok(());
    }
    println!();
    let mut t = Table::new(&[
        "HANDLE",
        "PID",
        "UID",
        "PRIORITY",
        "EXPIRES_IN_MS",
        "PAIRS",
        "EXE",
    ]);
    for r in &doc.requests {
        let pairs: Vec<String> = r
            .pairs
            .iter()
            .map(|p| format!("{}={}", p.name, p.shown))
            .collect();
        t.row(vec![
            r.handle.to_string(),
            r.pid.to_string(),
            r.uid.to_string(),
            r.priority.to_string(),
            expires(r.expires_in_ms),
            pairs.join(" "),
            or_dash(r.exe.as_ref()),
        ]);
    }
    t.print()?;
    Ok(())
}

/// `lever explain`: the resource, its rule, its votes (strongest first)
/// and what is applied.
pub fn explain(doc: &Explain, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(doc);
    }
    let r = &doc.resource;
    let spec = &doc.spec;
    println!("{} ({}) — {}", r.name, r.opcode, spec.description);
    println!("  node:        {}", r.node);
    println!(
        "  unit:        {}  range {}..{}",
        r.unit, spec.low, spec.high
    );
    println!(
        "  kind:        {}  aggregation {}  access {}",
        spec.kind.as_str(),
        r.aggregation,
        r.permission
    );
    if let Some(pair) = &doc.pair {
        println!("  paired with: {pair} (min <= max kept at every write)");
    }
    println!("  current:     {}", or_dash(r.current.as_ref()));
    println!(
        "  original:    {}",
        if r.held {
            or_dash(r.original.as_ref())
        } else {
            "(not held: current is the original)".into()
        }
    );
    println!("  rule:        {}", doc.rule);
    if doc.votes.is_empty() {
        println!("  votes:       none");
        return Ok(());
    }
    println!("  votes (strongest first):");
    for v in &doc.votes {
        println!(
            "    handle {:<14} {:<12} priority {:<16} expires {}",
            v.handle.to_string(),
            v.shown,
            v.priority.to_string(),
            v.expires_in_ms
                .map_or_else(|| "never".into(), |ms| format!("in {ms} ms"))
        );
    }
    println!("  applied:     {}", or_dash(doc.applied.as_ref()));
    Ok(())
}
