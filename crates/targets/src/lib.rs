//! Target files: the tunable resources of a board, declared as data.
//!
//! A *target file* is a YAML document that lists a board's CPU clusters and
//! its *resources* — kernel nodes Lever may tune, each with an opcode, a
//! unit, bounds, an aggregation policy and a permission (the format is
//! described in `docs/targets.md`, the opcode layout in `docs/opcodes.md`).
//! Loading one is two steps, as in ripgrep's "parse, then build":
//!
//! 1. [`parse`] reads the text into a [`TargetFile`] of *templates* and
//!    checks everything that needs no kernel. Every mistake is a
//!    [`TargetError`] printed as `` FILE:LINE:COL: field `FIELD`: message ``:
//!    unknown or duplicate keys, wrong types, bad opcodes, opcodes that
//!    collide after expansion, bad pairs, placeholders a template cannot
//!    fill, literal bounds out of order.
//! 2. [`TargetFile::bind`] expands each template over the clusters, CPUs and
//!    sub-indexes of a [`KernelFs`] tree (`cpu_min_freq` →
//!    `cpu_min_freq.silver`, `…gold`, `…prime`), reads bounds and steps that
//!    are node paths, and checks that every node exists. The result is a
//!    [`Target`]: the engine's [`ResourceSpec`]s plus where each came from.
//!
//! Three targets are built in ([`builtin_names`]): `qcs6490` (the PerfHAL
//! opcodes of seed 000 §3.4 plus the tunables of §5–§6), `qcs5430-fp1`, and
//! `generic`, which discovers clusters from cpufreq and keeps whatever nodes
//! the machine has. [`detect`] picks one from the device tree's
//! `compatible` strings; [`resolve`] is what `--target` does.
//!
//! ```
//! use lever_kernel::KernelFs;
//!
//! let text = "\
//! target: demo
//! resources:
//!   - name: vm_swappiness
//!     opcode: 0x48800000
//!     node: /proc/sys/vm/swappiness
//!     unit: count
//!     low: 0
//!     high: 200
//!     aggregation: newest
//!     permission: third-party
//! ";
//! let file = lever_targets::parse("demo.yaml", text).unwrap();
//!
//! let dir = tempfile::tempdir().unwrap();
//! let fs = KernelFs::new(dir.path());
//! fs.create_node("/proc/sys/vm/swappiness", "60\n").unwrap();
//! let target = file.bind(&fs).unwrap();
//! assert_eq!(target.resources[0].opcode.to_string(), "0x48800000");
//! assert_eq!(target.origins[0].to_string(), "demo.yaml:3");
//!
//! // Mistakes point at their line, column and field.
//! let err = lever_targets::parse("demo.yaml", &text.replace("newest", "latest")).unwrap_err();
//! assert!(err.to_string().starts_with(
//!     "demo.yaml:9:18: field `resources[0].aggregation`: unknown value `latest`"));
//!
//! // The built-in QCS6490 target carries the PerfHAL opcodes.
//! let qcs = lever_targets::load_builtin("qcs6490").unwrap();
//! assert!(qcs.compatible.contains(&"qcom,qcs6490".to_string()));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod bind;
mod decode;
mod error;
mod expand;
mod model;
pub mod opcode;
mod placeholder;
pub mod usecase;

pub use bind::{Origin, Target};
pub use error::TargetError;
pub use lever_yaml::{FieldError, LoadError, Pos, SyntaxError};
pub use model::{Bound, Cluster, Clusters, Per, Steps, TargetFile, Template, TemplateKind};
pub use usecase::{App, Attr, Resolved, UseCase};

use error::InFile;
use lever_engine::resource::ResourceSpec;
use lever_kernel::{paths, KernelFs};
use lever_yaml::{Builtins, ErrorKind, Found};
use std::path::Path;

/// The built-in target files, embedded at build time, in detection order
/// (`generic` last).
const BUILTINS: Builtins = Builtins {
    kind: "target",
    files: &[
        ("qcs6490", include_str!("../targets/qcs6490.yaml")),
        ("qcs5430-fp1", include_str!("../targets/qcs5430-fp1.yaml")),
        ("generic", include_str!("../targets/generic.yaml")),
    ],
};

/// Names of the built-in targets, in detection order (`generic` last).
pub fn builtin_names() -> &'static [&'static str] {
    &["qcs6490", "qcs5430-fp1", "generic"]
}

/// The YAML text of a built-in target (for `lever targets show`).
pub fn builtin_text(name: &str) -> Option<&'static str> {
    BUILTINS.text(name)
}

/// Parse and check a target file. `source` names it in errors (`FILE` of
/// `FILE:LINE:COL`) and becomes [`TargetFile::source`].
pub fn parse(source: &str, text: &str) -> Result<TargetFile, TargetError> {
    parse_labeled(source, source, text)
}

