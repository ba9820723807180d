//! Decoding `usecases:` entries (in a target file or a file of their own):
//! resource names and opcodes resolved against the target's templates,
//! values checked against literal bounds and enum values, cgroup values
//! against their knob, thread rules against the scheduler's ranges.
//!
//! ```yaml
//! usecases:
//!   - name: video-decode
//!     id: 0x00030003
//!     duration: 0
//!     resources: { cpu_min_freq.gold: 1324800 }
//!     variants:
//!       - name: 4k30
//!         when: { fps: 30, width: 3840, height: 2160 }
//!         resources: { gpu_min_freq: 585000000 }
//! ```

use super::access::{cpu_list, identifier, integer, one_of, scalar, seq, string, MapView, Result};
use super::PERMISSION_VALUES;
use crate::error::InFile;
use crate::expand::{instances, union_cpus};
use crate::model::{Bound, Clusters, Template, TemplateKind};
use crate::usecase::{Attr, CgroupSetting, NodeSetting, Settings, ThreadRule, UseCase, Variant};
use lever_engine::resource::{Opcode, Permission};
use lever_tasks::{CgroupKnob, Policy, Sched, ThreadSetting};
use lever_text::TimeUnit;
use lever_yaml::{Node, Value};

const USECASE_KEYS: &[&str] = &[
    "name",
    "id",
    "description",
    "duration",
    "permission",
    "resources",
    "cgroups",
    "threads",
    "variants",
];
const VARIANT_KEYS: &[&str] = &["name", "when", "resources", "cgroups", "threads"];
pub(super) const THREAD_KEYS: &[&str] = &[
    "comm",
    "affinity",
    "policy",
    "priority",
    "uclamp_min",
    "uclamp_max",
    "cgroup",
    "nice",
];
const POLICY_VALUES: &[&str] = &["other", "fifo", "rr", "batch", "idle"];
const ATTR_VALUES: &[&str] = &["fps", "width", "height"];

/// What a use case's resource keys are resolved against: every expanded
/// resource name with its opcode and template.
pub(crate) struct Names<'t> {
    all: Vec<(String, Opcode, &'t Template)>,
    auto: bool,
}

