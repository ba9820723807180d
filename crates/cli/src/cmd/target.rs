//! `lever target`: built-in targets and checking target files.

use crate::args::{Global, TargetCommand};
use crate::render::target::{Builtin, Checked};
use crate::render::{self, emit};
use lever_kernel::KernelFs;

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
            emit(global.json, &list, render::target::list)
        }
        TargetCommand::Check { target } => {
            let fs = KernelFs::new(&global.root);
            let bound = lever_targets::resolve(Some(&target), &fs)?;
            let checked = Checked {
                target: &bound.name,
                source: &bound.source,
                root: &global.root,
                resources: bound.resources.len(),
            };
            emit(global.json, &checked, render::target::checked)
        }
    }
}
