//! How `lever restore` looks.

use crate::render::print_json;
use lever_daemon::journal::Recovery;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

#[derive(Serialize)]
struct RestoredNode<'a> {
    node: &'a str,
    original: &'a str,
    error: Option<&'a String>,
}

#[derive(Serialize)]
struct EarlierBoot<'a> {
    boot_id: &'a str,
    nodes: usize,
}

#[derive(Serialize)]
struct RestoreReport<'a> {
    restored: Vec<RestoredNode<'a>>,
    earlier_boot: Option<EarlierBoot<'a>>,
}

/// Every node written back (or that failed to be), or why nothing was.
pub fn restore(recovery: &Recovery, state_dir: &Path, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(&RestoreReport {
            restored: recovery
                .restored
                .iter()
                .map(|r| RestoredNode {
                    node: &r.node,
                    original: &r.original,
                    error: r.result.as_ref().err(),
                })
                .collect(),
            earlier_boot: recovery.earlier_boot.as_ref().map(|(boot, n)| EarlierBoot {
                boot_id: boot,
                nodes: *n,
            }),
        });
    }
    let mut out = String::new();
    let out = &mut out;
    if let Some((boot, n)) = &recovery.earlier_boot {
        let _ = writeln!(
            out,
            "the journal is from an earlier boot ({boot}): the reboot already reset its {n} node(s), so nothing was written back"
        );
    }
    for r in &recovery.restored {
        match &r.result {
            Ok(()) => {
                let _ = writeln!(out, "restored {} to {:?}", r.node, r.original);
            }
            Err(e) => {
                let _ = writeln!(out, "FAILED {}: {e}", r.node);
            }
        }
    }
    if recovery.restored.is_empty() && recovery.earlier_boot.is_none() {
        let _ = writeln!(
            out,
            "nothing to restore: the journal in {} is clean",
            state_dir.display()
        );
    }
    super::out(out)
}
