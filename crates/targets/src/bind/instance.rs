//! Binding one instance: its node must exist, bounds and steps that are
//! node paths are read; errors point at the template field that named the
//! node.

use crate::error::{InFile, TargetError};
use crate::expand::Instance;
use crate::model::{Bound, Steps, Template, TemplateKind};
use lever_engine::resource::{Opcode, ResourceKind, ResourceSpec};
use lever_kernel::{KernelError, KernelFs};
use lever_yaml::Pos;

type Result<T> = std::result::Result<T, TargetError>;

/// Why an optional instance is left out: a node it needs is missing.
pub(super) struct Dropped;

/// Which field of a template a kernel node came from.
struct Site<'a> {
    pos: Pos,
    key: &'a str,
    what: &'a str,
    path: &'a str,
}

/// What a user can do about a resource the kernel lacks. In their own file:
/// mark it optional. A built-in target (`builtin:NAME.yaml`) cannot be
/// edited, so say how to get one that can — or one that needs nothing.
fn how_to_skip(file: &str) -> String {
    match file
        .strip_prefix("builtin:")
        .and_then(|f| f.strip_suffix(".yaml"))
    {
        Some(name) => format!(
            "`{name}` is a built-in target and cannot be edited: use `--target generic` \
             (it takes only what this kernel has), or copy Lever's \
             crates/targets/targets/{name}.yaml, mark the resource `optional: true` there \
             and pass the copy with `--target FILE`"
        ),
        None => "mark the resource `optional: true` to skip it".to_string(),
    }
}

/// A bind-time error about one node, at the field that named it.
fn node_error(
    d: &InFile,
    fs: &KernelFs,
    t: &Template,
    inst: &Instance,
    site: Site,
    e: KernelError,
) -> TargetError {
    let Site {
        pos,
        key,
        what,
        path,
    } = site;
    let message = if e.is_missing() {
        let root = if fs.is_system() {
            String::new()
        } else {
            format!(" below root {}", fs.root().display())
        };
        format!(
            "{what} {path} (for `{}`) does not exist{root}: this kernel lacks the feature; {}",
            inst.name,
            how_to_skip(d.file)
        )
    } else {
        format!("{what} {path} (for `{}`): {e}", inst.name)
    };
    TargetError::Field {
        error: lever_yaml::FieldError::new(d.file, pos, t.field(key), message),
        kernel: Some(Box::new(e)),
    }
}

/// Bind one instance: `Ok(Err(Dropped))` when it is optional and a node it
/// needs is missing.
pub(super) fn bind_one(
    d: &InFile,
    t: &Template,
    inst: &Instance,
    fs: &KernelFs,
) -> Result<std::result::Result<ResourceSpec, Dropped>> {
    let node = inst.substitute(&t.node);
    if !fs.exists(&node) {
        if t.optional {
            return Ok(Err(Dropped));
        }
        let e = KernelError::Missing { path: node.clone() };
        return Err(node_error(
            d,
            fs,
            t,
            inst,
            Site {
                pos: t.at.node,
                key: "node",
                what: "node",
                path: &node,
            },
            e,
        ));
    }

    let steps = match &t.steps {
        None => None,
        Some(Steps::List(list)) => Some(list.clone()),
        Some(Steps::Node(path)) => {
            let path = inst.substitute(path);
            match fs.read_i64_list(&path) {
                Ok(mut list) => {
                    // kgsl lists its frequencies fastest first.
                    list.sort_unstable();
                    list.dedup();
                    if list.is_empty() {
                        if !t.optional {
                            return Err(d.err(
                                t.at.steps,
                                t.field("steps"),
                                format!("steps node {path} (for `{}`) is empty", inst.name),
                            ));
                        }
                        None
                    } else {
                        Some(list)
                    }
                }
                // Steps refine a resource; an optional one works without.
                Err(e) if e.is_missing() && t.optional => None,
                Err(e) => {
                    return Err(node_error(
                        d,
                        fs,
                        t,
                        inst,
                        Site {
                            pos: t.at.steps,
                            key: "steps",
                            what: "steps node",
                            path: &path,
                        },
                        e,
                    ))
                }
            }
        }
    };

    let (low, high) = match &t.kind {
        TemplateKind::Enum { values } => (0, values.len() as i64 - 1),
        _ => {
            let mut ends = [0i64; 2];
            for (slot, (b, key, pos)) in [(&t.low, "low", t.at.low), (&t.high, "high", t.at.high)]
                .into_iter()
                .enumerate()
            {
                let from_steps = steps
                    .as_ref()
                    .and_then(|s| if slot == 0 { s.first() } else { s.last() })
                    .copied();
                ends[slot] = match b {
                    Some(Bound::Value(v)) => *v,
                    Some(Bound::Node { path, offset }) => {
                        let path = inst.substitute(path);
                        match fs.read_i64(&path) {
                            Ok(v) => v.checked_add(*offset).ok_or_else(|| {
                                d.err(pos, t.field(key), format!("{path} + {offset} overflows"))
                            })?,
                            Err(e) if e.is_missing() && t.optional => return Ok(Err(Dropped)),
                            Err(e) => {
                                return Err(node_error(
                                    d,
                                    fs,
                                    t,
                                    inst,
                                    Site {
                                        pos,
                                        key,
                                        what: "bound node",
                                        path: &path,
                                    },
                                    e,
                                ))
                            }
                        }
                    }
                    // Only possible when steps were declared (the parser
                    // requires bounds otherwise); an optional resource whose
                    // steps node is missing has nothing to bound it by.
                    None => match from_steps {
                        Some(v) => v,
                        None => return Ok(Err(Dropped)),
                    },
                };
            }
            if ends[0] > ends[1] {
                let pos = if t.low.is_some() {
                    t.at.low
                } else {
                    t.at.entry
                };
                return Err(d.err(
                    pos,
                    t.field("low"),
                    format!(
                        "low bound {} is above high bound {} for `{}` ({})",
                        ends[0],
                        ends[1],
                        inst.name,
                        bound_sources(t, inst)
                    ),
                ));
            }
            (ends[0], ends[1])
        }
    };

    let kind = match &t.kind {
        TemplateKind::Plain => ResourceKind::Plain,
        // Partners are linked once every instance is bound.
        TemplateKind::PairMin { .. } => ResourceKind::PairMin { max: Opcode(0) },
        TemplateKind::PairMax { .. } => ResourceKind::PairMax { min: Opcode(0) },
        TemplateKind::Enum { values } => ResourceKind::Enum {
            values: values.clone(),
        },
        TemplateKind::HoldFd => ResourceKind::HoldFd,
        TemplateKind::CpuList => ResourceKind::CpuList,
    };
    Ok(Ok(ResourceSpec {
        name: inst.name.clone(),
        opcode: inst.opcode,
        node,
        unit: t.unit.clone(),
        low,
        high,
        steps,
        aggregation: t.aggregation,
        permission: t.permission,
        kind,
        description: inst.substitute(&t.description),
    }))
}

fn bound_sources(t: &Template, inst: &Instance) -> String {
    let one = |b: &Option<Bound>| match b {
        Some(Bound::Value(v)) => v.to_string(),
        Some(Bound::Node { path, offset: 0 }) => inst.substitute(path),
        Some(Bound::Node { path, offset }) => format!("{} {offset:+}", inst.substitute(path)),
        None => "from steps".to_string(),
    };
    format!("low: {}, high: {}", one(&t.low), one(&t.high))
}
