//! `lever profile list|show|diff|verify|apply|off|hold|import-tuned`.

use crate::render::Table;
use lever_profiles::tuned::Imported;
use lever_profiles::{
    CmdlineArg, DiffReport, DirectApplied, Off, Resolved, Skipped, Summary, VerifyReport,
};

/// The built-in profiles, one row each.
pub fn list(list: &Vec<Summary>) -> String {
    let mut t = Table::new(&["PROFILE", "SEED", "NEEDS", "DESCRIPTION"]);
    for s in list {
        let needs = match (&s.include, s.needs_rt_cpus) {
            (_, true) => "--rt-cpus".to_string(),
            (Some(inc), false) => format!("includes {inc}"),
            (None, false) => "-".to_string(),
        };
        t.row(vec![
            s.name.clone(),
            s.seed.clone(),
            needs,
            s.description.clone(),
        ]);
    }
    t.render()
}

/// The resolved writes, then what was skipped and the command line.
pub fn show(r: &Resolved) -> String {
    let chain = match r.chain.len() {
        0 | 1 => String::new(),
        _ => format!(" ({})", r.chain.join(" -> ")),
    };
    let mut out = format!(
        "profile {}{chain} on target {}{}: {} writes, in order\n",
        r.profile,
        r.target,
        r.rt_cpus
            .as_ref()
            .map(|c| format!(", RT CPUs {c}"))
            .unwrap_or_default(),
        r.writes.len()
    );
    let mut t = Table::new(&["NODE", "VALUE", "RESOURCE", "FROM"]);
    for w in &r.writes {
        let res = w.resource.clone().unwrap_or_else(|| "-".into());
        let res = if w.required {
            res
        } else {
            format!("{res} (may be refused)")
        };
        t.row(vec![
            w.node.clone(),
            w.value.clone(),
            res,
            w.from.to_string(),
        ]);
    }
    out.push_str(&t.render());
    out.push_str(&tail(&r.skipped, &r.cmdline));
    out
}

/// Skipped entries and the boot-time command line, after a table.
fn tail(skipped: &[Skipped], cmdline: &[CmdlineArg]) -> String {
    let mut out = String::new();
    for s in skipped {
        out.push_str(&format!("skipped {} ({}): {}\n", s.key, s.from, s.why));
    }
    if !cmdline.is_empty() {
        let args: Vec<String> = cmdline.iter().map(CmdlineArg::arg).collect();
        out.push_str(&format!(
            "kernel command line to add (boot time only, not written): {}\n",
            args.join(" ")
        ));
        let missing: Vec<String> = cmdline
            .iter()
            .filter(|a| !a.on_running_kernel)
            .map(CmdlineArg::arg)
            .collect();
        if missing.is_empty() {
            out.push_str("  the running kernel's /proc/cmdline already has all of it\n");
        } else {
            out.push_str(&format!(
                "  not on the running kernel's /proc/cmdline: {}\n",
                missing.join(" ")
            ));
        }
    }
    out
}

/// What apply would change.
pub fn diff(d: &DiffReport) -> String {
    let mut out = format!(
        "profile {} on target {}: {} node(s) would change, {} already hold the value\n",
        d.profile,
        d.target,
        d.diff.changes.len(),
        d.diff.unchanged
    );
    if !d.diff.changes.is_empty() {
        let mut t = Table::new(&["NODE", "CURRENT", "", "NEW"]);
        for c in &d.diff.changes {
            let cur = match (&c.current, &c.unreadable) {
                (Some(v), _) => v.clone(),
                (None, Some(why)) => format!("(unreadable: {why})"),
                (None, None) => "?".into(),
            };
            t.row(vec![
                c.write.node.clone(),
                cur,
                "->".into(),
                c.write.value.clone(),
            ]);
        }
        out.push_str(&t.render());
    }
    out.push_str(&tail(&d.skipped, &d.cmdline));
    out
}

/// Nodes that drifted.
pub fn verify(v: &VerifyReport) -> String {
    let n = &v.verification;
    let mut out = format!(
        "profile {} (against {}): {} node(s) checked, {} changed since\n",
        v.profile,
        v.against,
        n.checked,
        n.drifted.len()
    );
    if !n.drifted.is_empty() {
        let mut t = Table::new(&["NODE", "EXPECTED", "NOW"]);
        for d in &n.drifted {
            t.row(vec![
                d.node.clone(),
                d.expected.clone(),
                d.now.clone().unwrap_or_else(|| "(unreadable)".into()),
            ]);
        }
        out.push_str(&t.render());
    }
    out
}

/// What a direct apply did.
pub fn applied(a: &DirectApplied) -> String {
    let mut out = format!(
        "applied {} directly (no daemon holds it): {} node(s) written, {} already held the value; originals in {}\n",
        a.profile, a.written, a.unchanged, a.state
    );
    for r in &a.refused {
        out.push_str(&format!(
            "refused by the kernel (left as it was): {} = {}: {}\n",
            r.node, r.value, r.error
        ));
    }
    out.push_str(&tail(&a.skipped, &a.cmdline));
    out
}

/// What off restored.
pub fn off(o: &Off) -> String {
    format!(
        "profile {} off: {} node(s) restored to their originals\n",
        o.profile,
        o.restored.len()
    )
}

/// What an import mapped, and what it could not.
pub fn imported(i: &Imported) -> String {
    let mut out = match &i.written_to {
        Some(path) => format!(
            "wrote {} ({} setting(s) mapped from {})\n",
            path, i.mapped, i.source
        ),
        None => i.yaml.clone(),
    };
    if i.written_to.is_some() {
        for u in &i.unmapped {
            out.push_str(&format!("not mapped: {u}\n"));
        }
    }
    out
}

/// What the daemon did with `apply`, `off` or `hold`.
#[derive(Debug, serde::Serialize)]
pub struct ByDaemon {
    /// `applied` (the base profile), `off`, `held`.
    pub action: &'static str,
    /// The profile (empty for `off`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub profile: String,
    /// The hold's handle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handle: Option<u32>,
}

impl ByDaemon {
    /// One answer.
    pub fn new(action: &'static str, profile: String, handle: Option<u32>) -> ByDaemon {
        ByDaemon {
            action,
            profile,
            handle,
        }
    }
}

/// One line: what the daemon now holds.
pub fn by_daemon(d: &ByDaemon) -> String {
    match (d.action, d.handle) {
        ("applied", _) => format!(
            "profile {} applied by the daemon as its base profile (kept across restarts; `lever profile off` removes it)\n",
            d.profile
        ),
        ("off", _) => "base profile removed: its nodes are back to their originals\n".into(),
        (_, Some(h)) => format!("holding profile {} (handle {h}) while the command runs\n", d.profile),
        _ => format!("holding profile {} while the command runs\n", d.profile),
    }
}
