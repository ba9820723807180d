//! `lever status`: the target, the resources and the live requests.

use crate::render::num::{or_dash, with_unit};
use crate::render::{outln, print_json, Table};
use lever_client::Status;

fn expires(ms: Option<u64>) -> String {
    ms.map_or_else(|| "never".into(), |ms| ms.to_string())
}

/// `lever status`: the target, the resources (only those held or voted
/// for, and how many others; all with `--all`), and the requests this
/// client may see.
pub fn status(doc: &Status, held_only: bool, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(doc);
    }
    outln!(
        "target {} ({}), root {}, {} live request(s)",
        doc.target,
        doc.source,
        doc.root,
        doc.live_requests
    )?;
    if let Some(apps) = &doc.app_detection {
        outln!("app detection: {apps}")?;
    }
    if let Some(why) = &doc.task_rules {
        outln!("task rules: {why}")?;
    }
    if let Some(p) = &doc.profile {
        let base = p.base.as_deref().unwrap_or("none");
        let holds: Vec<String> = p
            .holds
            .iter()
            .map(|h| match h.pid {
                Some(pid) => format!("{} (handle {}, pid {pid})", h.name, h.handle),
                None => format!("{} (handle {})", h.name, h.handle),
            })
            .collect();
        let holds = if holds.is_empty() {
            String::new()
        } else {
            format!(", held: {}", holds.join(", "))
        };
        outln!(
            "profile: {} (base {base}{holds})",
            p.effective.as_deref().unwrap_or("none")
        )?;
    }
    // Originals a node refused at start-up: the daemon still owes them.
    for u in &doc.unrestored {
        outln!(
            "NOT RESTORED: {} should be {:?} (kept in the journal, retried): {}",
            u.node,
            u.original,
            u.error
        )?;
    }
    let mut t = Table::new(&["OPCODE", "NAME", "CURRENT", "ORIGINAL", "WINNER", "NODE"]);
    let shown = doc
        .resources
        .iter()
        .filter(|r| !held_only || r.held || r.winner.is_some());
    let mut any = 0;
    for r in shown {
        any += 1;
        t.row(vec![
            r.opcode.clone(),
            r.name.clone(),
            r.current
                .as_deref()
                .map_or_else(|| "(unreadable)".into(), |v| with_unit(v, &r.unit)),
            or_dash(r.original.as_deref().map(|v| with_unit(v, &r.unit))),
            or_dash(r.winner),
            r.node.clone(),
        ]);
    }
    let others = doc.resources.len() - any;
    if any > 0 {
        t.print()?;
    } else {
        outln!("no resource is held")?;
    }
    if held_only && others > 0 {
        outln!(
            "{others} other resource(s) at their original value (`lever status --all` lists them)"
        )?;
    }
    if doc.requests.is_empty() {
        return Ok(());
    }
    outln!("")?;
    // A USECASE column only when a use case holds a request, so the
    // table of a perflock-only daemon stays as it was.
    let usecases = doc.requests.iter().any(|r| r.usecase.is_some());
    let mut head = vec!["HANDLE", "PID", "UID", "PRIORITY", "EXPIRES_IN_MS"];
    if usecases {
        head.push("USECASE");
    }
    head.extend(["PAIRS", "EXE"]);
    let mut t = Table::new(&head);
    for r in &doc.requests {
        let pairs: Vec<String> = r
            .pairs
            .iter()
            .map(|p| format!("{}={}", p.name, with_unit(&p.shown, &p.unit)))
            .collect();
        let mut row = vec![
            r.handle.to_string(),
            r.pid.to_string(),
            r.uid.to_string(),
            r.priority.to_string(),
            expires(r.expires_in_ms),
        ];
        if usecases {
            row.push(or_dash(r.usecase.as_ref()));
        }
        row.extend([pairs.join(" "), or_dash(r.exe.as_ref())]);
        t.row(row);
    }
    t.print()?;
    Ok(())
}
