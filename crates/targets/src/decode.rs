//! Decoding the marked YAML tree into a [`TargetFile`], by hand, so that
//! every mistake is reported at its line and column with the field's path.
//!
//! Everything that can be checked without a kernel is checked here: key
//! names, types, enumerated values, opcodes (including uniqueness after
//! expansion over the declared clusters and CPUs), pairs, placeholders and
//! literal bounds. [`TargetFile::bind`](crate::TargetFile::bind) checks the
//! rest against a kernel tree.

use crate::error::TargetError;
use crate::opcode;
use crate::yaml::{Node, Pos, Value};
use lever_engine::resource::{Aggregation, Opcode, Permission};
use std::collections::{BTreeSet, HashMap};

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
    fn as_str(self) -> &'static str {
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

const TOP_KEYS: &[&str] = &[
    "target",
    "description",
    "compatible",
    "clusters",
    "resources",
];
const CLUSTER_KEYS: &[&str] = &["name", "id", "policy", "cpus"];
const RESOURCE_KEYS: &[&str] = &[
    "name",
    "opcode",
    "per",
    "index",
    "index_name",
    "node",
    "kind",
    "pair",
    "values",
    "unit",
    "low",
    "high",
    "steps",
    "aggregation",
    "permission",
    "description",
    "optional",
];
const PER_VALUES: &[&str] = &["none", "cluster", "cpu"];
const KIND_VALUES: &[&str] = &["plain", "pair-min", "pair-max", "enum", "hold-fd"];
const AGGREGATION_VALUES: &[&str] = &["max", "min", "newest", "oldest"];
const PERMISSION_VALUES: &[&str] = &["system", "third-party"];

/// Builds errors that point into one file.
pub(crate) struct Dec<'a> {
    pub file: &'a str,
}

impl Dec<'_> {
    pub fn err(
        &self,
        pos: Pos,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> TargetError {
        TargetError::Field {
            file: self.file.to_string(),
            line: pos.line,
            col: pos.col,
            field: field.into(),
            message: message.into(),
            kernel: None,
        }
    }
}

type Result<T> = std::result::Result<T, TargetError>;

/// A mapping whose keys were checked: no duplicates, none unknown.
struct MapView<'n> {
    pos: Pos,
    path: String,
    entries: Vec<(&'n str, Pos, &'n Node)>,
}

impl<'n> MapView<'n> {
    fn open(d: &Dec, node: &'n Node, path: &str, allowed: &[&str]) -> Result<Self> {
        let Value::Map(pairs) = &node.value else {
            return Err(d.err(
                node.pos,
                display_path(path),
                format!("expected a mapping, found {}", node.type_name()),
            ));
        };
        let mut entries: Vec<(&str, Pos, &Node)> = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            let key = match &k.value {
                Value::Scalar { text, .. } => text.as_str(),
                _ => {
                    return Err(d.err(
                        k.pos,
                        display_path(path),
                        format!("a key must be a plain name, found {}", k.type_name()),
                    ))
                }
            };
            let field = join(path, key);
            if let Some((_, first, _)) = entries.iter().find(|(n, _, _)| *n == key) {
                return Err(d.err(
                    k.pos,
                    field,
                    format!(
                        "duplicate key (first given at line {}, column {})",
                        first.line, first.col
                    ),
                ));
            }
            if !allowed.contains(&key) {
                let mut message = format!("unknown key (expected one of: {})", allowed.join(", "));
                if let Some(near) = closest(key, allowed) {
                    message.push_str(&format!("; did you mean `{near}`?"));
                }
                return Err(d.err(k.pos, field, message));
            }
            entries.push((key, k.pos, v));
        }
        Ok(MapView {
            pos: node.pos,
            path: path.to_string(),
            entries,
        })
    }

    fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries.iter().find(|(k, _, _)| *k == key).map(|e| e.2)
    }

    fn key_pos(&self, key: &str) -> Option<Pos> {
        self.entries.iter().find(|(k, _, _)| *k == key).map(|e| e.1)
    }

    fn req(&self, d: &Dec, key: &str, hint: &str) -> Result<&'n Node> {
        self.get(key).ok_or_else(|| {
            d.err(
                self.pos,
                self.field(key),
                format!("missing required field `{key}`{hint}"),
            )
        })
    }

    fn field(&self, key: &str) -> String {
        join(&self.path, key)
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn display_path(path: &str) -> String {
    if path.is_empty() {
        "<root>".to_string()
    } else {
        path.to_string()
    }
}

/// The allowed word closest to a misspelling, if it is close enough.
fn closest<'a>(word: &str, allowed: &[&'a str]) -> Option<&'a str> {
    allowed
        .iter()
        .map(|a| (edit_distance(word, a), *a))
        .filter(|(d, a)| *d <= 2.max(a.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

fn scalar<'n>(d: &Dec, node: &'n Node, field: &str, what: &str) -> Result<&'n str> {
    match &node.value {
        Value::Scalar { text, .. } if !node.is_null() => Ok(text),
        _ => Err(d.err(
            node.pos,
            field,
            format!("expected {what}, found {}", node.type_name()),
        )),
    }
}

