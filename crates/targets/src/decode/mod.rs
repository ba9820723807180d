//! Decoding the marked YAML tree into a [`TargetFile`], by hand, so that
//! every mistake is reported at its line and column with the field's path.
//!
//! Everything that can be checked without a kernel is checked here: key
//! names, types, enumerated values, opcodes (including uniqueness after
//! expansion over the declared clusters and CPUs), pairs, placeholders and
//! literal bounds. [`TargetFile::bind`](crate::TargetFile::bind) checks the
//! rest against a kernel tree.

mod access;
mod app;
mod checks;
mod template;
mod usecase;
mod values;

use crate::error::InFile;
use crate::model::{Cluster, Clusters, TargetFile, Template};
use crate::opcode;
use access::{cpu_list, identifier, seq, small_uint, string, MapView, Result};
use lever_yaml::{Node, Pos, Value};
use std::collections::HashMap;

const TOP_KEYS: &[&str] = &[
    "target",
    "description",
    "compatible",
    "clusters",
    "resources",
    "usecases",
    "apps",
    "app_filter",
];
/// Keys of a file of use cases (and apps) of its own.
const USECASE_FILE_KEYS: &[&str] = &["target", "usecases", "apps", "app_filter"];
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
const KIND_VALUES: &[&str] = &[
    "plain", "pair-min", "pair-max", "enum", "hold-fd", "cpulist",
];
const AGGREGATION_VALUES: &[&str] = &["max", "min", "newest", "oldest"];
const PERMISSION_VALUES: &[&str] = &["system", "third-party"];

/// Decode a whole document.
pub(crate) fn decode(d: &InFile, source: &str, doc: &Node) -> Result<TargetFile> {
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
        let t = template::template(d, i, item, &clusters)?;
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
    checks::check_pairs(d, items, &resources)?;
    checks::check_opcodes(d, &resources, &clusters)?;
    let usecases = match top.get("usecases") {
        None => Vec::new(),
        Some(n) => usecase::usecases(d, n, &usecase::Names::new(&resources, &clusters), &[])?,
    };
    let apps = match top.get("apps") {
        None => Vec::new(),
        Some(n) => app::apps(d, n, &usecases, &[])?,
    };
    let app_filter = match top.get("app_filter") {
        None => lever_procwatch::AppFilter::default(),
        Some(n) => app::filter(d, n)?,
    };
    Ok(TargetFile {
        name,
        description,
        source: source.to_string(),
        compatible,
        clusters,
        resources,
        usecases,
        apps,
        app_filter,
        file: d.file.to_string(),
        clusters_pos,
    })
}

/// What a file of use cases adds to a target.
pub(crate) struct Additions {
    pub usecases: Vec<crate::usecase::UseCase>,
    pub apps: Vec<crate::usecase::App>,
    pub app_filter: Option<lever_procwatch::AppFilter>,
}

/// Decode a file of use cases for `target`: `target:` (optional; if given
/// it must name `target`), `usecases:`, `apps:` and `app_filter:`.
pub(crate) fn decode_usecases(d: &InFile, doc: &Node, target: &TargetFile) -> Result<Additions> {
    let top = MapView::open(d, doc, "", USECASE_FILE_KEYS)?;
    if let Some(n) = top.get("target") {
        let name = identifier(d, n, "target")?;
        if name != target.name {
            return Err(d.err(
                n.pos,
                "target",
                format!("this file is for target `{name}`, not `{}`", target.name),
            ));
        }
    }
    let names = usecase::Names::new(&target.resources, &target.clusters);
    let usecases = match top.get("usecases") {
        None => Vec::new(),
        Some(n) => usecase::usecases(d, n, &names, &target.usecases)?,
    };
    let all: Vec<crate::usecase::UseCase> = target
        .usecases
        .iter()
        .chain(usecases.iter())
        .cloned()
        .collect();
    let apps = match top.get("apps") {
        None => Vec::new(),
        Some(n) => app::apps(d, n, &all, &target.apps)?,
    };
    let app_filter = match top.get("app_filter") {
        None => None,
        Some(n) => Some(app::filter(d, n)?),
    };
    Ok(Additions {
        usecases,
        apps,
        app_filter,
    })
}

fn describe(n: &Node) -> String {
    match &n.value {
        Value::Scalar { text, .. } if !n.is_null() => format!("`{text}`"),
        _ => n.type_name().to_string(),
    }
}

fn compatible_list(d: &InFile, node: &Node) -> Result<Vec<String>> {
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

fn cluster_list(d: &InFile, items: &[Node]) -> Result<Vec<Cluster>> {
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
            m.pos(),
        ));
    }
    Ok(out.into_iter().map(|(c, _)| c).collect())
}

#[cfg(test)]
mod tests {
    use super::access::closest;
    use super::RESOURCE_KEYS;

    #[test]
    fn suggestions() {
        assert_eq!(closest("aggregtion", RESOURCE_KEYS), Some("aggregation"));
        assert_eq!(closest("colour", RESOURCE_KEYS), None);
    }
}
