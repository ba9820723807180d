//! Binding: each template's instances ([`crate::expand`]) checked against a
//! kernel tree — nodes exist, bounds and steps that are node paths read —
//! then pairs linked and opcodes and names proved unique. `clusters: auto`
//! is discovered first ([`discover`]).

mod discover;
mod instance;

use crate::error::{InFile, TargetError};
use crate::expand::{instances, union_cpus, Place};
use crate::model::{Cluster, Clusters, TargetFile, TemplateKind};
use lever_engine::resource::{Opcode, ResourceKind, ResourceSpec};
use lever_kernel::KernelFs;
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
    /// The use cases, as declared (their resources resolved to opcodes).
    pub usecases: Vec<crate::usecase::UseCase>,
    /// The `apps:` entries.
    pub apps: Vec<crate::usecase::App>,
    /// The filter for app detection.
    pub app_filter: lever_procwatch::AppFilter,
}

impl Target {
    /// A matcher for the `apps:` entries and `app_filter:`, for the
    /// daemon's process-connector loop.
    pub fn app_matcher(
        &self,
    ) -> std::result::Result<lever_procwatch::AppMatcher, lever_procwatch::WatchError> {
        lever_procwatch::AppMatcher::new(
            self.apps.iter().map(|a| a.pattern.clone()).collect(),
            self.app_filter.clone(),
        )
    }

    /// The `apps:` entry named `name`.
    pub fn app(&self, name: &str) -> Option<&crate::usecase::App> {
        self.apps.iter().find(|a| a.pattern.name == name)
    }
    /// The use case named `name`, or whose id is `name` as a number
    /// (`0x00030001`).
    pub fn usecase(&self, name: &str) -> Option<&crate::usecase::UseCase> {
        crate::usecase::find(&self.usecases, name)
    }

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

type Result<T> = std::result::Result<T, TargetError>;

/// [`discover::discover`]'s clusters, for [`crate::discover_clusters`].
pub(crate) fn discover_clusters(d: &InFile, fs: &KernelFs) -> Result<Vec<Cluster>> {
    discover::discover(d, lever_yaml::Pos { line: 1, col: 1 }, fs).map(|(c, _)| c)
}

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
        let d = InFile { file: &self.file };
        let (clusters, cpus) = match &self.clusters {
            Clusters::None => (Vec::new(), Vec::new()),
            Clusters::List(list) => (list.clone(), union_cpus(list)),
            Clusters::Auto => discover::discover(&d, self.clusters_pos, fs)?,
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
                if let Ok(spec) = instance::bind_one(&d, t, &inst, fs)? {
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
        let resources: Vec<ResourceSpec> = kept.into_iter().map(|b| b.spec).collect();
        // A use case may name an `optional: true` resource this kernel
        // lacks: that setting is left out, as the resource is.
        let bound: HashSet<Opcode> = resources.iter().map(|r| r.opcode).collect();
        let mut usecases = self.usecases.clone();
        for u in &mut usecases {
            u.settings.nodes.retain(|n| bound.contains(&n.opcode));
            for v in &mut u.variants {
                v.settings.nodes.retain(|n| bound.contains(&n.opcode));
            }
        }
        Ok(Target {
            name: self.name.clone(),
            description: self.description.clone(),
            source: self.source.clone(),
            resources,
            origins,
            clusters,
            usecases,
            apps: self.apps.clone(),
            app_filter: self.app_filter.clone(),
        })
    }
}