fn string(d: &Dec, node: &Node, field: &str) -> Result<String> {
    scalar(d, node, field, "a string").map(str::to_string)
}

/// Parse `123`, `-1`, `0x1F` (as written in sysfs and target files).
pub(crate) fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let magnitude = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) if !hex.starts_with(['+', '-']) => i64::from_str_radix(hex, 16).ok()?,
        Some(_) => return None,
        None if digits.starts_with(['+', '-']) => return None,
        None => digits.parse::<i64>().ok()?,
    };
    Some(if neg { -magnitude } else { magnitude })
}

fn integer(d: &Dec, node: &Node, field: &str) -> Result<i64> {
    let text = scalar(d, node, field, "an integer")?;
    parse_int(text).ok_or_else(|| {
        d.err(
            node.pos,
            field,
            format!("expected an integer, found `{text}`"),
        )
    })
}

fn small_uint(d: &Dec, node: &Node, field: &str, max: u32, what: &str) -> Result<u32> {
    let v = integer(d, node, field)?;
    u32::try_from(v).ok().filter(|v| *v <= max).ok_or_else(|| {
        d.err(
            node.pos,
            field,
            format!("{what} {v} is out of range 0..={max}"),
        )
    })
}

fn boolean(d: &Dec, node: &Node, field: &str) -> Result<bool> {
    match scalar(d, node, field, "true or false")? {
        "true" | "True" | "TRUE" => Ok(true),
        "false" | "False" | "FALSE" => Ok(false),
        other => Err(d.err(
            node.pos,
            field,
            format!("expected true or false, found `{other}`"),
        )),
    }
}

fn one_of<'a>(d: &Dec, node: &Node, field: &str, allowed: &[&'a str]) -> Result<&'a str> {
    let text = scalar(d, node, field, "a word")?;
    allowed.iter().copied().find(|a| *a == text).ok_or_else(|| {
        d.err(
            node.pos,
            field,
            format!("unknown value `{text}` (allowed: {})", allowed.join(", ")),
        )
    })
}

fn seq<'n>(d: &Dec, node: &'n Node, field: &str) -> Result<&'n [Node]> {
    match &node.value {
        Value::Seq(items) => Ok(items),
        _ => Err(d.err(
            node.pos,
            field,
            format!("expected a list, found {}", node.type_name()),
        )),
    }
}

/// A name usable in expanded resource names: no dots (they separate the
/// cluster/CPU/index suffixes), no spaces.
fn identifier(d: &Dec, node: &Node, field: &str) -> Result<String> {
    let text = string(d, node, field)?;
    let ok = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !ok {
        return Err(d.err(
            node.pos,
            field,
            format!("`{text}` is not a valid name: use letters, digits, `_` and `-` only"),
        ));
    }
    Ok(text)
}