fn parse_labeled(source: &str, file: &str, text: &str) -> Result<TargetFile, TargetError> {
    let doc = lever_yaml::parse_file(file, text, |kind| {
        Some(
            match kind {
                ErrorKind::Alias => {
                    "YAML aliases (`*name`) are not supported in target files; write the value out"
                }
                ErrorKind::Empty => {
                    "the file is empty: expected a mapping with `target:` and `resources:`"
                }
                ErrorKind::SecondDocument => {
                    "a target file holds one YAML document; found a second one"
                }
                _ => return None,
            }
            .to_string(),
        )
    })?;
    decode::decode(&InFile { file }, source, &doc)
}

impl TargetFile {
    /// Add the use cases and apps of a file of their own (`usecases:`,
    /// `apps:`, `app_filter:`, optionally `target:` naming this target),
    /// checked against this target's resources and against the use cases
    /// and apps it already has; an `app_filter:` replaces the target's.
    /// Returns how many use cases and apps were added. `source` names the
    /// file in errors.
    pub fn add_usecases(&mut self, source: &str, text: &str) -> Result<usize, TargetError> {
        let doc = lever_yaml::parse_file(source, text, |_| None)?;
        let added = decode::decode_usecases(&InFile { file: source }, &doc, self)?;
        let n = added.usecases.len() + added.apps.len();
        self.usecases.extend(added.usecases);
        self.apps.extend(added.apps);
        if let Some(f) = added.app_filter {
            self.app_filter = f;
        }
        Ok(n)
    }

    /// [`TargetFile::add_usecases`] for a file on disk.
    pub fn add_usecases_from(&mut self, path: &Path) -> Result<usize, TargetError> {
        let found = BUILTINS.path(path)?;
        self.add_usecases(&found.file, &found.text)
    }
}

/// Load a built-in target by name; its source is `builtin:NAME` and errors
/// name the file `builtin:NAME.yaml`.
pub fn load_builtin(name: &str) -> Result<TargetFile, TargetError> {
    parse_found(BUILTINS.builtin(name)?)
}

/// Load a target file from disk.
pub fn load_path(path: &Path) -> Result<TargetFile, TargetError> {
    parse_found(BUILTINS.path(path)?)
}

fn parse_found(found: Found) -> Result<TargetFile, TargetError> {
    parse_labeled(&found.source, &found.file, &found.text)
}

/// The built-in target for a device whose device-tree `compatible` list is
/// `compatible` (most specific first, as the kernel lists it): the first
/// entry any built-in claims decides.
pub fn builtin_for_compatible(compatible: &[&str]) -> Option<&'static str> {
    compatible.iter().find_map(|entry| {
        builtin_names().iter().copied().find(|name| {
            load_builtin(name)
                .map(|f| f.compatible.iter().any(|c| c == entry))
                .unwrap_or(false)
        })
    })
}

/// Pick and bind the target for the machine below `fs`: the built-in whose
/// `compatible` matches `/proc/device-tree/compatible` (NUL-separated), or
/// `generic` when none does or there is no device tree (x86, VMs).
///
/// A matching board target is bound strictly: if its nodes are missing the
/// error says which, rather than silently degrading to `generic`.
pub fn detect(fs: &KernelFs) -> Result<Target, TargetError> {
    resolve_file(None, fs)?.bind(fs)
}

/// The target *file* `--target` names, not bound: a built-in name, a
/// YAML path, or (with `None`) the built-in matching the device tree under
/// `fs` (`generic` when none does). For commands that only read the file,
/// such as `lever usecases`.
pub fn resolve_file(name_or_path: Option<&str>, fs: &KernelFs) -> Result<TargetFile, TargetError> {
    match name_or_path {
        Some(arg) => parse_found(BUILTINS.find(arg, None)?),
        None => {
            let path = format!("{}/compatible", paths::DEVICE_TREE);
            let text = fs
                .read_optional(&path)
                .map_err(|source| TargetError::Detect { source })?
                .unwrap_or_default();
            // "qcom,qcs6490-rb3gen2\0qcom,qcs6490\0"
            let entries: Vec<&str> = text
                .split('\0')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            load_builtin(builtin_for_compatible(&entries).unwrap_or("generic"))
        }
    }
}

/// The CPU clusters of the kernel below `fs`, one per cpufreq policy in
/// policy order (what `clusters: auto` binds to), named `policyN`.
pub fn discover_clusters(fs: &KernelFs) -> Result<Vec<Cluster>, TargetError> {
    let d = InFile { file: "--root" };
    bind::discover_clusters(&d, fs)
}

/// What `--target` means: `None` detects; a built-in name loads that
/// built-in; anything else is the path of a YAML target file.
pub fn resolve(name_or_path: Option<&str>, fs: &KernelFs) -> Result<Target, TargetError> {
    resolve_file(name_or_path, fs)?.bind(fs)
}

/// Convenience for tools that only want the specs.
impl From<Target> for Vec<ResourceSpec> {
    fn from(t: Target) -> Self {
        t.resources
    }
}
