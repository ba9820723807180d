//! `lever sim list|create`.

use crate::render::Table;
use serde::Serialize;
use std::path::PathBuf;

/// A board in `sim list`.
#[derive(Serialize)]
pub struct Board {
    pub name: &'static str,
    pub description: &'static str,
}

/// What `sim create` wrote (fields in the order `--json` has always printed
/// them).
#[derive(Serialize)]
pub struct Created {
    pub board: &'static str,
    pub files: usize,
    pub root: PathBuf,
}

/// The boards, one row each.
pub fn list(boards: &Vec<Board>) -> String {
    let mut t = Table::new(&["BOARD", "DESCRIPTION"]);
    for b in boards {
        t.row(vec![b.name.into(), b.description.into()]);
    }
    t.render()
}

/// Where the tree went and how to use it.
pub fn created(c: &Created) -> String {
    format!(
        "created simulated {} in {} ({} files); use it with: lever --root {} ...\n",
        c.board,
        c.root.display(),
        c.files,
        c.root.display()
    )
}
