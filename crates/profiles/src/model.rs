//! A profile file, parsed and checked but not yet resolved against a
//! kernel. The format (documented in `docs/profiles.md`):
//!
//! ```yaml
//! profile: rt                      # the name
//! description: Real-time tuning    # one line
//! seed: "seed 000 §3.6, seed 001"  # where the values come from
//! include: performance             # a built-in name or a file, relative to this one
//! rt_cpus: 1-3                     # default for --rt-cpus (optional)
//! resources:                       # any resource the target names: template or instance
//!   cpu_governor: performance
//!   cpu_min_freq.gold: max         # `min`/`max`: the resource's own bounds
//! sysctl: { kernel.timer_migration: 0 }
//! sysfs: { /sys/kernel/mm/transparent_hugepage/enabled: madvise }
//! irq_affinity: { cpus: "{housekeeping}", except: [0] }
//! workqueue_cpumask: "{housekeeping}"
//! cpuidle_disable: { cpus: "{rt_cpus}", states: [0, 1] }
//! cmdline: { isolcpus: "{rt_cpus}" }   # boot-time only: printed, never written
//! optional: [gpu_min_pwrlevel]     # keys that may be missing here: skipped, and said so
//! when:                            # settings for some machines only (TuneD's conditional units)
//!   - uname_regex: aarch64         #   searched in `uname -a`'s fields
//!     cpuinfo_regex: "CPU part\\s+:\\s+0x0?af"  #   searched in /proc/cpuinfo (multi-line)
//!     sysctl: { kernel.numa_balancing: 0 }
//! ```
//!
//! A value may start with `>` or `<` (`kernel.pid_max: ">4194304"`): the
//! node is written only if the number is greater (less) than what it holds
//! (TuneD's assignment modifiers). A resource's value may list
//! alternatives, `conservative|powersave`: the first the resource accepts
//! is written (TuneD's governor lists).
//!
//! Values are scalars kept as text; they are checked when the profile is
//! resolved, against the target's resources and the kernel tree.

use crate::error::ProfileError;
use lever_yaml::{MapError, Node, Pos, Value};

/// A value and where it is in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located<T> {
    /// The value.
    pub value: T,
    /// Where it is.
    pub pos: Pos,
}

/// One `key: value` of `resources:`, `sysctl:`, `sysfs:` or `cmdline:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// The key as written.
    pub key: String,
    /// The value's text.
    pub value: String,
    /// Where the key is.
    pub key_pos: Pos,
    /// Where the value is.
    pub pos: Pos,
}

/// `irq_affinity:`: every IRQ's `smp_affinity_list`, but those in `except`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IrqAffinity {
    /// The CPU list every IRQ may run on (placeholders allowed).
    pub cpus: Located<String>,
    /// IRQ numbers left alone.
    pub except: Vec<u32>,
}

/// `cpuidle_disable:`: cpuidle states disabled on some CPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuidleDisable {
    /// The CPU list (placeholders allowed).
    pub cpus: Located<String>,
    /// Only these state numbers; `None` = every state the CPU has.
    pub states: Option<Vec<u32>>,
}

/// One `when:` entry: settings that apply only where both regular
/// expressions (those given) are found.
#[derive(Debug, Clone)]
pub struct When {
    /// `uname_regex:`, searched in the kernel's `uname` fields (sysname,
    /// nodename, release, version, machine, joined by spaces).
    pub uname_regex: Option<Located<regex::Regex>>,
    /// `cpuinfo_regex:`, searched in `/proc/cpuinfo`, `^`/`$` per line.
    pub cpuinfo_regex: Option<Located<regex::Regex>>,
    /// Where the entry starts.
    pub pos: Pos,
    /// `resources:`.
    pub resources: Vec<Setting>,
    /// `sysctl:`.
    pub sysctl: Vec<Setting>,
    /// `sysfs:`.
    pub sysfs: Vec<Setting>,
    /// `cmdline:`.
    pub cmdline: Vec<Setting>,
}

impl PartialEq for When {
    fn eq(&self, other: &Self) -> bool {
        let re = |r: &Option<Located<regex::Regex>>| {
            r.as_ref().map(|l| (l.value.as_str().to_string(), l.pos))
        };
        re(&self.uname_regex) == re(&other.uname_regex)
            && re(&self.cpuinfo_regex) == re(&other.cpuinfo_regex)
            && self.pos == other.pos
            && self.resources == other.resources
            && self.sysctl == other.sysctl
            && self.sysfs == other.sysfs
            && self.cmdline == other.cmdline
    }
}

impl Eq for When {}