/// A CPU list: `0-3`, `7`, `0-3,7` or a YAML list of numbers.
fn cpu_list(d: &Dec, node: &Node, field: &str, max: u32, what: &str) -> Result<Vec<u32>> {
    let list = match &node.value {
        Value::Seq(items) => {
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                out.push(small_uint(d, item, &format!("{field}[{i}]"), max, what)?);
            }
            out
        }
        _ => {
            let text = scalar(d, node, field, "a list such as `0-3,7`")?;
            lever_kernel::parse_cpu_list(text).ok_or_else(|| {
                d.err(
                    node.pos,
                    field,
                    format!("`{text}` is not a list such as `0-3,7`"),
                )
            })?
        }
    };
    if list.is_empty() {
        return Err(d.err(node.pos, field, "the list is empty"));
    }
    if let Some(v) = list.iter().find(|v| **v > max) {
        return Err(d.err(
            node.pos,
            field,
            format!("{what} {v} is out of range 0..={max}"),
        ));
    }
    let set: BTreeSet<u32> = list.iter().copied().collect();
    if set.len() != list.len() {
        return Err(d.err(node.pos, field, "a number appears twice in the list"));
    }
    Ok(set.into_iter().collect())
}

/// Placeholders that may appear in paths and descriptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placeholder {
    Policy,
    Cluster,
    Cpu,
    Index,
}

impl Placeholder {
    fn parse(name: &str) -> Option<Self> {
        match name {
            "policy" => Some(Placeholder::Policy),
            "cluster" => Some(Placeholder::Cluster),
            "cpu" => Some(Placeholder::Cpu),
            "index" => Some(Placeholder::Index),
            _ => None,
        }
    }
}

/// Split a template string into literal text and placeholders.
/// `/sys/.../policy{policy}/scaling_min_freq` → `["/sys/.../policy", {policy}, "/scaling_min_freq"]`.
pub(crate) fn split_template(text: &str) -> std::result::Result<Vec<Piece<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            return Err(format!("unmatched `}}` in `{text}`"));
        }
        if open > 0 {
            out.push(Piece::Text(&rest[..open]));
        }
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| format!("unclosed `{{` in `{text}`"))?;
        let name = &after[..close];
        let p = Placeholder::parse(name).ok_or_else(|| {
            format!(
                "unknown placeholder `{{{name}}}` (known: {{policy}}, {{cluster}}, {{cpu}}, {{index}})"
            )
        })?;
        out.push(Piece::Slot(p));
        rest = &after[close + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    Ok(out)
}

/// A piece of a template string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    Text(&'a str),
    Slot(Placeholder),
}

