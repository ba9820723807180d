//! `lever resources`: a target's tunables with their current values.

use crate::args::{Global, ResourcesArgs};
use crate::render::resources::{Listing, Row};
use crate::render::{self, emit};
use lever_engine::ResourceKind;
use lever_kernel::{KernelError, KernelFs};

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
    let listing = Listing {
        target: &target.name,
        source: &target.source,
        root: &global.root,
        resources: rows,
    };
    emit(global.json, &listing, render::resources::listing)
}
