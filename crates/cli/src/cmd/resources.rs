//! `lever resources`: a target's tunables with their current values.

use crate::args::{Global, ResourcesArgs};
use crate::render::{print_json, Table};
use lever_engine::{ResourceKind, ResourceSpec};
use lever_kernel::{KernelError, KernelFs};
use serde::Serialize;

#[derive(Serialize)]
struct Row<'a> {
    #[serde(flatten)]
    spec: &'a ResourceSpec,
    /// Current node text, when it could be read.
    value: Option<String>,
    /// The same as an engine level (integer or enum index).
    level: Option<i64>,
    /// Why the value could not be read.
    error: Option<String>,
    /// The value column for people.
    #[serde(skip)]
    shown: String,
}

#[derive(Serialize)]
struct Listing<'a> {
    target: &'a str,
    source: &'a str,
    root: &'a std::path::Path,
    resources: Vec<Row<'a>>,
}

pub fn run(global: &Global, args: ResourcesArgs) -> anyhow::Result<()> {
    let fs = KernelFs::new(&global.root);
    let target = lever_targets::resolve(args.target.as_deref(), &fs)?;
    let rows: Vec<Row> = target
        .resources
        .iter()
        .map(|spec| match lever_tunables::read_current(&fs, spec) {
            Ok(r) => Row {
                shown: match r.text.is_empty() && spec.kind == ResourceKind::HoldFd {
                    true => "(none held)".into(),
                    false => r.text.clone(),
                },
                spec,
                value: Some(r.text),
                level: r.level,
                error: None,
            },
            Err(e) => Row {
                shown: match e {
                    KernelError::Missing { .. } => "(missing)".into(),
                    KernelError::NotAllowed { .. } => "(not allowed)".into(),
                    _ => "(unreadable)".into(),
                },
                spec,
                value: None,
                level: None,
                error: Some(e.to_string()),
            },
        })
        .collect();
    if global.json {
        return print_json(&Listing {
            target: &target.name,
            source: &target.source,
            root: &global.root,
            resources: rows,
        });
    }
    println!(
        "target {} ({}), root {}: {} resources",
        target.name,
        target.source,
        global.root.display(),
        rows.len()
    );
    let mut t = Table::new(&[
        "OPCODE", "NAME", "VALUE", "UNIT", "RANGE", "POLICY", "ACCESS", "NODE",
    ]);
    for row in &rows {
        let s = row.spec;
        t.row(vec![
            s.opcode.to_string(),
            s.name.clone(),
            row.shown.clone(),
            s.unit.clone(),
            range_cell(s),
            s.aggregation.as_str().to_string(),
            match s.permission {
                lever_engine::Permission::System => "system".into(),
                lever_engine::Permission::ThirdParty => "any".into(),
            },
            s.node.clone(),
        ]);
    }
    t.print()?;
    if target.resources.is_empty() {
        println!("no tunable resources found under {}", global.root.display());
    }
    Ok(())
}

fn range_cell(s: &ResourceSpec) -> String {
    match &s.kind {
        ResourceKind::Enum { values } => values.join("|"),
        _ => match &s.steps {
            Some(steps) if !steps.is_empty() => {
                format!("{}..{} ({} steps)", s.low, s.high, steps.len())
            }
            _ => format!("{}..{}", s.low, s.high),
        },
    }
}