impl<'t> Names<'t> {
    pub fn new(templates: &'t [Template], clusters: &Clusters) -> Names<'t> {
        let (list, auto) = match clusters {
            Clusters::List(l) => (l.as_slice(), false),
            Clusters::Auto => (&[][..], true),
            Clusters::None => (&[][..], false),
        };
        let cpus = union_cpus(list);
        let mut all = Vec::new();
        for t in templates {
            for i in instances(t, list, &cpus) {
                all.push((i.name, i.opcode, t));
            }
        }
        Names { all, auto }
    }

    fn find(&self, key: &str) -> Option<&(String, Opcode, &'t Template)> {
        let by_opcode = lever_text::parse_int(key)
            .and_then(|v| u32::try_from(v).ok())
            .map(Opcode);
        self.all
            .iter()
            .find(|(name, op, _)| name == key || Some(*op) == by_opcode)
    }
}

/// Decode a `usecases:` list. `known` holds use cases read before (from
/// the target file), so names and ids stay unique across files.
pub(crate) fn usecases(
    d: &InFile,
    node: &Node,
    names: &Names,
    known: &[UseCase],
) -> Result<Vec<UseCase>> {
    let mut out: Vec<UseCase> = Vec::new();
    for (i, item) in seq(d, node, "usecases")?.iter().enumerate() {
        let m = MapView::open(d, item, &format!("usecases[{i}]"), USECASE_KEYS)?;
        let name_node = m.req(d, "name", "")?;
        let name = identifier(d, name_node, &m.field("name"))?;
        let id_node = m.req(d, "id", " (a 32-bit number such as 0x00030001)")?;
        let id = u32::try_from(integer(d, id_node, &m.field("id"))?).map_err(|_| {
            d.err(
                id_node.pos,
                m.field("id"),
                "the id must fit in 32 bits (0..=0xFFFFFFFF)",
            )
        })?;
        for u in known.iter().chain(out.iter()) {
            if u.name == name {
                return Err(d.err(
                    name_node.pos,
                    m.field("name"),
                    format!(
                        "duplicate use case `{name}` (first defined at {}:{})",
                        u.file, u.line
                    ),
                ));
            }
            if u.id == id {
                return Err(d.err(
                    id_node.pos,
                    m.field("id"),
                    format!(
                        "id 0x{id:08X} is already use case `{}` ({}:{})",
                        u.name, u.file, u.line
                    ),
                ));
            }
        }
        let description = match m.get("description") {
            Some(n) => string(d, n, &m.field("description"))?,
            None => String::new(),
        };
        let duration_ms = match m.get("duration") {
            None => 0,
            Some(n) => duration(d, n, &m.field("duration"))?,
        };
        let permission = match m.get("permission") {
            None => Permission::ThirdParty,
            Some(n) => match one_of(d, n, &m.field("permission"), PERMISSION_VALUES)? {
                "system" => Permission::System,
                _ => Permission::ThirdParty,
            },
        };
        let base = settings(d, &m, names)?;
        let mut variants: Vec<Variant> = Vec::new();
        if let Some(vn) = m.get("variants") {
            for (j, v) in seq(d, vn, &m.field("variants"))?.iter().enumerate() {
                let vm = MapView::open(d, v, &m.field(&format!("variants[{j}]")), VARIANT_KEYS)?;
                let vname_node = vm.req(d, "name", "")?;
                let vname = identifier(d, vname_node, &vm.field("name"))?;
                if variants.iter().any(|x| x.name == vname) {
                    return Err(d.err(
                        vname_node.pos,
                        vm.field("name"),
                        format!("duplicate variant `{vname}`"),
                    ));
                }
                let when = attrs(
                    d,
                    vm.req(d, "when", " (e.g. { fps: 30, width: 3840 })")?,
                    &vm.field("when"),
                )?;
                variants.push(Variant {
                    name: vname,
                    when,
                    settings: settings(d, &vm, names)?,
                });
            }
        }
        if base.is_empty() && variants.iter().all(|v| v.settings.is_empty()) {
            return Err(d.err(
                m.pos(),
                m.field("resources"),
                "the use case sets nothing: give `resources:`, `cgroups:`, `threads:` or `variants:`",
            ));
        }
        out.push(UseCase {
            name,
            id,
            description,
            duration_ms,
            permission,
            settings: base,
            variants,
            file: d.file.to_string(),
            line: m.pos().line,
        });
    }
    Ok(out)
}

fn duration(d: &InFile, n: &Node, field: &str) -> Result<u64> {
    let text = scalar(d, n, field, "a duration such as 0, 500 (ms) or 2s")?;
    lever_text::parse_duration(text, TimeUnit::Millis)
        .map(|t| t.as_millis() as u64)
        .map_err(|e| d.err(n.pos, field, format!("`{text}`: {e} (0 = until released)")))
}

fn settings(d: &InFile, m: &MapView, names: &Names) -> Result<Settings> {
    let mut s = Settings::default();
    if let Some(n) = m.get("resources") {
        s.nodes = resources(d, n, &m.field("resources"), names)?;
    }
    if let Some(n) = m.get("cgroups") {
        s.cgroups = cgroups(d, n, &m.field("cgroups"))?;
    }
    if let Some(n) = m.get("threads") {
        for (i, t) in seq(d, n, &m.field("threads"))?.iter().enumerate() {
            s.threads
                .push(thread_rule(d, t, &m.field(&format!("threads[{i}]")))?);
        }
    }
    Ok(s)
}

fn pairs<'n>(d: &InFile, node: &'n Node, field: &str) -> Result<&'n [(Node, Node)]> {
    match &node.value {
        Value::Map(p) => Ok(p),
        _ => Err(d.err(
            node.pos,
            field,
            format!(
                "expected a mapping of NAME: VALUE, found {}",
                node.type_name()
            ),
        )),
    }
}

