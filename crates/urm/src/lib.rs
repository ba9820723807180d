//! Import a Userspace Resource Manager (URM) configuration directory as a
//! Lever target file with use cases and apps.
//!
//! URM (seed 001) describes a board in four YAML files, each possibly in
//! three layers read in this order, a later layer replacing an earlier
//! entry with the same key: `DIR/FILE` (a flat directory), then
//! `DIR/common/FILE`, `DIR/target/FILE`, `DIR/custom/FILE`
//! (`common/PerApp.yaml` is not read, as URM does not read it). A file of
//! comments only is empty.
//!
//! | URM file | key of an entry | becomes |
//! |---|---|---|
//! | `ResourcesConfig.yaml` (`ResourceConfigs:`) | ResType, ResID | a resource; opcode `make(0x30 + ResType, ResID)` for ResType ≤ 0xE, ResID ≤ 0xFF, else the next free minor of major 0x3F; `ApplyType: cgroup` a cgroup file instead |
//! | `SignalsConfig.yaml` (`SignalConfigs:`) | Category, SigId, SigType, ExtraAttrs | a use case with id `SigType << 24 \| Category << 16 \| SigId`; entries with `ExtraAttrs` are its variants |
//! | `PerApp.yaml` (`PerAppConfigs:`) | App | an `apps:` entry |
//! | `PropertiesConfig.yaml` (`PropertyConfigs:`) | Name | a property: [`Import::properties`], served to `getProp` by `lever daemon --urm` |
//! | `InitConfig.yaml` (`InitConfigs:`) | section | cluster names and ids (`ClusterMap`), cgroup IDs → URM's cgroup paths (`CgroupsInfo`); `IRQConfigs`, `LogLevel`, `MPAMgroupsInfo`, `CacheInfo` read and warned |
//!
//! A URM resource code, as signals write it in `ResCode`, is
//! `ResType << 16 | ResID` or one of URM's macro names (`RES_SCALE_MAX_FREQ`);
//! `ResInfo` (a number or a macro name such as `CLUSTER_BIG_ALL_CORES`)
//! packs the logical cluster (bits 15..8) and the core within it
//! (bits 7..0, 1-based, 0 = every core); a cgroup resource's `Values[0]` is
//! the cgroup ID, looked up in `CgroupsInfo` (`cpuset.cpus` takes every
//! further value as a CPU); a `"%d"` value (given at run time) leaves that
//! resource out. Thresholds are optional (checked only when both are
//! given), `Timeout` defaults to 1 ms, and a `Unit` factor (KB, KHz, …) is
//! applied to values (`Hz` on a kHz node is noted).
//! Every field is either mapped or named in a [`Warning`]; a key URM does
//! not have is an [`UrmError::Field`] at its file:line:col; a bad value
//! refuses the directory where URM refuses it (a resource, an app, an init
//! section) and drops the signal entry where URM drops it. A declared
//! `Policy` is honoured as declared (`lower_is_better` on a floor is
//! warned about, not changed). A warning repeated over entries of one file
//! is said once with a count and the other entries' lines. The full
//! mapping table is in `docs/usecases.md`; `lever daemon --urm DIR` runs
//! from a directory with [`import_dir`].
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("ResourcesConfig.yaml"), "\
//! ResourceConfigs:
//!   - ResType: \"0x1\"
//!     ResID: \"0x0\"
//!     Name: SCHED_UTIL_CLAMP_MIN
//!     Path: /proc/sys/kernel/sched_util_clamp_min
//!     HighThreshold: 1024
//!     LowThreshold: 0
//!     Policy: lower_is_better
//! ").unwrap();
//! std::fs::write(dir.path().join("SignalsConfig.yaml"), "\
//! SignalConfigs:
//!   - SigId: \"0x1\"
//!     Category: \"0x2\"
//!     Name: APP_LAUNCH
//!     Timeout: 2000
//!     Resources:
//!       - { ResCode: \"0x00010000\", Values: [512] }
//! ").unwrap();
//! let out = lever_urm::import(dir.path(), "demo", &[]).unwrap();
//! assert_eq!(out.target.usecases[0].name, "app-launch");
//! assert_eq!(out.target.usecases[0].id, 0x0002_0001);
//! assert!(out.warnings.iter().any(|w| w.message.contains("lower_is_better")));
//! assert!(out.yaml.contains("opcode: 0x4C400000"));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod read;
mod write;

