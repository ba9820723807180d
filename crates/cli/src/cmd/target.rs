//! `lever target` (built-in targets, checking target files) and `lever
//! usecases`.

use crate::args::{Global, TargetCommand};
use crate::render::target::{Builtin, Checked, Imported, UsecaseList};
use crate::render::{self, emit};
use clap::Args;
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
        TargetCommand::ImportUrm(args) => {
            let fs = KernelFs::new(&global.root);
            let import = lever_urm::import_dir(&args.dir, &args.name, &fs, args.output.as_deref())?;
            let report = Imported::new(&import, args.output.as_deref());
            emit(global.json, &report, render::target::imported)
        }
    }
}

#[derive(Debug, Args)]
pub struct ImportUrmArgs {
    /// The URM configuration directory.
    pub dir: std::path::PathBuf,
    /// Write the target file here (default: print it).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// The imported target's name.
    #[arg(long, default_value = "urm-import")]
    pub name: String,
}

#[derive(Debug, Args)]
pub struct UsecasesArgs {
    /// Built-in target name or path to a target YAML file. Default: the
    /// built-in target whose `compatible` matches the device tree under
    /// --root, else `generic`.
    #[arg(long, short = 't', value_name = "TARGET", value_parser = crate::cmd::util::target_name(), hide_possible_values = true)]
    pub target: Option<String>,
    /// The use cases of a URM configuration directory, imported as
    /// `lever daemon --urm DIR` runs it (its warnings: `target import-urm`).
    #[arg(long, value_name = "DIR", conflicts_with = "target")]
    pub urm: Option<std::path::PathBuf>,
    /// Also read the use cases of these files (`usecases:`, checked
    /// against the target).
    #[arg(long = "usecases", value_name = "FILE")]
    pub files: Vec<std::path::PathBuf>,
}

/// `lever usecases`: the target file's use cases, plus any given files'.
pub fn usecases(global: &Global, args: UsecasesArgs) -> anyhow::Result<()> {
    let fs = KernelFs::new(&global.root);
    let mut file = match &args.urm {
        Some(dir) => lever_urm::import_dir(dir, "urm", &fs, None)?.target,
        None => lever_targets::resolve_file(args.target.as_deref(), &fs)?,
    };
    for path in &args.files {
        file.add_usecases_from(path)?;
    }
    let list = UsecaseList {
        target: file.name,
        usecases: file.usecases,
    };
    emit(global.json, &list, render::target::usecases)
}
