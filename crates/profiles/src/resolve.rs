//! Resolution: a profile chain, a bound target and a kernel tree → the
//! ordered list of concrete `(node, value)` writes, the boot-time command
//! line to add, and what was skipped (and why).
//!
//! Every value is checked here, before anything is written: the node
//! exists, a resource's value is in its range (and one of its steps or
//! enum values). A node whose path is a target resource's node is checked
//! as that resource, whichever section names it.

use crate::error::ProfileError;
use crate::load::Chain;
use crate::model::{At, Located, Profile, Setting, When};
use lever_engine::resource::{ResourceKind, ResourceSpec};
use lever_kernel::{format_cpu_list, format_cpu_mask, parse_cpu_list, paths, KernelFs};
use lever_targets::Target;
use lever_yaml::Pos;
use serde::Serialize;
use std::fmt;

/// Where a write or a command-line argument comes from in a profile file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct From {
    /// The profile file (`builtin:rt.yaml`).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The field, e.g. `resources.cpu_governor`.
    pub field: String,
}

impl fmt::Display for From {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} {}", self.file, self.line, self.field)
    }
}

/// One concrete write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Write {
    /// Kernel path.
    pub node: String,
    /// The value, as the kernel shows it back.
    pub value: String,
    /// The target resource behind the node, if any.
    pub resource: Option<String>,
    /// False for writes the kernel may refuse for reasons of its own
    /// without making the profile wrong (per-CPU IRQs refuse an affinity
    /// with EIO): such a refusal is reported, not rolled back.
    pub required: bool,
    /// Where it comes from.
    pub from: From,
}

/// A boot-time-only setting: the kernel command line to add.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CmdlineArg {
    /// `isolcpus`.
    pub key: String,
    /// `1-3` (empty for a bare flag).
    pub value: String,
    /// True when the running kernel's `/proc/cmdline` already has exactly
    /// this argument.
    pub on_running_kernel: bool,
    /// Where it comes from.
    pub from: From,
}

impl CmdlineArg {
    /// `key=value`, or `key` for a bare flag.
    pub fn arg(&self) -> String {
        if self.value.is_empty() {
            self.key.clone()
        } else {
            format!("{}={}", self.key, self.value)
        }
    }
}

/// Something the profile names that is not written here, and why: an
/// `optional:` key this kernel lacks, a `when:` entry for other machines,
/// a `>`/`<` value the node already meets, a glob that matches nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The key (`gpu_min_pwrlevel`, a path, `irq_affinity`).
    pub key: String,
    /// Why.
    pub why: String,
    /// Where it comes from.
    pub from: From,
}

/// A profile resolved against a target and a kernel tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resolved {
    /// The profile's name.
    pub profile: String,
    /// The include chain, base first.
    pub chain: Vec<String>,
    /// The target it was resolved against.
    pub target: String,
    /// The RT CPUs used for `{rt_cpus}`, if any.
    pub rt_cpus: Option<String>,
    /// The writes, in the order they must happen.
    pub writes: Vec<Write>,
    /// Boot-time settings: printed, never written.
    pub cmdline: Vec<CmdlineArg>,
    /// What is not written here, and why.
    pub skipped: Vec<Skipped>,
}

impl Resolved {
    /// The command line to add, as one line (`isolcpus=1-3 nohz_full=1-3`).
    pub fn cmdline_line(&self) -> String {
        let args: Vec<String> = self.cmdline.iter().map(CmdlineArg::arg).collect();
        args.join(" ")
    }
}

/// Choices made on the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// `--rt-cpus`: overrides the profile's `rt_cpus:`.
    pub rt_cpus: Option<Vec<u32>>,
}

/// The workqueue subsystem's global unbound cpumask.
pub const WORKQUEUE_CPUMASK: &str = "/sys/devices/virtual/workqueue/cpumask";
/// Where each IRQ's directory is.
pub const PROC_IRQ: &str = "/proc/irq";

