//! `lever target list|check`.

use crate::render::Table;
use serde::Serialize;

/// A built-in target in `target list`.
#[derive(Serialize)]
pub struct Builtin {
    pub name: String,
    pub description: String,
    pub compatible: Vec<String>,
}

/// What `target check` bound.
#[derive(Serialize)]
pub struct Checked<'a> {
    pub target: &'a str,
    pub source: &'a str,
    pub root: &'a std::path::Path,
    pub resources: usize,
}

/// The built-in targets, one row each.
pub fn list(list: &Vec<Builtin>) -> String {
    let mut t = Table::new(&["TARGET", "COMPATIBLE", "DESCRIPTION"]);
    for b in list {
        t.row(vec![
            b.name.clone(),
            b.compatible.join(","),
            b.description.clone(),
        ]);
    }
    t.render()
}

/// The check's one line.
pub fn checked(c: &Checked) -> String {
    format!(
        "{} ({}): ok, {} resources bound under {}\n",
        c.target,
        c.source,
        c.resources,
        c.root.display()
    )
}

/// What `lever usecases` lists.
#[derive(Serialize)]
pub struct UsecaseList {
    pub target: String,
    pub usecases: Vec<lever_targets::UseCase>,
}

/// One row per use case, then one line per variant.
pub fn usecases(list: &UsecaseList) -> String {
    if list.usecases.is_empty() {
        return format!("target {} defines no use cases\n", list.target);
    }
    let mut t = Table::new(&[
        "USECASE",
        "ID",
        "DURATION",
        "WHO",
        "SETS",
        "VARIANTS",
        "DESCRIPTION",
    ]);
    for u in &list.usecases {
        let s = &u.settings;
        let duration = if u.duration_ms == 0 {
            "until released".to_string()
        } else {
            format!("{} ms", u.duration_ms)
        };
        let variants: Vec<String> = u
            .variants
            .iter()
            .map(|v| {
                let when: Vec<String> = v
                    .when
                    .iter()
                    .map(|(a, n)| format!("{}={n}", a.as_str()))
                    .collect();
                format!("{}({})", v.name, when.join(","))
            })
            .collect();
        t.row(vec![
            u.name.clone(),
            lever_targets::usecase::Id(u.id).to_string(),
            duration,
            match u.permission {
                lever_engine::resource::Permission::System => "system".into(),
                lever_engine::resource::Permission::ThirdParty => "third-party".into(),
            },
            format!(
                "{} nodes, {} cgroup files, {} thread rules",
                s.nodes.len(),
                s.cgroups.len(),
                s.threads.len()
            ),
            if variants.is_empty() {
                "-".into()
            } else {
                variants.join(" ")
            },
            u.description.clone(),
        ]);
    }
    t.render()
}
