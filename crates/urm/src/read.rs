//! Reading URM's four files into plain records, each mistake an error at
//! its file:line:col with the field's path. Every key URM documents is
//! accepted; keys Lever does not map are kept in `ignored` so the writer
//! can name each one in a warning.

use crate::{UrmError, Warning};
use lever_yaml::{MapError, Mapping, Node, Pos, Value};

/// Where a record came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
}

/// A `ResourceConfigs:` entry.
#[derive(Debug, Clone)]
pub struct UrmResource {
    pub at: At,
    pub res_type: u32,
    pub res_id: u32,
    pub name: String,
    pub path: Option<String>,
    pub supported: bool,
    pub high: i64,
    pub low: i64,
    pub system: bool,
    pub policy: String,
    pub unit: Option<String>,
    pub apply_type: String,
    pub ignored: Vec<(String, usize)>,
}

/// One `Resources:` item of a signal.
#[derive(Debug, Clone)]
pub struct UrmSignalResource {
    pub line: usize,
    pub code: u32,
    pub info: u32,
    pub values: Vec<i64>,
}

/// A `SignalConfigs:` entry.
#[derive(Debug, Clone)]
pub struct UrmSignal {
    pub at: At,
    pub sig_id: u32,
    pub category: u32,
    pub name: String,
    pub enable: bool,
    pub system_only: bool,
    pub timeout_ms: i64,
    pub resources: Vec<UrmSignalResource>,
    /// `ExtraAttrs` (fps, width, height) when the entry is a variant.
    pub attrs: Vec<(String, u32)>,
    pub ignored: Vec<(String, usize)>,
}

/// A `PerAppConfigs:` entry.
#[derive(Debug, Clone)]
pub struct UrmApp {
    pub at: At,
    pub app: String,
    /// Thread comm → cgroup name.
    pub threads: Vec<(String, String)>,
    /// Signal codes.
    pub signals: Vec<u32>,
}

/// `InitConfigs:`.
#[derive(Debug, Clone, Default)]
pub struct UrmInit {
    /// `ClusterMap`: logical id → type name.
    pub clusters: Vec<(u32, String)>,
    /// `CgroupsInfo`: id → name.
    pub cgroups: Vec<(u32, String)>,
}

const RESOURCE_KEYS: &[&str] = &[
    "ResType",
    "ResID",
    "Name",
    "Path",
    "Supported",
    "HighThreshold",
    "LowThreshold",
    "Permissions",
    "Modes",
    "Policy",
    "Unit",
    "ApplyType",
    "TargetsEnabled",
    "TargetsDisabled",
];
/// Keys read but not mapped, each named in a warning.
const RESOURCE_IGNORED: &[&str] = &["Modes", "TargetsEnabled", "TargetsDisabled"];
const SIGNAL_KEYS: &[&str] = &[
    "SigId",
    "Category",
    "SigType",
    "Name",
    "Enable",
    "Permissions",
    "Timeout",
    "Resources",
    "ExtraAttrs",
    "TargetsEnabled",
    "TargetsDisabled",
    "Derivatives",
];
const SIGNAL_IGNORED: &[&str] = &[
    "SigType",
    "TargetsEnabled",
    "TargetsDisabled",
    "Derivatives",
];
const SIGNAL_RES_KEYS: &[&str] = &["ResCode", "ResInfo", "Values"];
const ATTR_KEYS: &[&str] = &["Fps", "Width", "Height"];
const APP_KEYS: &[&str] = &["App", "Threads", "Configurations"];
const INIT_SECTIONS: &[&str] = &[
    "ClusterMap",
    "CgroupsInfo",
    "IrqConfigs",
    "MPAMgroupsInfo",
    "CacheInfo",
];
const CLUSTER_KEYS: &[&str] = &["Id", "Type"];
const CGROUP_KEYS: &[&str] = &["Name", "ID", "Create", "IsThreaded"];
pub(crate) const POLICIES: &[&str] = &[
    "higher_is_better",
    "lower_is_better",
    "lazy_apply",
    "instant_apply",
    "pass_through",
];
const APPLY_TYPES: &[&str] = &["global", "core", "cluster", "cgroup"];

/// One file being read: its name and its errors.
pub(crate) struct File<'a> {
    pub name: &'a str,
}