/// A parsed, checked profile file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// `profile:`, the name.
    pub name: String,
    /// `description:`.
    pub description: String,
    /// `seed:`: the seed sections its values come from.
    pub seed: String,
    /// Where it came from: a path, or `builtin:NAME`.
    pub source: String,
    /// `include:`.
    pub include: Option<Located<String>>,
    /// `rt_cpus:`, the default RT CPU list.
    pub rt_cpus: Option<Located<String>>,
    /// `resources:`.
    pub resources: Vec<Setting>,
    /// `sysctl:`.
    pub sysctl: Vec<Setting>,
    /// `sysfs:`.
    pub sysfs: Vec<Setting>,
    /// `irq_affinity:`.
    pub irq_affinity: Option<IrqAffinity>,
    /// `workqueue_cpumask:`.
    pub workqueue_cpumask: Option<Located<String>>,
    /// `cpuidle_disable:`.
    pub cpuidle_disable: Option<CpuidleDisable>,
    /// `cmdline:`, boot-time settings.
    pub cmdline: Vec<Setting>,
    /// `optional:`, keys that may be missing on a kernel.
    pub optional: Vec<Located<String>>,
    /// `when:`, settings for some machines only.
    pub when: Vec<When>,
    /// Name used for `FILE:LINE:COL` in errors.
    pub file: String,
}

const KEYS: &[&str] = &[
    "profile",
    "description",
    "seed",
    "include",
    "rt_cpus",
    "resources",
    "sysctl",
    "sysfs",
    "irq_affinity",
    "workqueue_cpumask",
    "cpuidle_disable",
    "cmdline",
    "optional",
    "when",
];

const WHEN_KEYS: &[&str] = &[
    "uname_regex",
    "cpuinfo_regex",
    "resources",
    "sysctl",
    "sysfs",
    "cmdline",
];

/// Builds [`ProfileError::Field`] for one file.
pub(crate) struct At<'a> {
    pub file: &'a str,
}

impl At<'_> {
    pub(crate) fn err(&self, pos: Pos, field: &str, message: impl Into<String>) -> ProfileError {
        ProfileError::Field {
            error: lever_yaml::FieldError::new(self.file, pos, field, message),
            kernel: None,
        }
    }

    fn map_err(&self, field: &str, e: MapError) -> ProfileError {
        let message = e.to_string();
        // MapError's text starts with its own `line:col: `; keep the rest.
        let message = message.split_once(": ").map_or(&*message, |(_, m)| m);
        self.err(e.pos(), field, message)
    }

    fn scalar(&self, node: &Node, field: &str) -> Result<String, ProfileError> {
        match &node.value {
            Value::Scalar { text, .. } if !node.is_null() => Ok(text.clone()),
            _ => Err(self.err(
                node.pos,
                field,
                format!("expected a value, found {}", node.type_name()),
            )),
        }
    }

    fn located(&self, node: &Node, field: &str) -> Result<Located<String>, ProfileError> {
        Ok(Located {
            value: self.scalar(node, field)?,
            pos: node.pos,
        })
    }

    /// A mapping whose keys are free (resource names, paths): text, once.
    fn settings(&self, node: &Node, field: &str) -> Result<Vec<Setting>, ProfileError> {
        let Value::Map(pairs) = &node.value else {
            if node.is_null() {
                return Ok(Vec::new());
            }
            return Err(self.err(
                node.pos,
                field,
                format!(
                    "expected a mapping of `key: value`, found {}",
                    node.type_name()
                ),
            ));
        };
        let mut out: Vec<Setting> = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            let Some(key) = k.as_str().filter(|_| !k.is_null()) else {
                return Err(self.err(k.pos, field, "a key must be a plain name or path"));
            };
            let here = format!("{field}.{key}");
            if let Some(first) = out.iter().find(|s| s.key == key) {
                return Err(self.err(
                    k.pos,
                    &here,
                    format!("duplicate key (first given at {})", first.key_pos),
                ));
            }
            out.push(Setting {
                key: key.to_string(),
                value: self.scalar(v, &here)?,
                key_pos: k.pos,
                pos: v.pos,
            });
        }
        Ok(out)
    }

    fn numbers(&self, node: &Node, field: &str) -> Result<Vec<u32>, ProfileError> {
        let items: Vec<&Node> = match &node.value {
            Value::Seq(items) => items.iter().collect(),
            _ => vec![node],
        };
        items
            .into_iter()
            .map(|n| {
                let text = self.scalar(n, field)?;
                text.trim().parse::<u32>().map_err(|_| {
                    self.err(
                        n.pos,
                        field,
                        format!("`{text}` is not a non-negative number"),
                    )
                })
            })
            .collect()
    }

    /// A regular expression, compiled; `multi_line` makes `^`/`$` match
    /// at each line.
    fn regex(
        &self,
        node: &Node,
        field: &str,
        multi_line: bool,
    ) -> Result<Located<regex::Regex>, ProfileError> {
        let text = self.scalar(node, field)?;
        let re = regex::RegexBuilder::new(&text)
            .multi_line(multi_line)
            .build()
            .map_err(|e| {
                self.err(
                    node.pos,
                    field,
                    format!("`{text}` is not a regular expression: {e}"),
                )
            })?;
        Ok(Located {
            value: re,
            pos: node.pos,
        })
    }

    /// `when:`: a list of conditional entries.
    fn when(&self, node: &Node) -> Result<Vec<When>, ProfileError> {
        let items: Vec<&Node> = match &node.value {
            Value::Seq(items) => items.iter().collect(),
            _ if node.is_null() => Vec::new(),
            _ => vec![node],
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let here = format!("when[{i}]");
            let m = item
                .mapping(WHEN_KEYS)
                .map_err(|e| self.map_err(&here, e))?;
            let re = |key: &str, multi: bool| {
                m.get(key)
                    .map(|n| self.regex(n, &format!("{here}.{key}"), multi))
                    .transpose()
            };
            let settings = |key: &str| -> Result<Vec<Setting>, ProfileError> {
                m.get(key)
                    .map(|n| self.settings(n, &format!("{here}.{key}")))
                    .transpose()
                    .map(Option::unwrap_or_default)
            };
            let uname_regex = re("uname_regex", false)?;
            let cpuinfo_regex = re("cpuinfo_regex", true)?;
            if uname_regex.is_none() && cpuinfo_regex.is_none() {
                return Err(self.err(
                    item.pos,
                    &here,
                    "needs `uname_regex:` or `cpuinfo_regex:` (the machines it is for)",
                ));
            }
            out.push(When {
                uname_regex,
                cpuinfo_regex,
                pos: item.pos,
                resources: settings("resources")?,
                sysctl: settings("sysctl")?,
                sysfs: settings("sysfs")?,
                cmdline: settings("cmdline")?,
            });
        }
        Ok(out)
    }

    /// `cpus` alone, or a mapping with `cpus` and `extra`.
    fn cpus_and<'n>(
        &self,
        node: &'n Node,
        field: &str,
        extra: &'static str,
    ) -> Result<(Located<String>, Option<&'n Node>), ProfileError> {
        if let Value::Scalar { .. } = node.value {
            return Ok((self.located(node, field)?, None));
        }
        let m = node
            .mapping(&["cpus", extra])
            .map_err(|e| self.map_err(field, e))?;
        let cpus = m
            .get("cpus")
            .ok_or_else(|| self.err(node.pos, field, "missing `cpus:` (a CPU list)"))?;
        Ok((self.located(cpus, &format!("{field}.cpus"))?, m.get(extra)))
    }
}

