//! `lever sim`: simulated boards.

use crate::args::{Global, SimCommand};
use crate::render::sim::{Board, Created};
use crate::render::{self, emit};

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
            emit(global.json, &boards, render::sim::list)
        }
        SimCommand::Create { board, dir } => {
            let created = lever_sim::create(&board, &dir)?;
            let created = Created {
                board: created.board,
                files: created.files,
                root: created.root,
            };
            emit(global.json, &created, render::sim::created)
        }
    }
}
