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
    /// Index of the entry in its file.
    pub index: usize,
    /// `HighThreshold`, `LowThreshold`: URM checks a value against them only
    /// when both are given (its default for each is -1).
    pub high: Option<i64>,
    pub low: Option<i64>,
    pub system: bool,
    pub policy: String,
    pub unit: Option<String>,
    pub apply_type: String,
    /// `TargetsEnabled`, `TargetsDisabled` (URM's target names).
    pub targets_enabled: Vec<String>,
    pub targets_disabled: Vec<String>,
    pub ignored: Vec<(String, usize)>,
}

/// One `Resources:` item of a signal.
#[derive(Debug, Clone)]
pub struct UrmSignalResource {
    pub line: usize,
    pub code: u32,
    /// `ResInfo`: bits 15..8 the logical cluster, bits 7..0 the core
    /// (1-based within the cluster; 0 = every core of the cluster).
    pub info: u32,
    /// `None` is URM's `"%d"`: a value the client passes at run time.
    pub values: Vec<Option<i64>>,
}

/// A `SignalConfigs:` entry.
#[derive(Debug, Clone)]
pub struct UrmSignal {
    pub at: At,
    /// Index of the entry in its file.
    pub index: usize,
    pub sig_id: u32,
    pub category: u32,
    /// `SigType` (0 when not given): part of URM's key for a signal.
    pub sig_type: u32,
    /// `Timeout` was given (URM's default is 1 ms).
    pub timeout_given: bool,
    /// `ExtraAttrs.MmSrc` as URM encodes it (qtiqmmfsrc 1, libcamerasrc 2,
    /// anything else 0), with the text.
    pub mm_src: Option<(String, u32)>,
    /// `ExtraAttrs` was given (even empty): the entry is a variant.
    pub has_attrs: bool,
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
    /// Index of the entry in its file.
    pub index: usize,
    pub app: String,
    /// Thread comm → cgroup ID (a number or a macro name such as
    /// `FOCUSED_CGROUP_IDENTIFIER`).
    pub threads: Vec<(String, u32)>,
    /// Signal codes.
    pub signals: Vec<u32>,
}

/// `InitConfigs:`.
#[derive(Debug, Clone, Default)]
pub struct UrmInit {
    /// `ClusterMap`: logical id → type name.
    pub clusters: Vec<(u32, String)>,
    /// `CgroupsInfo`: id → name (URM's path below /sys/fs/cgroup).
    pub cgroups: Vec<(u32, String)>,
    /// The `CgroupsInfo` names with `Create: true` (not threaded): URM
    /// creates them at start, and so does `lever daemon --urm`.
    pub create: Vec<String>,
}

