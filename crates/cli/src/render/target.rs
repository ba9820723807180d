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