/// Check that a template string only uses placeholders this template has.
fn check_placeholders(
    d: &Dec,
    node: &Node,
    field: &str,
    text: &str,
    per: Per,
    has_index: bool,
) -> Result<()> {
    let pieces = split_template(text).map_err(|m| d.err(node.pos, field, m))?;
    let mut available = Vec::new();
    if per == Per::Cluster {
        available.extend([Placeholder::Policy, Placeholder::Cluster]);
    }
    if per == Per::Cpu {
        available.push(Placeholder::Cpu);
    }
    if has_index {
        available.push(Placeholder::Index);
    }
    for piece in pieces {
        if let Piece::Slot(p) = piece {
            if !available.contains(&p) {
                let names: Vec<String> = available
                    .iter()
                    .map(|a| format!("{{{}}}", placeholder_name(*a)))
                    .collect();
                let why = match p {
                    Placeholder::Policy | Placeholder::Cluster => "needs per: cluster",
                    Placeholder::Cpu => "needs per: cpu",
                    Placeholder::Index => "needs an `index:` range",
                };
                return Err(d.err(
                    node.pos,
                    field,
                    format!(
                        "placeholder `{{{}}}` is not available with per: {}{} ({why}; available here: {})",
                        placeholder_name(p),
                        per.as_str(),
                        if has_index { " and index" } else { "" },
                        if names.is_empty() { "none".to_string() } else { names.join(", ") }
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn placeholder_name(p: Placeholder) -> &'static str {
    match p {
        Placeholder::Policy => "policy",
        Placeholder::Cluster => "cluster",
        Placeholder::Cpu => "cpu",
        Placeholder::Index => "index",
    }
}

/// An absolute kernel path, possibly with placeholders.
fn node_path(d: &Dec, node: &Node, field: &str, per: Per, has_index: bool) -> Result<String> {
    let text = string(d, node, field)?;
    if !text.starts_with('/')
        || text.split('/').any(|c| c == "..")
        || text.contains(char::is_whitespace)
    {
        return Err(d.err(
            node.pos,
            field,
            format!("`{text}` is not an absolute kernel path (such as /sys/..., /proc/..., /dev/...) without `..` or spaces"),
        ));
    }
    check_placeholders(d, node, field, &text, per, has_index)?;
    Ok(text)
}

/// `300000`, `-1`, `/path`, `/path - 1`, `/path + 2`.
fn bound(d: &Dec, node: &Node, field: &str, per: Per, has_index: bool) -> Result<Bound> {
    let text = scalar(d, node, field, "an integer or a node path")?;
    if let Some(v) = parse_int(text) {
        return Ok(Bound::Value(v));
    }
    if !text.starts_with('/') {
        return Err(d.err(
            node.pos,
            field,
            format!("expected an integer or a node path (starting with /), found `{text}`"),
        ));
    }
    let (path, offset) = match text.rsplit_once([' ']) {
        Some((head, num)) => {
            let head = head.trim_end();
            let (path, sign) = if let Some(p) = head.strip_suffix('-') {
                (p, -1)
            } else if let Some(p) = head.strip_suffix('+') {
                (p, 1)
            } else {
                return Err(d.err(
                    node.pos,
                    field,
                    format!("`{text}`: expected `PATH`, `PATH - N` or `PATH + N`"),
                ));
            };
            let n = parse_int(num).filter(|n| *n >= 0).ok_or_else(|| {
                d.err(
                    node.pos,
                    field,
                    format!("`{text}`: expected `PATH`, `PATH - N` or `PATH + N`"),
                )
            })?;
            (path.trim_end(), sign * n)
        }
        None => (text, 0),
    };
    let path_node = Node {
        pos: node.pos,
        value: Value::Scalar {
            text: path.to_string(),
            plain: true,
        },
    };
    let path = node_path(d, &path_node, field, per, has_index)?;
    Ok(Bound::Node { path, offset })
}

/// Decode a whole document.
pub(crate) fn decode(d: &Dec, source: &str, doc: &Node) -> Result<TargetFile> {
    let top = MapView::open(d, doc, "", TOP_KEYS)?;
    let name = identifier(d, top.req(d, "target", "")?, "target")?;
    let description = match top.get("description") {
        Some(n) => string(d, n, "description")?,
        None => String::new(),
    };
    let compatible = match top.get("compatible") {
        Some(n) => compatible_list(d, n)?,
        None => Vec::new(),
    };
    let clusters_pos = top
        .get("clusters")
        .map(|n| n.pos)
        .unwrap_or(Pos { line: 1, col: 1 });
    let clusters = match top.get("clusters") {
        None => Clusters::None,
        Some(n) => match &n.value {
            Value::Scalar { text, .. } if text == "auto" => Clusters::Auto,
            Value::Seq(items) => Clusters::List(cluster_list(d, items)?),
            _ => {
                return Err(d.err(
                    n.pos,
                    "clusters",
                    format!(
                        "expected a list of clusters or `auto`, found {}",
                        describe(n)
                    ),
                ))
            }
        },
    };
    let res_node = top.req(d, "resources", "")?;
    let items = seq(d, res_node, "resources")?;
    let mut resources: Vec<Template> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let t = template(d, i, item, &clusters)?;
        if let Some(first) = resources.iter().find(|r| r.name == t.name) {
            let pos = MapView::open(d, item, "", RESOURCE_KEYS)?
                .get("name")
                .map(|n| n.pos)
                .unwrap_or(t.at.entry);
            return Err(d.err(
                pos,
                t.field("name"),
                format!(
                    "duplicate resource name `{}` (first defined at line {})",
                    t.name,
                    first.line()
                ),
            ));
        }
        resources.push(t);
    }
    check_pairs(d, items, &resources)?;
    check_opcodes(d, &resources, &clusters)?;
    Ok(TargetFile {
        name,
        description,
        source: source.to_string(),
        compatible,
        clusters,
        resources,
        file: d.file.to_string(),
        clusters_pos,
    })
}

fn describe(n: &Node) -> String {
    match &n.value {
        Value::Scalar { text, .. } if !n.is_null() => format!("`{text}`"),
        _ => n.type_name().to_string(),
    }
}

fn compatible_list(d: &Dec, node: &Node) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for (i, item) in seq(d, node, "compatible")?.iter().enumerate() {
        let field = format!("compatible[{i}]");
        let s = string(d, item, &field)?;
        if !s.contains(',') {
            return Err(d.err(
                item.pos,
                field,
                format!(
                    "`{s}` is not a device-tree compatible string (`vendor,model`); \
                     inside [ ] a comma separates items, so quote it: [\"qcom,qcs6490\"]"
                ),
            ));
        }
        out.push(s);
    }
    Ok(out)
}

fn cluster_list(d: &Dec, items: &[Node]) -> Result<Vec<Cluster>> {
    let mut out: Vec<(Cluster, Pos)> = Vec::new();
    let mut owner: HashMap<u32, String> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("clusters[{i}]");
        let m = MapView::open(d, item, &path, CLUSTER_KEYS)?;
        let name_node = m.req(d, "name", "")?;
        let name = identifier(d, name_node, &m.field("name"))?;
        let id_node = m.req(d, "id", " (the cluster id in opcode bits 12..8)")?;
        let id = small_uint(
            d,
            id_node,
            &m.field("id"),
            opcode::MAX_CLUSTER_ID,
            "cluster id",
        )?;
        let policy_node = m.req(
            d,
            "policy",
            ": every cluster needs its cpufreq policy number (the N of /sys/devices/system/cpu/cpufreq/policyN)",
        )?;
        let policy = small_uint(
            d,
            policy_node,
            &m.field("policy"),
            opcode::MAX_CPU,
            "policy",
        )?;
        let cpus_node = m.req(d, "cpus", " (such as `0-3`)")?;
        let cpus = cpu_list(d, cpus_node, &m.field("cpus"), opcode::MAX_CPU, "CPU")?;
        for (c, p) in &out {
            let clash = if c.name == name {
                Some((name_node.pos, "name", format!("name `{name}`")))
            } else if c.id == id {
                Some((id_node.pos, "id", format!("id {id}")))
            } else if c.policy == policy {
                Some((policy_node.pos, "policy", format!("policy {policy}")))
            } else {
                None
            };
            if let Some((pos, key, what)) = clash {
                return Err(d.err(
                    pos,
                    m.field(key),
                    format!(
                        "{what} is already used by cluster `{}` (line {})",
                        c.name, p.line
                    ),
                ));
            }
        }
        for cpu in &cpus {
            if let Some(other) = owner.insert(*cpu, name.clone()) {
                return Err(d.err(
                    cpus_node.pos,
                    m.field("cpus"),
                    format!("CPU {cpu} is already in cluster `{other}`"),
                ));
            }
        }
        out.push((
            Cluster {
                name,
                id,
                policy,
                cpus,
            },
            m.pos,
        ));
    }
    Ok(out.into_iter().map(|(c, _)| c).collect())
}

fn template(d: &Dec, i: usize, item: &Node, clusters: &Clusters) -> Result<Template> {
    let m = MapView::open(d, item, &format!("resources[{i}]"), RESOURCE_KEYS)?;
    let name = identifier(d, m.req(d, "name", "")?, &m.field("name"))?;

    let per_node = m.get("per");
    let per = match per_node {
        None => Per::None,
        Some(n) => match one_of(d, n, &m.field("per"), PER_VALUES)? {
            "cluster" => Per::Cluster,
            "cpu" => Per::Cpu,
            _ => Per::None,
        },
    };
    if let (Some(n), Clusters::None) = (per_node, clusters) {
        if per != Per::None {
            return Err(d.err(
                n.pos,
                m.field("per"),
                format!(
                    "per: {} needs CPU clusters, but the file has no `clusters:` (a list, or `auto`)",
                    per.as_str()
                ),
            ));
        }
    }

    let index = match m.get("index") {
        None => None,
        Some(n) => Some(cpu_list(
            d,
            n,
            &m.field("index"),
            opcode::MAX_INDEX,
            "index",
        )?),
    };
    let index_name = match m.get("index_name") {
        None => "index".to_string(),
        Some(n) if index.is_none() => {
            return Err(d.err(
                m.key_pos("index_name").unwrap_or(n.pos),
                m.field("index_name"),
                "only meaningful together with `index:`",
            ))
        }
        Some(n) => identifier(d, n, &m.field("index_name"))?,
    };
    let has_index = index.is_some();

    let op_node = m.req(d, "opcode", " (a 32-bit hex number such as 0x44008000)")?;
    let opcode = template_opcode(d, op_node, &m.field("opcode"), per, has_index)?;

    let node_node = m.req(d, "node", " (the kernel path this resource writes)")?;
    let node = node_path(d, node_node, &m.field("node"), per, has_index)?;

    let kind_name = match m.get("kind") {
        None => "plain",
        Some(n) => one_of(d, n, &m.field("kind"), KIND_VALUES)?,
    };
    let pair = match (m.get("pair"), kind_name) {
        (Some(n), "pair-min" | "pair-max") => Some(identifier(d, n, &m.field("pair"))?),
        (None, "pair-min" | "pair-max") => {
            return Err(d.err(
                m.pos,
                m.field("pair"),
                format!("missing required field `pair`: a {kind_name} resource names its partner"),
            ))
        }
        (Some(_), _) => {
            return Err(d.err(
                m.key_pos("pair").unwrap_or(m.pos),
                m.field("pair"),
                format!("only used with kind pair-min or pair-max, not {kind_name}"),
            ))
        }
        (None, _) => None,
    };
    let values_node = m.get("values");
    let kind = match kind_name {
        "pair-min" => TemplateKind::PairMin {
            pair: pair.unwrap_or_default(),
        },
        "pair-max" => TemplateKind::PairMax {
            pair: pair.unwrap_or_default(),
        },
        "enum" => {
            let n = values_node.ok_or_else(|| {
                d.err(
                    m.pos,
                    m.field("values"),
                    "missing required field `values`: an enum lists its values, lowest first",
                )
            })?;
            TemplateKind::Enum {
                values: enum_values(d, n, &m.field("values"))?,
            }
        }
        "hold-fd" => TemplateKind::HoldFd,
        _ => TemplateKind::Plain,
    };
    let is_enum = matches!(kind, TemplateKind::Enum { .. });
    if let (Some(_), false) = (values_node, is_enum) {
        return Err(d.err(
            m.key_pos("values").unwrap_or(m.pos),
            m.field("values"),
            format!("only used with kind enum, not {kind_name}"),
        ));
    }

    let unit = match m.get("unit") {
        Some(n) => string(d, n, &m.field("unit"))?,
        None if is_enum => String::new(),
        None => {
            return Err(d.err(
                m.pos,
                m.field("unit"),
                "missing required field `unit` (such as kHz, Hz, us, percent, level)",
            ))
        }
    };

    let mut at = TemplatePos {
        item: i,
        entry: m.pos,
        opcode: op_node.pos,
        node: node_node.pos,
        ..TemplatePos::default()
    };
    let mut bounds = [None, None];
    for (slot, key) in ["low", "high"].into_iter().enumerate() {
        if let Some(n) = m.get(key) {
            if is_enum {
                return Err(d.err(
                    m.key_pos(key).unwrap_or(n.pos),
                    m.field(key),
                    "not used with kind enum: its levels are the indexes of `values`",
                ));
            }
            bounds[slot] = Some(bound(d, n, &m.field(key), per, has_index)?);
            if slot == 0 {
                at.low = n.pos;
            } else {
                at.high = n.pos;
            }
        }
    }
    let [low, high] = bounds;
    let steps = match m.get("steps") {
        None => None,
        Some(n) if is_enum => {
            return Err(d.err(
                m.key_pos("steps").unwrap_or(n.pos),
                m.field("steps"),
                "not used with kind enum: its levels are the indexes of `values`",
            ))
        }
        Some(n) => {
            at.steps = n.pos;
            Some(steps(d, n, &m.field("steps"), per, has_index)?)
        }
    };
    if !is_enum && steps.is_none() {
        for (b, key) in [(&low, "low"), (&high, "high")] {
            if b.is_none() {
                return Err(d.err(
                    m.pos,
                    m.field(key),
                    format!("missing required field `{key}` (an integer or a node path; it may only be left out when `steps` is given)"),
                ));
            }
        }
    }
    if let (Some(Bound::Value(lo)), Some(Bound::Value(hi))) = (&low, &high) {
        if lo > hi {
            return Err(d.err(
                at.low,
                m.field("low"),
                format!("low bound {lo} is above high bound {hi}"),
            ));
        }
    }
    if let (Some(Steps::List(list)), Some(Bound::Value(lo)), Some(Bound::Value(hi))) =
        (&steps, &low, &high)
    {
        if let Some(s) = list.iter().find(|s| *s < lo || *s > hi) {
            return Err(d.err(
                at.steps,
                m.field("steps"),
                format!("step {s} is outside the bounds {lo}..={hi}"),
            ));
        }
    }

    let aggregation = match one_of(
        d,
        m.req(d, "aggregation", " (max, min, newest or oldest)")?,
        &m.field("aggregation"),
        AGGREGATION_VALUES,
    )? {
        "max" => Aggregation::Max,
        "min" => Aggregation::Min,
        "newest" => Aggregation::Newest,
        _ => Aggregation::Oldest,
    };
    let permission = match one_of(
        d,
        m.req(d, "permission", " (system or third-party)")?,
        &m.field("permission"),
        PERMISSION_VALUES,
    )? {
        "system" => Permission::System,
        _ => Permission::ThirdParty,
    };
    let description = match m.get("description") {
        None => String::new(),
        Some(n) => {
            let s = string(d, n, &m.field("description"))?;
            check_placeholders(d, n, &m.field("description"), &s, per, has_index)?;
            s
        }
    };
    let optional = match m.get("optional") {
        None => false,
        Some(n) => boolean(d, n, &m.field("optional"))?,
    };
    Ok(Template {
        name,
        opcode,
        per,
        index,
        index_name,
        node,
        kind,
        unit,
        low,
        high,
        steps,
        aggregation,
        permission,
        description,
        optional,
        at,
    })
}

fn template_opcode(d: &Dec, node: &Node, field: &str, per: Per, has_index: bool) -> Result<Opcode> {
    let text = scalar(d, node, field, "an opcode")?;
    let wide = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse::<u64>().ok(),
    }
    .ok_or_else(|| {
        d.err(
            node.pos,
            field,
            format!("`{text}` is not a number (write opcodes in hex, such as 0x44008000)"),
        )
    })?;
    let op = u32::try_from(wide)
        .map_err(|_| d.err(node.pos, field, format!("`{text}` does not fit in 32 bits")))?;
    if let Some(why) = opcode::check(op) {
        return Err(d.err(node.pos, field, why));
    }
    let (mask, what) = match per {
        Per::Cluster => (opcode::CLUSTER_MASK, "bits 12..8 (the cluster id) must be 0 in a per: cluster template; expansion fills them from each cluster's id"),
        Per::Cpu => (opcode::CPU_MASK, "bits 12..4 (the CPU number) must be 0 in a per: cpu template; expansion fills them"),
        Per::None => (0, ""),
    };
    if op & mask != 0 {
        return Err(d.err(node.pos, field, format!("opcode 0x{op:08X}: {what}")));
    }
    if has_index && op & opcode::INDEX_MASK != 0 {
        return Err(d.err(
            node.pos,
            field,
            format!("opcode 0x{op:08X}: bits 3..0 (the sub-index) must be 0 when `index` is set; expansion fills them"),
        ));
    }
    Ok(Opcode(op))
}

fn enum_values(d: &Dec, node: &Node, field: &str) -> Result<Vec<String>> {
    let items = seq(d, node, field)?;
    if items.is_empty() {
        return Err(d.err(node.pos, field, "an enum needs at least one value"));
    }
    let mut out: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let f = format!("{field}[{i}]");
        let v = string(d, item, &f)?;
        if v.is_empty() || v.contains(char::is_whitespace) {
            return Err(d.err(item.pos, f, format!("`{v}` is not a single word")));
        }
        if out.contains(&v) {
            return Err(d.err(item.pos, f, format!("`{v}` is listed twice")));
        }
        out.push(v);
    }
    Ok(out)
}

fn steps(d: &Dec, node: &Node, field: &str, per: Per, has_index: bool) -> Result<Steps> {
    match &node.value {
        Value::Seq(items) => {
            if items.is_empty() {
                return Err(d.err(node.pos, field, "the list of steps is empty"));
            }
            let mut list = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                list.push(integer(d, item, &format!("{field}[{i}]"))?);
            }
            list.sort_unstable();
            list.dedup();
            Ok(Steps::List(list))
        }
        _ => Ok(Steps::Node(node_path(d, node, field, per, has_index)?)),
    }
}