/// URM's macro names for `ResCode` and `ResInfo` values (its client
/// header's list of common codes), so `ResCode: "RES_SCALE_MAX_FREQ"`
/// reads as URM reads it.
pub const MACROS: &[(&str, u32)] = &[
    ("RES_SCALE_MIN_FREQ", 0x0004_0000),
    ("RES_SCALE_MAX_FREQ", 0x0004_0001),
    ("RES_RATE_LIMIT_US", 0x0004_0002),
    ("RES_CPU_ONLINE_PER_CORE", 0x0004_0003),
    ("RES_CPU_IDLE_DISABLE_ST0", 0x0001_0002),
    ("RES_CPU_IDLE_DISABLE_ST1", 0x0001_0003),
    ("RES_CPU_IDLE_DISABLE_ST2", 0x0001_0004),
    ("RES_SCHED_UTIL_CLAMP_MIN", 0x0003_0000),
    ("RES_SCHED_UTIL_CLAMP_MAX", 0x0003_0001),
    ("RES_SCHED_ENERGY_AWARE", 0x0003_0002),
    ("RES_SCHED_RT_RUNTIME", 0x0003_0003),
    ("RES_CPU_DMA_LATENCY", 0x0001_0000),
    ("RES_PM_QOS_LATENCY", 0x0001_0001),
    ("RES_DEVFREQ_GPU_MAX", 0x0005_0000),
    ("RES_DEVFREQ_GPU_MIN", 0x0005_0001),
    ("RES_DEVFREQ_GPU_POLL_INTV", 0x0005_0002),
    ("RES_DEVFREQ_UFS_MAX", 0x000a_0000),
    ("RES_DEVFREQ_UFS_MIN", 0x000a_0001),
    ("RES_DEVFREQ_UFS_POLL_INTV", 0x000a_0002),
    ("RES_IRQ_AFFINE", 0x000b_0000),
    ("RES_DEF_IRQ_AFFINE", 0x000b_0001),
    ("RES_CGRP_MOVE_PID", 0x0009_0000),
    ("RES_CGRP_MOVE_TID", 0x0009_0001),
    ("RES_CGRP_RUN_CORES", 0x0009_0002),
    ("RES_CGRP_RUN_CORES_EXCL", 0x0009_0003),
    ("RES_CGRP_FREEZE", 0x0009_0004),
    ("RES_CGRP_LIMIT_CPU_TIME", 0x0009_0005),
    ("RES_CGRP_RUN_WHEN_CPU_IDLE", 0x0009_0006),
    ("RES_CGRP_UCLAMP_MIN", 0x0009_0007),
    ("RES_CGRP_UCLAMP_MAX", 0x0009_0008),
    ("RES_CGRP_REL_CPU_WEIGHT", 0x0009_0009),
    ("RES_CGRP_HIGH_MEM", 0x0009_000a),
    ("RES_CGRP_MAX_MEM", 0x0009_000b),
    ("RES_CGRP_LOW_MEM", 0x0009_000c),
    ("RES_CGRP_MIN_MEM", 0x0009_000d),
    ("RES_CGRP_SWAP_MAX_MEMORY", 0x0009_000e),
    ("RES_CGRP_IO_WEIGHT", 0x0009_000f),
    ("RES_CGRP_CPU_LATENCY", 0x0009_0011),
    ("FOCUSED_CGROUP_IDENTIFIER", 0x0000_0004),
    ("CLUSTER_LITTLE_ALL_CORES", 0x0000_0000),
    ("CLUSTER_LITTLE_CORE_0", 0x0000_0001),
    ("CLUSTER_LITTLE_CORE_1", 0x0000_0002),
    ("CLUSTER_LITTLE_CORE_2", 0x0000_0003),
    ("CLUSTER_LITTLE_CORE_3", 0x0000_0004),
    ("CLUSTER_BIG_ALL_CORES", 0x0000_0100),
    ("CLUSTER_BIG_CORE_0", 0x0000_0101),
    ("CLUSTER_BIG_CORE_1", 0x0000_0102),
    ("CLUSTER_BIG_CORE_2", 0x0000_0103),
    ("CLUSTER_BIG_CORE_3", 0x0000_0104),
    ("CLUSTER_PLUS_ALL_CORES", 0x0000_0200),
    ("CLUSTER_PLUS_CORE_0", 0x0000_0201),
    ("CLUSTER_PLUS_CORE_1", 0x0000_0202),
    ("CLUSTER_PLUS_CORE_2", 0x0000_0203),
    ("CLUSTER_PLUS_CORE_3", 0x0000_0204),
    ("DEFAULT_SIGNAL_TYPE", 0x0000_0000),
];

