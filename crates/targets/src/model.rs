//! The types of a parsed target file: a [`TargetFile`] of resource
//! [`Template`]s and the [`Clusters`] they expand over, as [`crate::parse`]
//! returns them and [`TargetFile::bind`] consumes them. Pure data: the
//! decoder fills them, binding reads them.

use lever_engine::resource::{Aggregation, Opcode, Permission};
use lever_yaml::Pos;

/// A parsed, checked target file, not yet bound to a kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetFile {
    /// The target's name (`target:`), e.g. `qcs6490`.
    pub name: String,
    /// One line about the board (`description:`).
    pub description: String,
    /// Where it came from: a file path, or `builtin:NAME`.
    pub source: String,
    /// Device-tree compatible strings this target is for (`compatible:`).
    pub compatible: Vec<String>,
    /// The CPU clusters (`clusters:`).
    pub clusters: Clusters,
    /// The resource templates (`resources:`), in file order.
    pub resources: Vec<Template>,
    /// The use cases (`usecases:`, and any added with
    /// [`TargetFile::add_usecases`]), in file order.
    pub usecases: Vec<crate::usecase::UseCase>,
    /// The apps detected and configured while they run (`apps:`).
    pub apps: Vec<crate::usecase::App>,
    /// Which processes are considered for `apps:` at all.
    pub app_filter: lever_procwatch::AppFilter,
    /// Name used for `FILE:LINE:COL` in errors.
    pub(crate) file: String,
    /// Position of the `clusters:` value (for discovery errors).
    pub(crate) clusters_pos: Pos,
}

/// Where a target's CPU clusters come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clusters {
    /// No `clusters:` key: only `per: none` resources are possible.
    None,
    /// Declared in the file.
    List(Vec<Cluster>),
    /// `clusters: auto`: one cluster per cpufreq policy, discovered at bind
    /// time (id = position in policy order, name = `policyN`).
    Auto,
}

/// One CPU cluster: the CPUs that share a cpufreq policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// Name used in expanded resource names and `{cluster}`, e.g. `silver`.
    pub name: String,
    /// Cluster id, placed in opcode bits 12..8 (QCS6490: gold 0, silver 1,
    /// prime 2).
    pub id: u32,
    /// cpufreq policy number (`policyN`), substituted for `{policy}`.
    pub policy: u32,
    /// The cluster's CPUs, ascending.
    pub cpus: Vec<u32>,
}

/// What a resource template expands over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Per {
    /// One instance.
    None,
    /// One instance per cluster (`name.CLUSTER`).
    Cluster,
    /// One instance per CPU (`name.cpuN`).
    Cpu,
}

impl Per {
    /// The word used in target files (`none`, `cluster`, `cpu`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Per::None => "none",
            Per::Cluster => "cluster",
            Per::Cpu => "cpu",
        }
    }
}

/// A lower or upper bound as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bound {
    /// A literal integer.
    Value(i64),
    /// A node read at bind time, plus a constant (`PATH - 1`).
    Node {
        /// Kernel path, possibly with placeholders.
        path: String,
        /// Added to the value read.
        offset: i64,
    },
}

/// Allowed discrete values as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Steps {
    /// An inline list, sorted ascending.
    List(Vec<i64>),
    /// A node holding whitespace-separated integers, read at bind time.
    Node(String),
}

/// A template's kind, with the partner's template name for pairs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateKind {
    /// One integer node.
    Plain,
    /// Lower half of a min/max pair; `pair` is the partner template.
    PairMin {
        /// Partner (`pair-max`) template name.
        pair: String,
    },
    /// Upper half of a min/max pair.
    PairMax {
        /// Partner (`pair-min`) template name.
        pair: String,
    },
    /// One of an ordered list of strings.
    Enum {
        /// Values, lowest to highest.
        values: Vec<String>,
    },
    /// A request held by an open file descriptor (PM QoS).
    HoldFd,
    /// A set of CPUs in the kernel's list form (`cpuset.cpus`).
    CpuList,
}

/// One `resources:` entry, before expansion.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    /// Template name; instances are `name`, `name.CLUSTER`, `name.cpuN`,
    /// with `.INDEX_NAMEi` appended when `index` is set.
    pub name: String,
    /// Base opcode; expansion fills the cluster/CPU/index bits.
    pub opcode: Opcode,
    /// What it expands over.
    pub per: Per,
    /// Sub-indexes it also expands over (`index: 0-2`), ascending.
    pub index: Option<Vec<u32>>,
    /// Word before the sub-index in instance names (`state` →
    /// `cpuidle_disable.cpu3.state1`); default `index`.
    pub index_name: String,
    /// Node path template.
    pub node: String,
    /// Kind.
    pub kind: TemplateKind,
    /// Unit of values.
    pub unit: String,
    /// Lower bound; `None` means "the smallest step" (or 0 for enums).
    pub low: Option<Bound>,
    /// Upper bound; `None` means "the largest step" (or the last enum index).
    pub high: Option<Bound>,
    /// Discrete values.
    pub steps: Option<Steps>,
    /// How concurrent requests combine.
    pub aggregation: Aggregation,
    /// Who may request it.
    pub permission: Permission,
    /// What it is for; may use placeholders.
    pub description: String,
    /// Drop instances whose nodes are missing instead of failing.
    pub optional: bool,
    pub(crate) at: TemplatePos,
}

/// Where a template's fields are, for bind-time errors.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct TemplatePos {
    /// Index in `resources:`.
    pub item: usize,
    pub entry: Pos,
    pub opcode: Pos,
    pub node: Pos,
    pub low: Pos,
    pub high: Pos,
    pub steps: Pos,
}

impl Template {
    /// 1-based line of the template's first key.
    pub fn line(&self) -> usize {
        self.at.entry.line
    }

    /// Field path of one of this template's keys, e.g. `resources[3].node`.
    pub(crate) fn field(&self, key: &str) -> String {
        format!("resources[{}].{key}", self.at.item)
    }
}

/// The word used in target files for a kind (`pair-min`, ...).
pub(crate) fn kind_name(k: &TemplateKind) -> &'static str {
    match k {
        TemplateKind::Plain => "plain",
        TemplateKind::PairMin { .. } => "pair-min",
        TemplateKind::PairMax { .. } => "pair-max",
        TemplateKind::Enum { .. } => "enum",
        TemplateKind::HoldFd => "hold-fd",
        TemplateKind::CpuList => "cpulist",
    }
}
