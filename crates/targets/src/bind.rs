//! Binding: expanding templates over clusters, CPUs and sub-indexes, and
//! reading bounds and steps from a kernel tree.
//!
//! Expansion rules (see `docs/targets.md`):
//!
//! | per     | instance names           | opcode bits filled      |
//! |---------|--------------------------|-------------------------|
//! | none    | `name`                   | —                       |
//! | cluster | `name.CLUSTER`           | 12..8 = cluster id      |
//! | cpu     | `name.cpuN`              | 12..4 = CPU number      |
//! | + index | `… .INDEX_NAMEi` appended | 3..0 = sub-index       |

use crate::decode::{
    split_template, union_cpus, Bound, Cluster, Clusters, Dec, Per, Piece, Placeholder, Steps,
    TargetFile, Template, TemplateKind,
};
use crate::error::TargetError;
use crate::opcode;
use crate::yaml::Pos;
use lever_engine::resource::{Opcode, ResourceKind, ResourceSpec};
use lever_kernel::{paths, KernelError, KernelFs};
use std::collections::{HashMap, HashSet};
use std::fmt;

/// A target bound to a kernel: the resources Lever can tune there.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// Target name, e.g. `qcs6490`.
    pub name: String,
    /// One line about the board.
    pub description: String,
    /// A file path, or `builtin:NAME`.
    pub source: String,
    /// The resources, in file order, each template's instances in cluster /
    /// CPU / index order.
    pub resources: Vec<ResourceSpec>,
    /// Where each resource was declared (same order as `resources`).
    pub origins: Vec<Origin>,
    /// The clusters, as declared or as discovered for `clusters: auto`.
    pub clusters: Vec<Cluster>,
}

impl Target {
    /// The resource with this opcode.
    pub fn by_opcode(&self, op: Opcode) -> Option<&ResourceSpec> {
        self.resources.iter().find(|r| r.opcode == op)
    }

    /// The resource with this expanded name (e.g. `cpu_min_freq.silver`).
    pub fn by_name(&self, name: &str) -> Option<&ResourceSpec> {
        self.resources.iter().find(|r| r.name == name)
    }
}

/// Where a bound resource came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// Name of the template it was expanded from (e.g. `cpu_min_freq`).
    pub template: String,
    /// The target file (`builtin:NAME.yaml` for built-ins).
    pub file: String,
    /// 1-based line of the template's definition.
    pub line: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// Cluster id, CPU and sub-index of an instance: "the same place" in two
/// templates.
type Place = (Option<u32>, Option<u32>, Option<u32>);

/// One expansion of a template, before the kernel is consulted.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Instance<'c> {
    pub name: String,
    pub opcode: Opcode,
    pub cluster: Option<&'c Cluster>,
    pub cpu: Option<u32>,
    pub index: Option<u32>,
}

impl Instance<'_> {
    /// Identifies "the same place" across templates, to find pair partners.
    fn key(&self) -> Place {
        (self.cluster.map(|c| c.id), self.cpu, self.index)
    }

    /// Fill the placeholders of a (validated) template string.
    fn substitute(&self, text: &str) -> String {
        let Ok(pieces) = split_template(text) else {
            return text.to_string();
        };
        let mut out = String::with_capacity(text.len());
        for piece in pieces {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Slot(Placeholder::Policy) => out.push_str(
                    &self
                        .cluster
                        .map(|c| c.policy.to_string())
                        .unwrap_or_default(),
                ),
                Piece::Slot(Placeholder::Cluster) => {
                    out.push_str(self.cluster.map(|c| c.name.as_str()).unwrap_or_default())
                }
                Piece::Slot(Placeholder::Cpu) => {
                    out.push_str(&self.cpu.map(|c| c.to_string()).unwrap_or_default())
                }
                Piece::Slot(Placeholder::Index) => {
                    out.push_str(&self.index.map(|i| i.to_string()).unwrap_or_default())
                }
            }
        }
        out
    }
}

