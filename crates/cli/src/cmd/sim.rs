//! `lever sim`: simulated boards.

use crate::args::{Global, SimCommand};
use crate::render::{print_json, Table};
use serde::Serialize;

#[derive(Serialize)]
struct Board {
    name: &'static str,
    description: &'static str,
}

pub fn run(global: &Global, cmd: SimCommand) -> anyhow::Result<()> {
    match cmd {
        SimCommand::List => {
            let boards: Vec<Board> = lever_sim::boards()
                .into_iter()
                .map(|b| Board {
                    name: b.name,
                    description: b.description,
                })
                .collect();
            if global.json {
                return print_json(&boards);
            }
            let mut t = Table::new(&["BOARD", "DESCRIPTION"]);
            for b in boards {
                t.row(vec![b.name.into(), b.description.into()]);
            }
            t.print()?;
        }
        SimCommand::Create { board, dir } => {
            let created = lever_sim::create(&board, &dir)?;
            if global.json {
                return print_json(&serde_json::json!({
                    "board": created.board,
                    "root": created.root,
                    "files": created.files,
                }));
            }
            println!(
                "created simulated {} in {} ({} files); use it with: lever --root {} ...",
                created.board,
                created.root.display(),
                created.files,
                created.root.display()
            );
        }
    }
    Ok(())
}
