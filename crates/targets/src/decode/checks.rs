//! Checks across templates: pairs point at each other and expand alike,
//! and opcodes stay unique after expansion.

use super::access::{MapView, Result};
use super::RESOURCE_KEYS;
use crate::error::InFile;
use crate::expand::{instances, union_cpus};
use crate::model::{kind_name, Cluster, Clusters, Per, Template, TemplateKind};
use crate::opcode;
use lever_yaml::Node;
use std::collections::HashMap;

pub(super) fn check_pairs(d: &InFile, items: &[Node], templates: &[Template]) -> Result<()> {
    for t in templates {
        let (partner_name, want) = match &t.kind {
            TemplateKind::PairMin { pair } => (pair, "pair-max"),
            TemplateKind::PairMax { pair } => (pair, "pair-min"),
            _ => continue,
        };
        let pos = MapView::open(d, &items[t.at.item], "", RESOURCE_KEYS)?
            .get("pair")
            .map(|n| n.pos)
            .unwrap_or(t.at.entry);
        let field = t.field("pair");
        let Some(p) = templates.iter().find(|p| &p.name == partner_name) else {
            let names: Vec<&str> = templates.iter().map(|t| t.name.as_str()).collect();
            return Err(d.err(
                pos,
                field,
                format!(
                    "`{partner_name}` is not a resource of this file (resources: {})",
                    names.join(", ")
                ),
            ));
        };
        let back = match &p.kind {
            TemplateKind::PairMin { pair } if want == "pair-min" => pair,
            TemplateKind::PairMax { pair } if want == "pair-max" => pair,
            other => {
                return Err(d.err(
                    pos,
                    field,
                    format!(
                        "`{partner_name}` (line {}) is kind {}; the partner of a {} must be kind {want}",
                        p.line(),
                        kind_name(other),
                        kind_name(&t.kind)
                    ),
                ))
            }
        };
        if back != &t.name {
            return Err(d.err(
                pos,
                field,
                format!(
                    "`{partner_name}` (line {}) pairs with `{back}`, not with `{}`",
                    p.line(),
                    t.name
                ),
            ));
        }
        if p.per != t.per || p.index != t.index {
            return Err(d.err(
                pos,
                field,
                format!(
                    "`{partner_name}` (line {}) is per: {}{} but `{}` is per: {}{}; a pair must expand the same way",
                    p.line(),
                    p.per.as_str(),
                    if p.index.is_some() { " with index" } else { "" },
                    t.name,
                    t.per.as_str(),
                    if t.index.is_some() { " with index" } else { "" },
                ),
            ));
        }
    }
    Ok(())
}
/// Opcodes must be unique after expansion. With declared clusters the
/// expansion is known exactly; with `clusters: auto` two templates conflict
/// when some cluster/CPU/index could make their opcodes equal.
pub(super) fn check_opcodes(d: &InFile, templates: &[Template], clusters: &Clusters) -> Result<()> {
    match clusters {
        Clusters::Auto => {
            for (j, b) in templates.iter().enumerate() {
                for a in &templates[..j] {
                    let m = variable_bits(a) | variable_bits(b);
                    if a.opcode.0 & !m == b.opcode.0 & !m {
                        return Err(d.err(
                            b.at.opcode,
                            b.field("opcode"),
                            format!(
                                "opcode {} (per: {}) can expand to the same opcodes as `{}` (line {}, opcode {}, per: {}); use another minor",
                                b.opcode,
                                b.per.as_str(),
                                a.name,
                                a.line(),
                                a.opcode,
                                a.per.as_str()
                            ),
                        ));
                    }
                }
            }
            Ok(())
        }
        Clusters::List(list) => check_expanded(d, templates, list, &union_cpus(list)),
        Clusters::None => check_expanded(d, templates, &[], &[]),
    }
}

fn variable_bits(t: &Template) -> u32 {
    let per = match t.per {
        Per::None => 0,
        Per::Cluster => opcode::CLUSTER_MASK,
        Per::Cpu => opcode::CPU_MASK,
    };
    per | if t.index.is_some() {
        opcode::INDEX_MASK
    } else {
        0
    }
}

fn check_expanded(
    d: &InFile,
    templates: &[Template],
    clusters: &[Cluster],
    cpus: &[u32],
) -> Result<()> {
    let mut seen: HashMap<u32, (String, usize)> = HashMap::new();
    for t in templates {
        for inst in instances(t, clusters, cpus) {
            if let Some((other, line)) = seen.get(&inst.opcode.0) {
                return Err(d.err(
                    t.at.opcode,
                    t.field("opcode"),
                    format!(
                        "duplicate opcode after expansion: {} of `{}` is also the opcode of `{other}` (line {line})",
                        inst.opcode, inst.name
                    ),
                ));
            }
            seen.insert(inst.opcode.0, (inst.name, t.line()));
        }
    }
    Ok(())
}