use lever_targets::{Cluster, TargetFile};
pub use lever_yaml::{FieldError, SyntaxError};
use std::fmt;
use std::path::Path;

/// The layers of a URM configuration directory, lowest first.
pub const LAYERS: &[&str] = &["", "common", "target", "custom"];

/// What an import produced.
#[derive(Debug)]
pub struct Import {
    /// The Lever target file, as text.
    pub yaml: String,
    /// The same, parsed and checked by `lever-targets`.
    pub target: TargetFile,
    /// Every field not mapped, and every change made.
    pub warnings: Vec<Warning>,
    /// The URM files read, in order.
    pub files: Vec<String>,
    /// Every URM resource code imported as a resource, with its opcode
    /// (what URM's client API needs to send a `tuneResources`).
    pub codes: Vec<lever_protocol::UrmCode>,
    /// `PropertiesConfig.yaml`'s `Name: Value` pairs, layered (a later
    /// layer's value replaces an earlier one's), sorted by name.
    pub properties: std::collections::BTreeMap<String, String>,
    /// `InitConfig`'s cgroups with `Create: true` (not threaded), which
    /// URM creates at start: see [`Import::create_cgroups`].
    pub cgroups: Vec<String>,
}

impl Import {
    /// Create the cgroups URM creates at start (`Create: true` in
    /// `CgroupsInfo`), with their parents, below `fs`'s root, enabling in
    /// each parent the controllers the hierarchy's root offers among cpu,
    /// cpuset, memory and io, so the cgroup has the files URM's cgroup
    /// resources write. On a simulated board the kernel's files are made
    /// as the kernel would. Returns a line per cgroup created or found,
    /// and a line per cgroup that could not be.
    pub fn create_cgroups(&self, fs: &lever_kernel::KernelFs) -> (Vec<String>, Vec<String>) {
        let (mut done, mut failed) = (Vec::new(), Vec::new());
        if self.cgroups.is_empty() {
            return (done, failed);
        }
        let cg = lever_tasks::Cgroups::discover(fs.clone());
        if let Err(e) = cg.check() {
            failed.push(format!(
                "URM's cgroups ({}) not created: {e}",
                self.cgroups.join(", ")
            ));
            return (done, failed);
        }
        let controllers: Vec<&str> = ["cpu", "cpuset", "memory", "io"]
            .into_iter()
            .filter(|c| cg.controller_unavailable(c).is_none())
            .collect();
        for name in &self.cgroups {
            let existed = cg.exists(name);
            match cg.ensure(name, &controllers) {
                Ok(()) if existed => done.push(format!("URM cgroup {name}: already there")),
                Ok(()) => done.push(format!(
                    "URM cgroup {name}: created (controllers {})",
                    controllers.join(", ")
                )),
                Err(e) => failed.push(format!("URM cgroup {name}: not created: {e}")),
            }
        }
        (done, failed)
    }

    /// What a daemon serves to URM's client API: the codes, the target's
    /// clusters, the properties.
    pub fn view(&self) -> lever_protocol::UrmView {
        lever_protocol::UrmView {
            codes: self.codes.clone(),
            clusters: match &self.target.clusters {
                lever_targets::Clusters::List(list) => list.as_slice(),
                _ => &[],
            }
            .iter()
            .map(|c| lever_protocol::UrmCluster {
                id: c.id,
                cpus: c.cpus.clone(),
            })
            .collect(),
            properties: self.properties.clone(),
        }
    }
}

/// A field that was not mapped as written, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Warning {
    /// The URM file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The field's path, e.g. `ResourceConfigs[3].Modes`.
    pub field: String,
    /// What happened to it.
    pub message: String,
    /// How many entries this same warning is about (said once: the
    /// first's file:line, the count and the other lines).
    pub count: usize,
}