/// Resolve `chain` against `target` and the kernel below `fs`.
pub fn resolve(
    chain: &Chain,
    target: &Target,
    fs: &KernelFs,
    opts: &Options,
) -> Result<Resolved, ProfileError> {
    let online = lever_cpu::topology::online_cpus(fs)?;
    let rt = match &opts.rt_cpus {
        Some(list) => Some(list.clone()),
        None => match chain.profiles.iter().rev().find_map(|p| p.rt_cpus.as_ref()) {
            None => None,
            Some(l) => {
                let p = chain.profiles.iter().rev().find(|p| p.rt_cpus.is_some());
                let file = p.map_or("", |p| p.file.as_str());
                Some(
                    parse_cpu_list(&l.value)
                        .filter(|c| !c.is_empty())
                        .ok_or_else(|| {
                            At { file }.err(
                                l.pos,
                                "rt_cpus",
                                format!("`{}` is not a CPU list such as 1-3", l.value),
                            )
                        })?,
                )
            }
        },
    };
    let mut r = Resolver {
        target,
        fs,
        online,
        rt,
        writes: Vec::new(),
        cmdline: Vec::new(),
        skipped: Vec::new(),
        uname: None,
    };
    for p in &chain.profiles {
        r.profile(p)?;
    }
    r.order_pairs()?;
    let top = chain.top();
    Ok(Resolved {
        profile: top.name.clone(),
        chain: chain.names(),
        target: target.name.clone(),
        rt_cpus: r.rt.as_deref().map(format_cpu_list),
        writes: r.writes,
        cmdline: r.cmdline,
        skipped: r.skipped,
    })
}

struct Resolver<'a> {
    target: &'a Target,
    fs: &'a KernelFs,
    online: Vec<u32>,
    rt: Option<Vec<u32>>,
    writes: Vec<Write>,
    cmdline: Vec<CmdlineArg>,
    skipped: Vec<Skipped>,
    /// The kernel's `uname` fields, read at the first `uname_regex:`.
    uname: Option<String>,
}

/// A value after TuneD's `>`/`<` modifier.
enum Modified {
    /// Write this.
    Write(String),
    /// Write nothing, for this reason.
    Keep(String),
}

/// The kernel's `uname` fields below the root, joined by spaces as TuneD
/// matches `uname_regex` (sysname, nodename, release, version, machine):
/// `/proc/sys/kernel/{ostype,hostname,osrelease,version,arch}`. A kernel
/// without `arch` (before 6.1) gets the machine from `/proc/cpuinfo`
/// (`CPU architecture: 8` is aarch64, `7` armv7l; `flags` with `lm` is
/// x86_64); the fields it lacks are left out.
fn uname(fs: &KernelFs) -> String {
    let read = |n: &str| {
        fs.read(&format!("/proc/sys/kernel/{n}"))
            .ok()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
    };
    let machine = read("arch").or_else(|| {
        let cpuinfo = fs.read("/proc/cpuinfo").ok()?;
        let field = |name: &str| {
            cpuinfo.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == name).then(|| v.trim().to_string())
            })
        };
        match field("CPU architecture").as_deref() {
            Some("8") => Some("aarch64".into()),
            Some(n) if n.parse::<u32>().is_ok() => Some(format!("armv{n}l")),
            _ => field("flags").map(|f| {
                if f.split_whitespace().any(|x| x == "lm") {
                    "x86_64".into()
                } else {
                    "i686".into()
                }
            }),
        }
    });
    let fields = [
        Some(read("ostype").unwrap_or_else(|| "Linux".into())),
        read("hostname"),
        read("osrelease"),
        read("version"),
        machine,
    ];
    fields.into_iter().flatten().collect::<Vec<_>>().join(" ")
}

/// The nodes matching a path with `*`/`?` in its components, sorted, as
/// TuneD's sysfs plugin globs them.
fn glob(fs: &KernelFs, pattern: &str) -> Vec<String> {
    let mut found = vec![String::new()];
    for part in pattern.split('/').filter(|p| !p.is_empty()) {
        let mut next = Vec::new();
        for base in &found {
            if part.contains(['*', '?']) {
                let mut names = fs
                    .list_dir(if base.is_empty() { "/" } else { base })
                    .unwrap_or_default();
                names.sort();
                next.extend(
                    names
                        .into_iter()
                        .filter(|n| wildcard(part.as_bytes(), n.as_bytes()))
                        .map(|n| format!("{base}/{n}")),
                );
            } else {
                next.push(format!("{base}/{part}"));
            }
        }
        found = next;
    }
    found.retain(|p| fs.exists(p));
    found
}