/// A macro name's value.
pub fn macro_value(name: &str) -> Option<u32> {
    MACROS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// URM's `Unit` words and the factor it multiplies a value by before
/// writing it (its `TranslationUnit`).
pub const UNITS: &[(&str, i64)] = &[
    ("KB", 1024),
    ("kb", 1024),
    ("MB", 1024 * 1024),
    ("mb", 1024 * 1024),
    ("GB", 1024 * 1024 * 1024),
    ("gb", 1024 * 1024 * 1024),
    ("KHz", 1000),
    ("khz", 1000),
    ("MHz", 1_000_000),
    ("mhz", 1_000_000),
    ("GHz", 1_000_000_000),
    ("ghz", 1_000_000_000),
    ("Hz", 1),
    ("hz", 1),
    ("byte", 1),
    ("NA", 1),
    ("na", 1),
];

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
const RESOURCE_IGNORED: &[&str] = &["Modes"];
const MODES: &[&str] = &["display_on", "display_off", "doze"];
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
const SIGNAL_IGNORED: &[&str] = &["TargetsEnabled", "TargetsDisabled", "Derivatives"];
const SIGNAL_RES_KEYS: &[&str] = &["ResCode", "ResInfo", "Values"];
const ATTR_KEYS: &[&str] = &["Fps", "Width", "Height", "MmSrc"];
const APP_KEYS: &[&str] = &["App", "Threads", "Configurations"];
const PROPERTY_KEYS: &[&str] = &["Name", "Value"];
const INIT_SECTIONS: &[&str] = &[
    "ClusterMap",
    "CgroupsInfo",
    "IRQConfigs",
    "MPAMgroupsInfo",
    "CacheInfo",
    "LogLevel",
];
const CLUSTER_KEYS: &[&str] = &["Id", "Type"];
const CGROUP_KEYS: &[&str] = &["Name", "ID", "Create", "IsThreaded"];
const IRQ_KEYS: &[&str] = &["AffineIRQ", "AffineIRQToCluster"];
const MPAM_KEYS: &[&str] = &["Name", "ID", "Priority"];
const CACHE_KEYS: &[&str] = &["Type", "NumCacheBlocks", "PriorityAware"];
pub(crate) const POLICIES: &[&str] = &[
    "higher_is_better",
    "lower_is_better",
    "lazy_apply",
    "instant_apply",
    "pass_through",
    "pass_through_append",
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

    /// A number as URM's `stol(text, 0)` reads it, or one of URM's macro
    /// names ([`MACROS`]).
    fn code(&self, n: &Node, field: &str) -> Result<u32, UrmError> {
        let t = self.text(n, field)?.trim();
        if let Some(v) = macro_value(t) {
            return Ok(v);
        }
        let v = lever_text::parse_int(t).ok_or_else(|| {
            self.err(
                n.pos,
                field,
                format!("expected a number or one of URM's macro names (such as RES_SCALE_MAX_FREQ, CLUSTER_BIG_ALL_CORES), found `{t}`"),
            )
        })?;
        // URM keeps the low 32 bits.
        Ok(v as u32)
    }

    /// A word or a list of words.
    fn words(&self, n: &Node, field: &str) -> Result<Vec<String>, UrmError> {
        match &n.value {
            Value::Seq(items) => items
                .iter()
                .enumerate()
                .map(|(i, x)| self.text(x, &format!("{field}[{i}]")).map(str::to_string))
                .collect(),
            _ if n.is_null() => Ok(Vec::new()),
            _ => Ok(vec![self.text(n, field)?.to_string()]),
        }
    }

    fn top<'n>(&self, doc: &'n Node, key: &'static str) -> Result<&'n [Node], UrmError> {
        // A file of comments only is an empty configuration, as for URM.
        if doc.is_null() {
            return Ok(&[]);
        }
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
        let opt = |k: &str| m.get(k);
        // URM keeps ResType in 8 bits and ResID in 16; a bad value in any
        // field makes URM refuse the file, so it is an error here too.
        let res_type = f.uint(f.req(&m, "ResType", &p)?, &field("ResType"), 0xFF)?;
        let res_id = f.uint(f.req(&m, "ResID", &p)?, &field("ResID"), 0xFFFF)?;
        let threshold = |k: &str| -> Result<Option<i64>, UrmError> {
            match opt(k) {
                Some(n) => Ok(Some(f.int(n, &field(k))?).filter(|v| *v != -1)),
                None => Ok(None),
            }
        };
        if let Some(n) = opt("Modes") {
            for (j, w) in f.words(n, &field("Modes"))?.iter().enumerate() {
                if !w.is_empty() && !MODES.contains(&w.as_str()) {
                    return Err(f.err(
                        n.pos,
                        &format!("{}[{j}]", field("Modes")),
                        format!("unknown value `{w}` (URM's values: {})", MODES.join(", ")),
                    ));
                }
            }
        }
        let unit = match opt("Unit") {
            Some(n) => {
                let t = f.text(n, &field("Unit"))?;
                if !UNITS.iter().any(|(u, _)| *u == t) {
                    let words: Vec<&str> = UNITS.iter().map(|(u, _)| *u).collect();
                    return Err(f.err(
                        n.pos,
                        &field("Unit"),
                        format!("unknown value `{t}` (URM's values: {})", words.join(", ")),
                    ));
                }
                Some(t.to_string())
            }
            None => None,
        };
        out.push(UrmResource {
            at: f.at(m.pos),
            index: i,
            res_type,
            res_id,
            name: match opt("Name") {
                Some(n) => f.text(n, &field("Name"))?.to_string(),
                None => String::new(),
            },
            path: opt("Path")
                .map(|n| f.text(n, &field("Path")).map(str::to_string))
                .transpose()?,
            // URM: anything but `true` is not supported.
            supported: match opt("Supported") {
                Some(n) => f.text(n, &field("Supported"))? == "true",
                None => true,
            },
            high: threshold("HighThreshold")?,
            low: threshold("LowThreshold")?,
            system: match opt("Permissions") {
                Some(n) => f.system_only(n, &field("Permissions"))?,
                None => false,
            },
            policy: match opt("Policy") {
                Some(n) => f.word(n, &field("Policy"), POLICIES)?,
                None => "lazy_apply".into(),
            },
            unit,
            apply_type: match opt("ApplyType") {
                Some(n) => f.word(n, &field("ApplyType"), APPLY_TYPES)?,
                None => "global".into(),
            },
            targets_enabled: match opt("TargetsEnabled") {
                Some(n) => f.words(n, &field("TargetsEnabled"))?,
                None => Vec::new(),
            },
            targets_disabled: match opt("TargetsDisabled") {
                Some(n) => f.words(n, &field("TargetsDisabled"))?,
                None => Vec::new(),
            },
            ignored: ignored(&m, RESOURCE_IGNORED),
        });
    }
    Ok(out)
}

/// `Fps`/`Width`/`Height` by name, and `MmSrc` with URM's code for it.
type ExtraAttrs = (Vec<(String, u32)>, Option<(String, u32)>);

/// `ExtraAttrs`: URM's list of one-key mappings (`- Fps: 60`), or one
/// mapping.
fn extra_attrs(f: &File, n: &Node, field: &str) -> Result<ExtraAttrs, UrmError> {
    let maps: Vec<&Node> = match &n.value {
        Value::Seq(items) => items.iter().collect(),
        _ if n.is_null() => Vec::new(),
        _ => vec![n],
    };
    let mut attrs = Vec::new();
    let mut src = None;
    for (k, item) in maps.into_iter().enumerate() {
        let ip = format!("{field}[{k}]");
        let am = f.map(item, &ip, ATTR_KEYS)?;
        for e in am.entries() {
            let ef = join(&ip, e.key);
            if e.key == "MmSrc" {
                let t = f.text(e.value, &ef)?;
                let code = match t.to_lowercase().as_str() {
                    "qtiqmmfsrc" => 1,
                    "libcamerasrc" => 2,
                    _ => 0,
                };
                src = Some((t.to_string(), code));
            } else {
                let v = f.int(e.value, &ef)?;
                attrs.push((e.key.to_lowercase(), v as u32));
            }
        }
    }
    Ok((attrs, src))
}

/// One `SignalConfigs:` entry's values (the keys are checked before).
fn signal(f: &File, m: &Mapping, i: usize, p: &str) -> Result<UrmSignal, UrmError> {
    let field = |k: &str| join(p, k);
    let mut resources = Vec::new();
    if let Some(res) = m.get("Resources") {
        let items: &[Node] = if res.is_null() {
            &[]
        } else {
            f.list(res, &field("Resources"))?
        };
        for (j, r) in items.iter().enumerate() {
            let rp = format!("{p}.Resources[{j}]");
            let rm = f.map(r, &rp, SIGNAL_RES_KEYS)?;
            let code = f.code(f.req(&rm, "ResCode", &rp)?, &join(&rp, "ResCode"))?;
            let info = match rm.get("ResInfo") {
                Some(n) => f.code(n, &join(&rp, "ResInfo"))?,
                None => 0,
            };
            let values = match rm.get("Values") {
                Some(vn) => f
                    .list(vn, &join(&rp, "Values"))?
                    .iter()
                    .enumerate()
                    .map(|(k, v)| {
                        if v.as_str().map(str::trim) == Some("%d") {
                            Ok(None)
                        } else {
                            f.int(v, &format!("{rp}.Values[{k}]")).map(Some)
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                None => Vec::new(),
            };
            resources.push(UrmSignalResource {
                line: rm.pos.line,
                code,
                info,
                values,
            });
        }
    }
    let (attrs, mm_src) = match m.get("ExtraAttrs") {
        Some(n) => extra_attrs(f, n, &field("ExtraAttrs"))?,
        None => (Vec::new(), None),
    };
    let permissions = match m.get("Permissions") {
        Some(n) => {
            let words = f.words(n, &field("Permissions"))?;
            for (k, w) in words.iter().enumerate() {
                if !w.is_empty() && w != "system" && w != "third_party" {
                    return Err(f.err(
                        n.pos,
                        &format!("{}[{k}]", field("Permissions")),
                        format!("unknown value `{w}` (URM's values: system, third_party)"),
                    ));
                }
            }
            words
        }
        None => Vec::new(),
    };
    Ok(UrmSignal {
        at: f.at(m.pos),
        index: i,
        sig_id: f.code(f.req(m, "SigId", p)?, &field("SigId"))? & 0xFFFF,
        category: f.code(f.req(m, "Category", p)?, &field("Category"))? & 0xFF,
        sig_type: match m.get("SigType") {
            Some(n) => f.code(n, &field("SigType"))?,
            None => 0,
        },
        name: match m.get("Name") {
            Some(n) => f.text(n, &field("Name"))?.to_string(),
            None => String::new(),
        },
        enable: match m.get("Enable") {
            Some(n) => f.text(n, &field("Enable"))? == "true",
            None => true,
        },
        system_only: !permissions.is_empty() && !permissions.iter().any(|w| w == "third_party"),
        timeout_given: m.get("Timeout").is_some(),
        timeout_ms: match m.get("Timeout") {
            Some(n) => f.int(n, &field("Timeout"))?,
            None => 1,
        },
        resources,
        has_attrs: m.get("ExtraAttrs").is_some(),
        attrs,
        mm_src,
        ignored: ignored(m, SIGNAL_IGNORED),
    })
}

/// URM drops a signal entry with a bad value (and keeps reading the
/// file): such an entry is left out with a warning naming why.
pub(crate) fn signals(
    f: &File,
    doc: &Node,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<UrmSignal>, UrmError> {
    let mut out = Vec::new();
    for (i, item) in f.top(doc, "SignalConfigs")?.iter().enumerate() {
        let p = format!("SignalConfigs[{i}]");
        let m = f.map(item, &p, SIGNAL_KEYS)?;
        match signal(f, &m, i, &p) {
            Ok(s) if s.category == 0 => warnings.push(Warning::new(
                &f.at(m.pos),
                &join(&p, "Category"),
                "Category 0 is the mark of an invalid signal in URM, which drops it; left out",
            )),
            Ok(s) => out.push(s),
            // A key URM does not have is refused (URM would misread the
            // entries after it); a bad value drops the entry, as in URM.
            Err(UrmError::Field(e))
                if !e.message.starts_with("unknown key")
                    && !e.message.starts_with("duplicate key") =>
            {
                warnings.push(Warning {
                    file: f.name.to_string(),
                    line: e.line,
                    field: e.field.clone(),
                    message: format!(
                        "{}; URM drops this signal and so does the import",
                        e.message
                    ),
                    count: 1,
                })
            }
            Err(e) => return Err(e),
        }
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
            // `- {CamX-Preview: CGROUP_ID}` items, or one mapping.
            let items: Vec<&Node> = match &n.value {
                Value::Seq(items) => items.iter().collect(),
                _ => vec![n],
            };
            for (j, t) in items.into_iter().enumerate() {
                let Value::Map(pairs) = &t.value else {
                    return Err(f.err(
                        t.pos,
                        &format!("{p}.Threads[{j}]"),
                        "expected `THREAD_COMM: CGROUP_ID`",
                    ));
                };
                for (k, v) in pairs {
                    let comm = f.text(k, &format!("{p}.Threads[{j}]"))?;
                    let cg = f.code(v, &format!("{p}.Threads[{j}].{comm}"))?;
                    threads.push((comm.to_string(), cg));
                }
            }
        }
        let mut signals = Vec::new();
        if let Some(n) = m.get("Configurations") {
            for (j, c) in f.list(n, &join(&p, "Configurations"))?.iter().enumerate() {
                signals.push(f.code(c, &format!("{p}.Configurations[{j}]"))?);
            }
        }
        out.push(UrmApp {
            at: f.at(m.pos),
            index: i,
            app,
            threads,
            signals,
        });
    }
    Ok(out)
}

/// `PropertyConfigs:` entries, `Name: Value` each (both required, as URM
/// reads them; a value is kept as its text).
pub(crate) fn properties(f: &File, doc: &Node) -> Result<Vec<(String, String)>, UrmError> {
    let mut out = Vec::new();
    for (i, item) in f.top(doc, "PropertyConfigs")?.iter().enumerate() {
        let p = format!("PropertyConfigs[{i}]");
        let m = f.map(item, &p, PROPERTY_KEYS)?;
        let name = f.text(f.req(&m, "Name", &p)?, &join(&p, "Name"))?;
        let value = f.text(f.req(&m, "Value", &p)?, &join(&p, "Value"))?;
        out.push((name.to_string(), value.to_string()));
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
            let items: &[Node] = if e.value.is_null() || e.key == "LogLevel" {
                &[]
            } else {
                f.list(e.value, &sp)?
            };
            match e.key {
                "ClusterMap" => {
                    init.clusters.clear();
                    for (j, c) in items.iter().enumerate() {
                        let cp = format!("{sp}[{j}]");
                        let cm = f.map(c, &cp, CLUSTER_KEYS)?;
                        let id = f.uint(f.req(&cm, "Id", &cp)?, &join(&cp, "Id"), 31)?;
                        let ty = f.text(f.req(&cm, "Type", &cp)?, &join(&cp, "Type"))?;
                        init.clusters.push((id, ty.to_string()));
                    }
                }
                "CgroupsInfo" => {
                    // URM adds to the cgroups of earlier layers.
                    for (j, c) in items.iter().enumerate() {
                        let cp = format!("{sp}[{j}]");
                        let cm = f.map(c, &cp, CGROUP_KEYS)?;
                        let id = f.uint(f.req(&cm, "ID", &cp)?, &join(&cp, "ID"), u32::MAX)?;
                        let name = f.text(f.req(&cm, "Name", &cp)?, &join(&cp, "Name"))?;
                        let mut threaded = false;
                        if let Some(t) = cm.get("IsThreaded") {
                            if f.text(t, &join(&cp, "IsThreaded"))? == "true" {
                                threaded = true;
                                warnings.push(Warning::new(&f.at(cm.pos), &join(&cp, "IsThreaded"),
                                    "threaded cgroups are not created by Lever; thread moves need a threaded subtree made by the system"));
                            }
                        }
                        init.cgroups.retain(|(x, _)| *x != id);
                        init.cgroups.push((id, name.to_string()));
                        let create = match cm.get("Create") {
                            Some(c) => f.text(c, &join(&cp, "Create"))? == "true",
                            None => false,
                        };
                        init.create.retain(|n| n != name);
                        if create && !threaded {
                            init.create.push(name.to_string());
                        }
                    }
                }
                other => {
                    let keys = match other {
                        "IRQConfigs" => IRQ_KEYS,
                        "MPAMgroupsInfo" => MPAM_KEYS,
                        "CacheInfo" => CACHE_KEYS,
                        _ => &[],
                    };
                    for (j, c) in items.iter().enumerate() {
                        f.map(c, &format!("{sp}[{j}]"), keys)?;
                    }
                    let what = match other {
                        "IRQConfigs" => "IRQ affinity at start-up (AffineIRQ, AffineIRQToCluster)",
                        "MPAMgroupsInfo" => "MPAM groups",
                        "CacheInfo" => "cache partitions",
                        _ => "URM's own log level",
                    };
                    warnings.push(Warning::new(
                        &f.at(e.key_pos),
                        &sp,
                        format!(
                            "{other} is not imported: Lever has no {what} setting in a target file"
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}