impl Warning {
    pub(crate) fn new(at: &read::At, field: &str, message: impl Into<String>) -> Warning {
        Warning {
            file: at.file.clone(),
            line: at.line,
            field: field.to_string(),
            message: message.into(),
            count: 1,
        }
    }
}

/// `ResourceConfigs[12].Modes` → `ResourceConfigs[*].Modes`.
fn shape(field: &str) -> String {
    let mut out = String::new();
    let mut in_index = false;
    for c in field.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push_str("[*");
            }
            ']' => {
                in_index = false;
                out.push(']');
            }
            _ if in_index => {}
            _ => out.push(c),
        }
    }
    out
}

/// Say a warning repeated over entries of one file once, with a count and
/// the other entries' lines.
fn fold(warnings: Vec<Warning>) -> Vec<Warning> {
    let mut out: Vec<Warning> = Vec::new();
    let mut more: Vec<Vec<usize>> = Vec::new();
    for w in warnings {
        let key = shape(&w.field);
        match out
            .iter()
            .position(|o| o.file == w.file && o.message == w.message && shape(&o.field) == key)
        {
            Some(i) => {
                out[i].count += 1;
                more[i].push(w.line);
            }
            None => {
                out.push(w);
                more.push(Vec::new());
            }
        }
    }
    for (w, lines) in out.iter_mut().zip(more) {
        if w.count > 1 {
            let shown: Vec<String> = lines.iter().take(12).map(|l| l.to_string()).collect();
            let rest = if lines.len() > 12 { ", …" } else { "" };
            w.message = format!(
                "{} ({} entries like this one; also at lines {}{rest})",
                w.message,
                w.count,
                shown.join(", ")
            );
        }
    }
    out
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: field `{}`: {}",
            self.file, self.line, self.field, self.message
        )
    }
}

