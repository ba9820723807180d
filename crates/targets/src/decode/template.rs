//! Decoding one `resources:` entry into a [`Template`]: which keys go
//! together (kinds, pairs, enums, bounds or steps) and in what order they
//! are checked.

use super::access::{boolean, cpu_list, identifier, one_of, string, MapView, Result};
use super::values::{bound, check_placeholders, enum_values, node_path, steps, template_opcode};
use super::{AGGREGATION_VALUES, KIND_VALUES, PERMISSION_VALUES, PER_VALUES, RESOURCE_KEYS};
use crate::error::InFile;
use crate::model::{Bound, Clusters, Per, Steps, Template, TemplateKind, TemplatePos};
use crate::opcode;
use lever_engine::resource::{Aggregation, Permission};
use lever_yaml::Node;

/// The PM QoS request devices (kernel/power/qos.c, and the network and
/// memory-bandwidth classes of kernels before 5.7): written as a binary
/// s32, held while the file is open.
const PM_QOS_DEVICES: &[&str] = &[
    lever_kernel::paths::CPU_DMA_LATENCY,
    "/dev/network_latency",
    "/dev/network_throughput",
    "/dev/memory_bandwidth",
];

pub(super) fn template(d: &InFile, i: usize, item: &Node, clusters: &Clusters) -> Result<Template> {
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

    // A PM QoS device takes a binary s32 and holds it only while the file
    // stays open: any other kind would write text that does nothing (and
    // read back binary). Its kind is hold-fd, whatever wrote the file.
    let pm_qos = PM_QOS_DEVICES.contains(&node.as_str());
    let kind_name = match m.get("kind") {
        None if pm_qos => "hold-fd",
        None => "plain",
        Some(n) => {
            let kind = one_of(d, n, &m.field("kind"), KIND_VALUES)?;
            if pm_qos && kind != "hold-fd" {
                return Err(d.err(
                    n.pos,
                    m.field("kind"),
                    format!("{node} is a PM QoS device: it takes a binary 32-bit value and holds it only while the file is open, so its kind is hold-fd (the default for this node), not {kind}"),
                ));
            }
            kind
        }
    };
    let pair = match (m.get("pair"), kind_name) {
        (Some(n), "pair-min" | "pair-max") => Some(identifier(d, n, &m.field("pair"))?),
        (None, "pair-min" | "pair-max") => {
            return Err(d.err(
                m.pos(),
                m.field("pair"),
                format!("missing required field `pair`: a {kind_name} resource names its partner"),
            ))
        }
        (Some(_), _) => {
            return Err(d.err(
                m.key_pos("pair").unwrap_or(m.pos()),
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
                    m.pos(),
                    m.field("values"),
                    "missing required field `values`: an enum lists its values, lowest first",
                )
            })?;
            TemplateKind::Enum {
                values: enum_values(d, n, &m.field("values"))?,
            }
        }
        "hold-fd" => TemplateKind::HoldFd,
        "cpulist" => TemplateKind::CpuList,
        _ => TemplateKind::Plain,
    };
    let is_enum = matches!(kind, TemplateKind::Enum { .. });
    if let (Some(_), false) = (values_node, is_enum) {
        return Err(d.err(
            m.key_pos("values").unwrap_or(m.pos()),
            m.field("values"),
            format!("only used with kind enum, not {kind_name}"),
        ));
    }

    let unit = match m.get("unit") {
        Some(n) => string(d, n, &m.field("unit"))?,
        None if is_enum => String::new(),
        None => {
            return Err(d.err(
                m.pos(),
                m.field("unit"),
                "missing required field `unit` (such as kHz, Hz, us, percent, level)",
            ))
        }
    };

    let mut at = TemplatePos {
        item: i,
        entry: m.pos(),
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
                    m.pos(),
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