/// Expand a template over clusters (per: cluster), CPUs (per: cpu) and its
/// sub-indexes.
pub(crate) fn instances<'c>(
    t: &Template,
    clusters: &'c [Cluster],
    cpus: &[u32],
) -> Vec<Instance<'c>> {
    let base: Vec<Instance<'c>> = match t.per {
        Per::None => vec![Instance {
            name: t.name.clone(),
            opcode: t.opcode,
            cluster: None,
            cpu: None,
            index: None,
        }],
        Per::Cluster => clusters
            .iter()
            .map(|c| Instance {
                name: format!("{}.{}", t.name, c.name),
                opcode: opcode::with_cluster(t.opcode, c.id),
                cluster: Some(c),
                cpu: None,
                index: None,
            })
            .collect(),
        Per::Cpu => cpus
            .iter()
            .map(|&cpu| Instance {
                name: format!("{}.cpu{cpu}", t.name),
                opcode: opcode::with_cpu(t.opcode, cpu),
                cluster: None,
                cpu: Some(cpu),
                index: None,
            })
            .collect(),
    };
    let Some(indexes) = &t.index else {
        return base;
    };
    base.into_iter()
        .flat_map(|b| {
            indexes.iter().map(move |&i| Instance {
                name: format!("{}.{}{i}", b.name, t.index_name),
                opcode: opcode::with_index(b.opcode, i),
                index: Some(i),
                ..b.clone()
            })
        })
        .collect()
}

type Result<T> = std::result::Result<T, TargetError>;

/// Why an optional instance is left out: a node it needs is missing.
struct Dropped;

impl TargetFile {
    /// Expand every template over this kernel's clusters and CPUs, read the
    /// bounds and steps that are node paths, and check that every node
    /// exists. Instances of `optional: true` templates whose nodes are
    /// missing are left out (and so is the other half of their pair).
    ///
    /// Errors point at the field in the target file and name the expanded
    /// kernel path, e.g.
    ///
    /// ```text
    /// builtin:qcs6490.yaml:43:11: field `resources[2].node`: node
    /// /sys/devices/system/cpu/cpufreq/policy7/scaling_min_freq (for `cpu_min_freq.prime`) does not exist ...
    /// ```
    pub fn bind(&self, fs: &KernelFs) -> Result<Target> {
        let d = Dec { file: &self.file };
        let (clusters, cpus) = match &self.clusters {
            Clusters::None => (Vec::new(), Vec::new()),
            Clusters::List(list) => (list.clone(), union_cpus(list)),
            Clusters::Auto => discover(&d, self.clusters_pos, fs)?,
        };

        struct Bound1 {
            template: usize,
            key: Place,
            spec: ResourceSpec,
        }
        let mut bound: Vec<Bound1> = Vec::new();
        for (ti, t) in self.resources.iter().enumerate() {
            for inst in instances(t, &clusters, &cpus) {
                // An optional instance with a missing node is left out.
                if let Ok(spec) = bind_one(&d, t, &inst, fs)? {
                    bound.push(Bound1 {
                        template: ti,
                        key: inst.key(),
                        spec,
                    });
                }
            }
        }

        // Link pairs: each half learns its partner's opcode. An optional
        // half whose partner was dropped cannot keep min <= max, so it goes.
        let by_place: HashMap<(usize, Place), Opcode> = bound
            .iter()
            .map(|b| ((b.template, b.key), b.spec.opcode))
            .collect();
        let index_of: HashMap<&str, usize> = self
            .resources
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.as_str(), i))
            .collect();
        let mut kept = Vec::with_capacity(bound.len());
        for mut b in bound {
            let t = &self.resources[b.template];
            let partner = match &t.kind {
                TemplateKind::PairMin { pair } | TemplateKind::PairMax { pair } => index_of
                    .get(pair.as_str())
                    .and_then(|pi| by_place.get(&(*pi, b.key))),
                _ => {
                    kept.push(b);
                    continue;
                }
            };
            let Some(&partner) = partner else {
                continue;
            };
            b.spec.kind = match t.kind {
                TemplateKind::PairMin { .. } => ResourceKind::PairMin { max: partner },
                _ => ResourceKind::PairMax { min: partner },
            };
            kept.push(b);
        }

        // Unique after expansion. The parser proved this for declared
        // clusters; for `clusters: auto` it is re-checked on what was found.
        let mut seen_op: HashMap<Opcode, usize> = HashMap::new();
        let mut seen_name: HashSet<&str> = HashSet::new();
        for (i, b) in kept.iter().enumerate() {
            let t = &self.resources[b.template];
            if let Some(&j) = seen_op.get(&b.spec.opcode) {
                let other = &kept[j];
                return Err(d.err(
                    t.at.opcode,
                    t.field("opcode"),
                    format!(
                        "duplicate opcode after expansion: {} of `{}` is also the opcode of `{}` (line {})",
                        b.spec.opcode,
                        b.spec.name,
                        other.spec.name,
                        self.resources[other.template].line()
                    ),
                ));
            }
            seen_op.insert(b.spec.opcode, i);
            if !seen_name.insert(&b.spec.name) {
                return Err(d.err(
                    t.at.entry,
                    t.field("name"),
                    format!("duplicate resource name `{}` after expansion", b.spec.name),
                ));
            }
        }

        let origins = kept
            .iter()
            .map(|b| {
                let t = &self.resources[b.template];
                Origin {
                    template: t.name.clone(),
                    file: self.file.clone(),
                    line: t.line(),
                }
            })
            .collect();
        Ok(Target {
            name: self.name.clone(),
            description: self.description.clone(),
            source: self.source.clone(),
            resources: kept.into_iter().map(|b| b.spec).collect(),
            origins,
            clusters,
        })
    }
}