/// Decode a parsed YAML document into a [`Profile`].
pub(crate) fn decode(file: &str, source: &str, doc: &Node) -> Result<Profile, ProfileError> {
    let at = At { file };
    let top = doc.mapping(KEYS).map_err(|e| at.map_err("(top)", e))?;
    let text = |key: &str| -> Result<Option<Located<String>>, ProfileError> {
        top.get(key).map(|n| at.located(n, key)).transpose()
    };
    let name = text("profile")?.ok_or_else(|| {
        at.err(
            doc.pos,
            "profile",
            "missing `profile:` (the profile's name)",
        )
    })?;
    let settings = |key: &str| -> Result<Vec<Setting>, ProfileError> {
        top.get(key)
            .map(|n| at.settings(n, key))
            .transpose()
            .map(Option::unwrap_or_default)
    };
    let irq_affinity = match top.get("irq_affinity") {
        None => None,
        Some(n) => {
            let (cpus, except) = at.cpus_and(n, "irq_affinity", "except")?;
            let except = except
                .map(|e| at.numbers(e, "irq_affinity.except"))
                .transpose()?
                .unwrap_or_default();
            Some(IrqAffinity { cpus, except })
        }
    };
    let cpuidle_disable = match top.get("cpuidle_disable") {
        None => None,
        Some(n) => {
            let (cpus, states) = at.cpus_and(n, "cpuidle_disable", "states")?;
            let states = states
                .map(|s| at.numbers(s, "cpuidle_disable.states"))
                .transpose()?;
            Some(CpuidleDisable { cpus, states })
        }
    };
    let optional = match top.get("optional") {
        None => Vec::new(),
        Some(Node {
            value: Value::Seq(items),
            ..
        }) => items
            .iter()
            .map(|n| at.located(n, "optional"))
            .collect::<Result<_, _>>()?,
        Some(n) => vec![at.located(n, "optional")?],
    };
    Ok(Profile {
        name: name.value,
        description: text("description")?.map(|l| l.value).unwrap_or_default(),
        seed: text("seed")?.map(|l| l.value).unwrap_or_default(),
        source: source.to_string(),
        include: text("include")?,
        rt_cpus: text("rt_cpus")?,
        resources: settings("resources")?,
        sysctl: settings("sysctl")?,
        sysfs: settings("sysfs")?,
        irq_affinity,
        workqueue_cpumask: text("workqueue_cpumask")?,
        cpuidle_disable,
        cmdline: settings("cmdline")?,
        optional,
        when: top
            .get("when")
            .map(|n| at.when(n))
            .transpose()?
            .unwrap_or_default(),
        file: file.to_string(),
    })
}