/// Shell wildcard match of one path component (`*`, `?`).
fn wildcard(p: &[u8], s: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => wildcard(&p[1..], s) || (!s.is_empty() && wildcard(p, &s[1..])),
        (Some(b'?'), Some(_)) => wildcard(&p[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => wildcard(&p[1..], &s[1..]),
        _ => false,
    }
}

/// One profile's context while resolving.
struct In<'p> {
    p: &'p Profile,
    at: At<'p>,
}

impl In<'_> {
    fn from(&self, pos: Pos, field: &str) -> From {
        From {
            file: self.p.file.clone(),
            line: pos.line,
            field: field.to_string(),
        }
    }

    fn optional(&self, key: &str) -> bool {
        self.p.optional.iter().any(|o| o.value == key)
    }
}

impl Resolver<'_> {
    fn profile(&mut self, p: &Profile) -> Result<(), ProfileError> {
        let c = In {
            p,
            at: At { file: &p.file },
        };
        self.settings(&c, "", &p.resources, &p.sysctl, &p.sysfs)?;
        if let Some(cd) = &p.cpuidle_disable {
            self.cpuidle(&c, &cd.cpus, cd.states.as_deref())?;
        }
        if let Some(mask) = &p.workqueue_cpumask {
            self.workqueue(&c, mask)?;
        }
        if let Some(irq) = &p.irq_affinity {
            self.irqs(&c, &irq.cpus, &irq.except)?;
        }
        self.cmdline_args(&c, "", &p.cmdline)?;
        for (i, w) in p.when.iter().enumerate() {
            let prefix = format!("when[{i}].");
            if let Some(why) = self.unmatched(w) {
                self.skip(&c, &format!("when[{i}]"), why, w.pos, &format!("when[{i}]"));
                continue;
            }
            self.settings(&c, &prefix, &w.resources, &w.sysctl, &w.sysfs)?;
            self.cmdline_args(&c, &prefix, &w.cmdline)?;
        }
        Ok(())
    }

    /// `resources:`, `sysctl:` and `sysfs:` (of the profile, or of a
    /// `when:` entry, `prefix` naming it in fields).
    fn settings(
        &mut self,
        c: &In,
        prefix: &str,
        resources: &[Setting],
        sysctl: &[Setting],
        sysfs: &[Setting],
    ) -> Result<(), ProfileError> {
        for s in resources {
            self.resource(c, s, &format!("{prefix}resources.{}", s.key))?;
        }
        for s in sysctl {
            let field = format!("{prefix}sysctl.{}", s.key);
            if s.key.starts_with('/') || s.key.contains("..") {
                return Err(c.at.err(
                    s.key_pos,
                    &field,
                    "a sysctl name such as `vm.swappiness` (paths go under `sysfs:`)",
                ));
            }
            let node = format!("/proc/sys/{}", s.key.replace('.', "/"));
            self.path(c, s, &field, node)?;
        }
        for s in sysfs {
            let field = format!("{prefix}sysfs.{}", s.key);
            if !(s.key.starts_with("/sys/") || s.key.starts_with("/proc/sys/")) {
                return Err(c.at.err(
                    s.key_pos,
                    &field,
                    "an absolute path below /sys/ or /proc/sys/",
                ));
            }
            if s.key.contains(['*', '?']) {
                let nodes = glob(self.fs, &s.key);
                if nodes.is_empty() {
                    let why = format!("no node matches {} on this kernel", s.key);
                    self.skip(c, &s.key, why, s.key_pos, &field);
                }
                for node in nodes {
                    self.path(c, s, &field, node)?;
                }
                continue;
            }
            self.path(c, s, &field, s.key.clone())?;
        }
        Ok(())
    }

    /// `cmdline:` entries.
    fn cmdline_args(&mut self, c: &In, prefix: &str, args: &[Setting]) -> Result<(), ProfileError> {
        let running = self.fs.read("/proc/cmdline").unwrap_or_default();
        for s in args {
            let field = format!("{prefix}cmdline.{}", s.key);
            let value = self.expand(c, &s.value, s.pos, &field)?;
            let arg = CmdlineArg {
                key: s.key.clone(),
                value,
                on_running_kernel: false,
                from: c.from(s.key_pos, &field),
            };
            let on = running.split_whitespace().any(|w| w == arg.arg());
            self.cmdline.retain(|a| a.key != s.key);
            self.cmdline.push(CmdlineArg {
                on_running_kernel: on,
                ..arg
            });
        }
        Ok(())
    }

    /// Why a `when:` entry does not apply to this kernel, or `None` when
    /// it does.
    fn unmatched(&mut self, w: &When) -> Option<String> {
        if let Some(re) = &w.uname_regex {
            let uname = self.uname.get_or_insert_with(|| uname(self.fs)).clone();
            if !re.value.is_match(&uname) {
                return Some(format!(
                    "uname_regex `{}` is not found in this kernel's uname `{uname}`",
                    re.value.as_str()
                ));
            }
        }
        if let Some(re) = &w.cpuinfo_regex {
            let cpuinfo = match self.fs.read("/proc/cpuinfo") {
                Ok(t) => t,
                Err(e) => return Some(format!("cpuinfo_regex: {e}")),
            };
            if !re.value.is_match(&cpuinfo) {
                return Some(format!(
                    "cpuinfo_regex `{}` is not found in /proc/cpuinfo",
                    re.value.as_str()
                ));
            }
        }
        None
    }

    /// `{rt_cpus}` and `{housekeeping}` filled in.
    fn expand(&self, c: &In, text: &str, pos: Pos, field: &str) -> Result<String, ProfileError> {
        let mut out = String::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let close = rest[open..]
                .find('}')
                .map(|i| open + i)
                .ok_or_else(|| c.at.err(pos, field, format!("unclosed `{{` in `{text}`")))?;
            let name = &rest[open + 1..close];
            let rt = match name {
                "rt_cpus" | "housekeeping" => {
                    self.rt.as_ref().ok_or_else(|| ProfileError::NeedsRtCpus {
                        profile: c.p.name.clone(),
                        file: c.p.file.clone(),
                        line: pos.line,
                        col: pos.col,
                        field: field.to_string(),
                    })?
                }
                other => {
                    return Err(c.at.err(
                        pos,
                        field,
                        format!(
                        "unknown placeholder `{{{other}}}` (known: {{rt_cpus}}, {{housekeeping}})"
                    ),
                    ))
                }
            };
            if let Some(bad) = rt.iter().find(|x| !self.online.contains(x)) {
                return Err(c.at.err(
                    pos,
                    field,
                    format!(
                        "RT CPU {bad} is not online here (online: {})",
                        format_cpu_list(&self.online)
                    ),
                ));
            }
            let cpus: Vec<u32> = if name == "rt_cpus" {
                rt.clone()
            } else {
                self.online
                    .iter()
                    .copied()
                    .filter(|x| !rt.contains(x))
                    .collect()
            };
            if cpus.is_empty() {
                return Err(c.at.err(
                    pos,
                    field,
                    format!(
                        "the RT CPUs {} leave no housekeeping CPU (online: {})",
                        format_cpu_list(rt),
                        format_cpu_list(&self.online)
                    ),
                ));
            }
            out.push_str(&format_cpu_list(&cpus));
            rest = &rest[close + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn cpus(&self, c: &In, l: &Located<String>, field: &str) -> Result<Vec<u32>, ProfileError> {
        let text = self.expand(c, &l.value, l.pos, field)?;
        let cpus = parse_cpu_list(&text)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                c.at.err(
                    l.pos,
                    field,
                    format!("`{text}` is not a CPU list such as 0-3,7"),
                )
            })?;
        if let Some(bad) = cpus.iter().find(|x| !self.online.contains(x)) {
            return Err(c.at.err(
                l.pos,
                field,
                format!(
                    "CPU {bad} is not online here (online: {})",
                    format_cpu_list(&self.online)
                ),
            ));
        }
        Ok(cpus)
    }

    fn push(&mut self, w: Write) {
        // A later profile (or a later key) overrides an earlier write.
        self.writes.retain(|old| old.node != w.node);
        self.writes.push(w);
    }

    fn skip(&mut self, c: &In, key: &str, why: String, pos: Pos, field: &str) {
        self.skipped.push(Skipped {
            key: key.to_string(),
            why,
            from: c.from(pos, field),
        });
    }

    fn resource(&mut self, c: &In, s: &Setting, field: &str) -> Result<(), ProfileError> {
        let specs: Vec<&ResourceSpec> = match self.target.by_name(&s.key) {
            Some(spec) => vec![spec],
            None => self
                .target
                .resources
                .iter()
                .zip(&self.target.origins)
                .filter(|(_, o)| o.template == s.key)
                .map(|(r, _)| r)
                .collect(),
        };
        if specs.is_empty() {
            let why = format!(
                "target {} has no resource `{}` (see `lever resources`)",
                self.target.name, s.key
            );
            if c.optional(&s.key) {
                self.skip(c, &s.key, why, s.key_pos, field);
                return Ok(());
            }
            return Err(c.at.err(s.key_pos, field, why));
        }
        let value = self.expand(c, &s.value, s.pos, field)?;
        for spec in specs {
            let value = match self.modified(&spec.node, &value) {
                Modified::Write(v) => v,
                Modified::Keep(why) => {
                    self.skip(c, &spec.name, why, s.key_pos, field);
                    continue;
                }
            };
            // `a|b`: the first alternative the resource accepts.
            let mut first_err = None;
            let mut text = None;
            for alt in value.split('|').map(str::trim) {
                match check_value(spec, alt) {
                    Ok(t) => {
                        text = Some(t);
                        break;
                    }
                    Err(m) => {
                        first_err.get_or_insert(m);
                    }
                }
            }
            let text = match (text, first_err) {
                (Some(t), _) => t,
                (None, Some(m)) if value.contains('|') && c.optional(&s.key) => {
                    let why = format!("{}: none of `{value}` is accepted: {m}", spec.name);
                    self.skip(c, &spec.name, why, s.pos, field);
                    continue;
                }
                (None, m) => {
                    let m = m.unwrap_or_default();
                    return Err(c.at.err(s.pos, field, format!("{}: {m}", spec.name)));
                }
            };
            self.push(Write {
                node: spec.node.clone(),
                value: text,
                resource: Some(spec.name.clone()),
                required: true,
                from: c.from(s.key_pos, field),
            });
        }
        Ok(())
    }

    /// A value with TuneD's `>N`/`<N` modifier, against what `node` holds
    /// now: the number to write, or why nothing is written. Other values
    /// pass unchanged.
    fn modified(&self, node: &str, value: &str) -> Modified {
        let t = value.trim();
        let (op, num) = match t.split_at_checked(1) {
            Some((op @ (">" | "<"), rest)) if !rest.trim().is_empty() => (op, rest.trim()),
            _ => return Modified::Write(value.to_string()),
        };
        let current = self.fs.read(node).ok();
        let (Some(cur), Some(want)) = (
            current
                .as_deref()
                .and_then(|c| lever_text::parse_int(c.trim())),
            lever_text::parse_int(num),
        ) else {
            return Modified::Write(num.to_string());
        };
        let write = if op == ">" { want > cur } else { want < cur };
        if write {
            Modified::Write(num.to_string())
        } else {
            let word = if op == ">" { "greater" } else { "less" };
            Modified::Keep(format!(
                "{node} holds {cur}; `{t}` writes only a {word} value"
            ))
        }
    }

    /// A `sysctl:` or `sysfs:` entry at `node`.
    fn path(&mut self, c: &In, s: &Setting, field: &str, node: String) -> Result<(), ProfileError> {
        if !self.fs.exists(&node) {
            let why = format!("node {node} does not exist on this kernel");
            if c.optional(&s.key) {
                self.skip(c, &s.key, why, s.key_pos, field);
                return Ok(());
            }
            return Err(c.at.err(s.key_pos, field, why));
        }
        let value = self.expand(c, &s.value, s.pos, field)?;
        let value = match self.modified(&node, &value) {
            Modified::Write(v) => v,
            Modified::Keep(why) => {
                self.skip(c, &s.key, why, s.key_pos, field);
                return Ok(());
            }
        };
        let spec = self.target.resources.iter().find(|r| r.node == node);
        let value = match spec {
            Some(spec) => check_value(spec, &value).map_err(|m| {
                c.at.err(s.pos, field, format!("{} ({node}): {m}", spec.name))
            })?,
            None => value,
        };
        self.push(Write {
            node,
            value,
            resource: spec.map(|r| r.name.clone()),
            required: true,
            from: c.from(s.key_pos, field),
        });
        Ok(())
    }

    fn cpuidle(
        &mut self,
        c: &In,
        cpus: &Located<String>,
        states: Option<&[u32]>,
    ) -> Result<(), ProfileError> {
        let field = "cpuidle_disable";
        for cpu in self.cpus(c, cpus, field)? {
            let dir = format!("{}/cpu{cpu}/cpuidle", paths::CPU);
            let names = match self.fs.list_dir(&dir) {
                Ok(n) => n,
                Err(e) if e.is_missing() && c.optional(field) => {
                    self.skip(
                        c,
                        field,
                        format!("{dir} does not exist (no cpuidle on CPU {cpu})"),
                        cpus.pos,
                        field,
                    );
                    continue;
                }
                Err(e) => return Err(c.at.err(cpus.pos, field, format!("CPU {cpu}: {e}"))),
            };
            for name in names {
                let Some(k) = name
                    .strip_prefix("state")
                    .and_then(|k| k.parse::<u32>().ok())
                else {
                    continue;
                };
                if states.is_some_and(|s| !s.contains(&k)) {
                    continue;
                }
                let node = format!("{dir}/{name}/disable");
                let resource = self
                    .target
                    .resources
                    .iter()
                    .find(|r| r.node == node)
                    .map(|r| r.name.clone());
                self.push(Write {
                    node,
                    value: "1".into(),
                    resource,
                    required: true,
                    from: c.from(cpus.pos, field),
                });
            }
        }
        Ok(())
    }

    fn workqueue(&mut self, c: &In, l: &Located<String>) -> Result<(), ProfileError> {
        let field = "workqueue_cpumask";
        let cpus = self.cpus(c, l, field)?;
        if !self.fs.exists(WORKQUEUE_CPUMASK) {
            let why = format!("{WORKQUEUE_CPUMASK} does not exist on this kernel");
            if c.optional(field) {
                self.skip(c, field, why, l.pos, field);
                return Ok(());
            }
            return Err(c.at.err(l.pos, field, why));
        }
        // The mask is as wide as the kernel's possible CPUs (nr_cpu_ids).
        let possible = self
            .fs
            .read(&format!("{}/possible", paths::CPU))
            .ok()
            .and_then(|t| parse_cpu_list(&t))
            .unwrap_or_else(|| self.online.clone());
        let nr = possible.iter().max().map_or(1, |m| m + 1);
        let mask = format_cpu_mask(&cpus, nr);
        self.push(Write {
            node: WORKQUEUE_CPUMASK.into(),
            value: mask.clone(),
            resource: None,
            required: true,
            from: c.from(l.pos, field),
        });
        // Seed 001 step 2 affines every queue that exports its own mask
        // (`/sys/devices/virtual/workqueue/*/cpumask`, unbound WQ_SYSFS
        // queues); it writes only those that are writable, so a refusal is
        // reported, not fatal.
        let dir = WORKQUEUE_CPUMASK.trim_end_matches("/cpumask");
        for q in self.fs.list_dir(dir).unwrap_or_default() {
            let node = format!("{dir}/{q}/cpumask");
            if self.fs.exists(&node) {
                self.push(Write {
                    node,
                    value: mask.clone(),
                    resource: None,
                    required: false,
                    from: c.from(l.pos, field),
                });
            }
        }
        Ok(())
    }

    fn irqs(&mut self, c: &In, l: &Located<String>, except: &[u32]) -> Result<(), ProfileError> {
        let field = "irq_affinity";
        let list = format_cpu_list(&self.cpus(c, l, field)?);
        let dirs = match self.fs.list_dir(PROC_IRQ) {
            Ok(d) => d,
            Err(e) if e.is_missing() && c.optional(field) => {
                self.skip(
                    c,
                    field,
                    format!("{PROC_IRQ} does not exist on this kernel"),
                    l.pos,
                    field,
                );
                return Ok(());
            }
            Err(e) => return Err(c.at.err(l.pos, field, e.to_string())),
        };
        for irq in dirs.iter().filter_map(|d| d.parse::<u32>().ok()) {
            let node = format!("{PROC_IRQ}/{irq}/smp_affinity_list");
            if except.contains(&irq) || !self.fs.exists(&node) {
                continue;
            }
            self.push(Write {
                node,
                value: list.clone(),
                resource: None,
                required: false,
                from: c.from(l.pos, field),
            });
        }
        Ok(())
    }

    /// Order each min/max pair so that min <= max holds after every write
    /// (the kernel refuses, or clamps, a minimum above the maximum): the
    /// minimum first, unless it rises above the maximum the node holds now.
    fn order_pairs(&mut self) -> Result<(), ProfileError> {
        let level = |w: &Write| -> Option<i64> {
            let spec = self.target.by_name(w.resource.as_deref()?)?;
            spec.parse_level(&w.value)
        };
        let mut i = 0;
        while i < self.writes.len() {
            let w = &self.writes[i];
            let Some(spec) = w.resource.as_deref().and_then(|n| self.target.by_name(n)) else {
                i += 1;
                continue;
            };
            let ResourceKind::PairMin { max } = spec.kind else {
                i += 1;
                continue;
            };
            let Some(max_spec) = self.target.by_opcode(max) else {
                i += 1;
                continue;
            };
            let Some(j) = self.writes.iter().position(|x| x.node == max_spec.node) else {
                i += 1;
                continue;
            };
            let (new_min, new_max) = (level(&self.writes[i]), level(&self.writes[j]));
            if let (Some(lo), Some(hi)) = (new_min, new_max) {
                if lo > hi {
                    let w = &self.writes[i];
                    let pos = lever_yaml::Pos {
                        line: w.from.line,
                        col: 1,
                    };
                    return Err(ProfileError::Field {
                        error: lever_yaml::FieldError::new(
                            &w.from.file,
                            pos,
                            &w.from.field,
                            format!("{} = {lo} is above {} = {hi}", spec.name, max_spec.name),
                        ),
                        kernel: None,
                    });
                }
            }
            let cur_max = self
                .fs
                .read(&max_spec.node)
                .ok()
                .and_then(|t| max_spec.parse_level(&t));
            let max_first = matches!((new_min, cur_max), (Some(lo), Some(cm)) if lo > cm);
            let (first, second) = if max_first { (j, i) } else { (i, j) };
            if first > second {
                let w = self.writes.remove(first);
                self.writes.insert(second, w);
            }
            i += 1;
        }
        Ok(())
    }
}