impl File<'_> {
    fn err(&self, pos: Pos, field: &str, message: impl Into<String>) -> UrmError {
        UrmError::Field(lever_yaml::FieldError::new(self.name, pos, field, message))
    }

    fn map<'n>(
        &self,
        node: &'n Node,
        path: &str,
        allowed: &[&'static str],
    ) -> Result<Mapping<'n>, UrmError> {
        node.mapping(allowed).map_err(|e| match e {
            MapError::Unknown { key, pos, allowed } => self.err(
                pos,
                &join(path, &key),
                format!("unknown key (URM's keys here: {})", allowed.join(", ")),
            ),
            MapError::Duplicate { key, pos, first } => self.err(
                pos,
                &join(path, &key),
                format!("duplicate key (first at line {})", first.line),
            ),
            other => self.err(other.pos(), path, other.to_string()),
        })
    }

    fn req<'n>(&self, m: &Mapping<'n>, key: &str, path: &str) -> Result<&'n Node, UrmError> {
        m.get(key).ok_or_else(|| {
            self.err(
                m.pos,
                &join(path, key),
                format!("missing required field `{key}`"),
            )
        })
    }

    fn text<'n>(&self, n: &'n Node, field: &str) -> Result<&'n str, UrmError> {
        match &n.value {
            Value::Scalar { text, .. } if !n.is_null() => Ok(text),
            _ => Err(self.err(
                n.pos,
                field,
                format!("expected a value, found {}", n.type_name()),
            )),
        }
    }

    fn int(&self, n: &Node, field: &str) -> Result<i64, UrmError> {
        let t = self.text(n, field)?;
        lever_text::parse_int(t.trim())
            .ok_or_else(|| self.err(n.pos, field, format!("expected an integer, found `{t}`")))
    }

    fn uint(&self, n: &Node, field: &str, max: u32) -> Result<u32, UrmError> {
        let v = self.int(n, field)?;
        u32::try_from(v)
            .ok()
            .filter(|v| *v <= max)
            .ok_or_else(|| self.err(n.pos, field, format!("{v} is out of range 0..={max:#x}")))
    }

    fn boolean(&self, n: &Node, field: &str) -> Result<bool, UrmError> {
        match self.text(n, field)? {
            "true" | "True" | "1" => Ok(true),
            "false" | "False" | "0" => Ok(false),
            t => Err(self.err(n.pos, field, format!("expected true or false, found `{t}`"))),
        }
    }

    fn word(&self, n: &Node, field: &str, allowed: &[&str]) -> Result<String, UrmError> {
        let t = self.text(n, field)?;
        if allowed.contains(&t) {
            Ok(t.to_string())
        } else {
            Err(self.err(
                n.pos,
                field,
                format!("unknown value `{t}` (URM's values: {})", allowed.join(", ")),
            ))
        }
    }

    fn list<'n>(&self, n: &'n Node, field: &str) -> Result<&'n [Node], UrmError> {
        match &n.value {
            Value::Seq(items) => Ok(items),
            _ => Err(self.err(
                n.pos,
                field,
                format!("expected a list, found {}", n.type_name()),
            )),
        }
    }

    /// `system` or `third_party`, alone or in a list; true when only
    /// system clients may use it.
    fn system_only(&self, n: &Node, field: &str) -> Result<bool, UrmError> {
        let words: Vec<String> = match &n.value {
            Value::Seq(items) => items
                .iter()
                .enumerate()
                .map(|(i, x)| self.word(x, &format!("{field}[{i}]"), &["system", "third_party"]))
                .collect::<Result<_, _>>()?,
            _ => vec![self.word(n, field, &["system", "third_party"])?],
        };
        Ok(!words.iter().any(|w| w == "third_party"))
    }

    fn at(&self, pos: Pos) -> At {
        At {
            file: self.name.to_string(),
            line: pos.line,
        }
    }

    fn top<'n>(&self, doc: &'n Node, key: &'static str) -> Result<&'n [Node], UrmError> {
        let m = self.map(doc, "", &[key])?;
        match m.get(key) {
            None => Ok(&[]),
            Some(n) if n.is_null() => Ok(&[]),
            Some(n) => self.list(n, key),
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn ignored(m: &Mapping, keys: &[&str]) -> Vec<(String, usize)> {
    m.entries()
        .iter()
        .filter(|e| keys.contains(&e.key))
        .map(|e| (e.key.to_string(), e.key_pos.line))
        .collect()
}

pub(crate) fn resources(f: &File, doc: &Node) -> Result<Vec<UrmResource>, UrmError> {
    let mut out = Vec::new();
    for (i, item) in f.top(doc, "ResourceConfigs")?.iter().enumerate() {
        let p = format!("ResourceConfigs[{i}]");
        let m = f.map(item, &p, RESOURCE_KEYS)?;
        let field = |k: &str| join(&p, k);
        let res_type = f.uint(f.req(&m, "ResType", &p)?, &field("ResType"), 0xFF)?;
        let res_id = f.uint(f.req(&m, "ResID", &p)?, &field("ResID"), 0xFFFF)?;
        let opt = |k: &str| m.get(k);
        out.push(UrmResource {
            at: f.at(m.pos),
            res_type,
            res_id,
            name: match opt("Name") {
                Some(n) => f.text(n, &field("Name"))?.to_string(),
                None => String::new(),
            },
            path: opt("Path")
                .map(|n| f.text(n, &field("Path")).map(str::to_string))
                .transpose()?,
            supported: match opt("Supported") {
                Some(n) => f.boolean(n, &field("Supported"))?,
                None => true,
            },
            high: f.int(f.req(&m, "HighThreshold", &p)?, &field("HighThreshold"))?,
            low: f.int(f.req(&m, "LowThreshold", &p)?, &field("LowThreshold"))?,
            system: match opt("Permissions") {
                Some(n) => f.system_only(n, &field("Permissions"))?,
                None => false,
            },
            policy: match opt("Policy") {
                Some(n) => f.word(n, &field("Policy"), POLICIES)?,
                None => "lazy_apply".into(),
            },
            unit: opt("Unit")
                .map(|n| f.text(n, &field("Unit")).map(str::to_string))
                .transpose()?,
            apply_type: match opt("ApplyType") {
                Some(n) => f.word(n, &field("ApplyType"), APPLY_TYPES)?,
                None => "global".into(),
            },
            ignored: ignored(&m, RESOURCE_IGNORED),
        });
    }
    Ok(out)
}

pub(crate) fn signals(f: &File, doc: &Node) -> Result<Vec<UrmSignal>, UrmError> {
    let mut out = Vec::new();
    for (i, item) in f.top(doc, "SignalConfigs")?.iter().enumerate() {
        let p = format!("SignalConfigs[{i}]");
        let m = f.map(item, &p, SIGNAL_KEYS)?;
        let field = |k: &str| join(&p, k);
        let mut resources = Vec::new();
        let res = f.req(&m, "Resources", &p)?;
        for (j, r) in f.list(res, &field("Resources"))?.iter().enumerate() {
            let rp = format!("{p}.Resources[{j}]");
            let rm = f.map(r, &rp, SIGNAL_RES_KEYS)?;
            let code = f.uint(f.req(&rm, "ResCode", &rp)?, &join(&rp, "ResCode"), u32::MAX)?;
            let info = match rm.get("ResInfo") {
                Some(n) => f.uint(n, &join(&rp, "ResInfo"), u32::MAX)?,
                None => 0,
            };
            let vn = f.req(&rm, "Values", &rp)?;
            let values = f
                .list(vn, &join(&rp, "Values"))?
                .iter()
                .enumerate()
                .map(|(k, v)| f.int(v, &format!("{rp}.Values[{k}]")))
                .collect::<Result<Vec<_>, _>>()?;
            resources.push(UrmSignalResource {
                line: rm.pos.line,
                code,
                info,
                values,
            });
        }
        let mut attrs = Vec::new();
        if let Some(n) = m.get("ExtraAttrs") {
            let am = f.map(n, &field("ExtraAttrs"), ATTR_KEYS)?;
            for e in am.entries() {
                let v = f.uint(e.value, &join(&field("ExtraAttrs"), e.key), u32::MAX)?;
                attrs.push((e.key.to_lowercase(), v));
            }
        }
        out.push(UrmSignal {
            at: f.at(m.pos),
            sig_id: f.uint(f.req(&m, "SigId", &p)?, &field("SigId"), 0xFFFF)?,
            category: f.uint(f.req(&m, "Category", &p)?, &field("Category"), 0xFF)?,
            name: match m.get("Name") {
                Some(n) => f.text(n, &field("Name"))?.to_string(),
                None => String::new(),
            },
            enable: match m.get("Enable") {
                Some(n) => f.boolean(n, &field("Enable"))?,
                None => true,
            },
            system_only: match m.get("Permissions") {
                Some(n) => f.system_only(n, &field("Permissions"))?,
                None => false,
            },
            timeout_ms: match m.get("Timeout") {
                Some(n) => f.int(n, &field("Timeout"))?,
                None => 0,
            },
            resources,
            attrs,
            ignored: ignored(&m, SIGNAL_IGNORED),
        });
    }
    Ok(out)
}

pub(crate) fn apps(f: &File, doc: &Node) -> Result<Vec<UrmApp>, UrmError> {
    let mut out = Vec::new();
    for (i, item) in f.top(doc, "PerAppConfigs")?.iter().enumerate() {
        let p = format!("PerAppConfigs[{i}]");
        let m = f.map(item, &p, APP_KEYS)?;
        let app = f.text(f.req(&m, "App", &p)?, &join(&p, "App"))?.to_string();
        let mut threads = Vec::new();
        if let Some(n) = m.get("Threads") {
            // `- {CamX-Preview: camera-cgroup}` items, or one mapping.
            let items: Vec<&Node> = match &n.value {
                Value::Seq(items) => items.iter().collect(),
                _ => vec![n],
            };
            for (j, t) in items.into_iter().enumerate() {
                let Value::Map(pairs) = &t.value else {
                    return Err(f.err(
                        t.pos,
                        &format!("{p}.Threads[{j}]"),
                        "expected `THREAD_COMM: CGROUP`",
                    ));
                };
                for (k, v) in pairs {
                    let comm = f.text(k, &format!("{p}.Threads[{j}]"))?;
                    let cg = f.text(v, &format!("{p}.Threads[{j}].{comm}"))?;
                    threads.push((comm.to_string(), cg.to_string()));
                }
            }
        }
        let mut signals = Vec::new();
        if let Some(n) = m.get("Configurations") {
            for (j, c) in f.list(n, &join(&p, "Configurations"))?.iter().enumerate() {
                signals.push(f.uint(c, &format!("{p}.Configurations[{j}]"), u32::MAX)?);
            }
        }
        out.push(UrmApp {
            at: f.at(m.pos),
            app,
            threads,
            signals,
        });
    }
    Ok(out)
}

/// `InitConfigs:` is a list of one-key mappings, one per section.
pub(crate) fn init(
    f: &File,
    doc: &Node,
    init: &mut UrmInit,
    warnings: &mut Vec<Warning>,
) -> Result<(), UrmError> {
    for (i, item) in f.top(doc, "InitConfigs")?.iter().enumerate() {
        let p = format!("InitConfigs[{i}]");
        let m = f.map(item, &p, INIT_SECTIONS)?;
        for e in m.entries() {
            let sp = join(&p, e.key);
            match e.key {
                "ClusterMap" => {
                    init.clusters.clear();
                    for (j, c) in f.list(e.value, &sp)?.iter().enumerate() {
                        let cp = format!("{sp}[{j}]");
                        let cm = f.map(c, &cp, CLUSTER_KEYS)?;
                        let id = f.uint(f.req(&cm, "Id", &cp)?, &join(&cp, "Id"), 31)?;
                        let ty = f.text(f.req(&cm, "Type", &cp)?, &join(&cp, "Type"))?;
                        init.clusters.push((id, ty.to_string()));
                    }
                }
                "CgroupsInfo" => {
                    init.cgroups.clear();
                    for (j, c) in f.list(e.value, &sp)?.iter().enumerate() {
                        let cp = format!("{sp}[{j}]");
                        let cm = f.map(c, &cp, CGROUP_KEYS)?;
                        let id = f.uint(f.req(&cm, "ID", &cp)?, &join(&cp, "ID"), u32::MAX)?;
                        let name = f.text(f.req(&cm, "Name", &cp)?, &join(&cp, "Name"))?;
                        if cm.get("IsThreaded").is_some() {
                            warnings.push(Warning::new(&f.at(cm.pos), &join(&cp, "IsThreaded"),
                                "threaded cgroups are not created by Lever; thread moves need a threaded subtree made by the system"));
                        }
                        init.cgroups.push((id, name.to_string()));
                    }
                }
                other => warnings.push(Warning::new(
                    &f.at(e.key_pos),
                    &sp,
                    format!("{other} is not imported (Lever has no IRQ-affinity, MPAM or cache-partition resources yet)"),
                )),
            }
        }
    }
    Ok(())
}