fn check_pairs(d: &Dec, items: &[Node], templates: &[Template]) -> Result<()> {
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

pub(crate) fn kind_name(k: &TemplateKind) -> &'static str {
    match k {
        TemplateKind::Plain => "plain",
        TemplateKind::PairMin { .. } => "pair-min",
        TemplateKind::PairMax { .. } => "pair-max",
        TemplateKind::Enum { .. } => "enum",
        TemplateKind::HoldFd => "hold-fd",
    }
}

/// Opcodes must be unique after expansion. With declared clusters the
/// expansion is known exactly; with `clusters: auto` two templates conflict
/// when some cluster/CPU/index could make their opcodes equal.
fn check_opcodes(d: &Dec, templates: &[Template], clusters: &Clusters) -> Result<()> {
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
    d: &Dec,
    templates: &[Template],
    clusters: &[Cluster],
    cpus: &[u32],
) -> Result<()> {
    let mut seen: HashMap<u32, (String, usize)> = HashMap::new();
    for t in templates {
        for inst in crate::bind::instances(t, clusters, cpus) {
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

/// All CPUs of the clusters, ascending.
pub(crate) fn union_cpus(clusters: &[Cluster]) -> Vec<u32> {
    let set: BTreeSet<u32> = clusters
        .iter()
        .flat_map(|c| c.cpus.iter().copied())
        .collect();
    set.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(parse_int("300000"), Some(300000));
        assert_eq!(parse_int("-1"), Some(-1));
        assert_eq!(parse_int("0x1F"), Some(31));
        assert_eq!(parse_int("--1"), None);
        assert_eq!(parse_int("0x-1"), None);
        assert_eq!(parse_int("1e3"), None);
        assert_eq!(parse_int(""), None);
    }

    #[test]
    fn templates_split() {
        assert_eq!(
            split_template("/a/policy{policy}/b").unwrap(),
            vec![
                Piece::Text("/a/policy"),
                Piece::Slot(Placeholder::Policy),
                Piece::Text("/b")
            ]
        );
        assert!(split_template("/a/{x}")
            .unwrap_err()
            .contains("unknown placeholder"));
        assert!(split_template("/a/{cpu").unwrap_err().contains("unclosed"));
        assert!(split_template("/a/cpu}").unwrap_err().contains("unmatched"));
    }

    #[test]
    fn suggestions() {
        assert_eq!(closest("aggregtion", RESOURCE_KEYS), Some("aggregation"));
        assert_eq!(closest("colour", RESOURCE_KEYS), None);
    }
}