fn resources(d: &InFile, node: &Node, field: &str, names: &Names) -> Result<Vec<NodeSetting>> {
    let mut out: Vec<NodeSetting> = Vec::new();
    for (k, v) in pairs(d, node, field)? {
        let key = scalar(d, k, field, "a resource name or opcode")?;
        let f = format!("{field}.{key}");
        let Some((name, opcode, t)) = names.find(key) else {
            let hint = if names.auto {
                " (with `clusters: auto` only per: none resources can be named; declare the clusters)"
            } else {
                ""
            };
            return Err(d.err(
                k.pos,
                f,
                format!("`{key}` is not a resource of this target: use an expanded name such as `cpu_min_freq.gold` or an opcode{hint}"),
            ));
        };
        if out.iter().any(|s| s.opcode == *opcode) {
            return Err(d.err(k.pos, f, format!("`{name}` is set twice")));
        }
        let value = level(d, v, &f, t)?;
        out.push(NodeSetting {
            resource: name.clone(),
            opcode: *opcode,
            value,
        });
    }
    Ok(out)
}

/// A value for template `t`: an enum word or an integer inside literal
/// bounds.
fn level(d: &InFile, v: &Node, field: &str, t: &Template) -> Result<i64> {
    if let TemplateKind::Enum { values } = &t.kind {
        let text = scalar(d, v, field, "a value")?;
        if let Some(i) = values.iter().position(|x| x == text) {
            return Ok(i as i64);
        }
        return Err(d.err(
            v.pos,
            field,
            format!("unknown value `{text}` (allowed: {})", values.join(", ")),
        ));
    }
    if let TemplateKind::CpuList = &t.kind {
        let text = scalar(d, v, field, "a CPU list such as 0-1,3")?;
        return lever_text::cpu_list_mask(text).ok_or_else(|| {
            d.err(
                v.pos,
                field,
                format!("`{text}` is not a CPU list such as 0-1,3 (CPUs 0 to 62)"),
            )
        });
    }
    let value = integer(d, v, field)?;
    for (bound, below) in [(&t.low, true), (&t.high, false)] {
        if let Some(Bound::Value(b)) = bound {
            if (below && value < *b) || (!below && value > *b) {
                return Err(d.err(
                    v.pos,
                    field,
                    format!(
                        "{value} is {} the resource's {} bound {b} {}",
                        if below { "below" } else { "above" },
                        if below { "low" } else { "high" },
                        t.unit
                    ),
                ));
            }
        }
    }
    Ok(value)
}

pub(super) fn cgroup_name(d: &InFile, n: &Node, field: &str) -> Result<String> {
    let text = string(d, n, field)?;
    let ok = !text.is_empty()
        && !text.starts_with('/')
        && text
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != "..");
    if !ok {
        return Err(d.err(
            n.pos,
            field,
            format!(
                "`{text}` is not a cgroup path below the cgroup2 mount (such as `lever/camera`)"
            ),
        ));
    }
    Ok(text)
}

fn cgroups(d: &InFile, node: &Node, field: &str) -> Result<Vec<CgroupSetting>> {
    let mut out = Vec::new();
    for (k, v) in pairs(d, node, field)? {
        let cgroup = cgroup_name(d, k, field)?;
        let cf = format!("{field}.{cgroup}");
        for (fk, fv) in pairs(d, v, &cf)? {
            let file = scalar(d, fk, &cf, "a cgroup file name")?;
            let ff = format!("{cf}.{file}");
            let knob = CgroupKnob::from_file(file).ok_or_else(|| {
                let known: Vec<&str> = CgroupKnob::ALL.iter().map(|k| k.file()).collect();
                d.err(
                    fk.pos,
                    &ff,
                    format!("unknown cgroup file (known: {})", known.join(", ")),
                )
            })?;
            let value = scalar(d, fv, &ff, "a value")?.to_string();
            if let Some(why) = knob.check(&value) {
                return Err(d.err(fv.pos, ff, why));
            }
            out.push(CgroupSetting {
                cgroup: cgroup.clone(),
                knob,
                value,
            });
        }
    }
    Ok(out)
}