/// A profile's value for `spec`, checked and as the node will show it:
/// `min`/`max` are the resource's bounds; an integer (or enum value) must
/// lie in the bounds and, where the resource has steps, be one of them.
pub fn check_value(spec: &ResourceSpec, text: &str) -> Result<String, String> {
    if let ResourceKind::HoldFd = spec.kind {
        return Err("held through an open file descriptor (PM QoS), so it lasts only while one is open; a profile cannot write it (ask the daemon: lever acquire)".into());
    }
    let level = match text.trim() {
        "min" => spec.low,
        "max" => spec.high,
        t => spec.parse_level(t).ok_or_else(|| match &spec.kind {
            ResourceKind::Enum { values } => {
                format!("`{t}` is not one of: {}, min, max", values.join(", "))
            }
            ResourceKind::CpuList => format!("`{t}` is not a CPU list such as 0-1,3 (or min, max)"),
            _ => format!("`{t}` is not an integer (or min, max)"),
        })?,
    };
    if level < spec.low || level > spec.high {
        return Err(format!(
            "{} is outside {}..{} {}",
            spec.render(level),
            spec.render(spec.low),
            spec.render(spec.high),
            spec.unit
        ));
    }
    if let Some(steps) = spec.steps.as_deref().filter(|s| !s.is_empty()) {
        if !steps.contains(&level) {
            let up = steps.iter().find(|&&s| s > level);
            let down = steps.iter().rev().find(|&&s| s < level);
            let near: Vec<String> = [down, up].iter().flatten().map(|s| s.to_string()).collect();
            return Err(format!(
                "{level} {} is not one of the node's steps (nearest: {})",
                spec.unit,
                near.join(", ")
            ));
        }
    }
    Ok(spec.render(level))
}