/// Why a directory cannot be imported.
#[derive(Debug, thiserror::Error)]
pub enum UrmError {
    /// A field of a URM file is wrong (an unknown key, a bad value).
    #[error(transparent)]
    Field(#[from] lever_yaml::FieldError),
    /// A URM file is not YAML.
    #[error(transparent)]
    Syntax(#[from] lever_yaml::SyntaxError),
    /// A file or the directory could not be read (or the output written).
    #[error("{path}: {source}")]
    Read {
        /// The path.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The directory holds none of URM's files.
    #[error("{dir}: no URM configuration here (expected ResourcesConfig.yaml, SignalsConfig.yaml, PerApp.yaml or InitConfig.yaml, flat or under common/, target/, custom/)")]
    Empty {
        /// The directory.
        dir: String,
    },
    /// The generated target file did not check (a bug in the importer;
    /// the message shows where in the generated text), or the board's
    /// clusters could not be discovered.
    #[error("the imported target does not check: {0}")]
    Generated(#[from] lever_targets::TargetError),
}

/// The four files, each merged over the layers.
#[derive(Debug, Default)]
pub(crate) struct Config {
    pub resources: Vec<read::UrmResource>,
    pub signals: Vec<read::UrmSignal>,
    pub apps: Vec<read::UrmApp>,
    pub init: read::UrmInit,
    pub properties: std::collections::BTreeMap<String, String>,
}

fn load(path: &Path) -> Result<Option<(String, lever_yaml::Node)>, UrmError> {
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(UrmError::Read {
                path: shown,
                source,
            })
        }
    };
    // A file of comments only is an empty configuration, as for URM.
    if text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        let null = lever_yaml::Node {
            pos: lever_yaml::Pos { line: 1, col: 1 },
            value: lever_yaml::Value::Scalar {
                text: String::new(),
                plain: true,
            },
        };
        return Ok(Some((shown, null)));
    }
    let doc = lever_yaml::parse_file(&shown, &text, |_| None)?;
    Ok(Some((shown, doc)))
}

/// Replace entries with the same key, append the rest (file order kept).
fn merge<T>(into: &mut Vec<T>, new: Vec<T>, key: impl Fn(&T) -> String) {
    for item in new {
        match into.iter().position(|x| key(x) == key(&item)) {
            Some(i) => into[i] = item,
            None => into.push(item),
        }
    }
}

/// What `lever target import-urm` does: discover the clusters of the
/// kernel below `fs`, import `dir` as target `name`, and write the result
/// to `out` when given.
pub fn import_dir(
    dir: &Path,
    name: &str,
    fs: &lever_kernel::KernelFs,
    out: Option<&Path>,
) -> Result<Import, UrmError> {
    let clusters = lever_targets::discover_clusters(fs)?;
    let import = import(dir, name, &clusters)?;
    if let Some(path) = out {
        std::fs::write(path, &import.yaml).map_err(|source| UrmError::Read {
            path: path.display().to_string(),
            source,
        })?;
    }
    Ok(import)
}

/// Import the URM configuration in `dir` as target `name`. `clusters` are
/// the board's CPU clusters in capacity order (from
/// [`lever_targets::discover_clusters`]), paired in order with URM's
/// `ClusterMap`; with none, per-cluster and per-core resources are left
/// out with a warning.
pub fn import(dir: &Path, name: &str, clusters: &[Cluster]) -> Result<Import, UrmError> {
    if let Err(source) = std::fs::read_dir(dir) {
        return Err(UrmError::Read {
            path: dir.display().to_string(),
            source,
        });
    }
    let mut cfg = Config::default();
    let mut warnings = Vec::new();
    let mut files = Vec::new();
    for layer in LAYERS {
        let base = dir.join(layer);
        if let Some((file, doc)) = load(&base.join("ResourcesConfig.yaml"))? {
            let f = read::File { name: &file };
            merge(&mut cfg.resources, read::resources(&f, &doc)?, |r| {
                format!("{}:{}", r.res_type, r.res_id)
            });
            files.push(file);
        }
        if let Some((file, doc)) = load(&base.join("SignalsConfig.yaml"))? {
            let f = read::File { name: &file };
            // URM's key: (Category, SigId, SigType), and for an entry with
            // ExtraAttrs, its attributes.
            merge(
                &mut cfg.signals,
                read::signals(&f, &doc, &mut warnings)?,
                |s| {
                    format!(
                        "{}:{}:{}:{}:{:?}:{:?}",
                        s.category, s.sig_id, s.sig_type, s.has_attrs, s.attrs, s.mm_src
                    )
                },
            );
            files.push(file);
        }
        if let Some((file, doc)) = load(&base.join("PerApp.yaml"))? {
            if *layer == "common" {
                // URM reads PerApp.yaml from target/ and custom/ only.
                warnings.push(Warning {
                    file: file.clone(),
                    line: 1,
                    field: "PerAppConfigs".into(),
                    message: "URM does not read common/PerApp.yaml (only target/ and custom/); not imported".into(),
                    count: 1,
                });
            } else {
                let f = read::File { name: &file };
                merge(&mut cfg.apps, read::apps(&f, &doc)?, |a| a.app.clone());
                files.push(file);
            }
        }
        if let Some((file, doc)) = load(&base.join("PropertiesConfig.yaml"))? {
            let f = read::File { name: &file };
            // Properties are not part of the target file: the file is not
            // listed in its header (`files`), only its values kept.
            cfg.properties.extend(read::properties(&f, &doc)?);
        }
        if let Some((file, doc)) = load(&base.join("InitConfig.yaml"))? {
            let f = read::File { name: &file };
            read::init(&f, &doc, &mut cfg.init, &mut warnings)?;
            files.push(file);
        }
    }
    if files.is_empty() {
        return Err(UrmError::Empty {
            dir: dir.display().to_string(),
        });
    }
    let mut codes = Vec::new();
    let yaml = write::target(&cfg, name, &files, clusters, &mut warnings, &mut codes);
    let warnings = fold(warnings);
    let target = lever_targets::parse(&format!("{name}.yaml"), &yaml)?;
    Ok(Import {
        yaml,
        target,
        warnings,
        files,
        codes,
        properties: cfg.properties,
        cgroups: cfg.init.create,
    })
}