/// One thread rule (also used by `apps:`).
pub(super) fn thread_rule(d: &InFile, node: &Node, path: &str) -> Result<ThreadRule> {
    let m = MapView::open(d, node, path, THREAD_KEYS)?;
    let comm = match m.get("comm") {
        None => None,
        Some(n) => Some(string(d, n, &m.field("comm"))?),
    };
    let mut settings = Vec::new();
    if let Some(n) = m.get("affinity") {
        let cpus = cpu_list(d, n, &m.field("affinity"), 1023, "CPU")?;
        settings.push(ThreadSetting::Affinity { cpus });
    }
    match (m.get("policy"), m.get("priority")) {
        (None, Some(n)) => {
            return Err(d.err(n.pos, m.field("priority"), "`priority` needs a `policy`"))
        }
        (Some(p), prio) => {
            let policy = Policy::from_word(one_of(d, p, &m.field("policy"), POLICY_VALUES)?)
                .unwrap_or(Policy::Other);
            let priority = match prio {
                None => 0,
                Some(n) => integer(d, n, &m.field("priority"))?,
            };
            let range = if policy.is_realtime() { 1..=99 } else { 0..=0 };
            if !range.contains(&priority) {
                return Err(d.err(
                    prio.map(|n| n.pos).unwrap_or(p.pos),
                    m.field("priority"),
                    format!(
                        "policy {} takes priority {}..={}, not {priority}",
                        policy.as_str(),
                        range.start(),
                        range.end()
                    ),
                ));
            }
            settings.push(ThreadSetting::Sched(Sched {
                policy,
                priority: priority as u32,
            }));
        }
        (None, None) => {}
    }
    let clamp = |key: &str| -> Result<Option<u32>> {
        match m.get(key) {
            None => Ok(None),
            Some(n) => {
                let v = integer(d, n, &m.field(key))?;
                u32::try_from(v)
                    .ok()
                    .filter(|v| *v <= 1024)
                    .map(Some)
                    .ok_or_else(|| {
                        d.err(n.pos, m.field(key), format!("{v} is out of range 0..=1024"))
                    })
            }
        }
    };
    if let Some(n) = m.get("nice") {
        let v = integer(d, n, &m.field("nice"))?;
        if !(-20..=19).contains(&v) {
            return Err(d.err(
                n.pos,
                m.field("nice"),
                format!("{v} is out of range -20..=19"),
            ));
        }
        settings.push(ThreadSetting::Nice { nice: v as i32 });
    }
    let (min, max) = (clamp("uclamp_min")?, clamp("uclamp_max")?);
    if min.is_some() || max.is_some() {
        settings.push(ThreadSetting::Uclamp { min, max });
    }
    let cgroup = match m.get("cgroup") {
        None => None,
        Some(n) => Some(cgroup_name(d, n, &m.field("cgroup"))?),
    };
    if settings.is_empty() && cgroup.is_none() {
        return Err(d.err(
            m.pos(),
            path,
            "the rule sets nothing: give affinity, policy, nice, uclamp_min/uclamp_max or cgroup",
        ));
    }
    Ok(ThreadRule {
        comm,
        settings,
        cgroup,
    })
}

fn attrs(d: &InFile, node: &Node, field: &str) -> Result<Vec<(Attr, u32)>> {
    let m = MapView::open(d, node, field, ATTR_VALUES)?;
    let mut out = Vec::new();
    for e in m.entries() {
        let f = m.field(e.key);
        let v = integer(d, e.value, &f)?;
        let v = u32::try_from(v).ok().filter(|v| *v > 0).ok_or_else(|| {
            d.err(
                e.value.pos,
                &f,
                format!("{v} must be a positive whole number"),
            )
        })?;
        out.push((Attr::from_word(e.key).unwrap_or(Attr::Fps), v));
    }
    if out.is_empty() {
        return Err(d.err(node.pos, field, "name at least one of fps, width, height"));
    }
    out.sort();
    Ok(out)
}