/// `clusters: auto`: one cluster per `cpufreq/policyN`, in policy order.
/// CPUs for per-CPU resources come from `/sys/devices/system/cpu/present`
/// when it exists (a VM without cpufreq still has CPUs), else from the
/// policies.
fn discover(d: &Dec, pos: Pos, fs: &KernelFs) -> Result<(Vec<Cluster>, Vec<u32>)> {
    let kernel_err = |e: KernelError, what: &str| TargetError::Field {
        file: d.file.to_string(),
        line: pos.line,
        col: pos.col,
        field: "clusters".to_string(),
        message: format!("cannot discover clusters: {what}: {e}"),
        kernel: Some(Box::new(e)),
    };
    let mut policies: Vec<u32> = match fs.list_dir(paths::CPUFREQ) {
        Ok(names) => names
            .iter()
            .filter_map(|n| n.strip_prefix("policy")?.parse().ok())
            .collect(),
        Err(e) if e.is_missing() => Vec::new(),
        Err(e) => return Err(kernel_err(e, "listing cpufreq policies")),
    };
    policies.sort_unstable();
    if policies.len() > opcode::MAX_CLUSTER_ID as usize + 1 {
        return Err(d.err(
            pos,
            "clusters",
            format!(
                "found {} cpufreq policies; opcodes have room for {} clusters",
                policies.len(),
                opcode::MAX_CLUSTER_ID + 1
            ),
        ));
    }
    let mut clusters = Vec::new();
    for (id, policy) in policies.into_iter().enumerate() {
        let dir = format!("{}/policy{policy}", paths::CPUFREQ);
        // `related_cpus` is space separated (`0 1 2 3`); accept ranges too.
        let mut cpus = Vec::new();
        for file in ["related_cpus", "affected_cpus"] {
            let text = match fs.read_optional(&format!("{dir}/{file}")) {
                Ok(Some(t)) => t,
                Ok(None) => continue,
                Err(e) => return Err(kernel_err(e, "reading a policy's CPUs")),
            };
            cpus = text
                .split_whitespace()
                .filter_map(lever_kernel::parse_cpu_list)
                .flatten()
                .filter(|c| *c <= opcode::MAX_CPU)
                .collect();
            break;
        }
        cpus.sort_unstable();
        cpus.dedup();
        clusters.push(Cluster {
            name: format!("policy{policy}"),
            id: id as u32,
            policy,
            cpus,
        });
    }
    let present = format!("{}/present", paths::CPU);
    let cpus = match fs.read_optional(&present) {
        Ok(Some(text)) => lever_kernel::parse_cpu_list(&text)
            .map(|mut v| {
                v.retain(|c| *c <= opcode::MAX_CPU);
                v
            })
            .unwrap_or_else(|| union_cpus(&clusters)),
        Ok(None) => union_cpus(&clusters),
        Err(e) => return Err(kernel_err(e, "reading the present CPUs")),
    };
    Ok((clusters, cpus))
}

/// Which field of a template a kernel node came from.
struct Site<'a> {
    pos: Pos,
    key: &'a str,
    what: &'a str,
    path: &'a str,
}

/// A bind-time error about one node, at the field that named it.
fn node_error(
    d: &Dec,
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
            "{what} {path} (for `{}`) does not exist{root}: this kernel lacks the feature; \
             mark the resource `optional: true` to skip it",
            inst.name
        )
    } else {
        format!("{what} {path} (for `{}`): {e}", inst.name)
    };
    TargetError::Field {
        file: d.file.to_string(),
        line: pos.line,
        col: pos.col,
        field: t.field(key),
        message,
        kernel: Some(Box::new(e)),
    }
}

/// Bind one instance: `Ok(Err(Dropped))` when it is optional and a node it
/// needs is missing.
fn bind_one(
    d: &Dec,
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
