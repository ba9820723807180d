//! `lever resources`: a target's tunables with their current values.

use crate::render::Table;
use lever_engine::{Permission, ResourceKind, ResourceSpec};
use serde::Serialize;

#[derive(Serialize)]
pub struct Row<'a> {
    #[serde(flatten)]
    pub spec: &'a ResourceSpec,
    /// Current node text, when it could be read.
    pub value: Option<String>,
    /// The same as an engine level (integer or enum index).
    pub level: Option<i64>,
    /// Why the value could not be read.
    pub error: Option<String>,
    /// The value column for people.
    #[serde(skip)]
    pub shown: String,
}

#[derive(Serialize)]
pub struct Listing<'a> {
    pub target: &'a str,
    pub source: &'a str,
    pub root: &'a std::path::Path,
    pub resources: Vec<Row<'a>>,
}

/// The heading line, one row per resource, and a note when there is none.
pub fn listing(l: &Listing) -> String {
    let mut out = format!(
        "target {} ({}), root {}: {} resources\n",
        l.target,
        l.source,
        l.root.display(),
        l.resources.len()
    );
    let mut t = Table::new(&[
        "OPCODE", "NAME", "VALUE", "UNIT", "RANGE", "POLICY", "ACCESS", "NODE",
    ]);
    for row in &l.resources {
        let s = row.spec;
        t.row(vec![
            s.opcode.to_string(),
            s.name.clone(),
            row.shown.clone(),
            s.unit.clone(),
            range_cell(s),
            s.aggregation.as_str().to_string(),
            match s.permission {
                Permission::System => "system".into(),
                Permission::ThirdParty => "any".into(),
            },
            s.node.clone(),
        ]);
    }
    out += &t.render();
    if l.resources.is_empty() {
        out += &format!("no tunable resources found under {}\n", l.root.display());
    }
    out
}

fn range_cell(s: &ResourceSpec) -> String {
    match &s.kind {
        ResourceKind::Enum { values } => values.join("|"),
        ResourceKind::CpuList => format!("CPUs {}", s.render(s.high)),
        _ => match &s.steps {
            Some(steps) if !steps.is_empty() => {
                format!("{}..{} ({} steps)", s.low, s.high, steps.len())
            }
            _ => format!("{}..{}", s.low, s.high),
        },
    }
}
