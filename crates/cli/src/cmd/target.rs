//! `lever target`: built-in targets and checking target files.

use crate::args::{Global, TargetCommand};
use crate::render::{print_json, Table};
use lever_kernel::KernelFs;
use serde::Serialize;

#[derive(Serialize)]
struct Builtin {
    name: String,
    description: String,
    compatible: Vec<String>,
}

#[derive(Serialize)]
struct Checked<'a> {
    target: &'a str,
    source: &'a str,
    root: &'a std::path::Path,
    resources: usize,
}

pub fn run(global: &Global, cmd: TargetCommand) -> anyhow::Result<()> {
    match cmd {
        TargetCommand::List => {
            let mut list = Vec::new();
            for name in lever_targets::builtin_names() {
                let file = lever_targets::load_builtin(name)?;
                list.push(Builtin {
                    name: file.name.clone(),
                    description: file.description.clone(),
                    compatible: file.compatible.clone(),
                });
            }
            if global.json {
                return print_json(&list);
            }
            let mut t = Table::new(&["TARGET", "COMPATIBLE", "DESCRIPTION"]);
            for b in list {
                t.row(vec![b.name, b.compatible.join(","), b.description]);
            }
            t.print()?;
        }
        TargetCommand::Check { target } => {
            let fs = KernelFs::new(&global.root);
            let bound = lever_targets::resolve(Some(&target), &fs)?;
            if global.json {
                return print_json(&Checked {
                    target: &bound.name,
                    source: &bound.source,
                    root: &global.root,
                    resources: bound.resources.len(),
                });
            }
            println!(
                "{} ({}): ok, {} resources bound under {}",
                bound.name,
                bound.source,
                bound.resources.len(),
                global.root.display()
            );
        }
    }
    Ok(())
}
